// Lowering: each primitive of a kernel graph becomes a Halide Func over the same Vars; Reduce
// and MatMul get an RDom; layout primitives index their input from their attributes.
#include <algorithm>
#include <cstring>
#include <set>

#include "codegen/halide/halide_lower.h"
#include "codegen/resize_taps.h"
#include "ir/error.h"
#include "ir/ops/prim.h"

namespace orch::codegen {
namespace {

// f16 and bf16 are stored as such and computed in f32.
bool is_half(DType t) {
  return t == DType::f16 || t == DType::bf16;
}

// The primitives Lowerer::lower_node handles.
const std::set<std::string_view> kLoweredOps = {
    "prim.Elementwise",   "prim.Reduce",    "prim.Broadcast", "prim.MatMul", "prim.Conv",
    "prim.ConvTranspose", "prim.Transpose", "prim.Reshape",   "prim.Slice",  "prim.Tile",
    "prim.Concat",        "prim.Resize",    "prim.Pad",       "prim.Gather", "prim.GatherElements"};

// Integer arithmetic whose edge cases (division by zero, floor vs truncation, shifts) Halide
// defines differently from the interpreter.
const std::set<std::string_view> kIntegerUnsafe = {"div", "mod", "fmod", "pow", "shl", "shr"};
// Elementwise functions whose result jumps where their input crosses a threshold.
const std::set<std::string_view> kSteps = {"round",         "floor", "ceil",    "sign",
                                           "equal",         "less",  "greater", "less_equal",
                                           "greater_equal", "mod",   "fmod"};

std::string node_reason(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (v == kNoValue) return "absent optional input";
  if (!prim::is_primitive(n.op)) return fmt::format("'{}' is not a primitive", n.op);
  if (kLoweredOps.count(n.op) == 0) return fmt::format("'{}' is not lowered", n.op);
  if (n.op == "prim.Elementwise") {
    std::string fn = attr_string(n.attrs, "fn", "");
    DType t = g.value(n.inputs[0]).type.dtype;
    if (fn == "mod" || fn == "fmod" || fn == "shl" || fn == "shr")
      return fmt::format("prim.Elementwise fn '{}' is not lowered", fn);
    if (!is_float(t) && kIntegerUnsafe.count(fn) != 0)
      return fmt::format("prim.Elementwise fn '{}' on {} is not lowered", fn, dtype_name(t));
    if (fn == "erf" && t != DType::f32 && !is_half(t))
      return fmt::format("erf on {} is not lowered", dtype_name(t));
    return "";
  }
  if (n.op == "prim.Resize") {
    if (attr_string(n.attrs, "coordinate_transformation_mode", "") == "tf_crop_and_resize")
      return "prim.Resize with tf_crop_and_resize is not lowered";
    DType t = g.value(n.inputs[0]).type.dtype;
    if (resize_interpolates(n.attrs) && !is_float(t))
      return fmt::format("interpolating prim.Resize on {} is not lowered", dtype_name(t));
  }
  if (n.op == "prim.Conv" || n.op == "prim.ConvTranspose") {
    DType t = g.value(n.inputs[0]).type.dtype;
    if (!is_float(t)) return fmt::format("{} on {} is not lowered", n.op, dtype_name(t));
  }
  return "";
}

}  // namespace

std::string halide_reject(const Graph& kernel) {
  std::string sizes = reject_kernel_sizes(kernel);
  if (!sizes.empty()) return sizes;
  for (NodeId id = 0; id < static_cast<NodeId>(kernel.num_nodes()); ++id) {
    std::string reason = node_reason(kernel, kernel.node(id));
    if (!reason.empty()) return fmt::format("{}: {}", kernel.describe(id), reason);
  }
  return "";
}

namespace halide_impl {
namespace {

using Halide::Expr;
using Halide::Func;

// The type a value is computed in: f16 and bf16 in f32, bool as Bool.
Halide::Type value_type(DType t) {
  if (is_half(t)) return Halide::Float(32);
  return t == DType::boolean ? Halide::Bool() : storage_type(t);
}

class Lowerer {
 public:
  Lowerer(const Graph& g, Lowered& out) : g_(g), out_(out), consumers_(g.consumers()) {}

