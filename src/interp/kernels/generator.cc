// Reference kernels of the generator ops.
#include "interp/kernels/families.h"

namespace orch::interp {

void add_generator_kernels(KernelTable& table) {
  (void)table;
}

}  // namespace orch::interp
