// SPDX-License-Identifier: Apache-2.0
// retry_test.cc: ShouldRetry, Retry-After parsing and the backoff schedules (api/retry.h).
#include "api/retry.h"

#include <gtest/gtest.h>

namespace srt::poller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

constexpr double kAlmostOne = 0.999999;

TEST(RetryTest, ShouldRetryFollowsTheGoSdk) {
  const Headers none;
  EXPECT_TRUE(ShouldRetry(std::nullopt, none));  // connection error
  for (int s : {408, 409, 429, 500, 502, 503, 504, 599}) EXPECT_TRUE(ShouldRetry(s, none)) << s;
  for (int s : {200, 204, 301, 400, 401, 403, 404, 412, 422}) {
    EXPECT_FALSE(ShouldRetry(s, none)) << s;
  }
  EXPECT_FALSE(ShouldRetry(409, none, ConflictPolicy::kFinal));
  EXPECT_FALSE(ShouldRetry(409, Headers{{"x-should-retry", "true"}}, ConflictPolicy::kFinal));
  EXPECT_TRUE(ShouldRetry(400, Headers{{"X-Should-Retry", "true"}}));
  EXPECT_FALSE(ShouldRetry(503, Headers{{"x-should-retry", "false"}}));
  EXPECT_TRUE(ShouldRetry(503, Headers{{"x-should-retry", "maybe"}}));
}

TEST(RetryTest, IsFatal4xx) {
  EXPECT_TRUE(IsFatal4xx(400));
  EXPECT_TRUE(IsFatal4xx(401));
  EXPECT_TRUE(IsFatal4xx(404));
  EXPECT_TRUE(IsFatal4xx(412));
  EXPECT_FALSE(IsFatal4xx(408));
  EXPECT_FALSE(IsFatal4xx(429));
  EXPECT_FALSE(IsFatal4xx(500));
  EXPECT_FALSE(IsFatal4xx(399));
}

TEST(RetryTest, RetryAfterForms) {
  const auto now = system_clock::time_point{seconds{784111777}};  // Sun, 06 Nov 1994 08:49:37
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After-Ms", "250"}}, now), milliseconds(250));
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", "3"}}, now), milliseconds(3000));
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", "1.5"}}, now), milliseconds(1500));
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", "Sun, 06 Nov 1994 08:49:47 GMT"}}, now),
            milliseconds(10'000));
  // -Ms wins over the seconds form.
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", "9"}, {"retry-after-ms", "100"}}, now),
            milliseconds(100));
  // A bad -Ms falls through to Retry-After.
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After-Ms", "soon"}, {"Retry-After", "2"}}, now),
            milliseconds(2000));
  // Bounds: negative and past dates are 0; huge values clamp to 60 s.
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", "-5"}}, now), milliseconds(0));
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", "Sun, 06 Nov 1994 08:00:00 GMT"}}, now),
            milliseconds(0));
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", "86400"}}, now), kMaxRetryAfter);
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", "1e400"}}, now), std::nullopt);
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", "nan"}}, now), std::nullopt);
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", "0x10"}}, now), std::nullopt);
  EXPECT_EQ(RetryAfter(Headers{{"Retry-After", ""}}, now), std::nullopt);
  EXPECT_EQ(RetryAfter(Headers{}, now), std::nullopt);
}

TEST(RetryTest, HttpDateForms) {
  const auto expected = system_clock::time_point{seconds{784111777}};
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), expected);
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), expected);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994"), expected);
  EXPECT_EQ(ParseHttpDate("Thu, 01 Jan 1970 00:00:00 GMT"), system_clock::time_point{});
  EXPECT_FALSE(ParseHttpDate("Sun, 06 Foo 1994 08:49:37 GMT"));
  EXPECT_FALSE(ParseHttpDate("Sun, 06 Nov 1994 25:49:37 GMT"));
  EXPECT_FALSE(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 PST"));
  EXPECT_FALSE(ParseHttpDate("yesterday"));
  EXPECT_FALSE(ParseHttpDate(""));
}

