// SPDX-License-Identifier: Apache-2.0
#include "policy/network.h"

#include <algorithm>
#include <map>

#include "base/ascii.h"
#include "base/strings.h"

namespace srt::policy {
namespace {

Result<std::vector<DomainRule>> Rules(const std::vector<std::string>& entries, PatternList list,
                                      const std::map<std::string, std::string>& reasons,
                                      std::string_view what = "") {
  std::vector<DomainRule> out;
  out.reserve(entries.size());
  for (const std::string& entry : entries) {
    Result<DomainPattern> pattern = ParseDomainPattern(entry, list);
    if (!pattern) {
      if (what.empty()) {
        what = list == PatternList::kDeny ? "network.deniedDomains" : "network.allowedDomains";
      }
      return std::move(pattern).error().Wrap(what);
    }
    DomainRule rule{std::move(*pattern), entry, ""};
    if (auto it = reasons.find(entry); it != reasons.end()) rule.reason = it->second;
    out.push_back(std::move(rule));
  }
  return out;
}

Result<std::optional<ProxyUrl>> Parent(const std::optional<std::string>& url,
                                       const std::string& what) {
  if (!url) return std::optional<ProxyUrl>();
  Result<ProxyUrl> parsed = ParseProxyUrl(*url);
  if (!parsed) return std::move(parsed).error().Wrap(what);
  return std::optional<ProxyUrl>(std::move(*parsed));
}

}  // namespace

Result<NetworkPolicy> ResolveNetworkPolicy(const NetworkSettings& network,
                                           const ProxyVariables& variables) {
  NetworkPolicy out;
  SRT_ASSIGN_OR_RETURN(out.allowed, Rules(network.allowed_domains, PatternList::kAllow, {}));
  SRT_ASSIGN_OR_RETURN(
      out.denied, Rules(network.denied_domains, PatternList::kDeny, network.denied_domain_reasons));
  for (const auto& [key, reason] : network.denied_domain_reasons) {
    const std::vector<std::string>& denied = network.denied_domains;
    if (std::find(denied.begin(), denied.end(), key) == denied.end()) {
      return MakeError(Errc::kInvalidArgument,
                       "network.deniedDomainReasons: " + strings::Quote(key) +
                           " is not an entry of deniedDomains (a reason is keyed by the exact "
                           "entry)");
    }
  }
  for (size_t i = 0; i < network.denied_resolved_addresses.size(); ++i) {
    Result<IpNetwork> net = ParseIpNetwork(network.denied_resolved_addresses[i]);
    if (!net) {
      return std::move(net).error().Wrap("network.deniedResolvedAddresses[" + std::to_string(i) +
                                         "]");
    }
    out.denied_resolved_addresses.push_back(*net);
  }
  // network.parentProxy, or srt's own variables when the settings name none (upstream-srt.md
  // §1.3); the proxy falls back from HTTPS to HTTP.
  ProxyVariables parents = variables;
  std::string origin = "srt's environment: ";
  if (network.parent_proxy) {
    parents = {network.parent_proxy->http, network.parent_proxy->https,
               network.parent_proxy->no_proxy};
    origin = "network.parentProxy.";
  }
  SRT_ASSIGN_OR_RETURN(out.parents.http, Parent(parents.http, origin + "http"));
  SRT_ASSIGN_OR_RETURN(out.parents.https, Parent(parents.https, origin + "https"));
  out.parents.no_proxy = parents.no_proxy.value_or("");
  for (size_t i = 0; i < network.dns_servers.size(); ++i) {
    std::optional<Endpoint> server = ParseEndpoint(network.dns_servers[i], 53);
    if (!server) {
      return MakeError(Errc::kInvalidArgument,
                       "network.dnsServers[" + std::to_string(i) +
                           "]: " + strings::Quote(network.dns_servers[i]) +
                           " is not a DNS server address; expected an IP literal with an "
                           "optional port");
    }
    out.dns_servers.push_back(*server);
  }
  out.transparent_capture = network.transparent_capture;
  out.require_host_match = network.require_host_match;
  out.refuse_opaque_tunnels = network.refuse_opaque_tunnels;
  for (const std::string& name : network.strip_response_headers) {
    out.strip_response_headers.push_back(ascii::FoldHeaderName(name));
  }
  out.http_proxy_port = network.http_proxy_port;
  out.socks_proxy_port = network.socks_proxy_port;
  if (network.tls_terminate) {
    const TlsTerminateSettings& tls = *network.tls_terminate;
    if (tls.ca_cert_path.has_value() != tls.ca_key_path.has_value()) {
      return MakeError(Errc::kInvalidArgument,
                       "network.tlsTerminate: caCertPath and caKeyPath must be provided together");
    }
    TlsTerminatePolicy policy;
    policy.ca_cert_path = tls.ca_cert_path.value_or("");
    policy.ca_key_path = tls.ca_key_path.value_or("");
    SRT_ASSIGN_OR_RETURN(policy.exclude, Rules(tls.exclude_domains, PatternList::kAllow, {},
                                               "network.tlsTerminate.excludeDomains"));
    policy.extra_ca_cert_paths = tls.extra_ca_cert_paths;
    policy.max_tunnels = tls.max_tunnels;
    policy.handshake_timeout_ms = tls.handshake_timeout_ms;
    out.tls_terminate = std::move(policy);
  }
  if (network.mitm_proxy) {
    if (network.tls_terminate) {
      return MakeError(Errc::kInvalidArgument,
                       "network.tlsTerminate and network.mitmProxy are mutually exclusive");
    }
    if (network.mitm_proxy->domains.empty()) {
      return MakeError(Errc::kInvalidArgument, "network.mitmProxy.domains: names no domain");
    }
    MitmProxyPolicy mitm;
    mitm.socket_path = network.mitm_proxy->socket_path;
    SRT_ASSIGN_OR_RETURN(mitm.domains, Rules(network.mitm_proxy->domains, PatternList::kAllow, {},
                                             "network.mitmProxy.domains"));
    out.mitm_proxy = std::move(mitm);
  }
  return out;
}

}  // namespace srt::policy
