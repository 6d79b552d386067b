// Partitioning by agglomeration along the topological order.
//
// A subgraph is a contiguous range of the DAG's topological order: a difference of two prefixes,
// i.e. of two execution states, hence convex (Korch Theorem 1), and the subgraphs run in order.
// A cut between vertex b-1 and vertex b costs fusion across it; its *width* is the number of
// values crossing it (vertices before b with a consumer at or after b). A width-1 cut is a
// narrow separator: every path from the part before it to the part after crosses one tensor.
//
// Algorithm: start with every vertex alone. Cuts around Opaque vertices and manual cuts are
// fixed. Visit the other cuts widest first (ties in order) and remove each one when the merged
// range stays within `max_vertices` and passes `fits` (the state cap). Ranges only grow, so a
// cut that cannot be removed when visited never could later: one pass suffices, and the cuts
// that remain are the narrowest ones the caps force.
//
// Worked example (max_vertices = 3):
//
//   0 Mul ─┐
//   1 Exp ─┴─ 2 Add ── 3 Relu ── 4 Neg ──┬── 5 TopK (Opaque) ──┬── 6 Add
//                                        └─────────────────────┘
//
//   boundary b (between b-1 and b):  1   2   3   4   5   6
//   width:                           1   2   1   1   1   2
//   fixed (around the Opaque 5):                     x   x
//
//   b=2 (width 2): {1} + {2}     -> {1,2}
//   b=1 (width 1): {0} + {1,2}   -> {0,1,2}
//   b=3 (width 1): {0,1,2} + {3} -> 4 vertices: the cut stays ("size cap")
//   b=4 (width 1): {3} + {4}     -> {3,4}
//
//   subgraphs: {0,1,2} | {3,4} | {5} | {6}
#include "partition/partition.h"

#include <algorithm>
#include <numeric>

#include "ir/error.h"

namespace orch {

std::vector<int> cut_widths(const Dag& dag) {
  // Vertex u crosses the boundaries u+1 .. last_consumer(u): a difference array over them.
  std::vector<int> delta(dag.size + 2, 0);
  std::vector<int> last_consumer = last_consumers(dag);
  for (int u = 0; u < dag.size; ++u) {
    if (last_consumer[u] < 0) continue;
    delta[u + 1] += 1;
    delta[last_consumer[u] + 1] -= 1;
  }
  std::vector<int> widths(dag.size + 1, 0);
  int running = 0;
  for (int b = 0; b <= dag.size; ++b) widths[b] = running += delta[b];
  return widths;
}

namespace {

// The ranges of the partition being built: each position knows its range through the range's
// first position (a union-find over contiguous ranges).
class Ranges {
 public:
  explicit Ranges(int n) : parent_(n), end_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
    for (int i = 0; i < n; ++i) end_[i] = i + 1;
  }
  int begin_of(int position) {
    while (parent_[position] != position) position = parent_[position] = parent_[parent_[position]];
    return position;
  }
  int end_of(int position) { return end_[begin_of(position)]; }
  // Merges the range ending at `boundary` with the one starting there.
  void merge_at(int boundary) {
    int left = begin_of(boundary - 1);
    end_[left] = end_[boundary];
    parent_[boundary] = left;
  }

 private:
  std::vector<int> parent_;
  std::vector<int> end_;
};

}  // namespace

std::vector<Subgraph> partition(const Dag& dag, const PartitionOptions& options) {
  check_dag(dag);
  check(options.max_vertices >= 1, "partition: max_vertices must be at least 1, not {}",
        options.max_vertices);
  if (dag.size == 0) return {};
  const int n = dag.size;
  std::vector<int> widths = cut_widths(dag);

  // The reason each boundary 1..n-1 stays a cut; "" for a boundary that may still be merged.
  std::vector<std::string> reason(n);
  for (int v = 0; v < n; ++v) {
    if (dag.category[v] != Category::Opaque) continue;
    if (v > 0) reason[v] = "opaque";
    if (v + 1 < n) reason[v + 1] = "opaque";
  }
  for (int v : options.manual_cuts) {
    check(v >= 0 && v < n, "partition: manual cut after vertex {}, which is not in the DAG", v);
    if (v + 1 < n && reason[v + 1].empty()) reason[v + 1] = "manual";
  }

  Ranges ranges(n);
  if (options.automatic) {
    std::vector<int> order;
    for (int b = 1; b < n; ++b)
      if (reason[b].empty()) order.push_back(b);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return widths[a] > widths[b]; });
    for (int b : order) {
      int begin = ranges.begin_of(b - 1);
      int end = ranges.end_of(b);
      if (end - begin > options.max_vertices) {
        reason[b] = "size cap";
      } else if (options.fits && !options.fits(begin, end)) {
        reason[b] = "piece test";
      } else {
        ranges.merge_at(b);
      }
    }
  } else {
    for (int b = 1; b < n; ++b)
      if (reason[b].empty()) ranges.merge_at(b);
  }

  std::vector<Subgraph> subgraphs;
  for (int begin = 0; begin < n;) {
    int end = ranges.end_of(begin);
    Subgraph s{.begin = begin, .end = end};
    if (end < n) {
      s.cut_width = widths[end];
      s.cut_reason = reason[end];
    }
    subgraphs.push_back(std::move(s));
    begin = end;
  }
  return subgraphs;
}

}  // namespace orch
