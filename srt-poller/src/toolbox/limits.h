// SPDX-License-Identifier: Apache-2.0
// Limits on everything the agent (through the runner) controls in srt-toolbox (house style §2.6).
#pragma once

#include <chrono>
#include <cstddef>

namespace srt::poller::toolbox {

// The protocol's own limits are in toolbox_protocol/protocol.h.

// bash (GO-SDK tools/agenttoolset/bash.go).
inline constexpr size_t kBashOutputLimit = size_t{100} * 1024;  // keeps the tail
inline constexpr size_t kMaxBashCommandBytes = 4u << 20;
inline constexpr std::chrono::milliseconds kBashDefaultTimeout{120'000};
inline constexpr std::chrono::milliseconds kBashSetupTimeout{5'000};
inline constexpr std::chrono::milliseconds kMaxTimeout{24 * 3600 * 1000};
// The runner's per-tool deadline when a request carries no timeout_ms (Go's
// defaultSessionRunnerToolTimeout).
inline constexpr std::chrono::milliseconds kDefaultToolTimeout{120'000};

// File tools (GO-SDK fs.go, search.go).
inline constexpr size_t kMaxFileBytes = size_t{256} * 1024;  // read and edit
inline constexpr size_t kMaxWriteBytes = 64u << 20;          // bounded by the request line anyway
inline constexpr size_t kMaxPathBytes = 4096;                // PATH_MAX
inline constexpr int kMaxSymlinkHops = 40;                   // the kernel's MAXSYMLINKS
inline constexpr size_t kGlobResultLimit = 200;
inline constexpr size_t kWalkMaxEntries = 50'000;
inline constexpr int kWalkMaxDepth = 256;
inline constexpr size_t kGrepOutputLimit = size_t{100} * 1024;
inline constexpr size_t kGrepMaxFileBytes = 8u << 20;
inline constexpr size_t kGrepStderrLimit = size_t{16} * 1024;

}  // namespace srt::poller::toolbox