  void run() {
    size_t max_rank = 0;
    for (const Value& v : g_.values()) max_rank = std::max(max_rank, v.type.shape.size());
    for (size_t k = 0; k < max_rank; ++k) out_.vars.emplace_back(fmt::format("x{}", k));
    out_.values.resize(g_.num_values());
    for (ValueId v = 0; v < static_cast<ValueId>(g_.num_values()); ++v)
      if (g_.value(v).is_constant()) bind_constant(v);
    for (ValueId v : g_.inputs()) bind_input(v);
    for (NodeId id = 0; id < static_cast<NodeId>(g_.num_nodes()); ++id) {
      try {
        lower_node(g_.node(id));
      } catch (const Error& e) {
        rethrow_with_context(e, g_.describe(id));
      }
    }
    for (size_t i = 0; i < g_.outputs().size(); ++i) {
      ValueId v = g_.outputs()[i];
      const TensorType& t = g_.value(v).type;
      Func f(fmt::format("out{}", i));
      f(pure(t.shape.size())) = Halide::cast(storage_type(t.dtype), load(v, index(t.shape.size())));
      // Pinned like the inputs: tile buffers get constant sizes and tails are known statically.
      pin(f.output_buffer(), t.shape);
      out_.outputs.push_back(f);
    }
    out_.pipeline = Halide::Pipeline(out_.outputs);
  }

 private:
  // Halide's pure vars for a value of `rank` dims (innermost first).
  std::vector<Halide::Var> pure(size_t rank) const {
    return {out_.vars.begin(), out_.vars.begin() + static_cast<std::ptrdiff_t>(rank)};
  }
  // The tensor-order coordinates of an output element: dim d is Halide var rank-1-d.
  std::vector<Expr> index(size_t rank) const {
    std::vector<Expr> idx;
    for (size_t d = 0; d < rank; ++d) idx.push_back(out_.vars[rank - 1 - d]);
    return idx;
  }
  // Value `v` at tensor-order coordinates `idx`.
  Expr load(ValueId v, const std::vector<Expr>& idx) const {
    const LoweredValue& lv = out_.values[v];
    if (lv.scalar.defined()) return lv.scalar;
    check(lv.func.defined(), "value '{}' is not lowered", g_.value(v).name);
    std::vector<Expr> args(idx.rbegin(), idx.rend());
    const Value& value = g_.value(v);
    // A computed f16/bf16 value is rounded to its type, as the interpreter stores it.
    if (is_half(value.type.dtype) && value.producer != kNoNode)
      return Halide::cast<float>(Halide::cast(storage_type(value.type.dtype), lv.func(args)));
    return lv.func(args);
  }
  // Value `v` (rank >= 1) as a Func of tensor coordinates as `load` reads it (inlined).
  Func loader(ValueId v) const {
    size_t rank = shape(v).size();
    Func f(sanitize(g_.value(v).name) + "_read");
    f(pure(rank)) = load(v, index(rank));
    return f;
  }
  const Shape& shape(ValueId v) const { return g_.value(v).type.shape; }
  static int dim(int64_t d) { return static_cast<int>(d); }

  void define(ValueId v, Expr e) {
    size_t rank = shape(v).size();
    Func f(sanitize(g_.value(v).name));
    f(pure(rank)) = e;
    out_.values[v].func = f;
    out_.values[v].rank = static_cast<int>(rank);
  }
  static std::string sanitize(const std::string& name) {
    std::string s = "v_";
    for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return s;
  }

  // From a stored element to its value type (bool bytes become Bool).
  static Expr from_storage(Expr e, DType t) {
    if (is_half(t)) return Halide::cast<float>(e);
    return t == DType::boolean ? e != Halide::cast(e.type(), 0) : e;
  }

