// SPDX-License-Identifier: Apache-2.0
// launch/serve: a warm sandbox's commands (LaunchSpec::serve). Each Exec() sends srt-init one
// kMsgExec with a sealed exec plan and the command's three descriptors (what launch/passing
// decides, as for a plain run: a pipe srt relays, the sandbox's own terminal, or the descriptor
// itself); srt-init forks the command and reports by its id, and Wait()'s thread hands each
// report to the command's ExecState.
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>

#include "base/fd_message.h"
#include "base/system_text.h"
#include "init_protocol/wire.h"
#include "launch/launcher.h"
#include "launch/plan_writer.h"
#include "launch/stage_name.h"
#include "sys/fd.h"

namespace srt::launch {

struct ExecState {
  std::mutex mu;
  std::condition_variable cv;
  uint32_t id = 0;
  std::unique_ptr<StdioRelay> relay;
  UniqueFd master;  // its terminal's, until the relay takes it
  bool terminal_ready = false;
  bool started = false;
  bool ended = false;  // exited, refused, or the warm sandbox ended
  int wait_status = 0;
  int exec_errno = 0;
  int relayed_signal = 0;
  std::optional<Error> failure;  // it never ran, or the sandbox ended under it
  UniqueFd done;                 // eventfd, written once `ended`
};

namespace {

int32_t IntOf(const std::vector<uint8_t>& payload, size_t index) {
  int32_t v = 0;
  if (payload.size() >= (index + 1) * 4) std::memcpy(&v, payload.data() + index * 4, 4);
  return v;
}

void MarkEnded(ExecState& s) {
  s.ended = true;
  uint64_t one = 1;
  if (s.done) (void)!write(s.done.get(), &one, sizeof one);
  s.cv.notify_all();
}

}  // namespace

Result<void> Launch::SendToInit(uint32_t type, const std::vector<int32_t>& values,
                                const std::vector<int>& fds) {
  std::vector<uint8_t> buf(4 + values.size() * 4);
  std::memcpy(buf.data(), &type, 4);
  if (!values.empty()) std::memcpy(buf.data() + 4, values.data(), values.size() * 4);
  FdMessage msg(buf, fds);
  std::lock_guard<std::mutex> lock(ctl_mu_);
  if (finished_ || !ctl_) return MakeError(Errc::kInvalidArgument, "the warm sandbox has ended");
  if (sendmsg(ctl_.get(), msg.get(), MSG_NOSIGNAL) < 0) return SysError("send to srt-init");
  return Ok();
}

Result<std::unique_ptr<Execution>> Launch::Exec(ExecSpec spec) {
  if (!spec_.serve) return MakeError(Errc::kInvalidArgument, "Exec() needs a warm sandbox (serve)");
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return MakeError(Errc::kInvalidArgument, "no command to run");
  }
  if (spec.cwd.empty() || spec.cwd[0] != '/') {
    return MakeError(Errc::kInvalidArgument, "the working directory must be an absolute path");
  }
  auto state = std::make_shared<ExecState>();
  SRT_ASSIGN_OR_RETURN(state->relay,
                       StdioRelay::Prepare(spec.stdin_fd, spec.stdout_fd, spec.stderr_fd, {}));
  int done = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (done < 0) return SysError("eventfd");
  state->done.reset(done);
  {
    std::lock_guard<std::mutex> lock(exec_mu_);
    if (serve_ended_) return MakeError(Errc::kInvalidArgument, "the warm sandbox has ended");
    if (execs_.size() >= wire::kMaxExecs) {
      return MakeError(
          Errc::kInvalidArgument,
          "the warm sandbox runs " + std::to_string(wire::kMaxExecs) + " commands already");
    }
    while (next_exec_id_ == 0 || execs_.count(next_exec_id_)) ++next_exec_id_;
    state->id = next_exec_id_++;
    execs_[state->id] = state;
  }
  std::unique_ptr<Execution> exec(new Execution(this, state));
  const auto id = static_cast<int32_t>(state->id);
  auto fail = [&](Error e) -> Result<std::unique_ptr<Execution>> {
    {
      std::lock_guard<std::mutex> lock(state->mu);
      if (!state->ended) {
        state->failure = e;
        MarkEnded(*state);
      }
    }
    return e;
  };
  const uint32_t terminal = state->relay->terminal_slots();
  if (terminal) {
    // Its terminal first: its modes and size are set before the command can look at them.
    if (Result<void> sent = SendToInit(wire::kMsgExecTerminalOpen, {id}, {}); !sent) {
      return fail(std::move(sent).error());
    }
    UniqueFd master;
    {
      std::unique_lock<std::mutex> lock(state->mu);
      state->cv.wait(lock, [&] { return state->terminal_ready || state->ended; });
      if (state->ended) return *state->failure;
      master = std::move(state->master);
    }
    if (Result<void> r = state->relay->AttachTerminal(std::move(master)); !r) {
      (void)SendToInit(wire::kMsgExecSignal, {id, SIGKILL}, {});  // frees its terminal
      return fail(std::move(r).error());
    }
  }
  ExecPlanSpec plan{std::move(spec.argv), std::move(spec.env), std::move(spec.cwd), terminal, {}};
  for (const InitPlanSpec::Reopen& r : state->relay->reopens()) {
    if (r.fd >= 0 && r.fd <= 2) plan.reopens.push_back(r);
  }
  SRT_ASSIGN_OR_RETURN(UniqueFd plan_fd, sys::SealedMemfd("srt-exec-plan", EncodeExecPlan(plan)));
  if (Result<void> sent = SendToInit(wire::kMsgExec, {id},
                                     {plan_fd.get(), state->relay->CommandFd(0),
                                      state->relay->CommandFd(1), state->relay->CommandFd(2)});
      !sent) {
    return fail(std::move(sent).error());
  }
  {
    std::unique_lock<std::mutex> lock(state->mu);
    state->cv.wait(lock, [&] { return state->started || state->ended; });
    if (state->failure) return *state->failure;
  }
  // srt-init holds the command's ends now: srt's copies close and the pumps start. The command
  // leads its terminal's foreground job (its own session) since before its execve.
  Result<void> r = state->relay->Started();
  if (r) r = state->relay->CommandInForeground();
  if (!r) {
    (void)exec->Signal(SIGKILL);
    return std::move(r).error();
  }
  return exec;
}

