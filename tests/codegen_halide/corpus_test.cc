// Corpus: a fixed-seed sample of the candidate kernels the enumerator keeps for small zoo
// models, each lowered, compiled and run against the interpreter (or rejected with a reason).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>

#include "candidates/candidates.h"
#include "fission/fission.h"
#include "halide_util.h"
#include "ir/error.h"
#include "partition/dag.h"
#include "zoo/zoo.h"

namespace orch::codegen {
namespace {

struct Sampled {
  std::string model;
  Graph kernel;
};

// Every kept candidate of `model` as a kernel graph.
std::vector<Sampled> candidates_of(const std::string& model, int64_t size) {
  Graph g = fission::fission(zoo::build_model(model, {.size = size}));
  KernelIdentification ids =
      identify_kernels(dag_of(g), {.enumeration = {.feasible = feasibility_of({})}});
  std::vector<Sampled> out;
  for (const SubgraphCandidates& sub : ids.candidates) {
    for (const KernelCandidate& c : sub.kept) {
      std::vector<NodeId> members;
      c.members.for_each([&](int v) { members.push_back(sub.begin + v); });
      std::vector<ValueId> outputs;
      c.outputs.for_each([&](int v) {
        for (ValueId o : g.node(sub.begin + v).outputs) outputs.push_back(o);
      });
      out.push_back({model, extract_kernel(g, members, outputs)});
    }
  }
  return out;
}

size_t sample_size() {
  const char* env = std::getenv("ORCH_HALIDE_CORPUS_SAMPLE");
  return env != nullptr ? static_cast<size_t>(std::atoll(env)) : 50;
}

// "median 0.071 s, p95 0.120 s".
std::string quantiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return fmt::format("median {:.3f} s, p95 {:.3f} s", v[v.size() / 2],
                     v[std::min(v.size() - 1, v.size() * 95 / 100)]);
}

TEST(HalideCorpus, SampledCandidatesMatchTheInterpreter) {
  std::vector<Sampled> all;
  for (auto [model, size] : std::vector<std::pair<std::string, int64_t>>{
           {"bert-base-layer", 16}, {"segformer-b0", 64}, {"vit-b16-layer", 17}}) {
    std::vector<Sampled> c = candidates_of(model, size);
    std::move(c.begin(), c.end(), std::back_inserter(all));
  }
  ASSERT_GT(all.size(), 100u);
  std::mt19937_64 rng(20261129);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(std::min(all.size(), sample_size()));

  std::map<std::string, int> rejected;
  std::vector<double> seconds, cpu_seconds;
  int matched = 0, bad_inputs = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const Graph& k = all[i].kernel;
    std::string reason = halide_reject(k);
    if (!reason.empty()) {
      // The reason names the node ("Conv #2: ..."); count by what follows.
      rejected[reason.substr(reason.find(": ") + 2)]++;
      continue;
    }
    std::vector<Tensor> inputs = interp::random_inputs(k, i);
    std::vector<Tensor> want;
    try {
      want = interp::interpret(k, inputs);
    } catch (const Error&) {
      ++bad_inputs;  // random data indices out of range: nothing to compare
      continue;
    }
    HalideKernel hk = halide_jit(k);
    seconds.push_back(hk.compile_seconds);
    cpu_seconds.push_back(hk.compile_cpu_seconds);
    std::vector<Tensor> got;
    for (ValueId v : k.outputs()) got.emplace_back(k.value(v).type.dtype, k.value(v).type.shape);
    hk.kernel->run(inputs, got);
    bool ok = true;
    for (size_t o = 0; o < want.size(); ++o) {
      std::string diff = compare(want[o], got[o]);
      EXPECT_EQ(diff, "") << all[i].model << " candidate " << i << " output " << o;
      ok = ok && diff.empty();
    }
    matched += ok;
  }
  ASSERT_FALSE(seconds.empty());
  std::string summary = fmt::format(
      "{} sampled: {} matched, {} with unusable random inputs; JIT compile {} (wall), {} (CPU)",
      all.size(), matched, bad_inputs, quantiles(seconds), quantiles(cpu_seconds));
  for (const auto& [reason, n] : rejected)
    summary += fmt::format("\n  rejected {}x: {}", n, reason);
  std::cout << summary << "\n";
  // Most sampled candidates are memory-bound fused kernels Halide must generate.
  EXPECT_GE(matched * 2, static_cast<int>(all.size())) << summary;
}

}  // namespace
}  // namespace orch::codegen
