// SPDX-License-Identifier: Apache-2.0
// server/proxy_server.h: one sandbox's proxy: the HTTP/SOCKS5 listener(s), transparent capture,
// the DNS stub, and every connection between them and the outside. Runs on an EventLoop (its
// own LoopThread in srt; one loop may carry the proxies of many sandboxes, as in srt-poller) and
// knows only the network part of a policy.
//
// Usage protocol:
//   auto server = ProxyServer::Create(loop, options, std::move(resolver), rules);  // loop thread,
//   server->AddListener(std::move(fd), ListenerRole::kAuto);   // or before the loop runs
//   server->AddDnsSocket(std::move(udp));
//   ... server->UpdateRules(new_rules);                         // live policy update
//   server.reset();                                             // on the loop thread: closes all
// Sockets are made by srt-init inside the sandbox's network namespace and handed over; the
// server never binds anything itself.
//
// Per connection accepted, by listener role:
//   kProxy    the first byte decides: 0x05 is SOCKS5 (RFC 1928/1929), anything else HTTP/1.x
//             (CONNECT, absolute-form requests with keep-alive); SOCKS4 is refused.
//   kCapture  a transparently captured connection: its original destination is the socket's
//             local address (the sandbox routes every address to its loopback); a synthetic
//             address from the DNS stub stands for its name, any other address for itself. On
//             port 443 the TLS ClientHello's SNI must name the same host. It is then handled
//             like a CONNECT to that host.
//   kAuto     kProxy for connections to a loopback address on one of `proxy_ports`, else kCapture
//             (a wildcard listener on 3128 serves the proxy and captures that port).
// A proxy connection to a port of `external_proxies` is relayed to the user's own proxy instead.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/unique_fd.h"
#include "dns/answers.h"
#include "dns/resolver.h"
#include "filter/domain_matcher.h"
#include "inject/injector.h"
#include "loop/event_loop.h"
#include "proxy/exchange_rewriter.h"
#include "proxy/proxy.h"
#include "proxy_limits.h"
#include "server/decision_log.h"
#include "server/parent_proxy.h"
#include "server/pipe_pool.h"
#include "server/rules.h"
#include "server/tunnel.h"
#include "server/upstream_pool.h"
#include "srt/result.h"

namespace srt::proxy {

class DnsStub;
class DeciderLink;
class Dialer;
class Session;
namespace mitm {
class TlsEngine;
}

enum class ListenerRole { kProxy, kCapture, kAuto };

// network.tlsTerminate as the server applies it (server/terminated_session.cc).
struct TlsTermination {
  std::shared_ptr<mitm::TlsEngine> engine;  // loop thread only
  // excludeDomains, maxTunnels and handshakeTimeoutMs are in NetworkRules::tls: a live update
  // changes them.
  // A terminated tunnel idle between requests (after a response) is closed after this
  // (upstream srt: 6 s), and so is a kept-alive origin connection after upstream_idle (10 s).
  std::chrono::milliseconds client_idle{6000};
  std::chrono::milliseconds upstream_idle{10000};
};

struct ProxyOptions {
  // Names the sandbox in the decision log.
  std::string sandbox_id;
  // The per-sandbox secret a client must present: as the password of HTTP Basic
  // Proxy-Authorization or of SOCKS5 username/password, with a user name of "srt" or
  // "srt.<anything>". Empty: no authentication (tests; an external listener).
  std::string token;
  ParentProxies parents;
  // Every decision, on the loop thread. May be empty.
  RecordSink on_record;
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds handshake_timeout = kHandshakeTimeout;
  Tunnel::Options tunnel;  // `pipes` is set by the server (its own pool)
  size_t max_connections = kMaxConcurrentConnections;
  std::vector<uint16_t> proxy_ports = {kHttpProxyPort, kSocksProxyPort};
  // network.httpProxyPort / socksProxyPort: a proxy client on one of these sandbox ports is
  // relayed as is to the host's 127.0.0.1:<port> (an external proxy the user runs; srt applies
  // no policy and asks no credentials there). Sandbox port -> host port.
  std::vector<std::pair<uint16_t, uint16_t>> external_proxies;
  // TTL of the DNS stub's answers, seconds.
  uint32_t dns_ttl = 60;
  // Credential injection (ProxyConfig::credentials); null: none.
  std::shared_ptr<const inject::Injector> injector;
  bool inject_plaintext = false;  // also on plain-HTTP (absolute-form) requests
  // TLS termination of CONNECT tunnels; nullopt: every tunnel is opaque.
  std::optional<TlsTermination> tls;
  // The request rewriter seam (proxy/exchange_rewriter.h); empty: none.
  RewriterFactory rewriter;
  // Plain HTTP: the origin connections each client connection keeps for its next requests
  // (server/upstream_pool.h): at most per_client each, max_total for the whole server, each
  // closed after idle_timeout.
  UpstreamPool::Limits upstream_pool;
  // network.requireHostMatch: an opaque tunnel's first bytes are peeked (server/host_match.h,
  // within handshake_timeout) and must not name another host. Plain HTTP and terminated
  // tunnels check Host (and SNI) whatever this says.
  bool require_host_match = false;
  // network.refuseOpaqueTunnels: a CONNECT that is not TLS-terminated (or carries no TLS) and
  // every SOCKS5 tunnel are refused.
  bool refuse_opaque_tunnels = false;
  // network.stripResponseHeaders, folded (ascii::FoldHeaderName): dropped from responses on
  // plain HTTP and terminated tunnels.
  std::vector<std::string> strip_response_headers;
  // `srt proxy`: every plain-HTTP request is decided by this decider (server/decider_link.h)
  // before it is forwarded, and the proxy's own refusals say why in X-Deny-Reason. Not owned;
  // outlives the server. Null: none.
  DeciderLink* decider = nullptr;
  // With a decider: an allow that sets headers (or places a credential) is honoured on plain
  // HTTP too (cleartext); else such a request is refused 403.
  bool plaintext_header_set = false;
  // True if `name` (a response field name) is one of strip_response_headers.
  [[nodiscard]] bool StripsResponseHeader(std::string_view name) const;
};

// A slot of TlsTunnelRules::max_tunnels, held by a terminated tunnel from its CONNECT to its
// end (or until it turns out not to carry TLS). Returns itself on destruction.
class TlsTunnelSlot {
 public:
  explicit TlsTunnelSlot(size_t& count) : count_(&count) { ++*count_; }
  ~TlsTunnelSlot() { --*count_; }
  TlsTunnelSlot(const TlsTunnelSlot&) = delete;
  TlsTunnelSlot& operator=(const TlsTunnelSlot&) = delete;

