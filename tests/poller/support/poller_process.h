// SPDX-License-Identifier: Apache-2.0
// support/poller_process.h: runs the real srt-poller binary for a test, by pid.
//
//   auto p = srt::testing::PollerProcess::Start({"--environment-id", cp.environment_id(), ...},
//                                               {{"ANTHROPIC_ENVIRONMENT_KEY", key}});
//   ASSERT_TRUE(p.has_value()) << p.error().message();
//   (*p)->WaitForLog("claimed work", 10s);
//   (*p)->Signal(SIGTERM);
//   auto code = (*p)->Wait(35s);          // exit code, or 128+N when killed by signal N
//
// stdout and stderr go to files in a private temp dir (Stdout(), Logs()). The destructor sends
// SIGKILL if the poller still runs, reaps it and removes the temp dir; PR_SET_PDEATHSIG covers
// a test that dies.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "srt/result.h"

namespace srt::testing {

class PollerProcess {
 public:
  // `args` follow the binary (SRT_POLLER_BINARY, else bin/srt-poller next to the test's build
  // tree). The environment is exactly PATH, HOME, LANG plus `env`.
  [[nodiscard]] static Result<std::unique_ptr<PollerProcess>> Start(
      const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
      const std::string& binary = "");
  ~PollerProcess();
  PollerProcess(const PollerProcess&) = delete;
  PollerProcess& operator=(const PollerProcess&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig) const;
  // Waits for the exit; nullopt on timeout (the process keeps running).
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  bool running();
  std::string Logs() const;    // stderr so far
  std::string Stdout() const;  // stdout so far
  // Waits until stderr contains `needle` (returns false on timeout or exit without it).
  bool WaitForLog(const std::string& needle, std::chrono::milliseconds timeout);
  // Counts lines of stderr containing `needle`.
  size_t CountLog(const std::string& needle) const;

  // The root, as /proc/PID/task/TID/root, of the thread whose mount table has a mount at
  // `mount_point`: srt-poller mounts each item's workspace in a mount namespace of that item's
  // thread. "" when no thread has one there (nothing mounted there: the host's directory is it).
  std::string RootWithMountAt(const std::string& mount_point) const;

  static std::string DefaultBinary();

 private:
  PollerProcess() = default;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string dir_;
};

}  // namespace srt::testing
