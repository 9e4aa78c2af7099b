#include "server/rules.h"

#include <ifaddrs.h>

#include "server/endpoint.h"

namespace srt::proxy {

Result<std::shared_ptr<const NetworkRules>> BuildNetworkRules(
    const NetworkSettings& network, std::vector<IpAddress> own_addresses) {
  Result<DomainMatcher> matcher = DomainMatcher::Build(
      network.allowed_domains, network.denied_domains, network.denied_domain_reasons);
  if (!matcher) return std::move(matcher).error().Wrap("network");
  std::vector<IpNetwork> denied;
  denied.reserve(network.denied_resolved_addresses.size());
  for (size_t i = 0; i < network.denied_resolved_addresses.size(); ++i) {
    Result<IpNetwork> net = ParseIpNetwork(network.denied_resolved_addresses[i]);
    if (!net) {
      return std::move(net).error().Wrap("network.deniedResolvedAddresses[" + std::to_string(i) +
                                         "]");
    }
    denied.push_back(*net);
  }
  return std::make_shared<const NetworkRules>(
      NetworkRules{std::move(*matcher), AddressGuard(std::move(own_addresses), std::move(denied))});
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
