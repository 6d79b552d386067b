// Module rounds: candidates a module ran are planned at their time in it and the others at their
// tuned cost scaled by the modules' slowdown; the rounds keep the fastest module they built,
// remove the others' directories, stop when a plan repeats, try oneDNN convolutions tuned in the
// model's layout relaid out, and the plan kept is valid over the tuned costs and is the one its
// module runs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "../common/orch_cli.h"
#include "driver/module_rounds.h"
#include "driver/pipeline.h"
#include "interp/random_inputs.h"
#include "ir/builder.h"
#include "ir/text_format.h"
#include "orch/module.h"
#include "runtime/module_format.h"

namespace orch {
namespace {

namespace fs = std::filesystem;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A chain of four elementwise operators: kernels of one or two primitives.
constexpr const char* kChain = R"(graph chain(%x: f32[64,256]) {
  %a: f32[64,256] = Relu(%x)
  %b: f32[64,256] = Exp(%a)
  %c: f32[64,256] = Neg(%b)
  %d: f32[64,256] = Sigmoid(%c)
  return %d
}
)";

// One operator: one candidate, so every plan is the same plan.
constexpr const char* kOne = R"(graph one(%x: f32[64,256]) {
  %a: f32[64,256] = Relu(%x)
  return %a
}
)";

OrchestrationProblem problem_with_costs(std::vector<double> costs) {
  OrchestrationProblem p;
  for (double c : costs) p.candidates.push_back(Candidate{.cost_us = c});
  return p;
}

TEST(InModuleCosts, TimedCandidatesTakeTheirTimeAndTheRestScaleByTheSlowdown) {
  OrchestrationProblem tuned = problem_with_costs({10, 30, 20, kInfinity});
  // The timed kernels took 15 + 45 = 60 us in modules against 40 alone: 1.5x.
  OrchestrationProblem p = driver::in_module_costs(tuned, {{0, 15}, {1, 45}});
  EXPECT_DOUBLE_EQ(p.candidates[0].cost_us, 15);
  EXPECT_DOUBLE_EQ(p.candidates[1].cost_us, 45);
  EXPECT_DOUBLE_EQ(p.candidates[2].cost_us, 30);
  EXPECT_EQ(p.candidates[3].cost_us, kInfinity);  // unmeasured stays left out
  EXPECT_DOUBLE_EQ(driver::in_module_costs(tuned, {}).candidates[2].cost_us, 20);
}

class ModuleRoundsTest : public cli_test::CliTest {
 protected:
  driver::TunedModel tuned(const char* text) const {
    std::string file = path("model.orch.txt");
    {
      std::ofstream out(file);
      out << text;
    }
    driver::TuneOptions o;
    o.db_path = path("tuning.db");
    o.budget_ms = 2;
    o.max_primitives = 2;
    o.halide_configs = 0;
    return driver::tune_model(driver::primitive_graph(file, {}), o);
  }

  driver::ModuleRoundsOptions options(int rounds) const {
    driver::ModuleRoundsOptions o;
    o.rounds = rounds;
    o.threads = 1;
    o.repeat = 3;
    o.final_passes = 2;
    return o;
  }

  std::string scratch(int round) const { return path(fmt::format("round{}", round)); }
};

