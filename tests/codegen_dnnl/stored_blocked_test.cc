// Tensors a module stores channel-blocked between oneDNN kernels (configuration
// "stored_blocked="): which ports a kernel offers, and that a kernel reading and writing them
// blocked computes what the interpreter computes.
#include "../common/conv_cases.h"
#include "codegen/channel_blocks.h"
#include "dnnl_test_util.h"
#include "ir/error.h"

namespace orch::codegen::dnnl_test {
namespace {

using conv_cases::conv_attrs;
using conv_cases::ConvCase;
using conv_cases::Ints;

// `t` stored channel-blocked as this CPU's oneDNN blocks (blocked = true) or back (false).
Tensor reblock(const Tensor& t, bool blocked) {
  return blocked ? to_channel_blocks(t, dnnl_channel_block())
                 : from_channel_blocks(t, dnnl_channel_block());
}

// A 3x3 convolution with bias and ReLU plus a residual input, channels in whole blocks; with
// `residual_first`, the residual is added before the ReLU (a sum post-op's place).
struct Residual {
  Net n;
  explicit Residual(int64_t channels = 32, bool residual_first = false) {
    ValueId x = n.input({1, channels, 10, 9});
    ValueId skip = n.input({1, channels, 10, 9});
    ValueId y = n.op("prim.Conv", {x, n.weights({channels, channels, 3, 3}, 1)},
                     conv_attrs({.pads = {1, 1, 1, 1}}));
    y = n.bias(y, 1, true, 2);
    if (residual_first) y = n.ew("add", {y, skip});
    y = n.ew("relu", {y});
    n.b.output(residual_first ? y : n.ew("add", {y, skip}));
  }
};

// The kernel of `g` in `config`, its inputs and output stored blocked, matches the interpreter.
void expect_blocked_run_matches(const Graph& g, const std::string& config) {
  SCOPED_TRACE(config);
  std::unique_ptr<Kernel> kernel = dnnl_compile(g, config);
  std::vector<Tensor> inputs = interp::random_inputs(g, 5);
  std::vector<Tensor> want = interp::interpret(g, inputs);
  std::vector<Tensor> blocked = {reblock(inputs[0], true), reblock(inputs[1], true)};
  const TensorType& t = g.value(g.outputs()[0]).type;
  Tensor out(t.dtype, t.shape);
  kernel->run(blocked, std::span<Tensor>(&out, 1));
  Tensor got = reblock(out, false);
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.get(i), want[0].get(i), tolerance(want[0].get(i))) << i;
}

TEST(DnnlStoredBlocked, BlockedConvolutionOffersItsSourceResidualAndOutput) {
  Residual r;
  DnnlBlockedPorts ports = dnnl_blocked_ports(r.n.g, "layout=blocked");
  EXPECT_EQ(ports.inputs, (std::vector<int>{0, 1}));
  EXPECT_TRUE(ports.output);
}

TEST(DnnlStoredBlocked, KernelOnBlockedTensorsMatchesTheInterpreter) {
  Residual r;
  std::string config =
      dnnl_with_stored_blocked("layout=blocked", {.inputs = {0, 1}, .output = true});
  EXPECT_EQ(config, "layout=blocked;stored_blocked=i0,i1,o0");
  expect_blocked_run_matches(r.n.g, config);
}

// A residual added as a sum post-op is copied into the destination by a reorder, from whatever
// layout the module stores it in.
TEST(DnnlStoredBlocked, ResidualSumOnBlockedTensorsMatchesTheInterpreter) {
  Residual r(32, true);
  DnnlBlockedPorts ports = dnnl_blocked_ports(r.n.g, "residual=sum");
  expect_blocked_run_matches(
      r.n.g, dnnl_with_stored_blocked("residual=sum", {.inputs = {0, 1}, .output = true}));
  EXPECT_FALSE(ports.reference_only);
}

// Only the source blocked: the output reorders back to the plain layout as before.
TEST(DnnlStoredBlocked, SourceAloneMatchesTheInterpreter) {
  Residual r;
  std::unique_ptr<Kernel> kernel = dnnl_compile(r.n.g, "layout=blocked;stored_blocked=i0");
  std::vector<Tensor> inputs = interp::random_inputs(r.n.g, 6);
  std::vector<Tensor> want = interp::interpret(r.n.g, inputs);
  std::vector<Tensor> args = {reblock(inputs[0], true), inputs[1]};
  const TensorType& t = r.n.g.value(r.n.g.outputs()[0]).type;
  Tensor out(t.dtype, t.shape);
  kernel->run(args, std::span<Tensor>(&out, 1));
  for (int64_t i = 0; i < out.numel(); ++i)
    ASSERT_NEAR(out.get(i), want[0].get(i), tolerance(want[0].get(i))) << i;
}

// Channels that do not fill whole blocks would take more bytes blocked than plain.
TEST(DnnlStoredBlocked, PartialChannelBlocksAreNotOffered) {
  Residual r(dnnl_channel_block() + 4);
  DnnlBlockedPorts ports = dnnl_blocked_ports(r.n.g, "layout=blocked");
  EXPECT_TRUE(ports.inputs.empty());
  EXPECT_FALSE(ports.output);
}

// Candy's stem convolution reads 3 channels. Run blocked, its source is padded to a whole
// block, and oneDNN 2.6 has only its reference convolution for that: 13 s at 224x224 against
// 9.4 ms in the plain layout, where a JIT kernel runs it. Checked on AVX-512 only, at Candy's
// shape (descriptors only: nothing runs).
TEST(DnnlStoredBlocked, ThreeChannelSourceHasOnlyTheReferenceKernelBlocked) {
  if (dnnl_channel_block() != 16) GTEST_SKIP() << "checked with AVX-512's 16-channel blocks";
  Net n;
  n.b.output(n.op("prim.Conv", {n.input({1, 3, 224, 224}), n.weights({32, 3, 9, 9}, 7)},
                  conv_attrs({.pads = {4, 4, 4, 4}})));
  EXPECT_TRUE(dnnl_blocked_ports(n.g, "layout=blocked").reference_only);
  EXPECT_FALSE(dnnl_blocked_ports(n.g, "layout=plain").reference_only);
  // A blocked residual read as a binary post-op keeps oneDNN's JIT kernel.
  Residual r;
  DnnlBlockedPorts ports = dnnl_blocked_ports(r.n.g, "layout=blocked");
  EXPECT_EQ(ports.inputs, (std::vector<int>{0, 1}));
  EXPECT_FALSE(ports.reference_only);
}

// A source read through a Transpose is not the tensor the module stores.
TEST(DnnlStoredBlocked, TransposedSourceIsNotOffered) {
  Net n;
  ValueId x = n.op("prim.Transpose", {n.input({1, 10, 9, 32})}, {{"perm", Ints{0, 3, 1, 2}}});
  n.b.output(
      n.op("prim.Conv", {x, n.weights({32, 32, 3, 3}, 1)}, conv_attrs({.pads = {1, 1, 1, 1}})));
  DnnlBlockedPorts ports = dnnl_blocked_ports(n.g, "layout=blocked");
  EXPECT_TRUE(ports.inputs.empty());
  EXPECT_TRUE(ports.output);
}

// In the plain layout the convolution reads and writes plain tensors: nothing to offer.
TEST(DnnlStoredBlocked, PlainLayoutOffersNothing) {
  Net n;
  n.b.output(n.op("prim.Conv", {n.input({1, 32, 13, 13}), n.weights({64, 32, 1, 1}, 4)},
                  conv_attrs({.pads = {0, 0, 0, 0}})));
  DnnlBlockedPorts ports = dnnl_blocked_ports(n.g, "layout=plain");
  EXPECT_TRUE(ports.inputs.empty());
  EXPECT_FALSE(ports.output);
}

void expect_refused(const Graph& g, const std::string& config, const std::string& message) {
  try {
    dnnl_compile(g, config);
    ADD_FAILURE() << "'" << config << "' compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(DnnlStoredBlocked, BadPortsAreNamed) {
  Residual r;
  expect_refused(r.n.g, "layout=blocked;stored_blocked=i7", "no input 7 to store channel-blocked");
  expect_refused(r.n.g, "stored_blocked=x1", "stored-blocked port 'x1' is neither");
  expect_refused(r.n.g, "layout=blocked;layout=plain", "sets two layouts");
  Residual partial(dnnl_channel_block() + 4);
  expect_refused(partial.n.g, "stored_blocked=o0", "has no whole channel blocks");
  expect_refused(partial.n.g, "stored_blocked=i0", "partial channel block");
}

}  // namespace
}  // namespace orch::codegen::dnnl_test
