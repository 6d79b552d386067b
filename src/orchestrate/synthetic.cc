// Synthetic problems. The latency model (modeled_costs) is a rough memory-bound GPU kernel:
// launch + compute + 10 us per unit of tensor read or written, a linear primitive per kernel
// at most (others unmeasured), a penalty for several reductions in one kernel, and ±10% noise.
// It makes fusion and recomputation of cheap primitives pay, as in Korch's measurements.
#include "orchestrate/synthetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_set>
#include <vector>

#include "ir/error.h"

namespace orch {
namespace {

enum class Kind { Elementwise, Layout, Reduce, Linear };

struct Primitive {
  Kind kind = Kind::Elementwise;
  double size = 1;  // units of memory its value occupies
  int layer = 0;
};

std::vector<int> members(uint64_t mask) {
  std::vector<int> ids;
  for (; mask; mask &= mask - 1) ids.push_back(std::countr_zero(mask));
  return ids;
}

double compute_us(const Primitive& p) {
  switch (p.kind) {
    case Kind::Linear:
      return 40 * p.size;
    case Kind::Reduce:
      return 3 * p.size;
    case Kind::Layout:
      return 2 * p.size;
    case Kind::Elementwise:
      return 1 * p.size;
  }
  return 0;
}

double modeled_cost(uint64_t kernel, uint64_t outputs, const std::vector<Primitive>& prims,
                    const std::vector<uint64_t>& inputs, std::mt19937_64& rng) {
  int linear = 0, reduce = 0;
  uint64_t external = 0;
  double us = 4;  // launch
  for (int p : members(kernel)) {
    linear += prims[p].kind == Kind::Linear;
    reduce += prims[p].kind == Kind::Reduce;
    us += compute_us(prims[p]);
    if (prims[p].layer == 0) us += 10 * prims[p].size;  // reads a graph input of its size
    external |= inputs[p] & ~kernel;
  }
  if (linear > 1) return std::numeric_limits<double>::infinity();
  for (int j : members(external)) us += 10 * prims[j].size;
  for (int o : members(outputs)) us += 10 * prims[o].size;
  if (reduce > 1) us *= 1 + 0.25 * (reduce - 1);
  return us * std::uniform_real_distribution<double>(0.9, 1.1)(rng);
}

// All execution states (predecessor-closed sets), breadth first.
std::vector<uint64_t> execution_states(const std::vector<uint64_t>& inputs, int limit) {
  std::vector<uint64_t> states{0};
  std::unordered_set<uint64_t> seen{0};
  for (size_t i = 0; i < states.size(); ++i) {
    for (int p = 0; p < static_cast<int>(inputs.size()); ++p) {
      uint64_t bit = uint64_t{1} << p;
      if ((states[i] & bit) || (inputs[p] & ~states[i])) continue;
      if (seen.insert(states[i] | bit).second) states.push_back(states[i] | bit);
    }
    check(static_cast<int>(states.size()) <= limit,
          "synthetic_problem: more than {} execution states; use a narrower graph", limit);
  }
  return states;
}

}  // namespace

SyntheticProblem synthetic_problem(const SyntheticSpec& spec, uint64_t seed) {
  check(spec.layers >= 1 && spec.min_width >= 1 && spec.max_width >= spec.min_width &&
            spec.layers * spec.max_width <= 64,
        "synthetic_problem: need 1 <= min_width <= max_width and layers * max_width <= 64");
  std::mt19937_64 rng(seed);
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };

