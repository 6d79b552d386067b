// Structural hash: identifies a graph by its ops, attributes, types and constant contents,
// independent of node order, ids and names. Keys the tuning database and deduplicates
// candidates, so it must be stable across runs and machines.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace orch {

uint64_t structural_hash(const Graph& graph);

/// The structural hash with constant contents (`contents` true: the same as above) or with
/// constants hashed by their type only (`contents` false): graphs that differ only in weight
/// values hash equal, as the tuning database wants (latency does not depend on weights).
uint64_t structural_hash(const Graph& graph, bool contents);

/// Per-value hashes (Merkle style: a node output hashes its op, attributes and input hashes).
std::vector<uint64_t> value_hashes(const Graph& graph);

/// Per-value hashes; with `contents` false a constant hashes its type instead of its data.
std::vector<uint64_t> value_hashes(const Graph& graph, bool contents);

/// "0123456789abcdef".
std::string format_hash(uint64_t hash);

}  // namespace orch
