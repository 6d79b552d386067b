// Reference kernels of the reductions (Reduce*, ArgMax, ArgMin) and the scan CumSum.
//
// Float inputs accumulate in double; integer inputs accumulate exactly in int64 or uint64 (with
// two's-complement wrap-around, as the narrower integer types wrap) except where the result is
// not an integer (L2, LogSum, LogSumExp): those go through double and truncate on store.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "interp/kernels/families.h"
#include "interp/kernels/util.h"
#include "ir/ops/reduce_params.h"
#include "ir/ops/shape_util.h"

namespace orch::interp {
namespace {

// Calls f(T{}) with the type that holds every value of `t` exactly: double, int64 or uint64.
template <typename F>
void with_value_type(DType t, F&& f) {
  if (is_float(t))
    f(double{});
  else if (is_unsigned_int(t) || t == DType::boolean)
    f(uint64_t{});
  else
    f(int64_t{});
}

template <typename T>
T load(const Tensor& t, int64_t i) {
  if constexpr (std::is_same_v<T, double>)
    return t.get(i);
  else
    return static_cast<T>(t.get_int(i));
}

template <typename T>
void store(Tensor& t, int64_t i, T v) {
  if constexpr (std::is_same_v<T, double>)
    t.set(i, v);
  else
    t.set_int(i, static_cast<int64_t>(v));
}

// Integer + and * wrap around (defined behaviour through uint64).
template <typename T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else
    return a + b;
}

template <typename T>
T mul(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    return a * b;
}

template <typename T>
T magnitude(T x) {
  if constexpr (std::is_unsigned_v<T>)
    return x;
  else
    return x < 0 ? static_cast<T>(0) - x : x;
}

// Smallest and largest value of dtype `t` in type T (infinities for floats): the results of
// ReduceMax and ReduceMin over an empty set.
template <typename T>
T lowest_of(DType t) {
  if constexpr (std::is_same_v<T, double>) {
    return -std::numeric_limits<double>::infinity();
  } else {
    switch (t) {
      case DType::i8:
        return std::numeric_limits<int8_t>::lowest();
      case DType::i16:
        return std::numeric_limits<int16_t>::lowest();
      case DType::i32:
        return std::numeric_limits<int32_t>::lowest();
      case DType::i64:
        return std::numeric_limits<int64_t>::lowest();
      default:
        return 0;  // unsigned and bool
    }
  }
}

template <typename T>
T highest_of(DType t) {
  if constexpr (std::is_same_v<T, double>) {
    return std::numeric_limits<double>::infinity();
  } else {
    switch (t) {
      case DType::i8:
        return std::numeric_limits<int8_t>::max();
      case DType::u8:
        return std::numeric_limits<uint8_t>::max();
      case DType::i16:
        return std::numeric_limits<int16_t>::max();
      case DType::u16:
        return std::numeric_limits<uint16_t>::max();
      case DType::i32:
        return std::numeric_limits<int32_t>::max();
      case DType::u32:
        return std::numeric_limits<uint32_t>::max();
      case DType::i64:
        return std::numeric_limits<int64_t>::max();
      case DType::u64:
        return static_cast<T>(std::numeric_limits<uint64_t>::max());
      default:
        return 1;  // bool
    }
  }
}

template <typename T>
bool is_nan(T x) {
  if constexpr (std::is_same_v<T, double>)
    return std::isnan(x);
  else
    return false;
}

// One reduction: its accumulator type, initial value, step and final map (count = set size).
template <typename T>
struct Sum {
  using Acc = T;
  static Acc init(DType) { return 0; }
  static Acc step(Acc a, Acc x) { return add(a, x); }
  static Acc finish(Acc a, int64_t) { return a; }
};

template <typename T>
struct Mean {
  using Acc = T;
  static Acc init(DType) { return 0; }
  static Acc step(Acc a, Acc x) { return add(a, x); }
  // Integer means truncate toward zero, as C division does.
  static Acc finish(Acc a, int64_t count) { return a / static_cast<Acc>(count); }
};

template <typename T>
struct Prod {
  using Acc = T;
  static Acc init(DType) { return 1; }
  static Acc step(Acc a, Acc x) { return mul(a, x); }
  static Acc finish(Acc a, int64_t) { return a; }
};

template <typename T>
struct SumSquare {
  using Acc = T;
  static Acc init(DType) { return 0; }
  static Acc step(Acc a, Acc x) { return add(a, mul(x, x)); }
  static Acc finish(Acc a, int64_t) { return a; }
};

template <typename T>
struct L1 {
  using Acc = T;
  static Acc init(DType) { return 0; }
  static Acc step(Acc a, Acc x) { return add(a, magnitude(x)); }
  static Acc finish(Acc a, int64_t) { return a; }
};

template <typename T>
struct L2 {
  using Acc = double;
  static Acc init(DType) { return 0; }
  static Acc step(Acc a, Acc x) { return a + x * x; }
  static Acc finish(Acc a, int64_t) { return std::sqrt(a); }
};

template <typename T>
struct LogSum {
  using Acc = double;
  static Acc init(DType) { return 0; }
  static Acc step(Acc a, Acc x) { return a + x; }
  static Acc finish(Acc a, int64_t) { return std::log(a); }
};

// Max and Min propagate NaN, as numpy's maximum/minimum do.
template <typename T>
struct Max {
  using Acc = T;
  static Acc init(DType t) { return lowest_of<T>(t); }
  static Acc step(Acc a, Acc x) { return is_nan(x) || x > a ? x : a; }
  static Acc finish(Acc a, int64_t) { return a; }
};

template <typename T>
struct Min {
  using Acc = T;
  static Acc init(DType t) { return highest_of<T>(t); }
  static Acc step(Acc a, Acc x) { return is_nan(x) || x < a ? x : a; }
  static Acc finish(Acc a, int64_t) { return a; }
};

ops::ReduceAxes axes_of(const KernelArgs& args) {
  const Tensor* axes_input =
      args.inputs.size() > 1 && args.inputs[1].defined() ? &args.inputs[1] : nullptr;
  return ops::reduce_axes(args.attrs, axes_input, args.inputs[0].rank());
}

// Folds every element of `x` into the accumulator of its output position (keepdims layout).
template <typename Op>
std::vector<typename Op::Acc> fold(const Tensor& x, const Shape& keep) {
  using Acc = typename Op::Acc;
  std::vector<Acc> acc(num_elements(keep), Op::init(x.dtype()));
  BroadcastIndex to_keep(keep, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    Acc& a = acc[to_keep(i)];
    a = Op::step(a, load<Acc>(x, i));
  }
  return acc;
}

template <template <typename> class Op>
void reduce_kernel(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& out = args.outputs[0];
  ops::ReduceAxes r = axes_of(args);
  if (r.noop) {
    std::memcpy(out.mutable_bytes(), x.bytes(), x.nbytes());
    return;
  }
  Shape keep = ops::reduce_keep_shape(x.shape(), r);
  int64_t count = num_elements(keep) == 0 ? 0 : x.numel() / num_elements(keep);
  with_value_type(x.dtype(), [&](auto zero) {
    using R = Op<decltype(zero)>;
    std::vector<typename R::Acc> acc = fold<R>(x, keep);
    for (int64_t i = 0; i < out.numel(); ++i) store(out, i, R::finish(acc[i], count));
  });
}

// log(sum(exp(x))), shifted by the set's maximum so that large inputs do not overflow.
void reduce_log_sum_exp(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& out = args.outputs[0];
  ops::ReduceAxes r = axes_of(args);
  if (r.noop) {
    std::memcpy(out.mutable_bytes(), x.bytes(), x.nbytes());
    return;
  }
  Shape keep = ops::reduce_keep_shape(x.shape(), r);
  std::vector<double> shift = fold<Max<double>>(x, keep);
  for (double& s : shift)
    if (!std::isfinite(s)) s = 0;  // all -inf, +inf or empty: no shift keeps the exact limit
  std::vector<double> sum(shift.size(), 0.0);
  BroadcastIndex to_keep(keep, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t o = to_keep(i);
    sum[o] += std::exp(x.get(i) - shift[o]);
  }
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, shift[i] + std::log(sum[i]));
}

