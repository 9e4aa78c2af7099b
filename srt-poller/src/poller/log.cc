// SPDX-License-Identifier: Apache-2.0
#include "poller/log.h"

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "sys/fd.h"

namespace srt::poller {
namespace {

std::string_view LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
  }
  return "INFO";
}

std::string NowRfc3339() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  gmtime_r(&ts.tv_sec, &t);
  char buf[64];
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &t);
  std::snprintf(buf + n, sizeof buf - n, ".%03ldZ", ts.tv_nsec / 1000000);
  return buf;
}

// The log is ASCII, whatever a value holds: values come from sandboxes (their output, the
// names of what they left), and a terminal or viewer that shows the log must never get an 8-bit
// control (U+009B is a CSI), a bidirectional override or bytes that are no UTF-8 raw. So JSON
// strings are dumped with every non-ASCII character as \uXXXX (invalid bytes as \ufffd).
std::string AsciiJson(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
}

// slog's text handler quotes a value when it is empty or holds a space, '=', '"' or a
// non-printing character; here also when it holds anything past ASCII (see AsciiJson).
void AppendTextValue(std::string& out, std::string_view v) {
  bool quote = v.empty();
  for (char ch : v) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= ' ' || c == '=' || c == '"' || c >= 0x7f) quote = true;
  }
  if (!quote) {
    out += v;
    return;
  }
  out += AsciiJson(std::string(v));
}

}  // namespace

std::string Logger::Format(LogFormat format, std::string_view time, LogLevel level,
                           std::string_view msg, const LogFields& fields) {
  if (format == LogFormat::kJson) {
    nlohmann::ordered_json j;
    j["time"] = time;
    j["level"] = LevelName(level);
    j["msg"] = msg;
    for (const auto& [k, v] : fields) {
      if (v.number) {
        j[k] = nlohmann::ordered_json::parse(v.text);  // digits from std::to_string
      } else {
        j[k] = v.text;
      }
    }
    return AsciiJson(j);
  }
  std::string out = "time=";
  out += time;
  out += " level=";
  out += LevelName(level);
  out += " msg=";
  AppendTextValue(out, msg);
  for (const auto& [k, v] : fields) {
    out += ' ';
    out += k;
    out += '=';
    AppendTextValue(out, v.text);
  }
  return out;
}

void Logger::Log(LogLevel level, std::string_view msg, const LogFields& fields) const {
  std::string line = Format(format_, NowRfc3339(), level, msg, fields);
  line += '\n';
  std::lock_guard lock(mu_);
  (void)sys::WriteAll(fd_, line, "write the log");  // nowhere to report a failing stderr
}

}  // namespace srt::poller
