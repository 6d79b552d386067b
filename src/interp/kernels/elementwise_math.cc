// Floating-point math and activations: each element is computed in double and rounded to the
// output dtype once. (Erf and Shrink also accept integers: the result is truncated on store.)
#include <algorithm>
#include <cmath>
#include <numbers>

#include "interp/kernels/elementwise_parts.h"
#include "ir/error.h"

namespace orch::interp {
namespace {

using MathFn = double (*)(double);

double sigmoid(double x) {
  // Two forms so that exp never overflows.
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}

double softplus(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

double hard_sigmoid(double x, double alpha, double beta) {
  return std::clamp(alpha * x + beta, 0.0, 1.0);
}

const std::pair<std::string_view, MathFn> kMath[] = {
    {"Sqrt", [](double x) { return std::sqrt(x); }},
    {"Exp", [](double x) { return std::exp(x); }},
    {"Log", [](double x) { return std::log(x); }},
    {"Erf", [](double x) { return std::erf(x); }},
    {"Tanh", [](double x) { return std::tanh(x); }},
    {"Sigmoid", sigmoid},
    {"Reciprocal", [](double x) { return 1 / x; }},
    {"Floor", [](double x) { return std::floor(x); }},
    {"Ceil", [](double x) { return std::ceil(x); }},
    // nearbyint in the default rounding mode rounds halves to even, as ONNX Round does.
    {"Round", [](double x) { return std::nearbyint(x); }},
    {"Sin", [](double x) { return std::sin(x); }},
    {"Cos", [](double x) { return std::cos(x); }},
    {"Tan", [](double x) { return std::tan(x); }},
    {"Asin", [](double x) { return std::asin(x); }},
    {"Acos", [](double x) { return std::acos(x); }},
    {"Atan", [](double x) { return std::atan(x); }},
    {"Sinh", [](double x) { return std::sinh(x); }},
    {"Cosh", [](double x) { return std::cosh(x); }},
    {"Asinh", [](double x) { return std::asinh(x); }},
    {"Acosh", [](double x) { return std::acosh(x); }},
    {"Atanh", [](double x) { return std::atanh(x); }},
    {"Softplus", softplus},
    {"Softsign", [](double x) { return x / (1 + std::abs(x)); }},
    {"HardSwish", [](double x) { return x * hard_sigmoid(x, 1.0 / 6, 0.5); }},
    {"Mish", [](double x) { return x * std::tanh(softplus(x)); }},
};

template <class F>
void map_elements(KernelArgs& args, F f) {
  const Tensor& x = args.inputs[0];
  Tensor& out = args.outputs[0];
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, f(x.get(i)));
}

// One kernel for every attribute-free math op: it finds its function by op name.
void math(KernelArgs& args) {
  for (const auto& [name, fn] : kMath)
    if (name == args.op) return map_elements(args, fn);
  fail("no math function for '{}'", args.op);
}

double attr(const KernelArgs& args, std::string_view name, float fallback) {
  return attr_float(args.attrs, name, fallback);
}

void leaky_relu(KernelArgs& args) {
  double alpha = attr(args, "alpha", 0.01f);
  map_elements(args, [&](double x) { return x < 0 ? alpha * x : x; });
}

void elu(KernelArgs& args) {
  double alpha = attr(args, "alpha", 1.0f);
  map_elements(args, [&](double x) { return x < 0 ? alpha * std::expm1(x) : x; });
}

void selu(KernelArgs& args) {
  double alpha = attr(args, "alpha", 1.67326319217681884765625f);
  double gamma = attr(args, "gamma", 1.05070102214813232421875f);
  map_elements(args, [&](double x) { return gamma * (x <= 0 ? alpha * std::expm1(x) : x); });
}

void celu(KernelArgs& args) {
  double alpha = attr(args, "alpha", 1.0f);
  map_elements(args, [&](double x) {
    return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));
  });
}

void hard_sigmoid_kernel(KernelArgs& args) {
  double alpha = attr(args, "alpha", 0.2f);
  double beta = attr(args, "beta", 0.5f);
  map_elements(args, [&](double x) { return hard_sigmoid(x, alpha, beta); });
}

void thresholded_relu(KernelArgs& args) {
  double alpha = attr(args, "alpha", 1.0f);
  map_elements(args, [&](double x) { return x > alpha ? x : 0; });
}

void shrink(KernelArgs& args) {
  double bias = attr(args, "bias", 0.0f);
  double lambd = attr(args, "lambd", 0.5f);
  map_elements(args, [&](double x) { return x < -lambd ? x + bias : x > lambd ? x - bias : 0; });
}

void gelu(KernelArgs& args) {
  if (attr_string(args.attrs, "approximate", "none") == "tanh") {
    double k = std::sqrt(2 / std::numbers::pi);
    map_elements(
        args, [&](double x) { return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x))); });
  } else {
    map_elements(args, [](double x) { return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2)); });
  }
}

}  // namespace

void add_elementwise_math_kernels(KernelTable& table) {
  for (const auto& entry : kMath) table.emplace_back(entry.first, math);
  table.insert(table.end(), {{"LeakyRelu", leaky_relu},
                             {"Elu", elu},
                             {"Selu", selu},
                             {"Celu", celu},
                             {"HardSigmoid", hard_sigmoid_kernel},
                             {"ThresholdedRelu", thresholded_relu},
                             {"Shrink", shrink},
                             {"Gelu", gelu}});
}

}  // namespace orch::interp
