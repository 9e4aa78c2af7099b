// SPDX-License-Identifier: Apache-2.0
// resolve_waiter.h: runs an EventLoop on the test's thread until resolver callbacks arrived.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "dns/resolver.h"
#include "loop/event_loop.h"

namespace srt::proxy::testing {

// Runs `loop` until `done()` holds or `limit` passed (checked every millisecond); returns done().
inline bool RunUntil(EventLoop& loop, const std::function<bool()>& done,
                     std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  std::function<void()> poll;
  poll = [&] {
    if (done() || std::chrono::steady_clock::now() >= deadline) {
      loop.Stop();
      return;
    }
    loop.AddTimer(std::chrono::milliseconds(1), poll);
  };
  loop.AddTimer(std::chrono::milliseconds(0), poll);
  loop.Run();
  return done();
}

inline void RunFor(EventLoop& loop, std::chrono::milliseconds how_long) {
  loop.AddTimer(how_long, [&loop] { loop.Stop(); });
  loop.Run();
}

// Resolves `name` and runs the loop until the answer is in.
inline ResolveResult ResolveNow(EventLoop& loop, Resolver& resolver, const std::string& name,
                                std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  std::optional<ResolveResult> out;
  Resolver::QueryId id = resolver.Resolve(name, [&out](ResolveResult r) { out = std::move(r); });
  if (!RunUntil(
          loop, [&] { return out.has_value(); }, limit)) {
    resolver.Cancel(id);
    ADD_FAILURE() << "no answer for '" << name << "' within " << limit.count() << " ms";
    return ResolveResult{{}, ResolveError::kInternal, "test: no answer"};
  }
  return *out;
}

// "192.0.2.1" etc. for readable expectations.
inline std::vector<std::string> Texts(const ResolveResult& r) {
  std::vector<std::string> out;
  for (const auto& ip : r.addresses) {
    out.push_back(FormatIpAddress(ip));
  }
  return out;
}

}  // namespace srt::proxy::testing
