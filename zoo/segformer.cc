// Segformer-B0 (Xie et al. 2021) for ADE20K (150 classes) as in NVlabs/SegFormer: a MiT-B0
// encoder (overlapping patch embeddings, efficient self-attention with reduction ratios 8/4/2/1,
// Mix-FFN with a depthwise 3x3 convolution and GELU) and the all-MLP decode head.
#include "zoo/layers.h"
#include "zoo/zoo.h"

namespace orch::zoo {
namespace {

struct Stage {
  int64_t channels, heads, depth, reduction, patch_kernel, patch_stride;
};

constexpr Stage kStages[] = {
    {32, 1, 2, 8, 7, 4}, {64, 2, 2, 4, 3, 2}, {160, 5, 2, 2, 3, 2}, {256, 8, 2, 1, 3, 2}};
constexpr int64_t kMlpRatio = 4;
constexpr int64_t kDecoderChannels = 256;
constexpr int64_t kClasses = 150;

// A token sequence [B, N, C] with its spatial extent.
struct Tokens {
  ValueId x;
  int64_t height, width;
};

// [B, C, H, W] -> [B, H*W, C] (flatten(2).transpose(1, 2)).
ValueId to_tokens(Net& net, ValueId image) {
  Shape s = net.shape(image);
  return net.transpose(net.reshape(image, {s[0], s[1], s[2] * s[3]}), {0, 2, 1});
}

// [B, H*W, C] -> [B, C, H, W] (transpose(1, 2).reshape).
ValueId to_image(Net& net, ValueId tokens, int64_t height, int64_t width) {
  Shape s = net.shape(tokens);
  return net.reshape(net.transpose(tokens, {0, 2, 1}), {s[0], s[2], height, width});
}

ValueId efficient_attention(Net& net, const Tokens& in, const Stage& stage) {
  auto s = net.scope("attn");
  int64_t batch = net.shape(in.x)[0], c = stage.channels;
  ValueId q = net.split_heads(net.linear(in.x, c, true, "q"), stage.heads);
  ValueId context = in.x;
  if (stage.reduction > 1) {
    // Keys and values come from a map shrunk by a strided convolution.
    ValueId image = to_image(net, in.x, in.height, in.width);
    image = net.conv(image, c, {.kernel = stage.reduction, .stride = stage.reduction}, "sr");
    context = net.layer_norm(to_tokens(net, image), 1e-5f);
  }
  ValueId kv = net.linear(context, 2 * c, true, "kv");
  int64_t length = net.shape(kv)[1];
  kv = net.reshape(kv, {batch, length, 2, stage.heads, c / stage.heads});
  kv = net.transpose(kv, {2, 0, 3, 1, 4});
  ValueId y = net.attention(q, net.gather(kv, 0, 0), net.gather(kv, 1, 0));
  return net.linear(y, c, true, "proj");
}

ValueId mix_ffn(Net& net, const Tokens& in, int64_t channels) {
  auto s = net.scope("mlp");
  int64_t hidden = channels * kMlpRatio;
  ValueId y = net.linear(in.x, hidden, true, "fc1");
  ValueId image = to_image(net, y, in.height, in.width);
  image = net.conv(image, hidden, {.kernel = 3, .pad = 1, .groups = hidden}, "dwconv");
  y = net.gelu(to_tokens(net, image));
  return net.linear(y, channels, true, "fc2");
}

ValueId block(Net& net, Tokens in, const Stage& stage, const std::string& name) {
  auto s = net.scope(name);
  Tokens normed = {net.layer_norm(in.x, 1e-6f, "norm1"), in.height, in.width};
  in.x = net.add(in.x, efficient_attention(net, normed, stage));
  normed.x = net.layer_norm(in.x, 1e-6f, "norm2");
  return net.add(in.x, mix_ffn(net, normed, stage.channels));
}

// One encoder stage: patch embedding, blocks, norm; returns the [B, C, H, W] feature map.
ValueId encoder_stage(Net& net, ValueId image, const Stage& stage, const std::string& name) {
  auto s = net.scope(name);
  ValueId embedded = net.conv(
      image, stage.channels,
      {.kernel = stage.patch_kernel, .stride = stage.patch_stride, .pad = stage.patch_kernel / 2},
      "patch_embed");
  Shape shape = net.shape(embedded);
  Tokens t = {net.layer_norm(to_tokens(net, embedded), 1e-5f, "patch_norm"), shape[2], shape[3]};
  for (int64_t i = 0; i < stage.depth; ++i) t.x = block(net, t, stage, "block" + std::to_string(i));
  return to_image(net, net.layer_norm(t.x, 1e-6f), t.height, t.width);
}

// All-MLP head: per-stage linear to 256 channels, upsample to 1/4, concat, fuse, classify.
ValueId decode_head(Net& net, const std::vector<ValueId>& features) {
  auto s = net.scope("decode_head");
  Shape first = net.shape(features[0]);
  std::vector<ValueId> parts;
  for (size_t i = features.size(); i-- > 0;) {
    Shape f = net.shape(features[i]);
    ValueId y = net.linear(to_tokens(net, features[i]), kDecoderChannels, true,
                           "linear_c" + std::to_string(i + 1));
    y = to_image(net, y, f[2], f[3]);
    if (i > 0) y = net.resize_bilinear(y, first[2], first[3]);
    parts.push_back(y);
  }
  ValueId fused = net.relu(net.conv(net.concat(parts, 1), kDecoderChannels, {}, "linear_fuse"));
  return net.conv(fused, kClasses, {}, "linear_pred");
}

}  // namespace

Graph build_segformer_b0(const ModelOptions& options) {
  Net net("segformer_b0", options.seed);
  ValueId x = net.input("input", {options.batch, 3, options.size, options.size});
  std::vector<ValueId> features;
  for (size_t i = 0; i < std::size(kStages); ++i) {
    x = encoder_stage(net, x, kStages[i], "stage" + std::to_string(i + 1));
    features.push_back(x);
  }
  net.output(decode_head(net, features), "logits");
  return net.finish();
}

}  // namespace orch::zoo
