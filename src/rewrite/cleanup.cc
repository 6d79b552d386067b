// Cleanup rules: constant folding, identities, chains of one layout primitive, common
// subexpressions. Each removes work and never adds any, so the search runs them greedily.
#include <numeric>

#include "interp/interpreter.h"
#include "interp/kernel.h"
#include "ir/op_registry.h"
#include "ir/ops/shape_util.h"
#include "rewrite/rule_util.h"

namespace orch::rewrite {
namespace {

// Folded tensors up to this many elements are kept even when larger than their inputs.
constexpr int64_t kSmallConstant = 64;

ValueId out(const MatchContext& ctx, NodeId n) {
  return ctx.node(n).outputs[0];
}

// The graph output of a sample: a consumer after the pattern, so its result is not an output.
void finish(Builder& b, ValueId v) {
  b.output(b.op("prim.Elementwise", {v}, {{"fn", std::string("neg")}}));
}

ValueId ew(Builder& b, const std::string& fn, std::vector<ValueId> inputs) {
  return b.op("prim.Elementwise", std::move(inputs), {{"fn", fn}});
}

// --- fold_constants ------------------------------------------------------------------------

bool fold_guard(const MatchContext& ctx, NodeId n) {
  const Node& node = ctx.node(n);
  // A graph output stays computed by a node: later stages give every output a kernel.
  if (node.outputs.size() != 1 || node.inputs.empty() || ctx.is_output(node.outputs[0]) ||
      interp::find_kernel(node.op) == nullptr)
    return false;
  int64_t in_elements = 0;
  for (ValueId in : node.inputs) {
    if (in == kNoValue || ctx.constant(in) == nullptr) return false;
    in_elements += ctx.constant(in)->numel();
  }
  int64_t out_elements = num_elements(ctx.type(out(ctx, n)).shape);
  return out_elements <= std::max(in_elements, kSmallConstant);
}

void fold_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& node = ctx.node(n);
  std::vector<Tensor> inputs;
  for (ValueId in : node.inputs) inputs.push_back(*ctx.constant(in));
  TensorType type = ctx.type(out(ctx, n));
  p.replace(out(ctx, n), p.constant(interp::run_op(node.op, node.attrs, inputs, {type}).at(0)));
}

Graph fold_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  Shape shape = random_shape(rng, static_cast<int>(random_int(rng, 1, 3)));
  ValueId x = b.input("x", {DType::f32, shape});
  ValueId c = random_constant(b, rng, {DType::f32, shape});
  ValueId e = ew(b, "exp", {c});
  finish(b, ew(b, "add", {x, e}));
  return g;
}

// --- elementwise_identity --------------------------------------------------------------------

// The input `node` passes through unchanged (x+0, 0+x, x-0, x*1, 1*x, x/1, x^1, identity, cast
// to its own type), or kNoValue.
ValueId passthrough(const MatchContext& ctx, const Node& node) {
  std::string_view fn = ew_fn(node);
  const TensorType& type = ctx.type(node.outputs[0]);
  auto is = [&](size_t i, double v) {
    const Tensor* t = ctx.constant(node.inputs[i]);
    return t != nullptr && all_equal(*t, v);
  };
  auto same = [&](size_t i) { return ctx.type(node.inputs[i]) == type; };
  if ((fn == "identity" || fn == "cast") && same(0)) return node.inputs[0];
  if (node.inputs.size() != 2) return kNoValue;
  if ((fn == "add" || fn == "sub") && is(1, 0) && same(0)) return node.inputs[0];
  if (fn == "add" && is(0, 0) && same(1)) return node.inputs[1];
  if ((fn == "mul" || fn == "div" || fn == "pow") && is(1, 1) && same(0)) return node.inputs[0];
  if (fn == "mul" && is(0, 1) && same(1)) return node.inputs[1];
  return kNoValue;
}

bool ew_identity_guard(const MatchContext& ctx, NodeId n) {
  ValueId x = passthrough(ctx, ctx.node(n));
  return x != kNoValue && ctx.can_replace_with(out(ctx, n), x);
}

void ew_identity_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  p.replace(out(ctx, n), p.value(passthrough(ctx, ctx.node(n))));
}

Graph ew_identity_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  Shape shape = random_shape(rng, static_cast<int>(random_int(rng, 1, 3)));
  ValueId x = b.input("x", {DType::f32, shape});
  static const char* kFns[] = {"add", "sub", "mul", "div", "pow"};
  std::string fn = kFns[random_int(rng, 0, 4)];
  double v = fn == "add" || fn == "sub" ? 0 : 1;
  TensorType ct{DType::f32, random_int(rng, 0, 1) == 0 ? Shape{} : shape};
  ValueId c = b.constant(filled(ct, v));
  finish(b, ew(b, fn, {ew(b, "relu", {x}), c}));
  return g;
}

