#include "ir/ops/opaque_rnn.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "ir/error.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

struct FnInfo {
  std::string_view name;  // lower case; names match case-insensitively
  RnnFn fn;
  bool takes_alpha, takes_beta;
  double alpha, beta;  // defaults, as in the ONNX operators of the same name
};

constexpr FnInfo kFns[] = {
    {"relu", RnnFn::Relu, false, false, 0, 0},
    {"tanh", RnnFn::Tanh, false, false, 0, 0},
    {"sigmoid", RnnFn::Sigmoid, false, false, 0, 0},
    {"affine", RnnFn::Affine, true, true, 1, 0},
    {"leakyrelu", RnnFn::LeakyRelu, true, false, 0.01, 0},
    {"thresholdedrelu", RnnFn::ThresholdedRelu, true, false, 1, 0},
    {"scaledtanh", RnnFn::ScaledTanh, true, true, 1, 1},
    {"hardsigmoid", RnnFn::HardSigmoid, true, true, 0.2, 0.5},
    {"elu", RnnFn::Elu, true, false, 1, 0},
    {"softsign", RnnFn::Softsign, false, false, 0, 0},
    {"softplus", RnnFn::Softplus, false, false, 0, 0},
};

const FnInfo& find_fn(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const FnInfo& f : kFns)
    if (f.name == lower) return f;
  unsupported("activation '{}' is not supported", name);
}

struct OpInfo {
  std::string_view op;
  int64_t gates;
  std::vector<std::string> default_fns;
};

const OpInfo& op_info(std::string_view op) {
  static const OpInfo kOps[] = {{"RNN", 1, {"Tanh"}},
                                {"GRU", 3, {"Sigmoid", "Tanh"}},
                                {"LSTM", 4, {"Sigmoid", "Tanh", "Tanh"}}};
  for (const OpInfo& o : kOps)
    if (o.op == op) return o;
  fail("'{}' is not a recurrent op", op);
}

