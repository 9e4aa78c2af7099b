// SPDX-License-Identifier: Apache-2.0
// IP literal and CIDR parsing on top of inet_pton(3)/inet_ntop(3), which are pure conversions.
#include "base/address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "base/ascii.h"
#include "base/strings.h"

namespace srt {
namespace {

// Upstream srt's message for a bad deniedResolvedAddresses entry, verbatim.
constexpr std::string_view kInvalidNetworkText =
    "Invalid IP address or CIDR range. Use an IPv4/IPv6 literal or CIDR, e.g. \"10.0.0.0/8\", "
    "\"192.168.1.10\", \"fc00::/7\" (IPv6 unbracketed).";

// inet_pton needs a NUL-terminated string; an embedded NUL must not truncate the input.
bool HasNul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

Error InvalidNetwork(std::string_view text, std::string_view reason) {
  std::string message = strings::Quote(text);
  message += ' ';
  message += reason;
  message += ". ";
  message += kInvalidNetworkText;
  return MakeError(Errc::kInvalidArgument, std::move(message));
}

// A decimal prefix length without sign or leading zeros, or nullopt.
std::optional<int> ParsePrefixLength(std::string_view text) {
  if (text.empty() || text.size() > 3) {
    return std::nullopt;
  }
  if (text.size() > 1 && text[0] == '0') {
    return std::nullopt;
  }
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

std::optional<IpAddress> ParseIpv4(std::string_view text) {
  if (text.empty() || HasNul(text)) {
    return std::nullopt;
  }
  std::string copy(text);
  in_addr addr{};
  if (inet_pton(AF_INET, copy.c_str(), &addr) != 1) {
    return std::nullopt;
  }
  IpAddress out;
  out.family = IpAddress::Family::kIpv4;
  std::memcpy(out.bytes.data(), &addr, sizeof addr);
  return out;
}

std::optional<IpAddress> ParseIpv6(std::string_view text) {
  if (text.empty() || HasNul(text)) {
    return std::nullopt;
  }
  std::string copy(text);
  in6_addr addr{};
  if (inet_pton(AF_INET6, copy.c_str(), &addr) != 1) {
    return std::nullopt;
  }
  IpAddress out;
  out.family = IpAddress::Family::kIpv6;
  std::memcpy(out.bytes.data(), &addr, sizeof addr);
  return out;
}

std::optional<IpAddress> ParseIpAddress(std::string_view text) {
  if (std::optional<IpAddress> v4 = ParseIpv4(text)) {
    return v4;
  }
  return ParseIpv6(text);
}

std::string FormatIpAddress(const IpAddress& address) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (address.family == IpAddress::Family::kIpv4) {
    in_addr addr{};
    std::memcpy(&addr, address.bytes.data(), sizeof addr);
    inet_ntop(AF_INET, &addr, buf, sizeof buf);
  } else {
    in6_addr addr{};
    std::memcpy(&addr, address.bytes.data(), sizeof addr);
    inet_ntop(AF_INET6, &addr, buf, sizeof buf);
  }
  return buf;
}

Result<IpNetwork> ParseIpNetwork(std::string_view text) {
  size_t slash = text.find('/');
  std::string_view literal = text.substr(0, slash);
  std::optional<IpAddress> address = ParseIpAddress(literal);
  if (!address) {
    return InvalidNetwork(text, "is not a valid address");
  }
  const int max_length = address->family == IpAddress::Family::kIpv4 ? 32 : 128;
  IpNetwork network{*address, max_length};
  if (slash != std::string_view::npos) {
    std::optional<int> length = ParsePrefixLength(text.substr(slash + 1));
    if (!length) {
      return InvalidNetwork(text, "has an invalid prefix length");
    }
    if (*length > max_length) {
      return InvalidNetwork(
          text, "has a prefix length out of range (0.." + std::to_string(max_length) + ")");
    }
    network.prefix_length = *length;
  }
  return network;
}

std::string FormatEndpoint(const Endpoint& endpoint) {
  std::string host = FormatIpAddress(endpoint.address);
  if (endpoint.address.family == IpAddress::Family::kIpv6) host = "[" + host + "]";
  return host + ":" + std::to_string(endpoint.port);
}

std::optional<Endpoint> ParseEndpoint(std::string_view text, uint16_t default_port) {
  std::optional<IpAddress> address;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    address = ParseIpv6(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port_text = rest.substr(1);
      if (port_text.empty()) return std::nullopt;
    }
  } else if (std::optional<IpAddress> whole = ParseIpAddress(text)) {
    address = whole;  // "10.0.0.1", or a bare IPv6 literal (whose colons are not a port's)
  } else if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    address = ParseIpv4(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    if (port_text.empty()) return std::nullopt;
  }
  if (!address) return std::nullopt;
  Endpoint out{*address, default_port};
  if (!port_text.empty()) {
    std::optional<uint16_t> port = ascii::ParsePort(port_text, ascii::LeadingZeros::kAccepted);
    if (!port) return std::nullopt;
    out.port = *port;
  }
  return out;
}

bool Contains(const IpNetwork& network, const IpAddress& address) {
  if (network.address.family != address.family) {
    return false;
  }
  int remaining = network.prefix_length;
  for (size_t i = 0; i < address.bytes.size() && remaining > 0; ++i, remaining -= 8) {
    const unsigned mask = remaining >= 8 ? 0xffu : (0xffu << (8 - remaining)) & 0xffu;
    if ((network.address.bytes[i] & mask) != (address.bytes[i] & mask)) {
      return false;
    }
  }
  return true;
}

}  // namespace srt
