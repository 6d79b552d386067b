// Candy: the fast neural style transfer network (Johnson et al. 2016) as in pytorch/examples'
// TransformerNet, the source of the ONNX model zoo's candy-9: reflection-padded convolutions with
// instance normalization, five residual blocks, nearest-neighbour upsampling.
#include "zoo/layers.h"
#include "zoo/zoo.h"

namespace orch::zoo {
namespace {

// ConvLayer: ReflectionPad2d(kernel / 2) then Conv2d.
ValueId conv_layer(Net& net, ValueId x, int64_t out_channels, int64_t kernel, int64_t stride,
                   const std::string& name) {
  auto s = net.scope(name);
  int64_t p = kernel / 2;
  ValueId pads = net.ints({0, 0, p, p, 0, 0, p, p});
  ValueId padded = net.op("Pad", {x, pads}, {{"mode", std::string("reflect")}});
  return net.conv(padded, out_channels, {.kernel = kernel, .stride = stride});
}

ValueId conv_norm_relu(Net& net, ValueId x, int64_t out_channels, int64_t kernel, int64_t stride,
                       const std::string& name) {
  ValueId y = conv_layer(net, x, out_channels, kernel, stride, name);
  return net.relu(net.instance_norm(y, 1e-5f, name + "_in"));
}

ValueId residual_block(Net& net, ValueId x, const std::string& name) {
  auto s = net.scope(name);
  ValueId y = conv_norm_relu(net, x, 128, 3, 1, "conv1");
  y = net.instance_norm(conv_layer(net, y, 128, 3, 1, "conv2"), 1e-5f, "conv2_in");
  return net.add(y, x);
}

// UpsampleConvLayer: nearest upsampling by 2, then ConvLayer.
ValueId upsample_conv(Net& net, ValueId x, int64_t out_channels, const std::string& name) {
  ValueId y = conv_layer(net, net.upsample_nearest(x, 2.0f), out_channels, 3, 1, name);
  return net.relu(net.instance_norm(y, 1e-5f, name + "_in"));
}

}  // namespace

Graph build_candy(const ModelOptions& options) {
  Net net("candy", options.seed);
  ValueId x = net.input("input", {options.batch, 3, options.size, options.size});
  x = conv_norm_relu(net, x, 32, 9, 1, "conv1");
  x = conv_norm_relu(net, x, 64, 3, 2, "conv2");
  x = conv_norm_relu(net, x, 128, 3, 2, "conv3");
  for (int i = 1; i <= 5; ++i) x = residual_block(net, x, "res" + std::to_string(i));
  x = upsample_conv(net, x, 64, "deconv1");
  x = upsample_conv(net, x, 32, "deconv2");
  x = conv_layer(net, x, 3, 9, 1, "deconv3");
  net.output(x, "output");
  return net.finish();
}

}  // namespace orch::zoo
