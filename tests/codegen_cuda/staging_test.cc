// Shared-memory staging in generated CUDA C, emulated on the host with its barriers: operands
// of MatMuls and convolutions (inputs and computed prologues), reductions broadcast over rows,
// partial edge blocks; and the emulator's own checks of barriers and staged reads.
#include <fmt/ranges.h>

#include <random>

#include "../common/fused_kernels.h"
#include "codegen/cuda/cuda_nvrtc.h"
#include "cuda_util.h"
#include "ir/error.h"

namespace orch::codegen {
namespace {

CudaCase tiled_case(std::string name, std::string_view text, schedule::GpuTileConfig config) {
  CudaCase c = cuda_case(std::move(name), text, 5);
  c.config = std::move(config);
  return c;
}

constexpr const char* kMatMulPrologues = R"(graph g(%at: f32[24,40], %b: f32[24,36]) {
  %a: f32[40,24] = prim.Transpose(%at) {perm = [1, 0]}
  %r: f32[24,36] = prim.Elementwise(%b) {fn = "relu"}
  %m: f32[40,36] = prim.MatMul(%a, %r)
  return %m
})";

constexpr const char* kBatchedMatMul = R"(graph g(%a: f32[2,20,16], %b: f32[2,16,12]) {
  %m: f32[2,20,12] = prim.MatMul(%a, %b)
  return %m
})";

constexpr const char* kStridedConv = R"(graph g(%x: f32[1,3,15,15], %w: f32[4,3,3,3]) {
  %y: f32[1,4,8,8] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [2, 2]}
  return %y
})";

constexpr const char* kDepthwiseConv = R"(graph g(%x: f32[2,4,10,10], %w: f32[4,1,3,3]) {
  %y: f32[2,4,10,10] = prim.Conv(%x, %w) {dilations = [1, 1], group = 4, pads = [1, 1, 1, 1], strides = [1, 1]}
  return %y
})";

constexpr const char* kMatMulTranspose = R"(graph g(%a: f32[12,20], %b: f32[20,16]) {
  %m: f32[12,16] = prim.MatMul(%a, %b)
  %y: f32[16,12] = prim.Transpose(%m) {perm = [1, 0]}
  return %y
})";

constexpr const char* kMatMulBiasReshape =
    R"(graph g(%a: f32[12,20], %b: f32[20,16], %c: f32[12,16]) {
  %m: f32[12,16] = prim.MatMul(%a, %b)
  %s: f32[12,16] = prim.Elementwise(%m, %c) {fn = "add"}
  %y: f32[12,4,4] = prim.Reshape(%s) {shape = [12, 4, 4]}
  return %y
})";

constexpr const char* kMatMulPlusTranspose = R"(graph g(%a: f32[16,20], %b: f32[20,16]) {
  %m: f32[16,16] = prim.MatMul(%a, %b)
  %t: f32[16,16] = prim.Transpose(%m) {perm = [1, 0]}
  %y: f32[16,16] = prim.Elementwise(%m, %t) {fn = "add"}
  return %y
})";

// Square: the transpose keeps the shape, and only the coordinates tell the elements apart.
constexpr const char* kSquareMatMulTransposed = R"(graph g(%a: f32[16,24], %b: f32[24,16]) {
  %m: f32[16,16] = prim.MatMul(%a, %b)
  %y: f32[16,16] = prim.Transpose(%m) {perm = [1, 0]}
  return %y
})";

// The MatMul's operands are staged; the Concat's and the split Reshape's inputs are read from
// memory as each staged element is computed.
constexpr const char* kConcatMatMul = R"(graph g(%a: f32[8,32], %b: f32[8,32], %w: f32[32,16]) {
  %c: f32[16,32] = prim.Concat(%a, %b) {axis = 0}
  %m: f32[16,16] = prim.MatMul(%c, %w)
  return %m
})";

constexpr const char* kSplitReshapeMatMul = R"(graph g(%x: f32[4,64], %w: f32[4,16,8]) {
  %r: f32[4,4,16] = prim.Reshape(%x) {shape = [4, 4, 16]}
  %m: f32[4,4,8] = prim.MatMul(%r, %w)
  return %m
})";

