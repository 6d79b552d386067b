#include "driver/backend_check.h"

#include <algorithm>
#include <memory>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/halide/halide_backend.h"

namespace orch::driver {
namespace {

// Halide's reasons start with the node ("prim.Conv 'conv1': ..."); the rest is the reason.
std::string general_reason(const std::string& reason) {
  const size_t colon = reason.find(": ");
  return "not generable: " + (colon == std::string::npos ? reason : reason.substr(colon + 2));
}

}  // namespace

KernelCheck backend_check(const Graph& graph) {
  // Per value, the nodes reading it and whether it is a graph output: the kernel writes the
  // values of its output vertices that someone outside reads.
  auto readers = std::make_shared<std::vector<std::vector<NodeId>>>(graph.values().size());
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
    for (ValueId v : graph.node(n).inputs)
      if (v != kNoValue) (*readers)[v].push_back(n);
  for (ValueId v : graph.outputs()) (*readers)[v].push_back(kNoNode);
  return [&graph, readers](const std::vector<int>& members, const std::vector<int>& outputs) {
    if (members.size() == 1) return std::string();
    std::vector<ValueId> written;
    for (int vertex : outputs)
      for (ValueId value : graph.node(vertex).outputs) {
        const auto& r = (*readers)[value];
        if (std::any_of(r.begin(), r.end(), [&](NodeId n) {
              return !std::binary_search(members.begin(), members.end(), n);
            }))
          written.push_back(value);
      }
    Graph kernel = codegen::extract_kernel(graph, members, written);
    if (codegen::dnnl_backend().reject(kernel).empty()) return std::string();
    std::string reason = codegen::halide_reject(kernel);
    return reason.empty() ? reason : general_reason(reason);
  };
}

}  // namespace orch::driver
