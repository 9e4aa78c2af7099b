// SPDX-License-Identifier: Apache-2.0
// srt-cli/control_channel: `--control-fd N`, live updates of the network lists (upstream srt
// §2.2). Each line on the descriptor is one whole settings document; its network lists replace
// the running ones for new connections. Blank lines are ignored; an invalid line is reported and
// ignored (the previous lists stay in force); EOF ends the channel, not the command.
//
// Usage protocol (main.cc):
//   1. Check(fd) before the sandbox starts: a descriptor that is closed or write-only fails.
//   2. Start(fd, sandbox, print) once the sandbox runs: a thread reads the lines.
//   3. After Wait(): Stop() joins the thread. failed() tells whether the channel broke before
//      its first update (the command was then terminated, and srt reports failure).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "base/unique_fd.h"
#include "srt/result.h"
#include "srt/sandbox.h"

namespace srt::cli {

class ControlChannel {
 public:
  using Print = std::function<void(const std::string&)>;

  // The longest line read; a longer one is reported and skipped.
  static constexpr size_t kMaxLineBytes = 1 << 20;

  [[nodiscard]] static Result<void> Check(int fd);

  ControlChannel() = default;
  ~ControlChannel() { Stop(); }
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  [[nodiscard]] Result<void> Start(int fd, Sandbox& sandbox, Print print);
  void Stop();
  [[nodiscard]] bool failed() const { return failed_.load(); }

 private:
  void Run();
  void Apply(std::string_view line);
  void Broken(const std::string& why);

  int fd_ = -1;
  std::string name_;  // "control fd N", for messages
  Sandbox* sandbox_ = nullptr;
  Print print_;
  UniqueFd stop_;  // eventfd: Stop() wakes the reader
  std::thread thread_;
  bool updated_ = false;  // reader thread only
  std::atomic<bool> failed_{false};
};

}  // namespace srt::cli
