// Reference kernels of the opaque ops: TopK, ReverseSequence, Det, DFT, STFT and TfIdfVectorizer
// here, RNN, GRU and LSTM in opaque_rnn.cc.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <map>
#include <numbers>
#include <numeric>
#include <vector>

#include "interp/kernels/families.h"
#include "interp/kernels/opaque_rnn.h"
#include "ir/dtype.h"
#include "ir/error.h"

namespace orch::interp {
namespace {

// Sorts each slice along `axis` stably (ties keep the lower index first) and keeps the first K;
// values are copied bytewise so every dtype is exact.
template <typename T>
void top_k_as(KernelArgs& args, const std::vector<T>& keys) {
  const Tensor& x = args.inputs[0];
  Tensor& values = args.outputs[0];
  Tensor& indices = args.outputs[1];
  int64_t rank = x.rank();
  int64_t axis = attr_int(args.attrs, "axis", -1);
  if (axis < 0) axis += rank;
  bool largest = attr_int(args.attrs, "largest", 1) != 0;
  int64_t dim = x.shape()[axis], k = values.shape()[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape()[d];
  int64_t outer = dim == 0 ? 0 : x.numel() / (dim * inner);
  size_t width = dtype_size(x.dtype());
  std::vector<int64_t> order(dim);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * dim * inner + i;
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        T va = keys[base + a * inner], vb = keys[base + b * inner];
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t dst = (o * k + j) * inner + i;
        std::memcpy(values.mutable_bytes() + dst * width,
                    x.bytes() + (base + order[j] * inner) * width, width);
        indices.set_int(dst, order[j]);
      }
    }
}

void top_k(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  if (x.dtype() == DType::u64) {
    std::vector<int64_t> v = x.to_ints();
    top_k_as(args, std::vector<uint64_t>(v.begin(), v.end()));
  } else if (is_integer(x.dtype())) {
    top_k_as(args, x.to_ints());
  } else {
    top_k_as(args, x.to_doubles());
  }
}

// Each slice along axes 0 and 1 (the batch and time axes in some order) is copied bytewise from
// its mirrored time step: step t < sequence_lens[b] reads len - 1 - t, the rest read themselves.
void reverse_sequence(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& lens = args.inputs[1];
  Tensor& out = args.outputs[0];
  bool batch_first = attr_int(args.attrs, "batch_axis", 1) == 0;
  int64_t rows = x.shape()[0], cols = x.shape()[1];
  int64_t time = batch_first ? cols : rows;
  size_t slice = dtype_size(x.dtype()) * (rows * cols == 0 ? 0 : x.numel() / (rows * cols));
  for (int64_t b = 0; b < lens.numel(); ++b) {
    int64_t len = lens.get_int(b);
    check(len >= 0 && len <= time, "sequence_lens[{}] = {} is outside [0, {}]", b, len, time);
    for (int64_t t = 0; t < time; ++t) {
      int64_t from = t < len ? len - 1 - t : t;
      int64_t dst = batch_first ? b * cols + t : t * cols + b;
      int64_t src = batch_first ? b * cols + from : from * cols + b;
      std::memcpy(out.mutable_bytes() + dst * slice, x.bytes() + src * slice, slice);
    }
  }
}

// The determinant of the m x m row-major matrix `a`, by LU decomposition with partial pivoting
// (each column's largest magnitude becomes the pivot, which keeps the elimination stable).
double determinant(std::vector<double> a, int64_t m) {
  double det = 1;
  for (int64_t k = 0; k < m; ++k) {
    int64_t pivot = k;
    for (int64_t r = k + 1; r < m; ++r)
      if (std::abs(a[r * m + k]) > std::abs(a[pivot * m + k])) pivot = r;
    if (a[pivot * m + k] == 0) return 0;
    if (pivot != k) {
      std::swap_ranges(a.begin() + k * m, a.begin() + (k + 1) * m, a.begin() + pivot * m);
      det = -det;
    }
    det *= a[k * m + k];
    for (int64_t r = k + 1; r < m; ++r) {
      double f = a[r * m + k] / a[k * m + k];
      for (int64_t c = k + 1; c < m; ++c) a[r * m + c] -= f * a[k * m + c];
    }
  }
  return det;
}

void det(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& out = args.outputs[0];
  int64_t m = x.shape().back();
  std::vector<double> v = x.to_doubles();
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto first = v.begin() + i * m * m;
    out.set(i, determinant(std::vector<double>(first, first + m * m), m));
  }
}

