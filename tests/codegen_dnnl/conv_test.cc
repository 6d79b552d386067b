// prim.Conv and prim.ConvTranspose on oneDNN: groups, depthwise, dilation, strides, asymmetric
// pads, 1-D to 3-D, constant and variable weights.
#include <algorithm>
#include <map>

#include "../common/conv_cases.h"
#include "dnnl_test_util.h"
#include "ir/error.h"

namespace orch::codegen::dnnl_test {
namespace {

using conv_cases::conv_attrs;
using conv_cases::ConvCase;
using conv_cases::Ints;
using conv_cases::random_case;

ValueId conv(Net& n, const ConvCase& cc, bool transposed, uint64_t seed) {
  Shape w = conv_cases::weight_shape(cc, transposed);
  ValueId wv = cc.constant_weights ? n.weights(w, seed) : n.input(w);
  return n.op(transposed ? "prim.ConvTranspose" : "prim.Conv",
              {n.input(conv_cases::input_shape(cc)), wv}, conv_attrs(cc, transposed));
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

// Every convolution oneDNN can also run in the plain or the channel-blocked layout offers it, and
// it computes the same.
TEST(DnnlConv, OtherLayoutsMatchTheInterpreter) {
  std::mt19937 rng(13);
  std::map<std::string, int> offered;
  for (int trial = 0; trial < 30; ++trial) {
    const bool transposed = trial % 2 == 1;
    Net n;
    ValueId y = conv(n, random_case(rng, 1 + trial % 3, transposed), transposed, trial);
    n.b.output(n.ew("max", {n.bias(y, 1, true, trial), n.c(0)}));
    for (const std::string& config : dnnl_configs(n.g)) {
      expect_matches_interpreter(n.g, trial, config);
      ++offered[config];
    }
  }
  EXPECT_GE(offered["layout=plain"], 5) << "many of these convolutions have a GEMM implementation";
  EXPECT_GE(offered["layout=blocked"], 5) << "and many a channel-blocked one";
  EXPECT_EQ(offered.size(), 2u) << "a convolution has no other configuration";
}

// The case the plain layout is for: a 1x1 convolution, which oneDNN runs as one GEMM.
TEST(DnnlConv, PointwiseOffersThePlainLayout) {
  Net n;
  n.b.output(n.op("prim.Conv", {n.input({1, 32, 13, 13}), n.weights({64, 32, 1, 1}, 4)},
                  conv_attrs({.pads = {0, 0, 0, 0}})));
  std::vector<std::string> configs = dnnl_configs(n.g);
  EXPECT_NE(std::find(configs.begin(), configs.end(), "layout=plain"), configs.end());
  expect_matches_interpreter(n.g, 4, "layout=plain");
}

TEST(DnnlConv, UnknownConfigurationIsNamed) {
  Net n;
  n.b.output(n.op("prim.Conv", {n.input({1, 4, 5, 5}), n.weights({4, 4, 1, 1}, 5)},
                  conv_attrs({.pads = {0, 0, 0, 0}})));
  try {
    dnnl_compile(n.g, "layout=nhwc");
    FAIL() << "an unknown configuration compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown configuration 'layout=nhwc'"), std::string::npos)
        << e.what();
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
