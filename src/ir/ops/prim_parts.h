// Private to src/ir/ops/prim_*.cc: each file registers the primitives of one category.
#pragma once

#include <utility>

#include "ir/ops/prim.h"

namespace orch::prim {

using FormTable = std::vector<std::pair<std::string_view, OnnxFormFn>>;

void add_elementwise_prims(std::vector<OpSchema>& table, FormTable& forms);
void add_layout_prims(std::vector<OpSchema>& table, FormTable& forms);
void add_linear_prims(std::vector<OpSchema>& table, FormTable& forms);

/// Runs the shape rule of the ONNX form `form` on the types of `in`.
std::vector<TensorType> infer_form(const OnnxForm& form, const InferInput& in);

/// The shape rule of a primitive whose ONNX form is built by `Form`.
template <OnnxFormFn Form>
std::vector<TensorType> infer_via(const InferInput& in) {
  std::vector<TensorType> types;
  for (size_t i = 0; i < in.types.size(); ++i) types.push_back(in.type(i));
  return infer_form(Form(in.attrs, types), in);
}

/// The loop axis `i` as an expression (shorthand for the index maps).
inline IndexExpr axis(int64_t i) {
  return IndexExpr::var(static_cast<int>(i));
}

/// A rank-1 i64 tensor.
Tensor int_tensor(const std::vector<int64_t>& values);

/// A required ints attribute; throws naming it when absent.
std::vector<int64_t> required_ints(const Attributes& attrs, std::string_view name);

}  // namespace orch::prim
