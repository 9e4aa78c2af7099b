// SPDX-License-Identifier: Apache-2.0
// srt-cli/command_timeout: `--timeout DURATION`. When the command is still running at the
// deadline, it gets SIGTERM, and SIGKILL kTimeoutKillAfter later if it is still there (srt-init
// then ends whatever it left running); srt then exits 124, as timeout(1) does.
//
// Usage protocol (main.cc):
//   1. Start(sandbox, after, what, print) once the sandbox runs: a thread waits for the deadline
//      (an error if it cannot be started: main then ends the sandbox).
//   2. After Wait(): Stop() joins the thread; fired() tells whether the deadline ended the
//      command (srt's exit status is then kExitTimedOut, whatever the command's).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "srt/sandbox.h"

namespace srt::cli {

class CommandTimeout {
 public:
  using Print = std::function<void(const std::string&)>;

  CommandTimeout() = default;
  ~CommandTimeout() { Stop(); }
  CommandTimeout(const CommandTimeout&) = delete;
  CommandTimeout& operator=(const CommandTimeout&) = delete;

  // `what` names the limit in srt's messages ("--timeout 30s"). Fails only when the thread
  // cannot be started.
  [[nodiscard]] Result<void> Start(Sandbox& sandbox, std::chrono::milliseconds after,
                                   std::chrono::milliseconds kill_after, std::string what,
                                   Print print);
  void Stop();
  [[nodiscard]] bool fired() const { return fired_.load(); }

 private:
  void Run(std::chrono::milliseconds after, std::chrono::milliseconds kill_after);
  // Waits up to `d`; true when Stop() came first.
  bool StoppedWithin(std::chrono::milliseconds d);

  Sandbox* sandbox_ = nullptr;
  std::string what_;
  Print print_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace srt::cli
