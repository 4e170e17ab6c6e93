// Result<T>: dimctl's one error vocabulary (std::expected-style).
//
// Kernel-facing code returns Result<T>; exceptions are reserved for fatal start-up problems.
// An Error carries a positive errno (0 when the failure is not an OS error), a context string
// that names what failed and where (device, file:line of a config, netlink attribute ...), and
// the source location that produced it. Context is chained outward with wrap().
//
// C++20 has no std::expected, and clang 14 (our clang-tidy) cannot parse libstdc++'s, hence this
// small type. Thread-safety: plain values, no shared state.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace dimctl {

class Error {
 public:
  Error() = default;
  Error(int code, std::string context, const char* file, int line)
      : code_(code), context_(std::move(context)), file_(file), line_(line) {}

  // Positive errno, or 0 when the error is not an OS error (bad input, unsupported ...).
  int code() const { return code_; }
  const std::string& context() const { return context_; }
  const char* file() const { return file_; }
  int line() const { return line_; }

  // "context: strerror(code)" — what an operator reads.
  std::string message() const {
    if (code_ == 0) return context_;
    return fmt::format("{}: {}", context_, std::strerror(code_));
  }
  // message() plus the source location — what a developer reads (logs at debug level).
  std::string detailed() const { return fmt::format("{} [{}:{}]", message(), file_, line_); }

  // Prefix an outer context: "outer: inner".
  Error& wrap(std::string_view outer) & {
    context_ = fmt::format("{}: {}", outer, context_);
    return *this;
  }
  Error&& wrap(std::string_view outer) && { return std::move(wrap(outer)); }

 private:
  int code_ = 0;
  std::string context_;
  const char* file_ = "";
  int line_ = 0;
};

// Wrapper that makes "return fail(...)" convert to any Result<T>.
struct Failure {
  Error error;
};
inline Failure fail(Error e) {
  return Failure{std::move(e)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Failure f) : v_(std::in_place_index<1>, std::move(f.error)) {}  // NOLINT
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}          // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error& error() & { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Failure f) : err_(std::move(f.error)), ok_(false) {}  // NOLINT
  Result(Error e) : err_(std::move(e)), ok_(false) {}          // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& { return err_; }
  Error& error() & { return err_; }
  Error&& error() && { return std::move(err_); }

 private:
  Error err_;
  bool ok_ = true;
};

inline Result<void> ok() {
  return {};
}

}  // namespace dimctl

// DIMCTL_ERR(code, fmt, args...): an Error with this file:line. code is a positive errno or 0.
#define DIMCTL_ERR(code, ...) \
  ::dimctl::Error((code), ::fmt::format(__VA_ARGS__), __FILE__, __LINE__)
// DIMCTL_FAIL(code, fmt, args...): the same, ready to return from a Result<T> function.
#define DIMCTL_FAIL(code, ...) ::dimctl::fail(DIMCTL_ERR((code), __VA_ARGS__))
// DIMCTL_ERRNO(fmt, args...): an Error from the current errno.
#define DIMCTL_ERRNO(...) DIMCTL_ERR(errno, __VA_ARGS__)
