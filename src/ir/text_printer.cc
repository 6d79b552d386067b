#include <fmt/format.h>

#include "ir/text_format.h"

namespace orch {
namespace {

bool is_bare(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string name_text(std::string_view name) {
  return is_bare(name) ? std::string(name) : quoted(name);
}

std::string float_text(double v, DType t) {
  // fmt prints the shortest text that parses back to the same float.
  if (t == DType::f64) return fmt::format("{}", v);
  return fmt::format("{}", static_cast<float>(v));
}

std::string tensor_text(const Tensor& t) {
  std::string out = fmt::format("{}{}{{", dtype_name(t.dtype()), format_shape(t.shape()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i) out += ", ";
    if (is_float(t.dtype()))
      out += float_text(t.get(i), t.dtype());
    else if (t.dtype() == DType::u64)
      out += fmt::format("{}", static_cast<uint64_t>(t.get_int(i)));
    else
      out += fmt::format("{}", t.get_int(i));
  }
  return out + "}";
}

std::string float_attr_text(float v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

template <typename T, typename F>
std::string list_text(const std::vector<T>& items, std::string_view empty, F&& item_text) {
  if (items.empty()) return fmt::format("{}[]", empty);
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + item_text(items[i]);
  return out + "]";
}

std::string attr_text(const AttrValue& value) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) return fmt::format("{}", x);
        if constexpr (std::is_same_v<T, float>) return float_attr_text(x);
        if constexpr (std::is_same_v<T, std::string>) return quoted(x);
        if constexpr (std::is_same_v<T, Tensor>) return tensor_text(x);
        if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return list_text(x, "ints", [](int64_t v) { return fmt::format("{}", v); });
        if constexpr (std::is_same_v<T, std::vector<float>>)
          return list_text(x, "floats", float_attr_text);
        if constexpr (std::is_same_v<T, std::vector<std::string>>)
          return list_text(x, "strings", [](const std::string& s) { return quoted(s); });
      },
      value);
}

}  // namespace

std::string print_graph(const Graph& graph) {
  auto ref = [&](ValueId v) { return "%" + name_text(graph.value(v).name); };
  auto typed = [&](ValueId v) { return ref(v) + ": " + format_type(graph.value(v).type); };

  std::string out = "graph " + name_text(graph.name) + "(";
  for (size_t i = 0; i < graph.inputs().size(); ++i)
    out += (i ? ", " : "") + typed(graph.inputs()[i]);
  out += ") {\n";
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
    if (graph.value(v).is_constant())
      out += fmt::format("  const {} = {}\n", ref(v), tensor_text(graph.value(v).constant));
  for (const Node& node : graph.nodes()) {
    out += "  ";
    for (size_t i = 0; i < node.outputs.size(); ++i)
      out += (i ? ", " : "") + typed(node.outputs[i]);
    out += " = " + name_text(node.op) + "(";
    for (size_t i = 0; i < node.inputs.size(); ++i)
      out +=
          (i ? ", " : "") + (node.inputs[i] == kNoValue ? std::string("_") : ref(node.inputs[i]));
    out += ")";
    if (!node.attrs.empty()) {
      out += " {";
      bool first = true;
      for (const auto& [name, value] : node.attrs) {
        out += (first ? "" : ", ") + name_text(name) + " = " + attr_text(value);
        first = false;
      }
      out += "}";
    }
    if (!node.name.empty()) out += " @" + name_text(node.name);
    out += "\n";
  }
  out += "  return";
  for (size_t i = 0; i < graph.outputs().size(); ++i)
    out += (i ? ", " : " ") + ref(graph.outputs()[i]);
  return out + "\n}\n";
}

}  // namespace orch
