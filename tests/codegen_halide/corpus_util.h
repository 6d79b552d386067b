// Shared by the Halide corpus tests: a fixed-seed sample of the candidate kernels the enumerator
// keeps for small zoo models.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "candidates/candidates.h"
#include "codegen/kernel.h"
#include "fission/fission.h"
#include "partition/dag.h"
#include "zoo/zoo.h"

namespace orch::codegen {

struct Sampled {
  std::string model;
  Graph kernel;
};

/// Every kept candidate of `model` as a kernel graph.
inline std::vector<Sampled> candidates_of(const std::string& model, int64_t size) {
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

/// `env` as a count when set (the 500-sample run sets ORCH_HALIDE_CORPUS_SAMPLE), else `fallback`.
inline size_t sample_size(const char* env, size_t fallback) {
  const char* value = std::getenv(env);
  return value != nullptr ? static_cast<size_t>(std::atoll(value)) : fallback;
}

/// The candidates of bert, segformer and vit (small sizes), shuffled with `seed`, first `n`.
inline std::vector<Sampled> sampled_candidates(size_t n, uint64_t seed) {
  // Enumerated once per test binary: several tests sample the same corpus.
  static const std::vector<Sampled> corpus = [] {
    std::vector<Sampled> all;
    for (auto [model, size] : std::vector<std::pair<std::string, int64_t>>{
             {"bert-base-layer", 16}, {"segformer-b0", 64}, {"vit-b16-layer", 17}}) {
      std::vector<Sampled> c = candidates_of(model, size);
      std::move(c.begin(), c.end(), std::back_inserter(all));
    }
    return all;
  }();
  std::vector<Sampled> all = corpus;
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(std::min(all.size(), n));
  return all;
}

}  // namespace orch::codegen
