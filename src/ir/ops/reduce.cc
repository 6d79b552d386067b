// Shape rules of the reduce ops.
#include "ir/ops/families.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {

void add_reduce_ops(std::vector<OpSchema>& table) {
  (void)table;
}

}  // namespace orch::ops
