// Kernel orchestration (Korch §4.2): choose the cheapest set of measured candidate kernels that
// computes the graph outputs, and order them into an executable plan.
//
// The problem is stated over primitives only, independent of the IR: primitive i's inputs are
// other primitives (graph inputs and constants are not primitives and are always available).
// A candidate kernel computes a convex set of primitives and writes a subset of them to memory
// (its outputs, Definition 3); every primitive it reads from outside is an external input.
//
// The binary linear program has one binary u_k per measured candidate (cost c_k) and minimizes
// Σ c_k u_k such that every graph output is written by a chosen kernel and every external input
// of a chosen kernel is written by a chosen kernel. A primitive may be computed by several
// chosen kernels (recomputation). Additions to the paper's formulation:
//   - coverage rows: every ancestor of a graph output is computed by some chosen kernel.
//     Redundant for integer solutions, but they lift the root LP bound from 17-72% of the
//     optimum to 98-100% on Korch-sized problems (without them CBC needs minutes);
//   - a y_j in [0, 1] per buffer ("primitive j is written by some chosen kernel"; integral
//     when the u are), so each dependency is the two-term row u_k <= y_j instead of a row over
//     all writers of j;
//   - kernels reading the same set S of buffers share a continuous z_S: u_k <= z_S <= y_j.
//     Same LP, one dependency row per kernel (transformer-tiny's attention: 3x fewer rows);
//   - dominated candidates are pruned, and CBC starts from the cheaper of a greedy plan and
//     the best plan without recomputation (a shortest path over execution states);
//   - lazily added cycle cuts: two convex kernels can each need a buffer that only the other
//     writes (a = {a1, a2}, b = {b1, b2} with a1 -> b1 and b2 -> a2), which the paper's
//     constraints accept although no order can run them. When the solution is such a cycle,
//     over buffers J that only kernels reading J write, the cut "a kernel reading J needs a
//     chosen kernel that writes J without reading it" is added and the program solved again.
// Example: primitives p0 -> {p1, p2, p3}; candidates {p0}, {pk}, {p0, pk}. When fusing p0 into
// each consumer costs less than writing and reading p0, the plan is three kernels {p0, pk}:
// p0 runs three times (Korch Fig. 4c).
#pragma once

#include <string>
#include <vector>

namespace orch {

/// One measured candidate kernel.
struct Candidate {
  std::vector<int> primitives;  // sorted, a convex subgraph of the primitive graph
  std::vector<int> outputs;     // sorted subset of `primitives` that the kernel writes to memory
  double cost_us = 0;           // its cost (measured); +infinity means unmeasured (left out)
  std::string label;            // for messages and plans
};

/// The orchestration problem: a primitive DAG, its outputs and the measured candidates.
struct OrchestrationProblem {
  int num_primitives = 0;
  std::vector<std::vector<int>> primitive_inputs;  // producer primitives of each primitive
  std::vector<int> graph_outputs;                  // primitives the program must produce
  std::vector<Candidate> candidates;
};

/// Solver settings. CBC's preprocessing, when on, is not interrupted by the time limit (CBC 2.10
/// crashes when it is), so a solve can overrun the limit by the preprocessing time.
struct OrchestrateOptions {
  double time_limit_s = 60;       // wall-clock budget of orchestrate(), CBC rounds included
  bool prune_dominated = true;    // drop candidates another one beats on cost, inputs and outputs
  bool warm_start = true;         // CBC starts from the cheaper of the two starting plans
  bool buffer_variables = true;   // y_j per buffer (sparse rows); false: the paper's rows
  bool coverage_rows = true;      // every output ancestor computed somewhere (tighter LP bound)
  bool need_sets = true;          // columns reading the same buffers share one row per buffer
  bool cbc_preprocess = false;    // CBC's CglPreProcess (slow on large degenerate problems)
  bool feasibility_pump = false;  // CBC's feasibility pump heuristic (idem)
};

/// One kernel of a plan.
struct PlanKernel {
  int candidate = -1;                // index into OrchestrationProblem::candidates
  std::vector<int> inputs;           // external inputs, written by earlier kernels
  std::vector<int> outputs;          // outputs a later kernel reads or that are graph outputs
  std::vector<int> dropped_outputs;  // outputs nobody reads (or already written earlier)
  double cost_us = 0;
};

/// Where a written buffer (named by its primitive) lives, as kernel positions in the plan.
struct BufferLifetime {
  int primitive = -1;
  int producer = -1;          // the kernel that writes it
  int last_use = -1;          // the last kernel that reads it (the producer when none does)
  bool graph_output = false;  // lives past the plan
};

/// How the solve ended.
enum class SolveStatus {
  Optimal,    // proven optimal
  TimeLimit,  // the time limit stopped the search: best plan found, with a gap
};

/// Counts and timings for reports and benchmarks. The starting plans are a greedy one and the
/// best one without recomputation.
struct OrchestrateStats {
  int candidates = 0;          // given
  int unmeasured = 0;          // infinite cost, left out
  int unusable = 0;            // can never run, or write nothing anyone needs
  int dominated = 0;           // pruned: another candidate is as cheap, needs less, writes more
  int columns = 0;             // candidates in the BLP
  int rows = 0;                // BLP rows, cycle cuts included
  int cycle_cuts = 0;          // cuts added against cyclic solutions
  int rounds = 0;              // CBC solves
  int parts = 0;               // independent parts, solved one by one
  double greedy_us = 0;        // objective of the greedy plan (cheapest writer per buffer)
  double no_recompute_us = 0;  // best plan computing each primitive once (infinite: not searched)
  double solve_seconds = 0;    // wall time in CBC
};

/// An executable orchestration: kernels in dependency order.
struct Plan {
  std::vector<PlanKernel> kernels;
  std::vector<BufferLifetime> buffers;  // sorted by producer, then primitive
  double objective_us = 0;              // Σ kernel costs
  double lower_bound_us = 0;            // the solver's bound; equals the objective when optimal
  double gap = 0;                       // (objective - bound) / objective
  SolveStatus status = SolveStatus::Optimal;
  std::string note;  // why the plan is not proven optimal, if it is not
  OrchestrateStats stats;
};

/// Solves the orchestration BLP with CBC and extracts an ordered plan. Throws Error on an
/// invalid problem (the message names the primitive or candidate) or when no choice of
/// measured candidates computes every graph output. Safe to call from several threads; their
/// CBC runs take turns (CBC's driver keeps global state).
Plan orchestrate(const OrchestrationProblem& problem, const OrchestrateOptions& options = {});

/// Replays `plan` against `problem`: each kernel's inputs must be written before it runs,
/// its outputs must be its candidate's, every graph output must be written, lifetimes and the
/// objective must match. Returns "" for a valid plan, otherwise the first problem found.
std::string check_plan(const OrchestrationProblem& problem, const Plan& plan);

/// A readable table of the plan: kernels with costs, what they read and write, the objective.
std::string format_plan(const OrchestrationProblem& problem, const Plan& plan);

/// Sorted primitives that `candidate` reads from outside itself.
std::vector<int> external_inputs(const OrchestrationProblem& problem, const Candidate& candidate);

}  // namespace orch
