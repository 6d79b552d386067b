// Isolated measurement: a crashing, a hanging and a wrong kernel each cost one failed result, and
// the other kernels of the run are still measured. The misbehaving backends exist only here:
// children are forked from this test process, so they inherit them.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <map>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/reference_backend.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/text_format.h"
#include "profile/measure.h"
#include "profile/profiler.h"

namespace orch::profile {
namespace {

Graph add_graph(int n) {
  return parse_graph(fmt::format(R"(graph main(%a: f32[{0}], %b: f32[{0}]) {{
  %c: f32[{0}] = Add(%a, %b)
  return %c
}})",
                                 n));
}

// Picks its behaviour from the kernel's size, so one run mixes good and bad kernels.
class MisbehavingKernel final : public codegen::Kernel {
 public:
  explicit MisbehavingKernel(const Graph& g) : inner_(codegen::reference_backend().compile(g)) {}
  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    int64_t n = inputs[0].numel();
    if (n == 3) ::raise(SIGSEGV);
    if (n == 4)
      while (true) ::pause();
    inner_->run(inputs, outputs);
    if (n == 5) outputs[0].set(2, outputs[0].get(2) + 0.5);
    if (n == 7)
      while (true) asm volatile("");  // spins on the CPU (an empty loop could be removed)
  }

 private:
  std::unique_ptr<codegen::Kernel> inner_;
};

std::string accept(const Graph&) {
  return "";
}
std::unique_ptr<codegen::Kernel> compile_misbehaving(const Graph& g) {
  return std::make_unique<MisbehavingKernel>(g);
}
const codegen::Backend kMisbehaving{"misbehaving", accept, compile_misbehaving};

// How the crashing kernel's worker ends: AddressSanitizer's SEGV handler reports the crash and
// exits with status 1 instead of letting the signal kill the process (./run test --sanitize).
#if defined(__SANITIZE_ADDRESS__)
constexpr const char* kCrashReason = "worker exited with status 1";
#else
constexpr const char* kCrashReason = "crashed: SIGSEGV";
#endif

TEST(Profiler, CrashHangAndMismatchEachFailOneKernel) {
  std::vector<Graph> graphs;
  for (int n : {2, 3, 4, 5, 6}) graphs.push_back(add_graph(n));
  std::vector<const Graph*> kernels;
  for (const Graph& g : graphs) kernels.push_back(&g);
  ProfilerOptions options{.jobs = 2, .timeout_s = 5, .wall_timeout_s = 1.5};
  options.measure.budget_ms = 2;
  options.backends = {.backends = {&kMisbehaving}};
  std::map<size_t, std::vector<Measurement>> results;
  profile_kernels(kernels, options, [&](size_t i, std::vector<Measurement> m) {
    EXPECT_FALSE(results.count(i));
    results[i] = std::move(m);
  });
  ASSERT_EQ(results.size(), 5u);
  for (auto& [i, m] : results) {
    ASSERT_EQ(m.size(), 1u) << i;
    EXPECT_EQ(m[0].backend, "misbehaving");
  }
  EXPECT_TRUE(results[0][0].ok) << results[0][0].reason;
  EXPECT_GE(results[0][0].runs, 3);
  EXPECT_GT(results[0][0].median_us, 0);
  EXPECT_EQ(results[1][0].reason, kCrashReason);
  EXPECT_EQ(results[2][0].reason, "timeout after 1.5 s");
  EXPECT_EQ(results[3][0].reason.rfind(
                "mismatch with the interpreter: output 0 'c': max error 0.5 at element 2 (got ", 0),
            0u)
      << results[3][0].reason;
  EXPECT_TRUE(results[4][0].ok) << results[4][0].reason;
}