  void bind_constant(ValueId v) {
    const Value& val = g_.value(v);
    const Tensor& data = val.constant;
    if (data.rank() == 0) return immediate(v, data);
    Halide::Type st = storage_type(val.type.dtype);
    std::vector<int> sizes(data.shape().rbegin(), data.shape().rend());
    Halide::Buffer<> buf(st, sizes, sanitize(val.name));
    std::memcpy(buf.data(), data.bytes(), data.nbytes());
    std::vector<Halide::Var> vars = pure(sizes.size());
    define(v, from_storage(buf(std::vector<Expr>(vars.begin(), vars.end())), val.type.dtype));
  }
  // Rank-0 constants as literal immediates.
  void immediate(ValueId v, const Tensor& data) {
    DType t = data.dtype();
    Halide::Type vt = value_type(t);
    Expr e = is_float(t)           ? Halide::cast(vt, Expr(data.get(0)))
             : t == DType::boolean ? Halide::cast(vt, Expr(static_cast<int>(data.get_int(0) != 0)))
                                   : Halide::cast(vt, Expr(data.get_int(0)));
    out_.values[v].scalar = e;
  }

  // Pins every dim of a buffer to the kernel's static row-major shape: Halide folds the extents
  // and strides.
  template <typename Buffer>
  static void pin(Buffer&& b, const Shape& shape) {
    size_t rank = shape.size();
    int64_t stride = 1;
    for (size_t k = 0; k < rank; ++k) {
      int64_t extent = shape[rank - 1 - k];
      b.dim(static_cast<int>(k)).set_bounds(0, dim(extent)).set_stride(dim(stride));
      stride *= extent;
    }
  }

  void bind_input(ValueId v) {
    const Value& val = g_.value(v);
    size_t rank = val.type.shape.size();
    Halide::ImageParam p(storage_type(val.type.dtype), static_cast<int>(rank),
                         fmt::format("in{}", out_.params.size()));
    pin(p, val.type.shape);
    out_.params.push_back(p);
    define(v, from_storage(p(pure(rank)), val.type.dtype));
  }

  void lower_node(const Node& n) {
    std::string reason = node_reason(g_, n);
    if (!reason.empty()) throw Unsupported(reason);
    ValueId y = n.outputs[0];
    const Shape& ys = shape(y);
    std::vector<Expr> idx = index(ys.size());
    if (n.op == "prim.Elementwise") return define(y, elementwise(n, idx));
    if (n.op == "prim.Reduce") return reduce(n);
    if (n.op == "prim.MatMul") return matmul(n);
    if (n.op == "prim.Conv" || n.op == "prim.ConvTranspose") {
      ValueId x = n.inputs[0], w = n.inputs[1];
      ConvLowering c = lower_conv(n, loader(x), shape(x), loader(w), shape(w), ys, out_.vars,
                                  sanitize(g_.value(y).name));
      out_.values[y] = {c.func, Expr(), c.rdom, static_cast<int>(ys.size())};
      return;
    }
    if (n.op == "prim.Broadcast") {
      std::vector<Expr> in = idx;
      for (size_t d = 0; d < ys.size(); ++d)
        if (shape(n.inputs[0])[d] != ys[d]) in[d] = 0;
      return define(y, load(n.inputs[0], in));
    }
    if (n.op == "prim.Transpose") {
      std::vector<int64_t> perm = attr_ints(n.attrs, "perm");
      if (perm.empty())
        for (size_t i = 0; i < ys.size(); ++i) perm.push_back(ys.size() - 1 - i);
      std::vector<Expr> in(ys.size());
      for (size_t i = 0; i < perm.size(); ++i) in[perm[i]] = idx[i];
      return define(y, load(n.inputs[0], in));
    }
    if (n.op == "prim.Reshape")
      return define(y,
                    load(n.inputs[0], reshape_index(shape(n.inputs[0]), shape(n.outputs[0]), idx)));
    if (n.op == "prim.Slice") {
      std::vector<int64_t> starts = attr_ints(n.attrs, "starts");
      std::vector<int64_t> steps = attr_ints(n.attrs, "steps");
      std::vector<Expr> in;
      for (size_t d = 0; d < ys.size(); ++d) in.push_back(idx[d] * dim(steps[d]) + dim(starts[d]));
      return define(y, load(n.inputs[0], in));
    }
    if (n.op == "prim.Tile") {
      std::vector<Expr> in;
      for (size_t d = 0; d < ys.size(); ++d)
        in.push_back(idx[d] % dim(std::max<int64_t>(shape(n.inputs[0])[d], 1)));
      return define(y, load(n.inputs[0], in));
    }
    if (n.op == "prim.Concat") return define(y, concat(n, idx));
    if (n.op == "prim.Resize") return resize(n);
    if (n.op == "prim.Pad") return define(y, pad(n, idx));
    if (n.op == "prim.Gather") return define(y, gather(n, idx));
    if (n.op == "prim.GatherElements") {
      size_t ax = normalize(attr_int(n.attrs, "axis", 0), ys.size());
      std::vector<Expr> in = idx;
      in[ax] = data_index(load(n.inputs[1], idx), shape(n.inputs[0])[ax]);
      return define(y, load(n.inputs[0], in));
    }
    unsupported("'{}' is not lowered", n.op);
  }

