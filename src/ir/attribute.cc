#include "ir/attribute.h"

#include <cstring>

#include "ir/error.h"

namespace orch {
namespace {

template <typename T>
const T* find_typed(const Attributes& attrs, std::string_view name, std::string_view kind) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return nullptr;
  const T* value = std::get_if<T>(&it->second);
  check(value != nullptr, "attribute '{}' must be {}, got {}", name, kind,
        attr_kind_name(it->second));
  return value;
}

}  // namespace

std::string_view attr_kind_name(const AttrValue& value) {
  static constexpr std::string_view kNames[] = {"int",  "float",  "string", "tensor",
                                                "ints", "floats", "strings"};
  return kNames[value.index()];
}

int64_t attr_int(const Attributes& attrs, std::string_view name, int64_t fallback) {
  const auto* v = find_typed<int64_t>(attrs, name, "int");
  return v ? *v : fallback;
}

float attr_float(const Attributes& attrs, std::string_view name, float fallback) {
  auto it = attrs.find(name);
  // ONNX exporters sometimes write an integral float attribute as an int.
  if (it != attrs.end() && std::holds_alternative<int64_t>(it->second))
    return static_cast<float>(std::get<int64_t>(it->second));
  const auto* v = find_typed<float>(attrs, name, "float");
  return v ? *v : fallback;
}

std::string attr_string(const Attributes& attrs, std::string_view name, std::string fallback) {
  const auto* v = find_typed<std::string>(attrs, name, "string");
  return v ? *v : fallback;
}

std::vector<int64_t> attr_ints(const Attributes& attrs, std::string_view name,
                               std::vector<int64_t> fallback) {
  const auto* v = find_typed<std::vector<int64_t>>(attrs, name, "ints");
  return v ? *v : fallback;
}

std::vector<float> attr_floats(const Attributes& attrs, std::string_view name,
                               std::vector<float> fallback) {
  const auto* v = find_typed<std::vector<float>>(attrs, name, "floats");
  return v ? *v : fallback;
}

std::vector<std::string> attr_strings(const Attributes& attrs, std::string_view name) {
  const auto* v = find_typed<std::vector<std::string>>(attrs, name, "strings");
  return v ? *v : std::vector<std::string>{};
}

const Tensor* attr_tensor(const Attributes& attrs, std::string_view name) {
  return find_typed<Tensor>(attrs, name, "tensor");
}

bool has_attr(const Attributes& attrs, std::string_view name) {
  return attrs.find(name) != attrs.end();
}

bool attr_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, Tensor>) {
          return x.identical(y);
        } else if constexpr (std::is_same_v<T, float>) {
          // Bitwise, so that a NaN attribute equals itself.
          return std::memcmp(&x, &y, sizeof x) == 0;
        } else {
          return x == y;
        }
      },
      a);
}

}  // namespace orch
