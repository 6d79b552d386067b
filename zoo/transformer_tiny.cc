// A small pre-norm transformer encoder layer: the demo's model. The same structure as the
// ViT/BERT layers (attention with softmax, LayerNorm, a GELU MLP) at a width that optimizes in
// about a minute: hidden 64, 4 heads of 16, MLP 256, 32 tokens by default.
#include "zoo/layers.h"
#include "zoo/zoo.h"

namespace orch::zoo {
namespace {

constexpr int64_t kHidden = 64;
constexpr int64_t kHeads = 4;
constexpr int64_t kMlp = 256;

ValueId self_attention(Net& net, ValueId x) {
  auto s = net.scope("attn");
  ValueId q = net.split_heads(net.linear(x, kHidden, true, "query"), kHeads);
  ValueId k = net.split_heads(net.linear(x, kHidden, true, "key"), kHeads);
  ValueId v = net.split_heads(net.linear(x, kHidden, true, "value"), kHeads);
  return net.linear(net.attention(q, k, v), kHidden, true, "proj");
}

ValueId mlp(Net& net, ValueId x) {
  auto s = net.scope("mlp");
  return net.linear(net.gelu(net.linear(x, kMlp, true, "fc1")), kHidden, true, "fc2");
}

}  // namespace

Graph build_transformer_tiny(const ModelOptions& options) {
  Net net("transformer_tiny", options.seed);
  ValueId x = net.input("hidden_states", {options.batch, options.size, kHidden});
  x = net.add(x, self_attention(net, net.layer_norm(x, 1e-5f, "norm1")));
  x = net.add(x, mlp(net, net.layer_norm(x, 1e-5f, "norm2")));
  net.output(x, "output");
  return net.finish();
}

}  // namespace orch::zoo
