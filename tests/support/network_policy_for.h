// SPDX-License-Identifier: Apache-2.0
// support/network_policy_for.h: the proxy's tests build what they enforce from settings-style
// lists, through the policy side (policy/network.h) exactly as srt does. Header-only: a test
// that includes it links srt::policy and srt::proxy_filter.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "filter/domain_matcher.h"
#include "network_policy/network_policy.h"
#include "policy/network.h"
#include "srt/result.h"
#include "srt/settings.h"

namespace srt::testing {

// The network policy srt would enforce for `network` (no proxy variables of srt's own).
inline Result<NetworkPolicy> NetworkPolicyFor(const NetworkSettings& network) {
  return policy::ResolveNetworkPolicy(network, {});
}

// The matcher for network.allowedDomains / deniedDomains / deniedDomainReasons; fails as
// resolving the policy does.
inline Result<proxy::DomainMatcher> DomainMatcherFor(
    const std::vector<std::string>& allowed, const std::vector<std::string>& denied,
    const std::map<std::string, std::string>& reasons) {
  NetworkSettings network;
  network.allowed_domains = allowed;
  network.denied_domains = denied;
  network.denied_domain_reasons = reasons;
  SRT_ASSIGN_OR_RETURN(NetworkPolicy policy, NetworkPolicyFor(network));
  return proxy::DomainMatcher::Build(policy.allowed, policy.denied);
}

}  // namespace srt::testing
