// SPDX-License-Identifier: Apache-2.0
// srt-cli/command_timeout: `--timeout` (see command_timeout.h).
#include "command_timeout.h"

#include <signal.h>

#include <utility>

#include "base/start_thread.h"

namespace srt::cli {

Result<void> CommandTimeout::Start(Sandbox& sandbox, std::chrono::milliseconds after,
                                   std::chrono::milliseconds kill_after, std::string what,
                                   Print print) {
  sandbox_ = &sandbox;
  what_ = std::move(what);
  print_ = std::move(print);
  SRT_ASSIGN_OR_RETURN(thread_, StartThread(what_ + ": start its thread",
                                            [this, after, kill_after] { Run(after, kill_after); }));
  return Ok();
}

void CommandTimeout::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool CommandTimeout::StoppedWithin(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, d, [this] { return stop_; });
}

void CommandTimeout::Run(std::chrono::milliseconds after, std::chrono::milliseconds kill_after) {
  if (StoppedWithin(after)) return;
  // Set before the signal: Wait() may return as soon as the command dies of it.
  fired_ = true;
  print_("srt: " + what_ + ": the command ran out of time; sending it SIGTERM");
  if (Result<void> sent = sandbox_->Signal(SIGTERM); !sent) {
    print_("srt: " + what_ + ": " + sent.error().message());
  }
  if (StoppedWithin(kill_after)) return;
  print_("srt: " + what_ + ": the command outlived SIGTERM by " +
         std::to_string(kill_after.count() / 1000) + " s; sending it SIGKILL");
  if (Result<void> sent = sandbox_->Signal(SIGKILL); !sent) {
    print_("srt: " + what_ + ": " + sent.error().message());
  }
}

}  // namespace srt::cli