template <bool kMax>
void arg_extreme(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& out = args.outputs[0];
  int64_t axis = ops::normalize_axis(attr_int(args.attrs, "axis", 0), x.rank());
  bool last = ops::attr_flag(args.attrs, "select_last_index", false);
  ops::AxisSplit s = ops::split_at_axis(x.shape(), axis);
  with_value_type(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t j = 0; j < s.inner; ++j) {
        int64_t best = 0;
        T best_value = load<T>(x, o * s.n * s.inner + j);
        for (int64_t k = 1; k < s.n; ++k) {
          T v = load<T>(x, (o * s.n + k) * s.inner + j);
          bool better = kMax ? v > best_value : v < best_value;
          if (better || (last && v == best_value)) {
            best = k;
            best_value = v;
          }
        }
        out.set_int(o * s.inner + j, best);
      }
  });
}

void cumsum(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& out = args.outputs[0];
  int64_t axis = ops::normalize_axis(args.inputs[1].get_int(0), x.rank());
  bool exclusive = ops::attr_flag(args.attrs, "exclusive", false);
  bool reverse = ops::attr_flag(args.attrs, "reverse", false);
  ops::AxisSplit s = ops::split_at_axis(x.shape(), axis);
  with_value_type(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t j = 0; j < s.inner; ++j) {
        T running = 0;
        for (int64_t step = 0; step < s.n; ++step) {
          int64_t k = reverse ? s.n - 1 - step : step;
          int64_t i = (o * s.n + k) * s.inner + j;
          T v = load<T>(x, i);
          if (!exclusive) running = add(running, v);
          store(out, i, running);
          if (exclusive) running = add(running, v);
        }
      }
  });
}

}  // namespace

void add_reduce_kernels(KernelTable& table) {
  table.insert(table.end(), {{"ReduceSum", reduce_kernel<Sum>},
                             {"ReduceMean", reduce_kernel<Mean>},
                             {"ReduceProd", reduce_kernel<Prod>},
                             {"ReduceSumSquare", reduce_kernel<SumSquare>},
                             {"ReduceL1", reduce_kernel<L1>},
                             {"ReduceL2", reduce_kernel<L2>},
                             {"ReduceLogSum", reduce_kernel<LogSum>},
                             {"ReduceLogSumExp", reduce_log_sum_exp},
                             {"ReduceMax", reduce_kernel<Max>},
                             {"ReduceMin", reduce_kernel<Min>},
                             {"ArgMax", arg_extreme<true>},
                             {"ArgMin", arg_extreme<false>},
                             {"CumSum", cumsum}});
}

}  // namespace orch::interp
