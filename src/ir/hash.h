// Structural hash: identifies a graph by its ops, attributes, types and constant contents,
// independent of node order, ids and names. Keys the tuning database and deduplicates
// candidates, so it must be stable across runs and machines.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace orch {

uint64_t structural_hash(const Graph& graph);

/// Per-value hashes (Merkle style: a node output hashes its op, attributes and input hashes).
std::vector<uint64_t> value_hashes(const Graph& graph);

/// "0123456789abcdef".
std::string format_hash(uint64_t hash);

}  // namespace orch
