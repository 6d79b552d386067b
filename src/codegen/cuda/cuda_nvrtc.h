// NVRTC, opened at run time (libnvrtc.so from the CUDA toolkit; no build-time CUDA dependency):
// CUDA C to machine code for one GPU architecture, without a GPU.
#pragma once

#include <optional>
#include <string>

namespace orch::codegen {

/// Why NVRTC cannot be used here ("" when it can): the library is not found, or a symbol is
/// missing. The message names what was tried.
std::string nvrtc_unavailable();

/// The NVRTC version, e.g. "13.0"; nullopt without NVRTC.
std::optional<std::string> nvrtc_version();

struct CudaBinary {
  std::string cubin;  // an ELF image for sm_<major><minor>
  std::string log;    // NVRTC's messages (warnings)
  double seconds = 0;
};

/// Compiles `source` (one translation unit, named `name` in messages) to a cubin for compute
/// capability major.minor. Throws Error with NVRTC's log on a compile error, Unsupported when
/// NVRTC is unavailable.
CudaBinary nvrtc_compile(const std::string& source, const std::string& name, int cc_major,
                         int cc_minor);

/// The SM architecture a cubin was built for (its ELF header), e.g. 90; -1 when `cubin` is not
/// a CUDA ELF image.
int cubin_sm_arch(const std::string& cubin);

}  // namespace orch::codegen
