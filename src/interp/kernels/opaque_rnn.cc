// RNN, GRU and LSTM, one batch row at a time so that sequence_lens is a plain loop bound: for
// each direction and row, step through time computing every gate's X*W^T + Wb and H*R^T + Rb,
// then the cell's update. Steps past a row's length leave Y zero.
#include "interp/kernels/opaque_rnn.h"

#include <algorithm>
#include <vector>

#include "ir/error.h"
#include "ir/ops/opaque_rnn.h"

namespace orch::interp {
namespace {

enum Slot { kX, kW, kR, kB, kSeqLens, kInitialH, kInitialC, kP };

// Input `slot` as doubles, or `fallback_size` zeros when absent.
std::vector<double> input_or_zeros(const KernelArgs& args, int slot, int64_t fallback_size) {
  if (slot < static_cast<int>(args.inputs.size()) && args.inputs[slot].defined())
    return args.inputs[slot].to_doubles();
  return std::vector<double>(fallback_size, 0.0);
}

struct Step {
  const ops::RnnSpec& spec;
  const std::vector<ops::RnnActivation>& act;
  const double* r;   // R of this direction [gates * hidden, hidden]
  const double* rb;  // recurrence bias [gates * hidden]
  const double* p;   // LSTM peepholes [3 * hidden] (i, o, f)
  bool linear_before_reset, input_forget;