std::vector<CudaCase> staged_cases() {
  return {tiled_case("square matmul transposed", kSquareMatMulTransposed, {{8, 8}, {2, 2}, 0}),
          tiled_case("matmul prologues 16x16", kMatMulPrologues, {{16, 16}, {2, 2}, 0}),
          tiled_case("matmul prologues 8x32", kMatMulPrologues, {{8, 32}, {1, 4}, 0}),
          tiled_case("batched matmul", kBatchedMatMul, {{1, 8, 8}, {1, 2, 2}, 0}),
          tiled_case("strided conv", kStridedConv, {{1, 4, 4, 4}, {1, 1, 1, 2}, 0}),
          tiled_case("depthwise conv", kDepthwiseConv, {{1, 2, 4, 8}, {1, 1, 2, 2}, 0}),
          tiled_case("softmax rows", fused_kernel_text("softmax"), {{8, 64}, {2, 4}, 0}),
          tiled_case("concat then matmul", kConcatMatMul, {{8, 8}, {2, 2}, 0}),
          tiled_case("split reshape then matmul", kSplitReshapeMatMul, {{1, 4, 8}, {1, 1, 1}, 0})};
}

std::vector<CudaCase> stepped_cases() {
  return {tiled_case("matmul prologues, steps of 8", kMatMulPrologues, {{16, 16}, {2, 2}, 8}),
          tiled_case("batched matmul, steps of 4", kBatchedMatMul, {{1, 8, 8}, {1, 2, 2}, 4}),
          tiled_case("strided conv, steps of 2", kStridedConv, {{1, 4, 4, 4}, {1, 1, 1, 2}, 2}),
          tiled_case("matmul bias gelu, steps of 8", fused_kernel_text("matmul_bias_gelu"),
                     {{16, 16}, {2, 2}, 8}),
          tiled_case("conv bias relu, steps of 2", fused_kernel_text("conv_bias_relu"),
                     {{1, 8, 4, 4}, {1, 2, 1, 2}, 2})};
}

TEST(CudaStaging, StagedKernelsMatchTheInterpreter) {
  std::vector<CudaCase> cases = staged_cases();
  for (const CudaCase& c : cases) {
    CudaKernelSource source = cuda_kernel_source(c.graph, "k", &*c.config);
    EXPECT_NE(source.code.find("ORCH_SHARED("), std::string::npos) << c.name << " stages nothing";
    EXPECT_NE(source.code.find("__syncthreads();"), std::string::npos) << c.name;
  }
  expect_all_match(cases, 1e-4);
}

// Configs with a reduce step: the operands' windows are staged a step at a time and each
// thread tile element accumulates across steps (the last step partial where the step does not
// divide the reduction), then the epilogue runs once on the totals.
TEST(CudaStaging, SteppedKernelsMatchTheInterpreter) {
  std::vector<CudaCase> cases = stepped_cases();
  for (const CudaCase& c : cases) {
    CudaKernelSource source = cuda_kernel_source(c.graph, "k", &*c.config);
    EXPECT_EQ(source.launches.size(), 1u) << c.name << ": the epilogue is not fused";
    EXPECT_NE(source.code.find("for (long long ks0"), std::string::npos) << c.name;
    // The thread tile's element loops run inside the reduce loop (a register tile).
    size_t reduce = source.code.find("for (long long rk0");
    ASSERT_NE(reduce, std::string::npos) << c.name;
    EXPECT_LT(source.code.find("for (long long u0", reduce),
              source.code.find("acc_tile[ui] = (", reduce))
        << c.name;
  }
  expect_all_match(cases, 1e-4);
}