  static size_t normalize(int64_t axis, size_t rank) {
    return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
  }

  // A data index into a dim of `n`: negatives count from the end; clamped so that Halide's
  // bounds inference stays inside the input (the interpreter rejects out-of-range indices).
  static Expr data_index(Expr i, int64_t n) {
    Expr k = Halide::cast<int>(i);
    k = Halide::select(k < 0, k + dim(n), k);
    return Halide::clamp(k, 0, dim(n) - 1);
  }

  // Whether input 1 of `n` is a scalar or a broadcast along the innermost dim (one value per
  // row: softmax's sum, LayerNorm's deviation).
  bool invariant_divisor(const Node& n) const {
    ValueId d = n.inputs[1];
    if (shape(d).empty()) return true;
    NodeId p = g_.value(d).producer;
    if (p == kNoNode || g_.node(p).op != "prim.Broadcast") return false;
    const Shape& from = shape(g_.node(p).inputs[0]);
    return from.size() == shape(d).size() && from.back() == 1 && shape(d).back() > 1;
  }
  // Whether a reader of `n`'s result rounds it, truncates it or compares it, where a value an
  // ulp off can move the result a whole step: QuantizeLinear's round(x / scale) was one off.
  bool feeds_a_step(const Node& n) const {
    for (NodeId c : consumers_[static_cast<size_t>(n.outputs[0])]) {
      const Node& r = g_.node(c);
      if (r.op != "prim.Elementwise") continue;
      std::string fn = attr_string(r.attrs, "fn", "");
      if (kSteps.contains(fn)) return true;
      if (fn == "cast" && !is_float(g_.value(r.outputs[0]).type.dtype)) return true;
    }
    return false;
  }
  // Input 1 of `n` at `idx`, a broadcast read from its source (the inverse then depends on the
  // outer coordinates only, and Halide hoists it out of the innermost loop).
  Expr divisor(const Node& n, const std::vector<Expr>& idx) const {
    ValueId d = n.inputs[1];
    if (shape(d).empty()) return load(d, {});
    ValueId from = g_.node(g_.value(d).producer).inputs[0];
    std::vector<Expr> in = idx;
    for (size_t k = 0; k < in.size(); ++k)
      if (shape(from)[k] != shape(d)[k]) in[k] = 0;
    return load(from, in);
  }

