// Intermediates stored channel-blocked between kernels (stitch/blocked_layout.h): which kernels
// are oblivious to the layout, and a module whose oneDNN convolutions run blocked keeps their
// tensors blocked across them and a concat, and still matches the interpreter kernel by kernel.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "codegen/channel_blocks.h"
#include "codegen/dnnl/dnnl_backend.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "orch/module.h"
#include "stitch/block_shaped.h"
#include "stitch/blocked_layout.h"
#include "stitch_test_util.h"

namespace orch::stitch_test {
namespace {

using Ints = std::vector<int64_t>;

// Kernel graphs over [1, C, 4, 4] tensors.
struct Kernel {
  Graph g;
  Builder b{g};
  ValueId input(int64_t channels) {
    return b.input("in" + std::to_string(g.inputs().size()), {DType::f32, {1, channels, 4, 4}});
  }
  ValueId ew(const std::string& fn, std::vector<ValueId> in) {
    return b.op("prim.Elementwise", std::move(in), {{"fn", fn}});
  }
};

TEST(LayoutOblivious, ElementwiseAndScalarsAre) {
  Kernel k;
  ValueId x = k.input(32);
  ValueId half = k.b.constant(Tensor::scalar(DType::f32, 0.5));
  k.b.output(k.ew("mul", {k.ew("mul", {x, k.ew("sigmoid", {x})}), half}));
  EXPECT_TRUE(stitch::layout_oblivious(k.g, 16));
}

TEST(LayoutOblivious, ConcatOfWholeBlocksIs) {
  Kernel k;
  ValueId a = k.input(16), b = k.input(32);
  k.b.output(k.b.op("prim.Concat", {a, k.ew("relu", {b})}, {{"axis", int64_t{1}}}));
  EXPECT_TRUE(stitch::layout_oblivious(k.g, 16));
  EXPECT_FALSE(stitch::layout_oblivious(k.g, 32)) << "16 channels are half a block of 32";
}

TEST(LayoutOblivious, ReshapesAndPerChannelOperandsAreNot) {
  Kernel reshape;
  reshape.b.output(reshape.b.op("prim.Reshape", {reshape.input(16)}, {{"shape", Ints{1, 16, 16}}}));
  EXPECT_FALSE(stitch::layout_oblivious(reshape.g, 16));
  Kernel bias;
  ValueId per_channel = bias.b.op(
      "prim.Broadcast", {bias.b.constant(interp::random_tensor({DType::f32, {1, 16, 1, 1}}, 1))},
      {{"shape", Ints{1, 16, 4, 4}}});
  bias.b.output(bias.ew("add", {bias.input(16), per_channel}));
  EXPECT_FALSE(stitch::layout_oblivious(bias.g, 16));
  Kernel spatial;
  spatial.b.output(
      spatial.b.op("prim.Concat", {spatial.input(16), spatial.input(16)}, {{"axis", int64_t{2}}}));
  EXPECT_FALSE(stitch::layout_oblivious(spatial.g, 16));
}

// `t` ([N, C, spatial...]) stored in blocks of `block` channels, as a tensor of its block shape.
Tensor blocked(const Tensor& t, int64_t block) {
  auto stored = std::make_shared<Tensor>(codegen::to_channel_blocks(t, block));
  return Tensor::wrap(t.dtype(), stitch::block_shape(t.shape(), block), stored, stored->bytes());
}

// Bias + SiLU over a convolution's output (YOLOX's), with a concat: over block shapes, the
// interpreter computes the blocked form of what it computes over the plain ones.
TEST(BlockShaped, BiasAndSiluMeanTheSameOverBlockShapes) {
  Kernel k;
  ValueId x = k.input(32), y = k.input(16);
  ValueId bias = k.b.op("prim.Broadcast",
                        {k.b.constant(interp::random_tensor({DType::f32, {1, 32, 1, 1}}, 4))},
                        {{"shape", Ints{1, 32, 4, 4}}});
  ValueId h = k.ew("add", {x, bias});
  ValueId silu = k.ew("mul", {h, k.ew("sigmoid", {h})});
  k.b.output(k.b.op("prim.Concat", {silu, y}, {{"axis", int64_t{1}}}));
  EXPECT_FALSE(stitch::layout_oblivious(k.g, 16));
  std::optional<Graph> shaped = stitch::block_shaped_kernel(k.g, 16);
  ASSERT_TRUE(shaped.has_value());
  EXPECT_EQ(shaped->value(shaped->outputs()[0]).type.shape, (Shape{1, 3, 16, 16}));
  std::vector<Tensor> inputs = interp::random_inputs(k.g, 2);
  Tensor want = blocked(interp::interpret(k.g, inputs)[0], 16);
  std::vector<Tensor> shaped_inputs = {blocked(inputs[0], 16), blocked(inputs[1], 16)};
  std::vector<Tensor> got = interp::interpret(*shaped, shaped_inputs);
  for (int64_t i = 0; i < want.numel(); ++i) ASSERT_NEAR(got[0].get(i), want.get(i), 1e-6) << i;
}

TEST(BlockShaped, SpatialBroadcastsAndPartialBlocksAreRefused) {
  Kernel rows;
  ValueId row = rows.b.constant(interp::random_tensor({DType::f32, {1, 16, 4, 1}}, 1));
  rows.b.output(rows.ew(
      "add", {rows.input(16), rows.b.op("prim.Broadcast", {row}, {{"shape", Ints{1, 16, 4, 4}}})}));
  EXPECT_FALSE(stitch::block_shaped_kernel(rows.g, 16).has_value());
  Kernel partial;
  partial.b.output(partial.ew("relu", {partial.input(24)}));
  EXPECT_FALSE(stitch::block_shaped_kernel(partial.g, 16).has_value());
}

ValueId conv(Builder& b, ValueId x, int64_t in, int64_t out, int64_t k, uint64_t seed) {
  ValueId w = b.constant(interp::random_tensor({DType::f32, {out, in, k, k}}, seed));
  int64_t p = k / 2;
  return b.op("Relu", {b.op("Conv", {x, w}, {{"pads", Ints{p, p, p, p}}})});
}

// A CSP-like block: two convolutions, a concat of both, a third over it, a residual add.
Graph csp_model() {
  Graph g;
  g.name = "csp";
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {1, 16, 10, 10}});
  ValueId a = conv(b, x, 16, 32, 3, 1);
  ValueId c = b.op("Concat", {a, conv(b, a, 32, 16, 1, 2)}, {{"axis", int64_t{1}}});
  ValueId d = b.op("Add", {conv(b, c, 48, 32, 3, 3), a});
  b.output(conv(b, d, 32, 8, 1, 4));
  return g;
}

