// SPDX-License-Identifier: Apache-2.0
// base/domain_pattern.h: upstream srt's domain pattern grammar (network.allowedDomains and
// network.deniedDomains entries, upstream-srt.md §1.6). Pure; the proxy's matcher reuses it.
//
// Grammar: `host[:port]`.
//   port       1-65535 written as /^[1-9][0-9]{0,4}$/
//   host       `localhost`
//            | `*.` followed by at least two non-empty labels   (`*.co.uk`; not `*.com`)
//            | an IPv4 dotted quad, or an IPv6 literal in brackets (`[::1]`, `[2001:db8::1]:443`)
//            | a name containing `.` that neither starts nor ends with `.`
//            | `*`  (deniedDomains only: deny every host, optionally on one port)
// Matching is case-insensitive, so hosts are stored lower-cased.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "srt/result.h"

namespace srt {

// Which list an entry belongs to: deniedDomains also accepts `*` and `*:port`.
enum class PatternList { kAllow, kDeny };

struct DomainPattern {
  enum class Kind {
    kAny,       // `*`: every host (deniedDomains only); host is empty
    kWildcard,  // `*.example.com`: strict subdomains; host is the suffix, "example.com"
    kExact,     // `example.com`, `localhost`: that name only
    kIpv4,      // `10.0.0.1`: host is the dotted quad
    kIpv6,      // `[::1]`: host is the canonical (inet_ntop) form without brackets, "::1"
  };
  Kind kind = Kind::kExact;
  std::string host;              // lower-case
  std::optional<uint16_t> port;  // only this destination port when set
  bool operator==(const DomainPattern&) const = default;
};

// Parses one entry. The error (Errc::kInvalidArgument) quotes `text`, says what is wrong and
// ends in upstream srt's description of the grammar for `list`, e.g.
// "'*.com' is too broad: a wildcard needs at least two labels after '*.'. Invalid domain
// pattern. Must be a valid domain ...".
[[nodiscard]] Result<DomainPattern> ParseDomainPattern(std::string_view text, PatternList list);

// The canonical spelling of a pattern; ParseDomainPattern(FormatDomainPattern(p), list) == p.
[[nodiscard]] std::string FormatDomainPattern(const DomainPattern& pattern);

}  // namespace srt
