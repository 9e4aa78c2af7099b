// posix_spawn wrapper with a complete descriptor map.
#include "sys/spawn.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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

Result<pid_t> SpawnIntoCgroups(const SpawnRequest& request);

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
  // Written by the child before it exits; read after CLONE_VFORK has let us go.
  int err;
  int failed_cgroup;  // index into cgroup_fds, or -1
};

// The clone child: it runs on its own stack in our address space while our thread is suspended
// (CLONE_VFORK), so it uses raw system calls only - no allocation, no locks, no libc state - in
// the order glibc's posix_spawn uses. The cgroups come first, so that bwrap and everything it
// forks are inside them from the start.
int CloneChildMain(void* arg) {
  auto* c = static_cast<CloneChild*>(arg);
  for (size_t i = 0; i < c->cgroup_count; ++i) {
    if (syscall(SYS_write, c->cgroup_fds[i], "0", 1) != 1) {
      c->err = errno;
      c->failed_cgroup = static_cast<int>(i);
      syscall(SYS_exit_group, 127);
    }
  }
  for (size_t i = 0; i < c->fd_count; ++i) {
    if (syscall(SYS_dup2, c->sources[i], c->targets[i]) < 0) {
      c->err = errno;
      syscall(SYS_exit_group, 127);
    }
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
  if (c->new_session && syscall(SYS_setsid) < 0) {
    c->err = errno;
    syscall(SYS_exit_group, 127);
  }
  if (c->new_process_group && !c->new_session && syscall(SYS_setpgid, 0, 0) < 0) {
    c->err = errno;
    syscall(SYS_exit_group, 127);
  }
  // Default dispositions for every signal (a handler of ours must never run in the child), then
  // the empty mask; the kernel struct sigaction is {handler, flags, restorer, mask}.
  struct KernelSigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    uint64_t mask;
  } dfl{SIG_DFL, 0, nullptr, 0};
  for (int sig = 1; sig < 65; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) syscall(SYS_rt_sigaction, sig, &dfl, nullptr, 8);
  }
  uint64_t none = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, 8);
  syscall(SYS_execve, c->path, c->argv, c->envp);
  c->err = errno;
  syscall(SYS_exit_group, 127);
  return 127;
}

}  // namespace

Result<pid_t> Spawn(const SpawnRequest& request) {
  if (!request.join_cgroup_fds.empty()) return SpawnIntoCgroups(request);
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
  if (request.new_session) {
    flags |= POSIX_SPAWN_SETSID;
  } else if (request.new_process_group) {
    posix_spawnattr_setpgroup(&attr.attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
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

namespace {

// posix_spawn's shape, plus the cgroup writes: clone(CLONE_VM | CLONE_VFORK) with a stack of its
// own. (clone3's CLONE_INTO_CGROUP would do it for v2 alone, but glibc 2.36 has no clone3
// wrapper that runs a function on a new stack, and v1 hierarchies need the write anyway.)
Result<pid_t> SpawnIntoCgroups(const SpawnRequest& request) {
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
                   0,
                   -1};

  constexpr size_t kStackBytes = size_t{256} * 1024;
  void* stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return SysError("mmap a stack to start " + strings::Quote(request.path));
  // No handler of ours may run on the child's stack or in its half-made state.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = clone(CloneChildMain, static_cast<char*>(stack) + kStackBytes,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, &child);
  const int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  munmap(stack, kStackBytes);
  if (pid < 0) return SysError("start " + strings::Quote(request.path), clone_errno);
  if (child.err != 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (child.failed_cgroup >= 0) {
      return SysError("join the sandbox's cgroup (write to cgroup.procs)", child.err);
    }
    return SysError("start " + strings::Quote(request.path), child.err);
  }
  return pid;
}

}  // namespace

}  // namespace srt::sys
