// SPDX-License-Identifier: Apache-2.0
// srt-mcp/daemon/server_process.cc: the supervisor thread of one server process, and the runner
// that puts it in an srt sandbox.
#include "daemon/server_process.h"

#include "loop/event_loop.h"

namespace srt::mcp {
namespace {

class SandboxRunner final : public ServerRunner {
 public:
  Result<void> Start(SandboxOptions options) override {
    Result<Sandbox> started = Sandbox::Start(std::move(options));
    if (!started) return started.error();
    sandbox_.emplace(std::move(*started));
    return Ok();
  }
  ProcessExit Wait() override {
    ProcessExit exit;
    Result<ExitStatus> status = sandbox_->Wait();
    if (status) {
      exit.code = status->code;
      exit.oom_killed = status->oom_killed;
    } else {
      exit.code = -1;
      exit.error = status.error().message();
    }
    // The sandbox (its proxy, its cgroup) is gone before the loop hears of the end.
    sandbox_.reset();
    return exit;
  }
  void Signal(int signal) override { (void)sandbox_->Signal(signal); }

 private:
  std::optional<Sandbox> sandbox_;
};

}  // namespace

std::unique_ptr<ServerRunner> MakeSandboxRunner() { return std::make_unique<SandboxRunner>(); }

std::unique_ptr<ServerProcess> ServerProcess::Launch(proxy::EventLoop& loop,
                                                     const RunnerFactory& factory,
                                                     SandboxOptions options, UniqueFd stdin_fd,
                                                     UniqueFd stdout_fd, UniqueFd stderr_fd,
                                                     std::function<void(Result<void>)> on_started,
                                                     std::function<void(ProcessExit)> on_exited) {
  std::unique_ptr<ServerProcess> p(new ServerProcess(factory ? factory() : MakeSandboxRunner()));
  p->thread_ = std::thread(&ServerProcess::Main, p.get(), std::ref(loop), std::move(options),
                           std::move(stdin_fd), std::move(stdout_fd), std::move(stderr_fd),
                           std::move(on_started), std::move(on_exited));
  return p;
}

ServerProcess::~ServerProcess() {
  if (thread_.joinable()) thread_.join();
}

void ServerProcess::Signal(int signal) {
  // Under the lock: Wait() cannot return (and the runner drop its sandbox) meanwhile.
  std::lock_guard lock(mu_);
  if (running_) runner_->Signal(signal);
}

void ServerProcess::Main(proxy::EventLoop& loop, SandboxOptions options, UniqueFd in, UniqueFd out,
                         UniqueFd err, const std::function<void(Result<void>)>& on_started,
                         const std::function<void(ProcessExit)>& on_exited) {
  options.stdin_fd = in.get();
  options.stdout_fd = out.get();
  options.stderr_fd = err.get();
  Result<void> started = runner_->Start(std::move(options));
  // The process has its copies (or none): ours must go, or the daemon never sees EOF.
  in.reset();
  out.reset();
  err.reset();
  if (!started) {
    std::string error = started.error().message();
    loop.RunInLoop([on_started, error] { on_started(MakeError(Errc::kSystem, error)); });
    loop.RunInLoop([on_exited, error] { on_exited(ProcessExit{-1, false, error}); });
    return;
  }
  {
    std::lock_guard lock(mu_);
    running_ = true;
  }
  loop.RunInLoop([on_started] { on_started(Ok()); });
  ProcessExit exit = runner_->Wait();
  {
    std::lock_guard lock(mu_);
    running_ = false;
  }
  loop.RunInLoop([on_exited, exit] { on_exited(exit); });
}

}  // namespace srt::mcp
