// SPDX-License-Identifier: Apache-2.0
// srt-init `init` in a warm sandbox (srt --serve): PID 1 runs the commands srt sends, each with
// its own stdio, environment, working directory, terminal and process group, under the one
// policy (each forked command loads the sandbox's seccomp filters before it execs).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

namespace srt::init {

// execve() with execvp(3)'s search rules (init_role.cc); returns the errno that explains why not.
int ExecSearch(const char** argv, char** envp, size_t argc);

// A command's last steps (init_role.cc), in a plain run and a warm sandbox alike: loads the deny
// filter (`filter`'s first `deny_len` bytes), then the write guard's (the next `guard_len`, 0
// for none) and sends its listener over `guard_sock` (closed either way), then execs `argv` with
// ExecSearch. Never returns: a failure is reported as {stage, errno} on `status_fd` (stage 0: the
// exec's) before it exits.
[[noreturn]] void LoadFiltersAndExec(int status_fd, int guard_sock, const uint8_t* filter,
                                     size_t deny_len, size_t guard_len, const char** argv,
                                     char** envp, size_t argc);

// Serves kMsgExec, kMsgExecSignal, kMsgExecTerminalOpen until kMsgStop or srt's end, then kills
// everything left in the sandbox and returns PID 1's exit code. `filter` holds the deny filter
// (`deny_len` bytes) and then the write guard's (`guard_len`, 0 for none).
int RunServe(int ctl, int sfd, const InitPlan& plan, const uint8_t* filter, size_t deny_len,
             size_t guard_len);

}  // namespace srt::init
