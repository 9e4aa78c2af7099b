// SPDX-License-Identifier: Apache-2.0
// srt-cli/args: the `srt` command line -> CliOptions. Pure: no I/O, no exit(); errors are values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"

namespace srt::cli {

struct CliOptions {
  enum class Action { kRun, kHelp, kVersion };
  Action action = Action::kRun;
  std::vector<std::string> argv;             // the command to run, exactly
  std::optional<std::string> settings_path;  // -s/--settings
  bool debug = false;                        // -d/--debug
  std::vector<int> pass_fds;                 // --pass-fd N
  std::optional<int> control_fd;             // --control-fd N: live network updates
  std::optional<int> log_fd;                 // --log-fd N: the network decision log
  std::optional<std::string> log_file;       // --log-file FILE
  // Resource limits (a cgroup of the sandbox's own); unset: none.
  std::optional<uint64_t> memory_bytes;              // --memory SIZE
  std::optional<uint32_t> cpu_millis;                // --cpus N
  std::optional<uint32_t> pids;                      // --pids N
  std::optional<std::chrono::milliseconds> timeout;  // --timeout DURATION
  std::string timeout_text;                          // as given, for srt's messages
  // --serve SOCKET: a warm sandbox serving `srt --attach SOCKET` until SIGTERM (argv empty).
  std::optional<std::string> serve_socket;
  // --attach SOCKET: run argv in the warm sandbox that `srt --serve SOCKET` keeps.
  std::optional<std::string> attach_socket;
};

// The smallest --memory and --pids srt takes: below them bwrap and srt-init cannot start.
inline constexpr uint64_t kMinMemoryBytes = uint64_t{16} << 20;
inline constexpr uint32_t kMinPids = 16;
// After --timeout, the command gets SIGTERM, and SIGKILL this much later.
inline constexpr std::chrono::seconds kTimeoutKillAfter{5};
// srt's exit status when --timeout ended the command, as timeout(1)'s.
inline constexpr int kExitTimedOut = 124;

// `args` excludes argv[0]. Options end at the first word that is not one (or at `--`), so
// `srt ls -la` passes -la to ls. One command word runs as `bash -c WORD`; two or more run exactly
// as given; `-c CMD [ARG0 ARG...]` runs `bash -c CMD ARG0 ARG...`.
[[nodiscard]] Result<CliOptions> ParseArgs(const std::vector<std::string_view>& args);

std::string HelpText();

}  // namespace srt::cli
