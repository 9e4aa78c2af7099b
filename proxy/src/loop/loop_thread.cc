// SPDX-License-Identifier: Apache-2.0
// loop/loop_thread.cc: start/stop of the proxy's loop thread.
#include "loop/loop_thread.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>
#include <utility>

#include "base/start_thread.h"

namespace srt::proxy {

LoopThread::LoopThread(std::string name) : name_(std::move(name)) {}

LoopThread::~LoopThread() { Stop(); }

Result<void> LoopThread::Start(std::function<void()> before_run) {
  if (loop_) {
    return MakeError(Errc::kInvalidArgument, "LoopThread '" + name_ + "' was already started");
  }
  SRT_ASSIGN_OR_RETURN(loop_, EventLoop::Create());

  sigset_t all;
  sigset_t saved;
  ::sigfillset(&all);
  // pthread_sigmask returns the error number instead of setting errno.
  if (int err = ::pthread_sigmask(SIG_SETMASK, &all, &saved); err != 0) {
    loop_.reset();
    return SysError("pthread_sigmask", err);
  }
  Result<std::thread> thread = StartThread(
      "start thread '" + name_ + "'",
      [loop = loop_.get(), name = name_.substr(0, 15), before_run = std::move(before_run)] {
        // Named from inside: the calling thread's name is a prctl, another's a write to /proc.
        // Cosmetic (ps -L, gdb).
        ::pthread_setname_np(::pthread_self(), name.c_str());
        if (before_run) before_run();
        loop->Run();
      });
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (!thread) {
    loop_.reset();
    return std::move(thread).error();
  }
  thread_ = std::move(*thread);
  loop_->BindTo(thread_.get_id());
  return Ok();
}

void LoopThread::Stop() {
  if (!thread_.joinable()) {
    return;
  }
  if (thread_.get_id() == std::this_thread::get_id()) {
    constexpr std::string_view kMsg = "srt proxy LoopThread: Stop() called on the loop thread\n";
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, kMsg.data(), kMsg.size());
    std::abort();
  }
  loop_->Stop();
  thread_.join();
}

}  // namespace srt::proxy