// --- layout_identity -------------------------------------------------------------------------

bool iota_perm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool layout_identity_guard(const MatchContext& ctx, NodeId n) {
  const Node& node = ctx.node(n);
  if (node.inputs.empty() || ctx.type(node.inputs[0]) != ctx.type(node.outputs[0]) ||
      !ctx.can_replace_with(node.outputs[0], node.inputs[0]))
    return false;
  const Attributes& a = node.attrs;
  auto all = [](const std::vector<int64_t>& v, int64_t x) {
    return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
  };
  if (node.op == "prim.Transpose") return iota_perm(attr_ints(a, "perm"));
  if (node.op == "prim.Reshape" || node.op == "prim.Broadcast") return true;
  if (node.op == "prim.Slice")
    return all(attr_ints(a, "starts"), 0) && all(attr_ints(a, "steps"), 1);
  if (node.op == "prim.Concat") return node.inputs.size() == 1;
  if (node.op == "prim.Pad") return all(attr_ints(a, "pads"), 0);
  if (node.op == "prim.Tile") return all(attr_ints(a, "repeats"), 1);
  return false;
}

void layout_identity_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  p.replace(out(ctx, n), p.value(ctx.node(n).inputs[0]));
}

Graph layout_identity_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int rank = static_cast<int>(random_int(rng, 1, 3));
  Shape shape = random_shape(rng, rank);
  ValueId x = ew(b, "relu", {b.input("x", {DType::f32, shape})});
  std::vector<int64_t> zeros(rank, 0), ones(rank, 1);
  ValueId y;
  switch (random_int(rng, 0, 4)) {
    case 0: {
      std::vector<int64_t> perm(rank);
      std::iota(perm.begin(), perm.end(), 0);
      y = b.op("prim.Transpose", {x}, {{"perm", perm}});
      break;
    }
    case 1:
      y = b.op("prim.Reshape", {x}, {{"shape", shape}});
      break;
    case 2:
      y = b.op("prim.Slice", {x}, {{"starts", zeros}, {"ends", shape}, {"steps", ones}});
      break;
    case 3: {
      std::vector<int64_t> pads(2 * rank, 0);
      y = b.op("prim.Pad", {x}, {{"pads", pads}});
      break;
    }
    default:
      y = b.op("prim.Broadcast", {x}, {{"shape", shape}});
  }
  finish(b, y);
  return g;
}

// --- transpose_transpose ---------------------------------------------------------------------

bool transpose_transpose_guard(const MatchContext& ctx, NodeId n) {
  return ctx.producer_if(ctx.node(n).inputs[0], "prim.Transpose") != nullptr;
}

void transpose_transpose_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& inner = *ctx.producer(ctx.node(n).inputs[0]);
  std::vector<int64_t> p1 = attr_ints(inner.attrs, "perm");
  std::vector<int64_t> p2 = attr_ints(ctx.node(n).attrs, "perm");
  std::vector<int64_t> perm;
  for (int64_t i : p2) perm.push_back(p1[i]);
  ValueId x = inner.inputs[0];
  bool drop = iota_perm(perm) && ctx.can_replace_with(out(ctx, n), x);
  p.replace(out(ctx, n),
            drop ? p.value(x) : p.op("prim.Transpose", {p.value(x)}, {{"perm", perm}}));
}

std::vector<int64_t> random_perm(std::mt19937& rng, int rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  return perm;
}

Graph transpose_transpose_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int rank = static_cast<int>(random_int(rng, 2, 4));
  ValueId x = ew(b, "relu", {b.input("x", {DType::f32, random_shape(rng, rank, 1, 4)})});
  ValueId t = b.op("prim.Transpose", {x}, {{"perm", random_perm(rng, rank)}});
  finish(b, b.op("prim.Transpose", {t}, {{"perm", random_perm(rng, rank)}}));
  return g;
}

// --- reshape_reshape ---------------------------------------------------------------------------

bool reshape_reshape_guard(const MatchContext& ctx, NodeId n) {
  return ctx.producer_if(ctx.node(n).inputs[0], "prim.Reshape") != nullptr;
}

void reshape_reshape_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  ValueId x = ctx.producer(ctx.node(n).inputs[0])->inputs[0];
  const Shape& shape = ctx.type(out(ctx, n)).shape;
  bool drop = ctx.type(x).shape == shape && ctx.can_replace_with(out(ctx, n), x);
  p.replace(out(ctx, n),
            drop ? p.value(x) : p.op("prim.Reshape", {p.value(x)}, {{"shape", shape}}));
}

