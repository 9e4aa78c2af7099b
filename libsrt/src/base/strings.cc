// String quoting helpers.
#include "base/strings.h"

#include <cstdio>

namespace srt::strings {

std::string ShellQuote(std::string_view s) {
  if (s.empty()) return "''";
  bool plain = true;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == '@' || c == '+' ||
              c == ',' || c == '=' || c == '%';
    if (!ok) {
      plain = false;
      break;
    }
  }
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\"'\"'";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string ShellJoin(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(w);
  }
  return out;
}

std::string Quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

}  // namespace srt::strings
