// GridSample's reference kernel, part of the indexing family.
#pragma once

#include "interp/kernel.h"

namespace orch::interp {

/// Registers GridSample (called from add_indexing_kernels).
void add_indexing_grid_sample_kernels(KernelTable& table);

}  // namespace orch::interp
