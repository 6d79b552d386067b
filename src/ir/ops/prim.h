// The primitives that fission produces (`prim.*` ops, Korch §3). Each primitive is defined by a
// standard ONNX op it equals (its "ONNX form": the ONNX op, its attributes, and constant inputs
// built from the primitive's attributes). The primitive's shape rule, its reference kernel and
// its ONNX export all go through that one form, so they cannot disagree. Primitives take their
// parameters as attributes, never as constant inputs.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/op_registry.h"

namespace orch::prim {

/// One input of an ONNX form: the primitive's input `input`, or a constant when input < 0 (an
/// absent optional input when that constant is undefined).
struct OnnxArg {
  int input = -1;
  Tensor constant;
};

/// The standard ONNX op a primitive instance equals.
struct OnnxForm {
  std::string op;
  Attributes attrs;
  std::vector<OnnxArg> args;
};

/// Validates a primitive's attributes against its input types and returns its ONNX form.
using OnnxFormFn = OnnxForm (*)(const Attributes& attrs, std::span<const TensorType> inputs);

/// The ONNX form of primitive `op`; throws when `op` is not a primitive or the node is invalid.
OnnxForm onnx_form(std::string_view op, const Attributes& attrs,
                   std::span<const TensorType> inputs);

/// True for the `prim.*` ops.
bool is_primitive(std::string_view op);

/// An entry of prim.Elementwise's function table: `fn` name and the ONNX op computing it.
struct ElementwiseFn {
  std::string_view name;
  std::string_view onnx;
  int min_arity = 1;
  int max_arity = 1;
};

/// nullptr when `name` is not in the table.
const ElementwiseFn* find_elementwise_fn(std::string_view name);

/// Names of prim.Reduce's kinds: sum, max, min, prod.
bool is_reduce_kind(std::string_view kind);

}  // namespace orch::prim
