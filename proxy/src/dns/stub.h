// SPDX-License-Identifier: Apache-2.0
// dns/stub.h: the DNS server on the sandbox's loopback (127.0.0.1:53, named by the
// sandbox's resolv.conf). It answers names the policy allows with their real addresses where it
// may show them, else with synthetic ones (dns/answers.h), and records each answer so that
// transparent capture can map the address a client connects to back to the name; it refuses
// every other name without any query leaving the host.
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
//     is NXDOMAIN inside as outside):
//       not found -> NXDOMAIN; timeout, server failure, refused, overloaded -> SERVFAIL;
//       found -> A: the real IPv4 addresses that `may_show` accepts and the table records (at
//                   most kMaxShownAddresses, in the resolver's order); if there are none, the
//                   name's synthetic address (SERVFAIL if the table is full);
//                AAAA and every other type: NOERROR with no answer (NODATA), so clients use
//                IPv4;
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
#include "dns/answers.h"
#include "dns/resolver.h"
#include "loop/event_loop.h"
#include "proxy_limits.h"
#include "srt/result.h"

namespace srt::proxy {

class DnsStub {
 public:
  // Real addresses in one answer: eight A records keep a response well inside the 512 bytes of a
  // DNS message over UDP without EDNS.
  static constexpr size_t kMaxShownAddresses = 8;

  struct Options {
    // The policy: may `name` (canonical) get an answer? Empty reason = allowed; otherwise the
    // refusal reason (DomainMatcher's kNotAllowedReason, kDenyListReason or a configured one).
    // Called for every query, so a policy update takes effect for the next query. Empty
    // function: every name is refused.
    std::function<std::string(std::string_view name)> refusal_reason;
    // May the sandbox be shown this real address (IPv4, unmapped) of an allowed name? The proxy
    // says yes only for addresses its guard would let a name reach on any port, so that a client
    // is never shown an address srt would refuse (loopback, this host's own, metadata...): such a
    // name gets a synthetic address, and the refusal comes with a reason when it connects. Empty
    // function: only synthetic addresses are shown.
    std::function<bool(const IpAddress& address)> may_show;
    // Told about every refused name (decision log); may be empty.
    std::function<void(std::string_view name, std::string_view reason)> on_denied;
    uint32_t ttl = 60;
    size_t max_inflight = 256;
    size_t max_tcp_connections = 64;
    // Time for one DNS-over-TCP exchange (see Limits above); tests shorten it.
    std::chrono::milliseconds tcp_query_timeout = kHandshakeTimeout;
  };

  DnsStub(EventLoop& loop, Resolver& resolver, DnsAnswers& table, Options options);
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
