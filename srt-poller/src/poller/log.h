// SPDX-License-Identifier: Apache-2.0
// srt-poller/poller/log: structured logs on stderr, one record per line, in the two formats of
// Go's log/slog (which `ant beta:worker` uses): text (`time=... level=INFO msg="..." k=v`) or
// JSON lines. Thread-safe; a record is written with one write(2).
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "poller/config.h"

namespace srt::poller {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

// A field's value: text, or a number, which the JSON format writes as a JSON number (as slog
// does for its integer attributes) and the text format as its digits.
struct LogValue {
  LogValue(std::string s) : text(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  LogValue(const char* s) : text(s) {}             // NOLINT(google-explicit-constructor)
  template <typename T>
  requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)LogValue(T n)
      : text(std::to_string(n)), number(true) {}  // NOLINT(google-explicit-constructor)
  std::string text;
  bool number = false;
};

using LogFields = std::vector<std::pair<std::string, LogValue>>;

class Logger {
 public:
  explicit Logger(LogFormat format, int fd = 2) : format_(format), fd_(fd) {}

  void Log(LogLevel level, std::string_view msg, const LogFields& fields = {}) const;
  void Info(std::string_view msg, const LogFields& fields = {}) const {
    Log(LogLevel::kInfo, msg, fields);
  }
  void Warn(std::string_view msg, const LogFields& fields = {}) const {
    Log(LogLevel::kWarn, msg, fields);
  }
  void Error(std::string_view msg, const LogFields& fields = {}) const {
    Log(LogLevel::kError, msg, fields);
  }

  // One record as text, without the trailing newline (exposed for tests).
  static std::string Format(LogFormat format, std::string_view time, LogLevel level,
                            std::string_view msg, const LogFields& fields);

 private:
  LogFormat format_;
  int fd_;
  mutable std::mutex mu_;
};

}  // namespace srt::poller
