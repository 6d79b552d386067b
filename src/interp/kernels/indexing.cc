// Reference kernels of the indexing ops.
#include "interp/kernels/families.h"

namespace orch::interp {

void add_indexing_kernels(KernelTable& table) {
  (void)table;
}

}  // namespace orch::interp
