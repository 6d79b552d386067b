// The recurrent ops RNN, GRU and LSTM: their attributes and input shapes, resolved once for the
// shape rules and the kernels.
#pragma once

#include <vector>

#include "ir/op_registry.h"

namespace orch::ops {

/// The activation functions the recurrent ops accept, with their alpha and beta.
enum class RnnFn {
  Relu,
  Tanh,
  Sigmoid,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus
};

struct RnnActivation {
  RnnFn fn;
  double alpha = 0;
  double beta = 0;
};

/// Applies an activation to one pre-activation value.
double apply(const RnnActivation& a, double x);

/// A recurrent op's geometry and settings. Gate blocks in W, R and B follow ONNX order:
/// RNN (one gate), GRU (z, r, h), LSTM (i, o, f, c).
struct RnnSpec {
  int64_t gates = 1;
  int64_t directions = 1;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  bool batch_first = false;   // layout = 1: X [batch, seq, input], states [batch, dirs, hidden]
  bool reverse_only = false;  // direction = "reverse"
  double clip = 0;            // 0: no clip
  /// Activations per direction, in the op's order (f; f, g; or f, g, h).
  std::vector<std::vector<RnnActivation>> activations;
};

/// Reads and checks the attributes of `op` ("RNN", "GRU" or "LSTM") for X and R of the given
/// shapes; throws naming the problem.
RnnSpec rnn_spec(std::string_view op, const Attributes& attrs, const Shape& x, const Shape& r);

/// Registers RNN, GRU and LSTM.
void add_opaque_rnn_ops(std::vector<OpSchema>& table);

}  // namespace orch::ops
