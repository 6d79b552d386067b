#include "zoo/layers.h"

#include <cmath>

#include "ir/error.h"

namespace orch::zoo {

float Rng::uniform(float lo, float hi) {
  state_ += 0x9e3779b97f4a7c15ULL;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  // The top 24 bits make an exact float in [0, 1).
  float unit = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * unit;
}

Net::Scope::Scope(Net& net, const std::string& name) : net_(net), saved_(net.prefix_.size()) {
  if (!net_.prefix_.empty()) net_.prefix_ += '.';
  net_.prefix_ += name;
}

Net::Scope::~Scope() {
  net_.prefix_.resize(saved_);
}

std::string Net::param_name(const std::string& name) {
  std::string full = prefix_.empty() ? name : prefix_ + "." + name;
  return graph_.find_value(full) == kNoValue ? full : graph_.fresh_name(full + "_");
}

ValueId Net::input(const std::string& name, Shape shape) {
  return builder_.input(name, {DType::f32, std::move(shape)});
}

void Net::output(ValueId v, std::string name) {
  builder_.output(v);
  output_names_.push_back(std::move(name));
}

Graph Net::finish() {
  std::vector<std::string> names(graph_.num_values());
  for (size_t i = 0; i < names.size(); ++i) names[i] = graph_.value(static_cast<ValueId>(i)).name;
  for (size_t i = 0; i < output_names_.size(); ++i) names[graph_.outputs()[i]] = output_names_[i];
  // Rebuilding is the way to rename: names are fixed once values exist.
  Graph renamed;
  renamed.name = graph_.name;
  std::vector<ValueId> ids(graph_.num_values(), kNoValue);
  for (size_t i = 0; i < names.size(); ++i) {
    const Value& v = graph_.value(static_cast<ValueId>(i));
    if (v.is_constant()) ids[i] = renamed.add_constant(names[i], v.constant);
  }
  for (ValueId in : graph_.inputs()) ids[in] = renamed.add_input(names[in], graph_.value(in).type);
  for (const Node& node : graph_.nodes())
    copy_node(renamed, graph_, node, ids, [&](ValueId out) { return names[out]; });
  std::vector<ValueId> outputs;
  for (ValueId out : graph_.outputs()) outputs.push_back(ids[out]);
  renamed.set_outputs(std::move(outputs));
  return renamed;
}

ValueId Net::weight(const std::string& name, Shape shape, float bound) {
  return param_near(name, std::move(shape), 0.0f, bound);
}

ValueId Net::param_near(const std::string& name, Shape shape, float center, float spread) {
  Tensor t(DType::f32, std::move(shape));
  float* data = t.mutable_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) data[i] = rng_.uniform(center - spread, center + spread);
  return builder_.constant(std::move(t), param_name(name));
}

ValueId Net::ints(std::vector<int64_t> values) {
  auto n = static_cast<int64_t>(values.size());
  return builder_.constant(Tensor::from_ints(DType::i64, {n}, values));
}

ValueId Net::scalar(float value) {
  return builder_.constant(Tensor::scalar(DType::f32, value));
}

ValueId Net::conv(ValueId x, int64_t out_channels, ConvSpec spec, const std::string& name) {
  auto s = scope(name);
  int64_t in_channels = shape(x).at(1);
  check(in_channels % spec.groups == 0 && out_channels % spec.groups == 0,
        "conv '{}': channels {} -> {} do not divide into {} groups", prefix_, in_channels,
        out_channels, spec.groups);
  int64_t fan_in = in_channels / spec.groups * spec.kernel * spec.kernel;
  // sqrt(3 / fan_in) keeps the activations' variance roughly constant through the network.
  float bound = std::sqrt(3.0f / static_cast<float>(fan_in));
  std::vector<ValueId> inputs = {
      x,
      weight("weight", {out_channels, in_channels / spec.groups, spec.kernel, spec.kernel}, bound)};
  if (spec.bias) inputs.push_back(weight("bias", {out_channels}, 0.1f));
  Attributes attrs = {{"kernel_shape", std::vector<int64_t>{spec.kernel, spec.kernel}},
                      {"strides", std::vector<int64_t>{spec.stride, spec.stride}},
                      {"pads", std::vector<int64_t>{spec.pad, spec.pad, spec.pad, spec.pad}},
                      {"dilations", std::vector<int64_t>{1, 1}},
                      {"group", spec.groups}};
  return op("Conv", std::move(inputs), std::move(attrs));
}

ValueId Net::linear(ValueId x, int64_t out_features, bool bias, const std::string& name) {
  auto s = scope(name);
  int64_t in_features = shape(x).back();
  float bound = std::sqrt(3.0f / static_cast<float>(in_features));
  if (shape(x).size() == 2 && bias) {
    ValueId w = weight("weight", {out_features, in_features}, bound);
    ValueId b = weight("bias", {out_features}, 0.1f);
    return op("Gemm", {x, w, b}, {{"transB", int64_t{1}}});
  }
  // The exporter stores a MatMul's weight already transposed, [in, out].
  ValueId y = op("MatMul", {x, weight("weight", {in_features, out_features}, bound)});
  return bias ? add(weight("bias", {out_features}, 0.1f), y) : y;
}

