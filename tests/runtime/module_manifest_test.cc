// runtime::parse_manifest on its own: a real manifest, and damaged ones (integers that are
// floats or overflow, locations outside their regions) that must be errors naming the field;
// and the one check Module::load adds, an external kernel's weight size.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../stitch/stitch_test_util.h"
#include "ir/error.h"
#include "orch/module.h"
#include "runtime/module_manifest.h"

namespace orch::runtime {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A module of one kernel: y = f(x, w), x an input, w in weights.bin, y the output.
json small_manifest() {
  json x = {{"value", "x"},      {"dtype", "f32"}, {"shape", {2, 3}},
            {"region", "input"}, {"index", 0},     {"bytes", 24}};
  json w = {{"value", "w"},        {"dtype", "f32"}, {"shape", {3}},
            {"region", "weights"}, {"offset", 64},   {"bytes", 12}};
  json y = {{"value", "y"},      {"dtype", "f32"}, {"shape", {2, 3}},
            {"region", "arena"}, {"offset", 0},    {"bytes", 24}};
  json kernel = {{"name", "k0"},
                 {"backend", "reference"},
                 {"external", true},
                 {"graph", "kernels/k0.orch"},
                 {"weights", {{{"value", "w"}, {"offset", 64}, {"bytes", 12}}}},
                 {"primitives", {{{"op", "prim.Elementwise"}, {"node", "#0"}}}},
                 {"inputs", {x, w}},
                 {"outputs", {y}}};
  return {{"format", "orch-module"},
          {"version", 1},
          {"arena_bytes", 64},
          {"weights_bytes", 128},
          {"weights", "weights.bin"},
          {"library", "kernels.so"},
          {"inputs", {{{"name", "x"}, {"dtype", "f32"}, {"shape", {2, 3}}}}},
          {"outputs",
           {{{"name", "y"},
             {"dtype", "f32"},
             {"shape", {2, 3}},
             {"copy_from", {{"region", "arena"}, {"offset", 0}, {"bytes", 24}}}}}},
          {"kernels", {kernel}}};
}

std::string parse_error(const std::string& text) {
  try {
    parse_manifest(text, "m.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ModuleManifest, ParsesEveryField) {
  ModuleLayout layout = parse_manifest(small_manifest().dump(), "m.json");
  ASSERT_EQ(layout.inputs.size(), 1u);
  EXPECT_EQ(layout.inputs[0].name, "x");
  EXPECT_EQ(layout.inputs[0].type, (TensorType{DType::f32, {2, 3}}));
  ASSERT_EQ(layout.output_copy_from.size(), 1u);
  ASSERT_TRUE(layout.output_copy_from[0].has_value());
  EXPECT_EQ(layout.output_copy_from[0]->region, Region::arena);
  ASSERT_EQ(layout.kernels.size(), 1u);
  EXPECT_EQ(layout.kernels[0].primitives, "prim.Elementwise #0");
  ASSERT_EQ(layout.kernel_inputs[0].size(), 2u);
  EXPECT_EQ(layout.kernel_inputs[0][1].at.region, Region::weights);
  EXPECT_EQ(layout.kernel_inputs[0][1].at.offset, 64);
  ASSERT_TRUE(layout.external[0].has_value());
  EXPECT_EQ(layout.external[0]->graph, "kernels/k0.orch");
  ASSERT_EQ(layout.external[0]->weights.size(), 1u);
  EXPECT_EQ(layout.external[0]->weights[0].bytes, 12);
  EXPECT_EQ(layout.arena_bytes, 64);
  EXPECT_EQ(layout.weights_bytes, 128);
  EXPECT_EQ(layout.weights_file, "weights.bin");
  EXPECT_EQ(layout.library_file, "kernels.so");
}

TEST(ModuleManifest, ParsesTheStitchersManifest) {
  std::ifstream in(std::string(ORCH_SOURCE_DIR) + "/fuzz/seeds/manifest/tiny_mlp.json");
  std::stringstream text;
  text << in.rdbuf();
  ModuleLayout layout = parse_manifest(text.str(), "tiny_mlp.json");
  ASSERT_EQ(layout.inputs.size(), 1u);
  EXPECT_EQ(layout.inputs[0].type, (TensorType{DType::f32, {4, 16}}));
  EXPECT_FALSE(layout.kernels.empty());
  EXPECT_EQ(layout.kernels.size(), layout.external.size());
}

TEST(ModuleManifest, RejectsAFloatWhereAnIntegerBelongs) {
  json m = small_manifest();
  m["arena_bytes"] = 1e300;  // converting it to int64 would be undefined behaviour
  EXPECT_EQ(parse_error(m.dump()), "m.json: field 'arena_bytes' has the wrong type");
  m = small_manifest();
  m["inputs"][0]["shape"] = {2.5, 3};
  EXPECT_EQ(parse_error(m.dump()), "m.json: field 'shape' has the wrong type");
}

TEST(ModuleManifest, RejectsNegativeAndHugeNumbers) {
  json m = small_manifest();
  m["weights_bytes"] = -1;
  EXPECT_EQ(parse_error(m.dump()),
            "m.json: field 'weights_bytes' is out of range [0, 4611686018427387904]");
  m = small_manifest();
  m["inputs"][0]["shape"] = {-2, 3};
  EXPECT_EQ(parse_error(m.dump()),
            "m.json: field 'shape' is out of range [0, 4611686018427387904]");
  m = small_manifest();
  m["version"] = 18446744073709551615u;
  EXPECT_EQ(parse_error(m.dump()),
            "m.json: field 'version' is out of range [-9223372036854775808, 9223372036854775807]");
}

TEST(ModuleManifest, RejectsAShapeWhoseBytesOverflow) {
  json m = small_manifest();
  // 2^31 x 2^31 elements fit in int64, their f32 bytes (2^64) do not.
  m["inputs"][0]["shape"] = {2147483648, 2147483648};
  EXPECT_EQ(parse_error(m.dump()), "m.json: shape [2147483648,2147483648] is too large");
}

TEST(ModuleManifest, RejectsAnOffsetThatWrapsAround) {
  json m = small_manifest();
  // offset + bytes overflows int64: must not wrap to a small, "inside" end.
  m["kernels"][0]["outputs"][0]["offset"] = 4611686018427387900;
  EXPECT_EQ(parse_error(m.dump()), "m.json: kernel k0: value 'y' lies outside its region");
  m = small_manifest();
  m["kernels"][0]["inputs"][1]["offset"] = 120;  // 120 + 12 > 128
  EXPECT_EQ(parse_error(m.dump()), "m.json: kernel k0: value 'w' lies outside its region");
}

TEST(ModuleManifest, RejectsALocationOfAnotherType) {
  json m = small_manifest();
  m["kernels"][0]["inputs"][0]["index"] = 1;  // there is one input
  EXPECT_EQ(parse_error(m.dump()), "m.json: kernel k0: value 'x' lies outside its region");
  m = small_manifest();
  m["kernels"][0]["inputs"][0]["dtype"] = "i32";
  EXPECT_EQ(parse_error(m.dump()), "m.json: kernel k0: value 'x' lies outside its region");
  m = small_manifest();
  m["outputs"][0]["copy_from"]["bytes"] = 20;
  EXPECT_EQ(parse_error(m.dump()), "m.json: output y: value 'y' lies outside its region");
}

TEST(ModuleManifest, RejectsAnExternalWeightOutsideTheWeights) {
  json m = small_manifest();
  // Both at the 2^62 limit: their sum wraps int64 unless the check is written around it.
  m["kernels"][0]["weights"][0]["offset"] = 4611686018427387904;
  m["kernels"][0]["weights"][0]["bytes"] = 4611686018427387904;
  EXPECT_EQ(parse_error(m.dump()), "m.json: weight 'w' lies outside weights.bin");
  m = small_manifest();
  m["kernels"][0]["backend"] = "halide";
  EXPECT_EQ(parse_error(m.dump()), "m.json: kernel k0 has unknown backend 'halide'");
}

// The same module compiled for CUDA: one launch of one function, a scratch buffer.
json cuda_manifest() {
  json m = small_manifest();
  m["format"] = "orch-cuda-module";
  m["library"] = "kernels.cubin";
  m["target"] = "sm_90";
  m["scratch_bytes"] = 256;
  json& k = m["kernels"][0];
  k["backend"] = "cuda";
  k["external"] = false;
  k.erase("graph");
  k.erase("weights");
  k["launches"] = {
      {{"function", "k0_0_y"}, {"blocks", 1}, {"threads", 6}, {"shared_bytes", 65536}}};
  k["scratch_bytes"] = 0;
  return m;
}

TEST(ModuleManifest, ParsesACudaModule) {
  ModuleLayout layout = parse_manifest(cuda_manifest().dump(), "m.json");
  EXPECT_TRUE(layout.cuda);
  EXPECT_EQ(layout.target, "sm_90");
  EXPECT_EQ(layout.scratch_bytes, 256);
  ASSERT_EQ(layout.launches.size(), 1u);
  ASSERT_EQ(layout.launches[0].size(), 1u);
  EXPECT_EQ(layout.launches[0][0].function, "k0_0_y");
  EXPECT_EQ(layout.launches[0][0].threads, 6);
  EXPECT_EQ(layout.launches[0][0].shared_bytes, 65536);
  EXPECT_FALSE(parse_manifest(small_manifest().dump(), "m.json").cuda);
}

TEST(ModuleManifest, RejectsDamagedCudaFields) {
  struct Case {
    std::function<void(json&)> damage;
    std::string message;
  } cases[] = {
      {[](json& m) { m["target"] = ""; }, "is not an sm_<N> architecture"},
      {[](json& m) { m["target"] = "sm_90; rm -rf"; }, "is not an sm_<N> architecture"},
      {[](json& m) { m["kernels"][0]["backend"] = "halide"; }, "of a CUDA module has backend"},
      {[](json& m) { m["kernels"][0]["launches"] = json::array(); }, "has no launches"},
      {[](json& m) { m["kernels"][0]["launches"][0]["threads"] = 2048; }, "threads"},
      {[](json& m) { m["kernels"][0]["launches"][0]["blocks"] = 0; }, "blocks"},
      {[](json& m) { m["kernels"][0]["launches"][0]["shared_bytes"] = -1; }, "shared_bytes"},
      {[](json& m) { m["kernels"][0]["launches"][0].erase("shared_bytes"); }, "shared_bytes"},
      {[](json& m) { m["kernels"][0]["scratch_bytes"] = 512; }, "more scratch than the module"},
  };
  for (const Case& c : cases) {
    json m = cuda_manifest();
    c.damage(m);
    std::string error = parse_error(m.dump());
    EXPECT_NE(error.find(c.message), std::string::npos) << c.message << ": " << error;
  }
}

// The CUDA module's kernel as one cuBLAS GEMM: y = x w, with w [3,3].
json cublas_manifest() {
  json m = cuda_manifest();
  json& k = m["kernels"][0];
  k["backend"] = "cublas";
  k["inputs"][1]["shape"] = {3, 3};
  k["inputs"][1]["bytes"] = 36;
  k["launches"] = {{{"gemm",
                     {{"batch", 1},
                      {"m", 2},
                      {"n", 3},
                      {"k", 3},
                      {"trans_a", false},
                      {"trans_b", false},
                      {"a", 0},
                      {"b", 1}}}}};
  return m;
}

TEST(ModuleManifest, ParsesACublasGemm) {
  ModuleLayout layout = parse_manifest(cublas_manifest().dump(), "m.json");
  ASSERT_EQ(layout.launches.size(), 1u);
  ASSERT_EQ(layout.launches[0].size(), 1u);
  EXPECT_EQ(layout.launches[0][0].gemm, (codegen::GemmSpec{1, 2, 3, 3, false, false, 0, 1}));
  EXPECT_EQ(layout.kernels[0].backend, "cublas");
}

TEST(ModuleManifest, RejectsAGemmThatDoesNotFitItsValues) {
  struct Case {
    std::function<void(json&)> damage;
    std::string message;
  } cases[] = {
      {[](json& g) { g["k"] = 4; },
       "kernel k0's GEMM does not fit its values: A is f32[2,3], "
       "the GEMM reads 1 x 2 x 4 f32"},
      {[](json& g) { g["b"] = 2; }, "operands 0 and 2 of 2 inputs"},
      {[](json& g) { g["m"] = 0; }, "field 'm' is out of range"},
      {[](json& g) { g["n"] = 4294967296; }, "field 'n' is out of range"},
      {[](json& g) { g.erase("trans_a"); }, "missing field 'trans_a'"},
  };
  for (const Case& c : cases) {
    json m = cublas_manifest();
    c.damage(m["kernels"][0]["launches"][0]["gemm"]);
    std::string error = parse_error(m.dump());
    EXPECT_NE(error.find(c.message), std::string::npos) << c.message << ": " << error;
  }
  json m = cublas_manifest();
  m["kernels"][0]["launches"].push_back(cuda_manifest()["kernels"][0]["launches"][0]);
  EXPECT_NE(parse_error(m.dump()).find("has a library call among other launches"),
            std::string::npos);
}

// The CUDA module's kernel as one cuDNN convolution: y [1,1,2,3] = conv(x [1,1,2,3], w [1,1,1,3]),
// the 1x3 window padded by 1.
json cudnn_manifest() {
  json m = cuda_manifest();
  json& k = m["kernels"][0];
  k["backend"] = "cudnn";
  m["inputs"][0]["shape"] = {1, 1, 2, 3};
  m["outputs"][0]["shape"] = {1, 1, 2, 3};
  k["inputs"][0]["shape"] = {1, 1, 2, 3};
  k["inputs"][1]["shape"] = {1, 1, 1, 3};
  k["outputs"][0]["shape"] = {1, 1, 2, 3};
  k["launches"] = {{{"conv",
                     {{"pads", {0, 1}},
                      {"strides", {1, 1}},
                      {"dilations", {1, 1}},
                      {"group", 1},
                      {"x", 0},
                      {"w", 1},
                      {"bias", -1},
                      {"relu", false}}}}};
  return m;
}

TEST(ModuleManifest, ParsesACudnnConvolution) {
  ModuleLayout layout = parse_manifest(cudnn_manifest().dump(), "m.json");
  ASSERT_EQ(layout.launches.size(), 1u);
  ASSERT_EQ(layout.launches[0].size(), 1u);
  EXPECT_EQ(layout.launches[0][0].conv, (codegen::ConvSpec{{0, 1}, {1, 1}, {1, 1}, 1, 0, 1}));
  EXPECT_EQ(layout.kernels[0].backend, "cudnn");
}

TEST(ModuleManifest, RejectsAConvolutionThatDoesNotFitItsValues) {
  struct Case {
    std::function<void(json&)> damage;
    std::string message;
  } cases[] = {
      {[](json& c) {
         c["pads"] = {0, 0};
       },
       "kernel k0's convolution does not fit its values: output dim 3 is 3, cuDNN's padding of "
       "0 gives 1"},
      {[](json& c) { c["group"] = 2; }, "are not a convolution of 2 groups"},
      {[](json& c) { c["w"] = 5; }, "operands 0 and 5 of 2 inputs"},
      {[](json& c) {
         c["strides"] = {1, -1};
       },
       "field 'strides' is out of range"},
      {[](json& c) { c["dilations"] = {1}; }, "are not 2 or 3 spatial dims"},
      {[](json& c) { c.erase("x"); }, "missing field 'x'"},
      {[](json& c) { c["bias"] = 2; }, "bias 2 of 2 inputs"},
      {[](json& c) { c["bias"] = -2; }, "field 'bias' is out of range"},
      {[](json& c) { c["relu"] = true; }, "a ReLU without a bias"},
      {[](json& c) { c["bias"] = 0; }, "bias f32[1,1,2,3] is not one f32 per output channel"},
  };
  for (const Case& c : cases) {
    json m = cudnn_manifest();
    c.damage(m["kernels"][0]["launches"][0]["conv"]);
    std::string error = parse_error(m.dump());
    EXPECT_NE(error.find(c.message), std::string::npos) << c.message << ": " << error;
  }
}

TEST(ModuleManifest, RejectsWhatIsNotAManifest) {
  EXPECT_EQ(parse_error("[1, 2]"), "m.json: not a JSON object");
  EXPECT_EQ(parse_error("{\"format\": \"other\"}"), "m.json: not an orch module manifest");
  EXPECT_EQ(parse_error(R"({"format": "orch-module", "version": 2})"),
            "m.json: manifest version 2, this runtime reads 1");
  EXPECT_EQ(
      parse_error("{\"format\": \"orch-module\", \"vers").rfind("m.json: not valid JSON: ", 0), 0u);
}

// Module::load checks what parse_manifest cannot: an external kernel's weight must have its
// graph input's bytes, or the kernel would read past the weight (a view over weights.bin).
class ExternalWeights : public stitch_test::MlpModuleSuite {};

TEST_F(ExternalWeights, BytesMustMatchTheGraphInput) {
  std::string dir = stitch_test::temp_dir("external_weight_bytes");
  fs::copy(*dir_, dir, fs::copy_options::recursive);
  json m = json::parse(std::ifstream(fs::path(dir) / kManifestFile));
  // The MLP's first layer runs on oneDNN: an external kernel binding its weight from weights.bin.
  json* k = nullptr;
  for (json& kernel : m["kernels"])
    if (k == nullptr && kernel["external"] == true && !kernel["weights"].empty()) k = &kernel;
  ASSERT_NE(k, nullptr) << "no external kernel binds a weight";
  json& w = (*k)["weights"][0];
  int64_t bytes = w["bytes"].get<int64_t>() - 4;  // still inside weights.bin
  w["bytes"] = bytes;
  std::ofstream(fs::path(dir) / kManifestFile) << m.dump();
  std::string message;
  try {
    Module::load(dir);
  } catch (const Error& e) {
    message = e.what();
  }
  std::string want =
      fmt::format("{}/{}: weight '{}' has {} bytes in weights.bin, its type ", dir,
                  (*k)["graph"].get<std::string>(), w["value"].get<std::string>(), bytes);
  EXPECT_EQ(message.rfind(want, 0), 0u) << message;
  EXPECT_TRUE(message.ends_with(" has more or fewer")) << message;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orch::runtime
