// SPDX-License-Identifier: Apache-2.0
// server/rules.h: the network part of a policy as the proxy applies it: the allow/deny matcher
// and the resolved-address guard, built once per policy and swapped whole on a live update
// (--control-fd). Immutable and shared: a connection keeps the rules it was decided under.
#pragma once

#include <memory>
#include <vector>

#include "base/address.h"
#include "filter/address_guard.h"
#include "filter/domain_matcher.h"
#include "network_policy/network_policy.h"
#include "srt/result.h"

namespace srt::proxy {

struct NetworkRules {
  DomainMatcher matcher;
  AddressGuard guard;
};

// Pure. `own_addresses`: this host's interface addresses (HostInterfaceAddresses()).
[[nodiscard]] std::shared_ptr<const NetworkRules> BuildNetworkRules(
    const NetworkPolicy& network, const std::vector<IpAddress>& own_addresses);

// This host's interface addresses (getifaddrs), for the guard's "one of this host's addresses".
[[nodiscard]] Result<std::vector<IpAddress>> HostInterfaceAddresses();

}  // namespace srt::proxy