TEST_F(ModuleRoundsTest, KeepsTheFastestModuleAndRemovesTheOthers) {
  driver::TunedModel t = tuned(kChain);
  driver::InModulePlan kept =
      driver::plan_in_modules(t, options(3), [&](int r) { return scratch(r); });
  ASSERT_GE(kept.rounds.size(), 1u);
  ASSERT_LE(kept.rounds.size(), 3u);
  EXPECT_EQ(kept.rounds[0].kernels, static_cast<int>(t.plan.kernels.size()));
  EXPECT_EQ(kept.rounds[0].new_kernels, kept.rounds[0].kernels);
  for (size_t r = 0; r < kept.rounds.size(); ++r) {
    EXPECT_GT(kept.rounds[r].run_us, 0);
    EXPECT_EQ(fs::exists(scratch(static_cast<int>(r))), static_cast<int>(r) == kept.chosen) << r;
    if (kept.rounds.size() > 1) {
      EXPECT_LE(kept.rounds[static_cast<size_t>(kept.chosen)].final_run_us,
                kept.rounds[r].final_run_us);
    }
  }
  EXPECT_EQ(kept.dir, scratch(kept.chosen));
  EXPECT_EQ(check_plan(t.problem, kept.plan), "");

  ASSERT_TRUE(fs::exists(fs::path(kept.dir) / runtime::kManifestFile));
  Module module = Module::load(kept.dir);
  ASSERT_EQ(module.kernels().size(), kept.plan.kernels.size());
  for (size_t k = 0; k < kept.plan.kernels.size(); ++k) {
    const codegen::KernelChoice& c = t.choices[static_cast<size_t>(kept.plan.kernels[k].candidate)];
    EXPECT_EQ(module.kernels()[k].backend, c.backend) << k;
    EXPECT_DOUBLE_EQ(module.kernels()[k].planned_us, c.cost_us) << k;
  }
}

// conv -> SiLU -> conv over whole channel blocks, with every convolution on oneDNN in the
// model's layout: the rounds build its plan relaid out too (blocked_layout.h), and keep one.
TEST_F(ModuleRoundsTest, TryThePlanRelaidOut) {
  Graph g;
  g.name = "conv_silu_conv";
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {1, 16, 8, 8}});
  ValueId w1 = b.constant(interp::random_tensor({DType::f32, {32, 16, 1, 1}}, 1));
  ValueId h = b.op("Conv", {x, w1});
  ValueId w2 = b.constant(interp::random_tensor({DType::f32, {16, 32, 1, 1}}, 2));
  b.output(b.op("Conv", {b.op("Mul", {h, b.op("Sigmoid", {h})}), w2}));
  driver::TunedModel t = tuned(print_graph(g).c_str());
  for (size_t c = 0; c < t.choices.size(); ++c) {
    bool conv = false;
    for (int p : t.problem.candidates[c].primitives) conv |= t.graph.node(p).op == "prim.Conv";
    if (!conv) continue;
    if (t.choices[c].backend == "dnnl")
      t.choices[c].config = "layout=plain";
    else
      t.problem.candidates[c].cost_us = kInfinity;
  }
  t.plan = orchestrate(t.problem);
  driver::InModulePlan kept =
      driver::plan_in_modules(t, options(1), [&](int r) { return scratch(r); });
  ASSERT_EQ(kept.rounds.size(), 2u);
  EXPECT_FALSE(kept.rounds[0].relaid_out);
  EXPECT_TRUE(kept.rounds[1].relaid_out);
  EXPECT_EQ(kept.rounds[1].kernels, kept.rounds[0].kernels);
  EXPECT_EQ(fs::exists(scratch(0)), kept.chosen == 0);
  EXPECT_EQ(fs::exists(scratch(1)), kept.chosen == 1);
  std::ifstream manifest(fs::path(kept.dir) / runtime::kManifestFile);
  std::string text((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("layout=blocked") != std::string::npos, kept.chosen == 1);
  EXPECT_EQ(text.find("layout=plain") != std::string::npos, kept.chosen == 0);
}

TEST_F(ModuleRoundsTest, StopWhenThePlanRepeats) {
  driver::TunedModel t = tuned(kOne);
  driver::InModulePlan kept =
      driver::plan_in_modules(t, options(4), [&](int r) { return scratch(r); });
  EXPECT_EQ(kept.rounds.size(), 1u);
  EXPECT_EQ(kept.chosen, 0);
  EXPECT_FALSE(fs::exists(scratch(1)));
}

}  // namespace
}  // namespace orch
