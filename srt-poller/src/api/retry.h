// SPDX-License-Identifier: Apache-2.0
// api/retry.h: when and how long to wait before retrying a call (pure; randomness injected).
//
// The rules follow the Go SDK (work-queue-protocol.md §2.4, §2.5):
//   - ShouldRetry: connection errors, 408, 409, 429 and 5xx retry; `x-should-retry: true|false`
//     overrides the status. Stop, ack and heartbeat pass ConflictPolicy::kFinal: there a 409
//     means "already stopped" and retrying cannot help.
//   - RetryAfter: `Retry-After-Ms`, then `Retry-After` (seconds or an HTTP-date), clamped to
//     [0, kMaxRetryAfter].
//   - Backoff: poll/ack failures, 1 s doubling to 60 s, jittered into [b/2, b).
//   - PollEmptySleep: uniform in [1 s, 3 s) after an empty poll.
//   - ReconnectBackoff: SSE reconnects, 0.5 s doubling to 10 s, reset after 5 s of healthy stream.
// Every random choice takes `u`, a uniform number in [0, 1), so tests pin it; DefaultUniform()
// is the production source.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>

#include "api/headers.h"

namespace srt::poller {

using Millis = std::chrono::milliseconds;

// Returns a uniform number in [0, 1).
using UniformSource = std::function<double()>;
// A thread-safe source (one PRNG per thread, seeded from std::random_device).
UniformSource DefaultUniform();

enum class ConflictPolicy {
  kRetry,  // 409 is transient (the Go SDK default)
  kFinal,  // 409 is an answer: stop, ack, heartbeat ("already stopped")
};

// `status` is nullopt for a transport error (no HTTP response at all).
bool ShouldRetry(std::optional<int> status, const Headers& headers,
                 ConflictPolicy conflict = ConflictPolicy::kRetry);

// Any 4xx except 408 (timeout) and 429 (rate limited): retrying will not help.
bool IsFatal4xx(int status);

inline constexpr Millis kMaxRetryAfter{60'000};

// The server's requested delay, or nullopt when neither header is present or parsable.
// Retry-After-Ms wins over Retry-After (Go SDK order). Negative values and past dates give 0;
// anything longer than kMaxRetryAfter is clamped to it.
std::optional<Millis> RetryAfter(const Headers& headers, std::chrono::system_clock::time_point now);

// RFC 9110 §5.6.7 HTTP-date: IMF-fixdate, plus the obsolete RFC 850 and asctime forms.
std::optional<std::chrono::system_clock::time_point> ParseHttpDate(std::string_view text);

// Delay before automatic retry number `attempt` (0-based) of one call: the server's Retry-After
// when given, else 0.5 s * 2^attempt capped at 8 s, minus up to 25 % jitter (Go SDK retryDelay).
Millis SdkRetryDelay(int attempt, std::optional<Millis> retry_after, double u);

// A uniform duration in [base/2, base); `base` itself when base <= 1 ms.
Millis Jitter(Millis base, double u);
// A uniform duration in [lo, hi); `lo` when hi <= lo.
Millis UniformBetween(Millis lo, Millis hi, double u);

// Sleep after an empty poll: uniform in [1 s, 3 s).
Millis PollEmptySleep(double u);

// Exponential backoff for consecutive failures. The n-th failure since Reset() sleeps
// Jitter(min(base * 2^(n-1), cap)): 1 s, 2 s, 4 s ... 60 s with the defaults.
class Backoff {
 public:
  explicit Backoff(Millis base = Millis{1000}, Millis cap = Millis{60'000});
  // Records a failure and returns how long to sleep before the next attempt.
  Millis Next(double u);
  // The un-jittered delay the next failure will use.
  Millis next_base() const { return next_; }
  int failures() const { return failures_; }
  void Reset();

 private:
  Millis base_;
  Millis cap_;
  Millis next_;
  int failures_ = 0;
};

// SSE reconnect backoff (Go SessionToolRunner streamLoop): 0.5 s doubling to 10 s, jittered into
// [b/2, b); reset to 0.5 s once a stream has stayed up for more than 5 s.
class ReconnectBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Millis kStart{500};
  static constexpr Millis kCap{10'000};
  static constexpr Millis kHealthyAfter{5'000};

  // A stream (re)connected at `now`.
  void OnConnected(Clock::time_point now);
  // An event arrived at `now`: a stream up for more than kHealthyAfter resets the backoff.
  void OnEvent(Clock::time_point now);
  // The stream ended at `now`: returns the sleep before reconnecting, then doubles the base.
  Millis Next(Clock::time_point now, double u);
  Millis next_base() const { return next_; }

 private:
  Millis next_ = kStart;
  std::optional<Clock::time_point> connected_at_;
};

}  // namespace srt::poller
