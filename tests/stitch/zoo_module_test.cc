// Every zoo model at a small shape through the whole optimizer (fission, rewrite, analytic tuning,
// stitch with kernel-by-kernel validation), then the module loaded and run on fresh random inputs
// and compared with the interpreter on the operator graph. Prints each model's numbers and times
// (the full shapes are the benchmark's). ORCH_STITCH_ZOO=name:size runs one model at another size.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "driver/optimize.h"
#include "driver/pipeline.h"
#include "driver/tune.h"
#include "fission/fission.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/verifier.h"
#include "orch/module.h"
#include "rewrite/rewrite.h"
#include "stitch_test_util.h"
#include "zoo/zoo.h"

namespace orch::stitch_test {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct ZooCase {
  std::string_view name;
  int64_t size;
};

// Images at the smallest legal resolution (the network's stride); sequences at 4 tokens, the
// fewest that keep attention's softmax and the reductions non-trivial (1 is legal but degenerate).
constexpr ZooCase kCases[] = {
    {"candy", 4},   {"segformer-b0", 32}, {"efficientvit-b1", 32}, {"yolox-nano", 32},
    {"yolov4", 32}, {"vit-b16-layer", 4}, {"bert-base-layer", 4},  {"transformer-tiny", 4},
};

// gtest prints a case by its model and size.
void PrintTo(const ZooCase& c, std::ostream* os) {
  *os << c.name << ":" << c.size;
}

// The case for a model, or ORCH_STITCH_ZOO's "name:size" when it names that model.
int64_t case_size(const ZooCase& c) {
  const char* env = std::getenv("ORCH_STITCH_ZOO");
  std::string spec = env ? env : "";
  size_t colon = spec.find(':');
  if (colon != std::string::npos && spec.substr(0, colon) == c.name)
    return std::stoll(spec.substr(colon + 1));
  return c.size;
}

// "" when `got` matches `want` within the validation tolerance (optimize.h), else the element.
std::string difference(const Tensor& want, const Tensor& got) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape())
    return fmt::format("type {} instead of {}", format_type({got.dtype(), got.shape()}),
                       format_type({want.dtype(), want.shape()}));
  for (int64_t i = 0; i < want.numel(); ++i) {
    double a = want.get(i), b = got.get(i);
    if (!(std::abs(a - b) <= 1e-4 + 1e-3 * std::abs(a)))
      return fmt::format("element {}: interpreter {}, module {}", i, a, b);
  }
  return "";
}

class ZooModule : public testing::TestWithParam<ZooCase> {};

TEST_P(ZooModule, OptimizesValidatesAndMatchesTheInterpreter) {
  const ZooCase& c = GetParam();
  std::string name(c.name);
  auto start = Clock::now();
  Graph operators = zoo::build_model(name, {.size = case_size(c)});
  // optimize_model's steps on the built graph: it reads a model file, and writing the weights out
  // to read them back (yolov4: 64M parameters) would cost more than the rest.
  Graph primitives =
      rewrite::rewrite(fission::fission(operators), driver::default_rewrite_options());
  verify(primitives);
  double pipeline_s = seconds_since(start);

  auto tune_start = Clock::now();
  driver::TuneOptions tune;
  tune.analytic = true;  // checks code generation; the costs are estimates
  // Any plan checks it: YOLOX-Nano and YOLOv4 would spend the default 60 s of solving on
  // parts CBC does not prove optimal.
  tune.solve_time_limit_s = 10;
  driver::TunedModel tuned = driver::tune_model(std::move(primitives), tune);
  double tune_s = seconds_since(tune_start);

  std::string dir = temp_dir("zoo_" + name);
  auto build_start = Clock::now();
  driver::OptimizeOptions build;  // validation on: every kernel against the interpreter
  stitch::StitchResult r =
      driver::build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, dir, build);
  double build_s = seconds_since(build_start);
  EXPECT_EQ(r.kernels, static_cast<int>(tuned.plan.kernels.size()));

  auto run_start = Clock::now();
  Module module = Module::load(dir);
  std::vector<Tensor> inputs = interp::random_inputs(operators, 7);
  ASSERT_EQ(module.inputs().size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(module.inputs()[i].name, operators.value(operators.inputs()[i]).name);
  std::vector<Tensor> outputs = module.run(inputs);
  std::vector<Tensor> expected = interp::interpret(operators, inputs);
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < outputs.size(); ++i)
    EXPECT_EQ(difference(expected[i], outputs[i]), "") << "output " << i;
  double run_s = seconds_since(run_start);
  std::filesystem::remove_all(dir);
  fmt::print(
      "{} at size {}: {} primitives, {} kernels ({} halide, {} dnnl, {} reference), arena {} B "
      "of {} B; fission+rewrite {:.1f} s, tune {:.1f} s, stitch+validate {:.1f} s, run+compare "
      "{:.1f} s, total {:.1f} s\n",
      name, case_size(c), tuned.graph.num_nodes(), r.kernels, r.halide_kernels, r.dnnl_kernels,
      r.reference_kernels, r.arena_bytes, r.intermediate_bytes, pipeline_s, tune_s, build_s, run_s,
      seconds_since(start));
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooModule, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<ZooCase>& info) {
                           std::string name(info.param.name);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(ZooModuleCases, EveryZooModelHasALegalCase) {
  for (const zoo::ModelInfo& model : zoo::all_models()) {
    auto it = std::find_if(std::begin(kCases), std::end(kCases),
                           [&](const ZooCase& c) { return c.name == model.name; });
    ASSERT_NE(it, std::end(kCases)) << model.name << " has no test case";
    EXPECT_EQ(it->size % model.size_multiple, 0) << model.name;
  }
  EXPECT_EQ(std::size(kCases), zoo::all_models().size());
}

}  // namespace
}  // namespace orch::stitch_test
