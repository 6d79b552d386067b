// Corpus: a fixed-seed sample of the candidate kernels the enumerator keeps for small zoo
// models, each lowered, compiled and run against the interpreter, under the default schedule and
// under the tile search's top configurations. A candidate halide_reject accepts must compile and
// match: a failure there fails the test (the enumerator trusts halide_reject). Results are
// compared at rtol 1e-3 and an atol that grows with the square root of the kernel's longest
// reduction (f32 sums against the interpreter's double sums; see reduction_atol).
//
// Wider runs: ORCH_HALIDE_CORPUS_SAMPLE=500 (default 50) and ORCH_HALIDE_CORPUS_CONFIG_SAMPLE
// (default 8 candidates, top 2 configs each).
#include <gtest/gtest.h>

#include <map>

#include "corpus_util.h"
#include "halide_util.h"
#include "ir/error.h"
#include "schedule/search.h"

namespace orch::codegen {
namespace {

// "median 0.071 s, p95 0.120 s".
std::string quantiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return fmt::format("median {:.3f} s, p95 {:.3f} s", v[v.size() / 2],
                     v[std::min(v.size() - 1, v.size() * 95 / 100)]);
}

struct Tally {
  std::map<std::string, int> rejected;
  std::vector<double> seconds, cpu_seconds;
  int matched = 0, failed = 0, bad_inputs = 0, runs = 0;

  std::string summary(size_t sampled) const {
    std::string s = fmt::format(
        "{} sampled, {} compiled runs: {} matched, {} failed, {} with unusable random inputs",
        sampled, runs, matched, failed, bad_inputs);
    if (!seconds.empty())
      s += fmt::format("; JIT compile {} (wall), {} (CPU)", quantiles(seconds),
                       quantiles(cpu_seconds));
    for (const auto& [reason, n] : rejected) s += fmt::format("\n  rejected {}x: {}", n, reason);
    return s;
  }
};

// Compiles `k` under `schedule` (default when null) and compares with the interpreter.
void check_candidate(const Sampled& c, size_t i, const HalideSchedule* schedule, Tally& t) {
  std::vector<Tensor> inputs = interp::random_inputs(c.kernel, i);
  std::vector<Tensor> want;
  try {
    want = interp::interpret(c.kernel, inputs);
  } catch (const Error&) {
    ++t.bad_inputs;  // random data indices out of range: nothing to compare
    return;
  }
  ++t.runs;
  std::string where = fmt::format("{} candidate {}{}", c.model, i,
                                  schedule ? " with " + halide_schedule_to_text(*schedule) : "");
  try {
    HalideKernel hk = halide_jit(c.kernel, schedule);
    t.seconds.push_back(hk.compile_seconds);
    t.cpu_seconds.push_back(hk.compile_cpu_seconds);
    std::vector<Tensor> got;
    for (ValueId v : c.kernel.outputs())
      got.emplace_back(c.kernel.value(v).type.dtype, c.kernel.value(v).type.shape);
    hk.kernel->run(inputs, got);
    for (size_t o = 0; o < want.size(); ++o) {
      std::string diff = compare(want[o], got[o], reduction_atol(c.kernel));
      if (!diff.empty()) {
        ADD_FAILURE() << where << " output " << o << ": " << diff;
        ++t.failed;
        return;
      }
    }
    ++t.matched;
  } catch (const Error& e) {
    ADD_FAILURE() << where << ": " << e.what();
    ++t.failed;
  }
}

// The reason without the node ("prim.Conv 'c': ..." -> "...").
std::string reason_kind(const std::string& reason) {
  size_t colon = reason.find(": ");
  return colon == std::string::npos ? reason : reason.substr(colon + 2);
}

TEST(HalideCorpus, SampledCandidatesMatchTheInterpreter) {
  std::vector<Sampled> all =
      sampled_candidates(sample_size("ORCH_HALIDE_CORPUS_SAMPLE", 50), 20261129);
  // ORCH_HALIDE_CORPUS_ONLY=i reruns sample i alone (to look at one failure).
  size_t only = sample_size("ORCH_HALIDE_CORPUS_ONLY", all.size());
  Tally t;
  for (size_t i = 0; i < all.size(); ++i) {
    if (only < all.size() && i != only) continue;
    std::string reason = halide_reject(all[i].kernel);
    if (!reason.empty()) {
      t.rejected[reason_kind(reason)]++;
      continue;
    }
    check_candidate(all[i], i, nullptr, t);
  }
  std::string summary = t.summary(all.size());
  std::cout << summary << "\n";
  EXPECT_EQ(t.failed, 0) << summary;
  // Most sampled candidates are memory-bound fused kernels Halide must generate.
  if (only >= all.size()) {
    EXPECT_GE(t.matched * 2, static_cast<int>(all.size())) << summary;
  }
}

TEST(HalideCorpus, TileSearchConfigsMatchTheInterpreter) {
  std::vector<Sampled> all =
      sampled_candidates(sample_size("ORCH_HALIDE_CORPUS_CONFIG_SAMPLE", 8), 7);
  schedule::Machine machine = test_machine();
  Tally t;
  int configs = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    std::string reason = halide_reject(all[i].kernel);
    if (!reason.empty()) {
      t.rejected[reason_kind(reason)]++;
      continue;
    }
    schedule::SearchResult r =
        schedule::search_tiles(schedule::make_tile_graph(all[i].kernel), machine, {.top_k = 2});
    for (const schedule::ScoredConfig& sc : r.configs) {
      HalideSchedule s = halide_schedule_from_tile_config(all[i].kernel, sc.config);
      EXPECT_EQ(halide_schedule_from_text(halide_schedule_to_text(s)), s);
      check_candidate(all[i], i, &s, t);
      ++configs;
    }
  }
  std::string summary = t.summary(all.size());
  std::cout << configs << " tile configs: " << summary << "\n";
  EXPECT_EQ(t.failed, 0) << summary;
  EXPECT_GE(configs, 4) << summary;
}

}  // namespace
}  // namespace orch::codegen
