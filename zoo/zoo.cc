#include "zoo/zoo.h"

#include <string>

#include "ir/error.h"

namespace orch::zoo {
namespace {

constexpr ModelInfo kModels[] = {
    {"candy", "Fast neural style transfer (TransformerNet, ONNX zoo candy-9)", "resolution", 224, 4,
     build_candy},
};

}  // namespace

std::span<const ModelInfo> all_models() {
  return kModels;
}

const ModelInfo& find_model(std::string_view name) {
  std::string known;
  for (const ModelInfo& m : kModels) {
    if (m.name == name) return m;
    known += known.empty() ? "" : ", ";
    known += m.name;
  }
  fail("unknown zoo model '{}' (known: {})", name, known);
}

Graph build_model(std::string_view name, ModelOptions options) {
  const ModelInfo& model = find_model(name);
  check(options.batch >= 1, "{}: batch must be at least 1, got {}", name, options.batch);
  if (options.size == 0) options.size = model.default_size;
  check(options.size > 0 && options.size % model.size_multiple == 0,
        "{}: {} must be a positive multiple of {}, got {}", name, model.size_kind,
        model.size_multiple, options.size);
  return model.build(options);
}

}  // namespace orch::zoo
