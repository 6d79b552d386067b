// The model zoo: the benchmark architectures at their published shapes, built with the IR
// builder and random weights from a fixed seed, so every run builds the identical model.
//
//   Graph g = zoo::build_model("segformer-b0", {.batch = 16});
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "ir/graph.h"

namespace orch::zoo {

/// How to instantiate a zoo model. `size` is the input resolution (square images) or the
/// sequence length; 0 means the model's default.
struct ModelOptions {
  int64_t batch = 1;
  int64_t size = 0;
  uint64_t seed = 20240601;
};

/// One registry entry.
struct ModelInfo {
  std::string_view name;
  std::string_view description;
  /// What `size` means: "resolution" or "sequence".
  std::string_view size_kind;
  int64_t default_size;
  /// `size` must be a positive multiple of this (the network's total stride).
  int64_t size_multiple;
  /// Builds the model; options are already validated and `size` is set.
  Graph (*build)(const ModelOptions& options);
};

/// Every zoo model, in listing order.
std::span<const ModelInfo> all_models();
/// The entry named `name`; throws an Error listing the known names otherwise.
const ModelInfo& find_model(std::string_view name);
/// Validates the options (batch >= 1, size a positive multiple of the model's stride), fills in
/// the default size and builds the model.
Graph build_model(std::string_view name, ModelOptions options = {});

// The builders, one file per architecture.
Graph build_candy(const ModelOptions& options);
Graph build_segformer_b0(const ModelOptions& options);
Graph build_efficientvit_b1(const ModelOptions& options);
Graph build_yolox_nano(const ModelOptions& options);
Graph build_yolov4(const ModelOptions& options);
Graph build_vit_b16_layer(const ModelOptions& options);
Graph build_bert_base_layer(const ModelOptions& options);
Graph build_transformer_tiny(const ModelOptions& options);

}  // namespace orch::zoo