// Activations consume activation_alpha / activation_beta in order, only those that take them.
std::vector<std::vector<RnnActivation>> activations(const Attributes& attrs, const OpInfo& info,
                                                    int64_t directions) {
  size_t per_dir = info.default_fns.size();
  std::vector<std::string> names = attr_strings(attrs, "activations");
  if (names.empty())
    for (int64_t d = 0; d < directions; ++d)
      names.insert(names.end(), info.default_fns.begin(), info.default_fns.end());
  // Exporters write the schema's two-direction default for one direction; use the first half.
  if (directions == 1 && names.size() == 2 * per_dir) names.resize(per_dir);
  check(names.size() == per_dir * directions, "{} expects {} activations, got {}", info.op,
        per_dir * directions, names.size());
  std::vector<float> alphas = attr_floats(attrs, "activation_alpha");
  std::vector<float> betas = attr_floats(attrs, "activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<std::vector<RnnActivation>> out(directions);
  for (size_t i = 0; i < names.size(); ++i) {
    const FnInfo& f = find_fn(names[i]);
    RnnActivation a{f.fn, f.alpha, f.beta};
    if (f.takes_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (f.takes_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    out[i / per_dir].push_back(a);
  }
  return out;
}

// Inputs: X, W, R, B, sequence_lens, initial_h, then for LSTM initial_c and P.
template <int kOp>
std::vector<TensorType> recurrent(const InferInput& in) {
  constexpr std::string_view kNames[] = {"RNN", "GRU", "LSTM"};
  std::string_view op = kNames[kOp];
  DType t = in.type(0).dtype;
  require_float(t, fmt::format("{} input X", op));
  for (size_t i : {1, 2, 3, 5, 6, 7})
    if (in.has(i))
      check(in.type(i).dtype == t, "{} input {} is {}, X is {}", op, i,
            dtype_name(in.type(i).dtype), dtype_name(t));
  require_rank(in, 0, 3);
  require_rank(in, 2, 3);
  RnnSpec s = rnn_spec(op, in.attrs, in.type(0).shape, in.type(2).shape);
  auto expect = [&](size_t i, std::string_view name, const Shape& want) {
    if (in.has(i))
      check(in.type(i).shape == want, "{} {} must be {}, got {}", op, name, format_shape(want),
            format_shape(in.type(i).shape));
  };
  int64_t gh = size_in_range(__int128{s.gates} * s.hidden, "gates x hidden_size");
  Shape state = s.batch_first ? Shape{s.batch, s.directions, s.hidden}
                              : Shape{s.directions, s.batch, s.hidden};
  expect(1, "W", {s.directions, gh, s.input});
  expect(2, "R", {s.directions, gh, s.hidden});
  expect(3, "B", {s.directions, size_in_range(__int128{2} * gh, "2 x gates x hidden_size")});
  expect(4, "sequence_lens", {s.batch});
  if (in.has(4)) require_dtype(in.type(4).dtype, {DType::i32, DType::i64}, "sequence_lens");
  expect(5, "initial_h", state);
  expect(6, "initial_c", state);
  expect(7, "P", {s.directions, size_in_range(__int128{3} * s.hidden, "3 x hidden_size")});
  for (std::string_view flag : {"linear_before_reset", "input_forget"}) {
    int64_t v = attr_int(in.attrs, flag, 0);
    check(v == 0 || v == 1, "{} must be 0 or 1, got {}", flag, v);
  }
  Shape y = s.batch_first ? Shape{s.batch, s.seq, s.directions, s.hidden}
                          : Shape{s.seq, s.directions, s.batch, s.hidden};
  std::vector<TensorType> out = {{t, y}, {t, state}, {t, state}};
  out.resize(in.num_outputs);
  return out;
}

}  // namespace

double apply(const RnnActivation& a, double x) {
  switch (a.fn) {
    case RnnFn::Relu:
      return std::max(0.0, x);
    case RnnFn::Tanh:
      return std::tanh(x);
    case RnnFn::Sigmoid:
      return 1 / (1 + std::exp(-x));
    case RnnFn::Affine:
      return a.alpha * x + a.beta;
    case RnnFn::LeakyRelu:
      return x >= 0 ? x : a.alpha * x;
    case RnnFn::ThresholdedRelu:
      return x >= a.alpha ? x : 0;
    case RnnFn::ScaledTanh:
      return a.alpha * std::tanh(a.beta * x);
    case RnnFn::HardSigmoid:
      return std::clamp(a.alpha * x + a.beta, 0.0, 1.0);
    case RnnFn::Elu:
      return x >= 0 ? x : a.alpha * (std::exp(x) - 1);
    case RnnFn::Softsign:
      return x / (1 + std::abs(x));
    case RnnFn::Softplus:
      return std::log1p(std::exp(x));
  }
  return x;
}

RnnSpec rnn_spec(std::string_view op, const Attributes& attrs, const Shape& x, const Shape& r) {
  const OpInfo& info = op_info(op);
  RnnSpec s;
  s.gates = info.gates;
  std::string direction = attr_string(attrs, "direction", "forward");
  check(direction == "forward" || direction == "reverse" || direction == "bidirectional",
        "direction '{}' is not forward, reverse or bidirectional", direction);
  s.directions = direction == "bidirectional" ? 2 : 1;
  s.reverse_only = direction == "reverse";
  int64_t layout = attr_int(attrs, "layout", 0);
  check(layout == 0 || layout == 1, "layout must be 0 or 1, got {}", layout);
  s.batch_first = layout == 1;
  s.seq = s.batch_first ? x[1] : x[0];
  s.batch = s.batch_first ? x[0] : x[1];
  s.input = x[2];
  s.hidden = attr_int(attrs, "hidden_size", r[2]);
  check(s.hidden == r[2], "hidden_size {} differs from R's last dim {}", s.hidden, r[2]);
  if (has_attr(attrs, "clip")) {
    s.clip = attr_float(attrs, "clip", 0);
    check(s.clip > 0, "clip must be positive, got {}", s.clip);
  }
  s.activations = activations(attrs, info, s.directions);
  return s;
}

void add_opaque_rnn_ops(std::vector<OpSchema>& table) {
  table.push_back({.name = "RNN",
                   .min_inputs = 3,
                   .max_inputs = 6,
                   .max_outputs = 2,
                   .infer = recurrent<0>,
                   .category = Category::Opaque});
  table.push_back({.name = "GRU",
                   .min_inputs = 3,
                   .max_inputs = 6,
                   .max_outputs = 2,
                   .infer = recurrent<1>,
                   .category = Category::Opaque});
  table.push_back({.name = "LSTM",
                   .min_inputs = 3,
                   .max_inputs = 8,
                   .max_outputs = 3,
                   .infer = recurrent<2>,
                   .category = Category::Opaque});
}

}  // namespace orch::ops
