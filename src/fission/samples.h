// Random op instances for the rule test (each rule's `sample`): shapes, attributes and constant
// inputs drawn within the op's valid domain, edge cases included (size-1 dims, negative axes,
// broadcasting).
#pragma once

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace orch::fission::sample {

using Rng = std::mt19937;

/// One input of a sampled op: a graph input of `type`, a constant, or absent.
struct Arg {
  TensorType type;
  Tensor constant;  // defined: a constant input
  bool absent = false;
  static Arg input(DType dtype, Shape shape) { return {{dtype, std::move(shape)}, {}, false}; }
  static Arg constant_of(Tensor t) { return {{t.dtype(), t.shape()}, t, false}; }
  static Arg none() { return {{}, {}, true}; }
};

/// A graph with one node `op` over `args`; every output is a graph output.
Graph make(const std::string& op, const std::vector<Arg>& args, Attributes attrs = {},
           int num_outputs = 1);

int64_t integer(Rng& rng, int64_t lo, int64_t hi);
bool coin(Rng& rng);
/// A shape of rank in [min_rank, max_rank] with dims in [1, max_dim].
Shape shape(Rng& rng, int min_rank, int max_rank, int64_t max_dim = 5);
/// A shape that broadcasts (numpy rules) to `s`: leading dims dropped, some dims set to 1.
Shape broadcastable(Rng& rng, const Shape& s);
/// An axis of a rank-`rank` tensor, negative half of the time.
int64_t axis(Rng& rng, int64_t rank);
/// A rank-1 i64 constant.
Tensor ints(const std::vector<int64_t>& values);
/// A constant f32 tensor of uniform values in [lo, hi).
Tensor floats(Rng& rng, const Shape& shape, double lo, double hi);
/// A float dtype for a sample (mostly f32).
DType float_type(Rng& rng);

}  // namespace orch::fission::sample
