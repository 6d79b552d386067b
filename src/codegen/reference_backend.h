// The reference backend: a kernel run by the interpreter's kernels. It accepts every kernel, so
// primitives no generator handles (TopK, Opaque operators) still run inside a compiled module:
// correct, measured like any other kernel, and reported as not optimized.
#pragma once

#include "codegen/kernel.h"

namespace orch::codegen {

/// The reference backend ("reference").
const Backend& reference_backend();

}  // namespace orch::codegen
