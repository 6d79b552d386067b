// Elementwise, Reduce and Broadcast primitives. prim.Elementwise applies one function of a fixed
// table to inputs of one shape (rank-0 inputs act as uniform scalars; there is no implicit
// broadcasting); prim.Reduce keeps reduced dims as size 1; prim.Broadcast expands size-1 dims.
#include <algorithm>

#include "ir/error.h"
#include "ir/ops/prim_parts.h"
#include "ir/ops/shape_util.h"

namespace orch::prim {
namespace {

constexpr ElementwiseFn kFns[] = {
    {"add", "Add", 2, 2},
    {"sub", "Sub", 2, 2},
    {"mul", "Mul", 2, 2},
    {"div", "Div", 2, 2},
    {"pow", "Pow", 2, 2},
    {"mod", "Mod", 2, 2},
    {"fmod", "Mod", 2, 2},
    {"min", "Min", 1, kVariadic},
    {"max", "Max", 1, kVariadic},
    {"shl", "BitShift", 2, 2},
    {"shr", "BitShift", 2, 2},
    {"neg", "Neg"},
    {"abs", "Abs"},
    {"sign", "Sign"},
    {"sqrt", "Sqrt"},
    {"exp", "Exp"},
    {"log", "Log"},
    {"erf", "Erf"},
    {"tanh", "Tanh"},
    {"sigmoid", "Sigmoid"},
    {"relu", "Relu"},
    {"reciprocal", "Reciprocal"},
    {"floor", "Floor"},
    {"ceil", "Ceil"},
    {"round", "Round"},
    {"sin", "Sin"},
    {"cos", "Cos"},
    {"tan", "Tan"},
    {"asin", "Asin"},
    {"acos", "Acos"},
    {"atan", "Atan"},
    {"sinh", "Sinh"},
    {"cosh", "Cosh"},
    {"asinh", "Asinh"},
    {"acosh", "Acosh"},
    {"atanh", "Atanh"},
    {"equal", "Equal", 2, 2},
    {"less", "Less", 2, 2},
    {"greater", "Greater", 2, 2},
    {"less_equal", "LessOrEqual", 2, 2},
    {"greater_equal", "GreaterOrEqual", 2, 2},
    {"and", "And", 2, 2},
    {"or", "Or", 2, 2},
    {"xor", "Xor", 2, 2},
    {"not", "Not"},
    {"where", "Where", 3, 3},
    {"isnan", "IsNaN"},
    {"isinf", "IsInf"},
    {"isposinf", "IsInf"},
    {"isneginf", "IsInf"},
    {"cast", "Cast"},
    {"identity", "Identity"},
};

// Attributes of the ONNX op that the function name fixes.
Attributes fn_attrs(const ElementwiseFn& fn, const Attributes& attrs) {
  Attributes out;
  if (fn.name == "mod") out["fmod"] = int64_t{0};
  if (fn.name == "fmod") out["fmod"] = int64_t{1};
  if (fn.name == "shl") out["direction"] = std::string("LEFT");
  if (fn.name == "shr") out["direction"] = std::string("RIGHT");
  if (fn.name == "isposinf") out["detect_negative"] = int64_t{0};
  if (fn.name == "isneginf") out["detect_positive"] = int64_t{0};
  if (fn.name == "cast") {
    check(has_attr(attrs, "to"), "fn 'cast' needs attribute 'to'");
    out["to"] = attr_int(attrs, "to", 0);
  }
  return out;
}

OnnxForm elementwise_form(const Attributes& attrs, std::span<const TensorType> inputs) {
  check(has_attr(attrs, "fn"), "attribute 'fn' is required");
  std::string name = attr_string(attrs, "fn", "");
  const ElementwiseFn* fn = find_elementwise_fn(name);
  check(fn != nullptr, "fn '{}' is not in prim.Elementwise's function table", name);
  int n = static_cast<int>(inputs.size());
  check(n >= fn->min_arity && n <= fn->max_arity, "fn '{}' takes {} to {} inputs, got {}", name,
        fn->min_arity, fn->max_arity, n);
  for (const auto& [key, value] : attrs)
    check(key == "fn" || (key == "to" && name == "cast"), "unexpected attribute '{}'", key);
  const Shape* shape = nullptr;
  for (const TensorType& t : inputs) {
    if (t.shape.empty()) continue;
    if (shape == nullptr) shape = &t.shape;
    check(t.shape == *shape,
          "inputs must have one shape (or be rank-0 scalars): {} vs {}; broadcasts are explicit "
          "prim.Broadcast nodes",
          format_shape(*shape), format_shape(t.shape));
  }
  OnnxForm form{std::string(fn->onnx), fn_attrs(*fn, attrs), {}};
  for (int i = 0; i < n; ++i) form.args.push_back({i, {}});
  return form;
}

IndexMap elementwise_map(const Attributes&, std::span<const TensorType> inputs, const TensorType&) {
  IndexMap map;
  for (const TensorType& t : inputs) {
    std::vector<IndexExpr> dims;
    for (size_t d = 0; d < t.shape.size(); ++d) dims.push_back(axis(d));
    map.inputs.push_back(std::move(dims));
  }
  return map;
}

std::vector<int64_t> reduce_axes(const Attributes& attrs, int64_t rank) {
  std::vector<int64_t> axes = ops::normalize_axes(required_ints(attrs, "axes"), rank);
  check(!axes.empty(), "axes must not be empty");
  std::sort(axes.begin(), axes.end());
  return axes;
}

OnnxForm reduce_form(const Attributes& attrs, std::span<const TensorType> inputs) {
  std::string kind = attr_string(attrs, "kind", "");
  check(is_reduce_kind(kind), "kind must be sum, max, min or prod, got '{}'", kind);
  std::vector<int64_t> axes = reduce_axes(attrs, static_cast<int64_t>(inputs[0].shape.size()));
  OnnxForm form{kind == "sum"   ? "ReduceSum"
                : kind == "max" ? "ReduceMax"
                : kind == "min" ? "ReduceMin"
                                : "ReduceProd",
                {{"keepdims", int64_t{1}}},
                {{0, {}}}};
  if (kind == "sum")
    form.args.push_back({-1, int_tensor(axes)});
  else
    form.attrs["axes"] = axes;
  return form;
}

IndexMap reduce_map(const Attributes& attrs, std::span<const TensorType> inputs,
                    const TensorType&) {
  const Shape& in = inputs[0].shape;
  std::vector<int64_t> axes = reduce_axes(attrs, static_cast<int64_t>(in.size()));
  IndexMap map;
  std::vector<IndexExpr> dims;
  for (size_t d = 0; d < in.size(); ++d) {
    auto it = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d));
    if (it == axes.end()) {
      dims.push_back(axis(d));
    } else {
      dims.push_back(axis(in.size() + map.reduce_extents.size()));
      map.reduce_extents.push_back(in[d]);
    }
  }
  map.inputs.push_back(std::move(dims));
  return map;
}

