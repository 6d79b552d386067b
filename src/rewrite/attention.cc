// Korch's attention rules (§3, Fig. 2b). Together they turn softmax(Q·Kᵀ)·V's row-sum into a
// MatMul with a ones column merged into the V MatMul, with the division after the MatMul:
//
//   e = exp(...)                       e = exp(...)
//   s = Reduce{sum, last}(e)           y = MatMul(e, Concat(V, ones))
//   p = e / Broadcast(s)         =>    o = Slice(y, [.., :D]) / Broadcast(Slice(y, [.., D:]))
//   o = MatMul(p, V)
#include <unordered_set>

#include "ir/ops/shape_util.h"
#include "rewrite/rule_util.h"

namespace orch::rewrite {
namespace {

Attributes fn_attr(const std::string& fn) {
  return {{"fn", fn}};
}

bool float_type(DType t) {
  return t == DType::f32 || t == DType::f64;
}

// Whether `v` is computed from `node`'s output (so merging `node` with v's consumer would make
// a cycle).
bool depends_on(const MatchContext& ctx, ValueId v, NodeId node) {
  std::vector<ValueId> stack{v};
  std::unordered_set<ValueId> seen;
  while (!stack.empty()) {
    ValueId x = stack.back();
    stack.pop_back();
    NodeId p = ctx.value(x).producer;
    if (p == kNoNode || !seen.insert(x).second) continue;
    if (p == node) return true;
    for (ValueId in : ctx.node(p).inputs)
      if (in != kNoValue) stack.push_back(in);
  }
  return false;
}

// --- reduce_sum_to_matmul ----------------------------------------------------------------------

bool reduce_matmul_guard(const MatchContext& ctx, NodeId n) {
  const Node& node = ctx.node(n);
  const TensorType& in = ctx.type(node.inputs[0]);
  auto rank = static_cast<int64_t>(in.shape.size());
  if (rank < 2 || !float_type(in.dtype) || attr_string(node.attrs, "kind", "") != "sum")
    return false;
  std::vector<int64_t> axes = attr_ints(node.attrs, "axes");
  return axes.size() == 1 && ops::normalize_axis(axes[0], rank) == rank - 1;
}

void reduce_matmul_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  ValueId x = ctx.node(n).inputs[0];
  TensorType ones = ctx.type(x);
  int64_t k = ones.shape.back();
  ones.shape[ones.shape.size() - 2] = k;
  ones.shape.back() = 1;
  p.replace(ctx.node(n).outputs[0],
            p.op("prim.MatMul", {p.value(x), p.constant(filled(ones, 1.0))}));
}

Graph reduce_matmul_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  Shape shape = random_shape(rng, static_cast<int>(random_int(rng, 2, 4)));
  ValueId x = b.input("x", {DType::f32, shape});
  ValueId e = b.op("prim.Elementwise", {x}, fn_attr("exp"));
  std::vector<int64_t> axes{random_int(rng, 0, 1) == 0 ? -1
                                                       : static_cast<int64_t>(shape.size()) - 1};
  ValueId s = b.op("prim.Reduce", {e}, {{"kind", std::string("sum")}, {"axes", axes}});
  b.output(b.op("prim.Elementwise", {s}, fn_attr("log")));
  return g;
}

// --- scale_past_matmul --------------------------------------------------------------------------

// For MatMul(e ⊘ S, V): the slot of S in the div/mul node and the per-row value s (S =
// Broadcast(s) with s [.., M, 1], or S a rank-0 scalar; then s = S). -1 when no match.
struct RowScale {
  int scale_slot = -1;
  ValueId row = kNoValue;
  bool broadcast = false;
};

RowScale row_scale(const MatchContext& ctx, NodeId n) {
  const Node& mm = ctx.node(n);
  const Node* d = ctx.producer(mm.inputs[0]);
  if (d == nullptr || !ctx.only_used_by(mm.inputs[0], n) || d->inputs.size() != 2 ||
      !(is_ew(*d, "div") || is_ew(*d, "mul")) || !float_type(ctx.type(mm.inputs[0]).dtype))
    return {};
  const Shape& shape = ctx.type(mm.inputs[0]).shape;
  for (int slot = 1; slot >= (is_ew(*d, "mul") ? 0 : 1); --slot) {
    ValueId s = d->inputs[slot];
    if (ctx.type(d->inputs[1 - slot]).shape != shape) continue;
    if (ctx.type(s).shape.empty()) return {slot, s, false};
    const Node* bc = ctx.producer_if(s, "prim.Broadcast");
    if (bc == nullptr) continue;
    Shape row = shape;
    row.back() = 1;
    if (ctx.type(bc->inputs[0]).shape == row) return {slot, bc->inputs[0], true};
  }
  return {};
}

