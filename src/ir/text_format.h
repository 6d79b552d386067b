// The text format: prints and parses any Graph, round-trip exact (print -> parse -> print is
// identical, and the structural hash is preserved). Tests are written in it.
//
//   graph main(%x: f32[2,3], %axes: i64[1]) {
//     const %w = f32[3]{0.5, 1, -2}
//     %y: f32[2,3] = Mul(%x, %w)
//     %lo: f32[2,1], %hi: f32[2,2] = Split(%y, _) {axis = 1, num_outputs = 2} @split0
//     return %lo, %hi
//   }
//
// Names are bare when they use only [A-Za-z0-9_.] and quoted ("...") otherwise; `_` is an absent
// optional input; `@name` keeps the node's name. Float attributes always carry a '.', an
// exponent, `nan` or `inf`, so `1` is an int and `1.0` a float; empty lists are written
// `ints[]`, `floats[]` or `strings[]`.
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.h"

namespace orch {

std::string print_graph(const Graph& graph);

/// Parses text into a Graph, inferring and checking every node's types. Errors carry the line.
Graph parse_graph(std::string_view text);

}  // namespace orch