TEST(RetryTest, SdkRetryDelay) {
  EXPECT_EQ(SdkRetryDelay(0, std::nullopt, 0.0), milliseconds(500));
  EXPECT_EQ(SdkRetryDelay(1, std::nullopt, 0.0), milliseconds(1000));
  EXPECT_EQ(SdkRetryDelay(5, std::nullopt, 0.0), milliseconds(8000));  // cap
  EXPECT_EQ(SdkRetryDelay(100, std::nullopt, 0.0), milliseconds(8000));
  EXPECT_GT(SdkRetryDelay(0, std::nullopt, kAlmostOne), milliseconds(375));  // minus < 25 %
  EXPECT_EQ(SdkRetryDelay(3, milliseconds(1234), 0.5), milliseconds(1234));
}

TEST(RetryTest, JitterStaysInHalfOpenRange) {
  EXPECT_EQ(Jitter(milliseconds(1000), 0.0), milliseconds(500));
  EXPECT_LT(Jitter(milliseconds(1000), kAlmostOne), milliseconds(1000));
  EXPECT_LT(Jitter(milliseconds(1000), 1.0), milliseconds(1000));  // clamped into [0,1)
  EXPECT_EQ(Jitter(milliseconds(1000), -3.0), milliseconds(500));
  EXPECT_EQ(PollEmptySleep(0.0), milliseconds(1000));
  EXPECT_EQ(PollEmptySleep(0.5), milliseconds(2000));
  EXPECT_LT(PollEmptySleep(kAlmostOne), milliseconds(3000));
}

TEST(RetryTest, BackoffDoublesToTheCap) {
  Backoff b;
  std::vector<int64_t> bases;
  for (int i = 0; i < 9; ++i) {
    bases.push_back(b.next_base().count());
    const auto d = b.Next(0.0);
    EXPECT_EQ(d.count(), bases.back() / 2);
  }
  EXPECT_EQ(bases,
            (std::vector<int64_t>{1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000}));
  EXPECT_EQ(b.failures(), 9);
  b.Reset();
  EXPECT_EQ(b.next_base(), milliseconds(1000));
  EXPECT_LT(b.Next(kAlmostOne), milliseconds(1000));
}

TEST(RetryTest, ReconnectBackoffDoublesAndResetsAfterAHealthyStream) {
  using Clock = ReconnectBackoff::Clock;
  ReconnectBackoff r;
  Clock::time_point t{};
  std::vector<int64_t> sleeps;
  for (int i = 0; i < 7; ++i) {
    r.OnConnected(t);
    t += milliseconds(100);
    sleeps.push_back(r.Next(t, 0.0).count());
  }
  EXPECT_EQ(sleeps, (std::vector<int64_t>{250, 500, 1000, 2000, 4000, 5000, 5000}));
  // A stream that stays up for more than 5 s resets the schedule, whether or not events came.
  r.OnConnected(t);
  t += milliseconds(5001);
  EXPECT_EQ(r.Next(t, 0.0), milliseconds(250));
  r.OnConnected(t);
  r.OnEvent(t + milliseconds(6000));
  EXPECT_EQ(r.next_base(), milliseconds(500));
  r.OnConnected(t);
  r.OnEvent(t + milliseconds(6000));
  EXPECT_EQ(r.next_base(), milliseconds(500));
  EXPECT_EQ(r.Next(t + milliseconds(6000), 0.0), milliseconds(250));
}

TEST(RetryTest, DefaultUniformIsInRange) {
  auto u = DefaultUniform();
  for (int i = 0; i < 1000; ++i) {
    const double v = u();
    ASSERT_GE(v, 0.0);
    ASSERT_LT(v, 1.0);
  }
}

}  // namespace
}  // namespace srt::poller
