#include "stitch/block_shaped.h"

#include "ir/builder.h"
#include "ir/op_registry.h"

namespace orch::stitch {
namespace {

// A constant of one value per channel: every dim 1 but the channels, in whole blocks.
bool per_channel(const Shape& shape, int64_t block) {
  if (!whole_channel_blocks(shape, block)) return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (d != 1 && shape[d] != 1) return false;
  return true;
}

// The constant `c` rearranged for block shapes: one value -> [1, 1, 1, 1]; per channel ->
// [1, C/block, 1, block], channel cb * block + ci at (cb, ci).
std::optional<Tensor> block_shaped_constant(const Tensor& c, int64_t block) {
  if (c.numel() == 1) {
    Tensor out(c.dtype(), {1, 1, 1, 1});
    out.set(0, c.get(0));
    return out;
  }
  if (!per_channel(c.shape(), block)) return std::nullopt;
  Tensor out(c.dtype(), {1, c.shape()[1] / block, 1, block});
  for (int64_t i = 0; i < c.numel(); ++i) out.set(i, c.get(i));  // same order: cb * block + ci
  return out;
}

}  // namespace

bool whole_channel_blocks(const Shape& shape, int64_t block) {
  return shape.size() >= 3 && shape.size() <= 5 && shape[1] % block == 0;
}

Shape block_shape(const Shape& shape, int64_t block) {
  int64_t spatial = 1;
  for (size_t d = 2; d < shape.size(); ++d) spatial *= shape[d];
  return {shape[0], shape[1] / block, spatial, block};
}

std::optional<Graph> block_shaped_kernel(const Graph& kernel, int64_t block) {
  Graph out;
  out.name = kernel.name;
  Builder b(out);
  std::vector<ValueId> to(kernel.num_values(), kNoValue);
  for (ValueId in : kernel.inputs()) {
    const Value& v = kernel.value(in);
    if (!whole_channel_blocks(v.type.shape, block)) return std::nullopt;
    to[in] = b.input(v.name, {v.type.dtype, block_shape(v.type.shape, block)});
  }
  // Constants, and reshapes of constants (a bias [C] made [1, C, 1, 1]), by value.
  std::vector<std::optional<Tensor>> constant(kernel.num_values());
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
    if (kernel.value(v).is_constant()) constant[v] = kernel.value(v).constant;
  for (NodeId n = 0; n < static_cast<NodeId>(kernel.num_nodes()); ++n) {
    const Node& node = kernel.node(n);
    if (node.op == "prim.Reshape" && constant[node.inputs[0]]) {
      const Tensor& c = *constant[node.inputs[0]];
      Tensor reshaped(c.dtype(), kernel.value(node.outputs[0]).type.shape);
      for (int64_t i = 0; i < c.numel(); ++i) reshaped.set(i, c.get(i));
      constant[node.outputs[0]] = std::move(reshaped);
      continue;
    }
    std::vector<ValueId> inputs;
    for (ValueId in : node.inputs) {
      if (constant[in] && to[in] == kNoValue) {
        const std::string& name = kernel.value(in).name;
        // Rank-0 scalars are elementwise operands as they are; others only broadcast.
        if (constant[in]->shape().empty()) {
          to[in] = b.constant(*constant[in], name);
        } else {
          if (node.op != "prim.Broadcast") return std::nullopt;
          std::optional<Tensor> c = block_shaped_constant(*constant[in], block);
          if (!c) return std::nullopt;
          to[in] = b.constant(std::move(*c), name);
        }
      }
      if (to[in] == kNoValue) return std::nullopt;  // a kernel output only a reshape computes
      inputs.push_back(to[in]);
    }
    const Shape& shape = kernel.value(node.outputs[0]).type.shape;
    if (!whole_channel_blocks(shape, block)) return std::nullopt;
    const std::string& name = kernel.value(node.outputs[0]).name;
    const OpSchema* schema = find_op(node.op);
    if (schema != nullptr && schema->category == Category::Elementwise) {
      to[node.outputs[0]] = b.op(node.op, inputs, node.attrs, name);
    } else if (node.op == "prim.Broadcast") {
      // From one value per channel (or per tensor), or a no-op: the block shapes broadcast so.
      const Shape& from = kernel.value(node.inputs[0]).type.shape;
      if (from != shape && !per_channel(from, block) && num_elements(from) != 1)
        return std::nullopt;
      to[node.outputs[0]] = b.op(node.op, inputs, {{"shape", block_shape(shape, block)}}, name);
    } else if (node.op == "prim.Concat") {
      int64_t axis = attr_int(node.attrs, "axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(shape.size());
      if (axis != 1) return std::nullopt;
      for (ValueId in : node.inputs)
        if (!whole_channel_blocks(kernel.value(in).type.shape, block)) return std::nullopt;
      to[node.outputs[0]] = b.op(node.op, inputs, {{"axis", int64_t{1}}}, name);
    } else {
      return std::nullopt;
    }
  }
  for (ValueId o : kernel.outputs()) {
    if (to[o] == kNoValue) return std::nullopt;
    b.output(to[o]);
  }
  return out;
}

}  // namespace orch::stitch
