// SPDX-License-Identifier: Apache-2.0
// dns/resolver.h: asynchronous name -> IP addresses for the proxy's sessions (house style §2.6).
//
// Usage protocol:
//   1. CreateAresResolver(loop, options) (FakeResolver in tests), on the loop's thread or before
//      the loop runs. The loop must outlive the resolver.
//   2. id = resolver->Resolve(name, done): `done` runs later on the loop thread, exactly once,
//      never inside Resolve() itself (so a session can call Resolve() in any state without
//      re-entering itself), unless Cancel(id) came first.
//   3. Cancel(id) when the session dies or stops caring: `done` never runs after it, and it is
//      destroyed (with whatever it captured) before Cancel() returns. Unknown or finished ids
//      are ignored.
//   4. Destroying the resolver drops every pending `done` without calling it.
// Every method, the destructor included, runs on the loop thread (EventLoop::AssertInLoopThread).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/address.h"
#include "base/ascii.h"
#include "loop/event_loop.h"
#include "proxy_limits.h"
#include "srt/result.h"

namespace srt::proxy {

// A name as the resolvers compare it: lower-case, without one trailing dot ("LocalHost." is
// "localhost").
inline std::string NameKey(std::string_view name) {
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  return ascii::ToLower(name);
}

// Why a lookup produced no address. Independent of c-ares, whose types stay out of headers.
enum class ResolveError {
  kOk = 0,
  kNotFound,  // NXDOMAIN, or the name has no A and no AAAA record (NODATA)
  kTimeout,   // no server answered within the configured timeout and tries
  // No server gave a usable answer: SERVFAIL, REFUSED, NOTIMP, FORMERR, an unparsable answer,
  // or nothing listening (ICMP port unreachable). c-ares 1.18 moves on to the next server on
  // SERVFAIL/REFUSED/NOTIMP and then reports all of these alike, so they are one error here.
  kServerFailure,
  kBadName,     // empty, longer than 253 characters, a NUL byte, or a malformed label
  kOverloaded,  // ResolverOptions::max_inflight lookups were already in flight
  kInternal,    // out of memory, socket failure, anything else
};

// "not-found", "timeout", ...: stable names for logs and tests.
[[nodiscard]] std::string_view ResolveErrorName(ResolveError error);

struct ResolveResult {
  // A and AAAA addresses in c-ares' order (RFC 6724 destination sorting, which puts addresses
  // this host cannot reach last), duplicates removed, at most ResolverOptions::max_answers.
  // Non-empty exactly when error == kOk. IPv4-mapped IPv6 answers are kept as IPv6; the address
  // filter canonicalises.
  std::vector<IpAddress> addresses;
  ResolveError error = ResolveError::kOk;
  // Empty on success, else "resolve 'name': <reason>", with the name quoted.
  std::string error_text;

  [[nodiscard]] bool ok() const { return error == ResolveError::kOk; }
};

class Resolver {
 public:
  using Callback = std::function<void(ResolveResult)>;
  using QueryId = uint64_t;

  virtual ~Resolver() = default;
  // Starts a lookup of `name` (a host name; IP literals and "localhost" are answered without
  // DNS). Never fails synchronously: problems come back through `done`. Ids are never 0.
  virtual QueryId Resolve(const std::string& name, Callback done) = 0;
  // `done` of `id` never runs after this.
  virtual void Cancel(QueryId id) = 0;
};

struct ResolverOptions {
  // Tried in order (network.dnsServers, parsed by settings validation). Empty: the system's
  // configuration (resolv.conf's servers; /etc/hosts before DNS). Explicit servers are used for
  // DNS only, without /etc/hosts. Never a search list: a name is looked up as the policy saw it.
  std::vector<Endpoint> servers;
  // Per attempt. c-ares doubles it for every further round over the servers, so with one server
  // a lookup that gets no answer fails after timeout * (2^tries - 1): 2 s + 4 s by default.
  std::chrono::milliseconds timeout{2000};
  int tries = 2;
  // Addresses kept per lookup (house style §2.6: a limit on what a DNS server controls).
  size_t max_answers = kMaxDnsAnswers;
  // Lookups in flight in c-ares, cancelled ones included until c-ares lets go of them. More
  // fail at once (asynchronously) with kOverloaded.
  size_t max_inflight = 1024;
};

// The production resolver: c-ares' ares_getaddrinfo (A and AAAA) driven by `loop` through
// ARES_OPT_SOCK_STATE_CB, ares_process_fd and one loop timer set from ares_timeout, so it never
// blocks the loop (the /etc/hosts read for system configurations is a local file read).
// Fails with kInvalidArgument for bad options (the message quotes the bad value) and kSystem
// when c-ares cannot initialise (e.g. an unreadable resolv.conf).
[[nodiscard]] Result<std::unique_ptr<Resolver>> CreateAresResolver(EventLoop& loop,
                                                                   const ResolverOptions& options);

}  // namespace srt::proxy
