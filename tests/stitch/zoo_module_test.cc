// A zoo model optimized end to end without measuring (size-based costs): the transformer demo
// model by default; ORCH_STITCH_ZOO=name[:size] picks another. Prints the module's numbers.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "stitch_test_util.h"
#include "zoo/zoo.h"

namespace orch::stitch_test {
namespace {

TEST(StitchZoo, ModelOptimizesAndMatchesTheInterpreter) {
  std::string spec =
      std::getenv("ORCH_STITCH_ZOO") ? std::getenv("ORCH_STITCH_ZOO") : "transformer-tiny";
  zoo::ModelOptions options;
  std::string name = spec;
  if (size_t colon = spec.find(':'); colon != std::string::npos) {
    name = spec.substr(0, colon);
    options.size = std::stoll(spec.substr(colon + 1));
  }
  auto start = std::chrono::steady_clock::now();
  PlannedModel m = plan_model(zoo::build_model(name, options));
  double plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string dir = temp_dir("zoo_" + name);
  driver::OptimizeOptions build;
  stitch::StitchResult r = driver::build_module(m.graph, m.problem, m.plan, m.choices, dir, build);
  double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.kernels, static_cast<int>(m.plan.kernels.size()));
  EXPECT_LT(r.arena_bytes, r.intermediate_bytes) << "a model this deep reuses arena bytes";
  fmt::print(
      "{}: {} primitives, {} kernels ({} halide, {} dnnl, {} reference), arena {} B vs {} B, "
      "weights {} B; plan {:.1f} s, stitch {:.1f} s, total with validation {:.1f} s\n",
      name, m.graph.num_nodes(), r.kernels, r.halide_kernels, r.dnnl_kernels, r.reference_kernels,
      r.arena_bytes, r.intermediate_bytes, r.weights_bytes, plan_s, r.seconds, total_s);
}

}  // namespace
}  // namespace orch::stitch_test
