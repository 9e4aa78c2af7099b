// SPDX-License-Identifier: Apache-2.0
// server/rules.h: the network part of a policy as the proxy applies it: the allow/deny matcher
// and the resolved-address guard, built once per policy and swapped whole on a live update
// (--control-fd). Immutable and shared: a connection keeps the rules it was decided under.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/address.h"
#include "filter/address_guard.h"
#include "filter/domain_matcher.h"
#include "network_policy/network_policy.h"
#include "srt/result.h"

namespace srt::proxy {

// network.tlsTerminate's keys that a live update changes, per next connection (upstream-srt.md
// §2.2). Whether tunnels are terminated at all, and with which CA, is fixed at start
// (TlsTermination in proxy_server.h).
struct TlsTunnelRules {
  DomainMatcher exclude;  // allow side: opaque tunnels for these
  size_t max_tunnels = 256;
  // From the tunnel's 200 to a completed handshake with the client.
  std::chrono::milliseconds handshake_timeout{10000};
};

// network.mitmProxy as the dialer applies it: allowed hosts `domains` matches go to the proxy on
// the unix socket `socket_path` (server/dialer.cc).
struct MitmRoute {
  std::string socket_path;
  DomainMatcher domains;  // allow side
};

struct NetworkRules {
  DomainMatcher matcher;
  AddressGuard guard;
  TlsTunnelRules tls;  // defaults when the policy has no tlsTerminate
  std::optional<MitmRoute> mitm;
};

// Pure. `own_addresses`: this host's interface addresses (HostInterfaceAddresses()).
[[nodiscard]] NetworkRules MakeNetworkRules(const NetworkPolicy& network,
                                            const std::vector<IpAddress>& own_addresses);
// MakeNetworkRules, shared as a connection keeps them.
[[nodiscard]] std::shared_ptr<const NetworkRules> BuildNetworkRules(
    const NetworkPolicy& network, const std::vector<IpAddress>& own_addresses);

// This host's interface addresses (getifaddrs), for the guard's "one of this host's addresses".
[[nodiscard]] Result<std::vector<IpAddress>> HostInterfaceAddresses();

}  // namespace srt::proxy
