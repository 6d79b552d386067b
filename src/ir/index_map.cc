#include "ir/index_map.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/error.h"
#include "ir/graph.h"

namespace orch {

struct IndexExpr::Node {
  IndexExpr expr;
};

namespace {

int64_t floor_div(int64_t a, int64_t d) {
  int64_t q = a / d;
  return (a % d != 0 && (a < 0) != (d < 0)) ? q - 1 : q;
}

int64_t euclid_mod(int64_t a, int64_t d) {
  int64_t r = a % d;
  return r < 0 ? r + d : r;
}

}  // namespace

IndexExpr::IndexExpr(Kind kind, int64_t value, std::shared_ptr<const Node> a,
                     std::shared_ptr<const Node> b)
    : kind_(kind), value_(value), a_(std::move(a)), b_(std::move(b)) {}

IndexExpr IndexExpr::var(int axis) {
  check(axis >= 0, "index map: negative loop axis {}", axis);
  return IndexExpr(Kind::var, axis, nullptr, nullptr);
}

IndexExpr IndexExpr::constant(int64_t value) {
  return IndexExpr(Kind::constant, value, nullptr, nullptr);
}

IndexExpr IndexExpr::whole() {
  return IndexExpr(Kind::whole, 0, nullptr, nullptr);
}

bool IndexExpr::is_whole() const {
  switch (kind_) {
    case Kind::whole:
      return true;
    case Kind::add:
      return a_->expr.is_whole() || b_->expr.is_whole();
    case Kind::mul:
    case Kind::floordiv:
    case Kind::mod:
    case Kind::abs:
      return a_->expr.is_whole();
    default:
      return false;
  }
}

IndexExpr operator+(const IndexExpr& a, const IndexExpr& b) {
  using K = IndexExpr::Kind;
  if (a.kind_ == K::constant && b.kind_ == K::constant)
    return IndexExpr::constant(a.value_ + b.value_);
  if (b.kind_ == K::constant && b.value_ == 0) return a;
  if (a.kind_ == K::constant && a.value_ == 0) return b;
  return IndexExpr(K::add, 0, std::make_shared<IndexExpr::Node>(IndexExpr::Node{a}),
                   std::make_shared<IndexExpr::Node>(IndexExpr::Node{b}));
}

IndexExpr operator+(const IndexExpr& a, int64_t c) {
  return a + IndexExpr::constant(c);
}

IndexExpr operator*(const IndexExpr& a, int64_t c) {
  using K = IndexExpr::Kind;
  if (c == 1) return a;
  if (c == 0) return IndexExpr::constant(0);
  if (a.kind_ == K::constant) return IndexExpr::constant(a.value_ * c);
  return IndexExpr(K::mul, c, std::make_shared<IndexExpr::Node>(IndexExpr::Node{a}), nullptr);
}

IndexExpr IndexExpr::floordiv(const IndexExpr& a, int64_t d) {
  check(d > 0, "index map: floordiv by {} (must be positive)", d);
  if (d == 1) return a;
  return IndexExpr(Kind::floordiv, d, std::make_shared<Node>(Node{a}), nullptr);
}

IndexExpr IndexExpr::mod(const IndexExpr& a, int64_t d) {
  check(d > 0, "index map: mod by {} (must be positive)", d);
  if (d == 1) return constant(0);
  return IndexExpr(Kind::mod, d, std::make_shared<Node>(Node{a}), nullptr);
}

IndexExpr IndexExpr::abs(const IndexExpr& a) {
  if (a.kind_ == Kind::constant) return constant(std::abs(a.value_));
  return IndexExpr(Kind::abs, 0, std::make_shared<Node>(Node{a}), nullptr);
}

int64_t IndexExpr::eval(std::span<const int64_t> point) const {
  switch (kind_) {
    case Kind::var:
      check(value_ < static_cast<int64_t>(point.size()), "index map: axis {} of {}", value_,
            point.size());
      return point[value_];
    case Kind::constant:
      return value_;
    case Kind::add:
      return a_->expr.eval(point) + b_->expr.eval(point);
    case Kind::mul:
      return a_->expr.eval(point) * value_;
    case Kind::floordiv:
      return floor_div(a_->expr.eval(point), value_);
    case Kind::mod:
      return euclid_mod(a_->expr.eval(point), value_);
    case Kind::abs:
      return std::abs(a_->expr.eval(point));
    case Kind::whole:
      break;
  }
  fail("index map: a whole-dimension coordinate has no single value");
}

Interval IndexExpr::eval(std::span<const Interval> box, Interval dim) const {
  switch (kind_) {
    case Kind::var:
      check(value_ < static_cast<int64_t>(box.size()), "index map: axis {} of {}", value_,
            box.size());
      return box[value_];
    case Kind::constant:
      return {value_, value_};
    case Kind::add: {
      Interval a = a_->expr.eval(box, dim), b = b_->expr.eval(box, dim);
      if (a.empty() || b.empty()) return {};
      return {a.lo + b.lo, a.hi + b.hi};
    }
    case Kind::mul: {
      Interval a = a_->expr.eval(box, dim);
      if (a.empty()) return {};
      int64_t x = a.lo * value_, y = a.hi * value_;
      return {std::min(x, y), std::max(x, y)};
    }
    case Kind::floordiv: {
      Interval a = a_->expr.eval(box, dim);
      if (a.empty()) return {};
      return {floor_div(a.lo, value_), floor_div(a.hi, value_)};
    }
    case Kind::mod: {
      Interval a = a_->expr.eval(box, dim);
      if (a.empty()) return {};
      // Within one period the remainder is monotone; across a period boundary it wraps.
      if (floor_div(a.lo, value_) != floor_div(a.hi, value_)) return {0, value_ - 1};
      return {euclid_mod(a.lo, value_), euclid_mod(a.hi, value_)};
    }
    case Kind::abs: {
      Interval a = a_->expr.eval(box, dim);
      if (a.empty()) return {};
      if (a.lo >= 0) return a;
      if (a.hi <= 0) return {-a.hi, -a.lo};
      return {0, std::max(-a.lo, a.hi)};
    }
    case Kind::whole:
      return dim;
  }
  return {};
}

std::string IndexExpr::str(int out_rank) const {
  auto paren = [&](const IndexExpr& e) {
    std::string s = e.str(out_rank);
    bool leaf = e.kind_ == Kind::var || e.kind_ == Kind::constant || e.kind_ == Kind::whole ||
                e.kind_ == Kind::abs;
    return leaf ? s : "(" + s + ")";
  };
  switch (kind_) {
    case Kind::var:
      return value_ < out_rank ? fmt::format("d{}", value_) : fmt::format("r{}", value_ - out_rank);
    case Kind::constant:
      return fmt::format("{}", value_);
    case Kind::add: {
      const IndexExpr& b = b_->expr;
      if (b.kind_ == Kind::constant && b.value_ < 0)
        return fmt::format("{} - {}", a_->expr.str(out_rank), -b.value_);
      return fmt::format("{} + {}", a_->expr.str(out_rank), b.str(out_rank));
    }
    case Kind::mul:
      return fmt::format("{}*{}", paren(a_->expr), value_);
    case Kind::floordiv:
      return fmt::format("{} floordiv {}", paren(a_->expr), value_);
    case Kind::mod:
      return fmt::format("{} mod {}", paren(a_->expr), value_);
    case Kind::abs:
      return fmt::format("|{}|", a_->expr.str(out_rank));
    case Kind::whole:
      return "*";
  }
  return "?";
}

Box input_box(const IndexMap& map, size_t input, const Shape& input_shape, const Box& out) {
  check(input < map.inputs.size(), "index map: input {} of {}", input, map.inputs.size());
  const std::vector<IndexExpr>& exprs = map.inputs[input];
  check(exprs.size() == input_shape.size(), "index map: {} expressions for input {} of rank {}",
        exprs.size(), input, input_shape.size());
  std::vector<Interval> loops = out;
  for (int64_t extent : map.reduce_extents) loops.push_back({0, extent - 1});
  Box box;
  for (size_t d = 0; d < exprs.size(); ++d) {
    Interval dim{0, input_shape[d] - 1};
    Interval r = exprs[d].eval(loops, dim);
    box.push_back({std::max(r.lo, dim.lo), std::min(r.hi, dim.hi)});
  }
  return box;
}

std::string format_index_map(const IndexMap& map, size_t out_rank) {
  std::string text;
  for (size_t i = 0; i < map.inputs.size(); ++i) {
    std::vector<std::string> dims;
    for (const IndexExpr& e : map.inputs[i]) dims.push_back(e.str(static_cast<int>(out_rank)));
    text += fmt::format("in{}[{}]\n", i, fmt::join(dims, ", "));
  }
  if (!map.reduce_extents.empty())
    text += fmt::format("reduce [{}]\n", fmt::join(map.reduce_extents, ", "));
  return text;
}

}  // namespace orch
