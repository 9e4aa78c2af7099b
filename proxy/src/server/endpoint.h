// SPDX-License-Identifier: Apache-2.0
// server/endpoint.h: an Endpoint (base/address.h) to and from the kernel's sockaddr. Pure.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/address.h"

namespace srt::proxy {

// sockaddr_in or sockaddr_in6 in `storage`; returns its length.
socklen_t ToSockaddr(const Endpoint& endpoint, sockaddr_storage& storage);
// nullopt for families other than AF_INET and AF_INET6.
[[nodiscard]] std::optional<Endpoint> FromSockaddr(const sockaddr* address, socklen_t length);
// An address from a sockaddr's family and raw bytes (ifaddrs, getsockname).
[[nodiscard]] std::optional<IpAddress> AddressFromSockaddr(const sockaddr* address);

}  // namespace srt::proxy
