// Shape rules of the opaque ops (kept whole, never fused): TopK, ReverseSequence, Det, DFT, STFT,
// TfIdfVectorizer; RNN, GRU and LSTM live in opaque_rnn.cc.
#include <algorithm>

#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/opaque_rnn.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

// X [..., D, ...], constant K [1] -> values and i64 indices [..., K, ...] along `axis`.
std::vector<TensorType> top_k(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_dtype(x.dtype,
                {DType::u8, DType::u16, DType::u32, DType::u64, DType::i8, DType::i16, DType::i32,
                 DType::i64, DType::f16, DType::f32, DType::f64},
                "TopK input");
  check(!x.shape.empty(), "TopK input must have rank at least 1");
  const Tensor& k = in.value(1);
  check(k.dtype() == DType::i64 && k.numel() == 1, "TopK K must be a single i64, got {}{}",
        dtype_name(k.dtype()), format_shape(k.shape()));
  int64_t axis = normalize_axis(attr_int(in.attrs, "axis", -1), x.shape.size());
  int64_t count = k.get_int(0);
  check(count >= 0 && count <= x.shape[axis], "TopK K = {} is outside [0, {}] for axis {} of {}",
        count, x.shape[axis], axis, format_shape(x.shape));
  Shape out = x.shape;
  out[axis] = count;
  return {{x.dtype, out}, {DType::i64, out}};
}

// X [batch, time, ...] or [time, batch, ...], sequence_lens i64 [batch] -> X's type.
std::vector<TensorType> reverse_sequence(const InferInput& in) {
  const Shape& x = in.type(0).shape;
  check(x.size() >= 2, "ReverseSequence input must have rank at least 2, got {}", format_shape(x));
  int64_t batch_axis = attr_int(in.attrs, "batch_axis", 1);
  int64_t time_axis = attr_int(in.attrs, "time_axis", 0);
  // Exactly one of them is 0 and the other 1.
  check((batch_axis == 0 || batch_axis == 1) && time_axis == 1 - batch_axis,
        "ReverseSequence batch_axis and time_axis must be 0 and 1 in some order, got {} and {}",
        batch_axis, time_axis);
  const TensorType& lens = in.type(1);
  check(lens.dtype == DType::i64, "ReverseSequence sequence_lens must be i64, got {}",
        dtype_name(lens.dtype));
  check(lens.shape == Shape{x[batch_axis]},
        "ReverseSequence sequence_lens must be [{}] (the batch axis of {}), got {}", x[batch_axis],
        format_shape(x), format_shape(lens.shape));
  return {in.type(0)};
}

// X [*, M, M] floats -> the determinant of each matrix, [*].
std::vector<TensorType> det(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_float(x.dtype, "Det input");
  auto rank = x.shape.size();
  check(rank >= 2 && x.shape[rank - 1] == x.shape[rank - 2],
        "Det input must be square matrices [*, M, M], got {}", format_shape(x.shape));
  return one(x.dtype, Shape(x.shape.begin(), x.shape.end() - 2));
}

// DFT (opset 17): X [batch, signal..., 1 or 2] (real, or complex as (real, imaginary) pairs) and
// an optional constant scalar dft_length -> [..., n or n / 2 + 1 when onesided, ..., 2] along
// `axis`, n being dft_length or the signal's length. As in the reference, `axis` counts among
// the dims without the last, so -1 is the last signal dim.
std::vector<TensorType> dft(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_float(x.dtype, "DFT input");
  auto rank = static_cast<int64_t>(x.shape.size());
  check(rank >= 2 && (x.shape.back() == 1 || x.shape.back() == 2),
        "DFT input must be [batch, signal..., 1 or 2], got {}", format_shape(x.shape));
  int64_t axis = normalize_axis(attr_int(in.attrs, "axis", 1), rank - 1);
  for (std::string_view flag : {"inverse", "onesided"}) {
    int64_t v = attr_int(in.attrs, flag, 0);
    check(v == 0 || v == 1, "DFT {} must be 0 or 1, got {}", flag, v);
  }
  int64_t length = x.shape[axis];
  check(length > 0 || in.has(1), "DFT signal axis {} of {} is empty and no dft_length is given",
        axis, format_shape(x.shape));
  if (in.has(1)) {
    const Tensor& given = in.value(1);
    check((given.dtype() == DType::i32 || given.dtype() == DType::i64) && given.numel() == 1,
          "DFT dft_length must be an i32 or i64 scalar, got {}{}", dtype_name(given.dtype()),
          format_shape(given.shape()));
    length = given.get_int(0);
    check(length > 0, "DFT dft_length must be positive, got {}", length);
  }
  Shape out = x.shape;
  out[axis] = attr_int(in.attrs, "onesided", 0) != 0 ? length / 2 + 1 : length;
  out.back() = 2;
  return one(x.dtype, out);
}

