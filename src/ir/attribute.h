// Node attributes: the ONNX attribute kinds orch supports, kept in name order.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace orch {

/// One attribute value. Floats are single precision, as in ONNX.
using AttrValue = std::variant<int64_t, float, std::string, Tensor, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>>;

/// Attributes by name; std::map keeps a canonical order for printing and hashing.
using Attributes = std::map<std::string, AttrValue, std::less<>>;

/// "int", "float", "string", "tensor", "ints", "floats", "strings".
std::string_view attr_kind_name(const AttrValue& value);

/// Typed lookups for rules and kernels. `what` names the node in error messages.
/// A present attribute of the wrong kind is an error; a missing one yields the default.
int64_t attr_int(const Attributes& attrs, std::string_view name, int64_t fallback);
float attr_float(const Attributes& attrs, std::string_view name, float fallback);
std::string attr_string(const Attributes& attrs, std::string_view name, std::string fallback);
std::vector<int64_t> attr_ints(const Attributes& attrs, std::string_view name,
                               std::vector<int64_t> fallback = {});
std::vector<float> attr_floats(const Attributes& attrs, std::string_view name,
                               std::vector<float> fallback = {});
std::vector<std::string> attr_strings(const Attributes& attrs, std::string_view name);
/// Returns nullptr when absent.
const Tensor* attr_tensor(const Attributes& attrs, std::string_view name);
bool has_attr(const Attributes& attrs, std::string_view name);

/// Equality including tensor contents.
bool attr_equal(const AttrValue& a, const AttrValue& b);

}  // namespace orch
