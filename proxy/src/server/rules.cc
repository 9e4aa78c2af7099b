// SPDX-License-Identifier: Apache-2.0
#include "server/rules.h"

#include <ifaddrs.h>

#include "server/endpoint.h"

namespace srt::proxy {

std::shared_ptr<const NetworkRules> BuildNetworkRules(const NetworkPolicy& network,
                                                      const std::vector<IpAddress>& own_addresses) {
  return std::make_shared<const NetworkRules>(
      NetworkRules{DomainMatcher::Build(network.allowed, network.denied),
                   AddressGuard(own_addresses, network.denied_resolved_addresses)});
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
