#include "driver/conformance.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "driver/conformance_internal.h"
#include "driver/pipeline.h"
#include "fission/fission.h"
#include "frontend/model_ops.h"
#include "frontend/onnx_import.h"
#include "frontend/tensor_proto.h"
#include "interp/interpreter.h"
#include "ir/close.h"
#include "ir/error.h"
#include "ir/verifier.h"
#include "rewrite/rewrite.h"

namespace orch::driver {
namespace fs = std::filesystem;
using conformance_detail::as_declared;

Tensor conformance_detail::as_declared(const Tensor& t, DType declared) {
  if (t.dtype() == DType::u16 && declared == DType::bf16)
    return Tensor::wrap(DType::bf16, t.shape(), std::make_shared<Tensor>(t), t.bytes());
  return t;
}

namespace {

// The numbered files `prefix_0.pb`, `prefix_1.pb`, ... of a data set, in order.
std::vector<Tensor> read_numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<Tensor> tensors;
  for (int i = 0;; ++i) {
    fs::path file = dir / fmt::format("{}_{}.pb", prefix, i);
    if (!fs::exists(file)) break;
    tensors.push_back(frontend::read_tensor_pb_file(file.string()));
  }
  return tensors;
}

// Tests whose shipped expectations orch deliberately does not follow, with the reason. They are
// reported as skipped, never hidden.
struct KnownDifference {
  std::string_view test;
  std::string_view reason;
};

constexpr KnownDifference kKnownDifferences[] = {
    {"test_cast_FLOAT_to_BFLOAT16",
     "expected outputs were made by truncating to bfloat16 (onnx 1.12); ONNX now specifies, and "
     "ONNX Runtime does, round to nearest even, as orch does"},
    {"test_castlike_FLOAT_to_BFLOAT16",
     "expected outputs were made by truncating to bfloat16 (onnx 1.12); orch rounds to nearest "
     "even"},
    {"test_castlike_FLOAT_to_BFLOAT16_expanded",
     "expected outputs were made by truncating to bfloat16 (onnx 1.12); orch rounds to nearest "
     "even"},
};

// Some shipped tests feed inputs whose shapes contradict the model's declared static shape;
// no implementation that checks input shapes can run them.
void check_declared_shapes(const std::vector<frontend::DeclaredInput>& declared,
                           const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < declared.size(); ++i) {
    const auto& dims = declared[i].dims;
    bool contradicts = dims.size() != inputs[i].shape().size();
    for (size_t d = 0; !contradicts && d < dims.size(); ++d)
      contradicts = !dims[d].empty() && std::isdigit(static_cast<unsigned char>(dims[d][0])) &&
                    std::stoll(dims[d]) != inputs[i].shape()[d];
    if (contradicts)
      unsupported("the test data gives input '{}' the shape {}, but the model declares [{}]",
                  declared[i].name, format_shape(inputs[i].shape()), fmt::join(dims, ","));
  }
}

