// SPDX-License-Identifier: Apache-2.0
// base/units: the grammars of durations, sizes and CPU counts that srt's programs take on their
// command lines and in their configuration (srt --memory/--timeout, srt-poller
// --memory/--max-idle).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "srt/result.h"

namespace srt {

// Go's time.ParseDuration grammar ("60s", "1m30s", "1.5h", "250ms", "0"), rounded up to whole
// milliseconds (never shorter than asked); no negative values, at most 168h.
[[nodiscard]] Result<std::chrono::milliseconds> ParseGoDuration(std::string_view text);
// "3G", "3GiB", "512M", "1048576" (bytes; K/M/G/T are powers of 1024).
[[nodiscard]] Result<uint64_t> ParseByteSize(std::string_view text);
// "2", "0.5" -> milli-CPUs (0.01 to 4096 CPUs).
[[nodiscard]] Result<uint32_t> ParseCpus(std::string_view text);
// A whole decimal number in [min, max], all of `text`; nullopt otherwise (the caller names the
// option in its message: srt --pids, srt-poller --concurrency and --pids).
[[nodiscard]] std::optional<uint32_t> ParseWholeNumber(std::string_view text, uint32_t min,
                                                       uint32_t max);

}  // namespace srt
