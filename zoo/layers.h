// Layers for the zoo builders: each helper emits the ONNX ops that PyTorch's exporter (opset 17,
// eval mode) writes for the corresponding torch.nn module, with deterministic random weights.
//
//   Net net("model", seed);
//   ValueId x = net.input("input", {1, 3, 224, 224});
//   x = net.relu(net.conv(x, 32, {.kernel = 3, .stride = 2, .pad = 1}));
//   net.output(x, "output");
//   return net.finish();
//
// BatchNormalization after a convolution is folded into the convolution's bias, as the exporter
// does in eval mode, so a "Conv + BN" layer is one Conv with bias.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/builder.h"

namespace orch::zoo {

/// Deterministic uniform floats (splitmix64), identical on every platform and run.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  /// Uniform in [lo, hi).
  float uniform(float lo, float hi);

 private:
  uint64_t state_;
};

/// A square 2-D convolution's geometry.
struct ConvSpec {
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t pad = 0;
  int64_t groups = 1;
  bool bias = true;
};

/// Builds a model's graph layer by layer; parameters are named by the current scope.
class Net {
 public:
  Net(const std::string& graph_name, uint64_t seed) : builder_(graph_), rng_(seed) {
    graph_.name = graph_name;
  }
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;

  /// Names parameters created while it lives "<outer>.<name>.<param>".
  class Scope {
   public:
    Scope(Net& net, const std::string& name);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Net& net_;
    size_t saved_;
  };
  Scope scope(const std::string& name) { return Scope(*this, name); }

  /// A copy: references into the graph dangle once more values are added.
  Shape shape(ValueId v) const { return builder_.type(v).shape; }

  ValueId input(const std::string& name, Shape shape);
  /// Marks a graph output; `finish` gives it its name.
  void output(ValueId v, std::string name);
  /// The graph with the outputs renamed as given to `output` (node outputs otherwise get
  /// generated names). The Net must not be used afterwards.
  Graph finish();

  /// A parameter uniform in [-bound, bound) (PyTorch's default init when bound = 1/sqrt(fan_in)).
  ValueId weight(const std::string& name, Shape shape, float bound);
  /// A parameter uniform in [center - spread, center + spread) (norm scales and shifts).
  ValueId param_near(const std::string& name, Shape shape, float center, float spread);
  /// Constants that are not parameters: shapes, indices, scalars.
  ValueId ints(std::vector<int64_t> values);
  ValueId scalar(float value);

  ValueId op(const std::string& op, std::vector<ValueId> inputs, Attributes attrs = {}) {
    return builder_.op(op, std::move(inputs), std::move(attrs));
  }

  /// nn.Conv2d (NCHW); fan-in-scaled weights.
  ValueId conv(ValueId x, int64_t out_channels, ConvSpec spec, const std::string& name = "conv");
  /// nn.Linear over the last axis: MatMul + Add (Gemm with transB for a rank-2 input and a bias,
  /// as the exporter writes it).
  ValueId linear(ValueId x, int64_t out_features, bool bias = true,
                 const std::string& name = "linear");
  /// nn.LayerNorm over the last axis as one LayerNormalization op.
  ValueId layer_norm(ValueId x, float epsilon, const std::string& name = "norm");
  /// nn.LayerNorm as the exporter wrote it before opset 17: ReduceMean, Sub, Pow, ReduceMean,
  /// Add, Sqrt, Div, Mul, Add.
  ValueId layer_norm_expanded(ValueId x, float epsilon, const std::string& name = "norm");
  /// nn.InstanceNorm2d(affine=True).
  ValueId instance_norm(ValueId x, float epsilon, const std::string& name = "norm");

  ValueId relu(ValueId x) { return op("Relu", {x}); }
  ValueId sigmoid(ValueId x) { return op("Sigmoid", {x}); }
  ValueId leaky_relu(ValueId x, float alpha);
  ValueId hard_swish(ValueId x) { return op("HardSwish", {x}); }
  /// nn.SiLU: x * Sigmoid(x).
  ValueId silu(ValueId x);
  /// x * tanh(softplus(x)), the form of Mish below opset 18.
  ValueId mish(ValueId x);
  /// nn.GELU (exact): x * 0.5 * (1 + erf(x / sqrt(2))), the exporter's Div/Erf/Add/Mul/Mul.
  ValueId gelu(ValueId x);

  ValueId add(ValueId a, ValueId b) { return op("Add", {a, b}); }
  ValueId mul(ValueId a, ValueId b) { return op("Mul", {a, b}); }
  ValueId div(ValueId a, ValueId b) { return op("Div", {a, b}); }
  ValueId concat(std::vector<ValueId> values, int64_t axis);
  ValueId reshape(ValueId x, std::vector<int64_t> shape);
  ValueId transpose(ValueId x, std::vector<int64_t> perm);
  /// Slice with constant starts/ends/axes/steps.
  ValueId slice(ValueId x, std::vector<int64_t> starts, std::vector<int64_t> ends,
                std::vector<int64_t> axes, std::vector<int64_t> steps);
  /// x[index] along `axis` with a scalar index (tensor unbinding), dropping the axis.
  ValueId gather(ValueId x, int64_t index, int64_t axis);
  ValueId max_pool(ValueId x, int64_t kernel, int64_t stride, int64_t pad);
  /// F.interpolate(scale_factor=scale, mode="nearest").
  ValueId upsample_nearest(ValueId x, float scale);
  /// F.interpolate(size=(h, w), mode="bilinear", align_corners=False).
  ValueId resize_bilinear(ValueId x, int64_t height, int64_t width);

  /// Multi-head attention core on q, k, v of shape [B, heads, N, d] (k and v may have another
  /// length): Softmax(q k^T * scale) v, returned as [B, N, heads * d].
  ValueId attention(ValueId q, ValueId k, ValueId v);
  /// [B, N, heads * d] -> [B, heads, N, d] (Reshape + Transpose).
  ValueId split_heads(ValueId x, int64_t heads);

 private:
  std::string param_name(const std::string& name);

  Graph graph_;
  Builder builder_;
  Rng rng_;
  std::string prefix_;
  std::vector<std::string> output_names_;
};

}  // namespace orch::zoo