bool scale_matmul_guard(const MatchContext& ctx, NodeId n) {
  return row_scale(ctx, n).scale_slot >= 0;
}

void scale_matmul_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& mm = ctx.node(n);
  const Node& d = *ctx.producer(mm.inputs[0]);
  RowScale rs = row_scale(ctx, n);
  Ref y = p.op("prim.MatMul", {p.value(d.inputs[1 - rs.scale_slot]), p.value(mm.inputs[1])});
  Ref s = rs.broadcast ? p.op("prim.Broadcast", {p.value(rs.row)}, {{"shape", p.shape(y)}})
                       : p.value(rs.row);
  std::vector<Ref> args = rs.scale_slot == 1 ? std::vector<Ref>{y, s} : std::vector<Ref>{s, y};
  p.replace(mm.outputs[0], p.op("prim.Elementwise", args, fn_attr(std::string(ew_fn(d)))));
}

Graph scale_matmul_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int rank = static_cast<int>(random_int(rng, 2, 3));
  Shape shape = random_shape(rng, rank, 1, 4);
  Shape vshape = shape;
  vshape[rank - 2] = shape[rank - 1];
  vshape[rank - 1] = random_int(rng, 1, 4);
  ValueId e = b.input("e", {DType::f32, shape});
  ValueId v = b.input("v", {DType::f32, vshape});
  Shape row = shape;
  row.back() = 1;
  bool scalar = random_int(rng, 0, 2) == 0;
  ValueId s = scalar ? b.constant(Tensor::scalar(DType::f32, 1.5 + random_int(rng, 0, 3)))
                     : b.op("prim.Elementwise", {b.input("s", {DType::f32, row})}, fn_attr("exp"));
  if (!scalar) s = b.op("prim.Broadcast", {s}, {{"shape", shape}});
  std::string fn = random_int(rng, 0, 1) == 0 ? "div" : "mul";
  bool swap = fn == "mul" && random_int(rng, 0, 1) == 0;
  ValueId q = b.op("prim.Elementwise", swap ? std::vector{s, e} : std::vector{e, s}, fn_attr(fn));
  b.output(b.op("prim.MatMul", {q, v}));
  return g;
}

// --- merge_matmuls ------------------------------------------------------------------------------

// For MatMul `n`, an earlier MatMul sharing its input `shared` (0: lhs, 1: rhs) whose other
// operand can be concatenated with n's (same rank, batch dims and contracted dim), or kNoNode.
NodeId merge_partner(const MatchContext& ctx, NodeId n, int shared) {
  const Node& mm = ctx.node(n);
  ValueId s = mm.inputs[shared];
  const TensorType& mine = ctx.type(mm.inputs[1 - shared]);
  // The concatenated axis: the rhs's columns, or the lhs's rows.
  size_t axis = mine.shape.size() - (shared == 0 ? 1 : 2);
  for (NodeId other : ctx.consumers(s)) {
    if (other >= n || ctx.node(other).op != "prim.MatMul") continue;
    const Node& o = ctx.node(other);
    if (o.inputs[shared] != s || o.inputs[1 - shared] == s || mm.inputs[1 - shared] == s) continue;
    const TensorType& theirs = ctx.type(o.inputs[1 - shared]);
    if (theirs.dtype != mine.dtype || theirs.shape.size() != mine.shape.size()) continue;
    bool compatible = true;
    for (size_t d = 0; d < mine.shape.size(); ++d)
      compatible = compatible && (d == axis || theirs.shape[d] == mine.shape[d]);
    if (compatible && !depends_on(ctx, mm.inputs[1 - shared], other)) return other;
  }
  return kNoNode;
}

template <int Shared>
bool merge_guard(const MatchContext& ctx, NodeId n) {
  return merge_partner(ctx, n, Shared) != kNoNode;
}

