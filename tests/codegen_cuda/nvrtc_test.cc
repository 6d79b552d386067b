// NVRTC compiles the generated CUDA C to sm_90 machine code (skipped where NVRTC is missing:
// the build never needs CUDA).
#include <fmt/format.h>

#include "../common/fused_kernels.h"
#include "codegen/cuda/cuda_nvrtc.h"
#include "cuda_util.h"
#include "ir/error.h"

namespace orch::codegen {
namespace {

TEST(CudaNvrtc, FusedKernelsCompileForSm90) {
  if (!nvrtc_unavailable().empty()) GTEST_SKIP() << nvrtc_unavailable();
  ASSERT_TRUE(nvrtc_version().has_value());
  std::string all = cuda_prelude();
  int index = 0;
  for (const FusedKernel& k : fused_kernels()) {
    Graph g = parse_graph(k.text);
    schedule::GpuTileConfig config = best_h200_config(g);
    std::string untiled = cuda_kernel_source(g, fmt::format("u{}", index)).code;
    std::string tiled = cuda_kernel_source(g, fmt::format("t{}", index), &config).code;
    all += untiled + tiled;
    CudaBinary b = nvrtc_compile(cuda_prelude() + tiled, k.name + ".cu", 9, 0);
    EXPECT_EQ(cubin_sm_arch(b.cubin), 90) << k.name;
    // Printed for the record (benchmarks are not assertions).
    std::printf("NVRTC %s: %s, %.2f s, %zu bytes of sm_90 cubin\n", nvrtc_version()->c_str(),
                k.name.c_str(), b.seconds, b.cubin.size());
    ++index;
  }
  CudaBinary b = nvrtc_compile(all, "fused.cu", 9, 0);
  EXPECT_EQ(cubin_sm_arch(b.cubin), 90);
  std::printf("NVRTC: all fused kernels in one unit, %.2f s\n", b.seconds);
}

TEST(CudaNvrtc, CompileErrorsCarryTheLog) {
  if (!nvrtc_unavailable().empty()) GTEST_SKIP() << nvrtc_unavailable();
  try {
    nvrtc_compile("extern \"C\" __global__ void k() { undeclared(); }", "broken.cu", 9, 0);
    FAIL() << "compiled an undeclared call";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("broken.cu"), std::string::npos) << message;
    EXPECT_NE(message.find("undeclared"), std::string::npos) << message;
  }
}

TEST(CudaNvrtc, SmArchOfNonCubinsIsMinusOne) {
  EXPECT_EQ(cubin_sm_arch(""), -1);
  EXPECT_EQ(cubin_sm_arch(std::string(64, 'x')), -1);
}

}  // namespace
}  // namespace orch::codegen
