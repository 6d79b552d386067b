// The zoo models: each builds, verifies, survives an ONNX round trip, runs in the interpreter at
// a small size, and has the published parameter count at full size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "driver/model_stats.h"
#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/verifier.h"
#include "zoo/zoo.h"

namespace orch::zoo {
namespace {

struct ZooCase {
  std::string name;
  int64_t small_size;
  /// Output shapes at batch 1 and the small size, worked out from the architecture by hand.
  std::vector<Shape> small_outputs;
  /// Published parameter count and the relative tolerance the comparison allows.
  double published_params;
  double tolerance;
};

// Published parameter counts (see the report of issue 13 for sources):
const std::vector<ZooCase>& cases() {
  static const std::vector<ZooCase> kCases = {
      // pytorch/examples TransformerNet: 1,679,235 weights (1.68M) counted from its layers.
      {"candy", 32, {{1, 3, 32, 32}}, 1.68e6, 0.01},
      // SegFormer paper (Xie et al. 2021) Table 1: B0 3.8M (encoder 3.4M + decoder 0.4M); the
      // Hugging Face card of nvidia/segformer-b0-finetuned-ade-512-512: 3.75M.
      {"segformer-b0", 64, {{1, 150, 16, 16}}, 3.75e6, 0.03},
      // EfficientViT paper (Cai et al. 2023) Table 2 / mit-han-lab model zoo: B1 9.1M.
      {"efficientvit-b1", 64, {{1, 1000}}, 9.1e6, 0.02},
      // YOLOX README (Megvii-BaseDetection/YOLOX) and paper Table 4: Nano 0.91M; at 64x64 the
      // head sees 8x8 + 4x4 + 2x2 = 84 anchors.
      {"yolox-nano", 64, {{1, 84, 85}}, 0.91e6, 0.02},
      // YOLOv4 paper (Bochkovskiy et al. 2020) / darknet yolov4.cfg: 64.0M (64,363,101 weights
      // in darknet's count, BN included).
      {"yolov4", 32, {{1, 255, 4, 4}, {1, 255, 2, 2}, {1, 255, 1, 1}}, 64.0e6, 0.02},
      // 4 * 768 * 768 + 4 * 768 (attention) + 2 * 768 * 3072 + 3072 + 768 (MLP) + 2 * 1536
      // (norms) = 7,087,872 for both layers: 85M (ViT-B) and 110M (BERT-base) total minus
      // embeddings, over 12 layers.
      {"vit-b16-layer", 8, {{1, 8, 768}}, 7.087872e6, 0.001},
      {"bert-base-layer", 8, {{1, 8, 768}}, 7.087872e6, 0.001},
      // 4 * 64 * 64 + 4 * 64 + 64 * 256 + 256 + 256 * 64 + 64 + 2 * 128 = 49,984 (the count
      // also sees the scalar constants: attention scale, GELU).
      {"transformer-tiny", 8, {{1, 8, 64}}, 49984, 0.001},
  };
  return kCases;
}

void PrintTo(const ZooCase& c, std::ostream* os) {
  *os << c.name;
}

std::string case_name(const ::testing::TestParamInfo<ZooCase>& info) {
  std::string name = info.param.name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class ZooModel : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ZooModel, SmallInstanceRoundTripsAndRuns) {
  const ZooCase& c = GetParam();
  Graph graph = build_model(c.name, {.size = c.small_size});
  verify(graph);

  Graph reimported = frontend::import_onnx_bytes(frontend::export_onnx_bytes(graph), ".");
  EXPECT_EQ(structural_hash(reimported), structural_hash(graph));

  std::vector<Tensor> outputs = interp::interpret(graph, interp::random_inputs(graph, 7));
  ASSERT_EQ(outputs.size(), c.small_outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(outputs[i].shape(), c.small_outputs[i]) << "output " << i;
    std::vector<double> values = outputs[i].to_doubles();
    EXPECT_TRUE(
        std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }))
        << "output " << i;
  }
}

TEST_P(ZooModel, FullSizeHasPublishedParameterCount) {
  const ZooCase& c = GetParam();
  Graph graph = build_model(c.name);
  auto params = static_cast<double>(driver::model_stats(graph).parameters);
  EXPECT_NEAR(params / c.published_params, 1.0, c.tolerance) << params << " parameters";
}

TEST_P(ZooModel, BatchScalesEveryInputAndOutput) {
  const ZooCase& c = GetParam();
  Graph graph = build_model(c.name, {.batch = 2, .size = c.small_size});
  for (ValueId v : graph.inputs()) EXPECT_EQ(graph.value(v).type.shape.at(0), 2);
  for (ValueId v : graph.outputs()) EXPECT_EQ(graph.value(v).type.shape.at(0), 2);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooModel, ::testing::ValuesIn(cases()), case_name);

TEST(Zoo, EveryRegisteredModelIsTested) {
  for (const ModelInfo& m : all_models())
    EXPECT_TRUE(std::any_of(cases().begin(), cases().end(), [&](const ZooCase& c) {
      return c.name == m.name;
    })) << m.name;
}

TEST(Zoo, BuildsAreDeterministicPerSeed) {
  uint64_t first = structural_hash(build_model("candy", {.size = 32}));
  EXPECT_EQ(structural_hash(build_model("candy", {.size = 32})), first);
  EXPECT_NE(structural_hash(build_model("candy", {.size = 32, .seed = 1})), first);
}

std::string error_of(std::string_view name, ModelOptions options) {
  try {
    build_model(name, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Zoo, UnknownModelListsKnownNames) {
  std::string message = error_of("resnet", {});
  EXPECT_NE(message.find("unknown zoo model 'resnet' (known: candy"), std::string::npos) << message;
}

TEST(Zoo, BadSizeAndBatchAreRejected) {
  EXPECT_EQ(error_of("candy", {.size = 30}),
            "candy: resolution must be a positive multiple of 4, got 30");
  EXPECT_EQ(error_of("candy", {.size = -8}),
            "candy: resolution must be a positive multiple of 4, got -8");
  EXPECT_EQ(error_of("candy", {.batch = 0}), "candy: batch must be at least 1, got 0");
}

}  // namespace
}  // namespace orch::zoo
