// SPDX-License-Identifier: Apache-2.0
// srt-mcp/daemon/server_process.cc: the supervisor thread of one sandboxed server process.
#include "daemon/server_process.h"

#include "loop/event_loop.h"

namespace srt::mcp {

std::unique_ptr<ServerProcess> ServerProcess::Launch(proxy::EventLoop& loop, SandboxOptions options,
                                                     UniqueFd stdin_fd, UniqueFd stdout_fd,
                                                     UniqueFd stderr_fd,
                                                     std::function<void(Result<void>)> on_started,
                                                     std::function<void(ProcessExit)> on_exited) {
  std::unique_ptr<ServerProcess> p(new ServerProcess());
  p->thread_ = std::thread(&ServerProcess::Main, p.get(), std::ref(loop), std::move(options),
                           std::move(stdin_fd), std::move(stdout_fd), std::move(stderr_fd),
                           std::move(on_started), std::move(on_exited));
  return p;
}

ServerProcess::~ServerProcess() {
  if (thread_.joinable()) thread_.join();
}

void ServerProcess::Signal(int signal) {
  std::lock_guard lock(mu_);
  if (sandbox_) (void)sandbox_->Signal(signal);
}

void ServerProcess::Main(proxy::EventLoop& loop, SandboxOptions options, UniqueFd in, UniqueFd out,
                         UniqueFd err, const std::function<void(Result<void>)>& on_started,
                         const std::function<void(ProcessExit)>& on_exited) {
  options.stdin_fd = in.get();
  options.stdout_fd = out.get();
  options.stderr_fd = err.get();
  Result<Sandbox> sandbox = Sandbox::Start(std::move(options));
  // The sandbox has its copies (or none): ours must go, or the daemon never sees EOF.
  in.reset();
  out.reset();
  err.reset();
  if (!sandbox) {
    std::string error = sandbox.error().message();
    loop.RunInLoop([on_started, error] { on_started(MakeError(Errc::kSystem, error)); });
    loop.RunInLoop([on_exited, error] { on_exited(ProcessExit{-1, false, error}); });
    return;
  }
  loop.RunInLoop([on_started] { on_started(Ok()); });
  {
    std::lock_guard lock(mu_);
    sandbox_ = &*sandbox;
  }
  Result<ExitStatus> status = sandbox->Wait();
  {
    std::lock_guard lock(mu_);
    sandbox_ = nullptr;
  }
  ProcessExit exit;
  if (status) {
    exit.code = status->code;
    exit.oom_killed = status->oom_killed;
  } else {
    exit.code = -1;
    exit.error = status.error().message();
  }
  // The Sandbox (its proxy, its cgroup) is gone before the loop hears of the end.
  { Result<Sandbox> gone = std::move(sandbox); }
  loop.RunInLoop([on_exited, exit] { on_exited(exit); });
}

}  // namespace srt::mcp
