// SPDX-License-Identifier: Apache-2.0
// mock_dns_server.h: a scriptable DNS server on 127.0.0.1 (UDP and TCP on one port) for resolver
// and proxy tests, after c-ares' own in-process MockServer.
//
// Usage: SRT_ASSIGN_OR_RETURN(auto dns, MockDnsServer::Start());
//        dns->Set("a.test", MockDnsReply::Addresses({"192.0.2.1"}, {"2001:db8::1"}));
//        options.servers = {dns->endpoint()};
// It runs on its own thread, so it answers while the code under test blocks or runs its loop.
// Names match case-insensitively without the trailing dot; unknown names get the default reply
// (NXDOMAIN unless SetDefault says otherwise). A known name without records of the asked type
// gets NOERROR with no answer (NODATA). Over UDP a reply larger than 512 bytes (or the query's
// EDNS size) is truncated to its question with TC set (RFC 1035 §4.2.1), so clients retry over
// TCP, which always gets the whole reply.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/address.h"
#include "base/unique_fd.h"
#include "loop/thread_annotations.h"
#include "srt/result.h"

namespace srt::proxy::testing {

struct MockDnsReply {
  enum class Kind {
    kAnswer,    // NOERROR with the records below of the asked type
    kDrop,      // no reply at all: the client times out
    kServFail,  // RCODE 2
    kNxDomain,  // RCODE 3
    kRefused,   // RCODE 5
    kTruncate,  // UDP: TC bit and no answers; TCP: as kAnswer
  };
  Kind kind = Kind::kAnswer;
  std::vector<std::string> a;     // IPv4 literals, one A record each
  std::vector<std::string> aaaa;  // IPv6 literals, one AAAA record each
  std::chrono::milliseconds delay{0};

  static MockDnsReply Addresses(std::vector<std::string> a, std::vector<std::string> aaaa = {}) {
    MockDnsReply r;
    r.a = std::move(a);
    r.aaaa = std::move(aaaa);
    return r;
  }
  static MockDnsReply Of(Kind kind, std::chrono::milliseconds delay = {}) {
    MockDnsReply r;
    r.kind = kind;
    r.delay = delay;
    return r;
  }
};

class MockDnsServer {
 public:
  // Binds UDP and TCP on 127.0.0.1:<same free port> and starts the server thread.
  [[nodiscard]] static Result<std::unique_ptr<MockDnsServer>> Start();
  // Stops the thread; replies still delayed are never sent.
  ~MockDnsServer();
  MockDnsServer(const MockDnsServer&) = delete;
  MockDnsServer& operator=(const MockDnsServer&) = delete;

  [[nodiscard]] uint16_t port() const { return port_; }
  // 127.0.0.1:<port>, for ResolverOptions::servers.
  [[nodiscard]] Endpoint endpoint() const;

  // Thread-safe; take effect for queries that arrive afterwards.
  void Set(std::string_view name, MockDnsReply reply) SRT_EXCLUDES(mu_);
  void SetDefault(MockDnsReply reply) SRT_EXCLUDES(mu_);

  // Queries received (every type, UDP and TCP) for `name` / in total / over TCP.
  [[nodiscard]] size_t queries(std::string_view name) const SRT_EXCLUDES(mu_);
  [[nodiscard]] size_t total_queries() const SRT_EXCLUDES(mu_);
  [[nodiscard]] size_t tcp_queries() const SRT_EXCLUDES(mu_);
  // Waits until total_queries() >= n; false on timeout.
  [[nodiscard]] bool WaitForQueries(size_t n, std::chrono::milliseconds timeout) const;

 private:
  MockDnsServer(UniqueFd udp, UniqueFd tcp, UniqueFd stop, uint16_t port);
  void Serve();
  // The reply for one query (or none, for kDrop), and its delay; counts the query.
  struct Planned {
    bool send = false;
    std::string bytes;
    std::chrono::milliseconds delay{0};
  };
  Planned Plan(std::string_view query, bool over_tcp) SRT_EXCLUDES(mu_);

  UniqueFd udp_;
  UniqueFd tcp_;
  UniqueFd stop_;
  uint16_t port_;

  mutable Mutex mu_;
  std::unordered_map<std::string, MockDnsReply> table_ SRT_GUARDED_BY(mu_);
  MockDnsReply default_ SRT_GUARDED_BY(mu_);
  std::unordered_map<std::string, size_t> counts_ SRT_GUARDED_BY(mu_);
  size_t total_ SRT_GUARDED_BY(mu_) = 0;
  size_t tcp_total_ SRT_GUARDED_BY(mu_) = 0;

  std::thread thread_;
};

}  // namespace srt::proxy::testing
