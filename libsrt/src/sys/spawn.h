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
};

// Starts the child and returns its pid. Errors name the executable.
[[nodiscard]] Result<pid_t> Spawn(const SpawnRequest& request);

}  // namespace srt::sys
