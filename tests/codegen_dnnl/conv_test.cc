// prim.Conv and prim.ConvTranspose on oneDNN: groups, depthwise, dilation, strides, asymmetric
// pads, 1-D to 3-D, constant and variable weights.
#include "dnnl_test_util.h"

namespace orch::codegen::dnnl_test {
namespace {

using Ints = std::vector<int64_t>;

struct ConvCase {
  int64_t n = 1, c = 4, m = 4, group = 1;
  Ints spatial = {8, 8}, kernel = {3, 3}, strides = {1, 1}, dilations = {1, 1}, pads = {1, 1, 1, 1},
       output_padding = {};
  bool constant_weights = true;
};

Attributes conv_attrs(const ConvCase& cc) {
  Attributes a = {
      {"strides", cc.strides}, {"dilations", cc.dilations}, {"pads", cc.pads}, {"group", cc.group}};
  if (!cc.output_padding.empty()) a["output_padding"] = cc.output_padding;
  return a;
}

ValueId conv(Net& n, const ConvCase& cc, bool transposed, uint64_t seed) {
  Shape x = {cc.n, cc.c},
        w = transposed ? Shape{cc.c, cc.m / cc.group} : Shape{cc.m, cc.c / cc.group};
  x.insert(x.end(), cc.spatial.begin(), cc.spatial.end());
  w.insert(w.end(), cc.kernel.begin(), cc.kernel.end());
  ValueId wv = cc.constant_weights ? n.weights(w, seed) : n.input(w);
  return n.op(transposed ? "prim.ConvTranspose" : "prim.Conv", {n.input(x), wv}, conv_attrs(cc));
}

// A random valid convolution of `rank` spatial dims (the output has at least one element).
ConvCase random_case(std::mt19937& rng, size_t rank, bool transposed) {
  ConvCase cc;
  int64_t per_group_c = pick(rng, 1, 6), per_group_m = pick(rng, 1, 6);
  cc.group = pick(rng, 0, 2) == 0 ? 1 : pick(rng, 2, 4);
  cc.n = pick(rng, 1, 2);
  cc.c = per_group_c * cc.group;
  cc.m = per_group_m * cc.group;
  cc.constant_weights = pick(rng, 0, 1) == 1;
  cc.spatial.clear(), cc.kernel.clear(), cc.strides.clear(), cc.dilations.clear();
  Ints begin, end;
  for (size_t s = 0; s < rank; ++s) {
    cc.kernel.push_back(pick(rng, 1, 3));
    cc.strides.push_back(pick(rng, 1, 2));
    cc.dilations.push_back(pick(rng, 1, 2));
    int64_t extent = (cc.kernel[s] - 1) * cc.dilations[s] + 1;
    cc.spatial.push_back(pick(rng, extent, extent + (rank == 3 ? 4 : 9)));
    begin.push_back(pick(rng, 0, extent - 1));
    end.push_back(pick(rng, 0, extent - 1));
    if (transposed) cc.output_padding.push_back(pick(rng, 0, cc.strides[s] - 1));
  }
  cc.pads = begin;
  cc.pads.insert(cc.pads.end(), end.begin(), end.end());
  return cc;
}

TEST(DnnlConv, RandomConvolutions) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    Net n;
    n.b.output(conv(n, random_case(rng, 1 + trial % 3, false), false, trial));
    expect_matches_interpreter(n.g, trial);
  }
}

TEST(DnnlConv, Depthwise) {
  Net n;
  n.b.output(conv(n, {.c = 16, .m = 16, .group = 16, .spatial = {9, 7}}, false, 1));
  expect_matches_interpreter(n.g, 1);
}

TEST(DnnlConv, DilatedStride2AsymmetricPads) {
  Net n;
  ConvCase cc{.n = 2,
              .c = 6,
              .m = 10,
              .group = 2,
              .spatial = {13, 11},
              .strides = {2, 2},
              .dilations = {2, 3},
              .pads = {0, 2, 3, 1},
              .constant_weights = false};
  n.b.output(conv(n, cc, false, 2));
  expect_matches_interpreter(n.g, 2);
}

TEST(DnnlConvTranspose, RandomDeconvolutions) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 24; ++trial) {
    Net n;
    ConvCase cc = random_case(rng, 1 + trial % 3, true);
    n.b.output(conv(n, cc, true, trial));
    expect_matches_interpreter(n.g, trial);
  }
}

// An NHWC input made NCHW by a Transpose: the input reorder reads it as strides.
TEST(DnnlConv, TransposedInput) {
  Net n;
  ValueId x = n.op("prim.Transpose", {n.input({1, 9, 10, 5})}, {{"perm", Ints{0, 3, 1, 2}}});
  ValueId w = n.weights({8, 5, 3, 3}, 3);
  n.b.output(n.op("prim.Conv", {x, w}, conv_attrs({.pads = {1, 0, 1, 2}})));
  expect_matches_interpreter(n.g, 3);
}

}  // namespace
}  // namespace orch::codegen::dnnl_test
