// SPDX-License-Identifier: Apache-2.0
// sys/spawn: posix_spawn with an exact descriptor map (everything else closed) and a clean signal
// state. posix_spawn, not fork: libsrt's hosts are multi-threaded (house style §2.5).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "srt/result.h"

namespace srt::sys {

struct FdMapping {
  int source;  // descriptor in this process
  int target;  // number it gets in the child
};

struct SpawnRequest {
  std::string path;  // executable (may be /proc/self/fd/N of a mapped target N)
  std::string name;  // what errors call it; empty: `path`
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value"
  std::vector<FdMapping> fds;    // every other descriptor is closed in the child
  bool new_session = false;      // setsid() in the child
  // setpgid(0, 0) in the child: a process group of its own, so that signals a terminal sends
  // to the caller's foreground group (Ctrl-C, Ctrl-\\, hang-up) do not reach it.
  bool new_process_group = false;
  // Open cgroup.procs (or v1 "tasks") files the child writes "0" to before it executes `path`,
  // so that it and everything it starts belong to those cgroups from the start. The child is a
  // process of one thread: a "tasks" file moves all of it.
  std::vector<int> join_cgroup_fds;
  // The child's working directory; empty keeps ours.
  std::string cwd;
  // With new_session: descriptor 0 (a terminal) becomes the new session's controlling terminal
  // (TIOCSCTTY), as a login shell's is.
  bool controlling_terminal = false;
  // A Landlock ruleset (sys/landlock.h) the child enforces on itself before anything else it
  // does, with no_new_privs set; the child and all it starts stay in that domain.
  int landlock_ruleset_fd = -1;
};

// Starts the child and returns its pid. Errors name the executable, or the step of the child's
// set-up that failed (joining a cgroup, its Landlock domain, its directory, its terminal): the
// child is then reaped and nothing runs. Anything beyond posix_spawn's reach (cgroups, cwd,
// terminal, Landlock, and dropping the signals a terminal sent our process group before a child
// that leaves it has left) selects a clone(CLONE_VM | CLONE_VFORK) spawn: glibc 2.36's
// posix_spawn has no hook for them.
[[nodiscard]] Result<pid_t> Spawn(const SpawnRequest& request);

}  // namespace srt::sys
