// NumPy .npy files (format versions 1-3, little-endian, C order) <-> Tensor.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace orch {

/// Reads a .npy file; errors name the file and the problem (bad magic, unsupported dtype,
/// Fortran order, truncated data).
Tensor read_npy_file(const std::string& path);
/// Parses .npy bytes; `what` names the source in errors.
Tensor parse_npy(const std::string& bytes, const std::string& what);
/// Writes a .npy file (format 1.0). bf16 has no NumPy type and is refused.
void write_npy_file(const Tensor& tensor, const std::string& path);
std::string serialize_npy(const Tensor& tensor);

}  // namespace orch
