// SPDX-License-Identifier: Apache-2.0
// server/dialer.h: opens the upstream connection for an allowed destination: resolve a name
// (c-ares, on the loop), vet the answers with the resolved-address guard, connect to the vetted
// addresses in the resolver's order until one answers; or connect to the parent proxy and, for
// tunnels, ask it for a CONNECT; or, for hosts network.mitmProxy names (NetworkRules::mitm), do
// the same with the proxy on its unix socket (before any parent, and never falling back to
// another route). Never blocks the loop.
//
// Usage protocol (the sessions):
//   id = dialer.Dial({host, port, rules, tunnel}, [](DialOutcome o) { ... });
//   `done` runs once, on the loop thread, never inside Dial(); Cancel(id) before it drops it
//   (and closes any half-open socket). The dialer, its loop and resolver outlive the sessions.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/host.h"
#include "base/unique_fd.h"
#include "dns/resolver.h"
#include "loop/event_loop.h"
#include "server/endpoint.h"
#include "server/parent_proxy.h"
#include "server/rules.h"

namespace srt::proxy {

struct DialRequest {
  Host host;  // canonical
  uint16_t port = 0;
  std::shared_ptr<const NetworkRules> rules;  // the guard judges resolved addresses with these
  // With a parent proxy: true asks it for a CONNECT tunnel; false (plain HTTP) only connects,
  // and the session sends absolute-form requests with `parent_authorization`.
  bool tunnel = true;
};

enum class DialFailure {
  kNone,
  kBlocked,   // every resolved address was refused by the guard: error = "resolved to ..."
  kNotFound,  // the name does not exist
  kResolve,   // resolution failed otherwise (timeout, SERVFAIL, ...)
  kConnect,   // no address accepted the connection
  kParent,    // the parent proxy refused the CONNECT or broke the protocol
};

struct DialOutcome {
  DialFailure failure = DialFailure::kNone;
  std::string error;  // failure: for the client (kBlocked) or the log
  UniqueFd fd;        // success: connected, non-blocking, CLOEXEC, TCP_NODELAY
  Endpoint endpoint;  // the address connected to (the parent's when via_parent)
  bool via_parent = false;
  std::string parent_display;        // via_parent: "http://proxy:3128"
  std::string parent_authorization;  // via_parent, !tunnel: the Proxy-Authorization value
  std::string leftover;              // via_parent, tunnel: bytes the parent sent after its 2xx
  std::string route_address;         // via mitmProxy: "unix:<socket path>" (else "")
  bool ok() const { return failure == DialFailure::kNone; }
};

class Dialer {
 public:
  using Id = uint64_t;
  using Done = std::function<void(DialOutcome)>;
  struct Options {
    // Per connection attempt; an attempt with further addresses left gets at most
    // kFallbackAttemptTimeout, so one black-holed address family does not stall the rest.
    std::chrono::milliseconds connect_timeout{10000};
    const ParentProxies* parents = nullptr;  // outlives the dialer; nullptr: none
  };
  static constexpr std::chrono::milliseconds kFallbackAttemptTimeout{3000};

  Dialer(EventLoop& loop, Resolver& resolver, Options options);
  // Cancels every dial in flight.
  ~Dialer();
  Dialer(const Dialer&) = delete;
  Dialer& operator=(const Dialer&) = delete;

  Id Dial(DialRequest request, Done done);
  void Cancel(Id id);

  [[nodiscard]] size_t in_flight() const { return attempts_.size(); }

 private:
  class Attempt;
  friend class Attempt;
  void Finish(Id id, DialOutcome outcome);

  EventLoop& loop_;
  Resolver& resolver_;
  Options options_;
  std::unordered_map<Id, std::unique_ptr<Attempt>> attempts_;
  Id next_id_ = 1;
};

}  // namespace srt::proxy
