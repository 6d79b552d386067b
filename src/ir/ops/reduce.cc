// Shape rules of the reductions (Reduce*, ArgMax, ArgMin) and the scan CumSum.
#include <algorithm>

#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/reduce_params.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

// What sets the Reduce* ops apart in their shape rules.
struct ReduceTraits {
  bool axes_input;     // ReduceSum (opset 13+) takes axes as input 1, the others as an attribute
  bool bool_ok;        // Max and Min order bool (false < true)
  bool empty_defined;  // false for ReduceMean: the mean of an empty set is undefined
};

constexpr ReduceTraits kSum{.axes_input = true, .bool_ok = false, .empty_defined = true};
constexpr ReduceTraits kPlain{.axes_input = false, .bool_ok = false, .empty_defined = true};
constexpr ReduceTraits kOrder{.axes_input = false, .bool_ok = true, .empty_defined = true};
constexpr ReduceTraits kMean{.axes_input = false, .bool_ok = false, .empty_defined = false};

void require_numeric(DType t, bool bool_ok) {
  check(t != DType::boolean || bool_ok, "input must be numeric, got bool");
}

template <ReduceTraits T>
std::vector<TensorType> reduce_shape(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_numeric(x.dtype, T.bool_ok);
  const Tensor* axes_input = nullptr;
  if (T.axes_input) {
    check(!has_attr(in.attrs, "axes"), "axes must be input 1 (opset 13 form), not an attribute");
    if (in.has(1)) axes_input = &in.value(1);
  }
  ReduceAxes r = reduce_axes(in.attrs, axes_input, static_cast<int64_t>(x.shape.size()));
  Shape keep = reduce_keep_shape(x.shape, r);
  if (!T.empty_defined && !r.noop)
    check(num_elements(keep) == 0 || num_elements(x.shape) > 0,
          "reducing {} over an empty set: the result is undefined", format_shape(x.shape));
  return one(x.dtype, reduce_out_shape(x.shape, r));
}

// ArgMax, ArgMin: i64 indices along one axis.
std::vector<TensorType> arg_shape(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_numeric(x.dtype, false);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  check(rank >= 1, "input must have rank >= 1, got a scalar");
  int64_t axis = normalize_axis(attr_int(in.attrs, "axis", 0), rank);
  attr_flag(in.attrs, "select_last_index", false);
  ReduceAxes r{.axes = {axis}, .keepdims = attr_flag(in.attrs, "keepdims", true)};
  Shape out = reduce_out_shape(x.shape, r);
  check(x.shape[axis] > 0 || num_elements(out) == 0,
        "axis {} has size 0: no element to pick an index of", axis);
  return one(DType::i64, out);
}

std::vector<TensorType> cumsum_shape(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_numeric(x.dtype, false);
  const Tensor& axis = in.value(1);
  require_dtype(axis.dtype(), {DType::i32, DType::i64}, "axis");
  check(axis.numel() == 1 && axis.rank() <= 1, "axis must hold one value, got shape {}",
        format_shape(axis.shape()));
  int64_t rank = static_cast<int64_t>(x.shape.size());
  check(rank >= 1, "input must have rank >= 1, got a scalar");
  normalize_axis(axis.get_int(0), rank);
  attr_flag(in.attrs, "exclusive", false);
  attr_flag(in.attrs, "reverse", false);
  return one(x.dtype, x.shape);
}

}  // namespace

void add_reduce_ops(std::vector<OpSchema>& table) {
  table.push_back(
      {.name = "ReduceSum", .max_inputs = 2, .infer = reduce_shape<kSum>, .constant_inputs = {1}});
  for (std::string_view op :
       {"ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
    table.push_back({.name = op, .infer = reduce_shape<kPlain>});
  for (std::string_view op : {"ReduceMax", "ReduceMin"})
    table.push_back({.name = op, .infer = reduce_shape<kOrder>});
  table.push_back({.name = "ReduceMean", .infer = reduce_shape<kMean>});
  for (std::string_view op : {"ArgMax", "ArgMin"})
    table.push_back({.name = op, .infer = arg_shape});
  table.push_back({.name = "CumSum",
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .infer = cumsum_shape,
                   .constant_inputs = {1}});
}

}  // namespace orch::ops
