// SPDX-License-Identifier: Apache-2.0
// Host canonicalisation: the WHATWG URL host parser (https://url.spec.whatwg.org/#host-parsing)
// reduced to ASCII hosts, plus upstream srt's host sanity rules.
#include "base/host.h"

#include <array>
#include <optional>
#include <vector>

#include "base/ascii.h"
#include "base/strings.h"

namespace srt {
namespace {

// Longest slice of a rejected host quoted in an error message.
constexpr size_t kQuoteLimit = 64;

Error Malformed(std::string_view raw, std::string_view why) {
  std::string shown(raw.substr(0, kQuoteLimit));
  std::string message(kMalformedHost);
  message += ": ";
  message += strings::Quote(shown);
  if (raw.size() > kQuoteLimit) {
    message += "...";
  }
  message += ' ';
  message += why;
  return MakeError(Errc::kDenied, std::move(message));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || IsDigit(c) || c == '.' || c == '-' || c == '_';
}

std::optional<unsigned> HexValue(char c) {
  if (IsDigit(c)) {
    return static_cast<unsigned>(c - '0');
  }
  if (c >= 'a' && c <= 'f') {
    return static_cast<unsigned>(c - 'a' + 10);
  }
  return std::nullopt;
}

// WHATWG "IPv4 number parser" on a lower-cased part: "0x"/"0X" prefix = hex, a leading "0"
// (with more digits) = octal, else decimal; "0x" alone is 0. Values above 2^32 saturate at
// 2^32 so that long digit strings cannot overflow; the caller rejects anything that large.
std::optional<uint64_t> ParseIpv4Number(std::string_view part) {
  if (part.empty()) {
    return std::nullopt;
  }
  unsigned radix = 10;
  if (part.size() >= 2 && part[0] == '0' && part[1] == 'x') {
    radix = 16;
    part.remove_prefix(2);
  } else if (part.size() >= 2 && part[0] == '0') {
    radix = 8;
    part.remove_prefix(1);
  }
  constexpr uint64_t kSaturated = uint64_t{1} << 32;
  uint64_t value = 0;
  for (char c : part) {
    std::optional<unsigned> digit = HexValue(c);
    if (!digit || *digit >= radix) {
      return std::nullopt;
    }
    value = value * radix + *digit;
    if (value > kSaturated) {
      value = kSaturated;
    }
  }
  return value;
}

std::vector<std::string_view> SplitDots(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t dot = text.find('.', start);
    if (dot == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, dot - start));
    start = dot + 1;
  }
}

// WHATWG "ends in a number checker", on a name with its one trailing dot already stripped.
bool EndsInANumber(std::string_view name) {
  size_t dot = name.rfind('.');
  std::string_view last = dot == std::string_view::npos ? name : name.substr(dot + 1);
  if (last.empty()) {
    return false;
  }
  bool all_digits = true;
  for (char c : last) {
    all_digits = all_digits && IsDigit(c);
  }
  return all_digits || ParseIpv4Number(last).has_value();
}

enum class Ipv4Outcome { kAddress, kMalformed, kOverflow };
struct Ipv4Parse {
  Ipv4Outcome outcome;
  IpAddress address;
};

// WHATWG "IPv4 parser" on a lower-cased name without its trailing dot.
Ipv4Parse ParseWhatwgIpv4(std::string_view name) {
  std::vector<std::string_view> parts = SplitDots(name);
  if (parts.size() > 4) {
    return {Ipv4Outcome::kMalformed, {}};
  }
  std::array<uint64_t, 4> numbers{};
  for (size_t i = 0; i < parts.size(); ++i) {
    std::optional<uint64_t> n = ParseIpv4Number(parts[i]);
    if (!n) {
      return {Ipv4Outcome::kMalformed, {}};
    }
    numbers[i] = *n;
  }
  const size_t last = parts.size() - 1;
  for (size_t i = 0; i < last; ++i) {
    if (numbers[i] > 255) {
      return {Ipv4Outcome::kOverflow, {}};
    }
  }
  // The last part fills the 5 - n remaining bytes: 2^32 for one part, 2^24 for two, ...
  if (numbers[last] >= (uint64_t{1} << (8 * (5 - parts.size())))) {
    return {Ipv4Outcome::kOverflow, {}};
  }
  uint64_t value = numbers[last];
  for (size_t i = 0; i < last; ++i) {
    value += numbers[i] << (8 * (3 - i));
  }
  IpAddress address;
  address.family = IpAddress::Family::kIpv4;
  for (size_t i = 0; i < 4; ++i) {
    address.bytes[i] = static_cast<uint8_t>((value >> (8 * (3 - i))) & 0xff);
  }
  return {Ipv4Outcome::kAddress, address};
}

bool IsMapped(const IpAddress& a) {
  if (a.family != IpAddress::Family::kIpv6) {
    return false;
  }
  for (size_t i = 0; i < 10; ++i) {
    if (a.bytes[i] != 0) {
      return false;
    }
  }
  return a.bytes[10] == 0xff && a.bytes[11] == 0xff;
}

Host FromIp(const IpAddress& address) {
  Host host;
  host.address = UnmapIpv4(address);
  host.kind =
      host.address.family == IpAddress::Family::kIpv4 ? Host::Kind::kIpv4 : Host::Kind::kIpv6;
  host.text = FormatHostAddress(host.address);
  return host;
}

