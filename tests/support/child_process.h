// SPDX-License-Identifier: Apache-2.0
// support/child_process.h: starting, reading and reaping helper processes in tests (dnsmasq, the
// fake control plane).
//
// Usage:
//   UniqueFd log(::memfd_create("srt-test-x-log", MFD_CLOEXEC));
//   auto pid = srt::testing::SpawnChild({"/usr/bin/x", "--flag"},
//                                       {{log.get(), STDOUT_FILENO}, {log.get(), STDERR_FILENO}});
//   ...
//   std::string text = srt::testing::ReadWholeFd(log.get());
//   srt::testing::TerminateChild(*pid, std::chrono::milliseconds(2000));
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "srt/result.h"

namespace srt::testing {

// True if `path` is a regular file we may execute.
bool IsExecutable(const std::string& path);

// Everything in `fd` from offset 0 (pread: the fd's offset is left alone, so a memfd log can be
// read while the child still appends to it).
std::string ReadWholeFd(int fd);

// One fd the child gets: `source` (ours) is dup2()ed onto `target` (the child's).
struct ChildFd {
  int source;
  int target;
};

// fork+exec of argv[0] (a path; resolve PATH before) with `fds` in place, an empty signal mask
// and PR_SET_PDEATHSIG(SIGTERM), tied to the calling thread. fork+exec rather than posix_spawn
// for the death signal. Returns once exec succeeded; an exec failure is reaped and returned.
Result<pid_t> SpawnChild(const std::vector<std::string>& argv, const std::vector<ChildFd>& fds);

// Sends SIGTERM, gives it `grace` to exit, then SIGKILL; always reaps.
void TerminateChild(pid_t pid, std::chrono::milliseconds grace);

}  // namespace srt::testing
