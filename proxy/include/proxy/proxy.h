// SPDX-License-Identifier: Apache-2.0
// proxy/proxy.h: srt's allowlist proxy as the rest of srt sees it: one sandbox's HTTP/SOCKS5
// proxy, transparent capture and DNS stub on a thread of its own, enforcing a NetworkPolicy
// (network_policy/network_policy.h) and nothing else: it never sees the settings.
//
// Usage protocol (net/sandbox_network.cc):
//   1. Proxy::Create(policy, config): builds the rules; no thread yet.
//   2. capture_ports() says which ports transparent capture needs sockets for.
//   3. Run(): starts the proxy's thread, which reads this host's addresses and creates the
//      server in the background (srt runs it once bubblewrap is spawned, so that it all
//      overlaps bubblewrap's set-up).
//   4. Serve(sockets): the sockets srt-agent made in the sandbox, each with its use; waits for
//      step 3 and returns once the proxy serves them, or why it cannot.
//   5. Update(policy) any time after Run() has returned, from any thread, for live allow/deny
//      changes (it is queued behind the server's creation).
//   6. StopServing() once the sandbox is empty (srt: when srt-init reports the command's end),
//      so the proxy's shutdown overlaps bubblewrap's exit; destroying it joins the thread (or
//      stops the proxy first if nobody did). Open connections are logged with end "shutdown".
// With policy.tls_terminate, Create() also makes (or loads) the CA in this process, before it
// returns; trust_bundle() is then what the sandbox must trust.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/unique_fd.h"
#include "network_policy/network_policy.h"
#include "proxy/exchange_rewriter.h"
#include "srt/result.h"

namespace srt::proxy {

// The proxy's ports on the sandbox's loopback (HTTP_PROXY and ALL_PROXY point there).
inline constexpr uint16_t kHttpProxyPort = 3128;
inline constexpr uint16_t kSocksProxyPort = 1080;

// What a socket made in the sandbox is for.
enum class SocketUse {
  kProxy,   // a proxy listener (HTTP and SOCKS5 told apart by the first byte)
  kAuto,    // a wildcard listener: the proxy on its own ports, transparent capture elsewhere
  kDnsUdp,  // the DNS stub
  kDnsTcp,
};

// One decision of the proxy, formatted: the decision log's JSON line and a line for people.
struct ProxyEvent {
  std::string json;
  std::string text;
  bool allowed = false;
  std::string destination;  // "host:port" (a DNS query: the name), escaped as in `text`
  std::string reason;       // why it was denied, escaped; "" if allowed
};

struct ProxyConfig {
  std::string sandbox_id;  // names the sandbox in the decision log
  // The per-sandbox secret a client presents (user "srt" or "srt.<anything>"); empty: none.
  std::string token;
  // Every decision, on the proxy's thread. May be empty.
  std::function<void(const ProxyEvent&)> on_event;
  // Masked credentials (credentials.*): their sentinels are swapped for the real values in
  // requests to their inject hosts, and real values back in responses. Plain-HTTP requests get
  // them only with `inject_plaintext` (credentials.allowPlaintextInject); a TLS-terminated path
  // calls the same injector (proxy/src/inject/injector.h).
  std::vector<CredentialSecret> credentials;
  bool inject_plaintext = false;
  // Masked AWS key pairs: a request on a TLS-terminated tunnel signed with SigV4 over a pair's
  // sentinel key id is re-signed with the real pair (proxy/src/inject/sigv4_plan.h); the
  // shapes it cannot re-sign are refused unless `sigv4` lets them pass.
  std::vector<AwsKeyPair> aws_pairs;
  SigV4Passthrough sigv4;
  // Requests on TLS-terminated tunnels pass through what this makes (proxy/exchange_rewriter.h).
  // Empty: none.
  RewriterFactory rewriter;
};

class Proxy {
 public:
  // Fails (kInvalidArgument) only for a policy the policy side would not have resolved.
  [[nodiscard]] static Result<std::unique_ptr<Proxy>> Create(const NetworkPolicy& policy,
                                                             ProxyConfig config);
  // Once. Fails when the thread cannot be had; what fails on the thread (this host's interface
  // addresses, the resolver) Serve() returns.
  [[nodiscard]] Result<void> Run();
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  // With TLS termination: the PEM certificates the sandbox must trust (srt's CA, the system's
  // roots, extraCaCertPaths), and what was skipped building them (for --debug). Else empty.
  [[nodiscard]] const std::string& trust_bundle() const;
  [[nodiscard]] const std::vector<std::string>& tls_notes() const;
  // 80 and 443 plus every port an allow entry names; sorted, no duplicates.
  [[nodiscard]] const std::vector<uint16_t>& capture_ports() const;
  [[nodiscard]] Result<void> Serve(std::vector<std::pair<UniqueFd, SocketUse>> sockets);
  // New decisions use the policy's domain rules and denied addresses; connections already open
  // keep theirs. Parent proxies, DNS servers, ports and TLS termination stay as started.
  // kInvalidArgument for a policy with network.mitmProxy when the proxy terminates TLS (the
  // settings refuse the two together), or before Run().
  [[nodiscard]] Result<void> Update(const NetworkPolicy& policy);
  // For when nothing is left to serve (the sandbox is empty): the loop thread destroys the
  // server (listeners, resolver, open connections, logged with end "shutdown") and then ends,
  // while the caller goes on; the destructor joins it. Idempotent; from any thread once Run()
  // has returned. Serve() after it fails; Update() after it changes nothing.
  void StopServing();

 private:
  struct State;
  explicit Proxy(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace srt::proxy