// Legal configs of every kernel above, drawn from the H200's ranking and given reduce steps of
// 0, 4 and 8 in turn (a fixed seed): edge blocks, thread tiles and partial steps the hand-picked
// cases miss.
TEST(CudaStaging, DrawnConfigsMatchTheInterpreter) {
  static const schedule::GpuMachine h200 =
      schedule::load_gpu(std::string(ORCH_SOURCE_DIR) + "/machines/h200.json");
  std::vector<std::pair<std::string, std::string>> kernels = {
      {"matmul prologues", kMatMulPrologues},
      {"batched matmul", kBatchedMatMul},
      {"strided conv", kStridedConv},
      {"depthwise conv", kDepthwiseConv},
      {"matmul then transpose", kMatMulTranspose},
      {"matmul, bias, reshape", kMatMulBiasReshape},
      {"matmul plus its transpose", kMatMulPlusTranspose},
      {"concat then matmul", kConcatMatMul},
      {"split reshape then matmul", kSplitReshapeMatMul}};
  for (const FusedKernel& k : fused_kernels()) kernels.emplace_back(k.name, k.text);
  std::mt19937 rng(11);
  std::vector<CudaCase> cases;
  for (const auto& [name, text] : kernels) {
    Graph g = parse_graph(text);
    std::vector<schedule::ScoredGpuConfig> configs =
        schedule::gpu_configs(schedule::make_tile_graph(g), h200, 200);
    ASSERT_FALSE(configs.empty()) << name;
    for (int64_t step : {0, 4, 8}) {
      schedule::GpuTileConfig config = configs[rng() % configs.size()].config;
      config.reduce_step = step;
      cases.push_back(
          tiled_case(fmt::format("{} block {} thread {} step {}", name,
                                 fmt::join(config.block, "x"), fmt::join(config.thread, "x"), step),
                     text, config));
    }
  }
  expect_all_match(cases, 1e-4);
}

TEST(CudaStaging, StagedKernelsCompileForSm90) {
  if (!nvrtc_unavailable().empty()) GTEST_SKIP() << nvrtc_unavailable();
  std::string all = cuda_prelude();
  int index = 0;
  for (const std::vector<CudaCase>& cases : {staged_cases(), stepped_cases()})
    for (const CudaCase& c : cases)
      all += cuda_kernel_source(c.graph, fmt::format("k{}", index++), &*c.config).code;
  EXPECT_EQ(cubin_sm_arch(nvrtc_compile(all, "staged.cu", 9, 0).cubin), 90);
}

// A reduction read once per element through a transpose or a reshape is computed in its
// reader's launch; read at two coordinates per element (itself and its transpose), it keeps a
// phase of its own.
TEST(CudaStaging, ReductionsUnderLayoutPermutationsFuseIntoOneLaunch) {
  struct Expect {
    CudaCase c;
    size_t launches;
  };
  std::vector<Expect> cases = {{cuda_case("matmul then transpose", kMatMulTranspose), 1},
                               {cuda_case("matmul, bias, reshape", kMatMulBiasReshape), 1},
                               {cuda_case("matmul plus its transpose", kMatMulPlusTranspose), 2}};
  std::vector<CudaCase> all;
  for (Expect& e : cases) {
    EXPECT_EQ(cuda_kernel_source(e.c.graph, "k").launches.size(), e.launches) << e.c.name;
    CudaCase tiled = e.c;
    tiled.name += " tiled";
    tiled.config = best_h200_config(tiled.graph);
    all.push_back(std::move(e.c));
    all.push_back(std::move(tiled));
  }
  expect_all_match(all, 1e-4);
}

constexpr const char* kWideMatMul = R"(graph g(%a: f32[64,256], %b: f32[256,128]) {
  %m: f32[64,128] = prim.MatMul(%a, %b)
  return %m
})";

// Staging beyond the default 48 KiB per block lies in dynamic shared memory up to the GPU's
// opt-in limit (an H200's 227 KiB), which the launch asks for; under the default limit the
// operands stay in memory.
TEST(CudaStaging, StagingAboveTheDefaultLimitUsesTheOptIn) {
  CudaCase c = tiled_case("wide matmul", kWideMatMul, {{64, 64}, {4, 4}, 0});
  EXPECT_EQ(cuda_kernel_source(c.graph, "k", &*c.config).shared_bytes, 0);
  c.shared_limit = 227 * 1024;
  CudaKernelSource source = cuda_kernel_source(c.graph, "k", &*c.config, c.shared_limit);
  // A's 64 rows and B's 64 columns, all 256 of K, rows at an odd pitch:
  // (64 * 257 + 256 * 65) * 4 bytes.
  EXPECT_EQ(source.shared_bytes, 132352);
  ASSERT_EQ(source.launches.size(), 1u);
  EXPECT_EQ(source.launches[0].shared_bytes, 132352);
  EXPECT_NE(source.code.find("ORCH_SHARED(float, sh1, 65792);"), std::string::npos)
      << "B's array does not follow A's";
  expect_all_match({c}, 1e-4);
  if (!nvrtc_unavailable().empty()) GTEST_SKIP() << nvrtc_unavailable();
  EXPECT_EQ(cubin_sm_arch(nvrtc_compile(cuda_prelude() + source.code, "wide.cu", 9, 0).cubin), 90);
}

