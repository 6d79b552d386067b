// Shape rules of the elementwise ops: outputs take the broadcast shape of the inputs.
#include "ir/ops/families.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

// Same dtype in and out (Add, Relu, Exp, ...).
std::vector<TensorType> same_type(const InferInput& in) {
  require_same_dtype(in);
  return one(in.type(0).dtype, broadcast_all(in));
}

}  // namespace

void add_elementwise_ops(std::vector<OpSchema>& table) {
  for (std::string_view op : {"Add", "Sub", "Mul", "Div"})
    table.push_back({.name = op, .min_inputs = 2, .max_inputs = 2, .infer = same_type});
  for (std::string_view op : {"Relu", "Exp", "Identity"})
    table.push_back({.name = op, .infer = same_type});
}

}  // namespace orch::ops
