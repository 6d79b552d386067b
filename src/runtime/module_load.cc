// Loading a module directory: manifest (module_manifest.cc), weights mapping and external kernels
// (external_kernel.cc), kernels.so. Every failure is an Error naming the file and what is wrong
// with it.
#include <dlfcn.h>

#include <filesystem>
#include <fstream>

#include "ir/error.h"
#include "runtime/elf_check.h"
#include "runtime/module_format.h"
#include "runtime/module_impl.h"
#include "runtime/module_manifest.h"

namespace orch::runtime {
namespace {

namespace fs = std::filesystem;

template <typename F>
F symbol(void* handle, const std::string& file, const char* name) {
  void* s = ::dlsym(handle, name);
  check(s != nullptr, "{}: missing symbol '{}' (not an orch module library)", file, name);
  return reinterpret_cast<F>(s);
}

Library open_library(const fs::path& path, int kernels) {
  std::string file = path.string();
  check(fs::exists(path), "{}: the kernel library is missing", file);
  check_elf_complete(path);
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

}  // namespace

int openmp_max_threads() {
  using MaxThreads = int (*)();
  auto get = reinterpret_cast<MaxThreads>(::dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return get ? get() : 0;
}

void load_module(const std::string& dir_text, Module::Impl& impl) {
  fs::path dir(dir_text);
  check(fs::is_directory(dir), "{}: not a module directory", dir_text);
  impl.dir = dir_text;
  fs::path manifest = dir / kManifestFile;
  std::ifstream in(manifest);
  check(in.good(), "{}: cannot read the module manifest (is this a module directory?)",
        manifest.string());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ModuleLayout layout = parse_manifest(text, manifest.string());
  check(!layout.cuda,
        "{}: a module compiled for CUDA ({}, orch optimize --target cuda); this runtime runs CPU "
        "modules only",
        manifest.string(), layout.target);
  impl.inputs = std::move(layout.inputs);
  impl.outputs = std::move(layout.outputs);
  impl.output_copy_from = std::move(layout.output_copy_from);
  impl.kernels = std::move(layout.kernels);
  impl.kernel_inputs = std::move(layout.kernel_inputs);
  impl.kernel_outputs = std::move(layout.kernel_outputs);
  impl.arena_bytes = layout.arena_bytes;
  impl.weights_bytes = layout.weights_bytes;
  impl.weights = map_weights(dir / layout.weights_file, impl.weights_bytes);
  impl.external.resize(impl.kernels.size());
  impl.dnnl_threads = openmp_max_threads();
  for (size_t i = 0; i < impl.kernels.size(); ++i)
    if (layout.external[i])
      build_external(impl.kernels[i], *layout.external[i], dir, impl.weights, impl.external[i]);
  impl.library = open_library(dir / layout.library_file, static_cast<int>(impl.kernels.size()));
}

}  // namespace orch::runtime
