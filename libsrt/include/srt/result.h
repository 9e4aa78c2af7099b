// SPDX-License-Identifier: Apache-2.0
// srt/result.h: errors as values (srt::Error, srt::Result<T>) and srt's exit-code contract.
//
// Result<T> deliberately has the member names of std::expected<T, Error> (has_value, value,
// error, operator*, operator->) so it can become an alias once the project moves to C++23.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace srt {

// Exit codes of the `srt` command (and ExitStatus::code of the library), published in the README.
inline constexpr int kExitSetupFailure = 125;   // srt itself failed: settings, bwrap, namespaces
inline constexpr int kExitCannotExecute = 126;  // the command exists but could not be executed
inline constexpr int kExitNotFound = 127;       // the command was not found inside the sandbox
inline constexpr int kExitSignalBase = 128;     // the command died of signal N: 128 + N

enum class Errc {
  kInvalidArgument,   // bad settings, bad CLI arguments, bad API input
  kNotFound,          // a file or program that must exist does not
  kPermissionDenied,  // the kernel or a file mode refused us
  kUnsupported,       // this kernel/bwrap cannot do what the policy asks
  kSystem,            // a system call failed unexpectedly
  kProtocol,          // a peer (helper, agent, bwrap) broke our protocol
  kDenied,            // the policy refused the request
  kInternal,          // an invariant of ours broke
};

class Error {
 public:
  Error(Errc code, std::string message, int sys_errno = 0)
      : code_(code), sys_errno_(sys_errno), message_(std::move(message)) {}

  Errc code() const { return code_; }
  // The errno captured when the error was made, or 0.
  int sys_errno() const { return sys_errno_; }
  const std::string& message() const { return message_; }

  // Prepends context, outermost first: "load settings: open 'x': No such file or directory".
  Error&& Wrap(std::string_view context) && {
    message_.insert(0, std::string(context) + ": ");
    return std::move(*this);
  }
  Error Wrap(std::string_view context) const& { return Error(*this).Wrap(context); }

 private:
  Errc code_;
  int sys_errno_;
  std::string message_;
};

// An error of the given code with a message; no errno.
[[nodiscard]] inline Error MakeError(Errc code, std::string message) {
  return Error(code, std::move(message));
}
// Captures errno now and appends strerror: SysError("open '/x'") -> "open '/x': No such file...".
[[nodiscard]] Error SysError(std::string_view what);
[[nodiscard]] Error SysError(std::string_view what, int err);

template <typename T>
class [[nodiscard]] Result {
 public:
  using value_type = T;
  Result(const T& v) : v_(v) {}            // NOLINT(google-explicit-constructor)
  Result(T&& v) : v_(std::move(v)) {}      // NOLINT(google-explicit-constructor)
  Result(const Error& e) : v_(e) {}        // NOLINT(google-explicit-constructor)
  Result(Error&& e) : v_(std::move(e)) {}  // NOLINT(google-explicit-constructor)
  template <typename U, typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                                    !std::is_same_v<std::decay_t<U>, Error> &&
                                                    !std::is_same_v<std::decay_t<U>, T>>>
  Result(U&& v) : v_(T(std::forward<U>(v))) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & {
    assert(has_value());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(v_));
  }
  const Error& error() const& {
    assert(!has_value());
    return std::get<1>(v_);
  }
  Error&& error() && {
    assert(!has_value());
    return std::get<1>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(const Error& e) : e_(e), ok_(false) {}        // NOLINT(google-explicit-constructor)
  Result(Error&& e) : e_(std::move(e)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  void value() const { assert(ok_); }
  const Error& error() const& {
    assert(!ok_);
    return e_;
  }
  Error&& error() && {
    assert(!ok_);
    return std::move(e_);
  }

 private:
  Error e_{Errc::kInternal, ""};
  bool ok_ = true;
};

inline Result<void> Ok() { return {}; }

}  // namespace srt

#define SRT_CONCAT_INNER_(a, b) a##b
#define SRT_CONCAT_(a, b) SRT_CONCAT_INNER_(a, b)

// Returns the error of a failed Result<...> expression from the enclosing function.
#define SRT_RETURN_IF_ERROR(expr)                                        \
  do {                                                                   \
    auto srt_result_ = (expr);                                           \
    if (!srt_result_.has_value()) return std::move(srt_result_).error(); \
  } while (0)

// `SRT_ASSIGN_OR_RETURN(auto x, F());` declares x from F()'s value or returns F()'s error.
#define SRT_ASSIGN_OR_RETURN(lhs, expr) \
  SRT_ASSIGN_OR_RETURN_IMPL_(SRT_CONCAT_(srt_result_, __LINE__), lhs, expr)
// `tmp` is a name and `lhs` a declaration: neither can be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define SRT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)     \
  auto tmp = (expr);                                   \
  if (!tmp.has_value()) return std::move(tmp).error(); \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
