// YOLOv4 (Bochkovskiy et al. 2020) as in AlexeyAB/darknet's yolov4.cfg (layer for layer as the
// PyTorch port Tianxiaomo/pytorch-YOLOv4 writes it): a CSPDarknet53 backbone with Mish, SPP
// (max pools 5/9/13), a PANet neck with LeakyReLU(0.1), and three 1x1 detection convolutions of
// 3 anchors x (80 classes + 5). The outputs are the raw maps at strides 8, 16 and 32; the
// anchor decoding (yolo layers) is post-processing and left out.
#include "zoo/layers.h"
#include "zoo/zoo.h"

namespace orch::zoo {
namespace {

constexpr int64_t kHeadChannels = 3 * (80 + 5);

enum class Act { mish, leaky };

// Conv_Bn_Activation: Conv (+ folded BN), "same" padding, Mish or LeakyReLU(0.1).
ValueId cba(Net& net, ValueId x, int64_t out, int64_t kernel, int64_t stride, Act act,
            const std::string& name) {
  ValueId y = net.conv(x, out, {.kernel = kernel, .stride = stride, .pad = (kernel - 1) / 2}, name);
  return act == Act::mish ? net.mish(y) : net.leaky_relu(y, 0.1f);
}

// CSP downsampling stage: strided 3x3, split into two 1x1 branches, residual blocks on one,
// concat, 1x1 fuse. The first stage has darknet's own channel counts.
ValueId csp_stage(Net& net, ValueId x, int64_t out, int64_t blocks, const std::string& name) {
  auto s = net.scope(name);
  bool first = blocks == 1;
  int64_t half = first ? out : out / 2;
  ValueId down = cba(net, x, out, 3, 2, Act::mish, "down");
  ValueId shortcut = cba(net, down, half, 1, 1, Act::mish, "split0");
  ValueId y = cba(net, down, half, 1, 1, Act::mish, "split1");
  for (int64_t i = 0; i < blocks; ++i) {
    auto b = net.scope("res" + std::to_string(i));
    ValueId h = cba(net, y, first ? half / 2 : half, 1, 1, Act::mish, "conv1");
    y = net.add(cba(net, h, half, 3, 1, Act::mish, "conv2"), y);
  }
  y = cba(net, y, half, 1, 1, Act::mish, "transition");
  return cba(net, net.concat({y, shortcut}, 1), out, 1, 1, Act::mish, "fuse");
}

// Alternating 1x1 (c) and 3x3 (2c) LeakyReLU convs, starting and ending with 1x1.
ValueId conv_stack(Net& net, ValueId x, int64_t c, int count, const std::string& name) {
  auto s = net.scope(name);
  for (int i = 0; i < count; ++i)
    x = i % 2 == 0 ? cba(net, x, c, 1, 1, Act::leaky, "conv" + std::to_string(i))
                   : cba(net, x, 2 * c, 3, 1, Act::leaky, "conv" + std::to_string(i));
  return x;
}

struct Maps {
  ValueId stride8, stride16, stride32;
};

Maps backbone(Net& net, ValueId x) {
  auto s = net.scope("backbone");
  x = cba(net, x, 32, 3, 1, Act::mish, "stem");
  x = csp_stage(net, x, 64, 1, "down1");
  x = csp_stage(net, x, 128, 2, "down2");
  Maps m;
  m.stride8 = csp_stage(net, x, 256, 8, "down3");
  m.stride16 = csp_stage(net, m.stride8, 512, 8, "down4");
  m.stride32 = csp_stage(net, m.stride16, 1024, 4, "down5");
  return m;
}

// SPP and the top-down half of PANet; returns the three fused maps (x20, x13, x6).
Maps neck(Net& net, const Maps& in) {
  auto s = net.scope("neck");
  ValueId x = conv_stack(net, in.stride32, 512, 3, "pre_spp");
  std::vector<ValueId> pools;
  for (int64_t k : {13, 9, 5}) pools.push_back(net.max_pool(x, k, 1, k / 2));
  pools.push_back(x);
  Maps out;
  out.stride32 = conv_stack(net, net.concat(pools, 1), 512, 3, "post_spp");
  ValueId up = net.upsample_nearest(cba(net, out.stride32, 256, 1, 1, Act::leaky, "up1"), 2.0f);
  ValueId lateral = cba(net, in.stride16, 256, 1, 1, Act::leaky, "lateral1");
  out.stride16 = conv_stack(net, net.concat({lateral, up}, 1), 256, 5, "td1");
  up = net.upsample_nearest(cba(net, out.stride16, 128, 1, 1, Act::leaky, "up2"), 2.0f);
  lateral = cba(net, in.stride8, 128, 1, 1, Act::leaky, "lateral2");
  out.stride8 = conv_stack(net, net.concat({lateral, up}, 1), 128, 5, "td2");
  return out;
}

// Bottom-up half of PANet and the three detection convolutions.
std::vector<ValueId> head(Net& net, const Maps& in) {
  auto s = net.scope("head");
  auto detect = [&](ValueId x, int64_t c, const std::string& name) {
    ValueId y = cba(net, x, 2 * c, 3, 1, Act::leaky, name + "_conv");
    return net.conv(y, kHeadChannels, {}, name + "_pred");
  };
  ValueId out8 = detect(in.stride8, 128, "p3");
  ValueId down = cba(net, in.stride8, 256, 3, 2, Act::leaky, "down1");
  ValueId x = conv_stack(net, net.concat({down, in.stride16}, 1), 256, 5, "bu1");
  ValueId out16 = detect(x, 256, "p4");
  down = cba(net, x, 512, 3, 2, Act::leaky, "down2");
  x = conv_stack(net, net.concat({down, in.stride32}, 1), 512, 5, "bu2");
  return {out8, out16, detect(x, 512, "p5")};
}

}  // namespace

Graph build_yolov4(const ModelOptions& options) {
  Net net("yolov4", options.seed);
  ValueId x = net.input("input", {options.batch, 3, options.size, options.size});
  std::vector<ValueId> outputs = head(net, neck(net, backbone(net, x)));
  for (size_t i = 0; i < outputs.size(); ++i)
    net.output(outputs[i], "output_stride" + std::to_string(8 << i));
  return net.finish();
}

}  // namespace orch::zoo
