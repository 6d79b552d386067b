// Shape rules of the pooling ops.
#include "ir/ops/families.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {

void add_pooling_ops(std::vector<OpSchema>& table) {
  (void)table;
}

}  // namespace orch::ops
