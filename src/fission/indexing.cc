// Fission rules of the indexing ops: Gather and GatherElements are primitives (the gathered axis
// is data-dependent in their index maps); Resize becomes prim.Resize with its constant inputs as
// attributes. GatherND and the Scatter ops have no rule: they are kept whole.
#include "fission/rule.h"
#include "fission/samples.h"
#include "ir/error.h"

namespace orch::fission {
namespace {

using sample::Arg;
using sample::Rng;

std::vector<ValueId> gather(RuleContext& ctx) {
  return single(ctx.emit("prim.Gather", {ctx.in(0), ctx.in(1)},
                         {{"axis", attr_int(ctx.attrs(), "axis", 0)}}));
}

std::vector<ValueId> gather_elements(RuleContext& ctx) {
  return single(ctx.emit("prim.GatherElements", {ctx.in(0), ctx.in(1)},
                         {{"axis", attr_int(ctx.attrs(), "axis", 0)}}));
}

bool present(const RuleContext& ctx, size_t i) {
  return ctx.has(i) && ctx.constant(i).numel() > 0;
}

std::vector<float> float_list(const Tensor& t) {
  std::vector<float> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(static_cast<float>(t.get(i)));
  return out;
}

// roi and scales must survive conversion to float attributes exactly.
bool resize_guard(const RuleContext& ctx) {
  for (size_t i : {1, 2})
    if (present(ctx, i))
      for (int64_t k = 0; k < ctx.constant(i).numel(); ++k) {
        double v = ctx.constant(i).get(k);
        if (static_cast<double>(static_cast<float>(v)) != v) return false;
      }
  return true;
}

std::vector<ValueId> resize(RuleContext& ctx) {
  Attributes attrs = ctx.attrs();
  if (present(ctx, 1)) attrs["roi"] = float_list(ctx.constant(1));
  if (present(ctx, 2)) attrs["scales"] = float_list(ctx.constant(2));
  if (present(ctx, 3)) attrs["sizes"] = ctx.constant(3).to_ints();
  return single(ctx.emit("prim.Resize", {ctx.in(0)}, attrs));
}

Graph gather_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 1, 3);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = sample::axis(rng, rank);
  int64_t n = s[axis < 0 ? axis + rank : axis];
  Shape is = sample::shape(rng, 0, 2, 3);
  std::vector<int64_t> idx(num_elements(is));
  for (int64_t& i : idx) i = sample::integer(rng, -n, n - 1);
  Tensor indices = Tensor::from_ints(DType::i64, is, idx);
  return sample::make("Gather", {Arg::input(DType::f32, s), Arg::constant_of(indices)},
                      {{"axis", axis}});
}

Graph gather_elements_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 1, 3);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = sample::axis(rng, rank);
  int64_t n = s[axis < 0 ? axis + rank : axis];
  Shape is = s;
  for (int64_t& d : is) d = sample::integer(rng, 1, d);
  is[axis < 0 ? axis + rank : axis] = sample::integer(rng, 1, 4);
  std::vector<int64_t> idx(num_elements(is));
  for (int64_t& i : idx) i = sample::integer(rng, -n, n - 1);
  return sample::make(
      "GatherElements",
      {Arg::input(DType::f32, s), Arg::constant_of(Tensor::from_ints(DType::i64, is, idx))},
      {{"axis", axis}});
}

Graph resize_sample(std::string_view, Rng& rng) {
  Shape s = {1, sample::integer(rng, 1, 2), sample::integer(rng, 2, 5), sample::integer(rng, 2, 5)};
  const std::vector<std::string> modes = {"nearest", "linear", "cubic"};
  const std::vector<std::string> coords = {"half_pixel",           "asymmetric",
                                           "align_corners",        "pytorch_half_pixel",
                                           "half_pixel_symmetric", "tf_crop_and_resize"};
  std::string coord = coords[sample::integer(rng, 0, 5)];
  Attributes attrs = {{"mode", modes[sample::integer(rng, 0, 2)]},
                      {"coordinate_transformation_mode", coord}};
  std::vector<Arg> args = {Arg::input(DType::f32, s), Arg::none()};
  if (coord == "tf_crop_and_resize")
    args[1] = Arg::constant_of(
        Tensor::from_doubles(DType::f32, {8}, std::vector<double>{0, 0, 0.25, 0, 1, 1, 0.75, 1}));
  // With scales, ONNX sizes a tf_crop_and_resize output by the roi; ONNX Runtime does not: use
  // sizes there so that the ORT check compares like with like.
  if (coord != "tf_crop_and_resize" && sample::coin(rng)) {
    std::vector<double> scales = {1, 1, static_cast<double>(sample::integer(rng, 1, 3)) / 2 + 0.5,
                                  static_cast<double>(sample::integer(rng, 1, 4)) / 2};
    args.push_back(Arg::constant_of(Tensor::from_doubles(DType::f32, {4}, scales)));
  } else {
    args.push_back(Arg::none());
    args.push_back(Arg::constant_of(
        sample::ints({1, s[1], sample::integer(rng, 1, 9), sample::integer(rng, 1, 9)})));
  }
  return sample::make("Resize", args, attrs);
}

}  // namespace

void add_indexing_rules(RuleTable& rules) {
  rules.push_back({"Gather", nullptr, gather, gather_sample});
  rules.push_back({"GatherElements", nullptr, gather_elements, gather_elements_sample});
  rules.push_back(
      {"Resize", resize_guard, resize, resize_sample, "roi or scales not exact in float"});
}

}  // namespace orch::fission