// One DFT of the signal `in` (imaginary parts 0 for a real one), read as n values, cut or padded
// with zeros. Writes the first out.size() of the n frequencies (or, inverse, samples divided by
// n), each angle reduced mod n for accuracy.
void transform(const std::vector<std::complex<double>>& in, int64_t n, bool inverse,
               std::vector<std::complex<double>>& out) {
  double sign = inverse ? 1 : -1;
  int64_t used = std::min<int64_t>(n, static_cast<int64_t>(in.size()));
  for (size_t k = 0; k < out.size(); ++k) {
    std::complex<double> sum = 0;
    for (int64_t t = 0; t < used; ++t) {
      double turn = static_cast<double>(static_cast<int64_t>(k) * t % n) / static_cast<double>(n);
      sum += in[t] * std::polar(1.0, sign * 2 * std::numbers::pi * turn);
    }
    out[k] = inverse ? sum / static_cast<double>(n) : sum;
  }
}

// X [outer, length, inner, 1 or 2] -> Y [outer, out_len, inner, 2] along the normalized axis.
void dft(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  int64_t axis = attr_int(args.attrs, "axis", 1);
  if (axis < 0) axis += x.rank() - 1;
  bool inverse = attr_int(args.attrs, "inverse", 0) != 0;
  int64_t n = args.inputs.size() > 1 && args.inputs[1].defined() ? args.inputs[1].get_int(0)
                                                                 : x.shape()[axis];
  int64_t length = x.shape()[axis], out_len = y.shape()[axis], parts = x.shape().back();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.rank() - 1; ++d) inner *= x.shape()[d];
  std::vector<double> xv = x.to_doubles();
  std::vector<std::complex<double>> signal(length), result(out_len);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t t = 0; t < length; ++t) {
        const double* v = xv.data() + ((o * length + t) * inner + i) * parts;
        signal[t] = {v[0], parts == 2 ? v[1] : 0.0};
      }
      transform(signal, n, inverse, result);
      for (int64_t k = 0; k < out_len; ++k) {
        int64_t at = ((o * out_len + k) * inner + i) * 2;
        y.set(at, result[k].real());
        y.set(at + 1, result[k].imag());
      }
    }
}

// Signal [batch, signal_length, 1 or 2] -> Y [batch, frames, bins, 2]: frame f starts at sample
// f * frame_step, is weighted by the window (when given) and transformed like DFT, keeping the
// first `bins` frequencies. The shape rule has checked frame_length against the window and signal.
void stft(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  int64_t step = args.inputs[1].get_int(0);
  bool has_window = args.inputs.size() > 2 && args.inputs[2].defined();
  int64_t signal_length = x.shape()[1], parts = x.shape()[2];
  int64_t batch = y.shape()[0], frames = y.shape()[1], bins = y.shape()[2];
  // frame_length, when absent, is the window's length, else the whole signal's.
  int64_t length = signal_length;
  if (args.inputs.size() > 3 && args.inputs[3].defined())
    length = args.inputs[3].get_int(0);
  else if (has_window)
    length = args.inputs[2].numel();
  std::vector<double> window =
      has_window ? args.inputs[2].to_doubles() : std::vector<double>(length, 1.0);
  std::vector<double> xv = x.to_doubles();
  std::vector<std::complex<double>> frame(length), result(bins);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < length; ++t) {
        const double* v = xv.data() + (b * signal_length + f * step + t) * parts;
        frame[t] = std::complex<double>(v[0], parts == 2 ? v[1] : 0.0) * window[t];
      }
      transform(frame, length, false, result);
      for (int64_t k = 0; k < bins; ++k) {
        int64_t at = ((b * frames + f) * bins + k) * 2;
        y.set(at, result[k].real());
        y.set(at + 1, result[k].imag());
      }
    }
}

