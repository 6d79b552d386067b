#include "driver/fusion_policy.h"

#include <algorithm>
#include <memory>

#include "codegen/dnnl/dnnl_backend.h"
#include "driver/backend_check.h"
#include "ir/error.h"
#include "ir/op_registry.h"

namespace orch::driver {
namespace {

constexpr std::pair<FusionPolicy, std::string_view> kNames[] = {
    {FusionPolicy::full, "full"},
    {FusionPolicy::greedy, "greedy"},
    {FusionPolicy::operator_, "operator"},
};

// Elementwise, broadcast and layout primitives compute each output element from a fixed set of
// input elements: TVM calls such operators injective and fuses them into their producer.
bool injective(const Graph& g, const KernelRange& r) {
  for (int v = r.begin; v < r.end; ++v) {
    const OpSchema* schema = find_op(g.node(v).op);
    if (schema == nullptr) return false;
    const Category c = schema->category;
    if (c != Category::Elementwise && c != Category::Broadcast && c != Category::Layout)
      return false;
  }
  return true;
}

bool has_linear(const Graph& g, const KernelRange& r) {
  for (int v = r.begin; v < r.end; ++v) {
    const OpSchema* schema = find_op(g.node(v).op);
    if (schema != nullptr && schema->category == Category::Linear) return true;
  }
  return false;
}

bool reads_from(const Graph& g, const KernelRange& consumer, const KernelRange& producer) {
  for (int v = consumer.begin; v < consumer.end; ++v)
    for (ValueId in : g.node(v).inputs) {
      if (in == kNoValue) continue;
      const NodeId p = g.value(in).producer;
      if (p >= producer.begin && p < producer.end) return true;
    }
  return false;
}

// The vertices of [begin, end) whose values a node outside the range or the graph reads.
std::vector<int> range_outputs(const Graph& g, const std::vector<std::vector<NodeId>>& readers,
                               const std::vector<bool>& graph_output, const KernelRange& r) {
  std::vector<int> outputs;
  for (int v = r.begin; v < r.end; ++v) {
    bool read_outside = false;
    for (ValueId out : g.node(v).outputs) {
      read_outside = read_outside || graph_output[out];
      for (NodeId reader : readers[out])
        read_outside = read_outside || reader < r.begin || reader >= r.end;
    }
    if (read_outside) outputs.push_back(v);
  }
  return outputs;
}

}  // namespace

FusionPolicy parse_fusion_policy(std::string_view name) {
  for (const auto& [policy, text] : kNames)
    if (text == name) return policy;
  fail("unknown fusion policy '{}': expected full, greedy or operator", name);
}

std::string_view fusion_policy_name(FusionPolicy policy) {
  for (const auto& [p, text] : kNames)
    if (p == policy) return text;
  return "?";
}

std::vector<KernelRange> operator_kernels(std::span<const NodeId> origin) {
  std::vector<KernelRange> kernels;
  for (int v = 0; v < static_cast<int>(origin.size()); ++v) {
    if (v == 0 || origin[v] != origin[v - 1] || origin[v] == kNoNode)
      kernels.push_back({v, v + 1});
    else
      kernels.back().end = v + 1;
  }
  return kernels;
}

std::vector<KernelRange> greedy_kernels(const Graph& g, std::span<const NodeId> origin) {
  check(origin.size() == g.num_nodes(), "greedy fusion: {} origins for {} primitives",
        origin.size(), g.num_nodes());
  std::vector<std::vector<NodeId>> readers(g.num_values());
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n)
    for (ValueId in : g.node(n).inputs)
      if (in != kNoValue) readers[in].push_back(n);
  std::vector<bool> graph_output(g.num_values(), false);
  for (ValueId v : g.outputs()) graph_output[v] = true;
  const KernelCheck generable = backend_check(g);
  // A kernel with a MatMul or convolution takes an operator only as oneDNN post-ops. TVM fuses
  // an injective tail into a convolution and keeps the convolution's own schedule; here only
  // oneDNN's are library-grade, and with any tail Halide would take the convolution: Candy's
  // greedy module ran at 185 ms on one thread that way, its one-kernel-per-operator one at 122.
  const KernelCheck library =
      kernel_check(g, [](const Graph& kernel) { return codegen::dnnl_backend().reject(kernel); });

  std::vector<KernelRange> kernels;
  for (const KernelRange& op : operator_kernels(origin)) {
    if (!kernels.empty() && injective(g, op) && reads_from(g, op, kernels.back())) {
      const KernelRange merged{kernels.back().begin, op.end};
      std::vector<int> members(merged.end - merged.begin);
      for (int i = 0; i < merged.end - merged.begin; ++i) members[i] = merged.begin + i;
      const KernelCheck& check = has_linear(g, merged) ? library : generable;
      if (check(members, range_outputs(g, readers, graph_output, merged)).empty()) {
        kernels.back() = merged;
        continue;
      }
    }
    kernels.push_back(op);
  }
  return kernels;
}

void restrict_to_kernels(IdentifyOptions& options, std::vector<KernelRange> kernels) {
  // The kernels are given: no size or Linear caps, and no automatic cuts.
  options.enumeration.feasible = nullptr;
  options.partition.automatic = false;
  options.partition.manual_cuts.clear();
  for (const KernelRange& k : kernels) options.partition.manual_cuts.push_back(k.end - 1);
  auto ranges = std::make_shared<std::vector<KernelRange>>(std::move(kernels));
  options.enumeration.generable = [ranges](const std::vector<int>& members,
                                           const std::vector<int>&) -> std::string {
    auto it = std::upper_bound(ranges->begin(), ranges->end(), members.front(),
                               [](int v, const KernelRange& r) { return v < r.end; });
    const bool whole = it != ranges->end() && members.front() == it->begin &&
                       members.back() == it->end - 1 &&
                       static_cast<int>(members.size()) == it->end - it->begin;
    return whole ? "" : "not a kernel of the fixed policy";
  };
}

}  // namespace orch::driver
