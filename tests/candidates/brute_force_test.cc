// Property tests: on random DAGs of up to 14 vertices, enumeration agrees with brute force over
// every vertex subset (Korch Definitions 1-3, Theorem 1). States and convexity are those of the
// anchored DAG (anchored_preds), which equals the DAG when no vertex is constant-only; every
// candidate is also convex in the DAG itself.
#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <set>

#include "candidates/candidates.h"
#include "dag_util.h"

namespace orch {
namespace {

using testing::brute_outputs;
using testing::BruteForce;
using testing::mask_of;

BruteForce anchored(const Dag& dag) {
  return BruteForce(dag.size, anchored_preds(dag));
}
BruteForce real(const Dag& dag) {
  return BruteForce(dag.size, dag.preds);
}

// Random DAGs whose state count keeps the all-pairs enumeration quick.
std::vector<Dag> random_dags(uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> size(1, 14);
  std::uniform_real_distribution<double> density(0.05, 0.6);
  std::vector<Dag> dags;
  while (static_cast<int>(dags.size()) < count) {
    Dag dag = testing::random_dag(rng, size(rng), density(rng), /*opaque=*/true);
    StateSet states = execution_states(sub_dag(dag, 0, dag.size), 3000);
    if (!states.capped) dags.push_back(std::move(dag));
  }
  return dags;
}

TEST(BruteForce, StatesMatchEveryPredecessorClosedSubset) {
  int with_anchors = 0;
  for (const Dag& dag : random_dags(1, 200)) {
    with_anchors += anchored_preds(dag) != dag.preds;
    BruteForce brute = anchored(dag);
    std::set<uint32_t> expected;
    for (uint32_t s = 0; s < (1u << dag.size); ++s)
      if (brute.is_state(s)) expected.insert(s);
    StateSet states = execution_states(sub_dag(dag, 0, dag.size), 1 << 20);
    ASSERT_FALSE(states.capped);
    std::set<uint32_t> found;
    for (const VertexSet& s : states.states) found.insert(mask_of(s));
    EXPECT_EQ(found.size(), states.states.size()) << "duplicate state";
    EXPECT_EQ(found, expected);
  }
  EXPECT_GT(with_anchors, 20);  // the anchored case is exercised, and so is the plain one
  EXPECT_LT(with_anchors, 180);
}

TEST(BruteForce, EveryConvexSubgraphFoundExactlyOnceWithItsOutputs) {
  for (const Dag& dag : random_dags(2, 200)) {
    BruteForce brute = anchored(dag);
    BruteForce unanchored = real(dag);
    std::set<uint32_t> convex;
    for (uint32_t s = 1; s < (1u << dag.size); ++s)
      if (brute.is_convex(s)) convex.insert(s);
    SubgraphCandidates result =
        enumerate_candidates(sub_dag(dag, 0, dag.size), {.max_states = 1 << 20});
    // Every sink is a graph output, so every convex subgraph writes something: all are kept.
    EXPECT_EQ(result.convex, static_cast<int64_t>(convex.size()));
    EXPECT_EQ(result.rejected_total(), 0);
    std::set<uint32_t> found;
    for (const KernelCandidate& k : result.kept) {
      uint32_t m = mask_of(k.members);
      EXPECT_TRUE(unanchored.is_convex(m)) << "not convex: " << m;
      EXPECT_TRUE(found.insert(m).second) << "found twice: " << m;
      EXPECT_EQ(mask_of(k.outputs), brute_outputs(dag, m)) << "outputs of " << m;
    }
    EXPECT_EQ(found, convex);
  }
}

TEST(BruteForce, FeasibilityRejectsExactlyWhatTheRulesSay) {
  const FeasibilityRules rules{.max_linear = 1, .max_primitives = 5, .opaque_alone = true};
  for (const Dag& dag : random_dags(3, 150)) {
    BruteForce brute = anchored(dag);
    uint32_t linear = 0, opaque = 0;
    for (int v = 0; v < dag.size; ++v) {
      if (dag.category[v] == Category::Linear) linear |= 1u << v;
      if (dag.category[v] == Category::Opaque) opaque |= 1u << v;
    }
    std::set<uint32_t> expected;
    std::map<std::string, int64_t> reasons;
    for (uint32_t s = 1; s < (1u << dag.size); ++s) {
      if (!brute.is_convex(s)) continue;
      int size = std::popcount(s);
      if ((s & opaque) && size > 1) {
        ++reasons["Opaque with others"];
      } else if (std::popcount(s & linear) > 1) {
        ++reasons["more than 1 Linear"];
      } else if (size > 5) {
        ++reasons["more than 5 primitives"];
      } else {
        expected.insert(s);
      }
    }
    SubgraphCandidates result = enumerate_candidates(
        sub_dag(dag, 0, dag.size), {.max_states = 1 << 20, .feasible = feasibility_of(rules)});
    std::set<uint32_t> kept;
    for (const KernelCandidate& k : result.kept) kept.insert(mask_of(k.members));
    EXPECT_EQ(kept, expected);
    EXPECT_EQ(result.rejected, reasons);
  }
}

// Candidates of a partitioned DAG are convex in the whole DAG and their outputs count consumers
// in other subgraphs.
TEST(BruteForce, PartitionedCandidatesAreConvexInTheWholeDag) {
  std::mt19937 rng(4);
  for (int round = 0; round < 60; ++round) {
    Dag dag = testing::random_dag(rng, 20, 0.15, /*opaque=*/true);
    BruteForce brute = real(dag);
    IdentifyOptions options{.partition = {.max_vertices = 7}, .enumeration = {.max_states = 40}};
    KernelIdentification kernels = identify_kernels(dag, options);
    for (const SubgraphCandidates& sub : kernels.candidates) {
      EXPECT_FALSE(sub.state_cap_hit);
      EXPECT_LE(sub.states, 40);
      for (const KernelCandidate& k : sub.kept) {
        uint32_t m = mask_of(k.members, sub.begin);
        EXPECT_TRUE(brute.is_convex(m));
        EXPECT_EQ(mask_of(k.outputs, sub.begin), brute_outputs(dag, m));
      }
    }
  }
}

}  // namespace
}  // namespace orch
