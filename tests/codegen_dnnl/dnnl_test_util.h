// Shared by the oneDNN backend tests: graphs of primitives in the shapes fission emits, and the
// comparison of a compiled kernel with the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "codegen/dnnl/dnnl_backend.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/builder.h"
#include "ir/text_format.h"

namespace orch::codegen::dnnl_test {

/// A graph under construction with the elementwise helpers fission's rules use.
struct Net {
  Graph g;
  Builder b{g};

  ValueId input(const Shape& s) {
    return b.input("in" + std::to_string(g.inputs().size()), {DType::f32, s});
  }
  ValueId weights(const Shape& s, uint64_t seed) {
    return b.constant(interp::random_tensor({DType::f32, s}, seed));
  }
  ValueId c(double v) { return b.constant(Tensor::scalar(DType::f32, v)); }
  ValueId ew(const std::string& fn, std::vector<ValueId> in) {
    return b.op("prim.Elementwise", std::move(in), {{"fn", fn}});
  }
  ValueId op(const std::string& op, std::vector<ValueId> in, Attributes attrs = {}) {
    return b.op(op, std::move(in), std::move(attrs));
  }
  const Shape& shape(ValueId v) const { return g.value(v).type.shape; }
  /// A per-channel bias along `axis`, reshaped and broadcast as fission adds Conv/Gemm biases.
  ValueId bias(ValueId y, int64_t axis, bool constant, uint64_t seed) {
    Shape s = shape(y);
    ValueId v = constant ? weights({s[axis]}, seed) : input({s[axis]});
    Shape ones(s.size(), 1);
    ones[axis] = s[axis];
    v = op("prim.Reshape", {v}, {{"shape", ones}});
    return ew("add", {y, op("prim.Broadcast", {v}, {{"shape", s}})});
  }
};

/// Epilogue builders in fission's shapes (src/fission/elementwise.cc).
inline ValueId leaky_relu(Net& n, ValueId x, double alpha) {
  return n.ew("where", {n.ew("less", {x, n.c(0)}), n.ew("mul", {x, n.c(alpha)}), x});
}
inline ValueId clip(Net& n, ValueId x, double lo, double hi) {
  return n.ew("min", {n.ew("max", {x, n.c(lo)}), n.c(hi)});
}
inline ValueId hard_swish(Net& n, ValueId x) {
  ValueId v = n.ew("add", {n.ew("mul", {x, n.c(1.0 / 6)}), n.c(0.5)});
  return n.ew("mul", {x, n.ew("max", {n.c(0), n.ew("min", {n.c(1), v})})});
}
inline ValueId swish(Net& n, ValueId x) {
  return n.ew("mul", {x, n.ew("sigmoid", {x})});
}
inline ValueId softplus(Net& n, ValueId x) {
  return n.ew("log", {n.ew("add", {n.ew("exp", {x}), n.c(1)})});
}
inline ValueId mish(Net& n, ValueId x) {
  return n.ew("mul", {x, n.ew("tanh", {softplus(n, x)})});
}
inline ValueId gelu(Net& n, ValueId x, bool tanh_approx) {
  ValueId inner;
  if (tanh_approx) {
    ValueId cube = n.ew("mul", {n.ew("mul", {x, x}), x});
    ValueId poly = n.ew("add", {x, n.ew("mul", {cube, n.c(0.044715)})});
    inner = n.ew("tanh", {n.ew("mul", {poly, n.c(std::sqrt(2 / std::numbers::pi))})});
  } else {
    inner = n.ew("erf", {n.ew("mul", {x, n.c(1 / std::numbers::sqrt2)})});
  }
  return n.ew("mul", {n.ew("mul", {x, n.c(0.5)}), n.ew("add", {n.c(1), inner})});
}

/// Absolute error allowed against the interpreter (which accumulates in double): fp32
/// rounding of sums of up to a few thousand products of values in [-1, 1).
inline double tolerance(double reference) {
  return 1e-4 + 1e-4 * std::abs(reference);
}

/// One run of `kernel`, compiled from `g`, matches the interpreter on inputs drawn from `seed`.
inline void expect_run_matches_interpreter(const Graph& g, Kernel& kernel, uint64_t seed) {
  std::vector<Tensor> inputs = interp::random_inputs(g, seed);
  std::vector<Tensor> expected = interp::interpret(g, inputs);
  const TensorType& t = g.value(g.outputs()[0]).type;
  Tensor out(t.dtype, t.shape);
  kernel.run(inputs, std::span<Tensor>(&out, 1));
  const float* got = out.data<float>();
  int bad = 0;
  for (int64_t i = 0; i < out.numel() && bad < 5; ++i) {
    double want = expected[0].get(i);
    if (!(std::abs(got[i] - want) <= tolerance(want))) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want;
      ++bad;
    }
  }
}

/// The backend accepts `g`, and its kernel (run twice, in `config`) matches the interpreter.
inline void expect_matches_interpreter(const Graph& g, uint64_t seed,
                                       const std::string& config = "") {
  SCOPED_TRACE(print_graph(g) + " config '" + config + "'");
  ASSERT_EQ(dnnl_backend().reject(g), "");
  std::unique_ptr<Kernel> kernel = dnnl_compile(g, config);
  for (int run = 0; run < 2; ++run) expect_run_matches_interpreter(g, *kernel, seed + run);
}

inline int64_t pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

}  // namespace orch::codegen::dnnl_test
