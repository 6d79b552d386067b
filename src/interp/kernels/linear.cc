// Reference kernels of the linear ops.
#include "interp/kernels/families.h"

namespace orch::interp {

void add_linear_kernels(KernelTable& table) {
  (void)table;
}

}  // namespace orch::interp
