// SPDX-License-Identifier: Apache-2.0
// Domain pattern validation: upstream srt's isValidDomainPattern plus its host[:port] split.
#include "base/domain_pattern.h"

#include <algorithm>
#include <optional>
#include <string>

#include "base/address.h"
#include "base/ascii.h"
#include "base/strings.h"

namespace srt {
namespace {

// Upstream srt's validation message, verbatim, followed by the list-specific sentence.
constexpr std::string_view kInvalidPatternText =
    "Invalid domain pattern. Must be a valid domain (e.g., \"example.com\"), a wildcard (e.g., "
    "\"*.example.com\"), or a bracketed IPv6 literal (e.g., \"[::1]\", \"[2001:db8::1]:443\"). "
    "Overly broad patterns like \"*.com\" or \"*\" are not allowed for security reasons.";
constexpr std::string_view kAllowSuffix =
    " An optional \":port\" suffix (1-65535) restricts the entry to that port.";
constexpr std::string_view kDenySuffix =
    " In deniedDomains a bare \"*\" (deny-all) is also accepted, and an optional \":port\" suffix "
    "(1-65535) restricts the entry to that port.";

constexpr std::string_view kNotValid = "is not a valid domain pattern";

Error Invalid(std::string_view text, PatternList list, std::string_view reason) {
  std::string message = strings::Quote(text);
  message += ' ';
  message += reason;
  message += ". ";
  message += kInvalidPatternText;
  message += list == PatternList::kAllow ? kAllowSuffix : kDenySuffix;
  return MakeError(Errc::kInvalidArgument, std::move(message));
}

// True if `name` is at least two non-empty dot-separated labels.
bool HasTwoNonEmptyLabels(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') {
    return false;
  }
  if (name.find("..") != std::string_view::npos) {
    return false;
  }
  return name.find('.') != std::string_view::npos;
}

// Why the lower-cased `name` can be no host name a request names (so the entry would never
// match, or not what it says), or nullopt when it can be one.
std::optional<std::string> NotAHostName(std::string_view name) {
  if (name.size() > 253) return "is longer than a host name can be (253 characters)";
  bool last_numeric = false;
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    std::string_view label = name.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (label.empty()) return "has an empty label";
    if (label.size() > 63) return "has a label longer than 63 characters";
    for (char c : label) {
      const auto u = static_cast<unsigned char>(c);
      if (u >= 0x80) {
        return "is not ASCII: write an internationalised name as clients send it, in punycode "
               "(xn--...)";
      }
      if (!ascii::IsAlpha(c) && !ascii::IsDigit(c) && c != '-' && c != '_') {
        return "contains " + strings::QuoteForMessage(std::string_view(&c, 1)) +
               ", which no host name has";
      }
    }
    if (label.front() == '-' || label.back() == '-') {
      return "has a label that starts or ends with '-'";
    }
    last_numeric =
        std::all_of(label.begin(), label.end(), [](char c) { return ascii::IsDigit(c); });
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (last_numeric) {
    return "is neither an IPv4 address (four decimal numbers, a.b.c.d) nor a host name (whose "
           "last label is never a number)";
  }
  return std::nullopt;
}

}  // namespace

