// SPDX-License-Identifier: Apache-2.0
// srt-poller/poller/log: structured logs on stderr, one record per line, in the two formats of
// Go's log/slog (which `ant beta:worker` uses): text (`time=... level=INFO msg="..." k=v`) or
// JSON lines. Thread-safe; a record is written with one write(2).
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "poller/config.h"

namespace srt::poller {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

using LogFields = std::vector<std::pair<std::string, std::string>>;

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