Result<void> Launch::Stop() {
  if (!spec_.serve) return MakeError(Errc::kInvalidArgument, "Stop() needs a warm sandbox (serve)");
  Result<void> r = SendToInit(wire::kMsgStop, {}, {});
  if (!r && r.error().code() == Errc::kInvalidArgument) return Ok();  // already ended
  return r;
}

Result<void> Launch::PassGuardListener(UniqueFd listener) {
  if (!agent_ctl_) return Ok();  // no guard: nothing to serve
  Result<void> sent;
  {
    uint8_t buf[8] = {};
    const uint32_t type = wire::kMsgGuardListener;
    std::memcpy(buf, &type, 4);
    const int fd = listener.get();
    FdMessage msg(buf, std::span<const int>(&fd, 1));
    if (sendmsg(agent_ctl_.get(), msg.get(), MSG_NOSIGNAL) < 0)
      sent = SysError("send to srt-agent");
  }
  // The guard gone (the sandbox ending): the command's guarded calls fail with ENOSYS once
  // `listener`, the last copy, closes - closed, either way.
  return sent;
}

// Returns true when the message was a warm sandbox's (handled here).
bool Launch::HandleExecReport(uint32_t type, const std::vector<uint8_t>& payload, UniqueFd fd) {
  if (type == wire::kMsgGuard) {
    if (fd) {
      if (Result<void> r = PassGuardListener(std::move(fd)); !r) Debug(r.error().message());
    }
    return true;
  }
  if (type != wire::kMsgExecTerminal && type != wire::kMsgExecStarted &&
      type != wire::kMsgExecRefused && type != wire::kMsgExecExited) {
    return false;
  }
  const auto id = static_cast<uint32_t>(IntOf(payload, 0));
  std::shared_ptr<ExecState> state;
  {
    std::lock_guard<std::mutex> lock(exec_mu_);
    auto it = execs_.find(id);
    if (it != execs_.end()) state = it->second;
  }
  if (!state) return true;  // an Execution already gone (its command was killed)
  std::lock_guard<std::mutex> lock(state->mu);
  if (state->ended) return true;
  switch (type) {
    case wire::kMsgExecTerminal:
      if (fd) {
        state->master = std::move(fd);
        state->terminal_ready = true;
      }
      break;
    case wire::kMsgExecStarted:
      state->started = true;
      Debug("command " + std::to_string(id) + " started (pid " + std::to_string(IntOf(payload, 1)) +
            " in the sandbox)");
      break;
    case wire::kMsgExecRefused: {
      const int32_t stage = IntOf(payload, 1);
      const int32_t err = IntOf(payload, 2);
      if (stage == 0) {
        // execve failed: the command "ran" and reports 127/126, as a plain run's.
        state->exec_errno = err;
        state->wait_status = (err == ENOENT ? 127 : 126) << 8;
        state->started = true;
      } else {
        state->failure = Error(Errc::kSystem, FailedStageText("srt-init", stage, "", err), err);
      }
      MarkEnded(*state);
      break;
    }
    case wire::kMsgExecExited:
      state->wait_status = IntOf(payload, 1);
      MarkEnded(*state);
      break;
    default:
      break;
  }
  state->cv.notify_all();
  return true;
}

