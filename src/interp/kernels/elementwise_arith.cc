// Type-exact elementwise kernels. Each element is read as the C++ type that holds its dtype
// exactly: double for floats, int64_t for signed integers, uint64_t for unsigned integers and
// bool. Integer +, -, * wrap like the fixed-width dtype (the store truncates to its width);
// integer division truncates toward zero; an integer division or modulo by zero gives 0 (as
// numpy does) rather than trapping.
#include <cmath>
#include <optional>
#include <type_traits>

#include "interp/kernels/elementwise_parts.h"
#include "interp/kernels/util.h"
#include "ir/error.h"

namespace orch::interp {
namespace {

template <class T>
constexpr bool kIsFloat = std::is_floating_point_v<T>;

template <class T>
T load(const Tensor& t, int64_t i) {
  if constexpr (kIsFloat<T>)
    return t.get(i);
  else
    return static_cast<T>(t.get_int(i));
}

template <class T>
void store(Tensor& t, int64_t i, T v) {
  if constexpr (kIsFloat<T>)
    t.set(i, v);
  else
    t.set_int(i, static_cast<int64_t>(v));
}

// Calls `f` with a value of the C++ type that holds `dtype` exactly.
template <class F>
void with_type(DType dtype, F&& f) {
  if (is_float(dtype))
    f(double{});
  else if (is_signed_int(dtype))
    f(int64_t{});
  else
    f(uint64_t{});
}

template <class T>
bool is_nan(T v) {
  if constexpr (kIsFloat<T>)
    return std::isnan(v);
  else
    return false;
}

template <class T>
bool is_negative(T v) {
  if constexpr (std::is_unsigned_v<T>)
    return false;
  else
    return v < 0;
}

// Integer +, -, * run in uint64_t: two's-complement wrap-around without signed-overflow UB.
template <class T>
T wrap(uint64_t v) {
  return static_cast<T>(v);
}

struct Add {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>)
      return a + b;
    else
      return wrap<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
};

struct Sub {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>)
      return a - b;
    else
      return wrap<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  }
};

struct Mul {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>)
      return a * b;
    else
      return wrap<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  }
};

struct Div {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      return a / b;
    } else {
      if (b == 0) return 0;
      // INT64_MIN / -1 overflows: negate with wrap-around instead.
      if (is_negative(b) && b == static_cast<T>(-1)) return wrap<T>(0 - static_cast<uint64_t>(a));
      return a / b;
    }
  }
};

// Mod with fmod = 1: the remainder takes the sign of the dividend (C fmod / %).
struct ModTrunc {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      return std::fmod(a, b);
    } else {
      if (b == 0 || (is_negative(b) && b == static_cast<T>(-1))) return 0;
      return a % b;
    }
  }
};

// Mod with fmod = 0: the remainder takes the sign of the divisor (Python %).
struct ModFloor {
  template <class T>
  T operator()(T a, T b) const {
    T r = ModTrunc{}(a, b);
    if (r != 0 && is_negative(r) != is_negative(b)) r = Add{}(r, b);
    return r;
  }
};

// Max and Min propagate NaN, like numpy's maximum/minimum.
struct Max {
  template <class T>
  T operator()(T a, T b) const {
    return is_nan(a) || a >= b ? a : b;
  }
};

struct Min {
  template <class T>
  T operator()(T a, T b) const {
    return is_nan(a) || a <= b ? a : b;
  }
};

struct Equal {
  template <class T>
  bool operator()(T a, T b) const {
    return a == b;
  }
};

struct Less {
  template <class T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};

struct LessOrEqual {
  template <class T>
  bool operator()(T a, T b) const {
    return a <= b;
  }
};

struct Greater {
  template <class T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};

struct GreaterOrEqual {
  template <class T>
  bool operator()(T a, T b) const {
    return a >= b;
  }
};

struct And {
  template <class T>
  bool operator()(T a, T b) const {
    return a != 0 && b != 0;
  }
};

struct Or {
  template <class T>
  bool operator()(T a, T b) const {
    return a != 0 || b != 0;
  }
};

struct Xor {
  template <class T>
  bool operator()(T a, T b) const {
    return (a != 0) != (b != 0);
  }
};

struct ShiftLeft {
  uint64_t operator()(uint64_t a, uint64_t b) const { return b >= 64 ? 0 : a << b; }
};

struct ShiftRight {
  uint64_t operator()(uint64_t a, uint64_t b) const { return b >= 64 ? 0 : a >> b; }
};

struct Not {
  template <class T>
  bool operator()(T x) const {
    return x == 0;
  }
};

struct Relu {
  template <class T>
  T operator()(T x) const {
    return is_negative(x) ? T{0} : x;
  }
};

struct Neg {
  template <class T>
  T operator()(T x) const {
    if constexpr (kIsFloat<T>)
      return -x;
    else
      return wrap<T>(0 - static_cast<uint64_t>(x));
  }
};

struct Abs {
  template <class T>
  T operator()(T x) const {
    return is_negative(x) ? Neg{}(x) : x;
  }
};

struct Sign {
  template <class T>
  T operator()(T x) const {
    if (is_negative(x)) return static_cast<T>(-1);
    return x > 0 ? T{1} : x;  // keeps 0 and NaN
  }
};

template <class T, class Op>
void binary_as(KernelArgs& args) {
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  Tensor& out = args.outputs[0];
  BroadcastIndex ia(a.shape(), out.shape());
  BroadcastIndex ib(b.shape(), out.shape());
  for (int64_t i = 0; i < out.numel(); ++i)
    store(out, i, Op{}(load<T>(a, ia(i)), load<T>(b, ib(i))));
}

