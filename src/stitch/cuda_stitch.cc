// A plan as a CUDA module: each kernel's CUDA C with its GPU tile config, one NVRTC compile; an
// op the generator lacks as a host kernel (the reference backend between copies).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "codegen/cuda/cuda_nvrtc.h"
#include "codegen/cuda/cuda_source.h"
#include "ir/error.h"
#include "ir/parallel.h"
#include "ir/text_format.h"
#include "runtime/module_format.h"
#include "schedule/gpu/gpu_tiles.h"
#include "stitch/layouter.h"
#include "stitch/stitch.h"

namespace orch::stitch {

namespace fs = std::filesystem;

namespace {

// The fastest legal GPU tile config of `kernel` by the analytic model, priced as the generated
// code runs it (codegen::cuda_tile_form); nullopt when the kernel has no tile graph the configs
// understand, or a root that runs one warp per element (codegen::cuda_warp_root): the
// generator then uses its default geometry.
std::optional<schedule::ScoredGpuConfig> best_config(const Graph& kernel,
                                                     const schedule::GpuMachine& gpu) {
  try {
    schedule::TileGraph tg = schedule::make_tile_graph(kernel);
    if (codegen::cuda_warp_root(kernel, tg)) return std::nullopt;
    std::vector<schedule::ScoredGpuConfig> configs =
        schedule::gpu_configs(tg, gpu, 1, codegen::cuda_tile_form(kernel, tg));
    if (configs.empty()) return std::nullopt;
    return configs.front();
  } catch (const Error&) {
    return std::nullopt;
  }
}

// best_config of every generated kernel (those without a library call), on every core: the
// search is the stitcher's longest part for large tensors (YOLOX-Nano at batch 16: minutes on
// one core), and kernels are independent.
std::vector<std::optional<schedule::ScoredGpuConfig>> best_configs(
    const std::vector<StitchedKernel>& kernels,
    const std::vector<std::optional<codegen::LibraryCall>>& calls,
    const schedule::GpuMachine& gpu) {
  std::vector<std::optional<schedule::ScoredGpuConfig>> configs(kernels.size());
  parallel_for(kernels.size(), [&](size_t i) {
    if (!calls[i] && !kernels[i].external) configs[i] = best_config(kernels[i].graph, gpu);
  });
  return configs;
}

// "block=64,64 thread=4,4 reduce_step=32 shared_bytes=16384 est_us=1.25": the report's and
// manifest's config text; shared_bytes is what the generated code stages per block.
std::string config_text(const schedule::ScoredGpuConfig& s, int64_t shared_bytes) {
  return fmt::format("block={} thread={} reduce_step={} shared_bytes={} est_us={:.2f}",
                     fmt::join(s.config.block, ","), fmt::join(s.config.thread, ","),
                     s.config.reduce_step, shared_bytes, s.cost.time_us);
}

}  // namespace

StitchResult stitch_cuda(const Graph& graph, const OrchestrationProblem& problem, const Plan& plan,
                         std::span<const codegen::KernelChoice> choices, const std::string& out_dir,
                         const schedule::GpuMachine& gpu, const StitchOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::string unavailable = codegen::nvrtc_unavailable();
  if (!unavailable.empty()) throw Unsupported("CUDA modules need NVRTC: " + unavailable);
  Layouter layouter(graph, options.min_weight_bytes);
  ModuleLayout layout = start_layout(graph, problem, plan, choices, options, layouter);
  layout.target = "cuda";
  layout.sm_arch = gpu.cc_major * 10 + gpu.cc_minor;
  layout.gpu = gpu.name;

  fs::path out(out_dir);
  fs::create_directories(out);
  StitchResult result;
  std::string source = codegen::cuda_prelude();
  std::vector<ValueId> outputs;
  std::vector<StitchedKernel> kernels;
  std::vector<std::optional<codegen::LibraryCall>> calls;
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    StitchedKernel k = plan_kernel(graph, problem, plan, choices, i, outputs);
    // An op the generator lacks runs alone on the host, as the tuner chose and priced it
    // (Tuner::describe): external, its weights bound from weights.bin like a CPU module's
    // reference kernel.
    const bool on_host = k.choice.backend == "reference";
    k.backend = on_host ? "reference" : "cuda";
    // A library call reads every constant from the weights: laid out with library_call_of's
    // threshold, the kernel graph is the one whose input positions the call names.
    calls.push_back(
        on_host ? std::nullopt
                : codegen::library_call_of(graph, k.primitives, outputs, options.cuda_libraries));
    layouter.lay_out_kernel(
        k, outputs, layout,
        calls.back() ? std::optional(codegen::kLibraryMinWeightBytes) : std::nullopt);
    std::string why = codegen::cuda_reject(k.graph);
    check(why.empty() || on_host, "kernel {} cannot be generated for CUDA: {}", k.name, why);
    if (on_host) result.notes.push_back(fmt::format("{} runs on the host: {}", k.name, why));
    kernels.push_back(std::move(k));
  }
  std::vector<std::optional<schedule::ScoredGpuConfig>> configs = best_configs(kernels, calls, gpu);
  for (size_t i = 0; i < kernels.size(); ++i) {
    StitchedKernel& k = kernels[i];
    if (const std::optional<codegen::LibraryCall>& call = calls[i]) {
      k.backend = k.choice.backend = k.choice.config = call->backend;
      k.launches = {call->launch};
      (call->backend == "cublas" ? result.cublas_kernels : result.cudnn_kernels) += 1;
      result.cuda_launches += 1;
      layout.kernels.push_back(std::move(k));
      continue;
    }
    if (k.external) {
      fs::create_directories(out / runtime::kKernelGraphDir);
      write_file(out / runtime::kKernelGraphDir / (k.name + ".orch"), print_graph(k.graph));
      result.reference_kernels += 1;
      layout.kernels.push_back(std::move(k));
      continue;
    }
    const std::optional<schedule::ScoredGpuConfig>& config = configs[i];
    // The config was chosen within the GPU's opt-in shared memory per block, which the code
    // then asks for (dynamic shared memory).
    codegen::CudaKernelSource ks = codegen::cuda_kernel_source(
        k.graph, k.name + "_", config ? &config->config : nullptr, gpu.shared_per_block_optin);
    k.choice.backend = "cuda";
    k.choice.config = config ? config_text(*config, ks.shared_bytes) : "default";
    k.launches = ks.launches;
    k.scratch_bytes = ks.scratch_bytes;
    layout.scratch_bytes = std::max(layout.scratch_bytes, ks.scratch_bytes);
    source += fmt::format("\n// {}: {} primitives\n", k.name, k.primitives.size());
    source += ks.code;
    result.cuda_kernels += 1;
    result.cuda_launches += static_cast<int>(ks.launches.size());
    layout.kernels.push_back(std::move(k));
  }
  layouter.place_copied_outputs(layout);

  write_file(out / runtime::kCudaSourceFile, source);
  codegen::CudaBinary binary =
      codegen::nvrtc_compile(source, runtime::kCudaSourceFile, gpu.cc_major, gpu.cc_minor);
  write_file(out / runtime::kCubinFile, binary.cubin);
  if (!binary.log.empty()) result.notes.push_back("NVRTC: " + binary.log);
  finish_module(graph, layout, out,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                result);
  return result;
}

}  // namespace orch::stitch
