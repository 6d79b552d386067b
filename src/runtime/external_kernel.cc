#include "runtime/external_kernel.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/reference_backend.h"
#include "ir/error.h"
#include "ir/text_format.h"

namespace orch::runtime {

std::shared_ptr<const void> map_weights(const std::filesystem::path& path, int64_t expected) {
  std::string file = path.string();
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  check(fd >= 0, "{}: cannot open the weights file", file);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail("{}: cannot stat", file);
  }
  if (st.st_size != expected) {
    ::close(fd);
    fail("{}: {} bytes, the manifest says {} (truncated or corrupted)", file, st.st_size, expected);
  }
  if (expected == 0) {
    ::close(fd);
    return nullptr;
  }
  void* data = ::mmap(nullptr, static_cast<size_t>(expected), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  check(data != MAP_FAILED, "{}: mmap failed", file);
  size_t size = static_cast<size_t>(expected);
  return std::shared_ptr<const void>(
      data, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
}

void build_external(const KernelSpec& spec, const ExternalSpec& ext,
                    const std::filesystem::path& dir, const std::shared_ptr<const void>& weights,
                    ExternalKernel& out) {
  std::filesystem::path path = dir / ext.graph;
  std::ifstream in(path);
  check(in.good(), "{}: cannot read the graph of kernel {}", path.string(), spec.name);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Graph graph;
  try {
    graph = parse_graph(text);
    for (const WeightBinding& w : ext.weights) {
      ValueId v = graph.find_value(w.value);
      check(v != kNoValue, "no input '{}'", w.value);
      const TensorType& type = graph.value(v).type;
      // parse_manifest put the bytes inside weights.bin; they must also be the input's bytes.
      int64_t size = static_cast<int64_t>(dtype_size(type.dtype));
      check(w.bytes % size == 0 && w.bytes / size == num_elements(type.shape),
            "weight '{}' has {} bytes in {}, its type {} has more or fewer", w.value, w.bytes,
            kWeightsFile, format_type(type));
      graph.bind_input(v, Tensor::wrap(type.dtype, type.shape, weights,
                                       static_cast<const uint8_t*>(weights.get()) + w.offset));
    }
  } catch (const Error& e) {
    rethrow_with_context(e, path.string());
  }
  out.backend = spec.backend == "dnnl" ? &codegen::dnnl_backend() : &codegen::reference_backend();
  out.graph = std::move(graph);
  out.config = ext.config;
  try {
    out.kernel = compile_external(out);
  } catch (const Error& e) {
    rethrow_with_context(
        e, fmt::format("{}: building kernel {} ({})", path.string(), spec.name, spec.backend));
  }
}

std::unique_ptr<codegen::Kernel> compile_external(const ExternalKernel& ext) {
  if (ext.backend == &codegen::dnnl_backend()) return codegen::dnnl_compile(ext.graph, ext.config);
  check(ext.config.empty(), "backend {} has no configuration '{}'", ext.backend->name, ext.config);
  return ext.backend->compile(ext.graph);
}

void run_external(const ExternalKernel& ext, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs) {
  // The caller's tensors, kept alive while the kernel may replace them with its own.
  std::vector<Tensor> given(outputs.begin(), outputs.end());
  {
    std::lock_guard<std::mutex> lock(*ext.mutex);
    ext.kernel->run(inputs, outputs);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].bytes() == given[i].bytes()) continue;
    check(outputs[i].nbytes() == given[i].nbytes(),
          "external kernel ({}): output {} has {} bytes, {} expected", ext.backend->name, i,
          outputs[i].nbytes(), given[i].nbytes());
    std::memcpy(given[i].mutable_bytes(), outputs[i].bytes(), given[i].nbytes());
    outputs[i] = given[i];
  }
}

}  // namespace orch::runtime
