// SPDX-License-Identifier: Apache-2.0
// srt-mcp/daemon/server_process: one stdio MCP server process in its own srt sandbox, supervised
// by a thread of its own.
//
// Why a thread: Sandbox::Start() ties the sandbox's --die-with-parent to the calling *thread*
// and can take a while (bwrap, srt-init, the proxy), and Wait() both relays the command's stdio
// pipes and blocks until the sandbox is gone. So each process gets a supervisor thread that
// Start()s, reports to the event loop, Wait()s and reports again; the loop thread owns the
// pipes' other ends and never blocks.
//
// Usage: Launch() on the loop thread; `on_started` (with the start error, if any) and then
// `on_exited` run on the loop thread (RunInLoop), each exactly once, in that order. Signal() is
// thread-safe. The destructor joins the thread: destroy it only after `on_exited` ran (or the
// thread is blocked in Wait() until the sandbox ends).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/unique_fd.h"
#include "srt/result.h"
#include "srt/sandbox.h"

namespace srt::proxy {
class EventLoop;
}

namespace srt::mcp {

struct ProcessExit {
  int code = 0;  // ExitStatus::code (128+N for a signal)
  bool oom_killed = false;
  std::string error;  // Wait() failed, or the sandbox never started
};

class ServerProcess {
 public:
  // `stdin_fd`, `stdout_fd`, `stderr_fd`: the sandbox's ends of the daemon's pipes; closed once
  // the sandbox has its copies.
  [[nodiscard]] static std::unique_ptr<ServerProcess> Launch(
      proxy::EventLoop& loop, SandboxOptions options, UniqueFd stdin_fd, UniqueFd stdout_fd,
      UniqueFd stderr_fd, std::function<void(Result<void>)> on_started,
      std::function<void(ProcessExit)> on_exited);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Delivers `signal` to the server (not to srt's helpers); nothing once it has ended.
  void Signal(int signal);

 private:
  ServerProcess() = default;
  void Main(proxy::EventLoop& loop, SandboxOptions options, UniqueFd in, UniqueFd out, UniqueFd err,
            const std::function<void(Result<void>)>& on_started,
            const std::function<void(ProcessExit)>& on_exited);

  std::mutex mu_;
  Sandbox* sandbox_ = nullptr;  // guarded by mu_; set while the thread is in Wait()
  std::thread thread_;
};

}  // namespace srt::mcp