  double fn(size_t k, double x) const {
    if (spec.clip > 0) x = std::clamp(x, -spec.clip, spec.clip);
    return ops::apply(act[k], x);
  }
};

// H_t = f(X W^T + H R^T + Wb + Rb).
void rnn_cell(const Step& s, const std::vector<double>& xw, const std::vector<double>& hr,
              std::vector<double>& h, std::vector<double>&) {
  for (size_t j = 0; j < h.size(); ++j) h[j] = s.fn(0, xw[j] + hr[j]);
}

// Gates z, r, h; the candidate applies r before or after the recurrence (linear_before_reset).
void gru_cell(const Step& s, const std::vector<double>& xw, const std::vector<double>& hr,
              std::vector<double>& h, std::vector<double>&) {
  int64_t n = s.spec.hidden;
  std::vector<double> z(n), r(n), next(n);
  for (int64_t j = 0; j < n; ++j) {
    z[j] = s.fn(0, xw[j] + hr[j]);
    r[j] = s.fn(0, xw[n + j] + hr[n + j]);
  }
  for (int64_t j = 0; j < n; ++j) {
    double rec = 0;
    if (s.linear_before_reset) {
      rec = r[j] * hr[2 * n + j];
    } else {
      const double* row = s.r + (2 * n + j) * n;
      for (int64_t k = 0; k < n; ++k) rec += r[k] * h[k] * row[k];
      rec += s.rb[2 * n + j];
    }
    double candidate = s.fn(1, xw[2 * n + j] + rec);
    next[j] = (1 - z[j]) * candidate + z[j] * h[j];
  }
  h = next;
}

// Gates i, o, f, c with peepholes; input_forget couples f = 1 - i.
void lstm_cell(const Step& s, const std::vector<double>& xw, const std::vector<double>& hr,
               std::vector<double>& h, std::vector<double>& c) {
  int64_t n = s.spec.hidden;
  for (int64_t j = 0; j < n; ++j) {
    double i = s.fn(0, xw[j] + hr[j] + s.p[j] * c[j]);
    double f =
        s.input_forget ? 1 - i : s.fn(0, xw[2 * n + j] + hr[2 * n + j] + s.p[2 * n + j] * c[j]);
    double candidate = s.fn(1, xw[3 * n + j] + hr[3 * n + j]);
    c[j] = f * c[j] + i * candidate;
    double o = s.fn(0, xw[n + j] + hr[n + j] + s.p[n + j] * c[j]);
    h[j] = o * s.fn(2, c[j]);
  }
}

using Cell = void (*)(const Step&, const std::vector<double>&, const std::vector<double>&,
                      std::vector<double>&, std::vector<double>&);

// y = M v + bias for M [rows, cols].
void mat_vec(const double* m, const double* v, const double* bias, int64_t rows, int64_t cols,
             std::vector<double>& y) {
  for (int64_t r = 0; r < rows; ++r) {
    double acc = bias[r];
    for (int64_t k = 0; k < cols; ++k) acc += m[r * cols + k] * v[k];
    y[r] = acc;
  }
}

template <Cell kCell>
void recurrent(KernelArgs& args) {
  const Tensor& x = args.inputs[kX];
  ops::RnnSpec s = ops::rnn_spec(args.op, args.attrs, x.shape(), args.inputs[kR].shape());
  int64_t dirs = s.directions, batch = s.batch, seq = s.seq, hid = s.hidden, in = s.input;
  int64_t gh = s.gates * hid;
  std::vector<double> xv = x.to_doubles(), wv = args.inputs[kW].to_doubles();
  std::vector<double> rv = args.inputs[kR].to_doubles();
  std::vector<double> bv = input_or_zeros(args, kB, dirs * 2 * gh);
  std::vector<double> h0 = input_or_zeros(args, kInitialH, dirs * batch * hid);
  std::vector<double> c0 = input_or_zeros(args, kInitialC, dirs * batch * hid);
  std::vector<double> pv = input_or_zeros(args, kP, dirs * 3 * hid);
  bool has_lens = args.inputs.size() > kSeqLens && args.inputs[kSeqLens].defined();

  auto x_at = [&](int64_t t, int64_t b) {
    return xv.data() + (s.batch_first ? b * seq + t : t * batch + b) * in;
  };
  auto state_at = [&](int64_t d, int64_t b) {
    return (s.batch_first ? b * dirs + d : d * batch + b) * hid;
  };
  auto y_at = [&](int64_t t, int64_t d, int64_t b) {
    return (s.batch_first ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hid;
  };
  std::vector<double> xw(gh), hr(gh), h(hid), c(hid);
  for (int64_t d = 0; d < dirs; ++d) {
    bool reverse = s.reverse_only || d == 1;
    const double* w = wv.data() + d * gh * in;
    const double* wb = bv.data() + d * 2 * gh;
    Step step{s,
              s.activations[d],
              rv.data() + d * gh * hid,
              wb + gh,
              pv.data() + d * 3 * hid,
              attr_int(args.attrs, "linear_before_reset", 0) != 0,
              attr_int(args.attrs, "input_forget", 0) != 0};
    for (int64_t b = 0; b < batch; ++b) {
      int64_t len = has_lens ? args.inputs[kSeqLens].get_int(b) : seq;
      check(len >= 0 && len <= seq, "sequence_lens[{}] = {} is outside [0, {}]", b, len, seq);
      std::copy_n(h0.begin() + state_at(d, b), hid, h.begin());
      std::copy_n(c0.begin() + state_at(d, b), hid, c.begin());
      for (int64_t i = 0; i < len; ++i) {
        int64_t t = reverse ? len - 1 - i : i;
        mat_vec(w, x_at(t, b), wb, gh, in, xw);
        mat_vec(step.r, h.data(), step.rb, gh, hid, hr);
        kCell(step, xw, hr, h, c);
        for (int64_t j = 0; j < hid; ++j) args.outputs[0].set(y_at(t, d, b) + j, h[j]);
      }
      for (int64_t j = 0; j < hid; ++j) {
        if (args.outputs.size() > 1) args.outputs[1].set(state_at(d, b) + j, h[j]);
        if (args.outputs.size() > 2) args.outputs[2].set(state_at(d, b) + j, c[j]);
      }
    }
  }
}

}  // namespace

void add_opaque_rnn_kernels(KernelTable& table) {
  table.insert(
      table.end(),
      {{"RNN", recurrent<rnn_cell>}, {"GRU", recurrent<gru_cell>}, {"LSTM", recurrent<lstm_cell>}});
}

}  // namespace orch::interp
