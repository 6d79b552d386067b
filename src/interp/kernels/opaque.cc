// Reference kernels of the opaque ops.
#include "interp/kernels/families.h"

namespace orch::interp {

void add_opaque_kernels(KernelTable& table) {
  (void)table;
}

}  // namespace orch::interp
