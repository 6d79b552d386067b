// Property: random graphs built with the registered ops keep their structural hash through the
// text format and through ONNX export + import.
#include <gtest/gtest.h>

#include <random>

#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/op_registry.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace orch::frontend {
namespace {

constexpr int kSeeds = 300;

class RandomGraph {
 public:
  explicit RandomGraph(uint32_t seed) : rng_(seed), b_(g_) {}

  Graph build() {
    const DType dtypes[] = {DType::f32, DType::f32, DType::f64, DType::f16};
    dtype_ = dtypes[pick(4)];
    Shape shape = random_shape();
    for (int i = 0, n = 1 + pick(3); i < n; ++i)
      pool_.push_back(b_.input(name("in"), {dtype_, shape}));
    for (int i = 0, n = 1 + pick(12); i < n; ++i) {
      try {
        add_random_node();
      } catch (const Error&) {
        // The op's rule rejected this random choice (e.g. a rank it does not take): skip it.
      }
    }
    b_.output(pool_.back());
    for (ValueId v : pool_)
      if (pick(4) == 0 && v != pool_.back()) b_.output(v);
    return std::move(g_);
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  Shape random_shape() {
    Shape s(1 + pick(4));
    for (int64_t& d : s) d = 1 + pick(4);
    return s;
  }

  // Value and node names, sometimes ones the text format must quote.
  std::string name(std::string_view base) {
    switch (pick(6)) {
      case 0:
        return "";
      case 1:
        return fmt::format("{} {}\"{}", base, counter_++, pick(10));
      default:
        return fmt::format("{}{}", base, counter_++);
    }
  }

  ValueId any_value() { return pool_[pick(static_cast<int>(pool_.size()))]; }

  Tensor random_constant(const Shape& shape) {
    Tensor t(dtype_, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, pick(200) / 8.0 - 12);
    return t;
  }

  // A constant the value of type `shape` broadcasts with: its suffix, with some dims 1.
  ValueId broadcast_constant(const Shape& shape) {
    Shape s(shape.begin() + pick(static_cast<int>(shape.size()) + 1), shape.end());
    for (int64_t& d : s)
      if (pick(3) == 0) d = 1;
    return b_.constant(random_constant(s), name("c"));
  }

  ValueId ints(std::vector<int64_t> v) {
    return b_.constant(Tensor::from_ints(DType::i64, {static_cast<int64_t>(v.size())}, v), "");
  }

  void push(ValueId v) { pool_.push_back(v); }

  bool has(std::string_view op) const { return find_op(op) != nullptr; }

  void add_random_node() {
    static const char* const kUnary[] = {"Relu",    "Exp",  "Identity", "Neg",      "Abs",
                                         "Sigmoid", "Tanh", "Sqrt",     "Softsign", "Erf"};
    static const char* const kBinary[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
    ValueId x = any_value();
    const Shape shape = b_.type(x).shape;
    auto rank = static_cast<int64_t>(shape.size());
    int kind = pick(8);
    // A rank-0 value (ReduceSum over every axis) has no axis for Softmax, ReduceSum, Concat or
    // Split (pick(0) would be undefined): it takes a unary op instead.
    if (rank == 0 && kind >= 5) kind = 0;
    switch (kind) {
      case 0:
      case 1: {
        const char* op = kUnary[pick(std::size(kUnary))];
        if (has(op)) push(b_.op(op, {x}, {}, name("u")));
        return;
      }
      case 2:
      case 3: {
        const char* op = kBinary[pick(std::size(kBinary))];
        if (!has(op)) return;
        ValueId y = pick(2) ? broadcast_constant(shape) : x;
        push(pick(2) ? b_.op(op, {x, y}, {}, name("b")) : b_.op(op, {y, x}, {}, name("b")));
        return;
      }
      case 4: {
        std::vector<int64_t> perm(rank);
        for (int64_t i = 0; i < rank; ++i) perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), rng_);
        if (has("Transpose")) push(b_.op("Transpose", {x}, {{"perm", perm}}, name("t")));
        return;
      }
      case 5: {
        int64_t axis = pick(static_cast<int>(rank)) - (pick(2) ? rank : 0);
        if (pick(2) && has("Softmax"))
          push(b_.op("Softmax", {x}, {{"axis", axis}}, name("s")));
        else if (has("ReduceSum"))
          push(b_.op("ReduceSum", {x, ints({axis})}, {{"keepdims", int64_t{pick(2)}}}, name("r")));
        return;
      }
      case 6: {
        if (has("Reshape")) push(b_.op("Reshape", {x, ints({-1})}, {}, name("f")));
        if (has("Concat") && pick(2))
          push(b_.op("Concat", {x, x}, {{"axis", int64_t{pick(static_cast<int>(rank))}}},
                     name("k")));
        return;
      }
      default: {
        if (has("LeakyRelu"))
          push(b_.op("LeakyRelu", {x}, {{"alpha", static_cast<float>(pick(10)) / 7}}, name("l")));
        if (has("Split") && shape[0] % 2 == 0)
          for (ValueId v : b_.op_multi("Split", {x}, {{"axis", int64_t{0}}}, 2)) push(v);
        return;
      }
    }
  }

  std::mt19937 rng_;
  Graph g_;
  Builder b_;
  DType dtype_ = DType::f32;
  std::vector<ValueId> pool_;
  int counter_ = 0;
};

TEST(RoundTripProperty, RandomGraphsKeepTheirHash) {
  int nodes = 0;
  for (uint32_t seed = 0; seed < kSeeds; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    Graph g = RandomGraph(seed).build();
    ASSERT_NO_THROW(verify(g));
    nodes += static_cast<int>(g.num_nodes());
    uint64_t hash = structural_hash(g);
    std::string text = print_graph(g);
    Graph via_text = parse_graph(text);
    EXPECT_EQ(structural_hash(via_text), hash) << text;
    EXPECT_EQ(print_graph(via_text), text);
    Graph via_onnx = import_onnx_bytes(export_onnx_bytes(g), "");
    EXPECT_EQ(structural_hash(via_onnx), hash) << text << "\nafter ONNX:\n"
                                               << print_graph(via_onnx);
  }
  // The generator must exercise the format: most seeds build several nodes.
  EXPECT_GT(nodes, kSeeds * 3);
}

}  // namespace
}  // namespace orch::frontend