std::vector<fs::path> data_sets(const fs::path& test_dir) {
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(test_dir))
    if (entry.is_directory() && entry.path().filename().string().starts_with("test_data_set_"))
      sets.push_back(entry.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

// Runs one data set; returns "" on success or what went wrong.
std::string run_data_set(const fs::path& model, const fs::path& set,
                         const ConformanceOptions& options) {
  std::vector<Tensor> inputs = read_numbered(set, "input");
  std::vector<Tensor> expected = read_numbered(set, "output");
  auto declared = frontend::declared_inputs(model.string());
  check(declared.size() == inputs.size(), "{} has {} inputs, the model declares {}",
        set.filename().string(), inputs.size(), declared.size());
  check_declared_shapes(declared, inputs);
  frontend::ImportOptions import_options;
  // The test data binds symbolic dims, as a user's --shape would.
  for (size_t i = 0; i < declared.size(); ++i)
    import_options.shapes[declared[i].name] = inputs[i].shape();
  for (size_t i = 0; i < declared.size(); ++i)
    import_options.known_inputs.emplace(
        declared[i].name,
        as_declared(inputs[i], parse_dtype(declared[i].dtype).value_or(inputs[i].dtype())));
  Graph graph = frontend::import_onnx_file(model.string(), import_options);
  if (options.through_fission || options.through_rewrite) graph = fission::fission(graph);
  if (options.through_rewrite) {
    graph = rewrite::rewrite(graph, default_rewrite_options());
    verify(graph);
  }

  std::vector<Tensor> feed;
  for (ValueId in : graph.inputs()) {
    const std::string& name = graph.value(in).name;
    auto it = import_options.known_inputs.find(name);
    check(it != import_options.known_inputs.end(), "no test data for input '{}'", name);
    feed.push_back(it->second);
  }
  std::vector<Tensor> actual = interp::interpret(graph, feed);
  check(actual.size() == expected.size(), "the model gives {} outputs, the test expects {}",
        actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    std::string diff = compare_tensors(actual[i], as_declared(expected[i], actual[i].dtype()),
                                       options.rtol, options.atol);
    if (!diff.empty())
      return fmt::format("{}: output {} ('{}'): {}", set.filename().string(), i,
                         graph.value(graph.outputs()[i]).name, diff);
  }
  if (options.compiled) {
    std::string problem = conformance_detail::run_compiled_data_set(model.string(), import_options,
                                                                    expected, options);
    if (!problem.empty()) return fmt::format("{}: {}", set.filename().string(), problem);
  }
  return "";
}

CaseResult run_case(const std::string& test_dir, const ConformanceOptions& options) {
  CaseResult result;
  fs::path dir(test_dir);
  result.name = dir.filename().string();
  fs::path model = dir / "model.onnx";
  try {
    result.ops = frontend::model_op_types(model.string());
    for (const KnownDifference& known : kKnownDifferences)
      if (known.test == result.name) unsupported("known difference: {}", known.reason);
    auto sets = data_sets(dir);
    check(!sets.empty(), "no test_data_set_* folder");
    for (const fs::path& set : sets) {
      std::string problem = run_data_set(model, set, options);
      if (!problem.empty()) {
        result.status = CaseStatus::failed;
        result.reason = problem;
        return result;
      }
    }
  } catch (const Error& e) {
    result.status = e.kind() == Error::Kind::unsupported ? CaseStatus::skipped : CaseStatus::failed;
    result.reason = e.what();
  } catch (const std::exception& e) {
    result.status = CaseStatus::failed;
    result.reason = fmt::format("internal error: {}", e.what());
  }
  return result;
}

}  // namespace

std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol,
                            double atol) {
  if (actual.dtype() != expected.dtype())
    return fmt::format("dtype {} != expected {}", dtype_name(actual.dtype()),
                       dtype_name(expected.dtype()));
  if (actual.shape() != expected.shape())
    return fmt::format("shape {} != expected {}", format_shape(actual.shape()),
                       format_shape(expected.shape()));
  bool exact = !is_float(actual.dtype());
  for (int64_t i = 0; i < actual.numel(); ++i) {
    bool ok;
    if (exact) {
      ok = actual.get_int(i) == expected.get_int(i);
    } else {
      ok = close_enough(actual.get(i), expected.get(i), rtol, atol);
    }
    if (!ok) return fmt::format("element {} is {}, expected {}", i, actual.get(i), expected.get(i));
  }
  return "";
}

CaseResult run_conformance_case(const std::string& test_dir, const ConformanceOptions& options) {
  auto start = std::chrono::steady_clock::now();
  CaseResult result = run_case(test_dir, options);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::vector<std::string> conformance_tests(const std::string& dir, const std::string& filter) {
  check(fs::is_directory(dir), "'{}' is not a directory", dir);
  std::vector<std::string> tests;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx") &&
        entry.path().filename().string().find(filter) != std::string::npos)
      tests.push_back(entry.path().string());
  std::sort(tests.begin(), tests.end());
  return tests;
}

std::vector<CaseResult> run_conformance(const std::string& dir, const ConformanceOptions& options,
                                        const std::function<void(const CaseResult&)>& on_result) {
  std::vector<std::string> tests = conformance_tests(dir, options.filter);
  // Compiled runs load a kernel library per test and may crash in generated code: a process each.
  if (options.compiled || options.jobs > 1)
    return conformance_detail::run_in_processes(tests, options, on_result);
  std::vector<CaseResult> results;
  for (const std::string& test : tests) {
    results.push_back(run_conformance_case(test, options));
    if (on_result) on_result(results.back());
  }
  return results;
}

}  // namespace orch::driver
