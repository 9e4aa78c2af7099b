// SPDX-License-Identifier: Apache-2.0
// srt-init agent's write guard: serves the command's SECCOMP_RET_USER_NOTIF system calls.
//
// The command's second seccomp filter hands every call that creates, renames or links a name,
// opens a file for writing, truncates, or sets an execute bit to the guard (see
// seccomp/filter.h BuildGuardFilter). The guard reads the call's arguments once, resolves its
// paths itself - from the command's own root, working directory or descriptor, through the
// sandbox's mounts, as the kernel would - and performs the call on the command's behalf: the
// kernel never looks at the command's memory again, so no path can change between the check
// and the use (the reason seccomp's own CONTINUE is never used). A descriptor the call returns
// is installed in the command with SECCOMP_IOCTL_NOTIF_ADDFD. guard_rules.h decides what is
// refused (EPERM).
//
// The guard runs in the sandbox's user and mount namespaces (so the sandbox's mounts and
// read-only flags apply to what it does), as the sandbox's user, with no effective capability
// (so permissions are the command's own); it raises CAP_SYS_PTRACE only to read a command that
// made itself non-dumpable. It stays in the host's pid namespace, where the command cannot see
// it, and is non-dumpable.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "guard_rules.h"
#include "init_protocol/wire.h"

namespace srt::init {

struct GuardSetup {
  int listener = -1;   // the command's filter's notification fd
  int ctl = -1;        // srt's control socket: refusals are reported there
  int host_proc = -1;  // O_PATH of the host's /proc (the pids in notifications are the host's)
  long self_pid = 0;   // this process, in the host's pid namespace
  // A warm sandbox (wire::kGuardServe): more listeners come over `ctl` (kMsgGuardListener), one
  // per command, until the sandbox's PID 1 (init_pidfd) is gone.
  bool serve = false;
  int init_pidfd = -1;
  const wire::GuardCall* calls = nullptr;
  size_t call_count = 0;
  guard::Config config;
  // The device of the sandbox's private tmpfs (the TMPDIR's), read where the agent mounted it;
  // private_roots exempt only directories on it (guard::Probe::OnPrivateFileSystem).
  bool private_dev_known = false;
  uint32_t private_dev_major = 0;
  uint32_t private_dev_minor = 0;
};

// Serves notifications until every process under the filter (the filters, in a warm sandbox)
// is gone, then reports the counts
// (kMsgGuardDone). Returns 0, or 1 if the listener could not be used at all.
int RunGuard(const GuardSetup& setup);

}  // namespace srt::init
