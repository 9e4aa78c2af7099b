// SPDX-License-Identifier: Apache-2.0
// server/upstream_pool.h: the origin connections one plain-HTTP client connection keeps between
// its requests (server/http_session.cc), so that keep-alive requests to the same origin skip the
// dial. A kept connection is reused only by the client connection that opened it, only for the
// same canonical authority (host:port, through the same parent or none) and only under the very
// rules it was dialed and vetted under: after a rules update it is never reused (the next Take
// closes it), so the dialer's guard judges the destination again.
//
// Usage protocol (loop thread only; one pool per client session):
//   conn = std::make_unique<UpstreamConn>(loop, fd, identity)   after a dial
//   conn->Activate(&handler); conn->SetInterest(EPOLLIN | ...)   during an exchange
//   pool.Put(std::move(conn))   after an exchange whose response was read to its end and that
//                               left the connection reusable (the caller decides that)
//   conn = pool.Take(identity)  before dialing; null when nothing fits
// An idle connection is watched for EPOLLIN: an origin has nothing to say between requests, so
// bytes (a 408 before an idle close, say) or a close drop it at once. It is closed after
// `idle_timeout`, when the pool holds `per_client` others (the oldest goes), and it is not kept at
// all when `total` (shared by every pool of a server) reached `max_total`.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <string>

#include "base/unique_fd.h"
#include "loop/event_loop.h"

namespace srt::proxy {

struct NetworkRules;

// What an origin connection was opened for; reuse needs all of it equal.
struct UpstreamIdentity {
  std::string authority;  // canonical host:port (server/endpoint.h FormatAuthority)
  // The rules it was dialed and vetted under; held, so that no later rules object can take
  // their address and pass for them.
  std::shared_ptr<const NetworkRules> rules;
  bool via_parent = false;
  std::string parent_authorization;
  std::string address;  // the address the dialer vetted and connected to, for the log

  [[nodiscard]] bool SameDestination(const UpstreamIdentity& other) const {
    return authority == other.authority && rules == other.rules;
  }
};

// One connection to an origin and its epoll registration. Events go to the active owner's
// handler; while idle (no owner) any event closes it, through the pool.
class UpstreamConn final : public Handler {
 public:
  UpstreamConn(EventLoop& loop, UniqueFd fd, UpstreamIdentity identity);
  ~UpstreamConn() override;
  UpstreamConn(const UpstreamConn&) = delete;
  UpstreamConn& operator=(const UpstreamConn&) = delete;

  [[nodiscard]] int fd() const { return fd_.get(); }
  [[nodiscard]] const UpstreamIdentity& identity() const { return identity_; }
  // Events go to `owner` from now on (null: idle, see UpstreamPool).
  void Activate(Handler* owner) { owner_ = owner; }
  // The epoll mask (registers on first use; 0 unregisters: a level-triggered hang-up nobody
  // reads would spin the loop). false if epoll refused.
  [[nodiscard]] bool SetInterest(uint32_t events);
  // Unregisters and gives the socket away (an upgraded exchange becomes a tunnel).
  [[nodiscard]] UniqueFd Release();

  void OnEvents(uint32_t events) override;

 private:
  friend class UpstreamPool;
  EventLoop& loop_;
  UniqueFd fd_;
  UpstreamIdentity identity_;
  Handler* owner_ = nullptr;
  bool registered_ = false;
  uint32_t interest_ = 0;
  // While idle in a pool: the pool, its entry and the idle timer.
  class UpstreamPool* pool_ = nullptr;
  EventLoop::TimerId idle_timer_ = EventLoop::kNoTimer;
};

class UpstreamPool {
 public:
  struct Limits {
    size_t per_client = 4;
    size_t max_total = 256;
    std::chrono::milliseconds idle_timeout{10000};
  };
  // `total` counts the idle connections of every pool sharing it (the server's); it must
  // outlive the pool.
  UpstreamPool(EventLoop& loop, size_t& total, Limits limits);
  ~UpstreamPool();
  UpstreamPool(const UpstreamPool&) = delete;
  UpstreamPool& operator=(const UpstreamPool&) = delete;

  // Keeps `conn` idle (or closes it at the limits). It must be fully drained both ways.
  void Put(std::unique_ptr<UpstreamConn> conn);
  // An idle connection to the same destination under the same rules, or null; connections kept
  // under other rules than `want`'s are closed on the way (rules only move forward). The caller
  // Activate()s it and sets its interest.
  [[nodiscard]] std::unique_ptr<UpstreamConn> Take(const UpstreamIdentity& want);
  [[nodiscard]] size_t size() const { return idle_.size(); }
  void Clear();

 private:
  friend class UpstreamConn;
  void Drop(UpstreamConn* conn);  // an idle connection spoke, closed or timed out

  EventLoop& loop_;
  size_t& total_;
  Limits limits_;
  std::list<std::unique_ptr<UpstreamConn>> idle_;  // most recently used first
};

}  // namespace srt::proxy