struct Built {
  nlohmann::json manifest;
  int stored = 0;          // oneDNN kernels with a stored-blocked port
  int blocked_values = 0;  // kernel inputs and outputs marked channel-blocked
};

Built build(const PlannedModel& m, const std::string& name, bool blocked, bool relayout = false) {
  std::string dir = temp_dir(name);
  driver::OptimizeOptions options;
  options.stitch.blocked_between_kernels = blocked;
  options.stitch.relayout_convolutions = relayout;
  // Validates kernel by kernel: values stored blocked reach the check unblocked.
  driver::build_module(m.graph, m.problem, m.plan, m.choices, dir, options);
  Built built;
  std::ifstream in(std::filesystem::path(dir) / "manifest.json");
  built.manifest = nlohmann::json::parse(in);
  for (const auto& k : built.manifest["kernels"]) {
    built.stored += k["config"].get<std::string>().find("stored_blocked=") != std::string::npos;
    for (const char* side : {"inputs", "outputs"})
      for (const auto& v : k[side]) built.blocked_values += v.contains("channel_block");
  }

  Module module = Module::load(dir);
  std::vector<Tensor> inputs = interp::random_inputs(m.graph, 3);
  std::vector<Tensor> want = interp::interpret(m.graph, inputs);
  std::vector<Tensor> got = module.run(inputs);
  for (int64_t i = 0; i < want[0].numel(); ++i)
    EXPECT_NEAR(got[0].get(i), want[0].get(i), 1e-3 + 1e-3 * std::abs(want[0].get(i))) << i;
  std::filesystem::remove_all(dir);
  return built;
}