// The check before timing: equal infinities (a max-pool's -inf padding) and NaN against NaN
// match; an infinity against a finite value, or of the other sign, does not.
TEST(Profiler, CompareOutputsTreatsEqualInfinitiesAsEqual) {
  Graph g = add_graph(4);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto tensor = [](std::vector<double> v) {
    Tensor t(DType::f32, Shape{4});
    for (int64_t i = 0; i < 4; ++i) t.set(i, v[i]);
    return t;
  };
  std::vector<Tensor> want{tensor({-inf, inf, nan, 1})};
  std::vector<Tensor> same{tensor({-inf, inf, nan, 1})};
  EXPECT_EQ(compare_outputs(g, same, want, 1e-3, 1e-7), "");
  std::vector<Tensor> finite{tensor({-1e30, inf, nan, 1})};
  EXPECT_NE(compare_outputs(g, finite, want, 1e-3, 1e-7).find("at element 0"), std::string::npos);
  std::vector<Tensor> flipped{tensor({-inf, -inf, nan, 1})};
  EXPECT_NE(compare_outputs(g, flipped, want, 1e-3, 1e-7).find("at element 1"), std::string::npos);
  std::vector<Tensor> not_nan{tensor({-inf, inf, 0, 1})};
  EXPECT_NE(compare_outputs(g, not_nan, want, 1e-3, 1e-7).find("at element 2"), std::string::npos);
}

TEST(Profiler, SpinningKernelHitsTheCpuLimit) {
  Graph g = add_graph(7);
  std::vector<const Graph*> kernels{&g};
  ProfilerOptions options{.jobs = 1, .timeout_s = 0.5, .wall_timeout_s = 60};
  options.backends = {.backends = {&kMisbehaving}};
  std::vector<Measurement> result;
  profile_kernels(kernels, options, [&](size_t, std::vector<Measurement> m) { result = m; });
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].reason, "timeout after 0.5 s of CPU time");
}

// The reference interpreter that checks a kernel is not what the timeouts are for: a MatMul
// that the interpreter takes longer than the CPU timeout to compute (on large tensors it is
// orders of magnitude slower than a backend) is still measured with oneDNN.
TEST(Profiler, TheReferenceInterpreterIsNotCountedAgainstTheTimeout) {
  Graph g = parse_graph(R"(graph main(%a: f32[2048,2048], %b: f32[2048,2048]) {
  %m: f32[2048,2048] = prim.MatMul(%a, %b)
  return %m
})");
  ProfilerOptions options{.jobs = 1, .timeout_s = 1.5, .wall_timeout_s = 60};
  options.measure.budget_ms = 1;
  options.measure.min_runs = 1;
  options.measure.threads = 1;  // CPU time = wall time: oneDNN's check and run take ~0.5 s
  options.backends = {.backends = {&codegen::dnnl_backend()}};
  std::clock_t start = std::clock();
  interp::interpret(g, interp::random_inputs(g, options.measure.seed));
  double interpreter_s = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  ASSERT_GT(interpreter_s, 1.5 * options.timeout_s) << "the premise: the interpreter outlasts it";
  std::vector<const Graph*> kernels{&g};
  std::vector<Measurement> result;
  profile_kernels(kernels, options, [&](size_t, std::vector<Measurement> m) { result = m; });
  ASSERT_FALSE(result.empty());
  for (const Measurement& m : result) {  // one per configuration
    EXPECT_TRUE(m.ok) << m.config << ": " << m.reason;
    EXPECT_EQ(m.backend, "dnnl");
  }
}

// Two backends whose compiles each spend 0.6 s of CPU time: under a 1 s timeout both are
// measured, since the timeout counts each configuration's compile apart (together they would
// have outlasted it).
std::unique_ptr<codegen::Kernel> compile_slowly(const Graph& g) {
  std::clock_t start = std::clock();
  while (static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC < 0.6) {
  }
  return codegen::reference_backend().compile(g);
}
TEST(Profiler, TheCpuTimeoutCountsEachConfigurationApart) {
  const codegen::Backend first{"first", accept, compile_slowly};
  const codegen::Backend second{"second", accept, compile_slowly};
  Graph g = add_graph(16);
  std::vector<const Graph*> kernels{&g};
  ProfilerOptions options{.jobs = 1, .timeout_s = 1, .wall_timeout_s = 60};
  options.measure.budget_ms = 1;
  options.backends = {.backends = {&first, &second}};
  std::vector<Measurement> result;
  profile_kernels(kernels, options, [&](size_t, std::vector<Measurement> m) { result = m; });
  ASSERT_EQ(result.size(), 2u);
  for (const Measurement& m : result) EXPECT_TRUE(m.ok) << m.backend << ": " << m.reason;
}

