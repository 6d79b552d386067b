#include "ir/hash.h"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "ir/hash_util.h"

namespace orch {
namespace {

uint64_t hash_type(const TensorType& t) {
  uint64_t h = hash_combine(0x7e, static_cast<uint64_t>(t.dtype));
  for (int64_t d : t.shape) h = hash_combine(h, static_cast<uint64_t>(d));
  return hash_combine(h, t.shape.size());
}

uint64_t hash_attr(const AttrValue& value) {
  uint64_t h = hash_combine(0xa7, value.index());
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          h = hash_combine(h, static_cast<uint64_t>(x));
        } else if constexpr (std::is_same_v<T, float>) {
          h = hash_combine(h, std::bit_cast<uint32_t>(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          h = hash_combine(h, hash_string(x));
        } else if constexpr (std::is_same_v<T, Tensor>) {
          h = hash_combine(h, x.content_hash());
        } else {
          h = hash_combine(h, x.size());
          for (const auto& e : x) h = hash_combine(h, hash_attr(AttrValue(e)));
        }
      },
      value);
  return h;
}

}  // namespace

std::vector<uint64_t> value_hashes(const Graph& graph) {
  return value_hashes(graph, true);
}

std::vector<uint64_t> value_hashes(const Graph& graph, bool contents) {
  std::vector<uint64_t> h(graph.num_values(), 0);
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    ValueId in = graph.inputs()[i];
    h[in] = hash_combine(hash_combine(0x11, i), hash_type(graph.value(in).type));
  }
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
    if (graph.value(v).is_constant())
      h[v] = contents ? hash_combine(0xc0, graph.value(v).constant.content_hash())
                      : hash_combine(0xc1, hash_type(graph.value(v).type));
  for (const Node& node : graph.nodes()) {
    uint64_t nh = hash_string(node.op);
    for (const auto& [name, value] : node.attrs)
      nh = hash_combine(hash_combine(nh, hash_string(name)), hash_attr(value));
    for (ValueId in : node.inputs) nh = hash_combine(nh, in == kNoValue ? 0x5a : h[in]);
    for (size_t i = 0; i < node.outputs.size(); ++i)
      h[node.outputs[i]] =
          hash_combine(hash_combine(nh, i), hash_type(graph.value(node.outputs[i]).type));
  }
  return h;
}

uint64_t structural_hash(const Graph& graph) {
  return structural_hash(graph, true);
}

uint64_t structural_hash(const Graph& graph, bool contents) {
  std::vector<uint64_t> h = value_hashes(graph, contents);
  // Nodes that reach no output still count, as a sorted multiset (independent of order).
  std::vector<uint64_t> node_hashes;
  for (const Node& node : graph.nodes())
    for (ValueId out : node.outputs) node_hashes.push_back(h[out]);
  std::sort(node_hashes.begin(), node_hashes.end());
  uint64_t result = hash_combine(0x6a, graph.inputs().size());
  for (ValueId in : graph.inputs()) result = hash_combine(result, h[in]);
  for (uint64_t nh : node_hashes) result = hash_combine(result, nh);
  result = hash_combine(result, graph.outputs().size());
  for (ValueId out : graph.outputs()) result = hash_combine(result, h[out]);
  return result;
}

std::string format_hash(uint64_t hash) {
  return fmt::format("{:016x}", hash);
}

}  // namespace orch
