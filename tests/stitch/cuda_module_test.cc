// `--target cuda --compile-only` without a GPU: every zoo model planned with analytic GPU costs,
// generated as CUDA C, compiled by NVRTC into one sm_90 cubin and validated by running the
// generated code on the host against the interpreter (small shapes; the published shapes are
// compiled only, below). Skipped when NVRTC is missing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "codegen/cuda/cuda_nvrtc.h"
#include "driver/cuda_target.h"
#include "driver/optimize.h"
#include "driver/pipeline.h"
#include "driver/tune.h"
#include "fission/fission.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "orch/module.h"
#include "rewrite/rewrite.h"
#include "stitch_test_util.h"
#include "zoo/zoo.h"

namespace orch::stitch_test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct CudaCase {
  std::string_view name;
  int64_t size;
  /// Minutes rather than seconds (candidate enumeration of the large CNNs): run only with
  /// ORCH_CUDA_HOST_ALL=1, which `ctest -L long` sets (tests/CMakeLists.txt).
  bool long_case = false;
};

// The smallest legal shapes, as in zoo_module_test.cc: the host runs every kernel serially.
constexpr CudaCase kCases[] = {
    {"candy", 4},
    {"segformer-b0", 32, true},
    {"efficientvit-b1", 32},
    {"yolox-nano", 32, true},
    {"yolov4", 32, true},
    {"vit-b16-layer", 4},
    {"bert-base-layer", 4},
    {"transformer-tiny", 4},
};

void PrintTo(const CudaCase& c, std::ostream* os) {
  *os << c.name << ":" << c.size;
}

class CudaModule : public testing::TestWithParam<CudaCase> {};

TEST_P(CudaModule, CompilesForSm90AndMatchesTheInterpreterOnTheHost) {
  std::string unavailable = codegen::nvrtc_unavailable();
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  const CudaCase& c = GetParam();
  const char* all = std::getenv("ORCH_CUDA_HOST_ALL");
  if (c.long_case && (all == nullptr || std::string(all) != "1"))
    GTEST_SKIP() << "a long case: ORCH_CUDA_HOST_ALL=1 or ctest -L long runs it";
  std::string name(c.name);
  auto start = Clock::now();
  Graph primitives = rewrite::rewrite(fission::fission(zoo::build_model(name, {.size = c.size})),
                                      driver::default_rewrite_options());

  driver::TuneOptions tune;
  tune.analytic = true;
  tune.target = driver::Target::cuda;
  driver::TunedModel tuned = driver::tune_model(std::move(primitives), tune);
  for (const PlanKernel& k : tuned.plan.kernels)
    EXPECT_EQ(tuned.choices[k.candidate].backend, "cuda");

  std::string dir = temp_dir("cuda_" + name);
  driver::OptimizeOptions build;  // validation: the CUDA code run on the host, kernel by kernel
  build.tune = tune;
  stitch::StitchResult r =
      driver::build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, dir, build);
  const int kernels = r.cuda_kernels + r.cublas_kernels + r.cudnn_kernels;
  EXPECT_EQ(kernels, static_cast<int>(tuned.plan.kernels.size()));
  EXPECT_GE(r.cuda_launches, kernels);

  EXPECT_EQ(codegen::cubin_sm_arch(read_file(fs::path(dir) / "kernels.cubin")), 90);
  nlohmann::json manifest = nlohmann::json::parse(read_file(fs::path(dir) / "manifest.json"));
  EXPECT_EQ(manifest.at("format"), "orch-cuda-module");
  EXPECT_EQ(manifest.at("target"), "sm_90");
  EXPECT_EQ(manifest.at("kernels").size(), tuned.plan.kernels.size());
  std::string source = read_file(fs::path(dir) / "kernels.cu");
  for (const nlohmann::json& k : manifest.at("kernels"))
    for (const nlohmann::json& launch : k.at("launches")) {
      if (launch.contains("gemm") || launch.contains("conv")) {
        // The validation above ran it as the library would, with the runtime's arguments.
        EXPECT_EQ(k.at("backend"), launch.contains("gemm") ? "cublas" : "cudnn");
        EXPECT_EQ(k.at("launches").size(), 1u);
        continue;
      }
      EXPECT_NE(source.find(launch.at("function").get<std::string>() + "("), std::string::npos)
          << launch.at("function");
      EXPECT_GT(launch.at("blocks").get<int64_t>(), 0);
      EXPECT_GT(launch.at("threads").get<int>(), 0);
      EXPECT_LE(launch.at("threads").get<int>(), 1024);
    }
  // The CPU runtime refuses the module, naming why.
  try {
    Module::load(dir);
    ADD_FAILURE() << "a CUDA module loaded on the CPU runtime";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compiled for CUDA"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
  fmt::print(
      "{} at size {}: {} CUDA kernels, {} cuBLAS GEMMs, {} cuDNN convolutions, {} launches, plan "
      "{:.1f} us estimated, {:.1f} s\n",
      name, c.size, r.cuda_kernels, r.cublas_kernels, r.cudnn_kernels, r.cuda_launches,
      tuned.plan.objective_us, seconds_since(start));
}

