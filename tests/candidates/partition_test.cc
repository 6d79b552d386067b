// Partitioning: the worked example of partition.cc, manual cuts, and properties on random DAGs.
#include <gtest/gtest.h>

#include "candidates/states.h"
#include "dag_util.h"
#include "ir/error.h"
#include "partition/partition.h"

namespace orch {
namespace {

using testing::make_dag;

// 0 Mul, 1 Exp -> 2 Add -> 3 Relu -> 4 Neg -> 5 TopK (Opaque) -> 6 Add(4, 5).
Dag worked_example() {
  std::vector<Category> categories(7, Category::Elementwise);
  categories[5] = Category::Opaque;
  return make_dag(7, {{0, 2}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {4, 6}, {5, 6}}, categories);
}

std::vector<std::pair<int, int>> ranges(const std::vector<Subgraph>& subgraphs) {
  std::vector<std::pair<int, int>> out;
  for (const Subgraph& s : subgraphs) out.emplace_back(s.begin, s.end);
  return out;
}

TEST(Partition, CutWidthsCountTheValuesCrossing) {
  EXPECT_EQ(cut_widths(worked_example()), (std::vector<int>{0, 1, 2, 1, 1, 1, 2, 0}));
}

TEST(Partition, WorkedExample) {
  std::vector<Subgraph> subgraphs = partition(worked_example(), {.max_vertices = 3});
  EXPECT_EQ(ranges(subgraphs), (std::vector<std::pair<int, int>>{{0, 3}, {3, 5}, {5, 6}, {6, 7}}));
  EXPECT_EQ(subgraphs[0].cut_reason, "size cap");
  EXPECT_EQ(subgraphs[0].cut_width, 1);
  EXPECT_EQ(subgraphs[1].cut_reason, "opaque");
  EXPECT_EQ(subgraphs[2].cut_reason, "opaque");
  EXPECT_EQ(subgraphs[2].cut_width, 2);
  EXPECT_EQ(subgraphs[3].cut_reason, "");
}

TEST(Partition, NothingToCutGivesOneSubgraph) {
  std::vector<Subgraph> subgraphs = partition(make_dag(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}}));
  EXPECT_EQ(ranges(subgraphs), (std::vector<std::pair<int, int>>{{0, 5}}));
}

TEST(Partition, ManualCutsStay) {
  Dag chain = make_dag(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
  std::vector<Subgraph> subgraphs = partition(chain, {.manual_cuts = {1}});
  EXPECT_EQ(ranges(subgraphs), (std::vector<std::pair<int, int>>{{0, 2}, {2, 5}}));
  EXPECT_EQ(subgraphs[0].cut_reason, "manual");
  // Without automatic merging, only the manual cuts and those around Opaque vertices remain.
  subgraphs = partition(worked_example(), {.manual_cuts = {2}, .automatic = false});
  EXPECT_EQ(ranges(subgraphs), (std::vector<std::pair<int, int>>{{0, 3}, {3, 5}, {5, 6}, {6, 7}}));
}

TEST(Partition, ManualCutOutOfRangeIsAnError) {
  try {
    partition(make_dag(2, {{0, 1}}), {.manual_cuts = {7}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "partition: manual cut after vertex 7, which is not in the DAG");
  }
}

TEST(Partition, NarrowestCutsRemain) {
  // Two blocks of width-2 parallel branches joined by a single value: with room for one block,
  // the cut falls on the single value (width 1), not inside a block.
  //   0 -> {1, 2} -> 3 -> {4, 5} -> 6
  Dag dag = make_dag(7, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}, {3, 5}, {4, 6}, {5, 6}});
  std::vector<Subgraph> subgraphs = partition(dag, {.max_vertices = 4});
  EXPECT_EQ(ranges(subgraphs), (std::vector<std::pair<int, int>>{{0, 4}, {4, 7}}));
  EXPECT_EQ(subgraphs[0].cut_width, 1);
}

TEST(Partition, RandomDagsRespectEveryRule) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + static_cast<int>(rng() % 60);
    Dag dag = testing::random_dag(rng, n, 0.08 + 0.3 * (rng() % 4) / 4, /*opaque=*/true);
    const int max_vertices = 1 + static_cast<int>(rng() % 12);
    const int64_t cap = 8 + rng() % 64;
    std::vector<int> manual = {static_cast<int>(rng() % n)};
    PartitionOptions options{
        .max_vertices = max_vertices,
        .fits = [&](int b, int e) { return !execution_states(sub_dag(dag, b, e), cap).capped; },
        .manual_cuts = manual};
    std::vector<Subgraph> subgraphs = partition(dag, options);
    std::vector<int> widths = cut_widths(dag);
    int expected_begin = 0;
    for (size_t i = 0; i < subgraphs.size(); ++i) {
      const Subgraph& s = subgraphs[i];
      ASSERT_EQ(s.begin, expected_begin);
      ASSERT_LT(s.begin, s.end);
      expected_begin = s.end;
      EXPECT_LE(s.size(), max_vertices);
      EXPECT_FALSE(execution_states(sub_dag(dag, s.begin, s.end), cap).capped);
      for (int v = s.begin; v < s.end; ++v)
        EXPECT_TRUE(dag.category[v] != Category::Opaque || s.size() == 1) << "Opaque " << v;
      if (s.end < n) {
        EXPECT_EQ(s.cut_width, widths[s.end]);
        EXPECT_FALSE(s.cut_reason.empty());
      }
    }
    EXPECT_EQ(expected_begin, n);
    if (manual[0] + 1 < n) {
      EXPECT_TRUE(std::any_of(subgraphs.begin(), subgraphs.end(),
                              [&](const Subgraph& s) { return s.end == manual[0] + 1; }));
    }
  }
}

}  // namespace
}  // namespace orch
