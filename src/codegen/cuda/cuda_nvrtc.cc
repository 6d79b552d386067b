// NVRTC through dlopen: the few C entry points declared here (nvrtc.h is not needed to build).
#include "codegen/cuda/cuda_nvrtc.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/error.h"

namespace orch::codegen {
namespace {

using Program = void*;  // nvrtcProgram
using Result = int;     // nvrtcResult; 0 is NVRTC_SUCCESS

struct Nvrtc {
  std::string error;  // why it is unusable; "" when loaded
  Result (*version)(int*, int*) = nullptr;
  Result (*create)(Program*, const char*, const char*, int, const char* const*,
                   const char* const*) = nullptr;
  Result (*destroy)(Program*) = nullptr;
  Result (*compile)(Program, int, const char* const*) = nullptr;
  Result (*log_size)(Program, size_t*) = nullptr;
  Result (*log)(Program, char*) = nullptr;
  Result (*cubin_size)(Program, size_t*) = nullptr;
  Result (*cubin)(Program, char*) = nullptr;
  const char* (*error_string)(Result) = nullptr;
};

template <typename F>
bool bind(void* lib, const char* name, F& f, std::string& error) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (f == nullptr && error.empty()) error = fmt::format("NVRTC has no symbol {}", name);
  return f != nullptr;
}

Nvrtc open_nvrtc() {
  Nvrtc n;
  void* lib = nullptr;
  std::string tried;
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
    const char* why = dlerror();
    tried += fmt::format("{}{} ({})", tried.empty() ? "" : ", ", name, why ? why : "not found");
  }
  if (lib == nullptr) {
    n.error = "NVRTC not found: tried " + tried;
    return n;
  }
  bind(lib, "nvrtcVersion", n.version, n.error);
  bind(lib, "nvrtcCreateProgram", n.create, n.error);
  bind(lib, "nvrtcDestroyProgram", n.destroy, n.error);
  bind(lib, "nvrtcCompileProgram", n.compile, n.error);
  bind(lib, "nvrtcGetProgramLogSize", n.log_size, n.error);
  bind(lib, "nvrtcGetProgramLog", n.log, n.error);
  bind(lib, "nvrtcGetCUBINSize", n.cubin_size, n.error);
  bind(lib, "nvrtcGetCUBIN", n.cubin, n.error);
  bind(lib, "nvrtcGetErrorString", n.error_string, n.error);
  return n;  // the library stays loaded for the process
}

const Nvrtc& nvrtc() {
  static const Nvrtc n = open_nvrtc();
  return n;
}

void check_result(const Nvrtc& n, Result r, const char* what) {
  if (r != 0) throw Error(fmt::format("NVRTC: {} failed: {}", what, n.error_string(r)));
}

uint16_t read_u16(const std::string& s, size_t at) {
  uint16_t v;
  std::memcpy(&v, s.data() + at, sizeof v);
  return v;
}

uint32_t read_u32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, sizeof v);
  return v;
}

}  // namespace

std::string nvrtc_unavailable() {
  return nvrtc().error;
}

std::optional<std::string> nvrtc_version() {
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) return std::nullopt;
  int major = 0, minor = 0;
  if (n.version(&major, &minor) != 0) return std::nullopt;
  return fmt::format("{}.{}", major, minor);
}

CudaBinary nvrtc_compile(const std::string& source, const std::string& name, int cc_major,
                         int cc_minor) {
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) throw Unsupported(n.error);
  auto start = std::chrono::steady_clock::now();
  Program prog = nullptr;
  check_result(n, n.create(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr),
               "nvrtcCreateProgram");
  std::string arch = fmt::format("--gpu-architecture=sm_{}{}", cc_major, cc_minor);
  // Warning 177 (declared but never referenced): every phase declares all of its kernel's
  // scratch pointers and coordinates, whether it reads them or not.
  const char* options[] = {arch.c_str(), "--std=c++17", "--diag-suppress=177"};
  Result compiled = n.compile(prog, 3, options);
  CudaBinary binary;
  size_t size = 0;
  if (n.log_size(prog, &size) == 0 && size > 1) {
    std::vector<char> text(size);
    if (n.log(prog, text.data()) == 0) binary.log.assign(text.data(), size - 1);
  }
  if (compiled != 0) {
    n.destroy(&prog);
    throw Error(fmt::format("NVRTC: {} does not compile for {}: {}\n{}", name, arch,
                            n.error_string(compiled), binary.log));
  }
  Result r = n.cubin_size(prog, &size);
  if (r == 0) {
    binary.cubin.resize(size);
    r = n.cubin(prog, binary.cubin.data());
  }
  n.destroy(&prog);
  check_result(n, r, "nvrtcGetCUBIN");
  binary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return binary;
}

int cubin_sm_arch(const std::string& cubin) {
  // ELF64 little-endian header: e_ident[4] class, [8] ABI version; e_machine at 18, e_flags at 48.
  constexpr uint16_t kEmCuda = 190;
  if (cubin.size() < 64 ||
      cubin.compare(0, 4,
                    "\x7f"
                    "ELF") != 0 ||
      cubin[4] != 2)
    return -1;
  if (read_u16(cubin, 18) != kEmCuda) return -1;
  uint32_t flags = read_u32(cubin, 48);
  // Since CUDA 12.8 (ELF ABI version 8) the SM is in bits 8-15 (sm_90: 0x5a00); before, in the
  // low byte.
  int abi = static_cast<unsigned char>(cubin[8]);
  return static_cast<int>(abi >= 8 ? (flags >> 8) & 0xff : flags & 0xff);
}

}  // namespace orch::codegen
