// SPDX-License-Identifier: Apache-2.0
#include "poller/lease.h"

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace srt::poller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Kind = HeartbeatReply::Kind;

HeartbeatReply Ok(std::string last, int64_t ttl, std::string state = "active",
                  bool extended = true) {
  HeartbeatReply r;
  r.last_heartbeat = std::move(last);
  r.ttl_seconds = ttl;
  r.state = std::move(state);
  r.lease_extended = extended;
  return r;
}

HeartbeatReply Failed(Kind k) {
  HeartbeatReply r;
  r.kind = k;
  r.error = "boom";
  return r;
}

TEST(LeaseState, FirstBeatSaysNoHeartbeatThenEchoes) {
  Clock::time_point t0{};
  LeaseState s(t0);
  EXPECT_EQ(s.expected(), "NO_HEARTBEAT");
  EXPECT_EQ(s.interval(), milliseconds(30'000));
  EXPECT_FALSE(s.OnReply(Ok("2026-11-29T10:00:00.123456Z", 20), t0));
  EXPECT_EQ(s.expected(), "2026-11-29T10:00:00.123456Z");
  EXPECT_EQ(s.interval(), milliseconds(10'000));
}

TEST(LeaseState, IntervalIsClampedHalfTtl) {
  Clock::time_point t0{};
  LeaseState s(t0);
  EXPECT_FALSE(s.OnReply(Ok("a", 1), t0));
  EXPECT_EQ(s.interval(), milliseconds(1'000));  // floor
  EXPECT_FALSE(s.OnReply(Ok("b", 600), t0));
  EXPECT_EQ(s.interval(), milliseconds(30'000));  // ceiling
  EXPECT_FALSE(s.OnReply(Ok("c", 0), t0));        // no TTL: keep the last interval
  EXPECT_EQ(s.interval(), milliseconds(30'000));
  EXPECT_FALSE(s.OnReply(Ok("d", INT64_MAX), t0));  // absurd TTL is bounded, no overflow
  EXPECT_EQ(s.interval(), milliseconds(30'000));
}

TEST(LeaseState, EndsOn412FatalStoppingAndNotExtended) {
  Clock::time_point t0{};
  EXPECT_EQ(LeaseState(t0).OnReply(Failed(Kind::kPreconditionFailed), t0), LeaseEnd::kLost);
  EXPECT_EQ(LeaseState(t0).OnReply(Failed(Kind::kFatal), t0), LeaseEnd::kFatal);
  EXPECT_EQ(LeaseState(t0).OnReply(Ok("x", 30, "stopping"), t0), LeaseEnd::kStopping);
  EXPECT_EQ(LeaseState(t0).OnReply(Ok("x", 30, "stopped"), t0), LeaseEnd::kStopping);
  EXPECT_EQ(LeaseState(t0).OnReply(Ok("x", 30, "active", false), t0), LeaseEnd::kNotExtended);
}

TEST(LeaseState, TransientFailuresAreToleratedForOneTtl) {
  Clock::time_point t0{};
  LeaseState s(t0);
  EXPECT_FALSE(s.OnReply(Ok("a", 10), t0));
  EXPECT_FALSE(s.OnReply(Failed(Kind::kTransient), t0 + seconds(5)));
  EXPECT_FALSE(s.OnReply(Failed(Kind::kTransient), t0 + seconds(10)));
  EXPECT_EQ(s.expected(), "a");  // a failure does not change what we echo
  EXPECT_EQ(s.OnReply(Failed(Kind::kTransient), t0 + seconds(11)), LeaseEnd::kStale);
  // A success in between restarts the window.
  LeaseState r(t0);
  EXPECT_FALSE(r.OnReply(Ok("a", 10), t0));
  EXPECT_FALSE(r.OnReply(Failed(Kind::kTransient), t0 + seconds(9)));
  EXPECT_FALSE(r.OnReply(Ok("b", 10), t0 + seconds(10)));
  EXPECT_FALSE(r.OnReply(Failed(Kind::kTransient), t0 + seconds(19)));
}

TEST(LeaseKeeper, BeatsAtOnceThenAtTheIntervalAndReportsTheEnd) {
  std::mutex mu;
  std::vector<std::string> expected;
  std::atomic<int> n{0};
  std::atomic<bool> ended{false};
  LeaseEnd end{};
  LeaseKeeper k(
      [&](const std::string& e, milliseconds, const std::atomic<bool>&) {
        {
          std::lock_guard lock(mu);
          expected.push_back(e);
        }
        int i = ++n;
        if (i < 3) return Ok("hb" + std::to_string(i), 1);  // 1 s TTL -> 1 s interval
        return Failed(Kind::kPreconditionFailed);
      },
      [&](LeaseEnd e, const std::string&) {
        end = e;
        ended = true;
      });
  auto t0 = Clock::now();
  k.Start();
  for (int i = 0; i < 500 && !ended; ++i) std::this_thread::sleep_for(milliseconds(10));
  ASSERT_TRUE(ended);
  EXPECT_EQ(end, LeaseEnd::kLost);
  EXPECT_GE(Clock::now() - t0, milliseconds(1'900));  // two 1 s waits
  std::lock_guard lock(mu);
  EXPECT_EQ(expected, (std::vector<std::string>{"NO_HEARTBEAT", "hb1", "hb2"}));
}

TEST(LeaseKeeper, StopCancelsAnInFlightBeatAndSkipsOnEnd) {
  std::atomic<bool> in_beat{false};
  bool called = false;
  LeaseKeeper k(
      [&](const std::string&, milliseconds, const std::atomic<bool>& cancel) {
        in_beat = true;
        while (!cancel) std::this_thread::sleep_for(milliseconds(1));
        return Failed(Kind::kTransient);
      },
      [&](LeaseEnd, const std::string&) { called = true; });
  k.Start();
  while (!in_beat) std::this_thread::sleep_for(milliseconds(1));
  k.Stop();
  EXPECT_FALSE(called);
}

// A beat that throws (a bug, or memory running out) ends the lease as a fatal one; it must not
// take the worker down with std::terminate.
TEST(LeaseKeeper, ABeatThatThrowsEndsTheLeaseAsFatal) {
  std::atomic<bool> ended{false};
  LeaseEnd end{};
  std::string detail;
  LeaseKeeper k(
      [&](const std::string&, milliseconds, const std::atomic<bool>&) -> HeartbeatReply {
        throw std::runtime_error("beat broke");
      },
      [&](LeaseEnd e, const std::string& d) {
        end = e;
        detail = d;
        ended = true;
      });
  k.Start();
  for (int i = 0; i < 500 && !ended; ++i) std::this_thread::sleep_for(milliseconds(10));
  ASSERT_TRUE(ended);
  k.Stop();
  EXPECT_EQ(end, LeaseEnd::kFatal);
  EXPECT_EQ(detail, "heartbeat failed: beat broke");
}

}  // namespace
}  // namespace srt::poller