 private:
  size_t* count_;
};

class ProxyServer {
 public:
  [[nodiscard]] static Result<std::unique_ptr<ProxyServer>> Create(
      EventLoop& loop, ProxyOptions options, std::unique_ptr<Resolver> resolver,
      std::shared_ptr<const NetworkRules> rules);
  // Loop thread only: closes listeners, the DNS stub and every connection (those in flight are
  // logged with end "shutdown").
  ~ProxyServer();
  ProxyServer(const ProxyServer&) = delete;
  ProxyServer& operator=(const ProxyServer&) = delete;

  // A listening TCP socket (made non-blocking here).
  [[nodiscard]] Result<void> AddListener(UniqueFd socket, ListenerRole role);
  // A bound UDP socket for the DNS stub, or (tcp) a listening socket for DNS over TCP.
  [[nodiscard]] Result<void> AddDnsSocket(UniqueFd socket, bool tcp = false);
  // From now on new decisions use `rules`; connections already open keep theirs.
  void UpdateRules(std::shared_ptr<const NetworkRules> rules);

  [[nodiscard]] size_t connections() const { return sessions_.size(); }
  [[nodiscard]] EventLoop& loop() { return loop_; }

  // --- For the sessions (server/session.h) --------------------------------------------------
  [[nodiscard]] const ProxyOptions& options() const { return options_; }
  [[nodiscard]] const std::shared_ptr<const NetworkRules>& rules() const { return rules_; }
  [[nodiscard]] Dialer& dialer() { return *dialer_; }
  [[nodiscard]] DnsAnswers& answers() { return answers_; }
  // True if (user, password) are this sandbox's credentials (constant time in the password).
  [[nodiscard]] bool Authorized(std::string_view user, std::string_view password) const;
  // Reports a decision; its reason and error are scrubbed (below) first.
  void Record(const ConnectionRecord& record) const;
  // `text` with every masked credential's real value replaced by its sentinel (unchanged without
  // credentials): for anything srt writes that may quote what an origin sent.
  [[nodiscard]] std::string Scrub(std::string_view text) const;
  // Takes ownership of a session created by another (the protocol mux hands over).
  Session& Adopt(std::unique_ptr<Session> session);
  // Destroys `session` (it must return right after: this deletes it).
  void EndSession(Session* session);
  // True if a CONNECT to `host`:`port`, decided under `rules`, is to be TLS-terminated (when it
  // carries TLS).
  [[nodiscard]] bool Terminates(const NetworkRules& rules, const Host& host, uint16_t port) const;
  // A terminated-tunnel slot, or null when the rules' max_tunnels are in use.
  [[nodiscard]] std::unique_ptr<TlsTunnelSlot> TakeTlsSlot(const NetworkRules& rules);
  [[nodiscard]] size_t tls_tunnels() const { return tls_tunnels_; }
  // The idle origin connections of every plain-HTTP session's pool (UpstreamPool's `total`).
  [[nodiscard]] size_t& idle_upstreams() { return idle_upstreams_; }

 private:
  class Listener;
  ProxyServer(EventLoop& loop, ProxyOptions options, std::unique_ptr<Resolver> resolver,
              std::shared_ptr<const NetworkRules> rules);
  void Accept(Listener& listener);

  EventLoop& loop_;
  ProxyOptions options_;
  std::unique_ptr<Resolver> resolver_;
  std::shared_ptr<const NetworkRules> rules_;
  std::unique_ptr<Dialer> dialer_;
  // Shared by every tunnel (idle tunnels hold no pipes); outlives the sessions below.
  PipePool pipes_;
  DnsAnswers answers_;
  size_t idle_upstreams_ = 0;  // outlives the sessions' pools
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unique_ptr<DnsStub> dns_;
  std::unordered_map<Session*, std::unique_ptr<Session>> sessions_;
  bool shutting_down_ = false;
  size_t tls_tunnels_ = 0;
};

}  // namespace srt::proxy
