// SPDX-License-Identifier: Apache-2.0
// posix_spawn wrapper with a complete descriptor map.
#include "sys/spawn.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>

#include "base/strings.h"
#include "base/system_text.h"
#include "base/unique_fd.h"
#include "sys/fd.h"

namespace srt::sys {

namespace {

std::string NameOf(const SpawnRequest& request) {
  return strings::Quote(request.name.empty() ? request.path : request.name);
}

// "start 'NAME'[: STEP]: errno text", with which limit was reached after an EAGAIN.
Error StartError(const SpawnRequest& request, int err, const char* step = nullptr) {
  std::string what = "start " + NameOf(request);
  if (step != nullptr) what += std::string(": ") + step;
  return srt::StartError(what, err);
}

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

Result<pid_t> SpawnByClone(const SpawnRequest& request);

// What the clone child needs; it shares our memory (CLONE_VM) and reports a failure here.
struct CloneChild {
  const char* path;
  char* const* argv;
  char* const* envp;
  const int* cgroup_fds;
  size_t cgroup_count;
  const int* sources;  // staged copies, CLOEXEC, above every target
  const int* targets;
  size_t fd_count;
  int max_target;
  bool new_session;
  bool new_process_group;
  const char* cwd;  // or nullptr
  bool controlling_terminal;
  int landlock_ruleset_fd;  // or -1
  // Written by the child before it exits; read after CLONE_VFORK has let us go.
  int err;
  const char* failed_step;  // what the child could not do, for the error; nullptr: execve
};

// Records why the child gives up, and ends it (exit status 127, as a failed exec's).
[[noreturn]] void ChildFails(CloneChild* c, const char* step) {
  c->err = errno;
  c->failed_step = step;
  syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

#ifndef SYS_landlock_restrict_self
constexpr long SYS_landlock_restrict_self = 446;
#endif

// The clone child: it runs on its own stack in our address space while our thread is suspended
// (CLONE_VFORK), so it uses raw system calls only - no allocation, no locks, no libc state - in
// the order glibc's posix_spawn uses. The cgroups come first, so that bwrap and everything it
// forks are inside them from the start.
int CloneChildMain(void* arg) {
  auto* c = static_cast<CloneChild*>(arg);
  for (size_t i = 0; i < c->cgroup_count; ++i) {
    if (syscall(SYS_write, c->cgroup_fds[i], "0", 1) != 1) {
      ChildFails(c, "join the sandbox's cgroups (a write to cgroup.procs or a v1 tasks file)");
    }
  }
  // The Landlock domain comes while its ruleset's descriptor is still open (the loop below closes
  // it). Its scopes do not touch the steps that follow, only what the child may signal.
  if (c->landlock_ruleset_fd >= 0) {
    if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
      ChildFails(c, "set no_new_privs");
    }
    if (syscall(SYS_landlock_restrict_self, c->landlock_ruleset_fd, 0) != 0) {
      ChildFails(c, "enter its Landlock domain (landlock_restrict_self)");
    }
  }
  for (size_t i = 0; i < c->fd_count; ++i) {
    if (syscall(SYS_dup2, c->sources[i], c->targets[i]) < 0) ChildFails(c, "map its descriptors");
  }
  for (int fd = 0; fd <= c->max_target; ++fd) {
    bool mapped = false;
    for (size_t i = 0; i < c->fd_count; ++i) mapped = mapped || c->targets[i] == fd;
    if (!mapped) syscall(SYS_close, fd);
  }
  if (syscall(SYS_close_range, c->max_target + 1, ~0U, 0) < 0) {
    // FIXME: remove once Linux 5.9 is the baseline.
    for (int fd = c->max_target + 1; fd < 65536; ++fd) syscall(SYS_close, fd);
  }
  if (c->new_session && syscall(SYS_setsid) < 0) ChildFails(c, "start a session (setsid)");
  if (c->new_process_group && !c->new_session && syscall(SYS_setpgid, 0, 0) < 0) {
    ChildFails(c, "start a process group (setpgid)");
  }
  // After setsid: only a session leader without a terminal may acquire one.
  if (c->controlling_terminal && syscall(SYS_ioctl, 0, TIOCSCTTY, 0) < 0) {
    ChildFails(c, "take its terminal (TIOCSCTTY)");
  }
  if (c->cwd != nullptr && syscall(SYS_chdir, c->cwd) < 0) {
    ChildFails(c, "enter its working directory");
  }
  // Default dispositions for every signal (a handler of ours must never run in the child), then
  // the empty mask; the kernel struct sigaction is {handler, flags, restorer, mask}.
  struct KernelSigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    uint64_t mask;
  } dfl{SIG_DFL, 0, nullptr, 0};
  // A terminal's stop signals (Ctrl-Z) that came while the mask held them are dropped first
  // (ignoring a signal discards it): delivered now, in a process group of its own, they would
  // stop the child before its execve, with the parent waiting for that execve (CLONE_VFORK) and
  // no `fg` reaching it.
  KernelSigaction ign{SIG_IGN, 0, nullptr, 0};
  for (int sig : {SIGTSTP, SIGTTIN, SIGTTOU}) syscall(SYS_rt_sigaction, sig, &ign, nullptr, 8);
  // A child that left our process group also drops the Ctrl-C, Ctrl-\ and hang-up a terminal
  // sent that group while it was still in it (between clone and setsid/setpgid): they were for
  // the group it left, which we are in and take them for. Delivered now, one would kill it
  // before its execve (a Ctrl-C at srt's start failed the launch as "bwrap exited with status
  // 130" or "srt-agent exited before the sandbox was ready").
  if (c->new_session || c->new_process_group) {
    for (int sig : {SIGINT, SIGQUIT, SIGHUP}) syscall(SYS_rt_sigaction, sig, &ign, nullptr, 8);
  }
  for (int sig = 1; sig < 65; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) syscall(SYS_rt_sigaction, sig, &dfl, nullptr, 8);
  }
  uint64_t none = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, 8);
  syscall(SYS_execve, c->path, c->argv, c->envp);
  ChildFails(c, nullptr);
}

}  // namespace

