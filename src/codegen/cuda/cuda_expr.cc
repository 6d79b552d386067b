// Per-element code of one phase: each primitive's value at output coordinates, as statements.
// Producers are inlined (read at the coordinates their consumer needs); a read of the same value
// at the same coordinates is computed once (memoized per loop scope); a statement goes to the
// outermost reduction loop whose variables it reads, so what a loop does not change is hoisted
// out of it. Every read is in bounds: data-dependent and padded coordinates are clamped before
// the read and out-of-range reads are selected away afterwards (as the Halide backend does).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "codegen/cuda/cuda_impl.h"
#include "ir/error.h"
#include "ir/ops/prim.h"

namespace orch::codegen::cuda_impl {
namespace {

using Ix = CExpr;

Ix constant(int64_t c) {
  return {std::to_string(c), 0};
}

Ix add(const Ix& a, const Ix& b) {
  if (a.text == "0") return b;
  if (b.text == "0") return a;
  return {fmt::format("({} + {})", a.text, b.text), std::max(a.depth, b.depth)};
}

Ix add(const Ix& a, int64_t c) {
  if (c == 0) return a;
  return {fmt::format("({} {} {})", a.text, c < 0 ? "-" : "+", c < 0 ? -c : c), a.depth};
}

Ix mul(const Ix& a, int64_t c) {
  if (c == 0 || a.text == "0") return constant(0);
  if (c == 1) return a;
  return {fmt::format("({} * {})", a.text, c), a.depth};
}

Ix div(const Ix& a, int64_t c) {
  if (c == 1) return a;
  return {fmt::format("({} / {})", a.text, c), a.depth};
}

Ix mod(const Ix& a, int64_t c) {
  if (c == 1) return constant(0);
  return {fmt::format("({} % {})", a.text, c), a.depth};
}

Ix clamp(const Ix& a, int64_t lo, int64_t hi) {
  return {fmt::format("orch_clamp({}, {}, {})", a.text, lo, hi), a.depth};
}

size_t normalize(int64_t axis, size_t rank) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

// A condition list joined with &&; "" when empty.
void also(Ix& cond, const Ix& c) {
  cond.text = cond.text.empty() ? c.text : fmt::format("{} && {}", cond.text, c.text);
  cond.depth = std::max(cond.depth, c.depth);
}

}  // namespace

PhaseEmitter::PhaseEmitter(const Graph& kernel, const std::vector<ValueHome>& homes,
                           Globals& globals)
    : g_(kernel), homes_(homes), globals_(globals) {
  scopes_.emplace_back();
}

std::string PhaseEmitter::compute(ValueId v, const std::vector<std::string>& coords) {
  std::vector<Ix> idx;
  for (const std::string& c : coords) idx.push_back({c, 0});
  Ix e = define(v, idx);
  return e.text;
}

std::string PhaseEmitter::read(ValueId v, const std::vector<std::string>& coords) {
  std::vector<Ix> idx;
  for (const std::string& c : coords) idx.push_back({c, 0});
  return at(v, idx).text;
}

std::string PhaseEmitter::code() const {
  std::string s;
  for (const std::string& line : scopes_[0].lines) s += line + "\n";
  return s;
}

void PhaseEmitter::emit(int depth, std::string line) {
  scopes_[static_cast<size_t>(depth)].lines.push_back(std::move(line));
}

PhaseEmitter::Ix PhaseEmitter::open_loop(int64_t extent) {
  std::string var = fmt::format("r{}", next_++);
  loop_headers_.push_back(fmt::format("for (long long {0} = 0; {0} < {1}; ++{0}) {{", var, extent));
  scopes_.emplace_back();
  return {var, static_cast<int>(scopes_.size()) - 1};
}

void PhaseEmitter::accumulate_into(ValueId value, std::string acc,
                                   std::vector<std::string> loop_vars) {
  external_ = External{value, std::move(acc), std::move(loop_vars)};
}

bool PhaseEmitter::external(const Node& n) const {
  return external_ && external_->value == n.outputs[0];
}

// A fresh accumulator declared where the reduction starts, or the caller's.
std::string PhaseEmitter::accumulator(const Node& n) {
  if (external(n)) return external_->acc;
  std::string acc = fmt::format("acc{}", next_++);
  emit(static_cast<int>(scopes_.size()) - 1,
       fmt::format("{} {} = {};", value_type(dtype(n.inputs[0])), acc, initial_value(g_, n)));
  return acc;
}

// The loop over reduce axis `axis` of `n`, or the caller's loop variable.
PhaseEmitter::Ix PhaseEmitter::reduce_loop(const Node& n, size_t axis, int64_t extent) {
  if (external(n)) return {external_->loop_vars.at(axis), 0};
  return open_loop(extent);
}

void PhaseEmitter::close_reduce_loops(const Node& n, size_t count) {
  if (external(n)) return;
  for (size_t i = 0; i < count; ++i) close_loop();
}

void PhaseEmitter::close_loop() {
  std::string body = loop_headers_.back() + "\n";
  for (const std::string& line : scopes_.back().lines) {
    // Indent every line of the (possibly multi-line) statement.
    size_t start = 0;
    while (start < line.size()) {
      size_t end = line.find('\n', start);
      if (end == std::string::npos) end = line.size();
      body += "  " + line.substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  body += "}";
  loop_headers_.pop_back();
  scopes_.pop_back();
  scopes_.back().lines.push_back(std::move(body));
}

PhaseEmitter::Ix PhaseEmitter::index_local(const Ix& e) {
  std::string name = fmt::format("i{}", next_++);
  emit(e.depth, fmt::format("const long long {} = {};", name, e.text));
  return {name, e.depth};
}

PhaseEmitter::Ix PhaseEmitter::local(DType type, const Ix& e) {
  std::string name = fmt::format("t{}", next_++);
  emit(e.depth, fmt::format("const {} {} = {};", value_type(type), name, e.text));
  return {name, e.depth};
}

PhaseEmitter::Ix PhaseEmitter::at(ValueId v, const std::vector<Ix>& idx) {
  const ValueHome& home = homes_[v];
  if (home.kind == ValueHome::scalar) return {home.name, 0};
  std::string key = std::to_string(v);
  for (const Ix& i : idx) key += "," + i.text;
  for (size_t s = scopes_.size(); s-- > 0;) {
    auto it = scopes_[s].memo.find(key);
    if (it != scopes_[s].memo.end()) return {it->second, static_cast<int>(s)};
  }
  Ix e = home.kind == ValueHome::inline_ ? define(v, idx) : load(v, idx);
  // A producer that returned a local (a layout primitive's read) needs no copy.
  bool named = std::all_of(e.text.begin(), e.text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  Ix var = named ? e : local(dtype(v), e);
  scopes_[static_cast<size_t>(var.depth)].memo[key] = var.text;
  return var;
}

PhaseEmitter::Ix PhaseEmitter::load(ValueId v, const std::vector<Ix>& idx) {
  const ValueHome& home = homes_[v];
  check(home.kind == ValueHome::pointer || home.kind == ValueHome::array ||
            home.kind == ValueHome::shared,
        "value '{}' has no storage", g_.value(v).name);
  const Shape& s = home.kind == ValueHome::shared ? home.size : shape(v);
  Ix flat = constant(0);
  int64_t stride = 1;
  for (size_t d = s.size(); d-- > 0;) {
    Ix i = idx[d];
    if (home.kind == ValueHome::shared)
      i = {fmt::format("ORCH_IN({} - {}, {})", i.text, home.origin[d], s[d]), i.depth};
    flat = add(mul(i, stride), flat);
    stride *= home.kind == ValueHome::shared && d + 1 == s.size() ? home.pitch : s[d];
  }
  return {from_storage(dtype(v), fmt::format("{}[{}]", home.name, flat.text)), flat.depth};
}

PhaseEmitter::Ix PhaseEmitter::define(ValueId v, const std::vector<Ix>& idx) {
  NodeId producer = g_.value(v).producer;
  if (producer == kNoNode)
    return homes_[v].kind == ValueHome::scalar ? Ix{homes_[v].name, 0} : load(v, idx);
  const Node& n = g_.node(producer);
  const Shape& ys = shape(v);
  // What computes a value rounds it to f16 or bf16 at once, as the interpreter stores it.
  auto round = [&](const Ix& e) { return Ix{rounded(dtype(v), e.text), e.depth}; };
  if (n.op == "prim.Elementwise") {
    std::vector<std::string> a;
    int depth = 0;
    for (ValueId in : n.inputs) {
      Ix e = at(in, shape(in).empty() ? std::vector<Ix>{} : idx);
      a.push_back(e.text);
      depth = std::max(depth, e.depth);
    }
    std::string fn = attr_string(n.attrs, "fn", "");
    DType in = dtype(n.inputs[fn == "where" ? 1 : 0]);
    // Pow's exponent may have a type of its own (ONNX Pow).
    if (fn == "pow") return round({pow_expr(a[0], a[1], in, dtype(n.inputs[1])), depth});
    return round({elementwise_expr(fn, a, in, dtype(v)), depth});
  }
  if (n.op == "prim.Reduce") return round(reduce(n, idx));
  if (n.op == "prim.MatMul") return round(matmul(n, idx));
  if (n.op == "prim.Conv" || n.op == "prim.ConvTranspose") return round(conv(n, idx));
  if (n.op == "prim.Broadcast") {
    std::vector<Ix> in = idx;
    for (size_t d = 0; d < ys.size(); ++d)
      if (shape(n.inputs[0])[d] != ys[d]) in[d] = constant(0);
    return at(n.inputs[0], in);
  }
  if (n.op == "prim.Transpose") {
    std::vector<int64_t> perm = attr_ints(n.attrs, "perm");
    if (perm.empty())
      for (size_t i = 0; i < ys.size(); ++i)
        perm.push_back(static_cast<int64_t>(ys.size() - 1 - i));
    std::vector<Ix> in(ys.size());
    for (size_t i = 0; i < perm.size(); ++i) in[static_cast<size_t>(perm[i])] = idx[i];
    return at(n.inputs[0], in);
  }
  if (n.op == "prim.Reshape") return at(n.inputs[0], reshape(n, idx));
  if (n.op == "prim.Slice") {
    std::vector<int64_t> starts = attr_ints(n.attrs, "starts");
    std::vector<int64_t> steps = attr_ints(n.attrs, "steps");
    std::vector<Ix> in;
    for (size_t d = 0; d < ys.size(); ++d) in.push_back(add(mul(idx[d], steps[d]), starts[d]));
    return at(n.inputs[0], in);
  }
  if (n.op == "prim.Tile") {
    std::vector<Ix> in;
    for (size_t d = 0; d < ys.size(); ++d) {
      int64_t size = shape(n.inputs[0])[d];
      in.push_back(size == ys[d] ? idx[d] : mod(idx[d], std::max<int64_t>(size, 1)));
    }
    return at(n.inputs[0], in);
  }
  if (n.op == "prim.Concat") return concat(n, idx);
  if (n.op == "prim.Resize") return round(resize(n, idx));
  // Pad only moves values that are rounded already (its constant is an f16 or bf16 value).
  if (n.op == "prim.Pad") return pad(n, idx);
  if (n.op == "prim.Gather") return gather(n, idx);
  if (n.op == "prim.GatherElements") {
    size_t ax = normalize(attr_int(n.attrs, "axis", 0), ys.size());
    std::vector<Ix> in = idx;
    in[ax] = data_index(at(n.inputs[1], idx), shape(n.inputs[0])[ax]);
    return at(n.inputs[0], in);
  }
  unsupported("'{}' is not generated", n.op);
}

PhaseEmitter::Ix PhaseEmitter::reduce(const Node& n, const std::vector<Ix>& idx) {
  ValueId x = n.inputs[0];
  const Shape& xs = shape(x);
  std::vector<int64_t> axes = attr_ints(n.attrs, "axes");
  for (int64_t& a : axes) a = static_cast<int64_t>(normalize(a, xs.size()));
  std::sort(axes.begin(), axes.end());
  int base = static_cast<int>(scopes_.size()) - 1;
  std::string acc = accumulator(n);
  std::vector<Ix> in = idx;
  for (size_t i = 0; i < axes.size(); ++i)
    in[static_cast<size_t>(axes[i])] = reduce_loop(n, i, xs[static_cast<size_t>(axes[i])]);
  Ix e = at(x, in);
  emit(static_cast<int>(scopes_.size()) - 1,
       fmt::format("{} = {};", acc, combine(g_, n, acc, e.text)));
  close_reduce_loops(n, axes.size());
  return {acc, base};
}

PhaseEmitter::Ix PhaseEmitter::matmul(const Node& n, const std::vector<Ix>& idx) {
  DType t = dtype(n.inputs[0]);
  const Shape& as = shape(n.inputs[0]);
  size_t rank = as.size();
  int base = static_cast<int>(scopes_.size()) - 1;
  std::string acc = accumulator(n);
  Ix k = reduce_loop(n, 0, as[rank - 1]);
  std::vector<Ix> ai = idx, bi = idx;
  ai[rank - 1] = k;
  bi[rank - 2] = k;
  Ix a = at(n.inputs[0], ai);
  Ix b = at(n.inputs[1], bi);
  std::string prod = elementwise_expr("mul", {a.text, b.text}, t, t);
  emit(k.depth, fmt::format("{} = {};", acc, combine(g_, n, acc, prod)));
  close_reduce_loops(n, 1);
  return {acc, base};
}

// One loop over the input channels of the output channel's group (outermost), then one per
// kernel dim; padding reads a clamped coordinate and selects zero outside the input.
PhaseEmitter::Ix PhaseEmitter::conv(const Node& n, const std::vector<Ix>& idx) {
  bool transposed = n.op == "prim.ConvTranspose";
  ValueId x = n.inputs[0], w = n.inputs[1];
  const Shape &xs = shape(x), &ws = shape(w), &ys = shape(n.outputs[0]);
  std::vector<int64_t> strides = attr_ints(n.attrs, "strides");
  std::vector<int64_t> dilations = attr_ints(n.attrs, "dilations");
  std::vector<int64_t> pads = attr_ints(n.attrs, "pads");
  int64_t group = attr_int(n.attrs, "group", 1);
  DType t = dtype(x);
  size_t rank = ys.size(), spatial = rank - 2;
  int64_t c_per_group = transposed ? ws[0] / group : ws[1];
  int64_t m_per_group = transposed ? ws[1] : ys[1] / group;
  int base = static_cast<int>(scopes_.size()) - 1;
  std::string acc = accumulator(n);
  Ix rc = reduce_loop(n, 0, c_per_group);
  std::vector<Ix> k;
  for (size_t s = 0; s < spatial; ++s) k.push_back(reduce_loop(n, 1 + s, ws[2 + s]));
  Ix channel = add(mul(div(idx[1], m_per_group), c_per_group), rc);
  std::vector<Ix> xi(rank), wi(rank);
  xi[0] = idx[0];
  xi[1] = channel;
  wi[0] = transposed ? channel : idx[1];
  wi[1] = transposed ? mod(idx[1], m_per_group) : rc;
  Ix inside;
  for (size_t s = 0; s < spatial; ++s) {
    int64_t size = xs[2 + s];
    bool unpadded = pads[s] == 0 && pads[s + spatial] == 0;
    Ix i;
    if (transposed) {
      // o = i*stride + k*dilation - pad: the input position when the division is exact (C's
      // truncating division errs only where the remainder is nonzero or the quotient negative).
      Ix num = index_local(add(add(idx[2 + s], pads[s]), mul(k[s], -dilations[s])));
      i = index_local(div(num, strides[s]));
      if (strides[s] > 1)
        also(inside, {fmt::format("{} == 0", mod(num, strides[s]).text), num.depth});
    } else {
      i = add(add(mul(idx[2 + s], strides[s]), mul(k[s], dilations[s])), -pads[s]);
      if (unpadded) {
        xi[2 + s] = i;
        wi[2 + s] = k[s];
        continue;
      }
      i = index_local(i);
    }
    also(inside, {fmt::format("{0} >= 0 && {0} < {1}", i.text, size), i.depth});
    xi[2 + s] = clamp(i, 0, size - 1);
    wi[2 + s] = k[s];
  }
  Ix xv = at(x, xi);
  Ix wv = at(w, wi);
  std::string term = xv.text;
  int depth = std::max(xv.depth, wv.depth);
  if (!inside.text.empty()) {
    term = fmt::format("({} ? {} : ({})0)", inside.text, xv.text, value_type(t));
    depth = std::max(depth, inside.depth);
  }
  std::string prod = elementwise_expr("mul", {term, wv.text}, t, t);
  emit(depth, fmt::format("{} = {};", acc, combine(g_, n, acc, prod)));
  close_reduce_loops(n, spatial + 1);
  return {acc, base};
}

namespace {

// Tap k's weight at output coordinate x of a periodic axis: one of `period` values by x's
// phase, chosen by a chain of conditionals.
Ix phase_weight(const PeriodicTaps& p, int64_t k, const Ix& x) {
  const float* w = &p.weight[static_cast<size_t>(k * p.period)];
  Ix phase = mod(x, p.period);
  std::string result = float_literal(w[p.period - 1], true);
  for (int64_t r = p.period - 1; r-- > 0;)
    if (w[r] != w[p.period - 1])
      result =
          fmt::format("({} == {} ? {} : {})", phase.text, r, float_literal(w[r], true), result);
  return {result, x.depth};
}

}  // namespace

// Stage `end` of a resize: axes [0, end) resampled, one weighted sum of taps per axis. An axis
// whose taps repeat with the ratio of its sizes (integer up- and downsampling) indexes with
// affine arithmetic and picks its weights by phase, as the Halide generator does; any other
// reads baked tap tables.
PhaseEmitter::Ix PhaseEmitter::resize_stage(const Node& n, const ResizeAxes& axes, size_t end,
                                            const std::vector<Ix>& idx) {
  if (end == 0) return at(n.inputs[0], idx);
  size_t d = end - 1;
  const ResizeTaps& t = axes.taps[d];
  if (t.identity) return resize_stage(n, axes, d, idx);
  int64_t in_size = shape(n.inputs[0])[d];
  const std::optional<PeriodicTaps>& periodic = axes.periodic[d];
  std::string table =
      fmt::format("{}_n{}_axis{}", globals_.prefix, g_.value(n.outputs[0]).producer, d);
  if (!periodic && globals_.defined.insert(table).second) {
    std::string ints, floats;
    for (size_t i = 0; i < t.index.size(); ++i) {
      ints += (i ? ", " : "") + std::to_string(t.index[i]);
      floats += (i ? ", " : "") + float_literal(t.weight[i], true);
    }
    globals_.text += fmt::format("__device__ const int {}_index[] = {{{}}};\n", table, ints);
    if (resize_interpolates(n.attrs))
      globals_.text += fmt::format("__device__ const float {}_weight[] = {{{}}};\n", table, floats);
  }
  DType type = dtype(n.inputs[0]);
  Ix sum;
  for (int64_t k = 0; k < t.taps; ++k) {
    Ix tap = add(mul(idx[d], t.taps), k);
    std::vector<Ix> in = idx;
    in[d] =
        periodic
            ? clamp(add(mul(div(add(idx[d], periodic->shift[k]), periodic->period), periodic->step),
                        periodic->base[k]),
                    0, in_size - 1)
            : Ix{fmt::format("(long long){}_index[{}]", table, tap.text), tap.depth};
    Ix v = resize_stage(n, axes, d, in);
    if (!resize_interpolates(n.attrs)) return v;
    Ix w = periodic ? phase_weight(*periodic, k, idx[d])
                    : Ix{fmt::format("{}_weight[{}]", table, tap.text), tap.depth};
    Ix term = {fmt::format("{} * ({}){}", v.text, value_type(type), w.text),
               std::max(v.depth, w.depth)};
    sum =
        sum.text.empty() ? term : Ix{sum.text + " + " + term.text, std::max(sum.depth, term.depth)};
  }
  return local(type, {"(" + sum.text + ")", sum.depth});
}

PhaseEmitter::Ix PhaseEmitter::resize(const Node& n, const std::vector<Ix>& idx) {
  ResizeAxes axes{resize_taps(n.attrs, g_.value(n.inputs[0]).type), {}};
  for (size_t d = 0; d < axes.taps.size(); ++d)
    axes.periodic.push_back(periodic_taps(axes.taps[d], shape(n.inputs[0])[d],
                                          shape(n.outputs[0])[d], kMaxResizePeriod));
  return resize_stage(n, axes, axes.taps.size(), idx);
}

std::vector<PhaseEmitter::Ix> PhaseEmitter::reshape(const Node& n, const std::vector<Ix>& idx) {
  const Shape& ys = shape(n.outputs[0]);
  const Shape& xs = shape(n.inputs[0]);
  Ix flat = constant(0);
  int64_t stride = 1;
  for (size_t d = ys.size(); d-- > 0;) {
    flat = add(mul(idx[d], stride), flat);
    stride *= ys[d];
  }
  if (xs.size() > 1) flat = index_local(flat);
  std::vector<Ix> in(xs.size());
  stride = 1;
  for (size_t d = xs.size(); d-- > 0;) {
    in[d] = d == 0 ? div(flat, stride) : mod(div(flat, stride), std::max<int64_t>(xs[d], 1));
    stride *= xs[d];
  }
  return in;
}

PhaseEmitter::Ix PhaseEmitter::concat(const Node& n, const std::vector<Ix>& idx) {
  size_t ax = normalize(attr_int(n.attrs, "axis", 0), idx.size());
  // Each piece is read with its coordinate clamped into range, then selected by position.
  std::vector<std::pair<std::string, Ix>> pieces;
  int64_t offset = 0;
  for (ValueId v : n.inputs) {
    int64_t size = shape(v)[ax];
    if (size == 0) continue;
    std::vector<Ix> in = idx;
    in[ax] = clamp(add(idx[ax], -offset), 0, size - 1);
    offset += size;
    pieces.emplace_back(fmt::format("{} < {}", idx[ax].text, offset), at(v, in));
  }
  Ix result = pieces.back().second;
  for (size_t i = pieces.size() - 1; i-- > 0;)
    result = {fmt::format("({} ? {} : {})", pieces[i].first, pieces[i].second.text, result.text),
              std::max({result.depth, pieces[i].second.depth, idx[ax].depth})};
  return result;
}

PhaseEmitter::Ix PhaseEmitter::pad(const Node& n, const std::vector<Ix>& idx) {
  ValueId x = n.inputs[0];
  const Shape& xs = shape(x);
  std::vector<int64_t> pads = attr_ints(n.attrs, "pads");
  std::string mode = attr_string(n.attrs, "mode", "constant");
  size_t rank = xs.size();
  std::vector<Ix> in(rank);
  Ix inside;
  for (size_t d = 0; d < rank; ++d) {
    if (pads[d] == 0 && pads[d + rank] == 0) {
      in[d] = idx[d];
      continue;
    }
    int64_t size = xs[d];
    Ix i = index_local(add(idx[d], -pads[d]));
    if (mode == "reflect" && size > 1) {
      int64_t period = 2 * (size - 1);
      Ix m = index_local({fmt::format("orch_emod({}, {})", i.text, period), i.depth});
      i = {fmt::format("({0} < {1} ? {0} : {2} - {0})", m.text, size, period), m.depth};
    }
    if (mode == "constant")
      also(inside, {fmt::format("{0} >= 0 && {0} < {1}", i.text, size), i.depth});
    in[d] = clamp(i, 0, size - 1);
  }
  Ix v = at(x, in);
  if (mode != "constant" || inside.text.empty()) return v;
  DType t = dtype(x);
  std::string value = literal(t, Tensor::scalar(t, attr_float(n.attrs, "value", 0.0f)), 0);
  return {fmt::format("({} ? {} : {})", inside.text, v.text, value),
          std::max(v.depth, inside.depth)};
}

// A data index into a dim of size `n`: negatives count from the end; clamped so that every read
// stays inside the input (the interpreter rejects out-of-range indices).
PhaseEmitter::Ix PhaseEmitter::data_index(const Ix& i, int64_t n) {
  Ix k = index_local({fmt::format("(long long){}", i.text), i.depth});
  return clamp({fmt::format("({0} < 0 ? {0} + {1} : {0})", k.text, n), k.depth}, 0, n - 1);
}

PhaseEmitter::Ix PhaseEmitter::gather(const Node& n, const std::vector<Ix>& idx) {
  const Shape& xs = shape(n.inputs[0]);
  size_t q = shape(n.inputs[1]).size();
  size_t ax = normalize(attr_int(n.attrs, "axis", 0), xs.size());
  std::vector<Ix> ii(idx.begin() + static_cast<std::ptrdiff_t>(ax),
                     idx.begin() + static_cast<std::ptrdiff_t>(ax + q));
  std::vector<Ix> in;
  for (size_t d = 0; d < xs.size(); ++d)
    in.push_back(d < ax    ? idx[d]
                 : d == ax ? data_index(at(n.inputs[1], ii), xs[ax])
                           : idx[d - 1 + q]);
  return at(n.inputs[0], in);
}

}  // namespace orch::codegen::cuda_impl
