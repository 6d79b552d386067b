// Candidate kernels (Korch §4.1): every convex subgraph of a subgraph, found as the difference
// D2 \ D1 of two execution states (Theorem 1), with its possible outputs (Definition 3), kept
// when the backends can generate it. Every rejection carries a reason.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "candidates/states.h"
#include "partition/partition.h"

namespace orch {

inline constexpr int kNumCategories = static_cast<int>(Category::Opaque) + 1;

/// What a feasibility rule sees of a candidate kernel.
struct KernelShape {
  int size = 0;                                   // primitives
  std::array<int, kNumCategories> by_category{};  // primitives per Category
  int num_outputs = 0;                            // possible outputs (Definition 3)
};

/// A backend's verdict on a candidate: "" to keep it, otherwise why it cannot be generated.
using Feasibility = std::function<std::string(const KernelShape&)>;

/// The rules of the CPU backends.
struct FeasibilityRules {
  int max_linear = 1;          // Linear primitives one kernel may hold (one oneDNN call)
  int max_primitives = 32;     // size cap; 0: none
  bool opaque_alone = true;    // an Opaque primitive is only ever a kernel of its own
  bool operator_alone = true;  // so is an operator fission left whole (Category::Operator)
};

/// The predicate for `rules`. Reasons: "Opaque with others", "operator with others",
/// "more than N Linear", "more than N primitives".
Feasibility feasibility_of(const FeasibilityRules& rules);

/// A candidate kernel of one subgraph, in its local vertex numbers.
struct KernelCandidate {
  VertexSet members;  // convex
  VertexSet outputs;  // members with a consumer outside the candidate or that are graph outputs
};

/// A backend's verdict on a whole candidate, asked after `Feasibility` accepts its shape:
/// members and outputs in global vertex numbers (sorted); "" to keep it, otherwise why no
/// backend can generate it.
using KernelCheck =
    std::function<std::string(const std::vector<int>& members, const std::vector<int>& outputs)>;

struct EnumerationOptions {
  int64_t max_states = 2000;  // per subgraph
  Feasibility feasible;       // empty: keep every candidate
  KernelCheck generable;      // empty: no backend is asked
};

/// The candidates of one subgraph and the counts behind them.
struct SubgraphCandidates {
  int begin = 0;  // the subgraph's global vertices are [begin, end)
  int end = 0;
  int64_t states = 0;
  bool state_cap_hit = false;  // enumeration stopped at the cap: candidates are incomplete
  std::string note;            // the report when the cap bound, "" otherwise
  int64_t convex = 0;          // distinct convex subgraphs found (kept + rejected)
  std::vector<KernelCandidate> kept;
  std::map<std::string, int64_t> rejected;  // count per reason
  double seconds = 0;
  int64_t rejected_total() const;
};

/// Enumerates the execution states of `sub` (over its anchored edges), then its candidates: each
/// convex subgraph exactly once (from its one pair with D1 = the candidate's ancestors outside
/// it) with its output set, kept when it writes a value someone reads and `feasible` accepts it
/// (otherwise counted under "writes nothing read" or the feasibility reason).
SubgraphCandidates enumerate_candidates(const SubDag& sub, const EnumerationOptions& options);

struct IdentifyOptions {
  PartitionOptions partition;  // its `fits` is set to the state cap
  EnumerationOptions enumeration;
};

/// Kernel identification for a whole DAG: the partition and the candidates of each subgraph.
struct KernelIdentification {
  std::vector<Subgraph> subgraphs;
  std::vector<SubgraphCandidates> candidates;  // one per subgraph
};

/// Partitions `dag` so that no subgraph has more than max_states states (unless partition
/// .automatic is false), then enumerates each subgraph.
KernelIdentification identify_kernels(const Dag& dag, const IdentifyOptions& options);

}  // namespace orch