void Launch::EndExecs() {
  std::map<uint32_t, std::shared_ptr<ExecState>> execs;
  {
    std::lock_guard<std::mutex> lock(exec_mu_);
    serve_ended_ = true;
    execs = execs_;
  }
  for (auto& [id, state] : execs) {
    std::lock_guard<std::mutex> lock(state->mu);
    if (state->ended) continue;
    // srt-init killed it with everything else in the sandbox.
    if (state->started) {
      state->wait_status = SIGKILL;
    } else {
      state->failure = Error(Errc::kSystem, "the warm sandbox ended");
    }
    MarkEnded(*state);
  }
}

Execution::Execution(Launch* launch, std::shared_ptr<ExecState> state)
    : launch_(launch), state_(std::move(state)) {}

Execution::~Execution() {
  bool running;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    running = !state_->ended;
  }
  // Abandoned: its command goes, as a plain run's does when srt dies.
  if (running) (void)Signal(SIGKILL);
  state_->relay.reset();
  std::lock_guard<std::mutex> lock(launch_->exec_mu_);
  launch_->execs_.erase(state_->id);
}

int Execution::done_fd() const { return state_->done.get(); }

Result<void> Execution::Signal(int signal) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->ended) return Ok();
    if (signal == SIGWINCH) {
      if (state_->relay && state_->relay->terminal_slots()) {
        state_->relay->Resize();
        return Ok();
      }
    } else if (!state_->relayed_signal && signal != SIGCONT && signal != SIGKILL) {
      state_->relayed_signal = signal;
    }
  }
  return launch_->SendToInit(wire::kMsgExecSignal,
                             {static_cast<int32_t>(state_->id), static_cast<int32_t>(signal)}, {});
}

Result<ExitStatus> Execution::Wait() {
  if (waited_) return MakeError(Errc::kInvalidArgument, "Wait() called twice");
  waited_ = true;
  {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->cv.wait(lock, [&] { return state_->ended; });
  }
  // Everything the command wrote is passed on before its status.
  state_->relay->Finish();
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->failure) return *state_->failure;
  ExitStatus status;
  status.exec_errno = state_->exec_errno;
  status.relayed_signal = state_->relayed_signal;
  const int st = state_->wait_status;
  if (WIFSIGNALED(st)) {
    status.signal = WTERMSIG(st);
    status.code = 128 + status.signal;
  } else {
    status.code = WEXITSTATUS(st);
  }
  return status;
}

}  // namespace srt::launch
