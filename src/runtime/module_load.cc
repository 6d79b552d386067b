// Loading a module directory: manifest, weights mapping, kernels.so, external kernels. Every
// failure is an Error naming the file and what is wrong with it.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/reference_backend.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "runtime/module_format.h"
#include "runtime/module_impl.h"

namespace orch::runtime {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Reads manifest fields with errors that name the manifest and the field.
class Manifest {
 public:
  explicit Manifest(const fs::path& path) : path_(path.string()) {
    std::ifstream in(path);
    check(in.good(), "{}: cannot read the module manifest (is this a module directory?)", path_);
    try {
      root_ = json::parse(in);
    } catch (const json::exception& e) {
      fail("{}: not valid JSON: {}", path_, e.what());
    }
    check(root_.is_object(), "{}: not a JSON object", path_);
  }

  const json& root() const { return root_; }

  template <typename T>
  T get(const json& object, const char* field) const {
    check(object.is_object() && object.contains(field), "{}: missing field '{}'", path_, field);
    try {
      return object.at(field).get<T>();
    } catch (const json::exception&) {
      fail("{}: field '{}' has the wrong type", path_, field);
    }
  }

  const json& array(const json& object, const char* field) const {
    check(object.is_object() && object.contains(field) && object.at(field).is_array(),
          "{}: missing array '{}'", path_, field);
    return object.at(field);
  }

  TensorType type(const json& object) const {
    std::string name = get<std::string>(object, "dtype");
    std::optional<DType> dtype = parse_dtype(name);
    check(dtype.has_value(), "{}: unknown dtype '{}'", path_, name);
    return {*dtype, get<Shape>(object, "shape")};
  }

