// Private to src/rewrite: small helpers shared by the rule families and their samplers.
#pragma once

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ir/builder.h"
#include "rewrite/rule.h"

namespace orch::rewrite {

/// prim.Elementwise's `fn`, "" for other ops.
std::string_view ew_fn(const Node& node);
/// Whether `node` is prim.Elementwise with function `fn`.
bool is_ew(const Node& node, std::string_view fn);
/// Whether every element of `t` equals `v`.
bool all_equal(const Tensor& t, double v);
/// A tensor of `type` filled with `v`.
Tensor filled(const TensorType& type, double v);
/// Runs `op` on constant inputs with the interpreter (types from the op's shape rule).
Tensor evaluate(const std::string& op, const Attributes& attrs, std::vector<Tensor> inputs);

/// Samplers: a shape of `rank` dims in [lo, hi].
Shape random_shape(std::mt19937& rng, int rank, int64_t lo = 1, int64_t hi = 5);
int64_t random_int(std::mt19937& rng, int64_t lo, int64_t hi);
/// A constant of `type` with random floats in [-1, 1).
ValueId random_constant(Builder& b, std::mt19937& rng, const TensorType& type);

}  // namespace orch::rewrite
