// SPDX-License-Identifier: Apache-2.0
// tests/unit/proxy/dns/fake_resolver.h: a test double of the proxy's Resolver (dns/resolver.h),
// kept out of the production libraries.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dns/resolver.h"
#include "loop/event_loop.h"

namespace srt::proxy {

// A scripted resolver for session tests: answers from a table, optionally after a delay (a loop
// timer), and counts what it was asked. Names match case-insensitively, trailing dot ignored.
class FakeResolver final : public Resolver {
 public:
  explicit FakeResolver(EventLoop& loop);
  // Pending callbacks are dropped without being called (as in the real resolver).
  ~FakeResolver() override;
  FakeResolver(const FakeResolver&) = delete;
  FakeResolver& operator=(const FakeResolver&) = delete;

  // Answer `name` with `result` after `delay`.
  void Set(std::string_view name, ResolveResult result,
           std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  // Shorthand: answer `name` with these IP literals (which must parse; bad ones are skipped).
  void SetAddresses(std::string_view name, const std::vector<std::string>& addresses,
                    std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  // Answer for names not in the table; by default kNotFound.
  void SetDefault(ResolveResult result,
                  std::chrono::milliseconds delay = std::chrono::milliseconds(0));

  QueryId Resolve(const std::string& name, Callback done) override;
  void Cancel(QueryId id) override;

  // Resolve() calls in total / for one name; lookups started and not yet answered or cancelled.
  [[nodiscard]] size_t calls() const { return calls_; }
  [[nodiscard]] size_t calls(std::string_view name) const;
  [[nodiscard]] size_t pending() const { return pending_.size(); }
  [[nodiscard]] size_t cancels() const { return cancels_; }

 private:
  struct Answer {
    ResolveResult result;
    std::chrono::milliseconds delay{0};
  };
  struct Pending {
    Callback done;
    EventLoop::TimerId timer = EventLoop::kNoTimer;
  };
  void Deliver(QueryId id, ResolveResult result);

  EventLoop& loop_;
  std::unordered_map<std::string, Answer> table_;
  Answer default_;
  std::unordered_map<QueryId, Pending> pending_;
  std::unordered_map<std::string, size_t> calls_by_name_;
  size_t calls_ = 0;
  size_t cancels_ = 0;
  QueryId next_id_ = 1;
};

}  // namespace srt::proxy
