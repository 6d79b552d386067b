// The BLP in CBC (the only file that includes CBC headers).
//
// Columns: u_k (binary, cost c_k) per candidate column; with buffer variables also y_j
// (in [0, 1], cost 0) per buffer that a graph output or some column needs.
// Rows with buffer variables:
//   y_j - Σ_{k writes j} u_k <= 0     (a buffer exists only if a chosen kernel writes it)
//   u_k - y_j <= 0                    (for every external input j of column k)
//   y_g >= 1                          (graph outputs, as a bound)
// With need sets, columns that read the same set S of buffers (S of two or more) share a
// continuous z_S in [0, 1]: z_S - y_j <= 0 for j in S and u_k - z_S <= 0. Projected on (u, y)
// this is exactly u_k <= y_j for j in S (z_S fits between max u_k and min y_j), so the LP bound
// and the integer optimum are unchanged, with one row per column instead of one per input
// (transformer-tiny's attention subgraph: 25,556 rows instead of 79,575; its distinct need sets
// number 915 for 29,463 candidates).
// Rows without (the paper's form): Σ_{i writes j} u_i - u_k >= 0 per (k, j) and
// Σ_{i writes g} u_i >= 1 per graph output. Both have the same LP relaxation; the first has
// two nonzeros per dependency instead of one per writer (for all 14108 convex subgraphs of
// a 39-primitive graph: 0.1M dependency nonzeros against 118M).
// Coverage rows: Σ_{k computes p} u_k >= 1 for every ancestor p of a graph output.
// Cycle cuts over a buffer set J: a continuous w_J in [0, 1] with w_J - Σ_{i in O} u_i <= 0 (O:
// the columns writing some of J, reading none) and y_j - w_J <= 0 for j in J; without buffer
// variables, u_k - w_J <= 0 for each k reading some of J.
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ir/error.h"
#include "orchestrate/columns.h"

