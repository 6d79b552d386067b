// Reference kernels of the reduce ops.
#include "interp/kernels/families.h"

namespace orch::interp {

void add_reduce_kernels(KernelTable& table) {
  (void)table;
}

}  // namespace orch::interp