OnnxForm broadcast_form(const Attributes& attrs, std::span<const TensorType> inputs) {
  std::vector<int64_t> shape = required_ints(attrs, "shape");
  const Shape& in = inputs[0].shape;
  check(shape.size() == in.size(), "shape {} must have the input's rank {}", format_shape(shape),
        in.size());
  for (size_t d = 0; d < in.size(); ++d)
    check(in[d] == shape[d] || in[d] == 1, "dim {} of size {} cannot broadcast to {}", d, in[d],
          shape[d]);
  return {"Expand", {}, {{0, {}}, {-1, int_tensor(shape)}}};
}

IndexMap broadcast_map(const Attributes& attrs, std::span<const TensorType> inputs,
                       const TensorType& output) {
  IndexMap map;
  std::vector<IndexExpr> dims;
  for (size_t d = 0; d < inputs[0].shape.size(); ++d)
    dims.push_back(inputs[0].shape[d] == output.shape[d] ? axis(d) : IndexExpr::constant(0));
  map.inputs.push_back(std::move(dims));
  return map;
}

}  // namespace

const ElementwiseFn* find_elementwise_fn(std::string_view name) {
  for (const ElementwiseFn& fn : kFns)
    if (fn.name == name) return &fn;
  return nullptr;
}

bool is_reduce_kind(std::string_view kind) {
  return kind == "sum" || kind == "max" || kind == "min" || kind == "prod";
}

void add_elementwise_prims(std::vector<OpSchema>& table, FormTable& forms) {
  table.push_back({.name = "prim.Elementwise",
                   .max_inputs = kVariadic,
                   .infer = infer_via<elementwise_form>,
                   .category = Category::Elementwise,
                   .index_map = elementwise_map});
  table.push_back({.name = "prim.Reduce",
                   .infer = infer_via<reduce_form>,
                   .category = Category::Reduce,
                   .index_map = reduce_map});
  table.push_back({.name = "prim.Broadcast",
                   .infer = infer_via<broadcast_form>,
                   .category = Category::Broadcast,
                   .index_map = broadcast_map});
  forms.insert(forms.end(), {{"prim.Elementwise", elementwise_form},
                             {"prim.Reduce", reduce_form},
                             {"prim.Broadcast", broadcast_form}});
}

}  // namespace orch::prim
