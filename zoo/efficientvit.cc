// EfficientViT-B1 (Cai et al., ICCV 2023) ImageNet classifier as in mit-han-lab/efficientvit
// (efficientvit_cls_b1): a Hardswish MBConv backbone whose last two stages add EfficientViT
// blocks (ReLU linear attention over multi-scale tokens from a 5x5 depthwise aggregation),
// and the classification head (1536 -> 1600 -> 1000).
#include "zoo/layers.h"
#include "zoo/zoo.h"

namespace orch::zoo {
namespace {

constexpr int64_t kWidths[] = {16, 32, 64, 128, 256};
constexpr int64_t kDepths[] = {1, 2, 3, 3, 4};
constexpr int64_t kHeadDim = 16;
constexpr int64_t kExpand = 4;

// ConvLayer: Conv (+ folded BN) with an optional Hardswish.
ValueId conv_act(Net& net, ValueId x, int64_t out, ConvSpec spec, bool act,
                 const std::string& name) {
  ValueId y = net.conv(x, out, spec, name);
  return act ? net.hard_swish(y) : y;
}

// Depthwise-separable conv (expand ratio 1): 3x3 depthwise + Hardswish, 1x1 pointwise.
ValueId ds_conv(Net& net, ValueId x, int64_t out, int64_t stride, const std::string& name) {
  auto s = net.scope(name);
  int64_t c = net.shape(x)[1];
  ValueId y = conv_act(net, x, c, {.kernel = 3, .stride = stride, .pad = 1, .groups = c}, true,
                       "depth_conv");
  return conv_act(net, y, out, {}, false, "point_conv");
}

// Inverted bottleneck: 1x1 expand + Hardswish, 3x3 depthwise + Hardswish, 1x1 project.
ValueId mb_conv(Net& net, ValueId x, int64_t out, int64_t stride, const std::string& name) {
  auto s = net.scope(name);
  int64_t mid = net.shape(x)[1] * kExpand;
  ValueId y = conv_act(net, x, mid, {}, true, "inverted_conv");
  y = conv_act(net, y, mid, {.kernel = 3, .stride = stride, .pad = 1, .groups = mid}, true,
               "depth_conv");
  return conv_act(net, y, out, {}, false, "point_conv");
}

// ReLU linear attention over [B, 2 * heads, N, 3 * dim] tokens (q, k, v side by side):
// out = q (k^T [v, 1]) with the last column as the normalizer.
ValueId relu_linear_attention(Net& net, ValueId qkv) {
  Shape s = net.shape(qkv);
  int64_t batch = s[0], height = s[2], width = s[3], n = height * width;
  ValueId t = net.reshape(qkv, {batch, -1, 3 * kHeadDim, n});
  t = net.transpose(t, {0, 1, 3, 2});
  ValueId q = net.relu(net.slice(t, {0}, {kHeadDim}, {-1}, {1}));
  ValueId k = net.relu(net.slice(t, {kHeadDim}, {2 * kHeadDim}, {-1}, {1}));
  ValueId v = net.slice(t, {2 * kHeadDim}, {3 * kHeadDim}, {-1}, {1});
  v = net.op("Pad", {v, net.ints({0, 0, 0, 0, 0, 0, 0, 1}), net.scalar(1.0f)},
             {{"mode", std::string("constant")}});
  ValueId kv = net.op("MatMul", {net.transpose(k, {0, 1, 3, 2}), v});
  ValueId out = net.op("MatMul", {q, kv});
  ValueId numerator = net.slice(out, {0}, {-1}, {-1}, {1});
  ValueId denominator = net.slice(out, {-1}, {kHeadDim + 1}, {-1}, {1});
  out = net.div(numerator, net.add(denominator, net.scalar(1e-15f)));
  out = net.transpose(out, {0, 1, 3, 2});
  return net.reshape(out, {batch, -1, height, width});
}

// LiteMLA: qkv projection, 5x5 multi-scale aggregation, linear attention, projection.
ValueId lite_mla(Net& net, ValueId x, const std::string& name) {
  auto s = net.scope(name);
  int64_t c = net.shape(x)[1], heads = c / kHeadDim;
  ValueId qkv = net.conv(x, 3 * c, {.bias = false}, "qkv");
  ValueId aggregated =
      net.conv(qkv, 3 * c, {.kernel = 5, .pad = 2, .groups = 3 * c, .bias = false}, "aggreg_dw");
  aggregated = net.conv(aggregated, 3 * c, {.groups = 3 * heads, .bias = false}, "aggreg_pw");
  ValueId y = relu_linear_attention(net, net.concat({qkv, aggregated}, 1));
  return net.conv(y, c, {}, "proj");
}

ValueId efficientvit_block(Net& net, ValueId x, const std::string& name) {
  auto s = net.scope(name);
  x = net.add(lite_mla(net, x, "context"), x);
  return net.add(mb_conv(net, x, net.shape(x)[1], 1, "local"), x);
}

ValueId backbone(Net& net, ValueId x) {
  x = conv_act(net, x, kWidths[0], {.kernel = 3, .stride = 2, .pad = 1}, true, "stem");
  for (int64_t i = 0; i < kDepths[0]; ++i)
    x = net.add(ds_conv(net, x, kWidths[0], 1, "stem_block" + std::to_string(i)), x);
  for (int stage = 1; stage < 5; ++stage) {
    auto s = net.scope("stage" + std::to_string(stage));
    // Stages 1-2 are MBConv blocks; stages 3-4 a strided MBConv then EfficientViT blocks.
    bool local = stage < 3;
    int64_t blocks = local ? kDepths[stage] : kDepths[stage] + 1;
    for (int64_t i = 0; i < blocks; ++i) {
      std::string block = "block" + std::to_string(i);
      if (i == 0)
        x = mb_conv(net, x, kWidths[stage], 2, block);
      else if (local)
        x = net.add(mb_conv(net, x, kWidths[stage], 1, block), x);
      else
        x = efficientvit_block(net, x, block);
    }
  }
  return x;
}

// ClsHead: 1x1 conv to 1536, global pooling, Linear(1600, no bias) + LayerNorm + Hardswish,
// Linear(1000).
ValueId classifier(Net& net, ValueId x) {
  auto s = net.scope("head");
  x = conv_act(net, x, 1536, {}, true, "conv");
  x = net.op("Flatten", {net.op("GlobalAveragePool", {x})}, {{"axis", int64_t{1}}});
  x = net.hard_swish(net.layer_norm(net.linear(x, 1600, false, "fc1"), 1e-5f, "fc1_norm"));
  return net.linear(x, 1000, true, "fc2");
}

}  // namespace

Graph build_efficientvit_b1(const ModelOptions& options) {
  Net net("efficientvit_b1", options.seed);
  ValueId x = net.input("input", {options.batch, 3, options.size, options.size});
  net.output(classifier(net, backbone(net, x)), "logits");
  return net.finish();
}

}  // namespace orch::zoo
