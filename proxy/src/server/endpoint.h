// server/endpoint.h: an IP address and port, and its conversion to and from the kernel's
// sockaddr. Pure.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/address.h"

namespace srt::proxy {

struct Endpoint {
  IpAddress address;
  uint16_t port = 0;
  bool operator==(const Endpoint&) const = default;
};

// sockaddr_in or sockaddr_in6 in `storage`; returns its length.
socklen_t ToSockaddr(const Endpoint& endpoint, sockaddr_storage& storage);
// nullopt for families other than AF_INET and AF_INET6.
[[nodiscard]] std::optional<Endpoint> FromSockaddr(const sockaddr* address, socklen_t length);
// An address from a sockaddr's family and raw bytes (ifaddrs, getsockname).
[[nodiscard]] std::optional<IpAddress> AddressFromSockaddr(const sockaddr* address);
// "93.184.216.34:443", "[2001:db8::1]:443".
[[nodiscard]] std::string FormatEndpoint(const Endpoint& endpoint);

}  // namespace srt::proxy