  Expr elementwise(const Node& n, const std::vector<Expr>& idx) {
    std::vector<Expr> a;
    for (ValueId v : n.inputs) a.push_back(load(v, shape(v).empty() ? std::vector<Expr>{} : idx));
    std::string fn = attr_string(n.attrs, "fn", "");
    Halide::Type t = a[0].type();
    Expr zero = Halide::cast(t, 0);
    Expr one = Halide::cast(t, 1);
    if (fn == "add") return a[0] + a[1];
    if (fn == "sub") return a[0] - a[1];
    if (fn == "mul") return a[0] * a[1];
    if (fn == "div") {
      // A rounded or compared quotient must be the correctly rounded one: Halide's fast float
      // math may divide by a constant as a multiply by its inverse.
      if (t.is_float() && feeds_a_step(n)) return Halide::strict_float(a[0] / a[1]);
      // A divisor constant along the innermost (vector) dim is inverted once per row: a
      // multiply costs a fraction of a vector divide (within an ulp or so of the quotient).
      if (t.is_float() && invariant_divisor(n)) return a[0] * (one / divisor(n, idx));
      return a[0] / a[1];
    }
    if (fn == "pow") return Halide::pow(a[0], a[1]);
    if (fn == "min" || fn == "max") {
      Expr r = a[0];
      for (size_t i = 1; i < a.size(); ++i)
        r = fn == "min" ? Halide::min(r, a[i]) : Halide::max(r, a[i]);
      return r;
    }
    if (fn == "neg") return -a[0];
    if (fn == "abs") return Halide::cast(t, Halide::abs(a[0]));
    if (fn == "sign") return Halide::select(a[0] > zero, one, a[0] < zero, -one, zero);
    if (fn == "relu") return Halide::max(a[0], zero);
    if (fn == "reciprocal") return one / a[0];
    if (fn == "sigmoid")
      return t == Halide::Float(32) ? vector_sigmoid(a[0]) : one / (one + Halide::exp(-a[0]));
    if (fn == "sqrt") return Halide::sqrt(a[0]);
    if (fn == "exp") return Halide::exp(a[0]);
    if (fn == "log") return Halide::log(a[0]);
    if (fn == "erf") return Halide::erf(a[0]);
    if (fn == "tanh") return t == Halide::Float(32) ? vector_tanh(a[0]) : Halide::tanh(a[0]);
    if (fn == "floor") return Halide::floor(a[0]);
    if (fn == "ceil") return Halide::ceil(a[0]);
    if (fn == "round") return Halide::round(a[0]);
    if (fn == "sin") return Halide::sin(a[0]);
    if (fn == "cos") return Halide::cos(a[0]);
    if (fn == "tan") return Halide::tan(a[0]);
    if (fn == "asin") return Halide::asin(a[0]);
    if (fn == "acos") return Halide::acos(a[0]);
    if (fn == "atan") return Halide::atan(a[0]);
    if (fn == "sinh") return t == Halide::Float(32) ? vector_sinh(a[0]) : Halide::sinh(a[0]);
    if (fn == "cosh") return t == Halide::Float(32) ? vector_cosh(a[0]) : Halide::cosh(a[0]);
    if (fn == "asinh") return Halide::asinh(a[0]);
    if (fn == "acosh") return Halide::acosh(a[0]);
    if (fn == "atanh") return Halide::atanh(a[0]);
    if (fn == "equal") return a[0] == a[1];
    if (fn == "less") return a[0] < a[1];
    if (fn == "greater") return a[0] > a[1];
    if (fn == "less_equal") return a[0] <= a[1];
    if (fn == "greater_equal") return a[0] >= a[1];
    if (fn == "and") return a[0] && a[1];
    if (fn == "or") return a[0] || a[1];
    if (fn == "xor") return a[0] != a[1];
    if (fn == "not") return !a[0];
    if (fn == "where") return Halide::select(a[0], a[1], a[2]);
    if (fn == "isnan") return Halide::is_nan(a[0]);
    if (fn == "isinf") return Halide::is_inf(a[0]);
    if (fn == "isposinf") return Halide::is_inf(a[0]) && a[0] > zero;
    if (fn == "isneginf") return Halide::is_inf(a[0]) && a[0] < zero;
    if (fn == "identity") return a[0];
    if (fn == "cast") {
      DType to = g_.value(n.outputs[0]).type.dtype;
      if (to == DType::boolean) return a[0] != zero;
      if (t.is_bool())
        return Halide::select(a[0], Halide::cast(value_type(to), 1),
                              Halide::cast(value_type(to), 0));
      return Halide::cast(value_type(to), a[0]);
    }
    unsupported("prim.Elementwise fn '{}' is not lowered", fn);
  }