TEST(BlockedLayout, ConvolutionsKeepTheirTensorsBlockedAcrossAConcat) {
  PlannedModel m = plan_model(csp_model());
  // As if every convolution had been measured fastest on oneDNN, channel-blocked: Halide
  // convolutions (which would take the concat in) priced out, the plan solved again.
  for (size_t i = 0; i < m.choices.size(); ++i) {
    if (m.choices[i].backend == "dnnl") m.choices[i].config = "layout=blocked";
    bool conv = false;
    for (int p : m.problem.candidates[i].primitives) conv |= m.graph.node(p).op == "prim.Conv";
    if (m.choices[i].backend == "halide" && conv) m.problem.candidates[i].cost_us = 1e6;
  }
  m.plan = orchestrate(m.problem);
  Built on = build(m, "csp_blocked", true);
  EXPECT_GE(on.stored, 3) << on.manifest.dump(1);
  EXPECT_GE(on.blocked_values, 4);
  Built off = build(m, "csp_plain", false);
  EXPECT_EQ(off.stored, 0);
  EXPECT_EQ(off.blocked_values, 0);
}

// `g` planned as if its oneDNN convolutions measured fastest alone in the layout `config` names
// (blocked unless told), their epilogues left to Halide.
PlannedModel plan_blocked_convolutions_alone(const Graph& g,
                                             const std::string& config = "layout=blocked") {
  PlannedModel m = plan_model(g);
  for (size_t i = 0; i < m.choices.size(); ++i) {
    bool conv = false, elementwise = false;
    for (int p : m.problem.candidates[i].primitives) {
      conv |= m.graph.node(p).op == "prim.Conv";
      elementwise |= m.graph.node(p).op == "prim.Elementwise";
    }
    if (m.choices[i].backend == "dnnl") m.choices[i].config = config;
    if (conv && (elementwise || m.choices[i].backend != "dnnl"))
      m.problem.candidates[i].cost_us = 1e6;
  }
  m.plan = orchestrate(m.problem);
  return m;
}

// conv -> bias + SiLU -> conv, YOLOX's pattern.
Graph conv_silu_conv() {
  Graph g;
  g.name = "conv_silu_conv";
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {1, 16, 8, 8}});
  ValueId w1 = b.constant(interp::random_tensor({DType::f32, {32, 16, 3, 3}}, 1));
  ValueId bias = b.constant(interp::random_tensor({DType::f32, {32}}, 2));
  ValueId h = b.op("Conv", {x, w1, bias}, {{"pads", Ints{1, 1, 1, 1}}});
  ValueId silu = b.op("Mul", {h, b.op("Sigmoid", {h})});
  ValueId w2 = b.constant(interp::random_tensor({DType::f32, {16, 32, 3, 3}}, 3));
  b.output(b.op("Conv", {silu, w2}, {{"pads", Ints{1, 1, 1, 1}}}));
  return g;
}

// Halide kernels of a module reading channel-blocked tensors.
int block_shaped_halide_kernels(const Built& built) {
  int count = 0;
  for (const auto& k : built.manifest["kernels"]) {
    if (k["backend"] != "halide") continue;
    bool blocked_in = false;
    for (const auto& v : k["inputs"]) blocked_in |= v.contains("channel_block");
    count += blocked_in;
  }
  return count;
}

