// Einsum equations, parsed once for the shape rule and the kernel.
//
//   "bij,bjk->bik"  explicit output          "ij,jk"  implicit output: "ik" (letters used once,
//   "ii->i"         diagonal                                          sorted)
//   "...ij->...ji"  ellipsis: the leading dims, broadcast across inputs like numpy
//
// Every letter and every ellipsis dim becomes a label id; a label absent from the output is
// summed over, and a label repeated within one operand walks that operand's diagonal.
#pragma once

#include <string_view>
#include <vector>

#include "ir/tensor.h"

namespace orch::ops {

struct EinsumSpec {
  /// Label id of each dim of each operand.
  std::vector<std::vector<int>> operands;
  /// Label id of each output dim.
  std::vector<int> output;
  /// Extent of each label id.
  std::vector<int64_t> sizes;
};

/// Parses `equation` against the operand shapes; throws naming the problem.
EinsumSpec parse_einsum(std::string_view equation, const std::vector<Shape>& shapes);

}  // namespace orch::ops