template <int Shared>
void merge_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& second = ctx.node(n);
  const Node& first = ctx.node(merge_partner(ctx, n, Shared));
  ValueId a = first.inputs[1 - Shared], b = second.inputs[1 - Shared];
  const Shape& a_shape = ctx.type(a).shape;
  auto rank = static_cast<int64_t>(a_shape.size());
  int64_t axis = rank - (Shared == 0 ? 1 : 2);
  Ref cat = p.op("prim.Concat", {p.value(a), p.value(b)}, {{"axis", axis}});
  Ref y = Shared == 0 ? p.op("prim.MatMul", {p.value(first.inputs[0]), cat})
                      : p.op("prim.MatMul", {cat, p.value(first.inputs[1])});
  Shape y_shape = p.shape(y);  // a copy: new values move as the patch grows
  auto slice = [&](int64_t start, int64_t end) {
    std::vector<int64_t> starts(rank, 0), ends(y_shape.begin(), y_shape.end()), steps(rank, 1);
    starts[axis] = start;
    ends[axis] = end;
    return p.op("prim.Slice", {y}, {{"starts", starts}, {"ends", ends}, {"steps", steps}});
  };
  int64_t split = a_shape[axis];
  p.replace(first.outputs[0], slice(0, split));
  p.replace(second.outputs[0], slice(split, y_shape[axis]));
}

template <int Shared>
Graph merge_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int rank = static_cast<int>(random_int(rng, 2, 3));
  Shape s_shape = random_shape(rng, rank, 1, 4);
  ValueId s = b.op("prim.Elementwise", {b.input("s", {DType::f32, s_shape})}, fn_attr("relu"));
  auto other = [&](const char* name) {
    Shape shape = s_shape;
    if (Shared == 0) {
      shape[rank - 2] = s_shape[rank - 1];
      shape[rank - 1] = random_int(rng, 1, 4);
    } else {
      shape[rank - 1] = s_shape[rank - 2];
      shape[rank - 2] = random_int(rng, 1, 4);
    }
    // A weight or a computed value.
    if (random_int(rng, 0, 1) == 0) return random_constant(b, rng, {DType::f32, shape});
    return b.input(name, {DType::f32, shape});
  };
  auto mm = [&](ValueId o) {
    return Shared == 0 ? b.op("prim.MatMul", {s, o}) : b.op("prim.MatMul", {o, s});
  };
  ValueId y1 = mm(other("w1"));
  ValueId y2 = mm(other("w2"));
  b.output(b.op("prim.Elementwise", {y1}, fn_attr("tanh")));
  b.output(b.op("prim.Elementwise", {y2}, fn_attr("neg")));
  return g;
}

}  // namespace

void add_attention_rules(RuleTable& rules) {
  rules.push_back({"reduce_sum_to_matmul", "attention",
                   "a float sum over the last axis of x[.., M, K] equals MatMul(x, ones[.., K, "
                   "1]) (ones repeated per batch, as MatMul does not broadcast)",
                   "prim.Reduce", reduce_matmul_guard, reduce_matmul_apply, reduce_matmul_sample});
  rules.push_back({"scale_past_matmul", "attention",
                   "MatMul(e / S, V) = MatMul(e, V) / S' (also *) when S is one value per row of "
                   "e (Broadcast of s[.., M, 1] along the last axis, or a scalar): row i of the "
                   "product is row i of e times V; the scaled e has no other use; float",
                   "prim.MatMul", scale_matmul_guard, scale_matmul_apply, scale_matmul_sample});
  rules.push_back({"merge_matmuls_shared_lhs", "attention",
                   "MatMul(A, W1) and MatMul(A, W2) with W1, W2 alike but for their column count "
                   "are Slices of MatMul(A, Concat(W1, W2, last axis)); W2 does not depend on "
                   "the first MatMul",
                   "prim.MatMul", merge_guard<0>, merge_apply<0>, merge_sample<0>});
  rules.push_back({"merge_matmuls_shared_rhs", "attention",
                   "MatMul(A1, W) and MatMul(A2, W) with A1, A2 alike but for their row count are "
                   "Slices of MatMul(Concat(A1, A2, rows), W); A2 does not depend on the first",
                   "prim.MatMul", merge_guard<1>, merge_apply<1>, merge_sample<1>});
}

}  // namespace orch::rewrite
