// RNN, GRU and LSTM on one-unit examples whose equations are written out in each test.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/interpreter.h"
#include "ir/builder.h"
#include "ir/error.h"

namespace orch {
namespace {

using Doubles = std::vector<double>;

Tensor f32(Shape shape, Doubles values) {
  return Tensor::from_doubles(DType::f32, std::move(shape), values);
}
double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}

// Runs `op` over constant inputs (undefined tensors are absent) and returns all its outputs.
std::vector<Tensor> run(const std::string& op, std::vector<Tensor> inputs, Attributes attrs,
                        int num_outputs) {
  Graph g;
  Builder b(g);
  std::vector<ValueId> ids;
  for (Tensor& t : inputs) ids.push_back(t.defined() ? b.constant(std::move(t)) : kNoValue);
  for (ValueId v : b.op_multi(op, ids, std::move(attrs), num_outputs)) b.output(v);
  return interp::interpret(g, {});
}

// One unit, W = 1, R = 0.5, no bias: h1 = tanh(x1), h2 = tanh(x2 + 0.5 h1).
TEST(Rnn, ForwardAndReverse) {
  Tensor x = f32({2, 1, 1}, {0.5, -0.25}), w = f32({1, 1, 1}, {1}), r = f32({1, 1, 1}, {0.5});
  auto fwd = run("RNN", {x, w, r}, {{"hidden_size", int64_t{1}}}, 2);
  double h1 = std::tanh(0.5), h2 = std::tanh(-0.25 + 0.5 * h1);
  EXPECT_EQ(fwd[0].shape(), (Shape{2, 1, 1, 1}));
  EXPECT_NEAR(fwd[0].get(0), h1, 1e-6);
  EXPECT_NEAR(fwd[0].get(1), h2, 1e-6);
  EXPECT_NEAR(fwd[1].get(0), h2, 1e-6);
  // Reverse reads x2 first; Y stays indexed by time.
  auto rev = run("RNN", {x, w, r}, {{"direction", std::string("reverse")}}, 2);
  double g2 = std::tanh(-0.25), g1 = std::tanh(0.5 + 0.5 * g2);
  EXPECT_NEAR(rev[0].get(0), g1, 1e-6);
  EXPECT_NEAR(rev[0].get(1), g2, 1e-6);
  EXPECT_NEAR(rev[1].get(0), g1, 1e-6);
}

TEST(Rnn, BidirectionalSequenceLensAndBatchFirst) {
  // Two rows, lengths 1 and 2, batch-first; the backward direction uses W = 2, R = 0.
  Tensor x = f32({2, 2, 1}, {1, 9, 0.5, -0.25});
  Tensor w = f32({2, 1, 1}, {1, 2}), r = f32({2, 1, 1}, {0.5, 0});
  Tensor lens = Tensor::from_ints(DType::i32, {2}, std::vector<int64_t>{1, 2});
  auto out = run("RNN", {x, w, r, Tensor(), lens},
                 {{"direction", std::string("bidirectional")}, {"layout", int64_t{1}}}, 2);
  ASSERT_EQ(out[0].shape(), (Shape{2, 2, 2, 1}));  // [batch, seq, dirs, hidden]
  // Row 0 has one step: both directions see only x = 1; step 2 stays zero.
  EXPECT_NEAR(out[0].get(0), std::tanh(1), 1e-6);
  EXPECT_NEAR(out[0].get(1), std::tanh(2), 1e-6);
  EXPECT_EQ(out[0].get(2), 0);
  EXPECT_EQ(out[0].get(3), 0);
  // Row 1: forward as in ForwardAndReverse; backward h at t = 0 is tanh(2 * 0.5).
  double h1 = std::tanh(0.5), h2 = std::tanh(-0.25 + 0.5 * h1);
  EXPECT_NEAR(out[0].get(4), h1, 1e-6);
  EXPECT_NEAR(out[0].get(5), std::tanh(1.0), 1e-6);
  EXPECT_NEAR(out[0].get(6), h2, 1e-6);
  EXPECT_NEAR(out[0].get(7), std::tanh(-0.5), 1e-6);
  // Y_h [batch, dirs, hidden]: forward's last step, backward's first.
  EXPECT_NEAR(out[1].get(2), h2, 1e-6);
  EXPECT_NEAR(out[1].get(3), std::tanh(1.0), 1e-6);
}

TEST(Rnn, ActivationsWithAlpha) {
  Tensor x = f32({1, 1, 1}, {-2}), w = f32({1, 1, 1}, {1}), r = f32({1, 1, 1}, {0});
  auto out = run("RNN", {x, w, r},
                 {{"activations", std::vector<std::string>{"LeakyRelu"}},
                  {"activation_alpha", std::vector<float>{0.25f}}},
                 1);
  EXPECT_NEAR(out[0].get(0), -0.5, 1e-6);
}

TEST(Rnn, UnknownActivationIsUnsupported) {
  Tensor x = f32({1, 1, 1}, {1}), w = f32({1, 1, 1}, {1}), r = f32({1, 1, 1}, {0});
  try {
    run("RNN", {x, w, r}, {{"activations", std::vector<std::string>{"Foo"}}}, 1);
    FAIL();
  } catch (const Unsupported& e) {
    EXPECT_STREQ(e.what(), "RNN: activation 'Foo' is not supported");
  }
}

// Gates z, r, h with Wz = Wr = 0 (so z = r = 0.5), Wh = Rh = 1, Rbh = 1, h0 = 0.5, x = 0.2.
TEST(Gru, LinearBeforeResetMovesTheResetGate) {
  Tensor x = f32({1, 1, 1}, {0.2}), w = f32({1, 3, 1}, {0, 0, 1}), r = f32({1, 3, 1}, {0, 0, 1});
  Tensor b = f32({1, 6}, {0, 0, 0, 0, 0, 1}), h0 = f32({1, 1, 1}, {0.5});
  // After: tanh(x + r (h Rh + Rbh)); before (default): tanh(x + (r h) Rh + Rbh).
  auto after = run("GRU", {x, w, r, b, Tensor(), h0}, {{"linear_before_reset", int64_t{1}}}, 2);
  EXPECT_NEAR(after[1].get(0), 0.5 * std::tanh(0.2 + 0.5 * 1.5) + 0.25, 1e-6);
  auto before = run("GRU", {x, w, r, b, Tensor(), h0}, {}, 2);
  EXPECT_NEAR(before[1].get(0), 0.5 * std::tanh(0.2 + 0.25 + 1) + 0.25, 1e-6);
}

// Gates i, o, f, c with W = 1, 2, 3, 4, R = 0, peepholes P = 0.1, 0.2, 0.3 (i, o, f).
TEST(Lstm, PeepholesAndCellState) {
  Tensor x = f32({1, 1, 1}, {0.5}), w = f32({1, 4, 1}, {1, 2, 3, 4});
  Tensor r = f32({1, 4, 1}, {0, 0, 0, 0}), c0 = f32({1, 1, 1}, {0.3});
  Tensor p = f32({1, 3}, {0.1, 0.2, 0.3});
  auto out = run("LSTM", {x, w, r, Tensor(), Tensor(), Tensor(), c0, p}, {}, 3);
  double i = sigmoid(0.5 + 0.1 * 0.3), f = sigmoid(1.5 + 0.3 * 0.3);
  double c = f * 0.3 + i * std::tanh(2.0);
  double o = sigmoid(1.0 + 0.2 * c);
  EXPECT_NEAR(out[2].get(0), c, 1e-6);
  EXPECT_NEAR(out[1].get(0), o * std::tanh(c), 1e-6);
  EXPECT_NEAR(out[0].get(0), o * std::tanh(c), 1e-6);
  // input_forget couples the forget gate to 1 - i.
  auto coupled = run("LSTM", {x, w, r, Tensor(), Tensor(), Tensor(), c0, p},
                     {{"input_forget", int64_t{1}}}, 3);
  EXPECT_NEAR(coupled[2].get(0), (1 - i) * 0.3 + i * std::tanh(2.0), 1e-6);
}

TEST(Lstm, WrongWeightShapeIsAnError) {
  Tensor x = f32({1, 1, 1}, {0.5}), w = f32({1, 3, 1}, {1, 2, 3}), r = f32({1, 4, 1}, {0, 0, 0, 0});
  try {
    run("LSTM", {x, w, r}, {}, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "LSTM: LSTM W must be [1,4,1], got [1,3,1]");
  }
}

}  // namespace
}  // namespace orch
