// One ViT-B/16 encoder layer (Dosovitskiy et al. 2021) as timm's `Block` exports it: pre-norm
// LayerNorm, a fused qkv projection unbound by Gather, 12 heads of 64, and an MLP of 3072 with
// exact GELU. The default sequence is 197 tokens (196 patches of a 224x224 image + the class
// token).
#include "zoo/layers.h"
#include "zoo/zoo.h"

namespace orch::zoo {
namespace {

constexpr int64_t kHidden = 768;
constexpr int64_t kHeads = 12;
constexpr int64_t kMlp = 3072;

ValueId self_attention(Net& net, ValueId x) {
  auto s = net.scope("attn");
  Shape shape = net.shape(x);
  ValueId qkv = net.linear(x, 3 * kHidden, true, "qkv");
  qkv = net.reshape(qkv, {shape[0], shape[1], 3, kHeads, kHidden / kHeads});
  qkv = net.transpose(qkv, {2, 0, 3, 1, 4});
  ValueId y = net.attention(net.gather(qkv, 0, 0), net.gather(qkv, 1, 0), net.gather(qkv, 2, 0));
  return net.linear(y, kHidden, true, "proj");
}

ValueId mlp(Net& net, ValueId x) {
  auto s = net.scope("mlp");
  return net.linear(net.gelu(net.linear(x, kMlp, true, "fc1")), kHidden, true, "fc2");
}

}  // namespace

Graph build_vit_b16_layer(const ModelOptions& options) {
  Net net("vit_b16_layer", options.seed);
  ValueId x = net.input("hidden_states", {options.batch, options.size, kHidden});
  x = net.add(x, self_attention(net, net.layer_norm(x, 1e-6f, "norm1")));
  x = net.add(x, mlp(net, net.layer_norm(x, 1e-6f, "norm2")));
  net.output(x, "output");
  return net.finish();
}

}  // namespace orch::zoo
