// Errors: library code throws orch::Error with a message a user can act on; only tools/ prints.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace orch {

/// The one error type of orch's libraries. The message names the problem and where it is
/// (file, node, value); tools print it as one line.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// An Error for a valid input that orch does not support (an op, a dtype, an attribute value).
/// Conformance runs count these as skipped, other Errors as failed.
class Unsupported : public Error {
 public:
  using Error::Error;
};

/// Throws Unsupported formatted with fmt.
template <typename... Args>
[[noreturn]] void unsupported(fmt::format_string<Args...> format, Args&&... args) {
  throw Unsupported(fmt::format(format, std::forward<Args>(args)...));
}

/// Throws an Error formatted with fmt.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

/// Throws an Error unless `condition` holds.
template <typename... Args>
void check(bool condition, fmt::format_string<Args...> format, Args&&... args) {
  if (!condition) throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace orch