// One configuration that hangs or crashes costs itself alone: the kernel's child is killed in
// it, and a new child measures the configurations left (here the second backend), and the
// fallback when none measured ok.
std::unique_ptr<codegen::Kernel> compile_forever(const Graph&) {
  while (true) asm volatile("");
}
std::unique_ptr<codegen::Kernel> compile_crashing(const Graph&) {
  ::raise(SIGSEGV);
  return nullptr;
}
TEST(Profiler, AKilledConfigurationLeavesTheOthersMeasured) {
  const codegen::Backend hanging{"hanging", accept, compile_forever};
  const codegen::Backend crashing{"crashing", accept, compile_crashing};
  const codegen::Backend fine{
      "fine", accept, [](const Graph& g) { return codegen::reference_backend().compile(g); }};
  Graph g = add_graph(16);
  std::vector<const Graph*> kernels{&g, &g};
  ProfilerOptions options{.jobs = 1, .timeout_s = 0.5, .wall_timeout_s = 60};
  options.measure.budget_ms = 1;
  options.backends = {.backends = {&hanging, &crashing, &fine}};
  std::map<size_t, std::vector<Measurement>> results;
  profile_kernels(std::span(kernels).first(1), options,
                  [&](size_t i, std::vector<Measurement> m) { results[i] = std::move(m); });
  ASSERT_EQ(results.size(), 1u);
  std::map<std::string, Measurement> by_backend;
  for (const Measurement& m : results[0]) by_backend[m.backend] = m;
  ASSERT_EQ(by_backend.size(), 3u);
  EXPECT_EQ(by_backend["hanging"].reason, "timeout after 0.5 s of CPU time");
  EXPECT_EQ(by_backend["crashing"].reason, kCrashReason);
  EXPECT_TRUE(by_backend["fine"].ok) << by_backend["fine"].reason;
  // Tuning measures such configurations again on a later run (unmeasured_choices).
  EXPECT_TRUE(child_died(by_backend["hanging"].reason));
  EXPECT_TRUE(child_died(by_backend["crashing"].reason));
  EXPECT_FALSE(child_died("mismatch: max abs error 1 at element 0"));

  options.backends = {.backends = {&crashing, &hanging}, .fallback = &codegen::reference_backend()};
  results.clear();
  profile_kernels(kernels, options,
                  [&](size_t i, std::vector<Measurement> m) { results[i] = std::move(m); });
  ASSERT_EQ(results.size(), 2u);
  for (auto& [i, measured] : results) {
    ASSERT_EQ(measured.size(), 3u) << i;
    EXPECT_EQ(measured[2].backend, "reference");
    EXPECT_TRUE(measured[2].ok) << measured[2].reason;
  }
}

// A caller's budget: a kernel started before start_by finishes and is reported (the hanging
// one, killed at its timeout after the deadline), and no kernel starts after it.
TEST(Profiler, NoKernelStartsAfterTheDeadline) {
  std::vector<Graph> graphs;
  for (int n : {4, 2, 6}) graphs.push_back(add_graph(n));
  std::vector<const Graph*> kernels;
  for (const Graph& g : graphs) kernels.push_back(&g);
  ProfilerOptions options{.jobs = 1, .timeout_s = 5, .wall_timeout_s = 1.5};
  options.backends = {.backends = {&kMisbehaving}};
  options.start_by = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  std::map<size_t, std::vector<Measurement>> results;
  profile_kernels(kernels, options,
                  [&](size_t i, std::vector<Measurement> m) { results[i] = std::move(m); });
  ASSERT_EQ(results.size(), 1u);
  ASSERT_TRUE(results.count(0));
  EXPECT_EQ(results[0][0].reason, "timeout after 1.5 s");
}

