// wire/ascii.h: locale-independent ASCII character classes and helpers shared by the proxy's
// parsers. Pure, header-only. Never uses <cctype> (locale-dependent, UB on negative chars).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace srt::proxy::ascii {

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
inline bool IsToken(std::string_view s) {
  if (s.empty()) {
    return false;
  }
  for (char c : s) {
    if (!IsTchar(c)) {
      return false;
    }
  }
  return true;
}

// Visible ASCII (RFC 5234 VCHAR, 0x21..0x7e): no space, no control character, no DEL, no byte of
// a multi-byte UTF-8 sequence. Every host a wire parser hands out (HTTP target, SOCKS5 domain,
// TLS server_name) consists of these bytes only, so it can be logged or quoted as is; whether it
// is a valid host is decided later, by CanonicalizeHost (filter/host.h).
inline constexpr bool IsVisible(uint8_t c) { return c > 0x20 && c < 0x7f; }
inline constexpr bool IsVisible(char c) { return IsVisible(static_cast<uint8_t>(c)); }
inline bool IsVisible(std::string_view s) {
  for (char c : s) {
    if (!IsVisible(c)) {
      return false;
    }
  }
  return true;
}

// The bytes the DNS stub accepts in a label of a question name (dns/message.cc): letters, digits,
// '-', '_' (seen in real service names) and, for whole names, the '.' separator. Anything else
// (percent-encoding, '*', spaces, NUL, non-ASCII) could make two components disagree on the name
// that the policy was checked against.
inline constexpr bool IsHostNameChar(uint8_t c) {
  return IsAlpha(c) || IsDigit(c) || c == '-' || c == '_' || c == '.';
}

inline constexpr bool IsHostNameChar(char c) { return IsHostNameChar(static_cast<uint8_t>(c)); }

// `s` quoted for an error message: at most `max` bytes of it, with anything outside printable
// ASCII (and the quote and backslash) escaped as \xNN, and "..." when cut.
inline std::string QuoteForMessage(std::string_view s, size_t max = 64) {
  std::string out = "'";
  size_t n = s.size() < max ? s.size() : max;
  for (size_t i = 0; i < n; ++i) {
    auto u = static_cast<uint8_t>(s[i]);
    if (u < 0x20 || u >= 0x7f || u == '\'' || u == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += static_cast<char>(u);
    }
  }
  out += '\'';
  if (n < s.size()) {
    out += "...";
  }
  return out;
}

}  // namespace srt::proxy::ascii