  void reduce(const Node& n) {
    ValueId x = n.inputs[0];
    ValueId y = n.outputs[0];
    const Shape& xs = shape(x);
    std::vector<int64_t> axes = attr_ints(n.attrs, "axes");
    for (int64_t& a : axes) a = static_cast<int64_t>(normalize(a, xs.size()));
    std::sort(axes.begin(), axes.end());
    // RDom dim 0 is the innermost loop: the last reduced tensor dim.
    std::vector<Halide::Range> ranges;
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) ranges.emplace_back(0, dim(xs[*it]));
    Halide::RDom r(ranges, sanitize(g_.value(y).name) + "_r");
    std::vector<Expr> in = index(xs.size());
    for (size_t i = 0; i < axes.size(); ++i) in[axes[i]] = r[static_cast<int>(axes.size() - 1 - i)];
    Expr e = load(x, in);
    Halide::Type t = e.type();
    std::string kind = attr_string(n.attrs, "kind", "");
    Expr init = kind == "sum"    ? Halide::cast(t, 0)
                : kind == "prod" ? Halide::cast(t, 1)
                : kind == "max"  ? t.min()
                                 : t.max();
    Func f(sanitize(g_.value(y).name));
    std::vector<Halide::Var> vars = pure(xs.size());
    f(vars) = init;
    std::vector<Expr> lhs(vars.begin(), vars.end());
    Expr cur = f(lhs);
    f(lhs) = kind == "sum"    ? cur + e
             : kind == "prod" ? cur * e
             : kind == "max"  ? Halide::max(cur, e)
                              : Halide::min(cur, e);
    out_.values[y] = {f, Expr(), r, static_cast<int>(xs.size())};
  }

  void matmul(const Node& n) {
    ValueId y = n.outputs[0];
    const Shape& as = shape(n.inputs[0]);
    size_t rank = as.size();
    Halide::RDom r(0, dim(as[rank - 1]), sanitize(g_.value(y).name) + "_k");
    std::vector<Expr> idx = index(rank);
    std::vector<Expr> ai = idx, bi = idx;
    ai[rank - 1] = r.x;
    bi[rank - 2] = r.x;
    Expr prod = load(n.inputs[0], ai) * load(n.inputs[1], bi);
    Func f(sanitize(g_.value(y).name));
    std::vector<Halide::Var> vars = pure(rank);
    f(vars) = Halide::cast(prod.type(), 0);
    std::vector<Expr> lhs(vars.begin(), vars.end());
    f(lhs) = f(lhs) + prod;
    out_.values[y] = {f, Expr(), r, static_cast<int>(rank)};
  }

  // One weighted gather stage per resampled axis; stages inline into the value's Func.
  void resize(const Node& n) {
    ValueId x = n.inputs[0];
    ValueId y = n.outputs[0];
    std::vector<ResizeTaps> axes = resize_taps(n.attrs, g_.value(x).type);
    bool interpolate = resize_interpolates(n.attrs);
    Shape cur_shape = shape(x);
    size_t rank = cur_shape.size();
    std::vector<Expr> idx = index(rank);
    Func cur = loader(x);
    for (size_t d = 0; d < rank; ++d) {
      const ResizeTaps& t = axes[d];
      if (t.identity) continue;
      cur = resize_axis(cur, pure(rank), d, t, cur_shape[d], shape(y)[d], interpolate,
                        sanitize(g_.value(y).name) + "_axis" + std::to_string(d));
      cur_shape[d] = shape(y)[d];
    }
    define(y, cur(std::vector<Expr>(idx.rbegin(), idx.rend())));
  }

  Expr concat(const Node& n, const std::vector<Expr>& idx) {
    size_t ax = normalize(attr_int(n.attrs, "axis", 0), idx.size());
    // Each piece is read with its coordinate clamped into range, then selected by position.
    Expr result;
    int64_t offset = 0;
    std::vector<std::pair<Expr, Expr>> pieces;
    for (ValueId v : n.inputs) {
      int64_t size = shape(v)[ax];
      if (size == 0) continue;
      std::vector<Expr> in = idx;
      in[ax] = Halide::clamp(idx[ax] - dim(offset), 0, dim(size) - 1);
      offset += size;
      pieces.emplace_back(idx[ax] < dim(offset), load(v, in));
    }
    result = pieces.back().second;
    for (size_t i = pieces.size() - 1; i-- > 0;)
      result = Halide::select(pieces[i].first, pieces[i].second, result);
    return result;
  }

