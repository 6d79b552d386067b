// Linear primitives (outputs linear in each input): batched MatMul without broadcasting, and
// Conv / ConvTranspose without bias and with explicit pads (no auto_pad). Their index maps use
// reduce axes: MatMul's k; Conv's input channel within the group and the kernel window.
#include "ir/error.h"
#include "ir/ops/prim_parts.h"

namespace orch::prim {
namespace {

OnnxForm matmul_form(const Attributes&, std::span<const TensorType> inputs) {
  const Shape& a = inputs[0].shape;
  const Shape& b = inputs[1].shape;
  check(a.size() >= 2 && a.size() == b.size(),
        "inputs must have one rank >= 2 (batch dims are not broadcast): {} and {}", format_shape(a),
        format_shape(b));
  for (size_t d = 0; d + 2 < a.size(); ++d)
    check(a[d] == b[d], "batch dim {} differs: {} vs {}", d, a[d], b[d]);
  return {"MatMul", {}, {{0, {}}, {1, {}}}};
}

IndexMap matmul_map(const Attributes&, std::span<const TensorType> inputs, const TensorType&) {
  size_t rank = inputs[0].shape.size();
  IndexMap map{{inputs[0].shape[rank - 1]}, {{}, {}}};
  IndexExpr k = axis(rank);
  for (size_t d = 0; d + 2 < rank; ++d) {
    map.inputs[0].push_back(axis(d));
    map.inputs[1].push_back(axis(d));
  }
  map.inputs[0].insert(map.inputs[0].end(), {axis(rank - 2), k});
  map.inputs[1].insert(map.inputs[1].end(), {k, axis(rank - 1)});
  return map;
}

// The attributes both convolutions require explicitly.
Attributes conv_attrs(const Attributes& attrs, bool transposed) {
  Attributes out;
  std::vector<std::string_view> names = {"strides", "dilations", "pads"};
  if (transposed) names.push_back("output_padding");
  for (std::string_view name : names) out[std::string(name)] = required_ints(attrs, name);
  out["group"] = attr_int(attrs, "group", 1);
  for (const auto& [key, value] : attrs)
    check(key == "group" || out.count(key) != 0, "unexpected attribute '{}'", key);
  return out;
}

OnnxForm conv_form(const Attributes& attrs, std::span<const TensorType>) {
  return {"Conv", conv_attrs(attrs, false), {{0, {}}, {1, {}}}};
}

OnnxForm conv_transpose_form(const Attributes& attrs, std::span<const TensorType>) {
  return {"ConvTranspose", conv_attrs(attrs, true), {{0, {}}, {1, {}}}};
}

struct ConvGeometry {
  std::vector<int64_t> strides, dilations, pads;
  int64_t group;
  size_t spatial;
};

ConvGeometry geometry(const Attributes& attrs, const TensorType& x) {
  return {attr_ints(attrs, "strides"), attr_ints(attrs, "dilations"), attr_ints(attrs, "pads"),
          attr_int(attrs, "group", 1), x.shape.size() - 2};
}

// Y[n, m, o] = sum over c < C/g and window k of X[n, g(m)*C/g + c, o*s + k*d - p] * W[m, c, k].
IndexMap conv_map(const Attributes& attrs, std::span<const TensorType> inputs,
                  const TensorType& output) {
  ConvGeometry g = geometry(attrs, inputs[0]);
  const Shape& w = inputs[1].shape;
  int64_t c_per_group = w[1];
  int64_t m_per_group = output.shape[1] / g.group;
  size_t r = output.shape.size();  // first reduce axis: c; then one per kernel dim
  IndexMap map{{c_per_group}, {{axis(0)}, {axis(1), axis(r)}}};
  map.inputs[0].push_back(IndexExpr::floordiv(axis(1), m_per_group) * c_per_group + axis(r));
  for (size_t s = 0; s < g.spatial; ++s) {
    map.reduce_extents.push_back(w[2 + s]);
    IndexExpr k = axis(r + 1 + s);
    map.inputs[0].push_back(axis(2 + s) * g.strides[s] + k * g.dilations[s] - g.pads[s]);
    map.inputs[1].push_back(k);
  }
  return map;
}

// Y[n, m, o] += X[n, c, i] * W[c, m', k] where o = i*s + k*d - p: i = (o + p - k*d) / s.
IndexMap conv_transpose_map(const Attributes& attrs, std::span<const TensorType> inputs,
                            const TensorType& output) {
  ConvGeometry g = geometry(attrs, inputs[0]);
  const Shape& w = inputs[1].shape;
  int64_t c_per_group = w[0] / g.group;
  int64_t m_per_group = w[1];
  size_t r = output.shape.size();
  IndexExpr channel = IndexExpr::floordiv(axis(1), m_per_group) * c_per_group + axis(r);
  IndexMap map{{c_per_group},
               {{axis(0), channel}, {channel, IndexExpr::mod(axis(1), m_per_group)}}};
  for (size_t s = 0; s < g.spatial; ++s) {
    map.reduce_extents.push_back(w[2 + s]);
    IndexExpr k = axis(r + 1 + s);
    map.inputs[0].push_back(
        IndexExpr::floordiv(axis(2 + s) + k * -g.dilations[s] + g.pads[s], g.strides[s]));
    map.inputs[1].push_back(k);
  }
  return map;
}

}  // namespace

void add_linear_prims(std::vector<OpSchema>& table, FormTable& forms) {
  table.push_back({.name = "prim.MatMul",
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .infer = infer_via<matmul_form>,
                   .category = Category::Linear,
                   .index_map = matmul_map});
  table.push_back({.name = "prim.Conv",
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .infer = infer_via<conv_form>,
                   .category = Category::Linear,
                   .index_map = conv_map});
  table.push_back({.name = "prim.ConvTranspose",
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .infer = infer_via<conv_transpose_form>,
                   .category = Category::Linear,
                   .index_map = conv_transpose_map});
  forms.insert(forms.end(), {{"prim.MatMul", matmul_form},
                             {"prim.Conv", conv_form},
                             {"prim.ConvTranspose", conv_transpose_form}});
}

}  // namespace orch::prim