Result<Host> ParseIpv6Host(std::string_view raw, std::string_view literal) {
  std::optional<IpAddress> address = ParseIpv6(literal);
  if (!address) {
    return Malformed(raw, "is not a valid IPv6 address");
  }
  return FromIp(*address);
}

}  // namespace

IpAddress UnmapIpv4(const IpAddress& address) {
  if (!IsMapped(address)) {
    return address;
  }
  IpAddress v4;
  v4.family = IpAddress::Family::kIpv4;
  for (size_t i = 0; i < 4; ++i) {
    v4.bytes[i] = address.bytes[12 + i];
  }
  return v4;
}

bool IsLoopbackAddress(const IpAddress& address) {
  if (address.family == IpAddress::Family::kIpv4) {
    return address.bytes[0] == 127;
  }
  for (size_t i = 0; i < 15; ++i) {
    if (address.bytes[i] != 0) {
      return false;
    }
  }
  return address.bytes[15] == 1;
}

std::string FormatHostAddress(const IpAddress& address) {
  if (address.family == IpAddress::Family::kIpv4) {
    std::string out;
    for (size_t i = 0; i < 4; ++i) {
      if (i > 0) {
        out += '.';
      }
      out += std::to_string(address.bytes[i]);
    }
    return out;
  }
  std::array<unsigned, 8> pieces{};
  for (size_t i = 0; i < 8; ++i) {
    pieces[i] = (unsigned{address.bytes[2 * i]} << 8) | address.bytes[2 * i + 1];
  }
  // RFC 5952 §4.2: compress the longest run of two or more zero pieces, the first on a tie.
  size_t best_start = 8;
  size_t best_length = 1;
  for (size_t i = 0; i < 8;) {
    if (pieces[i] != 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < 8 && pieces[j] == 0) {
      ++j;
    }
    if (j - i > best_length) {
      best_start = i;
      best_length = j - i;
    }
    i = j;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < 8; ++i) {
    if (i == best_start) {
      out += "::";
      i += best_length - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') {
      out += ':';
    }
    // RFC 5952 §4.1: no leading zeros; §4.3: lower case.
    bool started = false;
    for (int shift = 12; shift >= 0; shift -= 4) {
      unsigned nibble = (pieces[i] >> shift) & 0xf;
      if (nibble != 0 || started || shift == 0) {
        out += kHex[nibble];
        started = true;
      }
    }
  }
  return out;
}

Result<Host> CanonicalizeHost(std::string_view raw) {
  if (raw.empty()) {
    return Malformed(raw, "is empty");
  }
  if (raw.size() > kMaxHostLength) {
    return Malformed(raw, "is longer than 255 characters");
  }
  for (char c : raw) {
    auto u = static_cast<unsigned char>(c);
    if (c == '%') {
      return Malformed(raw, "contains '%' (no zone ids or percent-encoding)");
    }
    if (u <= 0x20 || u == 0x7f) {
      return Malformed(raw, "contains a control character or space");
    }
    if (u >= 0x80) {
      return Malformed(raw, "contains a non-ASCII character (use the xn-- form)");
    }
  }

  // IPv6: "[...]" (URL and CONNECT authority form) or bare (SOCKS5, captured connections).
  if (raw.front() == '[') {
    if (raw.back() != ']' || raw.size() < 3) {
      return Malformed(raw, "is not a valid bracketed IPv6 address");
    }
    return ParseIpv6Host(raw, raw.substr(1, raw.size() - 2));
  }
  if (raw.find(':') != std::string_view::npos) {
    return ParseIpv6Host(raw, raw);
  }

  std::string name = ascii::ToLower(raw);
  if (name.back() == '.') {
    name.pop_back();
  }
  if (name.empty()) {
    return Malformed(raw, "has an empty label");
  }
  for (char c : name) {
    if (!IsNameChar(c)) {
      return Malformed(raw, "contains a character outside [A-Za-z0-9._-]");
    }
  }
  if (name.front() == '.' || name.back() == '.' || name.find("..") != std::string::npos) {
    return Malformed(raw, "has an empty label");
  }
  if (EndsInANumber(name)) {
    Ipv4Parse v4 = ParseWhatwgIpv4(name);
    switch (v4.outcome) {
      case Ipv4Outcome::kAddress:
        return FromIp(v4.address);
      case Ipv4Outcome::kOverflow:
        return Malformed(raw, "is an IPv4 address out of range");
      case Ipv4Outcome::kMalformed:
        break;
    }
    return Malformed(raw, "ends in a number but is not an IPv4 address");
  }
  Host host;
  host.kind = Host::Kind::kName;
  host.text = std::move(name);
  return host;
}

Host HostFromAddress(const IpAddress& address) { return FromIp(address); }

std::string FormatAuthority(const Host& host, uint16_t port) {
  std::string out;
  if (host.kind == Host::Kind::kIpv6) {
    out = "[" + host.text + "]";
  } else {
    out = host.text;
  }
  out += ':';
  out += std::to_string(port);
  return out;
}

bool IsLocalhostName(const Host& host) {
  if (host.kind != Host::Kind::kName) {
    return false;
  }
  return host.text == "localhost" || host.text.ends_with(".localhost");
}

}  // namespace srt
