// Entry points of the NVIDIA libraries a CUDA module opens at run time (dlopen): the driver,
// cuBLAS and cuDNN, which orch neither links nor needs on machines without a GPU.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace orch::runtime {

/// The first of `names` that dlopen finds (RTLD_NOW | RTLD_LOCAL), or nullptr. Never closed:
/// the libraries stay loaded for the process.
inline void* open_first(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return handle;
  return nullptr;
}

/// Sets `fn` to `symbol` of `handle`; when it is absent, `missing` names the first such symbol.
template <typename Fn>
void load_symbol(void* handle, const char* symbol, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr && missing.empty()) missing = symbol;
}

}  // namespace orch::runtime
