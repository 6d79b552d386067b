// Reference kernels of the normalization ops.
#include "interp/kernels/families.h"

namespace orch::interp {

void add_normalization_kernels(KernelTable& table) {
  (void)table;
}

}  // namespace orch::interp
