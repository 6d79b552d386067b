// Reference kernels of the layout ops.
#include "interp/kernels/families.h"

namespace orch::interp {

void add_layout_kernels(KernelTable& table) {
  (void)table;
}

}  // namespace orch::interp