  std::vector<std::vector<int>> layer_members(spec.layers);
  std::vector<Primitive> prims;
  std::vector<uint64_t> inputs;
  for (int layer = 0; layer < spec.layers; ++layer) {
    int width = pick(spec.min_width, spec.max_width);
    for (int w = 0; w < width; ++w) {
      int id = static_cast<int>(prims.size());
      uint64_t in = 0;
      if (layer > 0) {
        const std::vector<int>& previous = layer_members[layer - 1];
        for (int q : previous) {
          if (chance(spec.edge_probability)) in |= uint64_t{1} << q;
        }
        if (!in) in |= uint64_t{1} << previous[pick(0, static_cast<int>(previous.size()) - 1)];
      }
      if (layer > 1) {
        for (int q : layer_members[layer - 2]) {
          if (chance(spec.skip_probability)) in |= uint64_t{1} << q;
        }
      }
      Kind kind = chance(0.15)  ? Kind::Linear
                  : chance(0.2) ? Kind::Reduce
                  : chance(0.3) ? Kind::Layout
                                : Kind::Elementwise;
      prims.push_back({kind, static_cast<double>(1 << pick(0, 3)), layer});
      inputs.push_back(in);
      layer_members[layer].push_back(id);
    }
  }
  const int n = static_cast<int>(prims.size());
  std::vector<uint64_t> consumers(n, 0);
  for (int p = 0; p < n; ++p) {
    for (int q : members(inputs[p])) consumers[q] |= uint64_t{1} << p;
  }
  uint64_t graph_outputs = 0;
  for (int p = 0; p < n; ++p) {
    if (!consumers[p]) graph_outputs |= uint64_t{1} << p;
  }

  SyntheticProblem result;
  std::vector<uint64_t> states = execution_states(inputs, spec.max_states);
  result.states = static_cast<int>(states.size());
  std::unordered_set<uint64_t> subgraphs;
  for (uint64_t big : states) {
    for (uint64_t small : states) {
      uint64_t diff = big & ~small;
      if ((small & ~big) || !diff || std::popcount(diff) > spec.max_kernel_size) continue;
      subgraphs.insert(diff);
    }
  }
  std::vector<uint64_t> kernels(subgraphs.begin(), subgraphs.end());
  std::sort(kernels.begin(), kernels.end(), [](uint64_t a, uint64_t b) {
    return std::popcount(a) != std::popcount(b) ? std::popcount(a) < std::popcount(b) : a < b;
  });
  result.convex_subgraphs = static_cast<int>(kernels.size());
  if (spec.max_candidates > 0 && static_cast<int>(kernels.size()) > spec.max_candidates) {
    std::vector<uint64_t> kept, rest;
    for (uint64_t k : kernels) {
      (spec.keep_singletons && std::popcount(k) == 1 ? kept : rest).push_back(k);
    }
    std::shuffle(rest.begin(), rest.end(), rng);
    int room = std::max(0, spec.max_candidates - static_cast<int>(kept.size()));
    rest.resize(std::min<size_t>(rest.size(), room));
    kept.insert(kept.end(), rest.begin(), rest.end());
    std::sort(kept.begin(), kept.end(), [](uint64_t a, uint64_t b) {
      return std::popcount(a) != std::popcount(b) ? std::popcount(a) < std::popcount(b) : a < b;
    });
    kernels = std::move(kept);
  }

  OrchestrationProblem& problem = result.problem;
  problem.num_primitives = n;
  for (int p = 0; p < n; ++p) problem.primitive_inputs.push_back(members(inputs[p]));
  problem.graph_outputs = members(graph_outputs);
  auto add = [&](uint64_t kernel, uint64_t outputs, bool variant) {
    Candidate c;
    c.primitives = members(kernel);
    c.outputs = members(outputs);
    c.cost_us = spec.modeled_costs
                    ? modeled_cost(kernel, outputs, prims, inputs, rng)
                    : std::round(std::uniform_real_distribution<double>(100, 2000)(rng)) / 100;
    c.label = fmt::format("{}", fmt::join(c.primitives, "+"));
    if (variant) c.label += fmt::format(">{}", fmt::join(c.outputs, ","));
    problem.candidates.push_back(std::move(c));
  };
  for (uint64_t kernel : kernels) {
    uint64_t possible = 0;  // Definition 3: read outside the kernel, or a graph output
    for (int p : members(kernel)) {
      if ((consumers[p] & ~kernel) || (graph_outputs >> p & 1)) possible |= uint64_t{1} << p;
    }
    add(kernel, possible, false);
    if (spec.random_output_sets && std::popcount(possible) > 1) {
      uint64_t subset = 0;
      while (!subset || subset == possible) {
        subset = 0;
        for (int p : members(possible)) {
          if (chance(0.5)) subset |= uint64_t{1} << p;
        }
      }
      add(kernel, subset, true);
    }
  }
  return result;
}

}  // namespace orch