Graph reshape_reshape_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int64_t m = random_int(rng, 1, 4), k = random_int(rng, 1, 4), n = random_int(rng, 1, 4);
  ValueId x = ew(b, "relu", {b.input("x", {DType::f32, {m, k, n}})});
  ValueId r = b.op("prim.Reshape", {x}, {{"shape", std::vector<int64_t>{m * k, n}}});
  std::vector<int64_t> last =
      random_int(rng, 0, 1) == 0 ? std::vector<int64_t>{m, k * n} : std::vector<int64_t>{m, k, n};
  finish(b, b.op("prim.Reshape", {r}, {{"shape", last}}));
  return g;
}

// --- broadcast_broadcast -----------------------------------------------------------------------

bool broadcast_broadcast_guard(const MatchContext& ctx, NodeId n) {
  return ctx.producer_if(ctx.node(n).inputs[0], "prim.Broadcast") != nullptr;
}

void broadcast_broadcast_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  ValueId x = ctx.producer(ctx.node(n).inputs[0])->inputs[0];
  p.replace(out(ctx, n),
            p.op("prim.Broadcast", {p.value(x)}, {{"shape", ctx.type(out(ctx, n)).shape}}));
}

Graph broadcast_broadcast_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int rank = static_cast<int>(random_int(rng, 1, 3));
  Shape full = random_shape(rng, rank, 2, 4);
  Shape mid = full, in = full;
  for (int d = 0; d < rank; ++d) {
    if (random_int(rng, 0, 1) == 0) in[d] = 1;
    if (in[d] == 1 && random_int(rng, 0, 1) == 0) mid[d] = 1;
  }
  ValueId x = ew(b, "relu", {b.input("x", {DType::f32, in})});
  ValueId m = b.op("prim.Broadcast", {x}, {{"shape", mid}});
  finish(b, b.op("prim.Broadcast", {m}, {{"shape", full}}));
  return g;
}

// --- slice_of_concat -------------------------------------------------------------------------

// The concat input a slice reads entirely from (its index and offset), or {-1, 0}.
std::pair<int, int64_t> sliced_piece(const MatchContext& ctx, NodeId n) {
  const Node& slice = ctx.node(n);
  const Node* concat = ctx.producer_if(slice.inputs[0], "prim.Concat");
  if (concat == nullptr) return {-1, 0};
  int64_t rank = static_cast<int64_t>(ctx.type(slice.inputs[0]).shape.size());
  int64_t axis = ops::normalize_axis(attr_int(concat->attrs, "axis", 0), rank);
  int64_t start = attr_ints(slice.attrs, "starts")[axis];
  int64_t step = attr_ints(slice.attrs, "steps")[axis];
  int64_t size = ctx.type(out(ctx, n)).shape[axis];
  if (step <= 0 || size == 0) return {-1, 0};
  int64_t last = start + (size - 1) * step;
  int64_t offset = 0;
  for (size_t i = 0; i < concat->inputs.size(); ++i) {
    int64_t len = ctx.type(concat->inputs[i]).shape[axis];
    if (start >= offset && last < offset + len) return {static_cast<int>(i), offset};
    offset += len;
  }
  return {-1, 0};
}

bool slice_of_concat_guard(const MatchContext& ctx, NodeId n) {
  return sliced_piece(ctx, n).first >= 0;
}

void slice_of_concat_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& slice = ctx.node(n);
  const Node& concat = *ctx.producer(slice.inputs[0]);
  auto [index, offset] = sliced_piece(ctx, n);
  int64_t rank = static_cast<int64_t>(ctx.type(slice.inputs[0]).shape.size());
  int64_t axis = ops::normalize_axis(attr_int(concat.attrs, "axis", 0), rank);
  std::vector<int64_t> starts = attr_ints(slice.attrs, "starts");
  std::vector<int64_t> ends = attr_ints(slice.attrs, "ends");
  starts[axis] -= offset;
  ends[axis] -= offset;
  ValueId piece = concat.inputs[index];
  Ref r = p.op("prim.Slice", {p.value(piece)},
               {{"starts", starts}, {"ends", ends}, {"steps", attr_ints(slice.attrs, "steps")}});
  // A slice that takes the whole piece is the piece.
  bool whole = p.type(r) == ctx.type(piece) &&
               std::all_of(starts.begin(), starts.end(), [](int64_t s) { return s == 0; });
  std::vector<int64_t> steps = attr_ints(slice.attrs, "steps");
  whole = whole && std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 1; }) &&
          ctx.can_replace_with(out(ctx, n), piece);
  p.replace(out(ctx, n), whole ? p.value(piece) : r);
}

