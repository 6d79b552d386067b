#include "driver/host_cuda_module.h"

#include <filesystem>
#include <fstream>

#include "codegen/cublas_gemm.h"
#include "codegen/cuda/cuda_emulate.h"
#include "codegen/cuda/cuda_source.h"
#include "codegen/cudnn_conv.h"
#include "ir/error.h"
#include "runtime/external_kernel.h"
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

// A cuBLAS launch as the BLAS definition computes it, with the arguments the runtime passes
// cuBLAS: what checks their derivation from the row-major GEMM without a GPU.
void run_gemm(const codegen::GemmSpec& gemm, std::span<void* const> args, size_t inputs) {
  codegen::CublasGemmArgs g = codegen::cublas_arguments(gemm);
  const float* operands[] = {static_cast<const float*>(args[gemm.a]),
                             static_cast<const float*>(args[gemm.b])};
  float* c = static_cast<float*>(args[inputs]);  // the kernel's one output
  codegen::sgemm_strided_batched(g, operands[g.first], operands[g.second], c);
}

// A cuDNN launch as its documented cross-correlation computes it (with the bias and activation
// of the fused call), from the descriptor arguments the runtime gives cuDNN.
void run_conv(const codegen::ConvSpec& conv, std::span<void* const> args,
              const std::vector<KernelValue>& inputs, const KernelValue& output) {
  codegen::CudnnConvArgs a = codegen::cudnn_arguments(conv, inputs[conv.x].type.shape,
                                                      inputs[conv.w].type.shape, output.type.shape);
  codegen::cross_correlation(a, static_cast<const float*>(args[conv.x]),
                             static_cast<const float*>(args[conv.w]),
                             static_cast<float*>(args[inputs.size()]),
                             conv.bias < 0 ? nullptr : static_cast<const float*>(args[conv.bias]));
}

// The host functions kernels.cu must define: every generated launch's, with its parameter
// count (inputs, outputs, scratch).
std::vector<codegen::HostFunction> generated_functions(const runtime::ModuleLayout& layout) {
  std::vector<codegen::HostFunction> functions;
  for (size_t k = 0; k < layout.kernels.size(); ++k)
    for (const runtime::LaunchSpec& l : layout.launches[k])
      if (!l.gemm && !l.conv)
        functions.push_back({l.function, static_cast<int>(layout.kernel_inputs[k].size() +
                                                          layout.kernel_outputs[k].size() + 1)});
  return functions;
}

std::string generated_code(const fs::path& root) {
  std::string source = read_file(root / runtime::kCudaSourceFile);
  std::string prelude = codegen::cuda_prelude();
  check(source.starts_with(prelude), "{}: does not start with the CUDA prelude",
        (root / runtime::kCudaSourceFile).string());
  return source.substr(prelude.size());
}

}  // namespace

struct HostCudaModule::Impl {
  std::string dir;
  runtime::ModuleLayout layout;
  codegen::HostKernels kernels;
  // The module's memory: its arena, weights and scratch, and the caller's tensors during a run.
  std::vector<std::byte> arena, weights, scratch;
  std::vector<Tensor> inputs, outputs;
  // Per kernel: built for a host kernel (an op the CUDA generator lacks), empty otherwise.
  std::vector<runtime::ExternalKernel> external;

  Impl(std::string directory, runtime::ModuleLayout parsed)
      : dir(std::move(directory)),
        layout(std::move(parsed)),
        kernels(generated_code(dir), generated_functions(layout)) {}

  // parse_manifest checked that every location lies inside its region.
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

  // A host kernel through the reference backend, as the GPU runtime runs it between copies.
  void run_on_host(size_t k) {
    std::vector<Tensor> ins, outs;
    for (const KernelValue& in : layout.kernel_inputs[k]) ins.push_back(tensor(in.type, in.at));
    for (const KernelValue& out : layout.kernel_outputs[k])
      outs.emplace_back(out.type.dtype, out.type.shape);
    runtime::run_external(external[k], ins, outs);
    for (size_t i = 0; i < outs.size(); ++i)
      std::copy_n(outs[i].bytes(), outs[i].nbytes(), at(layout.kernel_outputs[k][i].at));
  }

