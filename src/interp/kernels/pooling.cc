// Reference kernels of the pooling ops.
#include "interp/kernels/families.h"

namespace orch::interp {

void add_pooling_kernels(KernelTable& table) {
  (void)table;
}

}  // namespace orch::interp
