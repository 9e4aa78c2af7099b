// SPDX-License-Identifier: Apache-2.0
// dns/stub.h: the DNS server on the sandbox's loopback (127.0.0.1:53, named by the
// sandbox's resolv.conf). It answers names the policy allows with synthetic addresses
// (synthetic_addresses.h), so that a client that ignores proxy variables connects to an address
// transparent capture maps back to the name, and refuses every other name without any query
// leaving the host.
//
// Usage protocol (ProxyServer):
//   DnsStub stub(loop, resolver, table, {.refusal_reason = ..., .on_denied = ...});
//   stub.AddUdpSocket(std::move(udp_fd));      // bound in the sandbox's netns by srt-init
//   stub.AddTcpListener(std::move(tcp_fd));    // optional: DNS over TCP (RFC 7766)
// Everything runs on the loop thread; the loop, resolver and table outlive the stub.
//
// Answers, for a query parsed by dns/message.h (which handles FORMERR, NOTIMP, REFUSED, BADVERS):
//   - the name is not allowed (`refusal_reason` non-empty, as DomainMatcher's is for the root;
//     IP literals never get this far: message.h answers them REFUSED): NXDOMAIN, and
//     `on_denied(name, reason)` is called once per query; the resolver is not asked;
//   - an allowed name is first resolved for real with `resolver` (so a name that does not exist
//     is NXDOMAIN inside as outside; the real addresses are never shown to the sandbox):
//       not found -> NXDOMAIN; timeout, server failure, refused, overloaded -> SERVFAIL;
//       found -> A: the name's synthetic address (SERVFAIL if the table is full);
//                AAAA and every other type: NOERROR with no answer (NODATA), so clients use
//                IPv4, which capture maps;
//   - class other than IN: NODATA for allowed names.
//   Answers carry TTL `ttl`. Lookups for the same name that overlap share one resolution.
// Limits: at most `max_inflight` queries waiting for the resolver (more: SERVFAIL at once); TCP:
// at most `max_tcp_connections` clients (more: accepted and reset), `tcp_query_timeout` per query
// (from the moment the connection is ready for it until its response is written; then the
// connection is closed), one query at a time per connection (pipelined ones are read in order;
// nothing more is read while one is being answered, so a connection buffers at most one frame of
// input and one response). UDP answers that meet a full send buffer are dropped (the client
// retries).
// Stopping: destroying the stub closes every socket and cancels its lookups; no callback of the
// stub runs afterwards.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/unique_fd.h"
#include "dns/resolver.h"
#include "dns/synthetic_addresses.h"
#include "loop/event_loop.h"
#include "proxy_limits.h"
#include "srt/result.h"

namespace srt::proxy {

class DnsStub {
 public:
  struct Options {
    // The policy: may `name` (canonical) get an answer? Empty reason = allowed; otherwise the
    // refusal reason (DomainMatcher's kNotAllowedReason, kDenyListReason or a configured one).
    // Called for every query, so a policy update takes effect for the next query. Empty
    // function: every name is refused.
    std::function<std::string(std::string_view name)> refusal_reason;
    // Told about every refused name (decision log); may be empty.
    std::function<void(std::string_view name, std::string_view reason)> on_denied;
    uint32_t ttl = 60;
    size_t max_inflight = 256;
    size_t max_tcp_connections = 64;
    // Time for one DNS-over-TCP exchange (see Limits above); tests shorten it.
    std::chrono::milliseconds tcp_query_timeout = kHandshakeTimeout;
  };

  DnsStub(EventLoop& loop, Resolver& resolver, SyntheticAddresses& table, Options options);
  // Unregisters and closes every socket; cancels pending lookups.
  ~DnsStub();
  DnsStub(const DnsStub&) = delete;
  DnsStub& operator=(const DnsStub&) = delete;

  // A bound UDP socket (non-blocking, CLOEXEC; made so here if it is not). Fails with
  // kInvalidArgument for a socket that is not SOCK_DGRAM, kSystem if fcntl or epoll fail; the
  // socket is closed then.
  [[nodiscard]] Result<void> AddUdpSocket(UniqueFd socket);
  // A listening TCP socket (SOCK_STREAM, listen() called; made non-blocking and CLOEXEC here).
  // Failures as for AddUdpSocket.
  [[nodiscard]] Result<void> AddTcpListener(UniqueFd socket);

  // Counters for tests and --debug.
  // A query is counted once in `queries` when it is received; the other counters count its
  // outcome, so NODATA answers (AAAA, other types), protocol errors (FORMERR, REFUSED, ...) and
  // queries still waiting are in none of them.
  struct Stats {
    uint64_t queries = 0;   // messages that parsed as queries (dns/message.h did not drop them)
    uint64_t answered = 0;  // NOERROR with an address
    uint64_t refused = 0;   // NXDOMAIN for a name the policy refuses
    // NXDOMAIN / SERVFAIL from resolution, and SERVFAIL for an allowed name because of a limit
    // (max_inflight, a full table)
    uint64_t failed = 0;
  };
  [[nodiscard]] const Stats& stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace srt::proxy
