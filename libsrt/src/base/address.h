// SPDX-License-Identifier: Apache-2.0
// base/address.h: IP literals, endpoints and CIDR ranges as written in settings
// (deniedResolvedAddresses, dnsServers, IP domain patterns). Pure: no I/O, no name resolution;
// reusable by the proxy's address filter.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "srt/result.h"

namespace srt {

struct IpAddress {
  enum class Family { kIpv4, kIpv6 };
  Family family = Family::kIpv4;
  // Network byte order. An IPv4 address uses bytes[0..3]; the rest stay zero.
  std::array<uint8_t, 16> bytes{};
  bool operator==(const IpAddress&) const = default;
};

// An address with a prefix length: "10.0.0.0/8", or a single address ("192.168.1.10" is /32,
// "::1" is /128). Host bits below the prefix are kept as written; Contains() ignores them.
struct IpNetwork {
  IpAddress address;
  int prefix_length = 0;  // 0..32 for IPv4, 0..128 for IPv6
  bool operator==(const IpNetwork&) const = default;
};

// An address and a port: a DNS server, a dialed destination, a socket's own address.
struct Endpoint {
  IpAddress address;
  uint16_t port = 0;
  bool operator==(const Endpoint&) const = default;
};

// Strict dotted-quad IPv4 ("10.0.0.1"; not "10.1", "0x7f.0.0.1" or "010.0.0.1").
[[nodiscard]] std::optional<IpAddress> ParseIpv4(std::string_view text);
// An unbracketed IPv6 literal ("::1", "2001:db8::1", "::ffff:10.0.0.1"), no zone id.
[[nodiscard]] std::optional<IpAddress> ParseIpv6(std::string_view text);
// Either of the above.
[[nodiscard]] std::optional<IpAddress> ParseIpAddress(std::string_view text);

// The canonical text form: dotted quad, or RFC 5952 compressed lower-case IPv6 (no brackets).
[[nodiscard]] std::string FormatIpAddress(const IpAddress& address);

// "93.184.216.34:443", "[2001:db8::1]:443".
[[nodiscard]] std::string FormatEndpoint(const Endpoint& endpoint);

// "ip", "ip:port", "[v6]", "[v6]:port" or a bare IPv6 literal (network.dnsServers); no port
// means `default_port`. Ports 1-65535, leading zeros accepted; brackets hold IPv6 only.
[[nodiscard]] std::optional<Endpoint> ParseEndpoint(std::string_view text, uint16_t default_port);

// Parses an IP literal or CIDR range, IPv6 unbracketed. The error (Errc::kInvalidArgument) quotes
// `text` and ends in upstream srt's explanation of the accepted forms.
[[nodiscard]] Result<IpNetwork> ParseIpNetwork(std::string_view text);

// True if `address` lies in `network` (same family and the first prefix_length bits agree).
// IPv4-mapped IPv6 addresses are not unmapped here; the caller canonicalises first.
[[nodiscard]] bool Contains(const IpNetwork& network, const IpAddress& address);

}  // namespace srt
