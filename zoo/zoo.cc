#include "zoo/zoo.h"

#include <string>

#include "ir/error.h"

namespace orch::zoo {
namespace {

constexpr ModelInfo kModels[] = {
    {.name = "candy",
     .description = "Fast neural style transfer (TransformerNet, ONNX zoo candy-9)",
     .size_kind = "resolution",
     .default_size = 224,
     .size_multiple = 4,
     .build = build_candy},
    {.name = "segformer-b0",
     .description = "Segformer-B0 semantic segmentation, ADE20K head (150 classes)",
     .size_kind = "resolution",
     .default_size = 512,
     .size_multiple = 32,
     .build = build_segformer_b0},
    {.name = "efficientvit-b1",
     .description = "EfficientViT-B1 ImageNet classifier (ReLU linear attention, MBConv)",
     .size_kind = "resolution",
     .default_size = 512,
     .size_multiple = 32,
     .build = build_efficientvit_b1},
    {.name = "yolox-nano",
     .description = "YOLOX-Nano detector (Focus, depthwise CSP, SiLU, SPP, PAN), 80 classes",
     .size_kind = "resolution",
     .default_size = 416,
     .size_multiple = 32,
     .build = build_yolox_nano},
    {.name = "yolov4",
     .description = "YOLOv4 detector (CSPDarknet53 with Mish, SPP, PANet with LeakyReLU)",
     .size_kind = "resolution",
     .default_size = 416,
     .size_multiple = 32,
     .build = build_yolov4},
    {.name = "vit-b16-layer",
     .description = "One ViT-B/16 encoder layer (timm Block, pre-norm, fused qkv), 197 tokens",
     .size_kind = "sequence",
     .default_size = 197,
     .size_multiple = 1,
     .build = build_vit_b16_layer},
    {.name = "bert-base-layer",
     .description = "One BERT-base encoder layer (Hugging Face BertLayer, post-norm), 128 tokens",
     .size_kind = "sequence",
     .default_size = 128,
     .size_multiple = 1,
     .build = build_bert_base_layer},
    {.name = "transformer-tiny",
     .description = "A small pre-norm encoder layer (hidden 64, 4 heads, GELU MLP 256), the demo",
     .size_kind = "sequence",
     .default_size = 32,
     .size_multiple = 1,
     .build = build_transformer_tiny},
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