// The value of STFT's constant scalar input `i`, which must be a positive i32 or i64.
int64_t stft_positive_scalar(const InferInput& in, size_t i, std::string_view what) {
  const Tensor& t = in.value(i);
  check((t.dtype() == DType::i32 || t.dtype() == DType::i64) && t.numel() == 1,
        "STFT {} must be an i32 or i64 scalar, got {}{}", what, dtype_name(t.dtype()),
        format_shape(t.shape()));
  int64_t v = t.get_int(0);
  check(v > 0, "STFT {} must be positive, got {}", what, v);
  return v;
}

// STFT (opset 17): signal [batch, signal_length, 1 or 2], constant frame_step, optional window
// [frame_length] and constant frame_length -> [batch, frames, bins, 2]. As in the reference,
// frame_length defaults to the window's length, else to the whole signal; frames are the whole
// ones that fit, and bins are frame_length / 2 + 1 when onesided (the default), else frame_length.
std::vector<TensorType> stft(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_float(x.dtype, "STFT signal");
  check(x.shape.size() == 3 && (x.shape[2] == 1 || x.shape[2] == 2),
        "STFT signal must be [batch, signal_length, 1 or 2], got {}", format_shape(x.shape));
  int64_t signal_length = x.shape[1];
  int64_t step = stft_positive_scalar(in, 1, "frame_step");
  int64_t length = in.has(3) ? stft_positive_scalar(in, 3, "frame_length") : signal_length;
  if (in.has(2)) {
    const TensorType& window = in.type(2);
    check(window.dtype == x.dtype, "STFT window must be {} like the signal, got {}",
          dtype_name(x.dtype), dtype_name(window.dtype));
    check(window.shape.size() == 1, "STFT window must be [window_length], got {}",
          format_shape(window.shape));
    check(!in.has(3) || window.shape[0] == length,
          "STFT window length {} differs from frame_length {}", window.shape[0], length);
    length = window.shape[0];
  }
  check(length > 0 && length <= signal_length,
        "STFT frame_length {} must be in [1, {}] (the signal's length)", length, signal_length);
  int64_t onesided = attr_int(in.attrs, "onesided", 1);
  check(onesided == 0 || onesided == 1, "STFT onesided must be 0 or 1, got {}", onesided);
  int64_t frames = (signal_length - length) / step + 1;
  int64_t bins = onesided != 0 ? length / 2 + 1 : length;
  return one(x.dtype, {x.shape[0], frames, bins, 2});
}

// The number of n-grams in TfIdfVectorizer's pool_int64s, which holds the n-grams of each length
// n = i + 1 from ngram_counts[i] up to the next start (or the pool's end), so each such run must
// be whole n-grams.
int64_t tfidf_gram_count(const Attributes& attrs) {
  std::vector<int64_t> starts = attr_ints(attrs, "ngram_counts");
  auto pool = static_cast<int64_t>(attr_ints(attrs, "pool_int64s").size());
  int64_t grams = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t n = static_cast<int64_t>(i) + 1;
    int64_t end = i + 1 < starts.size() ? starts[i + 1] : pool;
    check(starts[i] >= 0 && starts[i] <= end && end <= pool && (end - starts[i]) % n == 0,
          "TfIdfVectorizer ngram_counts[{}] = {} does not start a run of whole {}-grams ending at "
          "{} in pool_int64s of {}",
          i, starts[i], n, end, pool);
    grams += (end - starts[i]) / n;
  }
  return grams;
}