// Without libraries every MatMul and convolution is generated code: EfficientViT-B1's module
// stages in shared memory, accumulates register tiles, walks reduce steps, and matches the
// interpreter on the host (the emulator checks every staged read and barrier). At size 64: at 32
// the regions are small enough that every config stages whole reduce extents.
TEST(CudaGenerated, EfficientVitStagesAndMatchesTheInterpreterOnTheHost) {
  std::string unavailable = codegen::nvrtc_unavailable();
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  Graph primitives =
      rewrite::rewrite(fission::fission(zoo::build_model("efficientvit-b1", {.size = 64})),
                       driver::default_rewrite_options());
  driver::TuneOptions tune;
  tune.analytic = true;
  tune.target = driver::Target::cuda;
  tune.cuda_libraries = codegen::parse_cuda_libraries("none");
  driver::TunedModel tuned = driver::tune_model(std::move(primitives), tune);
  std::string dir = temp_dir("cuda_generated");
  driver::OptimizeOptions build;
  build.tune = tune;
  stitch::StitchResult r =
      driver::build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, dir, build);
  EXPECT_EQ(r.cublas_kernels + r.cudnn_kernels, 0);
  std::string source = read_file(fs::path(dir) / "kernels.cu");
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = source.find(what); at != std::string::npos; at = source.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_GT(count("ORCH_SHARED("), 0);
  EXPECT_GT(count("acc_tile[ui] = ("), 0);
  EXPECT_GT(count("for (long long ks0"), 0);
  fmt::print(
      "efficientvit-b1 at size 64 without libraries: {} kernels, {} shared arrays, {} "
      "stepped loops\n",
      r.cuda_kernels, count("ORCH_SHARED("), count("for (long long ks0"));
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Zoo, CudaModule, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<CudaCase>& info) {
                           std::string name(info.param.name);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The published shapes (the zoo's defaults), compiled only: the host cannot run them in a test's
// time, and the generated code differs from the small shapes' only in its constants.
class CudaModulePublished : public testing::TestWithParam<zoo::ModelInfo> {};

TEST_P(CudaModulePublished, CompilesForSm90) {
  std::string unavailable = codegen::nvrtc_unavailable();
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  const zoo::ModelInfo& model = GetParam();
  auto start = Clock::now();
  Graph primitives = rewrite::rewrite(fission::fission(zoo::build_model(model.name, {})),
                                      driver::default_rewrite_options());
  driver::TuneOptions tune;
  tune.analytic = true;
  tune.target = driver::Target::cuda;
  // Any plan compiles the same way: YOLOX-Nano and YOLOv4 would spend the default 60 s of
  // solving on parts CBC does not prove optimal.
  tune.solve_time_limit_s = 10;
  driver::TunedModel tuned = driver::tune_model(std::move(primitives), tune);
  double tune_s = seconds_since(start);
  std::string dir = temp_dir("cuda_full_" + std::string(model.name));
  driver::OptimizeOptions build;
  build.tune = tune;
  build.validate = false;
  stitch::StitchResult r =
      driver::build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, dir, build);
  EXPECT_EQ(r.cuda_kernels + r.cublas_kernels + r.cudnn_kernels,
            static_cast<int>(tuned.plan.kernels.size()));
  EXPECT_EQ(codegen::cubin_sm_arch(read_file(fs::path(dir) / "kernels.cubin")), 90);
  fs::remove_all(dir);
  fmt::print(
      "{} (published shape): {} primitives, {} CUDA kernels, {} cuBLAS GEMMs, {} cuDNN "
      "convolutions, {} launches, plan {:.1f} us estimated; tune {:.1f} s, stitch {:.1f} s\n",
      model.name, tuned.graph.num_nodes(), r.cuda_kernels, r.cublas_kernels, r.cudnn_kernels,
      r.cuda_launches, tuned.plan.objective_us, tune_s, r.seconds);
}

INSTANTIATE_TEST_SUITE_P(Zoo, CudaModulePublished, testing::ValuesIn(zoo::all_models()),
                         [](const testing::TestParamInfo<zoo::ModelInfo>& info) {
                           std::string name(info.param.name);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(CudaTarget, MeasuringWithoutAGpuSaysSo) {
  try {
    driver::target_gpu(std::string(driver::kThisGpu));
    GTEST_SKIP() << "this machine has a GPU";
  } catch (const Error&) {
  }
  driver::TuneOptions tune;
  tune.target = driver::Target::cuda;  // not analytic
  Graph g = fission::fission(zoo::build_model("transformer-tiny", {.size = 4}));
  try {
    driver::tune_model(std::move(g), tune);
    ADD_FAILURE() << "measured CUDA kernels without a GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no GPU on this machine"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--compile-only"), std::string::npos) << e.what();
  }
}

// Ops the generator lacks (ScatterElements and TopK, which fission keeps whole) run on the host
// through the reference backend, each a kernel of its own between generated ones: the module
// validates against the interpreter (its code run on the host), the scatter's 4800-byte data
// bound from weights.bin.
TEST(CudaTarget, OpsTheGeneratorLacksRunOnTheHost) {
  std::string unavailable = codegen::nvrtc_unavailable();
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  Graph g;
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {4, 2}});
  Tensor data(DType::f32, {4, 300});
  for (int64_t i = 0; i < data.numel(); ++i)
    data.mutable_data<float>()[i] = float(i % 97) / 97.0f - 0.5f;
  Tensor index(DType::i64, {4, 2});
  for (int64_t i = 0; i < index.numel(); ++i) index.mutable_data<int64_t>()[i] = (i * 37) % 300;
  ValueId u = b.op("Relu", {x});
  ValueId scattered =
      b.op("ScatterElements", {b.constant(data), b.constant(index), u}, {{"axis", int64_t{1}}});
  ValueId s = b.op("Sigmoid", {scattered});
  Tensor k(DType::i64, {1});
  k.mutable_data<int64_t>()[0] = 5;
  std::vector<ValueId> top = b.op_multi("TopK", {s, b.constant(k)}, {{"axis", int64_t{1}}}, 2);
  b.output(b.op("Neg", {top[0]}));
  b.output(top[1]);
  driver::TuneOptions tune;
  tune.analytic = true;
  tune.target = driver::Target::cuda;
  driver::TunedModel tuned = driver::tune_model(fission::fission(g), tune);
  std::string dir = temp_dir("cuda_host_kernels");
  driver::OptimizeOptions build;  // validation: the CUDA code run on the host, kernel by kernel
  build.tune = tune;
  stitch::StitchResult r =
      driver::build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, dir, build);
  EXPECT_EQ(r.reference_kernels, 2);
  EXPECT_GE(r.cuda_kernels, 1);
  nlohmann::json manifest = nlohmann::json::parse(read_file(fs::path(dir) / "manifest.json"));
  std::vector<std::string> on_host;
  for (const nlohmann::json& kernel : manifest.at("kernels")) {
    if (kernel.at("backend") != "reference") continue;
    on_host.push_back(kernel.at("primitives").at(0).at("op"));
    EXPECT_TRUE(kernel.at("external").get<bool>());
    EXPECT_FALSE(kernel.contains("launches"));
    EXPECT_TRUE(fs::exists(fs::path(dir) / kernel.at("graph").get<std::string>()));
    EXPECT_EQ(kernel.at("weights").size(), on_host.back() == "ScatterElements" ? 1u : 0u);
  }
  EXPECT_EQ(on_host, (std::vector<std::string>{"ScatterElements", "TopK"}));
  EXPECT_NE(read_file(fs::path(dir) / "report.md").find("runs on the host: TopK"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(CudaTarget, UnknownGpuNamesTheShippedOnes) {
  try {
    driver::target_gpu("v100");
    ADD_FAILURE() << "found a v100 description";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a100, h200"), std::string::npos) << e.what();
  }
  EXPECT_EQ(driver::target_gpu("h200").cc_major, 9);
  EXPECT_EQ(driver::target_gpu("a100").cc_major, 8);
}

TEST(CudaTarget, CostCountsLaunchesAndTraffic) {
  // relu over 1M floats: one launch, 8 MiB of HBM traffic (read once, written once).
  Graph g = parse_graph(R"(graph main(%x: f32[1024,1024]) {
    %y: f32[1024,1024] = prim.Elementwise(%x) {fn = "relu"}
    return %y
  })");
  schedule::GpuMachine h200 = driver::target_gpu("h200");
  double want = driver::kCudaLaunchUs + 8.0 * 1024 * 1024 / (h200.hbm_gbs * 1e3);
  EXPECT_NEAR(driver::cuda_cost_us(g, h200), want, 0.01);
}

TEST(CudaTarget, FewThreadsCannotKeepHbmBusy) {
  // A GEMV (with a prologue, which no library call takes) run one thread per output: 1600
  // threads keep 1600 * 16 bytes in flight for 0.5 us, 51.2 GB/s, for the 1536x1600 weights,
  // the row and the output.
  Graph gemv = parse_graph(R"(graph main(%x: f32[1,1536], %w: f32[1536,1600]) {
    %r: f32[1,1536] = prim.Elementwise(%x) {fn = "relu"}
    %y: f32[1,1600] = prim.MatMul(%r, %w)
    return %y
  })");
  EXPECT_EQ(codegen::cuda_kernel_shape(gemv).threads, 1600);
  schedule::GpuMachine h200 = driver::target_gpu("h200");
  double gbs = 1600 * driver::kCudaBytesInFlightPerThread / (driver::kCudaMemoryLatencyUs * 1e3);
  EXPECT_DOUBLE_EQ(driver::cuda_bandwidth_gbs(h200, 1600), gbs);
  double bytes = (1536.0 * 1600 + 1536 + 1600) * 4;
  EXPECT_NEAR(driver::cuda_cost_us(gemv, h200), driver::kCudaLaunchUs + bytes / (gbs * 1e3), 0.01);
  // A row sum runs a warp per row: 4096 rows keep 4096 * 32 threads busy.
  Graph rows = parse_graph(R"(graph main(%x: f32[4096,64]) {
    %y: f32[4096,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
    return %y
  })");
  EXPECT_EQ(codegen::cuda_kernel_shape(rows).threads, 4096 * 32);
  // A few long rows (Candy's instance-norm statistics) widen their groups to a whole block of
  // 256 threads per row.
  Graph few = parse_graph(R"(graph main(%x: f32[32,50176]) {
    %y: f32[32,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
    return %y
  })");
  EXPECT_EQ(codegen::cuda_kernel_shape(few).threads, 32 * 256);
  // The SMs hold at most 132 * 2048 threads, which keep more than HBM's bandwidth in flight.
  EXPECT_DOUBLE_EQ(driver::cuda_bandwidth_gbs(h200, int64_t{1} << 40), h200.hbm_gbs);
}

TEST(CudaTarget, InlinedProducersAreCountedAtEveryRead) {
  // relu inlined into a MatMul's left operand runs once per output column: 4·8 elements read by
  // 16 columns (512), plus the MatMul's 2·4·16·8 (1024); as a kernel output it is stored and
  // runs once per element (32).
  Graph inlined = parse_graph(R"(graph main(%x: f32[4,8], %w: f32[8,16]) {
    %r: f32[4,8] = prim.Elementwise(%x) {fn = "relu"}
    %y: f32[4,16] = prim.MatMul(%r, %w)
    return %y
  })");
  EXPECT_DOUBLE_EQ(driver::cuda_kernel_flops(inlined), 512 + 1024);
  Graph stored = parse_graph(R"(graph main(%x: f32[4,8], %w: f32[8,16]) {
    %r: f32[4,8] = prim.Elementwise(%x) {fn = "relu"}
    %y: f32[4,16] = prim.MatMul(%r, %w)
    return %y, %r
  })");
  EXPECT_DOUBLE_EQ(driver::cuda_kernel_flops(stored), 32 + 1024);
  // Into a 3x3 convolution: each of the 75 outputs reads 2·3·3 taps of the relu (1350; padded
  // taps too: the generated code reads a clamped element and selects it away) and does 2·18
  // flops (2700).
  Graph conv = parse_graph(R"(graph main(%x: f32[1,2,5,5], %w: f32[3,2,3,3]) {
    %r: f32[1,2,5,5] = prim.Elementwise(%x) {fn = "relu"}
    %y: f32[1,3,5,5] = prim.Conv(%r, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]}
    return %y
  })");
  EXPECT_DOUBLE_EQ(driver::cuda_kernel_flops(conv), 1350 + 2700);
}

}  // namespace
}  // namespace orch::stitch_test