Result<DomainPattern> ParseDomainPattern(std::string_view text, PatternList list) {
  DomainPattern pattern;

  // Bracketed IPv6 literal, optionally with a port: "[::1]", "[2001:db8::1]:443".
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return Invalid(text, list, kNotValid);
    }
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return Invalid(text, list, kNotValid);
      }
      pattern.port = ascii::ParsePort(rest.substr(1), ascii::LeadingZeros::kRefused);
      if (!pattern.port) {
        return Invalid(text, list, "has an invalid port (1-65535)");
      }
    }
    // Upstream strips the brackets and would then accept "[example.com]" as a name that no
    // request can ever match; only an IPv6 literal may be bracketed here.
    std::optional<IpAddress> address = ParseIpv6(text.substr(1, close - 1));
    if (!address) {
      return Invalid(text, list,
                     "is not a valid domain pattern: only an IPv6 address may be in brackets");
    }
    pattern.kind = DomainPattern::Kind::kIpv6;
    pattern.host = FormatIpAddress(*address);
    return pattern;
  }

  if (text.find("://") != std::string_view::npos) {
    return Invalid(text, list, "is a URL, not a domain pattern: write only the host name");
  }
  std::string_view host = text;
  const size_t colons = static_cast<size_t>(std::count(text.begin(), text.end(), ':'));
  if (colons > 1) {
    if (ParseIpv6(text)) {
      return Invalid(
          text, list,
          "is an IPv6 address without brackets: write it as '[" + std::string(text) + "]'");
    }
    return Invalid(text, list, kNotValid);
  }
  if (colons == 1) {
    size_t colon = text.find(':');
    host = text.substr(0, colon);
    pattern.port = ascii::ParsePort(text.substr(colon + 1), ascii::LeadingZeros::kRefused);
    if (!pattern.port) {
      return Invalid(text, list, "has an invalid port (1-65535)");
    }
  }
  if (host.find('/') != std::string_view::npos) {
    return Invalid(text, list, "contains a '/': write only the host name");
  }
  pattern.host = ascii::ToLower(host);
  const std::string& name = pattern.host;

  if (name == "*") {
    if (list == PatternList::kAllow) {
      return Invalid(text, list,
                     "is too broad: '*' (every host) is accepted only in deniedDomains");
    }
    pattern.kind = DomainPattern::Kind::kAny;
    pattern.host.clear();
    return pattern;
  }
  if (name == "localhost") {
    pattern.kind = DomainPattern::Kind::kExact;
    return pattern;
  }
  if (name.starts_with("*.")) {
    std::string_view suffix = std::string_view(name).substr(2);
    if (suffix.find('*') != std::string_view::npos) {
      return Invalid(text, list, kNotValid);
    }
    if (suffix.find('.') == std::string_view::npos) {  // "*.", "*.com"
      return Invalid(text, list, "is too broad: a wildcard needs at least two labels after '*.'");
    }
    if (!HasTwoNonEmptyLabels(suffix)) {  // "*..com", "*.a.", "*.a..b"
      return Invalid(text, list, kNotValid);
    }
    if (auto why = NotAHostName(suffix)) return Invalid(text, list, *why);
    pattern.kind = DomainPattern::Kind::kWildcard;
    pattern.host = std::string(suffix);
    return pattern;
  }
  if (name.find('*') != std::string::npos) {  // "*example.com", "a.*.com", "*"-anything else
    return Invalid(text, list,
                   "is not a valid domain pattern: '*' may only start a pattern, as '*.'");
  }
  if (ParseIpv4(name)) {
    pattern.kind = DomainPattern::Kind::kIpv4;
    return pattern;
  }
  if (name.find('.') == std::string::npos || name.front() == '.' || name.back() == '.') {
    return Invalid(text, list, kNotValid);
  }
  if (auto why = NotAHostName(name)) return Invalid(text, list, *why);
  pattern.kind = DomainPattern::Kind::kExact;
  return pattern;
}

std::string FormatDomainPattern(const DomainPattern& pattern) {
  std::string out;
  switch (pattern.kind) {
    case DomainPattern::Kind::kAny:
      out = "*";
      break;
    case DomainPattern::Kind::kWildcard:
      out = "*." + pattern.host;
      break;
    case DomainPattern::Kind::kExact:
    case DomainPattern::Kind::kIpv4:
      out = pattern.host;
      break;
    case DomainPattern::Kind::kIpv6:
      out = "[" + pattern.host + "]";
      break;
  }
  if (pattern.port) {
    out += ':';
    out += std::to_string(*pattern.port);
  }
  return out;
}

}  // namespace srt
