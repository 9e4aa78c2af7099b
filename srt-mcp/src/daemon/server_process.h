// SPDX-License-Identifier: Apache-2.0
// srt-mcp/daemon/server_process: one stdio MCP server process, supervised by a thread of its own.
//
// Why a thread: Sandbox::Start() ties the sandbox's --die-with-parent to the calling *thread*
// and can take a while (bwrap, srt-init, the proxy), and Wait() both relays the command's stdio
// pipes and blocks until the sandbox is gone. So each process gets a supervisor thread that
// starts it, reports to the event loop, waits and reports again; the loop thread owns the
// pipes' other ends and never blocks.
//
// Usage: Launch() on the loop thread; `on_started` (with the start error, if any) and then
// `on_exited` run on the loop thread (RunInLoop), each exactly once, in that order. Signal() is
// thread-safe. The destructor joins the thread: destroy it only after `on_exited` ran.
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
  std::string error;  // waiting failed, or the process never started
};

// What runs one server process. The real one (SandboxRunner) is an srt Sandbox; tests use a
// runner that serves the pipes from a thread, so the daemon's logic runs under TSan (whose
// runtime cannot follow the vfork of a real sandbox's spawn).
class ServerRunner {
 public:
  virtual ~ServerRunner() = default;
  // Starts the process on options.stdin_fd/stdout_fd/stderr_fd (the caller closes its copies
  // after this returns).
  [[nodiscard]] virtual Result<void> Start(SandboxOptions options) = 0;
  // Blocks until the process is gone.
  virtual ProcessExit Wait() = 0;
  // Thread-safe, called while another thread is in Wait(); a no-op once it has ended.
  virtual void Signal(int signal) = 0;
};
using RunnerFactory = std::function<std::unique_ptr<ServerRunner>()>;

// An srt Sandbox (srt/sandbox.h).
[[nodiscard]] std::unique_ptr<ServerRunner> MakeSandboxRunner();

class ServerProcess {
 public:
  // `stdin_fd`, `stdout_fd`, `stderr_fd`: the process's ends of the daemon's pipes; closed once
  // it has its copies.
  [[nodiscard]] static std::unique_ptr<ServerProcess> Launch(
      proxy::EventLoop& loop, const RunnerFactory& factory, SandboxOptions options,
      UniqueFd stdin_fd, UniqueFd stdout_fd, UniqueFd stderr_fd,
      std::function<void(Result<void>)> on_started, std::function<void(ProcessExit)> on_exited);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Delivers `signal` to the server (not to srt's helpers); nothing once it has ended.
  void Signal(int signal);

 private:
  explicit ServerProcess(std::unique_ptr<ServerRunner> runner) : runner_(std::move(runner)) {}
  void Main(proxy::EventLoop& loop, SandboxOptions options, UniqueFd in, UniqueFd out, UniqueFd err,
            const std::function<void(Result<void>)>& on_started,
            const std::function<void(ProcessExit)>& on_exited);

  std::unique_ptr<ServerRunner> runner_;
  std::mutex mu_;
  bool running_ = false;  // guarded by mu_: between a successful Start() and Wait()'s return
  std::thread thread_;
};

}  // namespace srt::mcp
