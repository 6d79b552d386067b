// Reference kernels of the elementwise ops.
#include <cmath>

#include "interp/kernels/families.h"
#include "interp/kernels/util.h"

namespace orch::interp {
namespace {

template <double (*F)(double, double)>
void binary(KernelArgs& args) {
  Tensor& out = args.outputs[0];
  BroadcastIndex a(args.inputs[0].shape(), out.shape());
  BroadcastIndex b(args.inputs[1].shape(), out.shape());
  for (int64_t i = 0; i < out.numel(); ++i)
    out.set(i, F(args.inputs[0].get(a(i)), args.inputs[1].get(b(i))));
}

template <double (*F)(double)>
void unary(KernelArgs& args) {
  Tensor& out = args.outputs[0];
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, F(args.inputs[0].get(i)));
}

double add(double a, double b) {
  return a + b;
}
double sub(double a, double b) {
  return a - b;
}
double mul(double a, double b) {
  return a * b;
}
double div(double a, double b) {
  return a / b;
}
double relu(double x) {
  return x > 0 ? x : 0;
}
double exp(double x) {
  return std::exp(x);
}
double identity(double x) {
  return x;
}

}  // namespace

void add_elementwise_kernels(KernelTable& table) {
  table.insert(table.end(), {{"Add", binary<add>},
                             {"Sub", binary<sub>},
                             {"Mul", binary<mul>},
                             {"Div", binary<div>},
                             {"Relu", unary<relu>},
                             {"Exp", unary<exp>},
                             {"Identity", unary<identity>}});
}

}  // namespace orch::interp