namespace orch::orchestrate_detail {
namespace {

// CbcMain0/CbcMain1 keep global state: one solve at a time.
std::mutex cbc_mutex;
// When the CBC run in progress must stop (guarded by cbc_mutex).
std::chrono::steady_clock::time_point cbc_deadline;

// CbcMain1's hook. Just before branch and bound, give it the time left. The time limit is not
// given to CbcMain1 itself: when it expires inside CglPreProcess, CBC 2.10 crashes in
// CglPreProcess::postProcess (or calls the problem infeasible), so preprocessing runs unlimited.
int before_branch_and_bound(CbcModel* model, int where_from) {
  if (where_from == 3) {
    double left =
        std::chrono::duration<double>(cbc_deadline - std::chrono::steady_clock::now()).count();
    model->setUseElapsedTime(true);
    model->setMaximumSeconds(model->getCurrentSeconds() + std::max(left, 0.0));
  }
  return 0;
}

struct Model {
  std::vector<double> col_lower, col_upper, objective, row_lower, row_upper;
  std::vector<CoinBigIndex> row_start{0};  // rows in compressed sparse form
  std::vector<int> row_length, index;
  std::vector<double> value;
  std::vector<int> buffer_column;           // y_j's column, -1 when j has none
  std::vector<char> integer;                // per column
  int first_need_set = 0;                   // the column of the first z_S
  std::vector<std::vector<int>> need_sets;  // the buffers of each z_S, in consecutive columns
  int first_cut = 0;                        // the column of the first cut's w_J (columns last)
};

void add_row(Model& model, const std::vector<int>& index, const std::vector<double>& value,
             double lower, double upper) {
  model.index.insert(model.index.end(), index.begin(), index.end());
  model.value.insert(model.value.end(), value.begin(), value.end());
  model.row_start.push_back(static_cast<CoinBigIndex>(model.index.size()));
  model.row_length.push_back(static_cast<int>(index.size()));
  model.row_lower.push_back(lower);
  model.row_upper.push_back(upper);
}

// A cut over buffers J: w_J <= Σ first writers (w_J continuous), and y_j <= w_J for each j in
// J, which the readers' rows u_k <= y_j carry over to them: |J| rows instead of one per reader
// (thousands on YOLOX-Nano's parts). Without buffer variables, u_k <= w_J per reader.
void add_cycle_cut(Model& model, const CycleCut& cut, bool buffer_variables) {
  const double inf = COIN_DBL_MAX;
  const int w = static_cast<int>(model.objective.size());
  model.col_lower.push_back(0);
  model.col_upper.push_back(1);
  model.objective.push_back(0);
  model.integer.push_back(0);
  std::vector<int> index{w};
  std::vector<double> value{1};
  for (int i : cut.first_writers) {
    index.push_back(i);
    value.push_back(-1);
  }
  add_row(model, index, value, -inf, 0);
  if (buffer_variables) {
    for (int j : cut.buffers) add_row(model, {model.buffer_column[j], w}, {1, -1}, -inf, 0);
  } else {
    for (int k : cut.readers) add_row(model, {k, w}, {1, -1}, -inf, 0);
  }
}

Model build_model(const Columns& columns, const std::vector<CycleCut>& cuts,
                  const OrchestrateOptions& options) {
  const bool buffer_variables = options.buffer_variables;
  const int m = columns.size();
  const int n = columns.num_buffers;
  const double inf = COIN_DBL_MAX;
  Model model;
  model.col_lower.assign(m, 0);
  model.col_upper.assign(m, 1);
  model.objective = columns.cost;
  std::vector<std::vector<int>> writers(n);
  std::vector<char> needed(n, 0), is_output(n, 0);
  for (int k = 0; k < m; ++k) {
    for (int j : columns.writes[k]) writers[j].push_back(k);
    for (int j : columns.needs[k]) needed[j] = 1;
  }
  for (int g : columns.graph_outputs) is_output[g] = needed[g] = 1;
  model.buffer_column.assign(n, -1);
  if (buffer_variables) {
    for (int j = 0; j < n; ++j) {
      if (!needed[j]) continue;
      model.buffer_column[j] = static_cast<int>(model.objective.size());
      model.col_lower.push_back(is_output[j] ? 1 : 0);
      model.col_upper.push_back(1);
      model.objective.push_back(0);
    }
  }
  if (buffer_variables) {
    for (int j = 0; j < n; ++j) {
      if (!needed[j]) continue;
      std::vector<int> index{model.buffer_column[j]};
      std::vector<double> value{1};
      for (int k : writers[j]) {
        index.push_back(k);
        value.push_back(-1);
      }
      add_row(model, index, value, -inf, 0);
    }
    std::map<std::vector<int>, int> set_column;
    model.first_need_set = static_cast<int>(model.objective.size());
    for (int k = 0; k < m; ++k) {
      const std::vector<int>& needs = columns.needs[k];
      if (!options.need_sets || needs.size() <= 1) {
        for (int j : needs) add_row(model, {k, model.buffer_column[j]}, {1, -1}, -inf, 0);
        continue;
      }
      auto [it, added] = set_column.try_emplace(needs, static_cast<int>(model.objective.size()));
      if (added) {
        model.col_lower.push_back(0);
        model.col_upper.push_back(1);
        model.objective.push_back(0);
        model.need_sets.push_back(needs);
        for (int j : needs) add_row(model, {it->second, model.buffer_column[j]}, {1, -1}, -inf, 0);
      }
      add_row(model, {k, it->second}, {1, -1}, -inf, 0);
    }
  } else {
    for (int g : columns.graph_outputs) {
      add_row(model, writers[g], std::vector<double>(writers[g].size(), 1), 1, inf);
    }
    for (int k = 0; k < m; ++k) {
      for (int j : columns.needs[k]) {
        std::vector<int> index = writers[j];
        std::vector<double> value(index.size(), 1);
        index.push_back(k);
        value.push_back(-1);
        add_row(model, index, value, 0, inf);
      }
    }
  }
  // Every required primitive is computed by some chosen kernel. Implied for integer points,
  // but the LP otherwise lets fractional kernels share one fractional input.
  std::vector<std::vector<int>> computers(n);
  for (int k = 0; k < m; ++k) {
    for (int p : columns.primitives[k]) computers[p].push_back(k);
  }
  for (int p : options.coverage_rows ? columns.required : std::vector<int>{}) {
    add_row(model, computers[p], std::vector<double>(computers[p].size(), 1), 1, inf);
  }
  // Only u is integer: for integer u, y_j = [some chosen kernel writes j] and z_S = min y_j
  // satisfy every row, so y and z need no branching. CBC then branches on kernels only:
  // segformer-b0's 16,992-candidate subgraph solves in 1.5 s instead of 6.9 s.
  model.integer.assign(model.objective.size(), 0);
  std::fill(model.integer.begin(), model.integer.begin() + m, 1);
  model.first_cut = static_cast<int>(model.objective.size());
  for (const CycleCut& cut : cuts) add_cycle_cut(model, cut, buffer_variables);
  return model;
}

// Column values of an executable set of columns: u from the set, y_j = 1 where written, z_S
// where all of S is, w_J where a first writer of J is chosen.
std::vector<double> start_values(const Columns& columns, const std::vector<CycleCut>& cuts,
                                 const Model& model, const std::vector<int>& chosen) {
  std::vector<double> values(model.objective.size(), 0);
  for (int k : chosen) {
    values[k] = 1;
    for (int j : columns.writes[k]) {
      if (model.buffer_column[j] >= 0) values[model.buffer_column[j]] = 1;
    }
  }
  for (size_t s = 0; s < model.need_sets.size(); ++s) {
    double& z = values[model.first_need_set + s];
    z = 1;
    for (int j : model.need_sets[s]) z = std::min(z, values[model.buffer_column[j]]);
  }
  for (size_t c = 0; c < cuts.size(); ++c) {
    double& w = values[model.first_cut + c];
    for (int i : cuts[c].first_writers) w = std::max(w, values[i]);
  }
  return values;
}

BlpResult run_cbc(const Columns& columns, const std::vector<CycleCut>& cuts, const Model& model,
                  const std::vector<int>& warm, double time_limit_s,
                  const OrchestrateOptions& options) {
  const int num_columns = static_cast<int>(model.objective.size());
  const int num_rows = static_cast<int>(model.row_lower.size());
  CoinPackedMatrix matrix(false, num_columns, num_rows, model.row_start.back(), model.value.data(),
                          model.index.data(), model.row_start.data(), model.row_length.data());
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, model.col_lower.data(), model.col_upper.data(), model.objective.data(),
                     model.row_lower.data(), model.row_upper.data());
  for (int c = 0; c < num_columns; ++c) {
    if (model.integer[c]) solver.setInteger(c);
  }

