// Shared by the CUDA backend tests: generate kernels, emulate them on the host in one compile,
// and compare with the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/cuda/cuda_emulate.h"
#include "codegen/cuda/cuda_source.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/close.h"
#include "ir/text_format.h"
#include "schedule/gpu/gpu_machine.h"
#include "schedule/gpu/gpu_tiles.h"
#include "schedule/tile_graph.h"

namespace orch::codegen {

/// One kernel to check: its text, the random-input seed, an optional tile config and the
/// shared memory a block may use.
struct CudaCase {
  std::string name;
  Graph graph;
  uint64_t seed = 1;
  std::optional<schedule::GpuTileConfig> config;
  int64_t shared_limit = kCudaDefaultSharedLimit;
};

inline CudaCase cuda_case(std::string name, std::string_view text, uint64_t seed = 1) {
  return {std::move(name), parse_graph(text), seed, std::nullopt, kCudaDefaultSharedLimit};
}

/// The shipped H200 description.
inline const schedule::GpuMachine& h200() {
  static const schedule::GpuMachine gpu =
      schedule::load_gpu(std::string(ORCH_SOURCE_DIR) + "/machines/h200.json");
  return gpu;
}

/// The fastest legal tile config of `g` on the H200 and its cost, as the stitcher picks it (the
/// model priced in the code's form).
inline schedule::ScoredGpuConfig best_h200(const Graph& g) {
  schedule::TileGraph tg = schedule::make_tile_graph(g);
  std::vector<schedule::ScoredGpuConfig> configs =
      schedule::gpu_configs(tg, h200(), 1, cuda_tile_form(g, tg));
  EXPECT_FALSE(configs.empty());
  return configs.empty() ? schedule::ScoredGpuConfig{} : configs[0];
}

inline schedule::GpuTileConfig best_h200_config(const Graph& g) {
  return best_h200(g).config;
}

/// "" when tensors agree within |got - want| <= atol + 1e-3 |want| (f32 sums in another order
/// than the interpreter's, as the Halide tests allow), else the first difference.
inline std::string cuda_compare(const Tensor& want, const Tensor& got, double atol = 1e-5) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape()) return "types differ";
  for (int64_t i = 0; i < want.numel(); ++i)
    if (!close_enough(got.get(i), want.get(i), 1e-3, atol))
      return fmt::format("element {}: want {}, got {}", i, want.get(i), got.get(i));
  return "";
}

/// Generates every case (function prefixes k0, k1, ...), emulates them all in one host compile
/// on random inputs and compares each output with the interpreter; one message per case, ""
/// when it matches.
inline std::vector<std::string> cuda_check(const std::vector<CudaCase>& cases, double atol = 1e-5) {
  std::vector<CudaKernelSource> sources;
  for (size_t i = 0; i < cases.size(); ++i)
    sources.push_back(cuda_kernel_source(cases[i].graph, fmt::format("k{}", i),
                                         cases[i].config ? &*cases[i].config : nullptr,
                                         cases[i].shared_limit));
  std::vector<CudaEmulation> runs;
  for (size_t i = 0; i < cases.size(); ++i)
    runs.push_back(
        {&cases[i].graph, &sources[i], interp::random_inputs(cases[i].graph, cases[i].seed)});
  std::vector<std::vector<Tensor>> got = cuda_emulate_all(runs);
  std::vector<std::string> messages;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<Tensor> want = interp::interpret(cases[i].graph, runs[i].inputs);
    std::string message;
    for (size_t o = 0; o < want.size() && message.empty(); ++o) {
      std::string diff = cuda_compare(want[o], got[i][o], atol);
      if (!diff.empty()) message = fmt::format("{}: output {}: {}", cases[i].name, o, diff);
    }
    messages.push_back(message);
  }
  return messages;
}

/// Expects every case to match the interpreter.
inline void expect_all_match(const std::vector<CudaCase>& cases, double atol = 1e-5) {
  std::vector<std::string> messages = cuda_check(cases, atol);
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(messages[i], "") << cases[i].name;
}

}  // namespace orch::codegen
