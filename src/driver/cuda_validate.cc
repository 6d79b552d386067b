// validate_cuda_module_on_host: a CUDA module's kernels run on the host, in plan order, checked
// against the interpreter value by value.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <span>

#include "codegen/cublas_gemm.h"
#include "codegen/cuda/cuda_emulate.h"
#include "codegen/cuda/cuda_source.h"
#include "codegen/cudnn_conv.h"
#include "driver/optimize.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "runtime/module_manifest.h"

namespace orch::driver {
namespace {

namespace fs = std::filesystem;
using runtime::KernelValue;
using runtime::Location;
using runtime::Region;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "{}: cannot read", path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The module's memory on the host: its arena, weights and scratch, and the caller's tensors.
// parse_manifest checked that every location lies inside its region.
struct HostMemory {
  std::vector<std::byte> arena, weights, scratch;
  std::vector<Tensor> inputs, outputs;

  std::byte* at(const Location& location) {
    switch (location.region) {
      case Region::arena:
        return arena.data() + location.offset;
      case Region::weights:
        return weights.data() + location.offset;
      case Region::input:
        return inputs[location.index].mutable_bytes();
      case Region::output:
        return outputs[location.index].mutable_bytes();
    }
    fail("unknown region");
  }

  Tensor tensor(const TensorType& type, const Location& location) {
    Tensor t(type.dtype, type.shape);
    std::copy_n(at(location), t.nbytes(), t.mutable_bytes());
    return t;
  }
};

// A cuBLAS launch as the BLAS definition computes it, with the arguments the runtime passes
// cuBLAS: what checks their derivation from the row-major GEMM without a GPU.
void run_gemm(const codegen::GemmSpec& gemm, std::span<void* const> args, size_t inputs) {
  codegen::CublasGemmArgs g = codegen::cublas_arguments(gemm);
  const float* operands[] = {static_cast<const float*>(args[gemm.a]),
                             static_cast<const float*>(args[gemm.b])};
  float* c = static_cast<float*>(args[inputs]);  // the kernel's one output
  codegen::sgemm_strided_batched(g, operands[g.first], operands[g.second], c);
}

// A cuDNN launch as its documented cross-correlation computes it, from the descriptor
// arguments the runtime gives cuDNN.
void run_conv(const codegen::ConvSpec& conv, std::span<void* const> args,
              const std::vector<KernelValue>& inputs, const KernelValue& output) {
  codegen::CudnnConvArgs a = codegen::cudnn_arguments(conv, inputs[conv.x].type.shape,
                                                      inputs[conv.w].type.shape, output.type.shape);
  codegen::cross_correlation(a, static_cast<const float*>(args[conv.x]),
                             static_cast<const float*>(args[conv.w]),
                             static_cast<float*>(args[inputs.size()]));
}

}  // namespace

void validate_cuda_module_on_host(const std::string& dir, const Graph& graph, uint64_t seed) {
  fs::path root(dir);
  fs::path manifest_path = root / runtime::kManifestFile;
  runtime::ModuleLayout layout =
      runtime::parse_manifest(read_file(manifest_path), manifest_path.string());
  check(layout.cuda, "{}: not a CUDA module", manifest_path.string());
  std::string source = read_file(root / runtime::kCudaSourceFile);
  std::string prelude = codegen::cuda_prelude();
  check(source.starts_with(prelude), "{}: does not start with the CUDA prelude",
        (root / runtime::kCudaSourceFile).string());
  std::vector<codegen::HostFunction> functions;
  for (size_t k = 0; k < layout.kernels.size(); ++k)
    for (const runtime::LaunchSpec& l : layout.launches[k])
      if (!l.gemm && !l.conv)
        functions.push_back({l.function, static_cast<int>(layout.kernel_inputs[k].size() +
                                                          layout.kernel_outputs[k].size() + 1)});
  codegen::HostKernels kernels(source.substr(prelude.size()), functions);

  HostMemory memory;
  memory.arena.resize(static_cast<size_t>(layout.arena_bytes));
  // Scratch values' offsets are aligned for every element type, and so is the buffer (new).
  memory.scratch.resize(static_cast<size_t>((layout.scratch_bytes + 7) / 8 * 8));
  std::string weights = read_file(root / layout.weights_file);
  check(static_cast<int64_t>(weights.size()) == layout.weights_bytes,
        "{}: {} bytes, the manifest says {}", layout.weights_file, weights.size(),
        layout.weights_bytes);
  memory.weights.resize(weights.size());
  std::copy_n(reinterpret_cast<const std::byte*>(weights.data()), weights.size(),
              memory.weights.data());
  memory.inputs = interp::random_inputs(graph, seed);
  check(memory.inputs.size() == layout.inputs.size() &&
            graph.outputs().size() == layout.outputs.size(),
        "{}: the module has {} inputs and {} outputs, the graph {} and {}", dir,
        layout.inputs.size(), layout.outputs.size(), memory.inputs.size(), graph.outputs().size());
  for (size_t i = 0; i < memory.inputs.size(); ++i)
    check(layout.inputs[i].type == TensorType{memory.inputs[i].dtype(), memory.inputs[i].shape()},
          "{}: input '{}' is {}, the graph's {}", dir, layout.inputs[i].name,
          format_type(layout.inputs[i].type),
          format_type({memory.inputs[i].dtype(), memory.inputs[i].shape()}));
  for (const TensorSpec& out : layout.outputs)
    memory.outputs.emplace_back(out.type.dtype, out.type.shape);

  check_module_run(dir, graph, memory.inputs, layout.kernels, layout.outputs,
                   [&](const KernelHook& after_kernel) {
                     for (size_t k = 0; k < layout.kernels.size(); ++k) {
                       std::vector<void*> args;
                       for (const KernelValue& in : layout.kernel_inputs[k])
                         args.push_back(memory.at(in.at));
                       for (const KernelValue& out : layout.kernel_outputs[k])
                         args.push_back(memory.at(out.at));
                       args.push_back(memory.scratch.empty() ? nullptr : memory.scratch.data());
                       for (const runtime::LaunchSpec& l : layout.launches[k])
                         if (l.gemm)
                           run_gemm(*l.gemm, args, layout.kernel_inputs[k].size());
                         else if (l.conv)
                           run_conv(*l.conv, args, layout.kernel_inputs[k],
                                    layout.kernel_outputs[k][0]);
                         else
                           kernels.launch({l.function, l.blocks, l.threads}, args);
                       std::vector<Tensor> written;
                       for (const KernelValue& out : layout.kernel_outputs[k])
                         written.push_back(memory.tensor(out.type, out.at));
                       after_kernel(static_cast<int>(k), written);
                     }
                     std::vector<Tensor> outputs;
                     for (size_t i = 0; i < layout.outputs.size(); ++i) {
                       const std::optional<Location>& from = layout.output_copy_from[i];
                       outputs.push_back(from ? memory.tensor(layout.outputs[i].type, *from)
                                              : memory.outputs[i]);
                     }
                     return outputs;
                   });
}

}  // namespace orch::driver
