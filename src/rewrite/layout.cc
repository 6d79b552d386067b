// Layout rules: Transposes that move no data become Reshapes (views), and a Transpose of both
// MatMul operands over batch dims only moves past the MatMul. (A Transpose of a constant weight
// folds into the weight through fold_constants.)
#include <numeric>

#include "rewrite/rule_util.h"

namespace orch::rewrite {
namespace {

// --- transpose_as_reshape --------------------------------------------------------------------

bool transpose_reshape_guard(const MatchContext& ctx, NodeId n) {
  const Node& node = ctx.node(n);
  std::vector<int64_t> perm = attr_ints(node.attrs, "perm");
  const Shape& in = ctx.type(node.inputs[0]).shape;
  // Row-major order is kept when the dims of size > 1 stay in order.
  int64_t last = -1;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    identity = identity && perm[i] == static_cast<int64_t>(i);
    if (in[perm[i]] == 1) continue;
    if (perm[i] < last) return false;
    last = perm[i];
  }
  return !identity;
}

void transpose_reshape_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& node = ctx.node(n);
  p.replace(node.outputs[0], p.op("prim.Reshape", {p.value(node.inputs[0])},
                                  {{"shape", ctx.type(node.outputs[0]).shape}}));
}

Graph transpose_reshape_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int rank = static_cast<int>(random_int(rng, 2, 4));
  Shape shape = random_shape(rng, rank, 2, 4);
  // Size-1 dims anywhere; the perm moves them and keeps the others in order.
  std::vector<int64_t> ones;
  for (int d = 0; d < rank; ++d)
    if (d == 0 || random_int(rng, 0, 1) == 0) {
      shape[d] = 1;
      ones.push_back(d);
    }
  std::vector<int64_t> perm;
  for (int d = 0; d < rank; ++d)
    if (shape[d] != 1) perm.push_back(d);
  for (int64_t d : ones)
    perm.insert(perm.begin() + random_int(rng, 0, static_cast<int64_t>(perm.size())), d);
  if (perm[0] == 0 && perm.size() > 1) std::swap(perm[0], perm[1]);
  ValueId x =
      b.op("prim.Elementwise", {b.input("x", {DType::f32, shape})}, {{"fn", std::string("relu")}});
  ValueId t = b.op("prim.Transpose", {x}, {{"perm", perm}});
  b.output(b.op("prim.Elementwise", {t}, {{"fn", std::string("neg")}}));
  return g;
}

// --- transpose_past_matmul -------------------------------------------------------------------

// The shared batch-only perm of both MatMul operands' Transposes, or empty.
std::vector<int64_t> batch_perm(const MatchContext& ctx, NodeId n) {
  const Node& mm = ctx.node(n);
  const Node* ta = ctx.producer_if(mm.inputs[0], "prim.Transpose");
  const Node* tb = ctx.producer_if(mm.inputs[1], "prim.Transpose");
  if (ta == nullptr || tb == nullptr) return {};
  std::vector<int64_t> perm = attr_ints(ta->attrs, "perm");
  auto rank = static_cast<int64_t>(perm.size());
  if (perm != attr_ints(tb->attrs, "perm") || rank < 3 || perm[rank - 2] != rank - 2 ||
      perm[rank - 1] != rank - 1)
    return {};
  return perm;
}

bool transpose_matmul_guard(const MatchContext& ctx, NodeId n) {
  return !batch_perm(ctx, n).empty();
}

void transpose_matmul_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& mm = ctx.node(n);
  std::vector<int64_t> perm = batch_perm(ctx, n);
  ValueId a = ctx.producer(mm.inputs[0])->inputs[0];
  ValueId b = ctx.producer(mm.inputs[1])->inputs[0];
  Ref y = p.op("prim.MatMul", {p.value(a), p.value(b)});
  p.replace(mm.outputs[0], p.op("prim.Transpose", {y}, {{"perm", perm}}));
}

Graph transpose_matmul_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int rank = static_cast<int>(random_int(rng, 3, 4));
  Shape batch = random_shape(rng, rank - 2, 1, 3);
  int64_t m = random_int(rng, 1, 4), k = random_int(rng, 1, 4), n = random_int(rng, 1, 4);
  Shape a = batch, w = batch;
  a.insert(a.end(), {m, k});
  w.insert(w.end(), {k, n});
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.begin() + rank - 2, rng);
  ValueId x = b.op("prim.Transpose", {b.input("a", {DType::f32, a})}, {{"perm", perm}});
  ValueId y = b.op("prim.Transpose", {b.input("w", {DType::f32, w})}, {{"perm", perm}});
  b.output(b.op("prim.Elementwise", {b.op("prim.MatMul", {x, y})}, {{"fn", std::string("neg")}}));
  return g;
}

}  // namespace

void add_layout_rules(RuleTable& rules) {
  rules.push_back({"transpose_as_reshape", "layout",
                   "a Transpose that keeps the dims of size > 1 in order moves no element in "
                   "row-major order: it is a Reshape (a view)",
                   "prim.Transpose", transpose_reshape_guard, transpose_reshape_apply,
                   transpose_reshape_sample, true});
  rules.push_back({"transpose_past_matmul", "layout",
                   "MatMul(Transpose(a, p), Transpose(b, p)) = Transpose(MatMul(a, b), p) when p "
                   "permutes batch dims only (the last two stay)",
                   "prim.MatMul", transpose_matmul_guard, transpose_matmul_apply,
                   transpose_matmul_sample});
}

}  // namespace orch::rewrite