// The prologue's relu is computed once per element into shared memory, not per use.
// The tile model counts the shared memory the code uses, byte for byte, at the config the
// stitcher picks: the arrays staged_regions lays out (a region grown at an edge block, as an
// edge Pad's is), only what the root's phase reads (not the operands of a horizontally fused
// output with a phase of its own), the computed values with their partials.
TEST(CudaStaging, TheModelPricesTheSharedMemoryTheCodeUses) {
  std::vector<std::pair<std::string, std::string>> kernels = {
      {"matmul prologues", kMatMulPrologues},
      {"strided conv", kStridedConv},
      {"depthwise conv", kDepthwiseConv},
      {"softmax", fused_kernel_text("softmax")},
      {"layernorm", fused_kernel_text("layernorm")},
      {"matmul bias gelu", fused_kernel_text("matmul_bias_gelu")},
      {"conv bias relu", fused_kernel_text("conv_bias_relu")},
      {"edge pad", R"(graph g(%x: f32[1,4,10,10]) {
  %y: f32[1,4,14,14] = prim.Pad(%x) {mode = "edge", pads = [0, 0, 2, 2, 0, 0, 2, 2]}
  return %y
})"},
      {"relu beside a convolution",
       R"(graph g(%x: f32[1,8,16,16], %w: f32[8,8,3,3], %y: f32[1,8,16,16]) {
  %r: f32[1,8,16,16] = prim.Elementwise(%y) {fn = "relu"}
  %c: f32[1,8,16,16] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]}
  return %r, %c
})"},
      {"a convolution beside a relu",
       R"(graph g(%x: f32[1,8,16,16], %w: f32[8,8,3,3], %y: f32[1,8,16,16]) {
  %c: f32[1,8,16,16] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]}
  %r: f32[1,8,16,16] = prim.Elementwise(%y) {fn = "relu"}
  return %c, %r
})"}};
  int64_t staging = 0;
  for (const auto& [name, text] : kernels) {
    Graph g = parse_graph(text);
    schedule::ScoredGpuConfig best = best_h200(g);
    CudaKernelSource ks = cuda_kernel_source(g, "k", &best.config, h200().shared_per_block_optin);
    EXPECT_EQ(best.cost.shared_bytes, ks.shared_bytes) << name;
    staging += ks.shared_bytes > 0 ? 1 : 0;
  }
  EXPECT_GE(staging, 6);  // most of them stage something
}

TEST(CudaStaging, ComputedOperandsAreStagedOnce) {
  Graph g = parse_graph(kMatMulPrologues);
  schedule::GpuTileConfig config{{16, 16}, {2, 2}, 0};
  CudaKernelSource source = cuda_kernel_source(g, "k", &config);
  // A's 16 rows and the relu's 16 columns, all 24 of K, each row padded by one element (an odd
  // pitch against bank conflicts): (16 * 25 + 24 * 17) * 4 bytes.
  EXPECT_EQ(source.shared_bytes, 3232);
  EXPECT_NE(source.code.find("orch_relu"), std::string::npos);
  size_t loop = source.code.find("for (long long u0");
  ASSERT_NE(loop, std::string::npos);
  EXPECT_EQ(source.code.find("orch_relu", loop), std::string::npos)
      << "the thread tiles recompute the staged relu";
}

// A graph to run hand-written functions against: one f32[64] input and output.
Graph copy_graph() {
  return parse_graph(R"(graph g(%x: f32[64]) {
  %y: f32[64] = prim.Elementwise(%x) {fn = "relu"}
  return %y
})");
}

