// SPDX-License-Identifier: Apache-2.0
// The scripted resolver for session tests (fake_resolver.h).
#include "fake_resolver.h"

#include <utility>

namespace srt::proxy {

FakeResolver::FakeResolver(EventLoop& loop) : loop_(loop) {
  default_.result.error = ResolveError::kNotFound;
}

FakeResolver::~FakeResolver() {
  loop_.AssertInLoopThread();
  auto dropped = std::move(pending_);
  pending_.clear();
  for (auto& [id, p] : dropped) {
    loop_.CancelTimer(p.timer);
  }
}

void FakeResolver::Set(std::string_view name, ResolveResult result,
                       std::chrono::milliseconds delay) {
  table_[NameKey(name)] = Answer{std::move(result), delay};
}

void FakeResolver::SetAddresses(std::string_view name, const std::vector<std::string>& addresses,
                                std::chrono::milliseconds delay) {
  ResolveResult r;
  for (const std::string& text : addresses) {
    if (auto ip = ParseIpAddress(text)) {
      r.addresses.push_back(*ip);
    }
  }
  if (r.addresses.empty()) {
    r.error = ResolveError::kNotFound;
  }
  Set(name, std::move(r), delay);
}

void FakeResolver::SetDefault(ResolveResult result, std::chrono::milliseconds delay) {
  default_ = Answer{std::move(result), delay};
}

size_t FakeResolver::calls(std::string_view name) const {
  auto it = calls_by_name_.find(NameKey(name));
  return it == calls_by_name_.end() ? 0 : it->second;
}

Resolver::QueryId FakeResolver::Resolve(const std::string& name, Callback done) {
  loop_.AssertInLoopThread();
  ++calls_;
  std::string key = NameKey(name);
  ++calls_by_name_[key];
  auto it = table_.find(key);
  Answer answer = it != table_.end() ? it->second : default_;
  if (!answer.result.ok() && answer.result.error_text.empty()) {
    answer.result.error_text =
        "resolve '" + name + "': " + std::string(ResolveErrorName(answer.result.error));
  }
  QueryId id = next_id_++;
  Pending& p = pending_[id];
  p.done = std::move(done);
  // Delivered from a loop timer, even with no delay: never inside Resolve().
  p.timer = loop_.AddTimer(answer.delay, [this, id, result = std::move(answer.result)]() mutable {
    Deliver(id, std::move(result));
  });
  return id;
}

void FakeResolver::Cancel(QueryId id) {
  loop_.AssertInLoopThread();
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    return;
  }
  ++cancels_;
  loop_.CancelTimer(it->second.timer);
  Callback doomed = std::move(it->second.done);
  pending_.erase(it);
}

void FakeResolver::Deliver(QueryId id, ResolveResult result) {
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    return;
  }
  Callback done = std::move(it->second.done);
  pending_.erase(it);
  done(std::move(result));  // may destroy this resolver: touch nothing afterwards
}

}  // namespace srt::proxy
