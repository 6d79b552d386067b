// Chains of convolutions in one oneDNN kernel: each stage reads the one before through its
// epilogue alone, the activations between stages stay in the layouts oneDNN picks, and anything
// else (a MatMul, an intermediate read twice) is refused with a reason.
#include <thread>

#include "../common/conv_cases.h"
#include "dnnl_test_util.h"

namespace orch::codegen::dnnl_test {
namespace {

using conv_cases::conv_attrs;
using conv_cases::ConvCase;
using conv_cases::Ints;

ValueId conv(Net& n, ValueId x, int64_t out, const ConvCase& cc, uint64_t seed) {
  int64_t in = n.shape(x)[1];
  Shape w = {out, in / cc.group};
  w.insert(w.end(), cc.kernel.begin(), cc.kernel.end());
  return n.op("prim.Conv", {x, n.weights(w, seed)}, conv_attrs(cc));
}

const ConvCase k3x3{.pads = {1, 1, 1, 1}};
const ConvCase k1x1{.kernel = {1, 1}, .pads = {0, 0, 0, 0}};

// MBConv's shape (EfficientViT, YOLOX's depthwise blocks): expand 1x1 with bias and SiLU,
// depthwise 3x3 with bias and ReLU, project 1x1 with bias.
TEST(DnnlChain, ThreeStagesMatchTheInterpreter) {
  Net n;
  ValueId x = n.input({1, 16, 14, 14});
  ValueId a = swish(n, n.bias(conv(n, x, 32, k1x1, 1), 1, true, 2));
  ConvCase depthwise = k3x3;
  depthwise.group = 32;
  ValueId b = n.ew("relu", {n.bias(conv(n, a, 32, depthwise, 3), 1, true, 4)});
  n.b.output(n.bias(conv(n, b, 16, k1x1, 5), 1, true, 6));
  expect_matches_interpreter(n.g, 7);
  // A chain has no plain-layout configuration; the channel-blocked one computes the same.
  for (const std::string& config : dnnl_configs(n.g)) {
    EXPECT_EQ(config, "layout=blocked");
    expect_matches_interpreter(n.g, 7, config);
  }
}

TEST(DnnlChain, StridedStagesWithVariableWeightsMatchTheInterpreter) {
  Net n;
  ValueId x = n.input({2, 8, 17, 15});
  ConvCase strided = k3x3;
  strided.strides = {2, 2};
  ValueId a = leaky_relu(n, conv(n, x, 16, strided, 1), 0.1);
  ValueId w = n.input({8, 16, 3, 3});
  n.b.output(n.op("prim.Conv", {a, w}, conv_attrs(k3x3)));
  expect_matches_interpreter(n.g, 8);
}

// Two 3x3 convolutions of 16 channels both run blocked: one reorder into the chain, one out,
// none between the stages.
TEST(DnnlChain, ActivationsStayBlockedBetweenStages) {
  Net n;
  ValueId x = n.input({1, 16, 20, 20});
  ValueId a = n.ew("relu", {conv(n, x, 16, k3x3, 1)});
  n.b.output(n.ew("relu", {conv(n, a, 16, k3x3, 2)}));
  ASSERT_EQ(dnnl_backend().reject(n.g), "");
  std::vector<Tensor> inputs = interp::random_inputs(n.g, 3);
  DnnlStageTimes times = time_dnnl_stages(n.g, inputs, 2);
  EXPECT_EQ(times.reorders, 2);
  EXPECT_GT(times.primitive_s, 0);
}

// Every oneDNN kernel a thread runs keeps its reordered activations (3x3 convolutions of 16 and
// 32 channels run channel-blocked) and a chain's intermediates in that thread's one scratch area: a
// larger kernel grows it between two runs of a smaller one, and another thread runs the same kernel
// in a scratch of its own.
TEST(DnnlChain, KernelsSharingAThreadsScratchMatchTheInterpreter) {
  auto chain = [](int64_t channels, int64_t size) {
    Net n;
    ValueId x = n.input({1, channels, size, size});
    ValueId a = n.ew("relu", {conv(n, x, channels, k3x3, 1)});
    n.b.output(conv(n, a, channels, k3x3, 2));
    return n.g;
  };
  Graph small = chain(16, 12), large = chain(32, 40);
  std::unique_ptr<Kernel> a = dnnl_compile(small, "");
  std::unique_ptr<Kernel> b = dnnl_compile(large, "");
  expect_run_matches_interpreter(small, *a, 1);
  expect_run_matches_interpreter(large, *b, 2);
  expect_run_matches_interpreter(small, *a, 3);
  std::thread other([&] { expect_run_matches_interpreter(large, *b, 4); });
  other.join();
  expect_run_matches_interpreter(large, *b, 5);
}

TEST(DnnlChain, IntermediateReadTwiceIsRefused) {
  Net n;
  ValueId x = n.input({1, 8, 10, 10});
  ValueId a = n.ew("relu", {conv(n, x, 8, k3x3, 1)});
  n.b.output(n.ew("add", {conv(n, a, 8, k3x3, 2), a}));
  EXPECT_NE(dnnl_backend().reject(n.g).find("has no oneDNN post-op"), std::string::npos)
      << dnnl_backend().reject(n.g);
}

TEST(DnnlChain, ALayoutBetweenStagesIsNamed) {
  Net n;
  ValueId x = n.input({1, 8, 10, 10});
  ValueId a = n.op("prim.Transpose", {conv(n, x, 8, k3x3, 1)}, {{"perm", Ints{0, 1, 3, 2}}});
  n.b.output(conv(n, a, 8, k3x3, 2));
  std::string why = dnnl_backend().reject(n.g);
  EXPECT_NE(why.find("does not read"), std::string::npos) << why;
  EXPECT_NE(why.find("prim.Transpose"), std::string::npos) << why;
}

TEST(DnnlChain, ParallelConvolutionsAreNotAChain) {
  Net n;
  ValueId x = n.input({1, 8, 10, 10});
  n.b.output(n.ew("add", {conv(n, x, 8, k1x1, 1), conv(n, x, 8, k1x1, 2)}));
  EXPECT_NE(dnnl_backend().reject(n.g), "");
}

}  // namespace
}  // namespace orch::codegen::dnnl_test
