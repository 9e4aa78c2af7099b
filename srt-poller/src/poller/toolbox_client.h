// SPDX-License-Identifier: Apache-2.0
// srt-poller/poller/toolbox_client: the session runner's ToolExecutor, backed by srt-toolbox
// running inside the session's sandbox. It speaks the toolbox protocol
// (toolbox_protocol/protocol.h): one JSON request per line on the toolbox's stdin, one JSON
// answer per line on its stdout, `{"cancel": id}` to stop the running tool.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "base/unique_fd.h"
#include "runner/tool_executor.h"
#include "srt/result.h"

namespace srt::poller {

class ToolboxClient final : public ToolExecutor {
 public:
  // Grace after a tool's own timeout before the client gives up on the toolbox's answer.
  static constexpr std::chrono::milliseconds kAnswerGrace{10'000};

  // How long a cancelled call waits for the toolbox's answer before giving up on it (and on the
  // toolbox: a stopped or wedged one must not hold up the end of a session).
  static constexpr std::chrono::milliseconds kCancelGrace{5'000};

  // `to_toolbox` is the write end of its stdin (made non-blocking: a toolbox that stops reading
  // must not block a write past a cancel), `from_toolbox` the read end of its stdout.
  ToolboxClient(UniqueFd to_toolbox, UniqueFd from_toolbox,
                std::chrono::milliseconds cancel_grace = kCancelGrace);

  // How long the first call waits for the toolbox's `{"ready": true}` line.
  static constexpr std::chrono::milliseconds kReadyTimeout{30'000};

  // Waits for the toolbox's `{"ready": true}` line; Run() does this itself on its first call.
  [[nodiscard]] Result<void> WaitReady(std::chrono::milliseconds timeout);
  // Called once (from Run's thread) when the toolbox stops answering or never starts.
  void OnBroken(std::function<void(const std::string&)> callback) {
    on_broken_ = std::move(callback);
  }

  ToolResult Run(const ToolCall& call, std::chrono::milliseconds timeout) override;
  void Cancel() override;

  // Closes the toolbox's stdin: it kills its shell and exits.
  void Close();
  // False once the toolbox stopped answering (it died, or broke the protocol).
  bool healthy() const { return healthy_; }

 private:
  using Clock = std::chrono::steady_clock;
  // Reads one line (without '\n') before `deadline` and the cancel's end; Error on EOF, timeout
  // or an oversize line.
  Result<std::string> ReadLine(Clock::time_point deadline);
  enum class Sent { kYes, kCancelled, kFailed };
  // Writes call `id`'s frame, unless the call was cancelled before (under write_mu_, so that a
  // cancel frame can only follow the call's).
  Sent SendCall(uint64_t id, const std::string& frame);
  // When the running call's cancel gives up on the toolbox, if it was cancelled.
  std::optional<Clock::time_point> CancelDeadline();
  bool CancelExpired();

  const std::chrono::milliseconds cancel_grace_;
  std::mutex call_mu_;
  bool in_call_ = false;                        // guarded by call_mu_: Run is running
  std::optional<Clock::time_point> cancel_at_;  // guarded by call_mu_
  std::mutex write_mu_;
  UniqueFd to_;
  UniqueFd from_;
  std::string buffer_;
  // How much of buffer_ is known to hold no newline: each read is searched once, so a 64 MiB
  // line costs one pass over it, not one per read.
  size_t scanned_ = 0;
  uint64_t next_id_ = 1;
  std::atomic<uint64_t> running_id_{0};
  void MarkBroken(const std::string& why);

  std::atomic<bool> healthy_{true};
  bool ready_ = false;
  std::function<void(const std::string&)> on_broken_;
};

}  // namespace srt::poller