Result<pid_t> Spawn(const SpawnRequest& request) {
  // Leaving our process group takes the clone path too: posix_spawn cannot drop the terminal's
  // signals that reach the child before it has left (CloneChildMain).
  if (!request.join_cgroup_fds.empty() || !request.cwd.empty() || request.controlling_terminal ||
      request.landlock_ruleset_fd >= 0 || request.new_session || request.new_process_group) {
    return SpawnByClone(request);
  }
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
  // The child stays in our session and process group here (leaving them takes the clone path).
  posix_spawnattr_setflags(&attr.attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv = CStrings(request.argv);
  std::vector<char*> envp = CStrings(request.env);
  pid_t pid = -1;
  if (int rc = posix_spawn(&pid, request.path.c_str(), &actions.fa, &attr.attr, argv.data(),
                           envp.data())) {
    return StartError(request, rc);
  }
  return pid;
}

namespace {

// posix_spawn's shape, plus what it cannot do (cgroup writes, Landlock, cwd, terminal):
// clone(CLONE_VM | CLONE_VFORK) with a stack of its own. (clone3's CLONE_INTO_CGROUP would do it
// for v2 alone, but glibc 2.36 has no clone3 wrapper that runs a function on a new stack, and v1
// hierarchies need the write anyway.)
Result<pid_t> SpawnByClone(const SpawnRequest& request) {
  int max_target = 2;
  for (const FdMapping& m : request.fds) max_target = std::max(max_target, m.target);
  std::vector<UniqueFd> staged;
  std::vector<int> sources, targets;
  for (const FdMapping& m : request.fds) {
    SRT_ASSIGN_OR_RETURN(UniqueFd copy, DupAtLeast(m.source, max_target + 1));
    sources.push_back(copy.get());
    targets.push_back(m.target);
    staged.push_back(std::move(copy));
  }
  std::vector<char*> argv = CStrings(request.argv);
  std::vector<char*> envp = CStrings(request.env);
  CloneChild child{request.path.c_str(),
                   argv.data(),
                   envp.data(),
                   request.join_cgroup_fds.data(),
                   request.join_cgroup_fds.size(),
                   sources.data(),
                   targets.data(),
                   sources.size(),
                   max_target,
                   request.new_session,
                   request.new_process_group,
                   request.cwd.empty() ? nullptr : request.cwd.c_str(),
                   request.controlling_terminal,
                   request.landlock_ruleset_fd,
                   0,
                   nullptr};

  constexpr size_t kStackBytes = size_t{256} * 1024;
  void* stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return SysError("mmap a stack to start " + NameOf(request));
  // No handler of ours may run on the child's stack or in its half-made state.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = clone(CloneChildMain, static_cast<char*>(stack) + kStackBytes,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, &child);
  const int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  munmap(stack, kStackBytes);
  if (pid < 0) return StartError(request, clone_errno);
  if (child.err != 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (child.failed_step != nullptr) {
      return StartError(request, child.err, child.failed_step);
    }
    return StartError(request, child.err);
  }
  return pid;
}

}  // namespace

}  // namespace srt::sys