std::string emulation_error(const std::string& body, int64_t blocks = 1, int threads = 64,
                            int64_t scratch_bytes = 0) {
  Graph g = copy_graph();
  CudaKernelSource source;
  source.code =
      "extern \"C\" __global__ void f(const float* in0, ORCH_GLOBAL(float) out0, unsigned char* "
      "scratch) {\n" +
      body + "\n}\n";
  source.scratch_bytes = scratch_bytes;
  source.launches.push_back({"f", blocks, threads, 256});  // 64 floats of shared memory
  try {
    cuda_emulate(g, source, interp::random_inputs(g, 1));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// "N unsafe operations ... the first: <first>" from the emulator.
std::string unsafe(int n, const std::string& first) {
  return fmt::format(
      "{} unsafe operations (races, reads of shared bytes the block never wrote or outside a "
      "staged region, shuffles in a partial warp); the first: {}",
      n, first);
}

TEST(CudaStaging, TheEmulatorPassesValuesThroughSharedMemoryAcrossABarrier) {
  // Each thread writes its element and reads its neighbour's: right only after the barrier.
  Graph g = copy_graph();
  CudaKernelSource source;
  source.code =
      R"(extern "C" __global__ void f(const float* in0, float* out0, unsigned char* scratch) {
  ORCH_SHARED(float, s, 0);
  s[ORCH_IN(threadIdx.x, 64)] = in0[threadIdx.x];
  __syncthreads();
  out0[threadIdx.x] = s[ORCH_IN((threadIdx.x + 1) % 64, 64)];
}
)";
  source.launches.push_back({"f", 1, 64, 256});
  std::vector<Tensor> inputs = interp::random_inputs(g, 3);
  std::vector<Tensor> out = cuda_emulate(g, source, inputs);
  for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(out[0].get(i), inputs[0].get((i + 1) % 64)) << i;
}

TEST(CudaStaging, TheEmulatorRejectsDivergentBarriersAndReadsOutsideTheBox) {
  EXPECT_NE(emulation_error("if (threadIdx.x < 32) __syncthreads();\nout0[threadIdx.x] = 0;")
                .find("threads returned while the others wait at a barrier"),
            std::string::npos);
  EXPECT_NE(emulation_error("__shared__ float s[8];\ns[ORCH_IN(threadIdx.x, 8)] = 1;\n"
                            "__syncthreads();\nout0[threadIdx.x] = s[0];")
                .find(unsafe(56,
                             "block 0: thread 8 reads outside a region staged in shared "
                             "memory (index 8 of 8)")),
            std::string::npos);
}

// A kernel body the emulator must reject, and the start of its error.
struct UnsafeKernel {
  std::string why, body;
  int64_t blocks = 1;
  int threads = 64;
  int64_t scratch_bytes = 0;
  std::string error;
};