  Expr pad(const Node& n, const std::vector<Expr>& idx) {
    const Shape& xs = shape(n.inputs[0]);
    std::vector<int64_t> pads = attr_ints(n.attrs, "pads");
    std::string mode = attr_string(n.attrs, "mode", "constant");
    size_t rank = xs.size();
    std::vector<Expr> in(rank);
    Expr inside = Halide::cast<bool>(true);
    for (size_t d = 0; d < rank; ++d) {
      // An unpadded dim passes its index through: any boundary expression there would make
      // Halide's bounds inference ask a tile for the whole dim of the Pad's producer.
      if (pads[d] == 0 && pads[d + rank] == 0) {
        in[d] = idx[d];
        continue;
      }
      int size = dim(xs[d]);
      Expr i = idx[d] - dim(pads[d]);
      if (mode == "reflect" && size > 1) i = reflect(i, size, std::max(pads[d], pads[d + rank]));
      if (mode == "constant") inside = inside && i >= 0 && i < size;
      in[d] = Halide::clamp(i, 0, size - 1);
    }
    Expr x = load(n.inputs[0], in);
    if (mode != "constant") return x;
    return Halide::select(inside, x, Halide::cast(x.type(), attr_float(n.attrs, "value", 0.0f)));
  }

  // Index `i` of [-pad, size + pad) reflected into [0, size) without repeating the edge. With
  // pad < size (what ONNX asks) one reflection on each side does, written with abs so that
  // bounds inference maps a tile of rows to the rows it reads; a wider pad needs the periodic
  // form, whose bounds are the whole dim.
  static Expr reflect(Expr i, int size, int64_t pad) {
    if (pad < size) {
      Expr last = size - 1;
      return last - Halide::cast<int>(Halide::abs(last - Halide::cast<int>(Halide::abs(i))));
    }
    int period = 2 * (size - 1);
    Expr m = i % period;  // Halide's % by a positive constant is Euclidean
    return Halide::select(m < size, m, period - m);
  }

  Expr gather(const Node& n, const std::vector<Expr>& idx) {
    const Shape& xs = shape(n.inputs[0]);
    size_t q = shape(n.inputs[1]).size();
    size_t ax = normalize(attr_int(n.attrs, "axis", 0), xs.size());
    std::vector<Expr> ii(idx.begin() + static_cast<std::ptrdiff_t>(ax),
                         idx.begin() + static_cast<std::ptrdiff_t>(ax + q));
    std::vector<Expr> in;
    for (size_t d = 0; d < xs.size(); ++d)
      in.push_back(d < ax    ? idx[d]
                   : d == ax ? data_index(load(n.inputs[1], ii), xs[ax])
                             : idx[d - 1 + q]);
    return load(n.inputs[0], in);
  }

  const Graph& g_;
  Lowered& out_;
  std::vector<std::vector<NodeId>> consumers_;
};

}  // namespace

Halide::Type storage_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return Halide::Float(32);
    case DType::f64:
      return Halide::Float(64);
    case DType::f16:
      return Halide::Float(16);
    case DType::bf16:
      return Halide::BFloat(16);
    case DType::i8:
      return Halide::Int(8);
    case DType::u8:
      return Halide::UInt(8);
    case DType::i16:
      return Halide::Int(16);
    case DType::u16:
      return Halide::UInt(16);
    case DType::i32:
      return Halide::Int(32);
    case DType::u32:
      return Halide::UInt(32);
    case DType::i64:
      return Halide::Int(64);
    case DType::u64:
      return Halide::UInt(64);
    case DType::boolean:
      return Halide::UInt(8);
    default:
      unsupported("dtype {} is not lowered", dtype_name(dtype));
  }
}

Lowered lower_kernel(const Graph& kernel) {
  std::string reason = halide_reject(kernel);
  if (!reason.empty()) throw Unsupported(reason);
  Lowered lowered;
  Lowerer(kernel, lowered).run();
  return lowered;
}

}  // namespace halide_impl
}  // namespace orch::codegen