  void run_kernel(size_t k) {
    if (external[k].kernel) return run_on_host(k);
    std::vector<void*> args;
    std::vector<int64_t> output_bytes;
    for (const KernelValue& in : layout.kernel_inputs[k]) args.push_back(at(in.at));
    for (const KernelValue& out : layout.kernel_outputs[k]) {
      args.push_back(at(out.at));
      output_bytes.push_back(num_elements(out.type.shape) * dtype_size(out.type.dtype));
    }
    args.push_back(scratch.empty() ? nullptr : scratch.data());
    std::vector<codegen::WrittenBuffer> written = codegen::written_buffers(
        layout.kernel_inputs[k].size(), output_bytes, static_cast<int64_t>(scratch.size()));
    for (const runtime::LaunchSpec& l : layout.launches[k])
      if (l.gemm)
        run_gemm(*l.gemm, args, layout.kernel_inputs[k].size());
      else if (l.conv)
        run_conv(*l.conv, args, layout.kernel_inputs[k], layout.kernel_outputs[k][0]);
      else
        kernels.launch({l.function, l.blocks, l.threads, l.shared_bytes}, args, written);
  }
};

HostCudaModule::HostCudaModule(const std::string& dir) {
  fs::path root(dir);
  fs::path manifest_path = root / runtime::kManifestFile;
  runtime::ModuleLayout layout =
      runtime::parse_manifest(read_file(manifest_path), manifest_path.string());
  check(layout.cuda, "{}: not a CUDA module", manifest_path.string());
  impl_ = std::make_unique<Impl>(dir, std::move(layout));
  Impl& m = *impl_;
  m.arena.resize(static_cast<size_t>(m.layout.arena_bytes));
  // Scratch values' offsets are aligned for every element type, and so is the buffer (new).
  m.scratch.resize(static_cast<size_t>((m.layout.scratch_bytes + 7) / 8 * 8));
  std::string weights = read_file(root / m.layout.weights_file);
  check(static_cast<int64_t>(weights.size()) == m.layout.weights_bytes,
        "{}: {} bytes, the manifest says {}", m.layout.weights_file, weights.size(),
        m.layout.weights_bytes);
  m.weights.resize(weights.size());
  std::copy_n(reinterpret_cast<const std::byte*>(weights.data()), weights.size(), m.weights.data());
  // The host kernels' weights: views of m.weights, which lives as long as they do.
  std::shared_ptr<const void> host_weights(std::shared_ptr<const void>(), m.weights.data());
  m.external.resize(m.layout.kernels.size());
  for (size_t k = 0; k < m.layout.kernels.size(); ++k)
    if (m.layout.external[k])
      runtime::build_external(m.layout.kernels[k], *m.layout.external[k], root, host_weights,
                              m.external[k]);
}

HostCudaModule::~HostCudaModule() = default;
HostCudaModule::HostCudaModule(HostCudaModule&&) noexcept = default;
HostCudaModule& HostCudaModule::operator=(HostCudaModule&&) noexcept = default;

const std::vector<TensorSpec>& HostCudaModule::inputs() const {
  return impl_->layout.inputs;
}
const std::vector<TensorSpec>& HostCudaModule::outputs() const {
  return impl_->layout.outputs;
}
const std::vector<KernelSpec>& HostCudaModule::kernels() const {
  return impl_->layout.kernels;
}

std::vector<Tensor> HostCudaModule::run(std::span<const Tensor> inputs,
                                        const KernelHook& after_kernel) {
  Impl& m = *impl_;
  check(inputs.size() == m.layout.inputs.size(), "{}: the module has {} inputs, {} given", m.dir,
        m.layout.inputs.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    check(m.layout.inputs[i].type == TensorType{inputs[i].dtype(), inputs[i].shape()},
          "{}: input '{}' is {}, {} given", m.dir, m.layout.inputs[i].name,
          format_type(m.layout.inputs[i].type),
          format_type({inputs[i].dtype(), inputs[i].shape()}));
  m.inputs.assign(inputs.begin(), inputs.end());
  m.outputs.clear();
  for (const TensorSpec& out : m.layout.outputs) {
    m.outputs.emplace_back(out.type.dtype, out.type.shape);
    codegen::poison({m.outputs.back().mutable_bytes(), m.outputs.back().nbytes()});
  }
  // Nothing a run reads before writing it may come from the last run or the allocation.
  codegen::poison(m.arena);
  codegen::poison(m.scratch);
  for (size_t k = 0; k < m.layout.kernels.size(); ++k) {
    m.run_kernel(k);
    if (!after_kernel) continue;
    std::vector<Tensor> written;
    for (const KernelValue& out : m.layout.kernel_outputs[k])
      written.push_back(m.tensor(out.type, out.at));
    after_kernel(static_cast<int>(k), written);
  }
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < m.layout.outputs.size(); ++i) {
    const std::optional<Location>& from = m.layout.output_copy_from[i];
    outputs.push_back(from ? m.tensor(m.layout.outputs[i].type, *from) : std::move(m.outputs[i]));
  }
  m.inputs.clear();
  m.outputs.clear();
  return outputs;
}

}  // namespace orch::driver