// A serial run gives a thread what another wrote before it, barrier or launch boundary or not;
// a GPU does not. The race check rejects each way the serial order could show.
TEST(CudaStaging, TheEmulatorRejectsRaces) {
  const std::string copy = "ORCH_SHARED(float, s, 0);\ns[threadIdx.x] = in0[threadIdx.x];\n";
  const std::vector<UnsafeKernel> kernels = {
      {"each thread reads its left neighbour's element without a barrier",
       copy + "out0[threadIdx.x] = s[threadIdx.x > 0 ? threadIdx.x - 1 : 63];", 1, 64, 0,
       unsafe(64,
              "block 0: thread 0 reads byte 252 of shared memory that no thread of its "
              "block wrote")},
      {"the same, thread 0 reading its own",
       copy + "out0[threadIdx.x] = s[threadIdx.x > 0 ? threadIdx.x - 1 : 0];", 1, 64, 0,
       unsafe(63,
              "block 0: thread 1 reads byte 0 of shared memory that thread 0 wrote with no "
              "barrier between")},
      {"a shuffle orders no shared memory",
       copy + "float v = orch_shfl_xor(in0[threadIdx.x], 1);\n"
              "out0[threadIdx.x] = v + s[threadIdx.x ^ 1];",
       1, 64, 0,
       unsafe(64,
              "block 0: thread 0 reads byte 4 of shared memory that thread 1 wrote with no "
              "barrier between")},
      {"shared memory past the 256 bytes the launch asks for",
       "ORCH_SHARED(float, s, 0);\ns[threadIdx.x + 1] = 1;\nout0[threadIdx.x] = 0;", 1, 64, 0,
       unsafe(1,
              "block 0: thread 63 touches byte 256 of shared memory (past what the launch "
              "asks for)")},
      {"a shuffle in a warp the block fills in part",
       "out0[threadIdx.x] = orch_shfl_xor(in0[threadIdx.x], 1);", 1, 48, 0,
       unsafe(16, "block 0: thread 32 shuffles in a warp the block's 48 threads fill in part")},
      {"an element overwritten in the interval in which another thread reads it",
       copy + "__syncthreads();\nconst float v = s[(threadIdx.x + 1) % 64];\n"
              "s[threadIdx.x] = 2 * v;\n__syncthreads();\nout0[threadIdx.x] = s[threadIdx.x];",
       1, 64, 0,
       unsafe(64,
              "block 0: thread 1 writes byte 4 of shared memory that thread 0 read with no "
              "barrier between")},
      {"the second block reads what only the first wrote",
       "ORCH_SHARED(float, s, 0);\nif (blockIdx.x == 0) s[threadIdx.x] = 1;\n__syncthreads();\n"
       "out0[blockIdx.x * 32 + threadIdx.x] = s[threadIdx.x];",
       2, 32, 0,
       unsafe(32,
              "block 1: thread 0 reads byte 0 of shared memory that no thread of its block "
              "wrote")},
      {"both blocks write the first half of the output", "out0[threadIdx.x] = in0[threadIdx.x];", 2,
       32, 0,
       unsafe(32,
              "block 1: thread 0 writes byte 0 of out0 that block 0 thread 0 wrote in the "
              "same launch")},
      // Each of block 1's threads races three times: two writes after block 0's read, one read
      // after block 0's write.
      {"each block reads the elements the other writes",
       "const long long i = blockIdx.x * 32 + threadIdx.x;\n"
       "out0[i] = in0[i];\nout0[i] = out0[i] + out0[(i + 32) % 64];",
       2, 32, 0,
       unsafe(96,
              "block 1: thread 0 writes byte 128 of out0 that block 0 thread 0 read in the "
              "same launch")},
      {"every thread writes the same scratch element",
       "ORCH_SCRATCH(float, s1, 0);\ns1[0] = in0[threadIdx.x];\nout0[threadIdx.x] = 0;", 1, 64, 4,
       unsafe(63,
              "block 0: thread 1 writes byte 0 of scratch that block 0 thread 0 wrote in the "
              "same launch")}};
  for (const UnsafeKernel& k : kernels) {
    std::string error = emulation_error(k.body, k.blocks, k.threads, k.scratch_bytes);
    EXPECT_NE(error.find(k.error), std::string::npos) << k.why << ": " << error;
  }
  // With a barrier between, the first exchange passes.
  EXPECT_EQ(
      emulation_error(copy + "__syncthreads();\n"
                             "out0[threadIdx.x] = s[threadIdx.x > 0 ? threadIdx.x - 1 : 63];"),
      "");
}

// A GPU's memory holds garbage where a kernel writes nothing: so do the emulator's outputs.
TEST(CudaStaging, TheEmulatorPoisonsWhatAKernelLeavesUnwritten) {
  Graph g = copy_graph();
  CudaKernelSource source;
  source.code =
      R"(extern "C" __global__ void f(const float* in0, ORCH_GLOBAL(float) out0,
                             unsigned char* scratch) {
  if (threadIdx.x > 0) out0[threadIdx.x] = in0[threadIdx.x];
}
)";
  source.launches.push_back({"f", 1, 64});
  std::vector<Tensor> inputs = interp::random_inputs(g, 4);
  std::vector<Tensor> out = cuda_emulate(g, source, inputs);
  EXPECT_TRUE(std::isnan(out[0].get(0)));
  EXPECT_EQ(out[0].get(1), inputs[0].get(1));
}

}  // namespace
}  // namespace orch::codegen
