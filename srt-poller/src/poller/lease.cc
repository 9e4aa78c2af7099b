// SPDX-License-Identifier: Apache-2.0
#include "poller/lease.h"

#include <algorithm>
#include <exception>
#include <string>

namespace srt::poller {

std::string_view LeaseEndName(LeaseEnd e) {
  switch (e) {
    case LeaseEnd::kLost:
      return "lease reclaimed by another worker (412)";
    case LeaseEnd::kStopping:
      return "work item is stopping";
    case LeaseEnd::kNotExtended:
      return "lease not extended";
    case LeaseEnd::kFatal:
      return "permanent heartbeat failure";
    case LeaseEnd::kStale:
      return "heartbeats failing for longer than the lease TTL";
  }
  return "lease ended";
}

std::optional<LeaseEnd> LeaseState::OnReply(const HeartbeatReply& r, Clock::time_point now) {
  switch (r.kind) {
    case HeartbeatReply::Kind::kPreconditionFailed:
      return LeaseEnd::kLost;
    case HeartbeatReply::Kind::kFatal:
      return LeaseEnd::kFatal;
    case HeartbeatReply::Kind::kTransient:
      if (now - last_success_ > ttl_) return LeaseEnd::kStale;
      return std::nullopt;
    case HeartbeatReply::Kind::kOk:
      break;
  }
  last_ = r.last_heartbeat;
  last_success_ = now;
  if (r.ttl_seconds > 0) {
    // Bound the server's TTL: a week is plenty and keeps the arithmetic far from overflow.
    int64_t ttl_s = std::min<int64_t>(r.ttl_seconds, int64_t{7} * 24 * 3600);
    ttl_ = std::max<std::chrono::milliseconds>(std::chrono::seconds(ttl_s), kFloor);
    interval_ = std::clamp<std::chrono::milliseconds>(ttl_ / 2, kFloor, kDefault);
  }
  if (r.state == "stopping" || r.state == "stopped") return LeaseEnd::kStopping;
  if (!r.lease_extended) return LeaseEnd::kNotExtended;
  return std::nullopt;
}

LeaseKeeper::LeaseKeeper(Beat beat, OnEnd on_end, OnBeat on_beat)
    : beat_(std::move(beat)), on_end_(std::move(on_end)), on_beat_(std::move(on_beat)) {}

LeaseKeeper::~LeaseKeeper() { Stop(); }

void LeaseKeeper::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void LeaseKeeper::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cancel_ = true;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// The lease's thread. An exception out of a beat or an observer (a bug of ours, memory running
// out) would std::terminate the worker: it ends the lease as fatal instead, which stops the
// session (the item is then force-stopped, as after any fatal heartbeat).
void LeaseKeeper::Loop() {
  std::string failure;
  try {
    Heartbeats();
    return;
  } catch (const std::exception& e) {
    failure = e.what();
  }
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
  }
  on_end_(LeaseEnd::kFatal, "heartbeat failed: " + failure);
}

void LeaseKeeper::Heartbeats() {
  LeaseState state(Clock::now());
  for (;;) {
    HeartbeatReply reply = beat_(state.expected(), state.interval(), cancel_);
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
    }
    if (on_beat_) on_beat_(reply);
    if (auto end = state.OnReply(reply, Clock::now())) {
      on_end_(*end, reply.kind == HeartbeatReply::Kind::kOk ? reply.state : reply.error);
      return;
    }
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, state.interval(), [this] { return stop_; })) return;
  }
}

}  // namespace srt::poller
