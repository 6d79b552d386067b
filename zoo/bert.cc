// One BERT-base encoder layer (Devlin et al. 2019) as Hugging Face's `BertLayer` exports it:
// separate query/key/value projections, 12 heads of 64, scores divided by sqrt(64), post-norm
// residuals, an intermediate of 3072 with exact GELU. LayerNorm is in the ReduceMean/Sub/Pow/
// Sqrt/Div expansion that exporters below opset 17 wrote (most BERT ONNX files in use), so the
// zoo has both forms. No attention mask input (all tokens attend).
#include <cmath>

#include "zoo/layers.h"
#include "zoo/zoo.h"

namespace orch::zoo {
namespace {

constexpr int64_t kHidden = 768;
constexpr int64_t kHeads = 12;
constexpr int64_t kIntermediate = 3072;
constexpr float kEpsilon = 1e-12f;

ValueId self_attention(Net& net, ValueId x) {
  auto s = net.scope("attention");
  Shape shape = net.shape(x);
  ValueId q = net.split_heads(net.linear(x, kHidden, true, "query"), kHeads);
  ValueId k = net.split_heads(net.linear(x, kHidden, true, "key"), kHeads);
  ValueId v = net.split_heads(net.linear(x, kHidden, true, "value"), kHeads);
  ValueId scores = net.op("MatMul", {q, net.transpose(k, {0, 1, 3, 2})});
  scores = net.div(scores, net.scalar(std::sqrt(static_cast<float>(kHidden / kHeads))));
  ValueId probs = net.op("Softmax", {scores}, {{"axis", int64_t{-1}}});
  ValueId context = net.transpose(net.op("MatMul", {probs, v}), {0, 2, 1, 3});
  context = net.reshape(context, {shape[0], shape[1], kHidden});
  ValueId y = net.linear(context, kHidden, true, "output");
  return net.layer_norm_expanded(net.add(y, x), kEpsilon, "output_norm");
}

ValueId feed_forward(Net& net, ValueId x) {
  ValueId h = net.gelu(net.linear(x, kIntermediate, true, "intermediate"));
  ValueId y = net.linear(h, kHidden, true, "output");
  return net.layer_norm_expanded(net.add(y, x), kEpsilon, "output_norm");
}

}  // namespace

Graph build_bert_base_layer(const ModelOptions& options) {
  Net net("bert_base_layer", options.seed);
  ValueId x = net.input("hidden_states", {options.batch, options.size, kHidden});
  net.output(feed_forward(net, self_attention(net, x)), "output");
  return net.finish();
}

}  // namespace orch::zoo
