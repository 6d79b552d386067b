// Range checks for numeric flags. CLI11's own (NonNegativeNumber, PositiveNumber) let NaN
// through, since every comparison with it is false, and word their errors as a range up to
// 1.8e308; these reject what is not finite and say the rule: "--threads: must be at least 0,
// not -3".
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "commands.h"

namespace orch::tool {
namespace {

// `strict`: the value must be above `low`, not equal to it.
CLI::Validator bound_check(double low, bool strict) {
  std::string rule = fmt::format("{} {}", strict ? "above" : "at least", low);
  return CLI::Validator(
      [rule, low, strict](std::string& text) -> std::string {
        char* end = nullptr;
        double value = std::strtod(text.c_str(), &end);
        // Not a number at all: CLI11's conversion to the option's type names it.
        if (end == text.c_str() || *end != '\0') return {};
        bool holds = std::isfinite(value) && (strict ? value > low : value >= low);
        return holds ? std::string() : fmt::format("must be a number {}, not {}", rule, text);
      },
      strict ? fmt::format(">{}", low) : fmt::format(">={}", low));
}

}  // namespace

CLI::Validator at_least(double low) {
  return bound_check(low, false);
}

CLI::Validator above(double low) {
  return bound_check(low, true);
}

}  // namespace orch::tool
