// SPDX-License-Identifier: Apache-2.0
// base/ascii: locale-independent ASCII character classes, case folding and the decimal port
// grammar, one implementation each for every module (settings, the proxy's parsers, the
// poller). Pure, header-only. Never uses <cctype> (locale-dependent, UB on negative chars).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace srt::ascii {

inline constexpr bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }
inline constexpr bool IsAlpha(uint8_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline constexpr bool IsHexDigit(uint8_t c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline constexpr int HexValue(uint8_t c) {
  if (IsDigit(c)) {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}
// The same classes for a char, whatever char's signedness.
inline constexpr bool IsDigit(char c) { return IsDigit(static_cast<uint8_t>(c)); }
inline constexpr bool IsAlpha(char c) { return IsAlpha(static_cast<uint8_t>(c)); }
inline constexpr bool IsHexDigit(char c) { return IsHexDigit(static_cast<uint8_t>(c)); }
inline constexpr char ToLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
inline std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = ToLower(c);
  }
  return out;
}
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLower(a[i]) != ToLower(b[i])) {
      return false;
    }
  }
  return true;
}

// An HTTP field name as network.stripResponseHeaders matches it (upstream's rule): lower case,
// with '_' and '.' read as '-'.
inline std::string FoldHeaderName(std::string_view name) {
  std::string out = ToLower(name);
  for (char& c : out) {
    if (c == '_' || c == '.') c = '-';
  }
  return out;
}
// RFC 9110 §5.6.2: tchar, the characters of a token (methods, field names, codings).
inline constexpr bool IsTchar(uint8_t c) {
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return IsDigit(c) || IsAlpha(c);
  }
}
inline constexpr bool IsTchar(char c) { return IsTchar(static_cast<uint8_t>(c)); }

// A TCP/UDP port in decimal, 1-65535. The settings grammar (upstream's /^[1-9][0-9]{0,4}$/)
// refuses leading zeros; the environment's (NO_PROXY) and a DNS server's "host:053" accept them.
enum class LeadingZeros { kRefused, kAccepted };
inline std::optional<uint16_t> ParsePort(std::string_view text, LeadingZeros zeros) {
  if (text.empty() || text.size() > 5 || (zeros == LeadingZeros::kRefused && text[0] == '0')) {
    return std::nullopt;
  }
  unsigned value = 0;
  for (char c : text) {
    if (!IsDigit(c)) {
      return std::nullopt;
    }
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value == 0 || value > 65535) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(value);
}

}  // namespace srt::ascii
