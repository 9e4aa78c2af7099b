// SPDX-License-Identifier: Apache-2.0
// policy/network.h: `network.*` -> NetworkPolicy (network_policy/network_policy.h). Pure: srt's
// own proxy variables come in as values.
#pragma once

#include <optional>
#include <string>

#include "network_policy/network_policy.h"
#include "srt/result.h"
#include "srt/settings.h"

namespace srt::policy {

// srt's own HTTP_PROXY / HTTPS_PROXY / NO_PROXY (upper case first, then lower; empty is unset),
// used when the settings name no parentProxy.
struct ProxyVariables {
  std::optional<std::string> http;
  std::optional<std::string> https;
  std::optional<std::string> no_proxy;
};

// Fails (kInvalidArgument) naming the key and entry at fault, e.g.
// "network.allowedDomains: '*.com' is too broad ...", "network.deniedResolvedAddresses[1]: ...",
// "network.parentProxy.http: 'http://p:0' has a bad port", "srt's environment: https: ...".
// Settings validation refuses the same entries first (with the file and JSON path), so for
// loaded settings only the environment's variables can fail here.
[[nodiscard]] Result<NetworkPolicy> ResolveNetworkPolicy(const NetworkSettings& network,
                                                         const ProxyVariables& variables);

}  // namespace srt::policy
