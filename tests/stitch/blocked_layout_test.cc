// Intermediates stored channel-blocked between kernels (stitch/blocked_layout.h): which kernels
// are oblivious to the layout, and a module whose oneDNN convolutions run blocked keeps their
// tensors blocked across them and a concat, and still matches the interpreter kernel by kernel.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "orch/module.h"
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
  reshape.b.output(
      reshape.b.op("prim.Reshape", {reshape.input(16)}, {{"shape", Ints{1, 16, 16}}}));
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
  int stored = 0;        // oneDNN kernels with a stored-blocked port
  int blocked_values = 0;  // kernel inputs and outputs marked channel-blocked
};

Built build(const PlannedModel& m, const std::string& name, bool blocked) {
  std::string dir = temp_dir(name);
  driver::OptimizeOptions options;
  options.stitch.blocked_between_kernels = blocked;
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

}  // namespace
}  // namespace orch::stitch_test
