// Measured CUDA tuning without a GPU (TuneOptions::cuda_measure_on_host): each candidate kernel
// of the tiny MLP is stitched alone into a CUDA module, checked against the interpreter and timed
// in the profiler's children, its module run on the host. The plan is made of measured kernels,
// the database keys them by the GPU, a second tune measures nothing, and the module built from
// the plan validates. On a GPU the same path runs the modules there (tools/cuda/device_run.sh);
// with TuneOptions::cuda_driver it runs them through runtime::CudaModule on a stand-in driver.
#include <gtest/gtest.h>

#include <string>

#include "../common/cuda_stand_in.h"
#include "../common/orch_cli.h"
#include "codegen/cuda/cuda_nvrtc.h"
#include "driver/optimize.h"
#include "driver/pipeline.h"
#include "driver/tune.h"
#include "fission/fission.h"
#include "ir/text_format.h"
#include "profile/tuning_db.h"

namespace orch::driver {
namespace {

const std::string kTinyMlp = std::string(ORCH_SOURCE_DIR) + "/examples/tiny_mlp.orch.txt";

class CudaMeasure : public cli_test::CliTest {
 protected:
  TuneOptions options() const {
    TuneOptions o;
    o.target = Target::cuda;
    o.cuda_measure_on_host = true;
    o.db_path = path("tuning.db");
    o.budget_ms = 1;
    // Every kernel measured, once: host times are noisy, and a lazy search stopped by its
    // budget would go on measuring in the second tune.
    o.exhaustive = true;
    o.recheck_rounds = 0;
    return o;
  }
};

TEST_F(CudaMeasure, TunesWithKernelsMeasuredAsModules) {
  std::string unavailable = codegen::nvrtc_unavailable();
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  Graph graph = primitive_graph(kTinyMlp, {});
  TunedModel first = tune_model(graph, options());
  EXPECT_EQ(check_plan(first.problem, first.plan), "");
  EXPECT_GT(first.stats.measured, 0);
  for (const PlanKernel& k : first.plan.kernels) {
    const codegen::KernelChoice& choice = first.choices[static_cast<size_t>(k.candidate)];
    EXPECT_EQ(choice.backend, "cuda");
    EXPECT_GT(choice.cost_us, 0);
    EXPECT_EQ(k.cost_us, choice.cost_us);
  }
  profile::TuningDb db(path("tuning.db"));
  EXPECT_EQ(db.stats().records, first.stats.measurements);
  for (const profile::TuningRecord& r : db.all()) {
    EXPECT_EQ(r.machine, "cuda H200-SXM sm_90; libraries: cublas cudnn; run on the host");
    EXPECT_EQ(r.backend, "cuda");
    EXPECT_TRUE(r.ok) << r.label << ": " << r.reason;
  }

  TunedModel second = tune_model(graph, options());
  EXPECT_EQ(second.stats.measured, 0);
  EXPECT_EQ(second.plan.objective_us, first.plan.objective_us);

  OptimizeOptions build;
  build.tune = options();
  stitch::StitchResult module =
      build_module(first.graph, first.problem, first.plan, first.choices, path("module"), build);
  EXPECT_EQ(module.kernels, static_cast<int>(first.plan.kernels.size()));
  EXPECT_GT(module.cublas_kernels, 0);  // the MLP's two MatMuls, measured as cuBLAS calls
}

// The path a GPU runs, on the stand-in driver (cuda_stand_in.h): each candidate's module loaded
// by runtime::CudaModule in a child process and timed with the driver's events, back to back. A
// launch that fails, as a kernel that faults, costs its candidate: its record says why, and the
// plan is made of the others.
TEST_F(CudaMeasure, TimesModulesWithTheDriversEventsAndSurvivesFaults) {
  std::string unavailable = codegen::nvrtc_unavailable();
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  TuneOptions o = options();
  o.cuda_measure_on_host = false;
  o.cuda_driver = &test::cuda_stand_in();
  o.cuda_libraries = {.cublas = false, .cudnn = false};  // the stand-in runs generated code only
  test::reset_stand_in();
  // The kernels writing %b (the functions named after it) fault; one writing %r covers it.
  test::stand_in_fail_launches("_b(");
  Graph graph = fission::fission(parse_graph(R"(graph g(%x: f32[4,8]) {
  const %w = f32[8,4]{1, -2, 3, -4, 5, -6, 7, -8, 1, 2, 3, 4, 5, 6, 7, 8, -1, 2, -3, 4, -5, 6, -7, 8, 0, 1, 0, 1, 1, 0, 1, 0}
  const %c = f32[4]{0.5, -0.5, 1, -1}
  %m: f32[4,4] = MatMul(%x, %w)
  %b: f32[4,4] = Add(%m, %c)
  %r: f32[4,4] = Relu(%b)
  return %r
})"));
  TunedModel tuned = tune_model(graph, o);
  test::reset_stand_in();
  EXPECT_EQ(check_plan(tuned.problem, tuned.plan), "");
  profile::TuningDb db(path("tuning.db"));
  int faulted = 0;
  for (const profile::TuningRecord& r : db.all()) {
    EXPECT_EQ(r.machine, "cuda H200-SXM sm_90; libraries:; a driver given by the caller");
    if (r.ok) {
      EXPECT_GT(r.median_us, 0) << r.label;
      continue;
    }
    ++faulted;
    EXPECT_NE(r.reason.find("CUDA error 719"), std::string::npos) << r.label << ": " << r.reason;
  }
  EXPECT_GT(faulted, 0);
  EXPECT_LT(faulted, db.stats().records);
  for (const PlanKernel& k : tuned.plan.kernels) {
    const codegen::KernelChoice& choice = tuned.choices[static_cast<size_t>(k.candidate)];
    EXPECT_EQ(choice.backend, "cuda");
    EXPECT_GT(choice.cost_us, 0);
  }
}

// An op the generator lacks (TopK) runs on the host: its kernel is estimated, never measured
// (no record in the database), and the module built from the plan runs it there.
TEST_F(CudaMeasure, HostKernelsAreEstimatedNotMeasured) {
  std::string unavailable = codegen::nvrtc_unavailable();
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  Graph graph = fission::fission(parse_graph(R"(graph g(%x: f32[3,8]) {
  const %k = i64[1]{3}
  %a: f32[3,8] = Relu(%x)
  %v: f32[3,3], %i: i64[3,3] = TopK(%a, %k) {axis = 1}
  %r: f32[3,3] = Sigmoid(%v)
  return %r, %i
})"));
  TunedModel tuned = tune_model(graph, options());
  int on_host = 0;
  for (const PlanKernel& k : tuned.plan.kernels) {
    const codegen::KernelChoice& choice = tuned.choices[static_cast<size_t>(k.candidate)];
    on_host += choice.backend == "reference";
    EXPECT_TRUE(choice.backend == "reference" || choice.backend == "cuda") << choice.backend;
    EXPECT_GT(choice.cost_us, 0);
  }
  EXPECT_EQ(on_host, 1);
  profile::TuningDb db(path("tuning.db"));
  EXPECT_GT(db.stats().records, 0);
  for (const profile::TuningRecord& r : db.all()) EXPECT_EQ(r.backend, "cuda") << r.label;

  OptimizeOptions build;
  build.tune = options();
  stitch::StitchResult module =
      build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, path("module"), build);
  EXPECT_EQ(module.reference_kernels, 1);
}

}  // namespace
}  // namespace orch::driver
