// SPDX-License-Identifier: Apache-2.0
// BashSession: one persistent `/bin/bash --noprofile --norc` on a PTY, as the Go toolset's bash
// tool runs it (GO-SDK tools/agenttoolset/bash.go). State (cwd, exported variables, functions)
// survives across Exec() calls because it is one shell.
//
// Usage: Start() a session; Exec() one command at a time; after any outcome other than kDone
// the shell is in an unknown state (a command may still be running on the other side of the
// PTY), so destroy the session and start a new one. The destructor kills the shell's process
// group (SIGKILL) and reaps it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "srt/result.h"
#include "toolbox/interrupt.h"

namespace srt::poller::toolbox {

struct BashOptions {
  std::string shell = "/bin/bash";  // the Go tool runs /bin/bash without consulting PATH
  std::string cwd;                  // the shell's starting directory
  std::vector<std::string> env;     // the shell's whole environment ("K=V")
  std::vector<int> cgroup_fds;      // cgroup.procs files the shell joins before it executes
};

// This process's environment with every ANTHROPIC_* variable removed, and PS1= PS2= TERM=dumb
// (the Go tool's scrubbedEnviron plus its overlay).
std::vector<std::string> ShellEnvironment();

class BashSession {
 public:
  enum class Status {
    kDone,         // the command finished; exit_code is its status
    kTimedOut,     // the command's own timeout passed
    kDeadline,     // the caller's deadline passed first
    kInterrupted,  // Interrupt::Check() asked to stop
    kFailed,       // the shell died or the PTY failed; `error` says how
  };
  struct Outcome {
    Status status = Status::kFailed;
    std::string output;  // cleaned; "[output truncated]\n" first when the tail was kept
    int exit_code = -1;
    std::string error;
  };

  // Starts the shell and turns off echo and job control. Errors carry the failing step.
  [[nodiscard]] static Result<std::unique_ptr<BashSession>> Start(const BashOptions& options);
  ~BashSession();
  BashSession(const BashSession&) = delete;
  BashSession& operator=(const BashSession&) = delete;

  // Runs `command` wrapped as `{ command\n} </dev/null 2>&1` followed by a printf of a random
  // per-call marker and $?, and waits for the marker, `timeout`, `deadline` or `interrupt`.
  Outcome Exec(std::string_view command, std::chrono::milliseconds timeout,
               std::chrono::steady_clock::time_point deadline, Interrupt& interrupt);

  pid_t pid() const { return pid_; }

 private:
  BashSession() = default;
  Outcome Run(std::string_view command, std::chrono::milliseconds timeout,
              std::chrono::steady_clock::time_point deadline, Interrupt& interrupt,
              bool redirect_stdin);
  void Kill();

  pid_t pid_ = -1;
  UniqueFd master_;
  UniqueFd pidfd_;  // readable when the shell exits; may be absent (no pidfd_open)
};

}  // namespace srt::poller::toolbox