  CbcModel cbc(solver);
  CbcSolverUsefulData data;
  CbcMain0(cbc, data);
  data.noPrinting_ = true;
  data.useSignalHandler_ = false;
  cbc.setLogLevel(0);
  cbc.messageHandler()->setLogLevel(0);
  if (!warm.empty()) {
    std::vector<double> start = start_values(columns, cuts, model, warm);
    cbc.setBestSolution(start.data(), num_columns, total_cost(columns, warm), true);
  }
  // Elapsed time: the limit is the caller's wall-clock budget, not this thread's CPU time.
  // Preprocessing and the feasibility pump are off by default. On transformer-tiny's attention
  // subgraph (23,048 columns, costs nearly all equal) the pump took 68 s of a 75 s solve; without
  // it, preprocessing still tripled the solve (12.2 s against 3.9 s); without both, CBC's diving
  // heuristics find a plan at the root LP bound, so the solve ends at the root.
  std::vector<const char*> argv{"orch", "-log", "0", "-slog", "0", "-timeMode", "elapsed"};
  // Diving heuristics run at the root only, and only until one of them finds a plan (diveOpt 4).
  // At every node of the tree they cost seconds on large parts and do not watch the time limit:
  // on YOLOX-Nano's 101,689-column CUDA part, four nodes took 127 s (a 120 s limit, overrun by
  // 13 s) and ended 24.7% from the bound; diving at the root alone, CBC proves the optimum in
  // 21 s (14 nodes). At the root they still find the plans that end most solves there.
  argv.insert(argv.end(), {"-diveOpt", "4"});
  // No cut generators: the time limit is not checked inside one, and with the coverage rows they
  // seldom move the root bound. In the second round on YOLOv4's 143,093-column CUDA part (one
  // cycle cut added), probing took 29 s at the root with 16 s left, and the whole 60 s solve
  // took 76 s; without cuts it takes 61 s. Every zoo model's roofline problem and the synthetic
  // ones end with the same plans without them.
  argv.insert(argv.end(), {"-cuts", "off"});
  if (!options.cbc_preprocess) argv.insert(argv.end(), {"-preprocess", "off"});
  if (!options.feasibility_pump) argv.insert(argv.end(), {"-feasibilityPump", "off"});
  argv.insert(argv.end(), {"-solve", "-quit"});
  cbc_deadline = std::chrono::steady_clock::now() +
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(time_limit_s));
  CbcMain1(static_cast<int>(argv.size()), argv.data(), cbc, before_branch_and_bound, data);
  check(cbc.status() != 2, "orchestrate: CBC abandoned the solve (numerical difficulties)");
  BlpResult result;
  result.infeasible = cbc.isProvenInfeasible();
  result.optimal = cbc.isProvenOptimal() && cbc.bestSolution() != nullptr;
  result.bound = cbc.getBestPossibleObjValue();
  if (const double* best = cbc.bestSolution()) {
    result.has_solution = true;
    for (int k = 0; k < columns.size(); ++k) {
      if (best[k] > 0.5) result.chosen.push_back(k);
    }
  }
  return result;
}

}  // namespace

BlpResult solve_blp(const Columns& columns, const std::vector<CycleCut>& cuts,
                    const std::vector<int>& warm, double time_limit_s,
                    const OrchestrateOptions& options, BlpSize& size) {
  Model model = build_model(columns, cuts, options);
  size.columns = static_cast<int>(model.objective.size());
  size.rows = static_cast<int>(model.row_lower.size());
  std::lock_guard<std::mutex> lock(cbc_mutex);
  return run_cbc(columns, cuts, model, warm, time_limit_s, options);
}

}  // namespace orch::orchestrate_detail
