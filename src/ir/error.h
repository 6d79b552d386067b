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
  enum class Kind { invalid, unsupported };
  explicit Error(const std::string& message, Kind kind = Kind::invalid)
      : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

/// An Error for a valid input that orch does not support (an op, a dtype, an attribute value).
/// Conformance runs count these as skipped, other Errors as failed.
class Unsupported : public Error {
 public:
  explicit Unsupported(const std::string& message) : Error(message, Kind::unsupported) {}
};

/// Rethrows `e` with `context` in front ("context: message"), keeping its kind, so that an
/// Unsupported stays Unsupported as it travels up through callers that add context.
[[noreturn]] inline void rethrow_with_context(const Error& e, std::string_view context) {
  std::string message = fmt::format("{}: {}", context, e.what());
  if (e.kind() == Error::Kind::unsupported) throw Unsupported(message);
  throw Error(message);
}

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
