#include "ir/ops/linear_einsum.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "ir/error.h"

namespace orch::ops {
namespace {

constexpr char kEllipsis = '.';

// The subscripts of one term, with "..." collapsed to a single kEllipsis.
std::string tokens(std::string_view term, std::string_view equation) {
  std::string out;
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if (c == '.') {
      check(term.substr(i, 3) == "...", "einsum equation '{}' has a '.' outside '...'", equation);
      check(out.find(kEllipsis) == std::string::npos,
            "einsum equation '{}' has two '...' in one term", equation);
      out += kEllipsis;
      i += 2;
      continue;
    }
    check(std::isalpha(static_cast<unsigned char>(c)),
          "einsum equation '{}' has an invalid character '{}'", equation, c);
    out += c;
  }
  return out;
}

std::vector<std::string_view> split_terms(std::string_view lhs) {
  std::vector<std::string_view> terms;
  size_t start = 0;
  for (size_t i = 0; i <= lhs.size(); ++i)
    if (i == lhs.size() || lhs[i] == ',') {
      terms.push_back(lhs.substr(start, i - start));
      start = i + 1;
    }
  return terms;
}

}  // namespace

EinsumSpec parse_einsum(std::string_view equation, const std::vector<Shape>& shapes) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  size_t arrow = eq.find("->");
  std::string_view lhs = std::string_view(eq).substr(0, arrow);
  std::vector<std::string_view> terms = split_terms(lhs);
  check(terms.size() == shapes.size(), "einsum equation '{}' has {} operands, the node has {}",
        equation, terms.size(), shapes.size());

  std::vector<std::string> subs;
  int64_t ellipsis_rank = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    subs.push_back(tokens(terms[t], equation));
    int64_t letters = static_cast<int64_t>(subs[t].size());
    bool has_ellipsis = subs[t].find(kEllipsis) != std::string::npos;
    int64_t rank = static_cast<int64_t>(shapes[t].size());
    if (has_ellipsis) {
      check(rank >= letters - 1, "einsum operand {} has rank {}, term '{}' needs at least {}", t,
            rank, terms[t], letters - 1);
      ellipsis_rank = std::max(ellipsis_rank, rank - (letters - 1));
    } else {
      check(rank == letters, "einsum operand {} has rank {}, term '{}' has {} subscripts", t, rank,
            terms[t], letters);
    }
  }

  // Ellipsis dims take ids 0..ellipsis_rank-1; letters follow in order of first use.
  EinsumSpec spec;
  spec.sizes.assign(ellipsis_rank, 1);
  std::map<char, int> ids;
  std::map<char, int> uses;
  for (size_t t = 0; t < subs.size(); ++t) {
    const Shape& shape = shapes[t];
    int64_t own_ellipsis = static_cast<int64_t>(shape.size() + 1 - subs[t].size());
    std::vector<int> labels;
    for (char c : subs[t]) {
      if (c == kEllipsis) {
        for (int64_t e = 0; e < own_ellipsis; ++e) {
          int id = static_cast<int>(ellipsis_rank - own_ellipsis + e);
          int64_t d = shape[labels.size()];
          check(d == spec.sizes[id] || d == 1 || spec.sizes[id] == 1,
                "einsum '...' dims of operand {} ({}) do not broadcast", t, format_shape(shape));
          spec.sizes[id] = std::max(spec.sizes[id], d);
          labels.push_back(id);
        }
        continue;
      }
      int64_t d = shape[labels.size()];
      auto [it, fresh] = ids.try_emplace(c, static_cast<int>(spec.sizes.size()));
      if (fresh) spec.sizes.push_back(d);
      check(spec.sizes[it->second] == d, "einsum subscript '{}' has extents {} and {}", c,
            spec.sizes[it->second], d);
      ++uses[c];
      labels.push_back(it->second);
    }
    spec.operands.push_back(std::move(labels));
  }

  std::string out_subs;
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dims, then the letters used once, in ASCII order.
    if (ellipsis_rank > 0) out_subs += kEllipsis;
    for (auto [c, n] : uses)
      if (n == 1) out_subs += c;
  } else {
    out_subs = tokens(std::string_view(eq).substr(arrow + 2), equation);
  }
  for (char c : out_subs) {
    if (c == kEllipsis) {
      for (int e = 0; e < ellipsis_rank; ++e) spec.output.push_back(e);
      continue;
    }
    auto it = ids.find(c);
    check(it != ids.end(), "einsum output subscript '{}' is not in any operand", c);
    check(std::count(out_subs.begin(), out_subs.end(), c) == 1,
          "einsum output subscript '{}' is repeated", c);
    spec.output.push_back(it->second);
  }
  return spec;
}

}  // namespace orch::ops
