// Shared by the stitch and runtime tests: small models planned without measuring anything
// (size-based costs, backend chosen by reject), and built into module directories.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <unistd.h>

#include "candidates/candidates.h"
#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/halide/halide_backend.h"
#include "codegen/kernel.h"
#include "driver/backend_check.h"
#include "driver/optimize.h"
#include "fission/fission.h"
#include "ir/builder.h"
#include "orchestrate/from_candidates.h"
#include "partition/dag.h"

namespace orch::stitch_test {

/// Everything stitch takes.
struct PlannedModel {
  Graph graph;  // the primitive graph
  OrchestrationProblem problem;
  Plan plan;
  std::vector<codegen::KernelChoice> choices;
};

/// dnnl if it accepts the kernel, else halide, else reference (the brief's order).
inline std::string backend_for(const Graph& kernel) {
  if (codegen::dnnl_backend().reject(kernel).empty()) return "dnnl";
  if (codegen::halide_reject(kernel).empty()) return "halide";
  return "reference";
}

/// Fission, kernel identification and a plan over size-based costs: 2 us per kernel plus 1 us
/// per KiB it reads from or writes to memory, so fusing pays.
inline PlannedModel plan_model(const Graph& operators, int max_primitives = 8) {
  PlannedModel m;
  m.graph = fission::fission(operators);
  Dag dag = dag_of(m.graph);
  IdentifyOptions options;
  FeasibilityRules rules;
  rules.max_primitives = max_primitives;
  options.enumeration.feasible = feasibility_of(rules);
  options.enumeration.generable = driver::backend_check(m.graph);
  KernelIdentification kernels = identify_kernels(dag, options);
  std::vector<Candidate> candidates = global_candidates(dag, kernels);
  std::vector<double> costs;
  for (const Candidate& c : candidates) {
    std::vector<NodeId> members(c.primitives.begin(), c.primitives.end());
    std::vector<ValueId> outputs;
    for (int p : c.outputs)
      for (ValueId v : m.graph.node(p).outputs) outputs.push_back(v);
    Graph kernel = codegen::extract_kernel(m.graph, members, outputs);
    double bytes = 0;
    for (ValueId v : kernel.inputs())
      bytes += static_cast<double>(num_elements(kernel.value(v).type.shape) *
                                   dtype_size(kernel.value(v).type.dtype));
    for (ValueId v : kernel.outputs())
      bytes += static_cast<double>(num_elements(kernel.value(v).type.shape) *
                                   dtype_size(kernel.value(v).type.dtype));
    double cost = 2 + bytes / 1024;
    costs.push_back(cost);
    m.choices.push_back({backend_for(kernel), "", cost});
  }
  m.problem = orchestration_problem(dag, kernels, costs);
  m.plan = orchestrate(m.problem);
  return m;
}

/// A fresh directory under the test temp dir.
inline std::string temp_dir(const std::string& name) {
  // Per process: ctest runs each test of a binary as its own process, several at once, and each
  // builds its suite's module in SetUpTestSuite.
  std::filesystem::path dir =
      std::filesystem::path(testing::TempDir()) / ("orch_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

/// x[4,16] -> MatMul(w[16,32]) + bias -> GELU -> LayerNorm-ish (mean/variance/normalize).
inline Graph mlp_model() {
  Graph g;
  g.name = "mlp";
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {4, 16}});
  std::vector<double> wv(16 * 32), bv(32);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.05 * static_cast<double>((i * 7) % 11) - 0.25;
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = 0.01 * static_cast<double>(i);
  ValueId w = b.constant(Tensor::from_doubles(DType::f32, {16, 32}, wv), "w");
  ValueId bias = b.constant(Tensor::from_doubles(DType::f32, {32}, bv), "bias");
  ValueId h = b.op("Add", {b.op("MatMul", {x, w}), bias});
  ValueId half = b.constant(Tensor::scalar(DType::f32, 0.5), "half");
  ValueId one = b.constant(Tensor::scalar(DType::f32, 1.0), "one");
  ValueId inv_sqrt2 = b.constant(Tensor::scalar(DType::f32, 0.70710678), "inv_sqrt2");
  ValueId gelu = b.op("Mul", {b.op("Mul", {h, half}),
                              b.op("Add", {b.op("Erf", {b.op("Mul", {h, inv_sqrt2})}), one})});
  ValueId mean = b.op("ReduceMean", {gelu}, {{"axes", std::vector<int64_t>{-1}}});
  ValueId centered = b.op("Sub", {gelu, mean});
  ValueId var =
      b.op("ReduceMean", {b.op("Mul", {centered, centered})}, {{"axes", std::vector<int64_t>{-1}}});
  ValueId eps = b.constant(Tensor::scalar(DType::f32, 1e-5), "eps");
  ValueId y = b.op("Div", {centered, b.op("Sqrt", {b.op("Add", {var, eps})})});
  b.output(y);
  return g;
}

/// A fixture whose suite builds the MLP into a module directory once (per process) and
/// removes it afterwards: the runtime and C API tests run against it.
class MlpModuleSuite : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new PlannedModel(plan_model(mlp_model()));
    dir_ = new std::string(temp_dir("mlp_module"));
    driver::build_module(model_->graph, model_->problem, model_->plan, model_->choices, *dir_,
                         driver::OptimizeOptions{});
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete model_;
    delete dir_;
  }
  inline static PlannedModel* model_ = nullptr;
  inline static std::string* dir_ = nullptr;
};

}  // namespace orch::stitch_test