Graph slice_of_concat_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int rank = static_cast<int>(random_int(rng, 1, 3));
  int64_t axis = random_int(rng, 0, rank - 1);
  Shape a = random_shape(rng, rank, 1, 4), c = a;
  c[axis] = random_int(rng, 1, 4);
  ValueId x = ew(b, "relu", {b.input("x", {DType::f32, a})});
  ValueId y = ew(b, "relu", {b.input("y", {DType::f32, c})});
  ValueId cat = b.op("prim.Concat", {x, y}, {{"axis", axis}});
  // A slice inside the second piece along the axis, arbitrary along the other dims.
  std::vector<int64_t> starts(rank), ends(rank), steps(rank, 1);
  for (int d = 0; d < rank; ++d) {
    int64_t lo = d == axis ? a[d] : 0, len = d == axis ? c[d] : a[d];
    starts[d] = lo + random_int(rng, 0, len - 1);
    ends[d] = starts[d] + random_int(rng, 1, lo + len - starts[d]);
  }
  finish(b, b.op("prim.Slice", {cat}, {{"starts", starts}, {"ends", ends}, {"steps", steps}}));
  return g;
}

// --- cse ----------------------------------------------------------------------------------------

bool cse_guard(const MatchContext& ctx, NodeId n) {
  NodeId earlier = ctx.earlier_duplicate(n);
  if (earlier == kNoNode) return false;
  for (size_t i = 0; i < ctx.node(n).outputs.size(); ++i)
    if (!ctx.can_replace_with(ctx.node(n).outputs[i], ctx.node(earlier).outputs[i])) return false;
  return true;
}

void cse_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& earlier = ctx.node(ctx.earlier_duplicate(n));
  for (size_t i = 0; i < ctx.node(n).outputs.size(); ++i)
    p.replace(ctx.node(n).outputs[i], p.value(earlier.outputs[i]));
}

Graph cse_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  Shape shape = random_shape(rng, static_cast<int>(random_int(rng, 1, 3)));
  ValueId x = b.input("x", {DType::f32, shape});
  ValueId y = b.input("y", {DType::f32, shape});
  static const char* kFns[] = {"add", "mul", "max"};
  std::string fn = kFns[random_int(rng, 0, 2)];
  finish(b, ew(b, "sub", {ew(b, fn, {x, y}), ew(b, "exp", {ew(b, fn, {x, y})})}));
  return g;
}

}  // namespace

void add_cleanup_rules(RuleTable& rules) {
  rules.push_back({"fold_constants", "cleanup",
                   "every input is a constant and the op has a reference kernel; the result is "
                   "no larger than its inputs (or at most 64 elements), so the model never grows; "
                   "not a graph output (later stages compute every output with a kernel)",
                   "", fold_guard, fold_apply, fold_sample, true});
  rules.push_back({"elementwise_identity", "cleanup",
                   "x+0, 0+x, x-0, x*1, 1*x, x/1, x^1 with a constant all-zero/all-one operand, "
                   "identity, or a cast to x's own type; x has the output's type (a broadcasting "
                   "operand is not dropped)",
                   "prim.Elementwise", ew_identity_guard, ew_identity_apply, ew_identity_sample,
                   true});
  rules.push_back({"layout_identity", "cleanup",
                   "a layout primitive whose output type equals its input's and that moves "
                   "nothing: identity perm, same-shape Reshape/Broadcast, full unit-step Slice, "
                   "one-input Concat, zero Pad, unit Tile",
                   "", layout_identity_guard, layout_identity_apply, layout_identity_sample, true});
  rules.push_back({"transpose_transpose", "cleanup",
                   "Transpose of a Transpose: perms compose (perm[i] = inner[outer[i]]); the "
                   "identity composition is dropped",
                   "prim.Transpose", transpose_transpose_guard, transpose_transpose_apply,
                   transpose_transpose_sample, true});
  rules.push_back({"reshape_reshape", "cleanup",
                   "Reshape of a Reshape: row-major reshapes compose to the outer shape",
                   "prim.Reshape", reshape_reshape_guard, reshape_reshape_apply,
                   reshape_reshape_sample, true});
  rules.push_back({"broadcast_broadcast", "cleanup",
                   "Broadcast of a Broadcast: each dim of x is 1 or kept, so broadcasting x "
                   "straight to the outer shape gives the same elements",
                   "prim.Broadcast", broadcast_broadcast_guard, broadcast_broadcast_apply,
                   broadcast_broadcast_sample, true});
  rules.push_back({"slice_of_concat", "cleanup",
                   "a Slice (positive step on the concat axis) whose elements along the concat "
                   "axis all lie in one Concat input reads that input directly",
                   "prim.Slice", slice_of_concat_guard, slice_of_concat_apply,
                   slice_of_concat_sample, true});
  rules.push_back({"cse", "cleanup",
                   "an earlier node has the same op, attributes and inputs (ops are pure)", "",
                   cse_guard, cse_apply, cse_sample, true});
}

}  // namespace orch::rewrite