ValueId Net::layer_norm(ValueId x, float epsilon, const std::string& name) {
  auto s = scope(name);
  int64_t c = shape(x).back();
  ValueId scale = param_near("weight", {c}, 1.0f, 0.1f);
  ValueId shift = param_near("bias", {c}, 0.0f, 0.1f);
  return op("LayerNormalization", {x, scale, shift}, {{"axis", int64_t{-1}}, {"epsilon", epsilon}});
}

ValueId Net::layer_norm_expanded(ValueId x, float epsilon, const std::string& name) {
  auto s = scope(name);
  int64_t c = shape(x).back();
  ValueId scale = param_near("weight", {c}, 1.0f, 0.1f);
  ValueId shift = param_near("bias", {c}, 0.0f, 0.1f);
  Attributes last_axis = {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}};
  ValueId mean = op("ReduceMean", {x}, last_axis);
  ValueId centered = op("Sub", {x, mean});
  ValueId variance = op("ReduceMean", {op("Pow", {centered, scalar(2.0f)})}, last_axis);
  ValueId stddev = op("Sqrt", {add(variance, scalar(epsilon))});
  return add(mul(div(centered, stddev), scale), shift);
}

ValueId Net::instance_norm(ValueId x, float epsilon, const std::string& name) {
  auto s = scope(name);
  int64_t c = shape(x).at(1);
  ValueId scale = param_near("weight", {c}, 1.0f, 0.1f);
  ValueId shift = param_near("bias", {c}, 0.0f, 0.1f);
  return op("InstanceNormalization", {x, scale, shift}, {{"epsilon", epsilon}});
}

ValueId Net::leaky_relu(ValueId x, float alpha) {
  return op("LeakyRelu", {x}, {{"alpha", alpha}});
}

ValueId Net::silu(ValueId x) {
  return mul(x, sigmoid(x));
}

ValueId Net::mish(ValueId x) {
  return mul(x, op("Tanh", {op("Softplus", {x})}));
}

ValueId Net::gelu(ValueId x) {
  ValueId erf = op("Erf", {div(x, scalar(static_cast<float>(std::sqrt(2.0))))});
  return mul(mul(x, add(erf, scalar(1.0f))), scalar(0.5f));
}

ValueId Net::concat(std::vector<ValueId> values, int64_t axis) {
  return op("Concat", std::move(values), {{"axis", axis}});
}

ValueId Net::reshape(ValueId x, std::vector<int64_t> shape) {
  return op("Reshape", {x, ints(std::move(shape))});
}

ValueId Net::transpose(ValueId x, std::vector<int64_t> perm) {
  return op("Transpose", {x}, {{"perm", std::move(perm)}});
}

ValueId Net::slice(ValueId x, std::vector<int64_t> starts, std::vector<int64_t> ends,
                   std::vector<int64_t> axes, std::vector<int64_t> steps) {
  return op("Slice", {x, ints(std::move(starts)), ints(std::move(ends)), ints(std::move(axes)),
                      ints(std::move(steps))});
}

ValueId Net::gather(ValueId x, int64_t index, int64_t axis) {
  ValueId i = builder_.constant(Tensor::from_ints(DType::i64, {}, std::vector<int64_t>{index}));
  return op("Gather", {x, i}, {{"axis", axis}});
}

ValueId Net::max_pool(ValueId x, int64_t kernel, int64_t stride, int64_t pad) {
  return op("MaxPool", {x},
            {{"kernel_shape", std::vector<int64_t>{kernel, kernel}},
             {"strides", std::vector<int64_t>{stride, stride}},
             {"pads", std::vector<int64_t>{pad, pad, pad, pad}}});
}

ValueId Net::upsample_nearest(ValueId x, float scale) {
  ValueId roi = builder_.constant(Tensor(DType::f32, {0}));
  ValueId scales = builder_.constant(
      Tensor::from_doubles(DType::f32, {4}, std::vector<double>{1.0, 1.0, scale, scale}));
  return op("Resize", {x, roi, scales},
            {{"mode", std::string("nearest")},
             {"coordinate_transformation_mode", std::string("asymmetric")},
             {"nearest_mode", std::string("floor")}});
}

ValueId Net::resize_bilinear(ValueId x, int64_t height, int64_t width) {
  Shape s = shape(x);
  ValueId sizes = ints({s.at(0), s.at(1), height, width});
  return op("Resize", {x, kNoValue, kNoValue, sizes},
            {{"mode", std::string("linear")},
             {"coordinate_transformation_mode", std::string("half_pixel")}});
}

ValueId Net::split_heads(ValueId x, int64_t heads) {
  Shape s = shape(x);
  check(s.size() == 3 && s[2] % heads == 0, "split_heads: {} does not split into {} heads",
        format_shape(s), heads);
  return transpose(reshape(x, {s[0], s[1], heads, s[2] / heads}), {0, 2, 1, 3});
}

ValueId Net::attention(ValueId q, ValueId k, ValueId v) {
  Shape s = shape(q);
  int64_t batch = s.at(0), heads = s.at(1), length = s.at(2), dim = s.at(3);
  ValueId scores = op("MatMul", {q, transpose(k, {0, 1, 3, 2})});
  scores = mul(scores, scalar(1.0f / std::sqrt(static_cast<float>(dim))));
  ValueId probs = op("Softmax", {scores}, {{"axis", int64_t{-1}}});
  ValueId context = transpose(op("MatMul", {probs, v}), {0, 2, 1, 3});
  return reshape(context, {batch, length, heads * dim});
}

}  // namespace orch::zoo
