// Internals of orchestrate(): the problem reduced to BLP columns, the greedy plan, replay and
// cycle cuts, the CBC solve and plan extraction. Not part of the public API.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "orchestrate/orchestrate.h"

namespace orch::orchestrate_detail {

/// A fixed-size set of primitives.
class Bitset {
 public:
  explicit Bitset(int size) : words_((size + 63) / 64, 0) {}
  void set(int i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  bool test(int i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  void reset(int i) { words_[i / 64] &= ~(uint64_t{1} << (i % 64)); }
  void unite(const Bitset& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
  }
  void intersect(const Bitset& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] &= other.words_[w];
  }
  /// The smallest member, or -1 when empty.
  int first() const {
    for (size_t w = 0; w < words_.size(); ++w) {
      if (words_[w]) return static_cast<int>(64 * w) + std::countr_zero(words_[w]);
    }
    return -1;
  }
  bool intersects(const Bitset& other) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      if (words_[w] & other.words_[w]) return true;
    }
    return false;
  }
  bool subset_of(const Bitset& other) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      if (words_[w] & ~other.words_[w]) return false;
    }
    return true;
  }
  bool operator==(const Bitset&) const = default;
  size_t hash() const {
    size_t h = 0;
    for (uint64_t w : words_) h = h * 0x9E3779B97F4A7C15ull + w;
    return h;
  }

 private:
  std::vector<uint64_t> words_;
};

/// The candidates that can matter, as columns over buffers (a buffer is named by the primitive
/// whose value it holds).
struct Columns {
  int num_buffers = 0;
  std::vector<int> candidate;                // column -> index into problem.candidates
  std::vector<double> cost;                  // column cost (us)
  std::vector<std::vector<int>> needs;       // sorted external inputs of each column
  std::vector<std::vector<int>> writes;      // sorted outputs that someone may read
  std::vector<std::vector<int>> primitives;  // sorted primitives each column computes
  std::vector<int> required;                 // primitives every plan computes (output ancestors)
  std::vector<char> complete;                // writes every primitive a later kernel may read
  std::vector<std::vector<int>> primitive_inputs;  // the primitive graph
  std::vector<int> column_of_candidate;  // the column a candidate (or its dominator) became; -1
  std::vector<int> graph_outputs;        // sorted, unique
  int size() const { return static_cast<int>(candidate.size()); }
};

/// Throws Error naming the first defect: graph not a DAG, ids out of range, a candidate that
/// is unsorted, not convex, writes a primitive no one outside reads, or has a NaN or negative
/// cost.
void validate_problem(const OrchestrationProblem& problem);

/// Builds the columns: leaves out unmeasured candidates, those that can never run or write
/// nothing needed, and (if asked) dominated ones; fills the counts in `stats`. Throws Error
/// when no choice of candidates computes every graph output. Expects a validated problem.
Columns build_columns(const OrchestrationProblem& problem, bool prune_dominated,
                      OrchestrateStats& stats);

/// The result of running a set of columns in dependency order.
struct Replay {
  std::vector<int> order;     // columns that could run, in a valid order
  std::vector<int> stuck;     // chosen columns whose inputs never became available
  std::vector<char> written;  // per buffer, after the run
  bool complete(const Columns& columns) const;  // nothing stuck and all graph outputs written
};

/// Runs the chosen columns, each as soon as its needs are written.
Replay replay(const Columns& columns, const std::vector<int>& chosen);

/// An executable, redundancy-free plan built greedily (cheapest way to compute each buffer,
/// Knuth's generalization of Dijkstra to hypergraphs), pricing the `free` columns at nothing
/// (columns already paid for). Expects a feasible problem.
std::vector<int> greedy_plan(const Columns& columns, const std::vector<int>& free = {});

/// The cheapest plan without recomputation, or empty when the search passes `max_states`:
/// a shortest path over execution states whose steps are complete columns (Korch §4.1 builds
/// candidates as differences of such states).
std::vector<int> chain_plan(const Columns& columns, int max_states);

/// A runnable plan from a solution whose columns wait on each other, the cheaper of two: its
/// columns and those of the runnable `incumbent`, less those still stuck, less the redundant ones
/// (most expensive first); or the greedy plan that prices the solution's columns, stuck or not,
/// at nothing. Cheaper than the incumbent when the solution's kernels outside its cycles pay off.
std::vector<int> repaired_plan(const Columns& columns, const std::vector<int>& cyclic,
                               const std::vector<int>& incumbent);

/// A valid inequality cutting off every cycle over a set J of buffers: whichever chosen kernel
/// writes some of J first reads none of J, so once some of J is written (or read), a chosen
/// kernel writes J without reading it. `first_writers` are the columns that write some of J and
/// read none of it; `readers` those that read some of J. The BLP states it with its buffer
/// variables (y_j <= Σ_{i in first_writers} u_i for j in J) or, without them, per reader
/// (u_k <= Σ_{i in first_writers} u_i).
struct CycleCut {
  std::vector<int> buffers;  // J
  std::vector<int> readers;
  std::vector<int> first_writers;
};

/// Cuts violated by a chosen set whose replay got stuck: one per cycle of stuck columns that
/// wait only on each other, over the buffers they wait on.
std::vector<CycleCut> cycle_cuts(const Columns& columns, const Replay& stuck_replay);

/// Total cost of a set of columns.
double total_cost(const Columns& columns, const std::vector<int>& chosen);

/// What one CBC run returned.
struct BlpResult {
  bool has_solution = false;
  bool optimal = false;     // proven optimal
  bool infeasible = false;  // proven infeasible
  std::vector<int> chosen;  // columns with u = 1
  double bound = 0;         // best lower bound
};

/// Model size, for the stats.
struct BlpSize {
  int columns = 0;
  int rows = 0;
};

/// Solves the BLP over `columns` plus `cuts` with CBC, starting from `warm` (may be empty).
BlpResult solve_blp(const Columns& columns, const std::vector<CycleCut>& cuts,
                    const std::vector<int>& warm, double time_limit_s,
                    const OrchestrateOptions& options, BlpSize& size);

/// Orders the chosen candidates (indices into problem.candidates) into a plan: kernels in
/// dependency order, unused outputs dropped, kernels left with nothing to write removed,
/// buffer lifetimes. Sets kernels, buffers and objective_us.
Plan extract_plan(const OrchestrationProblem& problem, std::vector<int> chosen_candidates);

/// A part of a problem that can be solved alone, with its own primitive numbering.
struct Part {
  OrchestrationProblem problem;
  std::vector<int> candidates;  // part candidate -> index into the whole problem's candidates
};

/// Splits a validated problem into independent parts, in primitive order, or returns it as one
/// part. Parts are the connected components of "two primitives share a candidate"; they are
/// independent when no primitive reads one of a later part: then every value a part reads from
/// an earlier one must be written to memory whatever the plan (no kernel spans parts), so it
/// becomes that part's graph output, and the optimum is the sum of the parts' optima.
std::vector<Part> independent_parts(const OrchestrationProblem& problem);

}  // namespace orch::orchestrate_detail
