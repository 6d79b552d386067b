// Module validation against the interpreter: a comparison may flip where the module's inputs are
// within rounding of its threshold, a few times in a large tensor; floats keep their tolerance.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "driver/optimize.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "ir/text_format.h"

namespace orch::driver {
namespace {

// One kernel writes the comparison, a second the LeakyReLU it selects.
constexpr const char* kLeakyRelu = R"(graph leaky(%x: f32[200000]) {
  const %zero = f32[]{0}
  const %alpha = f32[]{0.1}
  %lt: bool[200000] = prim.Elementwise(%x, %zero) {fn = "less"}
  %scaled: f32[200000] = prim.Elementwise(%x, %alpha) {fn = "mul"}
  %y: f32[200000] = prim.Elementwise(%lt, %scaled, %x) {fn = "where"}
  return %y
}
)";

// Validates a module that computes what the interpreter does, except that `corrupt` edits the
// values of kernel `which` (0: the comparison, 1: the LeakyReLU) before validation sees them.
void validate(const std::function<void(Tensor&)>& corrupt, int which) {
  Graph g = parse_graph(kLeakyRelu);
  std::vector<Tensor> inputs = interp::random_inputs(g, 1);
  Graph all = g;
  all.set_outputs({g.find_value("lt"), g.find_value("y")});
  std::vector<Tensor> values = interp::interpret(all, inputs);
  std::vector<KernelSpec> kernels = {
      {.name = "k0", .backend = "halide", .outputs = {{"lt", g.value(g.find_value("lt")).type}}},
      {.name = "k1", .backend = "halide", .outputs = {{"y", g.value(g.find_value("y")).type}}}};
  std::vector<TensorSpec> outputs = {{"y", g.value(g.find_value("y")).type}};
  check_module_run("test", g, inputs, kernels, outputs, [&](const KernelHook& hook) {
    corrupt(values[static_cast<size_t>(which)]);
    hook(0, std::span<const Tensor>(&values[0], 1));
    hook(1, std::span<const Tensor>(&values[1], 1));
    return std::vector<Tensor>{values[1]};
  });
}

std::string failure(const std::function<void(Tensor&)>& corrupt, int which) {
  try {
    validate(corrupt, which);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Validate, AFewFlippedComparisonsPass) {
  // 2 of 200,000 elements: the allowed fraction (1e-5) of them.
  auto flip_two = [](Tensor& lt) {
    lt.set(7, 1 - lt.get(7));
    lt.set(9, 1 - lt.get(9));
  };
  EXPECT_EQ(failure(flip_two, 0), "");
}

TEST(Validate, AWrongComparisonFails) {
  std::string message = failure(
      [](Tensor& lt) {
        for (int64_t i = 0; i < 100; i += 2) lt.set(i, 1 - lt.get(i));
      },
      0);
  EXPECT_NE(message.find("kernel k0 writes 'lt', which differs from the interpreter: element 0"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("(over 2 of 200000 boolean elements differ)"), std::string::npos)
      << message;
}

TEST(Validate, AFloatOutsideTheToleranceFails) {
  std::string message = failure([](Tensor& y) { y.set(5, y.get(5) + 1); }, 1);
  EXPECT_NE(message.find("kernel k1 writes 'y', which differs from the interpreter: element 5"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace orch::driver
