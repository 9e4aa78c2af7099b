// SPDX-License-Identifier: Apache-2.0
// base/units: durations, sizes and CPU counts (see units.h).
#include "base/units.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "base/strings.h"

namespace srt {

namespace {

using strings::Quote;

Error Bad(std::string message) { return MakeError(Errc::kInvalidArgument, std::move(message)); }

}  // namespace

Result<std::chrono::milliseconds> ParseGoDuration(std::string_view text) {
  std::string_view s = text;
  if (s.empty()) return Bad("empty duration");
  if (s == "0") return std::chrono::milliseconds(0);
  if (s.front() == '-') return Bad("negative duration " + Quote(text));
  if (s.front() == '+') s.remove_prefix(1);
  long double total_ns = 0;
  bool any = false;
  while (!s.empty()) {
    size_t i = 0;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    if (i == 0) return Bad("invalid duration " + Quote(text) + " (e.g. 60s, 1m30s, 500ms)");
    std::string number(s.substr(0, i));
    if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") {
      return Bad("invalid duration " + Quote(text));
    }
    s.remove_prefix(i);
    size_t u = 0;
    while (u < s.size() && !((s[u] >= '0' && s[u] <= '9') || s[u] == '.')) ++u;
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    long double scale = 0;
    if (unit == "ns") {
      scale = 1;
    } else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs") {
      scale = 1e3;
    } else if (unit == "ms") {
      scale = 1e6;
    } else if (unit == "s") {
      scale = 1e9;
    } else if (unit == "m") {
      scale = 60e9;
    } else if (unit == "h") {
      scale = 3600e9;
    } else {
      return Bad("invalid duration " + Quote(text) +
                 (unit.empty() ? std::string(": missing unit") : ": unknown unit " + Quote(unit)) +
                 " (units: ns, us, ms, s, m, h)");
    }
    total_ns += std::strtold(number.c_str(), nullptr) * scale;
    any = true;
  }
  if (!any) return Bad("invalid duration " + Quote(text));
  // Go's limit is ~292 years; a week is plenty for anything srt-poller times.
  if (total_ns > 7.0L * 24 * 3600e9) return Bad("duration " + Quote(text) + " is over 168h");
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(total_ns / 1e6L)));
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p == text.data()) return Bad("invalid size " + Quote(text));
  std::string_view unit = text.substr(static_cast<size_t>(p - text.data()));
  int shift = 0;
  if (unit.empty() || unit == "B") {
    shift = 0;
  } else if (unit == "K" || unit == "KiB" || unit == "k") {
    shift = 10;
  } else if (unit == "M" || unit == "MiB") {
    shift = 20;
  } else if (unit == "G" || unit == "GiB") {
    shift = 30;
  } else if (unit == "T" || unit == "TiB") {
    shift = 40;
  } else {
    return Bad("invalid size " + Quote(text) + " (units: K, M, G, T, powers of 1024)");
  }
  if (shift > 0 && v > (UINT64_MAX >> shift)) return Bad("size " + Quote(text) + " is too large");
  return v << shift;
}

Result<uint32_t> ParseCpus(std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno != 0 || !(v >= 0.01) || v > 4096) {
    return Bad("invalid CPU count " + Quote(text) + " (e.g. 2 or 0.5)");
  }
  // Rounded half up by hand, not with std::lround: that one call was all srt needed libm for,
  // and every run paid for loading it. v * 1000 is in [10, 4096000]: truncating it and
  // comparing what is left with a half is exact there.
  const double milli = v * 1000;
  auto whole = static_cast<uint32_t>(milli);
  if (milli - whole >= 0.5) ++whole;
  return whole;
}

std::optional<uint32_t> ParseWholeNumber(std::string_view text, uint32_t min, uint32_t max) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < min || v > max) {
    return std::nullopt;
  }
  return v;
}

}  // namespace srt
