// Fission rules of the generator ops: an output that does not depend on input data (Shape,
// Size, EyeLike, or any generator whose inputs are all constants) becomes a constant.
#include "fission/rule.h"
#include "fission/samples.h"
#include "interp/interpreter.h"

namespace orch::fission {
namespace {

using sample::Arg;
using sample::Rng;

bool shape_only(std::string_view op) {
  return op == "Shape" || op == "Size" || op == "EyeLike";
}

bool data_independent(const RuleContext& ctx) {
  if (shape_only(ctx.node().op)) return true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has(i) && !ctx.is_constant(i)) return false;
  return true;
}

std::vector<ValueId> fold(RuleContext& ctx) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has(i))
      inputs.emplace_back();
    else if (ctx.is_constant(i))
      inputs.push_back(ctx.constant(i));
    else  // Shape, Size, EyeLike read only the input's type
      inputs.emplace_back(ctx.dtype(ctx.in(i)), ctx.shape_of(ctx.in(i)));
  }
  std::vector<TensorType> types;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) types.push_back(ctx.out_type(i));
  std::vector<ValueId> out;
  for (Tensor& t : interp::run_op(ctx.node().op, ctx.attrs(), std::move(inputs), types))
    out.push_back(ctx.constant_value(std::move(t)));
  return out;
}

Graph shape_sample(std::string_view op, Rng& rng) {
  Attributes attrs;
  Shape s = sample::shape(rng, op == "EyeLike" ? 2 : 0, op == "EyeLike" ? 2 : 4);
  if (op == "EyeLike") attrs["k"] = sample::integer(rng, -1, 1);
  return sample::make(std::string(op), {Arg::input(DType::f32, s)}, attrs);
}

}  // namespace

void add_generator_rules(RuleTable& rules) {
  for (std::string_view op : {"Shape", "Size", "EyeLike"})
    rules.push_back({op, data_independent, fold, shape_sample, "output depends on input data"});
  for (std::string_view op : {"ConstantOfShape", "Range", "Constant", "OneHot", "HannWindow",
                              "HammingWindow", "BlackmanWindow", "MelWeightMatrix"})
    rules.push_back({op, data_independent, fold, nullptr, "output depends on input data"});
}

}  // namespace orch::fission
