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
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value"
  std::vector<FdMapping> fds;    // every other descriptor is closed in the child
  bool new_session = false;      // setsid() in the child
  // setpgid(0, 0) in the child: a process group of its own, so that signals a terminal sends
  // to the caller's foreground group (Ctrl-C, Ctrl-\\, hang-up) do not reach it.
  bool new_process_group = false;
  // Open cgroup.procs files (v1 or v2) the child writes "0" to before
  // it executes `path`, so that it and everything it starts belong to those cgroups from the
  // start. Non-empty selects a clone(CLONE_VM | CLONE_VFORK) spawn (posix_spawn has no hook
  // for this in glibc 2.36).
  std::vector<int> join_cgroup_fds;
};

// Starts the child and returns its pid. Errors name the executable (or the cgroup it could not
// join: the child is then reaped and nothing runs).
[[nodiscard]] Result<pid_t> Spawn(const SpawnRequest& request);

}  // namespace srt::sys
