// posix_spawn wrapper with a complete descriptor map.
#include "sys/spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "base/strings.h"
#include "base/unique_fd.h"
#include "sys/fd.h"

namespace srt::sys {

namespace {

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

struct Actions {
  posix_spawn_file_actions_t fa;
  Actions() { posix_spawn_file_actions_init(&fa); }
  ~Actions() { posix_spawn_file_actions_destroy(&fa); }
};
struct Attr {
  posix_spawnattr_t attr;
  Attr() { posix_spawnattr_init(&attr); }
  ~Attr() { posix_spawnattr_destroy(&attr); }
};

}  // namespace

Result<pid_t> Spawn(const SpawnRequest& request) {
  // Sources are first duplicated above every target number, so that dup2(source, target) can never
  // clobber a source still waiting for its own dup2 (the copies are CLOEXEC and vanish at exec).
  int max_target = 2;
  for (const FdMapping& m : request.fds) max_target = std::max(max_target, m.target);
  std::vector<UniqueFd> staged;
  staged.reserve(request.fds.size());
  for (const FdMapping& m : request.fds) {
    SRT_ASSIGN_OR_RETURN(UniqueFd copy, DupAtLeast(m.source, max_target + 1));
    staged.push_back(std::move(copy));
  }
  Actions actions;
  for (size_t i = 0; i < request.fds.size(); ++i) {
    if (int rc =
            posix_spawn_file_actions_adddup2(&actions.fa, staged[i].get(), request.fds[i].target)) {
      return SysError("posix_spawn_file_actions_adddup2", rc);
    }
  }
  if (int rc = posix_spawn_file_actions_addclosefrom_np(&actions.fa, max_target + 1)) {
    return SysError("posix_spawn_file_actions_addclosefrom_np", rc);
  }
  // Targets not in the map below max_target (say 0-2 when the caller maps none) must not leak
  // srt's own descriptors either.
  for (int fd = 0; fd <= max_target; ++fd) {
    bool mapped = std::any_of(request.fds.begin(), request.fds.end(),
                              [fd](const FdMapping& m) { return m.target == fd; });
    if (!mapped) posix_spawn_file_actions_addclose(&actions.fa, fd);
  }

  Attr attr;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr.attr, &none);
  posix_spawnattr_setsigdefault(&attr.attr, &all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (request.new_session) flags |= POSIX_SPAWN_SETSID;
  posix_spawnattr_setflags(&attr.attr, flags);

  std::vector<char*> argv = CStrings(request.argv);
  std::vector<char*> envp = CStrings(request.env);
  pid_t pid = -1;
  if (int rc = posix_spawn(&pid, request.path.c_str(), &actions.fa, &attr.attr, argv.data(),
                           envp.data())) {
    return SysError("start " + strings::Quote(request.path), rc);
  }
  return pid;
}

}  // namespace srt::sys
