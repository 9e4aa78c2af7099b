// SPDX-License-Identifier: Apache-2.0
#include "server/rules.h"

#include <ifaddrs.h>

#include "server/endpoint.h"

namespace srt::proxy {

std::shared_ptr<const NetworkRules> BuildNetworkRules(const NetworkPolicy& network,
                                                      const std::vector<IpAddress>& own_addresses) {
  return std::make_shared<const NetworkRules>(MakeNetworkRules(network, own_addresses));
}

NetworkRules MakeNetworkRules(const NetworkPolicy& network,
                              const std::vector<IpAddress>& own_addresses) {
  TlsTunnelRules tls;
  if (network.tls_terminate) {
    tls.exclude = DomainMatcher::Build(network.tls_terminate->exclude, {});
    tls.max_tunnels = network.tls_terminate->max_tunnels;
    tls.handshake_timeout = std::chrono::milliseconds(network.tls_terminate->handshake_timeout_ms);
  }
  std::optional<MitmRoute> mitm;
  if (network.mitm_proxy) {
    mitm = MitmRoute{network.mitm_proxy->socket_path,
                     DomainMatcher::Build(network.mitm_proxy->domains, {})};
  }
  return NetworkRules{DomainMatcher::Build(network.allowed, network.denied),
                      AddressGuard(own_addresses, network.denied_resolved_addresses),
                      std::move(tls), std::move(mitm)};
}

Result<std::vector<IpAddress>> HostInterfaceAddresses() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return SysError("getifaddrs");
  std::vector<IpAddress> out;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr) continue;
    if (std::optional<IpAddress> a = AddressFromSockaddr(it->ifa_addr)) {
      out.push_back(*a);
    }
  }
  freeifaddrs(list);
  return out;
}

}  // namespace srt::proxy
