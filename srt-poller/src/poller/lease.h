// SPDX-License-Identifier: Apache-2.0
// srt-poller/poller/lease: keeps a work item's lease with heartbeats (protocol §2.4 step 4).
//
// LeaseState is the pure rule book: the first beat says NO_HEARTBEAT and later beats echo the
// server's last_heartbeat; the interval is clamp(ttl/2, 1 s, 30 s) (30 s until a response
// gives a TTL); 412 means another worker has the lease; a fatal 4xx, state stopping/stopped or
// lease_extended:false end the lease; transient failures are tolerated until more than one TTL
// has passed since the last success. LeaseKeeper runs it on a thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace srt::poller {

using Clock = std::chrono::steady_clock;

// What one heartbeat call returned.
struct HeartbeatReply {
  enum class Kind { kOk, kPreconditionFailed, kFatal, kTransient };
  Kind kind = Kind::kOk;
  // kOk only:
  std::string last_heartbeat;
  int64_t ttl_seconds = 0;
  std::string state;  // queued|starting|active|stopping|stopped
  bool lease_extended = true;
  // Otherwise:
  std::string error;
};

enum class LeaseEnd {
  kLost,         // 412: reclaimed by another worker (do not force-stop the item)
  kStopping,     // the server says stopping/stopped (operator stop): wind down gracefully
  kNotExtended,  // lease_extended:false
  kFatal,        // a 4xx that will never succeed
  kStale,        // transient failures for longer than the TTL
};

std::string_view LeaseEndName(LeaseEnd e);

class LeaseState {
 public:
  static constexpr std::chrono::milliseconds kDefault{30'000};
  static constexpr std::chrono::milliseconds kFloor{1'000};

  explicit LeaseState(Clock::time_point start) : last_success_(start) {}

  // The value for expected_last_heartbeat.
  const std::string& expected() const { return last_; }
  // How long to wait before the next beat (also that beat's request timeout).
  std::chrono::milliseconds interval() const { return interval_; }

  // Applies a reply received at `now`: nullopt to keep going, or why the lease ended.
  std::optional<LeaseEnd> OnReply(const HeartbeatReply& r, Clock::time_point now);

 private:
  std::string last_ = "NO_HEARTBEAT";
  std::chrono::milliseconds interval_ = kDefault;
  std::chrono::milliseconds ttl_ = kDefault;
  Clock::time_point last_success_;
};

// Beats on its own thread from Start() until the lease ends (then calls on_end once, on that
// thread) or Stop() is called (then on_end is not called).
class LeaseKeeper {
 public:
  // One heartbeat call; it should return promptly (as kTransient) once `cancel` is set.
  using Beat =
      std::function<HeartbeatReply(const std::string& expected, std::chrono::milliseconds timeout,
                                   const std::atomic<bool>& cancel)>;
  using OnEnd = std::function<void(LeaseEnd, const std::string& detail)>;
  using OnBeat = std::function<void(const HeartbeatReply&)>;

  LeaseKeeper(Beat beat, OnEnd on_end, OnBeat on_beat = {});
  ~LeaseKeeper();
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // The first beat is sent at once: the lease must be ours before slow work (skills) starts.
  void Start();
  void Stop();

 private:
  void Loop();        // the thread: Heartbeats(), and what escapes it ends the lease
  void Heartbeats();  // beats until the lease ends or Stop()

  Beat beat_;
  OnEnd on_end_;
  OnBeat on_beat_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

}  // namespace srt::poller
