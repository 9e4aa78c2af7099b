// SPDX-License-Identifier: Apache-2.0
// base/host.h: the one normaliser of destination hosts. Every host a client names (CONNECT
// authority, absolute-URI host, SOCKS5 name or address, a captured connection's DNS name) goes
// through CanonicalizeHost() once; the result is what the matcher judges, what the guard vets,
// what the log shows and what the dialer connects to. Pure: no I/O, no name resolution.
//
// Usage:
//   SRT_ASSIGN_OR_RETURN(Host host, CanonicalizeHost(request.host));   // error: kMalformedHost
//   Decision d = matcher.Evaluate(host, request.port);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/address.h"
#include "srt/result.h"

namespace srt {

// The refusal reason (HTTP status phrase, violation line) for a host CanonicalizeHost rejects.
inline constexpr std::string_view kMalformedHost = "malformed host";

// The longest host accepted, in bytes, as written by the client (upstream's host sanity check).
inline constexpr size_t kMaxHostLength = 255;

struct Host {
  enum class Kind { kName, kIpv4, kIpv6 };
  Kind kind = Kind::kName;
  // kName: lower-case, no trailing dot ("example.com"). kIpv4: dotted quad ("127.0.0.1").
  // kIpv6: WHATWG/RFC 5952 compressed lower-case hex without brackets and without mixed
  // dotted notation ("::7f00:1", "2001:db8::1"); never an IPv4-mapped address.
  std::string text;
  // kIpv4/kIpv6 only (the address `text` spells); zero for kName.
  IpAddress address;

  bool is_ip() const { return kind != Kind::kName; }
  bool operator==(const Host&) const = default;
};

// Canonicalises what a client asked for. Follows the WHATWG URL host parser where it matters:
//   - ASCII lower-case; exactly one trailing dot stripped ("LOCALHOST." -> "localhost");
//   - IPv4 in any inet_aton form -> dotted quad: "127.1", "2130706433", "0x7f.1", "0177.0.0.1"
//     (each part decimal, 0x-hex or 0-octal; at most four parts; the last part fills the
//     remaining bytes);
//   - a name whose last label is a number ("foo.1", "a.0x10") must be such an IPv4 address,
//     else it is malformed (WHATWG "ends in a number");
//   - IPv6 in brackets or bare -> compressed; IPv4-mapped (::ffff:a.b.c.d) -> that IPv4 address.
//     IPv4-compatible (::a.b.c.d), NAT64 and 6to4 forms stay IPv6: AddressGuard judges them by
//     the IPv4 address they carry.
// Punycode ("xn--...") is kept as written; non-ASCII is rejected (there is no IDNA here).
// Error (Errc::kDenied), message "malformed host: '<raw>' <why>", for: empty, longer than
// kMaxHostLength, '%' anywhere (no zone ids, no percent-encoding), control characters, space or
// non-ASCII, a name outside [A-Za-z0-9._-], an empty label, an IPv4 number that overflows, a bad
// IPv6 literal, brackets around anything but IPv6. The HTTP/SOCKS reason is kMalformedHost.
[[nodiscard]] Result<Host> CanonicalizeHost(std::string_view raw);

// The host for an address a client gave in binary (SOCKS5 ATYP 1/4, a captured connection's
// original destination). IPv4-mapped IPv6 becomes IPv4, as in CanonicalizeHost().
[[nodiscard]] Host HostFromAddress(const IpAddress& address);

// An IPv4-mapped IPv6 address (::ffff:0:0/96) as the IPv4 address it maps; others unchanged.
[[nodiscard]] IpAddress UnmapIpv4(const IpAddress& address);

// 127.0.0.0/8 or ::1. An IPv4-mapped address is not unmapped here: pass UnmapIpv4() of it.
[[nodiscard]] bool IsLoopbackAddress(const IpAddress& address);

// WHATWG serialisation of an address: dotted quad, or compressed IPv6 without mixed notation.
// Unlike FormatIpAddress (inet_ntop), "::7f00:1" is not written "::127.0.0.1".
[[nodiscard]] std::string FormatHostAddress(const IpAddress& address);

// "host:port" with IPv6 in brackets: "example.com:443", "[::1]:8080".
[[nodiscard]] std::string FormatAuthority(const Host& host, uint16_t port);

// True for the reserved localhost names (RFC 6761 §6.3): `localhost` and `*.localhost`.
// Such names may only resolve to loopback (AddressGuard::Vet).
[[nodiscard]] bool IsLocalhostName(const Host& host);

}  // namespace srt
