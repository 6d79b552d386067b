// Index maps against the reference kernels: for every primitive that the rules' samples produce
// and random output boxes, the evaluated input boxes must cover every element the kernel reads.
// Elements outside the boxes are poisoned (NaN for floats, flipped bools, and for integers another
// value present in the tensor, so that indices stay valid); the output box must come out
// unchanged.
#include <fmt/format.h>

#include <gtest/gtest.h>
#include <cmath>

#include "fission/fission.h"
#include "fission_check.h"
#include "interp/interpreter.h"
#include "interp/kernels/util.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "ir/index_map.h"
#include "ir/op_registry.h"
#include "ir/ops/prim.h"

namespace orch::fission {
namespace {

bool inside(const std::vector<int64_t>& index, const Box& box) {
  for (size_t d = 0; d < index.size(); ++d)
    if (index[d] < box[d].lo || index[d] > box[d].hi) return false;
  return true;
}

Tensor poison_outside(const Tensor& t, const Box& box) {
  Tensor out = t.clone();
  int64_t lo = 0, hi = 0;
  for (int64_t i = 0; i < t.numel() && !is_float(t.dtype()); ++i) {
    lo = i == 0 ? t.get_int(i) : std::min(lo, t.get_int(i));
    hi = i == 0 ? t.get_int(i) : std::max(hi, t.get_int(i));
  }
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (inside(interp::unravel(i, t.shape()), box)) continue;
    if (is_float(t.dtype()))
      out.set(i, std::nan(""));
    else if (t.dtype() == DType::boolean)
      out.set_int(i, t.get_int(i) == 0);
    else
      out.set_int(i, t.get_int(i) == lo ? hi : lo);
  }
  return out;
}

Box random_box(const Shape& shape, std::mt19937& rng) {
  Box box;
  for (int64_t d : shape) {
    int64_t a = std::uniform_int_distribution<int64_t>(0, d - 1)(rng);
    int64_t b = std::uniform_int_distribution<int64_t>(0, d - 1)(rng);
    box.push_back({std::min(a, b), std::max(a, b)});
  }
  return box;
}

// Checks one primitive node; returns "" or what went wrong.
std::string check_node(const Graph& g, const Node& n, std::mt19937& rng, uint64_t seed) {
  const OpSchema* schema = find_op(n.op);
  std::vector<TensorType> in_types;
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value& v = g.value(n.inputs[i]);
    in_types.push_back(v.type);
    inputs.push_back(v.is_constant() ? v.constant : interp::random_tensor(v.type, seed + i));
  }
  const TensorType& out_type = g.value(n.outputs[0]).type;
  IndexMap map = schema->index_map(n.attrs, in_types, out_type);
  if (map.inputs.size() != inputs.size()) return "map has the wrong number of inputs";
  Tensor want = interp::run_op(n.op, n.attrs, inputs, {out_type})[0];
  if (want.numel() == 0) return "";
  for (int trial = 0; trial < 4; ++trial) {
    Box out_box = random_box(out_type.shape, rng);
    std::vector<Tensor> poisoned;
    for (size_t i = 0; i < inputs.size(); ++i)
      poisoned.push_back(poison_outside(inputs[i], input_box(map, i, inputs[i].shape(), out_box)));
    Tensor got;
    try {
      got = interp::run_op(n.op, n.attrs, poisoned, {out_type})[0];
    } catch (const Error& e) {
      return fmt::format("kernel read a poisoned index: {}", e.what());
    }
    for (int64_t i = 0; i < want.numel(); ++i) {
      if (!inside(interp::unravel(i, out_type.shape), out_box)) continue;
      bool same = is_float(want.dtype()) ? (std::isnan(want.get(i)) && std::isnan(got.get(i))) ||
                                               want.get(i) == got.get(i)
                                         : want.get_int(i) == got.get_int(i);
      if (!same)
        return fmt::format("output element {} changed ({} -> {}) with map\n{}", i, want.get(i),
                           got.get(i), format_index_map(map, out_type.shape.size()));
    }
  }
  return "";
}

class IndexMapTest : public ::testing::TestWithParam<const FissionRule*> {};