// TfIdfVectorizer's pooled n-grams of lengths [min_n, max_n], each mapped to its output column
// (ngram_indexes of its place among all pooled n-grams). A repeated n-gram keeps its last column,
// as in the reference's trie.
using Grams = std::map<std::vector<int64_t>, int64_t>;

Grams tfidf_grams(const Attributes& attrs, int64_t min_n, int64_t max_n) {
  std::vector<int64_t> starts = attr_ints(attrs, "ngram_counts");
  std::vector<int64_t> pool = attr_ints(attrs, "pool_int64s");
  std::vector<int64_t> indexes = attr_ints(attrs, "ngram_indexes");
  Grams grams;
  size_t place = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    auto n = static_cast<int64_t>(i) + 1;
    int64_t end = i + 1 < starts.size() ? starts[i + 1] : static_cast<int64_t>(pool.size());
    for (int64_t at = starts[i]; at < end; at += n, ++place)
      if (n >= min_n && n <= max_n)
        grams[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + n)] = indexes[place];
  }
  return grams;
}

// Adds one row's n-gram counts to `counts` as the reference does: for each skip distance from 1
// to max_skip_count + 1 and each start, the n-grams of that stride, counting each length from
// `shortest` on. Unigrams are counted in the first pass only, since skips do not change them.
void tfidf_count(const int64_t* x, int64_t c, const Grams& grams, int64_t min_n, int64_t max_n,
                 int64_t max_skip, std::vector<int64_t>& counts) {
  int64_t shortest = min_n;
  for (int64_t skip = 1; skip <= max_skip + 1; ++skip) {
    for (int64_t start = 0; start + skip * (shortest - 1) < c; ++start) {
      std::vector<int64_t> gram;
      for (int64_t at = start; static_cast<int64_t>(gram.size()) < max_n && at < c; at += skip) {
        gram.push_back(x[at]);
        auto hit = grams.find(gram);
        if (static_cast<int64_t>(gram.size()) >= shortest && hit != grams.end())
          ++counts[hit->second];
      }
    }
    if (shortest == 1) {
      shortest = 2;
      if (shortest > max_n) break;
    }
  }
}

// X [C] or [N, C] -> Y [width] or [N, width]: TF is the count of each column's n-gram, IDF its
// weight (1 without weights) where the count is positive, TFIDF the count times the weight.
void tfidf_vectorizer(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  int64_t min_n = attr_int(args.attrs, "min_gram_length", 0);
  int64_t max_n = attr_int(args.attrs, "max_gram_length", 0);
  int64_t max_skip = attr_int(args.attrs, "max_skip_count", 0);
  std::string mode = attr_string(args.attrs, "mode", "");
  std::vector<float> weights = attr_floats(args.attrs, "weights");
  Grams grams = tfidf_grams(args.attrs, min_n, max_n);
  int64_t c = x.shape().back(), width = y.shape().back();
  int64_t rows = x.rank() == 2 ? x.shape()[0] : 1;
  std::vector<int64_t> xv = x.to_ints();
  std::vector<int64_t> counts(width);
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0);
    tfidf_count(xv.data() + r * c, c, grams, min_n, max_n, max_skip, counts);
    for (int64_t i = 0; i < width; ++i) {
      double weight = weights.empty() ? 1.0 : weights[i];
      double value = static_cast<double>(counts[i]);
      if (mode == "IDF") value = counts[i] > 0 ? weight : 0.0;
      if (mode == "TFIDF") value *= weight;
      y.set(r * width + i, value);
    }
  }
}

}  // namespace

void add_opaque_kernels(KernelTable& table) {
  table.insert(table.end(), {{"TopK", top_k},
                             {"ReverseSequence", reverse_sequence},
                             {"Det", det},
                             {"DFT", dft},
                             {"STFT", stft},
                             {"TfIdfVectorizer", tfidf_vectorizer}});
  add_opaque_rnn_kernels(table);
}

}  // namespace orch::interp
