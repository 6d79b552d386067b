#include "driver/backend_check.h"

#include <algorithm>
#include <memory>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/halide/halide_backend.h"
#include "ir/op_registry.h"

namespace orch::driver {
namespace {

// Generators' reasons start with the node ("prim.Conv 'conv1': ..."); the rest is the reason.
std::string general_reason(const std::string& reason) {
  const size_t colon = reason.find(": ");
  return "not generable: " + (colon == std::string::npos ? reason : reason.substr(colon + 2));
}

}  // namespace

KernelCheck kernel_check(const Graph& graph, std::function<std::string(const Graph&)> reject,
                         int64_t min_weight_bytes) {
  // Per value, the nodes reading it and whether it is a graph output: the kernel writes the
  // values of its output vertices that someone outside reads.
  auto readers = std::make_shared<std::vector<std::vector<NodeId>>>(graph.values().size());
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
    for (ValueId v : graph.node(n).inputs)
      if (v != kNoValue) (*readers)[v].push_back(n);
  for (ValueId v : graph.outputs()) (*readers)[v].push_back(kNoNode);
  return [&graph, readers, reject = std::move(reject), min_weight_bytes](
             const std::vector<int>& members, const std::vector<int>& outputs) {
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
    std::string reason =
        reject(min_weight_bytes > 0 ? codegen::extract_kernel_with_weight_inputs(
                                          graph, members, written, min_weight_bytes)
                                    : codegen::extract_kernel(graph, members, written));
    return reason.empty() ? reason : general_reason(reason);
  };
}

KernelCheck backend_check(const Graph& graph) {
  return kernel_check(graph, [](const Graph& kernel) {
    std::string library = codegen::dnnl_backend().reject(kernel);
    // Several Linear primitives are a oneDNN convolution chain or nothing: Halide's schedules
    // tile one reduction nest per kernel.
    if (library.empty() || linear_primitives(kernel) > 1) return library;
    return codegen::halide_reject(kernel);
  });
}

}  // namespace orch::driver
