// SPDX-License-Identifier: Apache-2.0
// Pure text helpers for srt-toolbox (see text.h).
#include "toolbox/text.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/ascii.h"
#include "base/strings.h"
#include "base/system_text.h"

namespace srt::poller::toolbox {

std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          strings::AppendHexEscape(out, c);
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

std::string GoDuration(std::chrono::milliseconds d) {
  long long ms = d.count();
  if (ms == 0) return "0s";
  std::string sign;
  if (ms < 0) {
    sign = "-";
    ms = -ms;
  }
  if (ms < 1000) return sign + std::to_string(ms) + "ms";
  long long h = ms / 3'600'000;
  long long m = (ms / 60'000) % 60;
  long long s = (ms / 1000) % 60;
  long long frac = ms % 1000;
  std::string out = sign;
  if (h > 0) out += std::to_string(h) + "h";
  if (h > 0 || m > 0) out += std::to_string(m) + "m";
  out += std::to_string(s);
  if (frac != 0) {
    char buf[8];
    std::snprintf(buf, sizeof buf, ".%03lld", frac);
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  out += "s";
  return out;
}

std::string CleanTerminalOutput(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  size_t i = 0;
  while (i < raw.size()) {
    // ESC '[' params* intermediates* final: the Go tool's `\x1b\[[0-9;?]*[ -/]*[@-~]`.
    if (raw[i] == '\x1b' && i + 1 < raw.size() && raw[i + 1] == '[') {
      size_t j = i + 2;
      while (j < raw.size() &&
             (std::isdigit(static_cast<unsigned char>(raw[j])) || raw[j] == ';' || raw[j] == '?')) {
        ++j;
      }
      while (j < raw.size() && raw[j] >= ' ' && raw[j] <= '/') ++j;
      if (j < raw.size() && raw[j] >= '@' && raw[j] <= '~') {
        i = j + 1;
        continue;
      }
    }
    if (raw[i] != '\r') out += raw[i];  // "\r\n" -> "\n" and a lone "\r" is dropped
    ++i;
  }
  size_t first = out.find_first_not_of('\n');
  out.erase(0, first == std::string::npos ? out.size() : first);
  return out;
}

std::string FsErrorMessage(int err) {
  switch (err) {
    case ENOENT:
      return "no such file or directory";
    case EACCES:
    case EPERM:
      return "permission denied";
    case ENOTDIR:
      return "not a directory";
    case EISDIR:
      return "is a directory";
    case ENOSPC:
    case EDQUOT:
      // srt-poller's --disk gives each workspace a filesystem of its own: this is its limit.
      return "no space left on device: the workspace is full (remove files to make room)";
    default: {
      std::string s = ErrnoText(err);
      if (!s.empty()) s[0] = ascii::ToLower(s[0]);
      return s;
    }
  }
}

}  // namespace srt::poller::toolbox
