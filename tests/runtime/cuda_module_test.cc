// runtime::CudaModule without a GPU: the stand-in CudaDriver over host memory (cuda_stand_in.h)
// checks the runtime's own logic (device buffers, each launch's arguments, host kernels between
// copies, the CUDA graph it captures and replays) against the interpreter. What only a GPU shows
// (timing, the cubin, cuBLAS and cuDNN) is not checked here: the modules call no library.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>

#include "../common/cuda_stand_in.h"
#include "codegen/cuda/cuda_nvrtc.h"
#include "driver/optimize.h"
#include "driver/pipeline.h"
#include "driver/tune.h"
#include "fission/fission.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/close.h"
#include "ir/text_format.h"
#include "runtime/cuda_module.h"

namespace orch::runtime {
namespace {

namespace fs = std::filesystem;

// `model` (operators) compiled for CUDA with generated code only, validated on the host; the
// primitive graph it was compiled from.
Graph compile(const Graph& model, const fs::path& dir) {
  driver::TuneOptions tune;
  tune.analytic = true;
  tune.target = driver::Target::cuda;
  tune.cuda_libraries = {.cublas = false, .cudnn = false};
  driver::TunedModel tuned = driver::tune_model(fission::fission(model), tune);
  driver::OptimizeOptions build;
  build.tune = tune;
  driver::build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, dir.string(), build);
  return tuned.graph;
}

void expect_close(const std::vector<Tensor>& want, const std::vector<Tensor>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(want[o].shape(), got[o].shape()) << o;
    for (int64_t i = 0; i < want[o].numel(); ++i)
      EXPECT_TRUE(close_enough(got[o].get(i), want[o].get(i), 1e-4, 1e-5))
          << "output " << o << " element " << i << ": " << got[o].get(i) << " vs "
          << want[o].get(i);
  }
}

class CudaModuleStandIn : public testing::Test {
 protected:
  void SetUp() override {
    std::string unavailable = codegen::nvrtc_unavailable();
    if (!unavailable.empty()) GTEST_SKIP() << unavailable;
    dir_ = fs::temp_directory_path() / fmt::format("orch_cuda_stand_in_{}", ::getpid());
    fs::remove_all(dir_);
    test::reset_stand_in();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Compiles `text`, loads the module through the stand-in, and checks a plain run, a run kernel
  // by kernel against the interpreter, and a run of its CUDA graph.
  void check_module(std::string_view text) {
    Graph primitives = compile(parse_graph(text), dir_);
    CudaModule module = CudaModule::load(dir_.string(), test::cuda_stand_in());
    std::vector<Tensor> inputs = interp::random_inputs(primitives, 3);
    std::vector<Tensor> want = interp::interpret(primitives, inputs);
    expect_close(want, module.run(inputs));
    driver::check_module_run(dir_.string(), primitives, inputs, module.kernels(), module.outputs(),
                             [&](const KernelHook& hook) { return module.run(inputs, hook); });
    module.set_graph(true);
    expect_close(want, module.run(inputs));
    expect_close(want, module.run(inputs));
    EXPECT_GE(module.median_ms(2, true), 0.0);
    // What `orch run --profile` and measuring time: events around kernels and around runs.
    std::vector<std::vector<double>> per_kernel = module.kernel_ms(2);
    ASSERT_EQ(per_kernel.size(), 2u);
    EXPECT_EQ(per_kernel[0].size(), module.kernels().size());
    EXPECT_EQ(module.back_to_back_ms(2).size(), 2u);
    expect_close(want, module.run(inputs));
    has_host_kernels_ = module.has_host_kernels();
    EXPECT_EQ(test::stand_in_counts().failed_launches, 0) << test::stand_in_counts().last_error;
  }

  fs::path dir_;
  bool has_host_kernels_ = false;
};

// Generated kernels only: the graph is captured once and replayed at every run after.
TEST_F(CudaModuleStandIn, RunsLaunchesAndReplaysTheirGraph) {
  check_module(R"(graph g(%x: f32[4,16], %w: f32[16,8]) {
  %m: f32[4,8] = MatMul(%x, %w)
  %r: f32[4,8] = Relu(%m)
  %s: f32[4,8] = Softmax(%r) {axis = 1}
  return %s
})");
  EXPECT_FALSE(has_host_kernels_);
  // Two runs, median_ms's warm-up and two runs, and the last run.
  EXPECT_EQ(test::stand_in_counts().graph_launches, 2 + 3 + 1);
  EXPECT_EQ(test::stand_in_counts().copies_in_capture, 0);
}

// A host kernel (TopK) between generated ones: its inputs copied from the device and its
// results back; with set_graph the plan still runs launch by launch, since no capture could
// hold those copies.
TEST_F(CudaModuleStandIn, RunsHostKernelsBetweenCopiesAndCapturesNothing) {
  check_module(R"(graph g(%x: f32[3,8]) {
  const %k = i64[1]{3}
  %a: f32[3,8] = Relu(%x)
  %v: f32[3,3], %i: i64[3,3] = TopK(%a, %k) {axis = 1}
  %r: f32[3,3] = Sigmoid(%v)
  return %r, %i
})");
  EXPECT_TRUE(has_host_kernels_);
  EXPECT_EQ(test::stand_in_counts().graph_launches, 0);
  EXPECT_EQ(test::stand_in_counts().copies_in_capture, 0);
}

}  // namespace
}  // namespace orch::runtime
