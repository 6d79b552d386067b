// `orch explain`: a compiled module's plan as a Graphviz picture. Each kernel is a cluster
// labelled with its backend and measured time; primitives computed by several kernels
// (recomputation, Korch Fig. 4c) are marked; buffers between kernels are the edges' midpoints.
#pragma once

#include <string>

namespace orch::stitch {

/// The DOT text of the module whose manifest.json text is `manifest`. Throws Error naming the
/// field when the manifest lacks what the picture needs.
std::string explain_dot(const std::string& manifest);

/// What write_explain wrote.
struct ExplainFiles {
  std::string dot;
  std::string svg;  // "" when Graphviz's `dot` is not installed
};

/// Writes `dir`/plan.dot from `dir`/manifest.json and renders `dir`/plan.svg with Graphviz when
/// it is installed. Throws Error naming the file on a failure.
ExplainFiles write_explain(const std::string& dir);

}  // namespace orch::stitch
