// SPDX-License-Identifier: Apache-2.0
// api/retry.cc: retry classification, Retry-After parsing and the backoff schedules.
#include "api/retry.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace srt::poller {
namespace {

using std::chrono::system_clock;

double Clamp01(double u) {
  if (!(u >= 0.0)) return 0.0;  // also NaN
  if (u >= 1.0) return std::nextafter(1.0, 0.0);
  return u;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3u : 9u)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::optional<unsigned> Month(std::string_view m) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (unsigned i = 0; i < kMonths.size(); ++i) {
    if (m == kMonths[i]) return i + 1;
  }
  return std::nullopt;
}

bool ParseUint(std::string_view s, size_t digits_min, size_t digits_max, int& out) {
  if (s.size() < digits_min || s.size() > digits_max) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// "HH:MM:SS"
bool ParseTime(std::string_view s, int& h, int& mi, int& se) {
  return s.size() == 8 && s[2] == ':' && s[5] == ':' && ParseUint(s.substr(0, 2), 2, 2, h) &&
         ParseUint(s.substr(3, 2), 2, 2, mi) && ParseUint(s.substr(6, 2), 2, 2, se) && h < 24 &&
         mi < 60 && se <= 60;
}

std::vector<std::string_view> SplitSpaces(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<double> ParseNumber(std::string_view s) {
  // Digits with an optional fraction and sign; strtod would also accept hex, inf and nan.
  if (s.empty() || s.size() > 32) return std::nullopt;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+')) return std::nullopt;
  }
  double v = 0;
  auto [p, ec] = std::from_chars(s.data() + (s.front() == '+' ? 1 : 0), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

Millis ClampRetryAfter(double ms) {
  if (ms <= 0) return Millis{0};
  if (ms >= static_cast<double>(kMaxRetryAfter.count())) return kMaxRetryAfter;
  return Millis{static_cast<int64_t>(ms)};
}

}  // namespace

UniformSource DefaultUniform() {
  return [] {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  };
}

bool IsFatal4xx(int status) {
  return status >= 400 && status < 500 && status != 408 && status != 429;
}

bool ShouldRetry(std::optional<int> status, const Headers& headers, ConflictPolicy conflict) {
  if (!status) return true;  // no response: a connection error
  if (*status == 409 && conflict == ConflictPolicy::kFinal) return false;
  // The server's explicit verdict beats the status code (Go SDK shouldRetry).
  if (auto v = headers.Get("x-should-retry")) {
    if (*v == "true") return true;
    if (*v == "false") return false;
  }
  return *status == 408 || *status == 409 || *status == 429 || *status >= 500;
}

std::optional<system_clock::time_point> ParseHttpDate(std::string_view text) {
  std::vector<std::string_view> t = SplitSpaces(text);
  int day = 0, year = 0, h = 0, mi = 0, se = 0;
  std::optional<unsigned> month;
  if (t.size() == 6 && t[0].size() == 4 && t[0][3] == ',' && t[5] == "GMT") {
    // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
    month = Month(t[2]);
    if (!month || !ParseUint(t[1], 2, 2, day) || !ParseUint(t[3], 4, 4, year) ||
        !ParseTime(t[4], h, mi, se)) {
      return std::nullopt;
    }
  } else if (t.size() == 4 && !t[0].empty() && t[0].back() == ',' && t[3] == "GMT") {
    // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT (two-digit years: 70-99 -> 19xx, else 20xx)
    std::string_view d = t[1];
    if (d.size() != 9 || d[2] != '-' || d[6] != '-') return std::nullopt;
    month = Month(d.substr(3, 3));
    if (!month || !ParseUint(d.substr(0, 2), 2, 2, day) || !ParseUint(d.substr(7, 2), 2, 2, year) ||
        !ParseTime(t[2], h, mi, se)) {
      return std::nullopt;
    }
    year += year >= 70 ? 1900 : 2000;
  } else if (t.size() == 5 && t[0].size() == 3) {
    // asctime: Sun Nov  6 08:49:37 1994
    month = Month(t[1]);
    if (!month || !ParseUint(t[2], 1, 2, day) || !ParseTime(t[3], h, mi, se) ||
        !ParseUint(t[4], 4, 4, year)) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  if (day < 1 || day > 31) return std::nullopt;
  const int64_t days = DaysFromCivil(year, *month, static_cast<unsigned>(day));
  const int64_t secs = days * 86400 + int64_t{h} * 3600 + int64_t{mi} * 60 + se;
  return system_clock::time_point{std::chrono::seconds{secs}};
}

std::optional<Millis> RetryAfter(const Headers& headers, system_clock::time_point now) {
  if (auto v = headers.Get("retry-after-ms")) {
    if (auto ms = ParseNumber(*v)) return ClampRetryAfter(*ms);
  }
  if (auto v = headers.Get("retry-after")) {
    if (auto s = ParseNumber(*v)) return ClampRetryAfter(*s * 1000.0);
    if (auto when = ParseHttpDate(*v)) {
      const auto ms = std::chrono::duration_cast<Millis>(*when - now).count();
      return ClampRetryAfter(static_cast<double>(ms));
    }
  }
  return std::nullopt;
}

Millis SdkRetryDelay(int attempt, std::optional<Millis> retry_after, double u) {
  if (retry_after) return std::max(Millis{0}, *retry_after);
  const int shift = std::clamp(attempt, 0, 10);
  const Millis delay = std::min(Millis{500} * (int64_t{1} << shift), Millis{8000});
  const auto jitter = static_cast<int64_t>(Clamp01(u) * static_cast<double>(delay.count()) / 4.0);
  return delay - Millis{jitter};
}

Millis UniformBetween(Millis lo, Millis hi, double u) {
  if (hi <= lo) return lo;
  const auto span = static_cast<double>((hi - lo).count());
  return lo + Millis{static_cast<int64_t>(Clamp01(u) * span)};
}

Millis Jitter(Millis base, double u) {
  if (base <= Millis{1}) return base;
  return UniformBetween(base / 2, base, u);
}

Millis PollEmptySleep(double u) { return UniformBetween(Millis{1000}, Millis{3000}, u); }

Backoff::Backoff(Millis base, Millis cap) : base_(base), cap_(std::max(base, cap)), next_(base) {}

Millis Backoff::Next(double u) {
  const Millis b = next_;
  ++failures_;
  next_ = std::min(next_ * 2, cap_);
  return Jitter(b, u);
}

void Backoff::Reset() {
  next_ = base_;
  failures_ = 0;
}

void ReconnectBackoff::OnConnected(Clock::time_point now) { connected_at_ = now; }

void ReconnectBackoff::OnEvent(Clock::time_point now) {
  if (connected_at_ && now - *connected_at_ > kHealthyAfter) next_ = kStart;
}

Millis ReconnectBackoff::Next(Clock::time_point now, double u) {
  OnEvent(now);  // a stream that lived long enough counts as healthy even if it was quiet
  connected_at_.reset();
  const Millis b = next_;
  next_ = std::min(next_ * 2, kCap);
  return Jitter(b, u);
}

}  // namespace srt::poller
