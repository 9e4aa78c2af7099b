// SPDX-License-Identifier: Apache-2.0
#include "server/endpoint.h"

#include <netinet/in.h>

#include <cstring>

namespace srt::proxy {

socklen_t ToSockaddr(const Endpoint& endpoint, sockaddr_storage& storage) {
  std::memset(&storage, 0, sizeof storage);
  if (endpoint.address.family == IpAddress::Family::kIpv4) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&storage);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(endpoint.port);
    std::memcpy(&sin->sin_addr, endpoint.address.bytes.data(), 4);
    return sizeof(sockaddr_in);
  }
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&storage);
  sin6->sin6_family = AF_INET6;
  sin6->sin6_port = htons(endpoint.port);
  std::memcpy(&sin6->sin6_addr, endpoint.address.bytes.data(), 16);
  return sizeof(sockaddr_in6);
}

std::optional<IpAddress> AddressFromSockaddr(const sockaddr* address) {
  if (address == nullptr) return std::nullopt;
  IpAddress a;
  if (address->sa_family == AF_INET) {
    a.family = IpAddress::Family::kIpv4;
    std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, 4);
    return a;
  }
  if (address->sa_family == AF_INET6) {
    a.family = IpAddress::Family::kIpv6;
    std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, 16);
    return a;
  }
  return std::nullopt;
}

std::optional<Endpoint> FromSockaddr(const sockaddr* address, socklen_t length) {
  if (address == nullptr) return std::nullopt;
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    return Endpoint{*AddressFromSockaddr(address),
                    ntohs(reinterpret_cast<const sockaddr_in*>(address)->sin_port)};
  }
  if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    return Endpoint{*AddressFromSockaddr(address),
                    ntohs(reinterpret_cast<const sockaddr_in6*>(address)->sin6_port)};
  }
  return std::nullopt;
}

}  // namespace srt::proxy
