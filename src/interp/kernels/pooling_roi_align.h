// RoiAlign's reference kernel, part of the pooling family.
#pragma once

#include "interp/kernel.h"

namespace orch::interp {

/// Registers RoiAlign (called from add_pooling_kernels).
void add_pooling_roi_align_kernels(KernelTable& table);

}  // namespace orch::interp
