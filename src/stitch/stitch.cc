// The plan laid out (values placed in regions, arena planned, weights collected), then the
// kernels generated, the driver built and the module files written.
#include "stitch/stitch.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/halide/halide_aot.h"
#include "codegen/kernel.h"
#include "codegen/reference_backend.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "runtime/module_format.h"
#include "stitch/blocked_layout.h"
#include "stitch/layouter.h"

namespace orch::stitch {

namespace fs = std::filesystem;

namespace {

// The measured backend, or for an unmeasured kernel the first that accepts it.
std::string pick_backend(const codegen::KernelChoice& choice, const Graph& kernel) {
  if (!choice.backend.empty()) return choice.backend;
  if (codegen::dnnl_backend().reject(kernel).empty()) return "dnnl";
  if (codegen::halide_reject(kernel).empty()) return "halide";
  return "reference";
}

// `k`, laid out again, keeps the channel blocks its values had in `before`.
void keep_channel_blocks(const StitchedKernel& before, StitchedKernel& k) {
  for (std::vector<KernelValue>* values : {&k.inputs, &k.outputs})
    for (KernelValue& v : *values)
      for (const std::vector<KernelValue>* old : {&before.inputs, &before.outputs})
        for (const KernelValue& o : *old)
          if (o.value == v.value) v.channel_block = o.channel_block;
}

// Compiles the driver and links it with the Halide objects into kernels.so.
void build_library(const ModuleLayout& layout, const fs::path& out, const StitchOptions& options) {
  fs::path build = out / runtime::kBuildDir;
  fs::create_directories(build / "include");
  fs::copy_file(ORCH_MODULE_ABI_HEADER, build / "include" / "module_abi.h",
                fs::copy_options::overwrite_existing);
  write_file(build / "driver.cc", driver_source(layout));
  std::string objects;
  bool any_halide = false;
  for (const StitchedKernel& k : layout.kernels)
    if (!k.external) objects += " " + k.name + ".o", any_halide = true;
  std::string includes = "-Iinclude";
  std::string openmp;  // the driver runs Halide's parallel loops on OpenMP (driver_source.cc)
  if (any_halide) {
    openmp = " -fopenmp";
    codegen::halide_compile_runtime_object((build / "halide_runtime.o").string());
    objects += " halide_runtime.o";
    includes += " -I" + codegen::halide_runtime_include_dir();
  }
  std::string command =
      // -Bsymbolic: the module's Halide runtime calls bind inside it, never to another copy
      // (libHalide's, another module's) in the loading process.
      fmt::format(
          "{} -std=c++17 -O2 -fPIC -shared -Wl,-Bsymbolic{} {} -o ../{} driver.cc{} "
          "-lpthread -ldl",
          options.cxx, openmp, includes, runtime::kLibraryFile, objects);
  write_file(build / "link.sh", "#!/bin/sh\ncd \"$(dirname \"$0\")\"\n" + command + "\n");
  std::string shell = fmt::format("cd '{}' && {} > link.log 2>&1", build.string(), command);
  int status = std::system(shell.c_str());
  if (status != 0) {
    std::ifstream log(build / "link.log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      fail("building {}: the C++ compiler '{}' was not found in PATH", runtime::kLibraryFile,
           options.cxx);
    if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
    fail("building {} failed ({}):\n{}", runtime::kLibraryFile, (build / "link.sh").string(), text);
  }
}

}  // namespace

StitchResult stitch(const Graph& graph, const OrchestrationProblem& problem, const Plan& plan,
                    std::span<const codegen::KernelChoice> choices, const std::string& out_dir,
                    const StitchOptions& options) {
  auto start = std::chrono::steady_clock::now();
  Layouter layouter(graph, options.min_weight_bytes);
  ModuleLayout layout = start_layout(graph, problem, plan, choices, options, layouter);

  fs::path out(out_dir);
  fs::create_directories(out / runtime::kBuildDir);
  fs::create_directories(out / runtime::kKernelGraphDir);
  StitchResult result;
  std::vector<ValueId> outputs;
  std::vector<std::vector<ValueId>> kernel_outputs;
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    StitchedKernel k = plan_kernel(graph, problem, plan, choices, i, outputs);
    k.backend = pick_backend(k.choice, codegen::extract_kernel(graph, k.primitives, outputs));
    check(k.backend == "halide" || k.backend == "dnnl" || k.backend == "reference",
          "kernel {}: unknown backend '{}' for a CPU module", k.name, k.backend);
    layouter.lay_out_kernel(k, outputs, layout);
    kernel_outputs.push_back(outputs);
    layout.kernels.push_back(std::move(k));
  }
  // Once every kernel is laid out: which tensors they can share channel-blocked.
  if (options.blocked_between_kernels)
    result.blocked_tensors =
        store_blocked_between_kernels(graph, layout, options.relayout_convolutions);
  for (size_t i = 0; i < layout.kernels.size(); ++i) {
    StitchedKernel& k = layout.kernels[i];
    if (k.backend == "halide") {
      try {
        std::string prefix = (out / runtime::kBuildDir / k.name).string();
        codegen::HalideSchedule schedule;
        if (!k.choice.config.empty())
          schedule = codegen::halide_schedule_from_text(k.choice.config);
        codegen::halide_compile_kernel_object(k.graph, prefix + ".o", prefix + ".h",
                                              "orch_" + k.name,
                                              k.choice.config.empty() ? nullptr : &schedule);
      } catch (const Error& e) {
        // A block-shaped kernel reads tensors no other backend could read as they are stored.
        check(!k.block_shaped, "{}: Halide failed on the block-shaped kernel: {}", k.name,
              e.what());
        // A kernel Halide cannot build ahead of time still runs, by the interpreter (on tensors
        // stored blocked too: the kernel is oblivious to their layout).
        result.notes.push_back(
            fmt::format("{}: Halide failed, runs as reference: {}", k.name, e.what()));
        k.backend = "reference";
        StitchedKernel halide = k;
        layouter.lay_out_kernel(k, kernel_outputs[i], layout);
        keep_channel_blocks(halide, k);
      }
    }
    if (k.external)
      write_file(out / runtime::kKernelGraphDir / (k.name + ".orch"), print_graph(k.graph));
    result.halide_kernels += k.backend == "halide";
    result.dnnl_kernels += k.backend == "dnnl";
    result.reference_kernels += k.backend == "reference";
  }
  layouter.place_copied_outputs(layout);

  build_library(layout, out, options);
  finish_module(graph, layout, out,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                result);
  return result;
}

}  // namespace orch::stitch
