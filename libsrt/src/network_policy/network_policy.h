// SPDX-License-Identifier: Apache-2.0
// network_policy/network_policy.h: the network part of a policy, typed: what srt's proxy
// enforces, resolved once on the policy side (policy/network.h) from `network.*` and srt's own
// proxy variables, so that a bad entry fails where the settings are read and the proxy parses
// nothing again. The contract between policy and proxy: pure data on base's vocabulary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/address.h"
#include "base/domain_pattern.h"
#include "base/proxy_url.h"

namespace srt {

// One allowedDomains or deniedDomains entry, in list order (the first deny entry that matches
// gives the reason).
struct DomainRule {
  DomainPattern pattern;
  std::string entry;   // as written in the settings, for the decision log
  std::string reason;  // deniedDomainReasons[entry] as written (deny side), else ""
  bool operator==(const DomainRule&) const = default;
};

// Where srt chains to instead of dialing: network.parentProxy, or srt's own HTTP_PROXY /
// HTTPS_PROXY / NO_PROXY when the settings name none.
struct ParentProxyPolicy {
  std::optional<ProxyUrl> http;
  std::optional<ProxyUrl> https;
  // A NO_PROXY list as written: Go's forgiving grammar, which skips what it cannot read and so
  // never fails (the proxy's filter/no_proxy.h reads it).
  std::string no_proxy;
  bool operator==(const ParentProxyPolicy&) const = default;
};

// A masked credential as srt's proxy knows it: the sentinel the sandbox holds and the real value
// the proxy puts in its place, in requests to `inject_hosts` only (and back: a response that
// echoes `real` carries `sentinel` to the sandbox). Lives only in srt's memory.
struct CredentialSecret {
  std::string name;      // for the decision log: "env GITHUB_TOKEN", "env CFG#1", "file /p"
  std::string sentinel;  // never empty, never equal to `real`
  std::string real;
  std::vector<DomainPattern> inject_hosts;  // host patterns, ports dropped
  bool operator==(const CredentialSecret&) const = default;
};

// A masked AWS key pair (credentials.awsPairs, or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN): a request to `inject_hosts` signed with SigV4 over the sentinel key id is
// re-signed with the real pair. Lives only in srt's memory, like CredentialSecret.
struct AwsKeyPair {
  std::string name;  // for the decision log: "env AWS_ACCESS_KEY_ID"
  std::string access_key_id_sentinel;
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;                // "" : none
  std::vector<DomainPattern> inject_hosts;  // the key id's, ports dropped
  bool operator==(const AwsKeyPair&) const = default;
};

// credentials.sigv4: what becomes of a SigV4 request over a masked pair that the proxy cannot
// re-sign. false: refused (403, the default); true: forwarded as signed (the origin refuses it).
struct SigV4Passthrough {
  bool streaming = false;
  bool presigned = false;
  bool sigv4a = false;
  bool operator==(const SigV4Passthrough&) const = default;
};

// network.tlsTerminate: which CONNECT tunnels the proxy terminates, with which CA, and its
// bounds. The files are named, not read: the proxy opens them itself (srt's process).
struct TlsTerminatePolicy {
  // Both or neither; neither: an ephemeral CA made in srt's memory.
  std::string ca_cert_path;
  std::string ca_key_path;
  std::vector<DomainRule> exclude;  // opaque tunnels for these
  std::vector<std::string> extra_ca_cert_paths;
  uint32_t max_tunnels = 256;
  uint32_t handshake_timeout_ms = 10000;
  bool operator==(const TlsTerminatePolicy&) const = default;
};

// network.mitmProxy: allowed hosts matching `domains` go through the proxy on `socket_path` (a
// unix socket of the host, vetted by the facade: outside every write root, no symlinks).
struct MitmProxyPolicy {
  std::string socket_path;
  std::vector<DomainRule> domains;
  bool operator==(const MitmProxyPolicy&) const = default;
};

struct NetworkPolicy {
  std::vector<DomainRule> allowed;
  std::vector<DomainRule> denied;
  std::vector<IpNetwork> denied_resolved_addresses;
  ParentProxyPolicy parents;
  std::vector<Endpoint> dns_servers;  // empty: the host's resolv.conf
  bool transparent_capture = true;
  // httpProxyPort / socksProxyPort: the host port of the user's own proxy behind 3128 / 1080.
  std::optional<uint16_t> http_proxy_port;
  std::optional<uint16_t> socks_proxy_port;
  std::optional<TlsTerminatePolicy> tls_terminate;
  std::optional<MitmProxyPolicy> mitm_proxy;
  // network.requireHostMatch: opaque tunnels (CONNECT, SOCKS5) are peeked too, and refused when
  // their first bytes name another host (plain HTTP and terminated tunnels always are).
  bool require_host_match = false;
  // network.refuseOpaqueTunnels: CONNECT tunnels that are not terminated, and all of SOCKS5.
  bool refuse_opaque_tunnels = false;
  // network.stripResponseHeaders, folded (FoldHeaderName): dropped from responses on plain HTTP
  // and terminated tunnels.
  std::vector<std::string> strip_response_headers;
  bool operator==(const NetworkPolicy&) const = default;
};

}  // namespace srt
