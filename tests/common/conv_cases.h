// Convolution cases shared by the backends' conv tests (oneDNN, Halide, CUDA): a case, its
// attributes and operand shapes, random valid cases (groups, depthwise, dilation, strides,
// asymmetric pads, 1-D to 3-D), and the graph of one.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "interp/random_inputs.h"
#include "ir/attribute.h"
#include "ir/builder.h"
#include "ir/tensor.h"

namespace orch::conv_cases {

using Ints = std::vector<int64_t>;

struct ConvCase {
  int64_t n = 1, c = 4, m = 4, group = 1;
  Ints spatial = {8, 8}, kernel = {3, 3}, strides = {1, 1}, dilations = {1, 1}, pads = {1, 1, 1, 1},
       output_padding = {};
  bool constant_weights = true;
};

inline Attributes conv_attrs(const ConvCase& cc, bool transposed = false) {
  Attributes a = {
      {"strides", cc.strides}, {"dilations", cc.dilations}, {"pads", cc.pads}, {"group", cc.group}};
  if (transposed)
    a["output_padding"] =
        cc.output_padding.empty() ? Ints(cc.spatial.size(), 0) : cc.output_padding;
  return a;
}

inline Shape input_shape(const ConvCase& cc) {
  Shape x = {cc.n, cc.c};
  x.insert(x.end(), cc.spatial.begin(), cc.spatial.end());
  return x;
}

inline Shape weight_shape(const ConvCase& cc, bool transposed) {
  Shape w = transposed ? Shape{cc.c, cc.m / cc.group} : Shape{cc.m, cc.c / cc.group};
  w.insert(w.end(), cc.kernel.begin(), cc.kernel.end());
  return w;
}

/// A random valid convolution of `rank` spatial dims (the output has at least one element).
inline ConvCase random_case(std::mt19937& rng, size_t rank, bool transposed) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  ConvCase cc;
  int64_t per_group_c = pick(1, 6), per_group_m = pick(1, 6);
  cc.group = pick(0, 2) == 0 ? 1 : pick(2, 4);
  cc.n = pick(1, 2);
  cc.c = per_group_c * cc.group;
  cc.m = per_group_m * cc.group;
  cc.constant_weights = pick(0, 1) == 1;
  cc.spatial.clear(), cc.kernel.clear(), cc.strides.clear(), cc.dilations.clear();
  Ints begin, end;
  for (size_t s = 0; s < rank; ++s) {
    cc.kernel.push_back(pick(1, 3));
    cc.strides.push_back(pick(1, 2));
    cc.dilations.push_back(pick(1, 2));
    int64_t extent = (cc.kernel[s] - 1) * cc.dilations[s] + 1;
    cc.spatial.push_back(pick(extent, extent + (rank == 3 ? 3 : 9)));
    begin.push_back(pick(0, extent - 1));
    end.push_back(pick(0, extent - 1));
    if (transposed) cc.output_padding.push_back(pick(0, cc.strides[s] - 1));
  }
  cc.pads = begin;
  cc.pads.insert(cc.pads.end(), end.begin(), end.end());
  return cc;
}

/// A graph computing one convolution of `cc` (weights constant or an input, as `cc` says), plus
/// bias and ReLU as fission writes them (reshape + broadcast + add, relu) when `epilogue`.
inline Graph conv_graph(const ConvCase& cc, bool transposed, uint64_t seed, bool epilogue = false) {
  Graph g;
  Builder b(g);
  const Shape w = weight_shape(cc, transposed);
  ValueId xv = b.input("x", {DType::f32, input_shape(cc)});
  ValueId wv = cc.constant_weights ? b.constant(interp::random_tensor({DType::f32, w}, seed))
                                   : b.input("w", {DType::f32, w});
  ValueId y =
      b.op(transposed ? "prim.ConvTranspose" : "prim.Conv", {xv, wv}, conv_attrs(cc, transposed));
  if (epilogue) {
    Shape ys = g.value(y).type.shape;
    Shape ones(ys.size(), 1);
    ones[1] = ys[1];
    ValueId bias = b.constant(interp::random_tensor({DType::f32, {ys[1]}}, seed + 1));
    bias = b.op("prim.Reshape", {bias}, {{"shape", ones}});
    bias = b.op("prim.Broadcast", {bias}, {{"shape", ys}});
    y = b.op("prim.Elementwise", {y, bias}, {{"fn", std::string("add")}});
    y = b.op("prim.Elementwise", {y}, {{"fn", std::string("relu")}});
  }
  b.output(y);
  return g;
}

}  // namespace orch::conv_cases
