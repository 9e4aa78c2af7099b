// SPDX-License-Identifier: Apache-2.0
// wire/ascii.h: the character classes of the proxy's wire grammars (HTTP tokens, visible
// bytes, host-name characters), over base/ascii.h. Pure, header-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/ascii.h"
#include "base/strings.h"

namespace srt::proxy::ascii {

// The character classes every module shares live in base/ascii.h; this namespace adds the
// wire grammars' own.
using srt::ascii::EqualsIgnoreCase;
using srt::ascii::FoldHeaderName;
using srt::ascii::HexValue;
using srt::ascii::IsAlpha;
using srt::ascii::IsDigit;
using srt::ascii::IsHexDigit;
using srt::ascii::IsTchar;
using srt::ascii::LeadingZeros;
using srt::ascii::ParsePort;
using srt::ascii::ToLower;
using srt::strings::QuoteForMessage;

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

}  // namespace srt::proxy::ascii