TEST_P(IndexMapTest, InputBoxesCoverWhatTheKernelReads) {
  const FissionRule& rule = *GetParam();
  for (int seed = 0; seed < test::kSamplesPerRule; ++seed) {
    std::mt19937 rng(seed * 7919 + 17);
    Graph g = fission(rule.sample(rule.op, rng));
    for (const Node& n : g.nodes()) {
      if (!prim::is_primitive(n.op)) continue;
      EXPECT_EQ(check_node(g, n, rng, seed), "") << n.op << " seed " << seed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllRules, IndexMapTest, ::testing::ValuesIn(test::sampled_rules()),
                         [](const auto& info) { return test::rule_name(*info.param, info.index); });

TEST(IndexMap, ConvWindowWithHalo) {
  // Conv 3x3, stride 1, pad 1: output rows [0, 3] read input rows [-1, 5] -> clamped [0, 5].
  Attributes attrs = {{"strides", std::vector<int64_t>{1, 1}},
                      {"dilations", std::vector<int64_t>{1, 1}},
                      {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  std::vector<TensorType> in = {{DType::f32, {1, 4, 16, 16}}, {DType::f32, {8, 4, 3, 3}}};
  TensorType out{DType::f32, {1, 8, 16, 16}};
  IndexMap map = find_op("prim.Conv")->index_map(attrs, in, out);
  EXPECT_EQ(format_index_map(map, 4),
            "in0[d0, (d1 floordiv 8)*4 + r0, d2 + r1 - 1, d3 + r2 - 1]\n"
            "in1[d1, r0, r1, r2]\n"
            "reduce [4, 3, 3]\n");
  Box box = input_box(map, 0, in[0].shape, {{0, 0}, {0, 7}, {0, 3}, {4, 7}});
  EXPECT_EQ(box, (Box{{0, 0}, {0, 3}, {0, 4}, {3, 8}}));
}

TEST(IndexMap, ReshapeUsesFloordivAndMod) {
  // [6] -> [2,3]: input i = d0*3 + d1.
  IndexMap map = find_op("prim.Reshape")
                     ->index_map({{"shape", std::vector<int64_t>{2, 3}}}, {{{DType::f32, {6}}}},
                                 {DType::f32, {2, 3}});
  EXPECT_EQ(input_box(map, 0, {6}, {{1, 1}, {0, 2}}), (Box{{3, 5}}));
  // [2,3] -> [6]: input (d0 floordiv 3, d0 mod 3).
  map = find_op("prim.Reshape")
            ->index_map({{"shape", std::vector<int64_t>{6}}}, {{{DType::f32, {2, 3}}}},
                        {DType::f32, {6}});
  EXPECT_EQ(input_box(map, 0, {2, 3}, {{4, 5}}), (Box{{1, 1}, {1, 2}}));
  EXPECT_EQ(input_box(map, 0, {2, 3}, {{2, 3}}), (Box{{0, 1}, {0, 2}}));
}

TEST(IndexMap, GatherAxisIsWholeDimension) {
  IndexMap map =
      find_op("prim.Gather")
          ->index_map({{"axis", int64_t{1}}}, {{{DType::f32, {4, 10, 3}}, {DType::i64, {2}}}},
                      {DType::f32, {4, 2, 3}});
  EXPECT_EQ(input_box(map, 0, {4, 10, 3}, {{1, 2}, {0, 0}, {2, 2}}), (Box{{1, 2}, {0, 9}, {2, 2}}));
  EXPECT_EQ(input_box(map, 1, {2}, {{1, 2}, {1, 1}, {2, 2}}), (Box{{1, 1}}));
}

// Reflect and edge padding read a box the size of the output's inside the input, not the whole
// dimension: a tile of a padded plane stages a tile of the input.
TEST(IndexMap, ReflectAndEdgePaddingReadTheMirroredBox) {
  auto pad_map = [](const std::string& mode) {
    Attributes attrs = {{"pads", std::vector<int64_t>{0, 4, 0, 4}}, {"mode", mode}};
    return find_op("prim.Pad")->index_map(attrs, {{{DType::f32, {2, 10}}}}, {DType::f32, {2, 18}});
  };
  IndexMap reflect = pad_map("reflect"), edge = pad_map("edge");
  EXPECT_EQ(input_box(reflect, 0, {2, 10}, {{0, 1}, {6, 9}}), (Box{{0, 1}, {2, 5}}));
  EXPECT_EQ(input_box(edge, 0, {2, 10}, {{0, 1}, {6, 9}}), (Box{{0, 1}, {2, 5}}));
  // Output columns 0..5 read input columns 4..1 mirrored, then 0 and 1: reflect gets 0..4
  // exactly; edge reads 0 and 1, and gets 0..2 (interval arithmetic loses x's correlation).
  EXPECT_EQ(input_box(reflect, 0, {2, 10}, {{0, 0}, {0, 5}}), (Box{{0, 0}, {0, 4}}));
  EXPECT_EQ(input_box(edge, 0, {2, 10}, {{0, 0}, {0, 5}}), (Box{{0, 0}, {0, 2}}));
  // Past the end, columns 15..17: reflect reads 7, 6, 5; edge reads 9 (and gets 8..9).
  EXPECT_EQ(input_box(reflect, 0, {2, 10}, {{0, 0}, {15, 17}}), (Box{{0, 0}, {5, 7}}));
  EXPECT_EQ(input_box(edge, 0, {2, 10}, {{0, 0}, {15, 17}}), (Box{{0, 0}, {8, 9}}));
  EXPECT_EQ(format_index_map(reflect, 2), "in0[d0, ||d1 - 4|*-1 + 9|*-1 + 9]\n");
}

TEST(IndexMap, ExpressionEvaluation) {
  IndexExpr e = IndexExpr::mod(IndexExpr::floordiv(IndexExpr::var(0) * 3 + 1, 2), 4);
  std::vector<int64_t> point = {5};
  EXPECT_EQ(e.eval(point), 0);  // (16 floordiv 2) mod 4
  std::vector<Interval> box = {{0, 1}};
  EXPECT_EQ(e.eval(box, {0, 9}), (Interval{0, 2}));
  std::vector<Interval> wide = {{0, 5}};
  EXPECT_EQ(e.eval(wide, {0, 9}), (Interval{0, 3}));  // crosses a period: whole range
  EXPECT_EQ(IndexExpr::floordiv(IndexExpr::var(0) - 3, 2).eval(box, {}), (Interval{-2, -1}));
  EXPECT_EQ(e.str(1), "((d0*3 + 1) floordiv 2) mod 4");
}

}  // namespace
}  // namespace orch::fission
