// Helpers shared by the interpreter's op tests: run one op over constant inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/builder.h"
#include "ir/error.h"

namespace orch::op_test {

using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

/// Tensor literals for tests.
inline Tensor f32(Shape shape, std::vector<double> values) {
  return Tensor::from_doubles(DType::f32, std::move(shape), values);
}
inline Tensor ints(DType dtype, Shape shape, std::vector<int64_t> values) {
  return Tensor::from_ints(dtype, std::move(shape), values);
}

/// Builds a one-node graph over constant inputs (an undefined Tensor is an absent optional
/// input), interprets it and returns every output.
inline std::vector<Tensor> run_all(const std::string& op, std::vector<Tensor> inputs,
                                   Attributes attrs = {}, int num_outputs = 1) {
  Graph g;
  Builder b(g);
  std::vector<ValueId> ids;
  for (Tensor& t : inputs) ids.push_back(t.defined() ? b.constant(std::move(t)) : kNoValue);
  for (ValueId v : b.op_multi(op, ids, std::move(attrs), num_outputs)) b.output(v);
  return interp::interpret(g, {});
}

/// The single output of `op`.
inline Tensor run(const std::string& op, std::vector<Tensor> inputs, Attributes attrs = {}) {
  return run_all(op, std::move(inputs), std::move(attrs), 1)[0];
}

/// The message of the Error that running `op` throws, or "" when none does.
inline std::string error_of(const std::string& op, std::vector<Tensor> inputs,
                            Attributes attrs = {}, int num_outputs = 1) {
  try {
    run_all(op, std::move(inputs), std::move(attrs), num_outputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// Expects `t`'s values within `tol` of `expected`, NaN where it is NaN.
inline void expect_near(const Tensor& t, const Doubles& expected, double tol = 1e-6) {
  Doubles got = t.to_doubles();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
    else
      EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
  }
}

}  // namespace orch::op_test
