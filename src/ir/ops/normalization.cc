// Shape rules of the normalization ops.
#include "ir/ops/families.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {

void add_normalization_ops(std::vector<OpSchema>& table) {
  (void)table;
}

}  // namespace orch::ops