TEST(Profiler, FallbackWhenNoBackendAccepts) {
  Graph g = add_graph(8);
  auto reject_all = [](const Graph&) { return std::string("no"); };
  const codegen::Backend picky{"picky", reject_all, compile_misbehaving};
  BackendSet set{.backends = {&picky}, .fallback = &codegen::reference_backend()};
  std::vector<const codegen::Backend*> chosen = accepting_backends(set, g);
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0]->name, "reference");
}

TEST(Profiler, MeasureInProcess) {
  Graph g = add_graph(64);
  Measurement m = measure(g, codegen::reference_backend(), "", {.budget_ms = 1});
  EXPECT_TRUE(m.ok) << m.reason;
  EXPECT_LE(m.min_us, m.median_us);
  EXPECT_LE(m.median_us, m.max_us);
  Measurement bad = measure(g, codegen::reference_backend(), "tiles=4", {.budget_ms = 1});
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.reason, "compile: backend reference has no configuration 'tiles=4'");
}

TEST(Profiler, OneDnnAloneDecidesALoneMatMul) {
  Graph matmul = parse_graph(R"(graph main(%a: f32[8, 16], %b: f32[16, 4]) {
  %c: f32[8, 4] = prim.MatMul(%a, %b)
  return %c
})");
  BackendSet set = default_backends();
  std::vector<const codegen::Backend*> chosen = accepting_backends(set, matmul);
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0]->name, "dnnl");
  set.library_decides = nullptr;  // --every-backend
  EXPECT_EQ(accepting_backends(set, matmul).size(), 2u);
}

// Cache flushes between runs stay outside the timing and the budget: a 64 MiB flush per run
// with a 1 ms budget still gives the minimum number of runs, each timing only the kernel.
TEST(Profiler, FlushedRunsAndPinnedThreads) {
  Graph g = add_graph(64);
  MeasureOptions options{.budget_ms = 1, .min_runs = 5, .threads = 1, .flush_bytes = 64 << 20};
  Measurement m = measure(g, codegen::reference_backend(), "", options);
  EXPECT_TRUE(m.ok) << m.reason;
  EXPECT_GE(m.runs, 5);
  ASSERT_NE(std::getenv("HL_NUM_THREADS"), nullptr);
  EXPECT_STREQ(std::getenv("HL_NUM_THREADS"), "1");
}

// A kernel on a device times itself (CUDA events): its times replace the wall clock's, and the
// budget sets how many runs it is asked for (1 ms at 4 us a run: 250, capped by max_runs).
class SelfTimedKernel final : public codegen::Kernel {
 public:
  explicit SelfTimedKernel(const Graph& g) : inner_(codegen::reference_backend().compile(g)) {}
  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    inner_->run(inputs, outputs);
  }
  std::vector<double> device_times_us(int runs) override {
    std::vector<double> us;
    for (int i = 0; i < runs; ++i) us.push_back(4.0 + (i % 3));  // 4, 5, 6, 4, ...
    return us;
  }

 private:
  std::unique_ptr<codegen::Kernel> inner_;
};

std::unique_ptr<codegen::Kernel> compile_self_timed(const Graph& g) {
  return std::make_unique<SelfTimedKernel>(g);
}

TEST(Profiler, DeviceTimesReplaceTheWallClock) {
  const codegen::Backend self_timed{"self-timed", accept, compile_self_timed};
  Measurement m = measure(add_graph(64), self_timed, "", {.budget_ms = 1, .max_runs = 150});
  ASSERT_TRUE(m.ok) << m.reason;
  EXPECT_EQ(m.runs, 150);
  EXPECT_EQ(m.median_us, 5.0);
  EXPECT_EQ(m.min_us, 4.0);
  EXPECT_EQ(m.max_us, 6.0);
}

}  // namespace
}  // namespace orch::profile