template <class Op>
void binary(KernelArgs& args) {
  with_type(args.inputs[0].dtype(), [&](auto tag) { binary_as<decltype(tag), Op>(args); });
}

template <class Op>
void unary(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& out = args.outputs[0];
  with_type(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < out.numel(); ++i) store(out, i, Op{}(load<T>(x, i)));
  });
}

// Min and Max over any number of broadcast inputs.
template <class Op>
void fold(KernelArgs& args) {
  Tensor& out = args.outputs[0];
  std::vector<BroadcastIndex> index;
  for (const Tensor& in : args.inputs) index.emplace_back(in.shape(), out.shape());
  with_type(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < out.numel(); ++i) {
      T acc = load<T>(args.inputs[0], index[0](i));
      for (size_t k = 1; k < args.inputs.size(); ++k)
        acc = Op{}(acc, load<T>(args.inputs[k], index[k](i)));
      store(out, i, acc);
    }
  });
}

// Sum and Mean (float only) accumulate in double.
template <bool kMean>
void sum(KernelArgs& args) {
  Tensor& out = args.outputs[0];
  std::vector<BroadcastIndex> index;
  for (const Tensor& in : args.inputs) index.emplace_back(in.shape(), out.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    double acc = 0;
    for (size_t k = 0; k < args.inputs.size(); ++k) acc += args.inputs[k].get(index[k](i));
    out.set(i, kMean ? acc / static_cast<double>(args.inputs.size()) : acc);
  }
}

void mod(KernelArgs& args) {
  if (attr_int(args.attrs, "fmod", 0) == 1)
    binary<ModTrunc>(args);
  else
    binary<ModFloor>(args);
}

void bitshift(KernelArgs& args) {
  if (attr_string(args.attrs, "direction", "") == "LEFT")
    binary_as<uint64_t, ShiftLeft>(args);
  else
    binary_as<uint64_t, ShiftRight>(args);
}

// Integer power by squaring; wraps like repeated integer multiplication.
int64_t int_pow(int64_t base, uint64_t exponent) {
  uint64_t result = 1;
  uint64_t b = static_cast<uint64_t>(base);
  for (; exponent != 0; exponent >>= 1, b *= b)
    if (exponent & 1) result *= b;
  return static_cast<int64_t>(result);
}

// Z has X's dtype; Y may have another. Integer X and Y give an exact integer power; any other
// mix (and negative integer exponents) is the real power, truncated when Z is an integer.
void pow(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& y = args.inputs[1];
  Tensor& out = args.outputs[0];
  BroadcastIndex ix(x.shape(), out.shape());
  BroadcastIndex iy(y.shape(), out.shape());
  bool integer_power = is_integer(x.dtype()) && is_integer(y.dtype());
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t e = y.get_int(iy(i));
    if (integer_power && (is_unsigned_int(y.dtype()) || e >= 0))
      out.set_int(i, int_pow(x.get_int(ix(i)), static_cast<uint64_t>(e)));
    else
      out.set(i, std::pow(x.get(ix(i)), y.get(iy(i))));
  }
}

// min and max are optional single-element inputs; min > max yields max, as ONNX specifies.
void clip(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& out = args.outputs[0];
  auto bound = [&](size_t slot) {
    return slot < args.inputs.size() && args.inputs[slot].defined() ? &args.inputs[slot] : nullptr;
  };
  const Tensor* lo = bound(1);
  const Tensor* hi = bound(2);
  with_type(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < out.numel(); ++i) {
      T v = load<T>(x, i);
      if (lo && v < load<T>(*lo, 0)) v = load<T>(*lo, 0);
      if (hi && v > load<T>(*hi, 0)) v = load<T>(*hi, 0);
      store(out, i, v);
    }
  });
}

// The slope broadcasts to X's shape.
void prelu(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& slope = args.inputs[1];
  Tensor& out = args.outputs[0];
  BroadcastIndex is(slope.shape(), out.shape());
  with_type(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < out.numel(); ++i) {
      T v = load<T>(x, i);
      store(out, i, is_negative(v) ? Mul{}(v, load<T>(slope, is(i))) : v);
    }
  });
}

}  // namespace

void add_elementwise_arith_kernels(KernelTable& table) {
  table.insert(table.end(), {{"Add", binary<Add>},
                             {"Sub", binary<Sub>},
                             {"Mul", binary<Mul>},
                             {"Div", binary<Div>},
                             {"Mod", mod},
                             {"Pow", pow},
                             {"BitShift", bitshift},
                             {"Equal", binary<Equal>},
                             {"Less", binary<Less>},
                             {"LessOrEqual", binary<LessOrEqual>},
                             {"Greater", binary<Greater>},
                             {"GreaterOrEqual", binary<GreaterOrEqual>},
                             {"And", binary<And>},
                             {"Or", binary<Or>},
                             {"Xor", binary<Xor>},
                             {"Not", unary<Not>},
                             {"Relu", unary<Relu>},
                             {"Neg", unary<Neg>},
                             {"Abs", unary<Abs>},
                             {"Sign", unary<Sign>},
                             {"Max", fold<Max>},
                             {"Min", fold<Min>},
                             {"Sum", sum<false>},
                             {"Mean", sum<true>},
                             {"Clip", clip},
                             {"PRelu", prelu}});
}

}  // namespace orch::interp
