// A convolution's residual add as oneDNN's sum post-op (configuration "residual=sum"): offered
// where the first post-op after the bias adds a tensor of the output's shape, and computing what
// the interpreter computes, with post-ops after it too.
#include <algorithm>

#include "../common/conv_cases.h"
#include "dnnl_test_util.h"
#include "ir/error.h"

namespace orch::codegen::dnnl_test {
namespace {

using conv_cases::conv_attrs;

bool offers_sum(const Graph& g) {
  std::vector<std::string> configs = dnnl_configs(g);
  return std::find(configs.begin(), configs.end(), "residual=sum") != configs.end();
}

// EfficientViT-B1's pointwise convolution with its bias and residual, smaller: the residual on
// either side of the add, and a ReLU after it or not.
Graph residual_conv(bool residual_left, bool relu_after) {
  Net n;
  ValueId x = n.input({1, 16, 12, 11});
  ValueId skip = n.input({1, 16, 12, 11});
  ValueId y =
      n.op("prim.Conv", {x, n.weights({16, 16, 1, 1}, 1)}, conv_attrs({.pads = {0, 0, 0, 0}}));
  y = n.bias(y, 1, true, 2);
  y = residual_left ? n.ew("add", {skip, y}) : n.ew("add", {y, skip});
  n.b.output(relu_after ? n.ew("relu", {y}) : y);
  return n.g;
}

TEST(DnnlResidual, ASumPostOpMatchesTheInterpreter) {
  for (bool residual_left : {false, true}) {
    for (bool relu_after : {false, true}) {
      Graph g = residual_conv(residual_left, relu_after);
      ASSERT_TRUE(offers_sum(g)) << residual_left << relu_after;
      expect_matches_interpreter(g, 7, "residual=sum");
    }
  }
}

// A per-channel operand is broadcast (a binary post-op's job), and a residual after another
// post-op is not where a sum post-op goes: neither offers it, and asking for it is refused.
TEST(DnnlResidual, OnlyALeadingWholeTensorAddIsASum) {
  Net n;
  ValueId y = n.op("prim.Conv", {n.input({1, 16, 12, 11}), n.weights({16, 16, 1, 1}, 1)},
                   conv_attrs({.pads = {0, 0, 0, 0}}));
  y = n.ew("relu", {n.bias(y, 1, true, 2)});
  n.b.output(n.ew("add", {y, n.input({1, 16, 12, 11})}));
  EXPECT_FALSE(offers_sum(n.g));
  try {
    dnnl_compile(n.g, "residual=sum");
    FAIL() << "a kernel without a leading residual compiled with 'residual=sum'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is for a convolution whose first post-op adds"),
              std::string::npos)
        << e.what();
  }
  Net bias_only;
  ValueId z = bias_only.op("prim.Conv",
                           {bias_only.input({1, 16, 12, 11}), bias_only.weights({16, 16, 1, 1}, 1)},
                           conv_attrs({.pads = {0, 0, 0, 0}}));
  bias_only.b.output(bias_only.bias(bias_only.bias(z, 1, true, 2), 1, false, 3));
  EXPECT_FALSE(offers_sum(bias_only.g));
}

}  // namespace
}  // namespace orch::codegen::dnnl_test