// Checks TfIdfVectorizer's attributes against each other and returns the output width,
// max(ngram_indexes) + 1: ngram_indexes gives each pooled n-gram its output column, and the
// reference reads weights by output column.
int64_t tfidf_width(const Attributes& attrs) {
  if (has_attr(attrs, "pool_strings"))
    unsupported("TfIdfVectorizer pool_strings is not supported (orch has no string tensors)");
  std::string mode = attr_string(attrs, "mode", "");
  check(mode == "TF" || mode == "IDF" || mode == "TFIDF",
        "TfIdfVectorizer mode must be TF, IDF or TFIDF, got '{}'", mode);
  int64_t min_n = attr_int(attrs, "min_gram_length", 0);
  int64_t max_n = attr_int(attrs, "max_gram_length", 0);
  check(min_n >= 1 && min_n <= max_n,
        "TfIdfVectorizer needs 1 <= min_gram_length <= max_gram_length, got {} and {}", min_n,
        max_n);
  int64_t skips = attr_int(attrs, "max_skip_count", 0);
  check(skips >= 0, "TfIdfVectorizer max_skip_count must not be negative, got {}", skips);
  std::vector<int64_t> indexes = attr_ints(attrs, "ngram_indexes");
  int64_t grams = tfidf_gram_count(attrs);
  check(!indexes.empty() && static_cast<int64_t>(indexes.size()) == grams,
        "TfIdfVectorizer needs one ngram_indexes entry per pooled n-gram ({}), got {}", grams,
        indexes.size());
  int64_t lowest = *std::min_element(indexes.begin(), indexes.end());
  check(lowest >= 0, "TfIdfVectorizer ngram_indexes must not be negative, got {}", lowest);
  int64_t width = *std::max_element(indexes.begin(), indexes.end()) + 1;
  if (has_attr(attrs, "weights")) {
    auto weights = static_cast<int64_t>(attr_floats(attrs, "weights").size());
    check(weights == grams && weights >= width,
          "TfIdfVectorizer needs one weight per n-gram ({}) covering every output column ({}), "
          "got {}",
          grams, width, weights);
  }
  return width;
}

// TfIdfVectorizer (opset 9): integer X [C] or [N, C] -> f32 [width] or [N, width].
std::vector<TensorType> tfidf_vectorizer(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_dtype(x.dtype, {DType::i32, DType::i64}, "TfIdfVectorizer input");
  check(x.shape.size() == 1 || x.shape.size() == 2,
        "TfIdfVectorizer input must be [C] or [N, C], got {}", format_shape(x.shape));
  Shape out = x.shape;
  out.back() = tfidf_width(in.attrs);
  return one(DType::f32, out);
}

}  // namespace

void add_opaque_ops(std::vector<OpSchema>& table) {
  table.push_back({.name = "TopK",
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .min_outputs = 2,
                   .max_outputs = 2,
                   .infer = top_k,
                   .constant_inputs = {1},
                   .category = Category::Opaque});
  table.push_back({.name = "ReverseSequence",
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .infer = reverse_sequence,
                   .category = Category::Opaque});
  table.push_back({.name = "Det", .infer = det, .category = Category::Opaque});
  table.push_back({.name = "DFT",
                   .max_inputs = 2,
                   .infer = dft,
                   .constant_inputs = {1},
                   .category = Category::Opaque});
  table.push_back({.name = "STFT",
                   .min_inputs = 2,
                   .max_inputs = 4,
                   .infer = stft,
                   .constant_inputs = {1, 3},
                   .category = Category::Opaque});
  table.push_back(
      {.name = "TfIdfVectorizer", .infer = tfidf_vectorizer, .category = Category::Opaque});
  add_opaque_rnn_ops(table);
}

}  // namespace orch::ops
