#include "stitch/blocked_layout.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/kernel.h"
#include "ir/op_registry.h"
#include "stitch/block_shaped.h"

namespace orch::stitch {
namespace {

bool oblivious_node(const Graph& kernel, const Node& node, int64_t block) {
  const OpSchema* schema = find_op(node.op);
  if (schema != nullptr && schema->category == Category::Elementwise) return true;
  if (node.op == "prim.Broadcast")
    return num_elements(kernel.value(node.inputs[0]).type.shape) == 1;
  if (node.op != "prim.Concat") return false;
  const Shape& out = kernel.value(node.outputs[0]).type.shape;
  int64_t axis = attr_int(node.attrs, "axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(out.size());
  if (axis != 1) return false;
  for (ValueId in : node.inputs)
    if (!whole_channel_blocks(kernel.value(in).type.shape, block)) return false;
  return true;
}

// How a kernel lets the module store its tensors (by value name); an `oblivious` kernel needs
// all its `blockable` tensors stored alike.
struct KernelPorts {
  std::vector<std::string> blockable;  // may be stored blocked
  std::vector<std::string> plain;      // must be stored plain
  bool oblivious = false;
  /// A Halide kernel that is not oblivious, but is over block shapes (block_shaped.h).
  std::optional<Graph> block_shaped;
  /// A oneDNN kernel tuned in the model's layout that moves to this configuration, blocked.
  std::string relayout;
};

// The kernel as extracted from `graph`: its constants constants, its inputs k.inputs but the
// weights, in order.
Graph extracted(const Graph& graph, const StitchedKernel& k) {
  std::vector<ValueId> outputs;
  for (const KernelValue& v : k.outputs) outputs.push_back(graph.find_value(v.value));
  return codegen::extract_kernel(graph, k.primitives, outputs);
}

// A oneDNN kernel's ports, `blocked` those it offers to store blocked.
KernelPorts dnnl_ports(const StitchedKernel& k, const codegen::DnnlBlockedPorts& blocked) {
  // The kernel's inputs are k.inputs, in order: external kernels' weights are not among them.
  KernelPorts ports;
  std::vector<bool> input_ok(k.inputs.size());
  for (int i : blocked.inputs) input_ok[static_cast<size_t>(i)] = true;
  for (size_t i = 0; i < k.inputs.size(); ++i)
    (input_ok[i] ? ports.blockable : ports.plain).push_back(k.inputs[i].value);
  (blocked.output ? ports.blockable : ports.plain).push_back(k.outputs[0].value);
  return ports;
}

// A oneDNN kernel tuned in the model's layout, moved to the blocked one (see
// store_blocked_between_kernels) when its output is of whole channel blocks: the reorder of its
// result is what the move saves, and a 64 -> 4 channel convolution, its output reordered, took
// 67 us blocked against 30 plain in YOLOX-Nano. Its ports are then those of a kernel tuned
// blocked, each stored blocked or not on its own. Moved only where the module stores its output
// blocked, and its inputs with it, one plain tensor spread through the chains of convolutions
// and elementwise kernels: 51 of YOLOX-Nano's tensors stored blocked against 98, the module
// 1.3% faster than without the moves against 3% (one thread). Not moved where oneDNN has only
// its reference kernel for the blocked layout: Candy's 9x9 stem convolution reads 3 channels,
// padded to a block there, and took 13 s in the module against 9.4 ms tuned plain.
bool relayout_ports(const Graph& kernel, const StitchedKernel& k, KernelPorts& ports) {
  std::string variant = codegen::dnnl_blocked_variant(k.choice.config);
  if (variant.empty()) return false;
  codegen::DnnlBlockedPorts blocked = codegen::dnnl_blocked_ports(kernel, variant);
  if (!blocked.output || blocked.reference_only) return false;
  ports = dnnl_ports(k, blocked);
  ports.relayout = std::move(variant);
  return true;
}

KernelPorts ports_of(const Graph& graph, const StitchedKernel& k, int64_t block,
                     bool relayout_convolutions) {
  KernelPorts ports;
  if (k.backend == "halide") {
    // Large constants are inputs of k.graph, read from weights.bin as they are: plain.
    bool plain_weights = std::any_of(k.inputs.begin(), k.inputs.end(), [](const KernelValue& v) {
      return v.at.region == Region::weights && num_elements(v.type.shape) > 1;
    });
    ports.oblivious = !plain_weights && layout_oblivious(k.graph, block);
    if (!ports.oblivious) ports.block_shaped = block_shaped_kernel(extracted(graph, k), block);
  }
  if (ports.oblivious || ports.block_shaped) {
    // Weights (per-channel constants of a block-shaped kernel) are rearranged, not stored.
    for (const KernelValue& v : k.inputs)
      if (num_elements(v.type.shape) > 1 && v.at.region != Region::weights)
        ports.blockable.push_back(v.value);
    for (const KernelValue& v : k.outputs) ports.blockable.push_back(v.value);
    ports.oblivious = true;
    return ports;
  }
  if (k.backend == "dnnl") {
    Graph kernel = extracted(graph, k);
    if (!relayout_convolutions || !relayout_ports(kernel, k, ports))
      ports = dnnl_ports(k, codegen::dnnl_blocked_ports(kernel, k.choice.config));
    return ports;
  }
  for (const KernelValue& v : k.inputs) ports.plain.push_back(v.value);
  for (const KernelValue& v : k.outputs) ports.plain.push_back(v.value);
  return ports;
}

}  // namespace

bool layout_oblivious(const Graph& kernel, int64_t block) {
  for (ValueId in : kernel.inputs())
    if (num_elements(kernel.value(in).type.shape) > 1 &&
        !whole_channel_blocks(kernel.value(in).type.shape, block))
      return false;
  for (ValueId out : kernel.outputs())
    if (!whole_channel_blocks(kernel.value(out).type.shape, block)) return false;
  for (NodeId n = 0; n < static_cast<NodeId>(kernel.num_nodes()); ++n) {
    const Node& node = kernel.node(n);
    for (ValueId in : node.inputs)
      if (kernel.value(in).is_constant() && num_elements(kernel.value(in).type.shape) > 1)
        return false;
    if (!oblivious_node(kernel, node, block)) return false;
  }
  return true;
}

int store_blocked_between_kernels(const Graph& graph, ModuleLayout& layout,
                                  bool relayout_convolutions) {
  int64_t block = codegen::dnnl_channel_block();
  // Arena tensors of whole blocks start out blocked; module outputs copied from one stay plain.
  std::unordered_map<std::string, bool> blocked;
  for (const ArenaBuffer& b : layout.buffers)
    blocked[b.value] =
        whole_channel_blocks(graph.value(graph.find_value(b.value)).type.shape, block);
  for (const KernelValue& out : layout.outputs) blocked[out.value] = false;
  std::vector<KernelPorts> ports;
  for (const StitchedKernel& k : layout.kernels)
    ports.push_back(ports_of(graph, k, block, relayout_convolutions));
  auto is_blocked = [&](const std::string& v) {
    auto it = blocked.find(v);
    return it != blocked.end() && it->second;
  };
  // Each round only turns tensors plain, so this ends.
  for (bool changed = true; changed;) {
    changed = false;
    for (const KernelPorts& p : ports) {
      bool all = true;
      for (const std::string& v : p.blockable) all = all && is_blocked(v);
      std::vector<std::string> plain = p.plain;
      if (p.oblivious && !all) plain.insert(plain.end(), p.blockable.begin(), p.blockable.end());
      for (const std::string& v : plain)
        if (is_blocked(v)) blocked[v] = false, changed = true;
    }
  }
  for (size_t i = 0; i < layout.kernels.size(); ++i) {
    StitchedKernel& k = layout.kernels[i];
    for (std::vector<KernelValue>* values : {&k.inputs, &k.outputs})
      for (KernelValue& v : *values)
        if (is_blocked(v.value)) v.channel_block = block;
    if (ports[i].block_shaped && is_blocked(k.outputs[0].value)) {
      k.graph = std::move(*ports[i].block_shaped);
      std::erase_if(k.inputs, [](const KernelValue& v) { return v.at.region == Region::weights; });
      k.block_shaped = true;
      k.choice.config.clear();  // the tuned schedule was for the plain shapes
    }
    if (k.backend != "dnnl") continue;
    if (!ports[i].relayout.empty()) k.choice.config = ports[i].relayout;
    codegen::DnnlBlockedPorts stored;
    for (size_t in = 0; in < k.inputs.size(); ++in)
      if (is_blocked(k.inputs[in].value)) stored.inputs.push_back(static_cast<int>(in));
    stored.output = is_blocked(k.outputs[0].value);
    k.choice.config = codegen::dnnl_with_stored_blocked(k.choice.config, stored);
  }
  int count = 0;
  for (const auto& [value, b] : blocked) count += b;
  return count;
}

}  // namespace orch::stitch