// A convolution's bias and SiLU left to Halide between two blocked oneDNN convolutions: the
// Halide kernel is rewritten over the block shapes, and no tensor between them is plain.
TEST(BlockedLayout, HalideBiasAndSiluRunOnBlockedTensors) {
  Built on = build(plan_blocked_convolutions_alone(conv_silu_conv()), "conv_silu_conv", true);
  EXPECT_EQ(block_shaped_halide_kernels(on), 1) << on.manifest.dump(1);
  EXPECT_EQ(on.stored, 2);
}

// The same convolutions tuned in the model's layout store nothing blocked, unless relaid out:
// then both run blocked, the tensors between them are stored so, and the module still matches
// the interpreter kernel by kernel.
TEST(BlockedLayout, RelaidOutConvolutionsStoreTheirTensorsBlocked) {
  PlannedModel m = plan_blocked_convolutions_alone(conv_silu_conv(), "layout=plain");
  Built plain = build(m, "conv_silu_conv_plain", true);
  EXPECT_EQ(plain.stored, 0) << plain.manifest.dump(1);
  Built relaid = build(m, "conv_silu_conv_relaid", true, true);
  EXPECT_EQ(block_shaped_halide_kernels(relaid), 1) << relaid.manifest.dump(1);
  int blocked_convolutions = 0;
  for (const auto& k : relaid.manifest["kernels"])
    blocked_convolutions += k["config"].get<std::string>().starts_with("layout=blocked;");
  EXPECT_EQ(blocked_convolutions, 2);
}

// A stem convolution over 3 channels, then one over whole blocks, both tuned in the model's
// layout: relaying out moves the second only, since oneDNN has only its reference kernel for
// the first blocked (codegen::DnnlBlockedPorts::reference_only).
TEST(BlockedLayout, RelayoutLeavesAStemOverPartialBlocksPlain) {
  if (codegen::dnnl_channel_block() != 16) GTEST_SKIP() << "checked with AVX-512's blocks";
  Graph g;
  g.name = "stem";
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {1, 3, 12, 12}});
  ValueId w2 = b.constant(interp::random_tensor({DType::f32, {32, 32, 3, 3}}, 2));
  b.output(b.op("Conv", {conv(b, x, 3, 32, 9, 1), w2}, {{"pads", Ints{1, 1, 1, 1}}}));
  Built relaid = build(plan_blocked_convolutions_alone(g, "layout=plain"), "stem", true, true);
  std::vector<std::string> layouts;
  for (const auto& k : relaid.manifest["kernels"])
    if (k["backend"] == "dnnl") {
      std::string config = k["config"];
      layouts.push_back(config.substr(0, config.find(';')));
    }
  EXPECT_EQ(layouts, (std::vector<std::string>{"layout=plain", "layout=blocked"}))
      << relaid.manifest.dump(1);
}

// A Halide kernel adding a large constant (read from weights.bin, stored plain) to a
// convolution's output is not oblivious to the layout: its tensors stay plain, and the module
// still matches the interpreter kernel by kernel.
TEST(BlockedLayout, LargeConstantsKeepAnElementwiseKernelPlain) {
  Graph g;
  g.name = "conv_add_conv";
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {1, 16, 8, 8}});
  ValueId w1 = b.constant(interp::random_tensor({DType::f32, {32, 16, 3, 3}}, 1));
  ValueId h = b.op("Conv", {x, w1}, {{"pads", Ints{1, 1, 1, 1}}});
  ValueId field = b.constant(interp::random_tensor({DType::f32, {1, 32, 8, 8}}, 2));
  ValueId w2 = b.constant(interp::random_tensor({DType::f32, {16, 32, 3, 3}}, 3));
  b.output(b.op("Conv", {b.op("Add", {h, field}), w2}, {{"pads", Ints{1, 1, 1, 1}}}));
  PlannedModel m = plan_blocked_convolutions_alone(g);
  Built on = build(m, "conv_add_conv", true);
  EXPECT_EQ(on.blocked_values, 0) << on.manifest.dump(1);
}

}  // namespace
}  // namespace orch::stitch_test
