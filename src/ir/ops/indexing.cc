// Shape rules of the indexing ops.
#include "ir/ops/families.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {

void add_indexing_ops(std::vector<OpSchema>& table) {
  (void)table;
}

}  // namespace orch::ops