  Location location(const json& object) const {
    std::string region = get<std::string>(object, "region");
    Location at;
    at.bytes = get<int64_t>(object, "bytes");
    if (region == "input" || region == "output") {
      at.region = region == "input" ? Region::input : Region::output;
      at.index = get<int>(object, "index");
    } else {
      check(region == "arena" || region == "weights", "{}: unknown region '{}'", path_, region);
      at.region = region == "arena" ? Region::arena : Region::weights;
      at.offset = get<int64_t>(object, "offset");
    }
    return at;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  json root_;
};

std::shared_ptr<const void> map_weights(const fs::path& path, int64_t expected) {
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

template <typename F>
F symbol(void* handle, const std::string& file, const char* name) {
  void* s = ::dlsym(handle, name);
  check(s != nullptr, "{}: missing symbol '{}' (not an orch module library)", file, name);
  return reinterpret_cast<F>(s);
}

Library open_library(const fs::path& path, int kernels) {
  std::string file = path.string();
  check(fs::exists(path), "{}: the kernel library is missing", file);
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) fail("{}: cannot load: {}", file, ::dlerror());
  Library lib;
  lib.handle = std::shared_ptr<void>(handle, [](void* h) { ::dlclose(h); });
  auto version = symbol<int (*)()>(handle, file, "orch_module_abi_version");
  check(version() == ORCH_MODULE_ABI_VERSION, "{}: module ABI version {}, this runtime reads {}",
        file, version(), ORCH_MODULE_ABI_VERSION);
  auto count = symbol<int (*)()>(handle, file, "orch_module_num_kernels");
  check(count() == kernels, "{}: {} kernels, the manifest lists {}", file, count(), kernels);
  lib.run = symbol<int (*)(orch_module_frame*)>(handle, file, "orch_module_run");
  lib.set_threads = symbol<void (*)(int)>(handle, file, "orch_module_set_threads");
  lib.last_error = symbol<const char* (*)()>(handle, file, "orch_module_last_error");
  return lib;
}

const uint8_t* weights_base(const Module::Impl& impl) {
  return static_cast<const uint8_t*>(impl.weights.get());
}

// Builds an external kernel from its graph file, binding its weights from weights.bin.
codegen::Kernel* build_external(const Manifest& m, const json& k, const fs::path& dir,
                                Module::Impl& impl, ExternalKernel& out) {
  std::string name = m.get<std::string>(k, "name");
  fs::path path = dir / m.get<std::string>(k, "graph");
  std::ifstream in(path);
  check(in.good(), "{}: cannot read the graph of kernel {}", path.string(), name);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Graph graph;
  try {
    graph = parse_graph(text);
    for (const json& w : m.array(k, "weights")) {
      std::string value = m.get<std::string>(w, "value");
      ValueId v = graph.find_value(value);
      check(v != kNoValue, "no input '{}'", value);
      int64_t offset = m.get<int64_t>(w, "offset"), bytes = m.get<int64_t>(w, "bytes");
      check(offset >= 0 && bytes >= 0 && offset + bytes <= impl.weights_bytes,
            "weight '{}' lies outside weights.bin", value);
      const TensorType& type = graph.value(v).type;
      graph.bind_input(
          v, Tensor::wrap(type.dtype, type.shape, impl.weights, weights_base(impl) + offset));
    }
  } catch (const Error& e) {
    rethrow_with_context(e, path.string());
  }
  std::string backend = m.get<std::string>(k, "backend");
  const codegen::Backend& b =
      backend == "dnnl" ? codegen::dnnl_backend() : codegen::reference_backend();
  check(backend == "dnnl" || backend == "reference", "{}: kernel {} has unknown backend '{}'",
        m.path(), name, backend);
  try {
    out.kernel = b.compile(graph);
  } catch (const Error& e) {
    rethrow_with_context(e,
                         fmt::format("{}: building kernel {} ({})", path.string(), name, backend));
  }
  return out.kernel.get();
}

std::vector<KernelValue> kernel_values(const Manifest& m, const json& list) {
  std::vector<KernelValue> values;
  for (const json& v : list)
    values.push_back({m.get<std::string>(v, "value"), m.type(v), m.location(v)});
  return values;
}

// Every location inside its region and as large as its value, so that a damaged manifest
// cannot send a kernel or a hook outside the buffers.
void check_locations(const Manifest& m, const Module::Impl& impl, const std::string& what,
                     const std::vector<KernelValue>& values) {
  for (const KernelValue& kv : values) {
    const Location& at = kv.at;
    int64_t bytes = num_elements(kv.type.shape) * static_cast<int64_t>(dtype_size(kv.type.dtype));
    bool inside = at.offset >= 0 && at.bytes == bytes;
    if (at.region == Region::arena) inside &= at.offset + bytes <= impl.arena_bytes;
    if (at.region == Region::weights) inside &= at.offset + bytes <= impl.weights_bytes;
    if (at.region == Region::input)
      inside &= at.index >= 0 && at.index < static_cast<int>(impl.inputs.size()) &&
                impl.inputs[at.index].type == kv.type;
    if (at.region == Region::output)
      inside &= at.index >= 0 && at.index < static_cast<int>(impl.outputs.size()) &&
                impl.outputs[at.index].type == kv.type;
    check(inside, "{}: {}: value '{}' lies outside its region", m.path(), what, kv.value);
  }
}

}  // namespace

void load_module(const std::string& dir_text, Module::Impl& impl) {
  fs::path dir(dir_text);
  check(fs::is_directory(dir), "{}: not a module directory", dir_text);
  impl.dir = dir_text;
  Manifest m(dir / kManifestFile);
  const json& root = m.root();
  check(m.get<std::string>(root, "format") == kManifestFormat, "{}: not an orch module manifest",
        m.path());
  int version = m.get<int>(root, "version");
  check(version == kManifestVersion, "{}: manifest version {}, this runtime reads {}", m.path(),
        version, kManifestVersion);
  impl.arena_bytes = m.get<int64_t>(root, "arena_bytes");
  impl.weights_bytes = m.get<int64_t>(root, "weights_bytes");
  check(impl.arena_bytes >= 0 && impl.weights_bytes >= 0, "{}: negative sizes", m.path());
  for (const json& in : m.array(root, "inputs"))
    impl.inputs.push_back({m.get<std::string>(in, "name"), m.type(in)});
  for (const json& out : m.array(root, "outputs")) {
    impl.outputs.push_back({m.get<std::string>(out, "name"), m.type(out)});
    impl.output_copy_from.push_back(
        out.contains("copy_from") ? std::optional(m.location(out.at("copy_from"))) : std::nullopt);
  }
  for (size_t i = 0; i < impl.outputs.size(); ++i)
    if (impl.output_copy_from[i])
      check_locations(m, impl, "output " + impl.outputs[i].name,
                      {{impl.outputs[i].name, impl.outputs[i].type, *impl.output_copy_from[i]}});
  impl.weights = map_weights(dir / m.get<std::string>(root, "weights"), impl.weights_bytes);
  const json& kernels = m.array(root, "kernels");
  impl.external.resize(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const json& k = kernels[i];
    KernelSpec spec{m.get<std::string>(k, "name"), m.get<std::string>(k, "backend"), "", {}};
    std::vector<std::string> prims;
    for (const json& p : m.array(k, "primitives"))
      prims.push_back(
          fmt::format("{} {}", m.get<std::string>(p, "op"), m.get<std::string>(p, "node")));
    spec.primitives = fmt::format("{}", fmt::join(prims, " + "));
    impl.kernel_inputs.push_back(kernel_values(m, m.array(k, "inputs")));
    impl.kernel_outputs.push_back(kernel_values(m, m.array(k, "outputs")));
    check_locations(m, impl, "kernel " + spec.name, impl.kernel_inputs.back());
    check_locations(m, impl, "kernel " + spec.name, impl.kernel_outputs.back());
    for (const KernelValue& kv : impl.kernel_outputs.back())
      spec.outputs.push_back({kv.value, kv.type});
    impl.kernels.push_back(std::move(spec));
    if (m.get<bool>(k, "external")) build_external(m, k, dir, impl, impl.external[i]);
  }
  impl.library =
      open_library(dir / m.get<std::string>(root, "library"), static_cast<int>(kernels.size()));
}

}  // namespace orch::runtime
