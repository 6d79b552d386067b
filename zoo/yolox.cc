// YOLOX-Nano (Ge et al. 2021) as in Megvii-BaseDetection/YOLOX (depth 0.33, width 0.25,
// depthwise convolutions, SiLU): a Focus stem, a CSPDarknet backbone with SPP, a PAN neck with
// nearest upsampling and concatenation, and the decoupled head. The output is the exported
// `decode_in_inference = False` form: [B, anchors, 4 box + 1 objectness + 80 classes].
#include "zoo/layers.h"
#include "zoo/zoo.h"

namespace orch::zoo {
namespace {

constexpr int64_t kClasses = 80;

// BaseConv: Conv (+ folded BN) + SiLU, "same" padding.
ValueId base_conv(Net& net, ValueId x, int64_t out, int64_t kernel, int64_t stride,
                  const std::string& name, int64_t groups = 1) {
  return net.silu(net.conv(
      x, out, {.kernel = kernel, .stride = stride, .pad = (kernel - 1) / 2, .groups = groups},
      name));
}

// DWConv: depthwise kxk BaseConv then pointwise BaseConv (YOLOX-Nano's `Conv` everywhere).
ValueId dw_conv(Net& net, ValueId x, int64_t out, int64_t kernel, int64_t stride,
                const std::string& name) {
  auto s = net.scope(name);
  int64_t c = net.shape(x)[1];
  ValueId y = base_conv(net, x, c, kernel, stride, "dconv", c);
  return base_conv(net, y, out, 1, 1, "pconv");
}

ValueId bottleneck(Net& net, ValueId x, bool shortcut, const std::string& name) {
  auto s = net.scope(name);
  int64_t c = net.shape(x)[1];
  ValueId y = dw_conv(net, base_conv(net, x, c, 1, 1, "conv1"), c, 3, 1, "conv2");
  return shortcut ? net.add(y, x) : y;
}

// CSPLayer: two 1x1 branches, bottlenecks on one, concat, 1x1 fuse.
ValueId csp_layer(Net& net, ValueId x, int64_t out, int64_t blocks, bool shortcut,
                  const std::string& name) {
  auto s = net.scope(name);
  int64_t hidden = out / 2;
  ValueId x1 = base_conv(net, x, hidden, 1, 1, "conv1");
  ValueId x2 = base_conv(net, x, hidden, 1, 1, "conv2");
  for (int64_t i = 0; i < blocks; ++i) x1 = bottleneck(net, x1, shortcut, "m" + std::to_string(i));
  return base_conv(net, net.concat({x1, x2}, 1), out, 1, 1, "conv3");
}

ValueId spp_bottleneck(Net& net, ValueId x, int64_t out, const std::string& name) {
  auto s = net.scope(name);
  ValueId y = base_conv(net, x, net.shape(x)[1] / 2, 1, 1, "conv1");
  std::vector<ValueId> parts = {y};
  for (int64_t k : {5, 9, 13}) parts.push_back(net.max_pool(y, k, 1, k / 2));
  return base_conv(net, net.concat(parts, 1), out, 1, 1, "conv2");
}

// Focus: space-to-depth by strided slices (top-left, bottom-left, top-right, bottom-right).
ValueId focus(Net& net, ValueId x, int64_t out) {
  auto s = net.scope("stem");
  Shape shape = net.shape(x);
  std::vector<ValueId> patches;
  for (auto [row, col] : {std::pair{0, 0}, {1, 0}, {0, 1}, {1, 1}})
    patches.push_back(net.slice(x, {row, col}, {shape[2], shape[3]}, {2, 3}, {2, 2}));
  return base_conv(net, net.concat(patches, 1), out, 3, 1, "conv");
}

struct Features {
  ValueId dark3, dark4, dark5;
};

Features backbone(Net& net, ValueId x) {
  auto s = net.scope("backbone");
  x = focus(net, x, 16);
  {
    auto d = net.scope("dark2");
    x = csp_layer(net, dw_conv(net, x, 32, 3, 2, "down"), 32, 1, true, "csp");
  }
  Features f;
  {
    auto d = net.scope("dark3");
    f.dark3 = csp_layer(net, dw_conv(net, x, 64, 3, 2, "down"), 64, 3, true, "csp");
  }
  {
    auto d = net.scope("dark4");
    f.dark4 = csp_layer(net, dw_conv(net, f.dark3, 128, 3, 2, "down"), 128, 3, true, "csp");
  }
  auto d = net.scope("dark5");
  x = spp_bottleneck(net, dw_conv(net, f.dark4, 256, 3, 2, "down"), 256, "spp");
  f.dark5 = csp_layer(net, x, 256, 1, false, "csp");
  return f;
}

// YOLOPAFPN: top-down with upsampling, then bottom-up with strided convs.
Features pafpn(Net& net, const Features& in) {
  auto s = net.scope("neck");
  ValueId fpn_out0 = base_conv(net, in.dark5, 128, 1, 1, "lateral_conv0");
  ValueId f_out0 = net.concat({net.upsample_nearest(fpn_out0, 2.0f), in.dark4}, 1);
  f_out0 = csp_layer(net, f_out0, 128, 1, false, "C3_p4");
  ValueId fpn_out1 = base_conv(net, f_out0, 64, 1, 1, "reduce_conv1");
  ValueId f_out1 = net.concat({net.upsample_nearest(fpn_out1, 2.0f), in.dark3}, 1);
  Features out;
  out.dark3 = csp_layer(net, f_out1, 64, 1, false, "C3_p3");
  ValueId p_out1 = net.concat({dw_conv(net, out.dark3, 64, 3, 2, "bu_conv2"), fpn_out1}, 1);
  out.dark4 = csp_layer(net, p_out1, 128, 1, false, "C3_n3");
  ValueId p_out0 = net.concat({dw_conv(net, out.dark4, 128, 3, 2, "bu_conv1"), fpn_out0}, 1);
  out.dark5 = csp_layer(net, p_out0, 256, 1, false, "C3_n4");
  return out;
}

// Decoupled head of one level: [B, 85, H*W] = [box, sigmoid(objectness), sigmoid(classes)].
ValueId head_level(Net& net, ValueId x, const std::string& name) {
  auto s = net.scope(name);
  x = base_conv(net, x, 64, 1, 1, "stem");
  ValueId cls = dw_conv(net, dw_conv(net, x, 64, 3, 1, "cls_conv0"), 64, 3, 1, "cls_conv1");
  ValueId reg = dw_conv(net, dw_conv(net, x, 64, 3, 1, "reg_conv0"), 64, 3, 1, "reg_conv1");
  ValueId box = net.conv(reg, 4, {}, "reg_pred");
  ValueId obj = net.sigmoid(net.conv(reg, 1, {}, "obj_pred"));
  ValueId classes = net.sigmoid(net.conv(cls, kClasses, {}, "cls_pred"));
  ValueId y = net.concat({box, obj, classes}, 1);
  Shape shape = net.shape(y);
  return net.reshape(y, {shape[0], shape[1], shape[2] * shape[3]});
}

}  // namespace

Graph build_yolox_nano(const ModelOptions& options) {
  Net net("yolox_nano", options.seed);
  ValueId x = net.input("images", {options.batch, 3, options.size, options.size});
  Features f = pafpn(net, backbone(net, x));
  ValueId y = net.concat({head_level(net, f.dark3, "head0"), head_level(net, f.dark4, "head1"),
                          head_level(net, f.dark5, "head2")},
                         2);
  net.output(net.transpose(y, {0, 2, 1}), "output");
  return net.finish();
}

}  // namespace orch::zoo
