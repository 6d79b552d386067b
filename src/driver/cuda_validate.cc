// validate_cuda_module_on_host: a CUDA module's kernels run on the host, in plan order, checked
// against the interpreter value by value.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "codegen/cuda/cuda_emulate.h"
#include "codegen/cuda/cuda_source.h"
#include "driver/optimize.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/close.h"
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

// "" when `got` matches `want` within optimize.h's validation tolerance, else the element.
std::string difference(const Tensor& want, const Tensor& got) {
  for (int64_t i = 0; i < want.numel(); ++i)
    if (!close_enough(got.get(i), want.get(i), 1e-3, 1e-4))
      return fmt::format("element {}: interpreter {}, module {}", i, want.get(i), got.get(i));
  return "";
}

}  // namespace

void validate_cuda_module_on_host(const std::string& dir, const Graph& graph, uint64_t seed) {
  fs::path root(dir);
  fs::path manifest_path = root / runtime::kManifestFile;
  runtime::ModuleLayout layout =
      runtime::parse_manifest(read_file(manifest_path), manifest_path.string());
  check(!layout.target.empty(), "{}: not a CUDA module", manifest_path.string());
  std::string source = read_file(root / runtime::kCudaSourceFile);
  std::string prelude = codegen::cuda_prelude();
  check(source.starts_with(prelude), "{}: does not start with the CUDA prelude",
        (root / runtime::kCudaSourceFile).string());
  std::vector<codegen::HostFunction> functions;
  for (size_t k = 0; k < layout.kernels.size(); ++k)
    for (const runtime::LaunchSpec& l : layout.launches[k])
      functions.push_back({l.function, static_cast<int>(layout.kernel_inputs[k].size() +
                                                        layout.kernel_outputs[k].size() + 1)});
  codegen::HostKernels kernels(source.substr(prelude.size()), functions);

  HostMemory memory;
  memory.arena.resize(static_cast<size_t>(layout.arena_bytes));
  // 8-byte words: scratch values' offsets are aligned for every element type.
  memory.scratch.resize(static_cast<size_t>((layout.scratch_bytes + 7) / 8 * 8));
  std::string weights = read_file(root / layout.weights_file);
  check(static_cast<int64_t>(weights.size()) == layout.weights_bytes,
        "{}: {} bytes, the manifest says {}", layout.weights_file, weights.size(),
        layout.weights_bytes);
  memory.weights.resize(weights.size());
  std::copy_n(reinterpret_cast<const std::byte*>(weights.data()), weights.size(),
              memory.weights.data());
  memory.inputs = interp::random_inputs(graph, seed);
  for (const TensorSpec& out : layout.outputs)
    memory.outputs.emplace_back(out.type.dtype, out.type.shape);

  // The interpreter's value of everything a kernel writes, by name.
  Graph all = graph;
  std::vector<ValueId> written;
  for (size_t k = 0; k < layout.kernels.size(); ++k)
    for (const KernelValue& out : layout.kernel_outputs[k]) {
      ValueId v = graph.find_value(out.value);
      check(v != kNoValue, "{}: kernel {} writes '{}', which the graph does not have", dir,
            layout.kernels[k].name, out.value);
      written.push_back(v);
    }
  all.set_outputs(written);
  std::vector<Tensor> values = interp::interpret(all, memory.inputs);
  std::map<std::string, const Tensor*> want;
  for (size_t i = 0; i < written.size(); ++i) want[graph.value(written[i]).name] = &values[i];

  for (size_t k = 0; k < layout.kernels.size(); ++k) {
    std::vector<void*> args;
    for (const KernelValue& in : layout.kernel_inputs[k]) args.push_back(memory.at(in.at));
    for (const KernelValue& out : layout.kernel_outputs[k]) args.push_back(memory.at(out.at));
    args.push_back(memory.scratch.empty() ? nullptr : memory.scratch.data());
    for (const runtime::LaunchSpec& l : layout.launches[k])
      kernels.launch({.function = l.function, .blocks = l.blocks, .threads = l.threads}, args);
    for (const KernelValue& out : layout.kernel_outputs[k]) {
      std::string diff = difference(*want.at(out.value), memory.tensor(out.type, out.at));
      check(diff.empty(),
            "validation: kernel {} writes '{}', which differs from the interpreter: {}",
            layout.kernels[k].name, out.value, diff);
    }
  }
  std::vector<Tensor> expected = interp::interpret(graph, memory.inputs);
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::optional<Location>& from = layout.output_copy_from[i];
    Tensor got = from ? memory.tensor(layout.outputs[i].type, *from) : memory.outputs[i];
    std::string diff = difference(expected[i], got);
    check(diff.empty(), "validation: module output {} '{}' differs from the interpreter: {}", i,
          layout.outputs[i].name, diff);
  }
}

}  // namespace orch::driver
