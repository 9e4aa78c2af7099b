// SPDX-License-Identifier: Apache-2.0
// srt-init `init`: PID 1 of the sandbox. Receives its plan from srt, reports its pidfd, receives
// the seccomp filters and forks the command at once; the command sets NO_NEW_PRIVS, loads the
// filters and waits, while srt-agent protects the filesystem and hides /proc/1. At srt's
// go-ahead PID 1 opens the command's devices and lets it go: it enters its working directory and
// execs. PID 1 forwards the signals srt relays, reaps orphans, and when the command exits kills
// whatever is left in the sandbox and reports the command's exact wait status.
#include <asm/ioctls.h>
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/filter.h>
#include <linux/mman.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/signal.h>
#include <linux/signalfd.h>
#include <linux/wait.h>

#include "ipc.h"
#include "plan.h"
#include "rt.h"
#include "serve_role.h"

namespace srt::init {

namespace {

using rt::Failed;

using rt::kPollIn;
using rt::PollFd;

constexpr int kExitSetupFailure = 125;
constexpr size_t kMaxFilterBytes = size_t{64} * 1024;

alignas(8) uint8_t g_filter[kMaxFilterBytes];

[[noreturn]] void Die(int ctl, wire::Stage stage, long err, const char* what) {
  ReportFailure(ctl, 2, stage, err, what);
  rt::Exit(kExitSetupFailure);
}

// Anonymous memory for arrays whose size is only known at run time.
void* MapAnonymous(size_t bytes) {
  long r = SRT_SYS(__NR_mmap, 0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return Failed(r) ? nullptr : reinterpret_cast<void*>(r);
}

const char* FindEnv(char** envp, const char* name) {
  size_t n = strlen(name);
  for (char** e = envp; *e; ++e) {
    if (memcmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  }
  return nullptr;
}

}  // namespace

// execve() with execvp(3)'s search rules: PATH (default /usr/local/bin:/usr/bin:/bin) for names
// without a slash, EACCES remembered over ENOENT, and ENOEXEC files run by /bin/sh. Returns the
// errno that best explains the failure.
int ExecSearch(const char** argv, char** envp, size_t argc) {
  const char* file = argv[0];
  auto run_as_script = [&](const char* path) {
    auto** sh_argv = static_cast<const char**>(MapAnonymous((argc + 2) * sizeof(char*)));
    if (!sh_argv) return;
    sh_argv[0] = "/bin/sh";
    sh_argv[1] = path;
    for (size_t i = 1; i <= argc; ++i) sh_argv[i + 1] = argv[i];
    SRT_SYS(__NR_execve, "/bin/sh", sh_argv, envp);
  };
  bool has_slash = false;
  for (const char* p = file; *p; ++p) has_slash |= *p == '/';
  if (has_slash) {
    long r = SRT_SYS(__NR_execve, file, argv, envp);
    if (r == -ENOEXEC) run_as_script(file);
    return static_cast<int>(-r);
  }
  if (!*file) return ENOENT;
  const char* path_env = FindEnv(envp, "PATH");
  if (!path_env) path_env = "/usr/local/bin:/usr/bin:/bin";
  bool saw_eacces = false;
  char buf[4096];
  size_t flen = strlen(file);
  for (const char* seg = path_env;;) {
    const char* end = seg;
    while (*end && *end != ':') ++end;
    size_t dlen = static_cast<size_t>(end - seg);
    if (dlen == 0) {
      buf[0] = '.';
      dlen = 1;
    } else if (dlen < sizeof buf) {
      memcpy(buf, seg, dlen);
    }
    if (dlen + 1 + flen < sizeof buf) {
      buf[dlen] = '/';
      memcpy(buf + dlen + 1, file, flen + 1);
      long r = SRT_SYS(__NR_execve, buf, argv, envp);
      switch (-r) {
        case EACCES:
          saw_eacces = true;
          break;
        case ENOENT:
        case ENOTDIR:
        case ESTALE:
        case ELOOP:
        case ENAMETOOLONG:
        case ENODEV:
        case ETIMEDOUT:
          break;
        case ENOEXEC:
          run_as_script(buf);
          return ENOEXEC;
        default:
          return static_cast<int>(-r);
      }
    }
    if (!*end) break;
    seg = end + 1;
  }
  return saw_eacces ? EACCES : ENOENT;
}

namespace {

// The command's filters: the deny filter, then the write guard's, whose listener goes to PID 1
// over `guard_sock`. A failure is reported as {stage, errno} on `status_fd`, then the process
// exits.
void LoadFilters(int status_fd, int guard_sock, const uint8_t* filter, size_t deny_len,
                 size_t guard_len) {
  int32_t report[2] = {0, 0};
  auto fail = [&](wire::Stage stage, long err) {
    report[0] = stage;
    report[1] = static_cast<int32_t>(-err);
    rt::WriteAll(status_fd, report, sizeof report);
    rt::Exit(kExitSetupFailure);
  };
  sock_fprog prog{static_cast<unsigned short>(deny_len / sizeof(sock_filter)),
                  reinterpret_cast<sock_filter*>(const_cast<uint8_t*>(filter))};
  long r = SRT_SYS(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
  if (Failed(r)) fail(wire::kStageSeccomp, r);
  if (guard_len) {
    // The write guard: its calls wait for srt-init's agent, which gets the listener through PID
    // 1 and srt. The kernel applies the strictest answer of both filters, so what the first
    // refuses the guard never sees.
    sock_fprog guard{static_cast<unsigned short>(guard_len / sizeof(sock_filter)),
                     reinterpret_cast<sock_filter*>(const_cast<uint8_t*>(filter + deny_len))};
    r = SRT_SYS(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &guard);
    if (Failed(r)) fail(wire::kStageGuard, r);
    long sent = SendMessage(guard_sock, wire::kMsgGuard, nullptr, 0, static_cast<int>(r));
    SRT_SYS(__NR_close, r);
    if (Failed(sent)) fail(wire::kStageGuard, sent);
  }
}

// execve(), or {0, errno} on `status_fd` and the exit code a shell gives.
[[noreturn]] void Exec(int status_fd, const char** argv, char** envp, size_t argc) {
  int err = ExecSearch(argv, envp, argc);
  int32_t report[2] = {0, err};
  rt::WriteAll(status_fd, report, sizeof report);
  rt::Exit(err == ENOENT ? 127 : 126);
}

}  // namespace

// A warm sandbox's command's last steps. Seccomp is the last step before execve, so the filter
// never has to allow anything that only set-up needs (bubblewrap and nsjail do the same).
void LoadFiltersAndExec(int status_fd, int guard_sock, const uint8_t* filter, size_t deny_len,
                        size_t guard_len, const char** argv, char** envp, size_t argc) {
  LoadFilters(status_fd, guard_sock, filter, deny_len, guard_len);
  SRT_SYS(__NR_close, guard_sock);
  Exec(status_fd, argv, envp, argc);
}

namespace {

// What PID 1 sends the waiting command over the guard socket (a channel of theirs alone).
constexpr uint32_t kToCommandReopen = 1;  // i32 descriptor + SCM_RIGHTS: put it there
// + SCM_RIGHTS: the working directory, to enter; the agent's work is done: run the command
constexpr uint32_t kToCommandGo = 2;

// Discards a terminal's stop signals (Ctrl-Z, background reads and writes) that came while the
// command waited with every signal blocked: delivered now, they would stop it before its execve,
// with PID 1 waiting for that execve and nothing to continue it. Setting a signal to ignored
// drops it if pending (POSIX); the default is back before the signals are unblocked, so the
// command's program gets Ctrl-Z as usual.
void DropPendingStops() {
  struct {
    uint64_t handler, flags, restorer, mask;
  } action{};  // the kernel's struct sigaction (x86-64, arm64)
  constexpr int kStops[] = {SIGTSTP, SIGTTIN, SIGTTOU};
  for (int sig : kStops) {
    action.handler = 1;  // SIG_IGN
    SRT_SYS(__NR_rt_sigaction, sig, &action, 0, sizeof(uint64_t));
    action.handler = 0;  // SIG_DFL
    SRT_SYS(__NR_rt_sigaction, sig, &action, 0, sizeof(uint64_t));
  }
}

// The command's side of the fork, made as soon as the filters arrive: everything that does not
// depend on the agent's work is done while the agent does it, and the command then waits for
// PID 1's go-ahead. Never returns. g_filter holds the deny filter (`deny_len` bytes) and then
// the write guard's (`guard_len`, 0 for none), whose listener goes to PID 1 over `guard_sock`.
// `tty` is the sandbox's terminal (plan.terminal), or -1.
[[noreturn]] void RunCommand(const InitPlan& plan, char** envp, int status_fd, size_t deny_len,
                             size_t guard_len, int guard_sock, int tty) {
  // The command leads a process group of its own (PID 1 makes the same call from its side, so
  // no relayed signal can come before it): signals srt relays go to that group, as a
  // terminal's go to its foreground job, so the command's children get them too.
  SRT_SYS(__NR_setpgid, 0, 0);
  if (tty >= 0) {
    // ... and that group is the foreground job of the sandbox's terminal (PID 1's session):
    // before the command can read it. Every signal is still blocked, so the call never stops
    // for SIGTTOU.
    int self = static_cast<int>(SRT_SYS(__NR_getpid));
    SRT_SYS(__NR_ioctl, tty, TIOCSPGRP, &self);
  }
  int keep[kMaxKeepFds + 3];
  size_t n = 0;
  keep[n++] = status_fd;
  keep[n++] = guard_sock;
  keep[n++] = tty;
  for (size_t i = 0; i < plan.keep_count; ++i) keep[n++] = plan.keep_fds[i];
  rt::CloseAllExcept(3, keep, n);

  int32_t report[2] = {0, 0};
  auto fail = [&](wire::Stage stage, long err) {
    report[0] = stage;
    report[1] = static_cast<int32_t>(-err);
    rt::WriteAll(status_fd, report, sizeof report);
    rt::Exit(kExitSetupFailure);
  };
  if (plan.set_nofile) {
    // srt raised its own open-file limit for the proxy; the command gets the one srt was given
    // (programs using select(2) break above 1024).
    long rl = SRT_SYS(__NR_prlimit64, 0, rt::kRlimitNofile, plan.nofile, 0);
    if (Failed(rl)) fail(wire::kStageNofile, rl);
  }
  if (tty >= 0) {
    long r = 0;
    for (int slot = 0; slot < 3; ++slot) {
      if ((plan.terminal & (1u << slot)) == 0) continue;
      r = SRT_SYS(__NR_dup3, tty, slot, 0);
      if (Failed(r)) fail(wire::kStageTerminal, r);
    }
    SRT_SYS(__NR_close, tty);
  }
  long r = SRT_SYS(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (Failed(r)) fail(wire::kStageNoNewPrivs, r);
  LoadFilters(status_fd, guard_sock, g_filter, deny_len, guard_len);

  // Filtered from here on, and waiting for the go-ahead, which PID 1 gives once srt-agent has
  // put every protection in place. Until then the command opens and enters nothing: what it
  // gets now is what the protections cover.
  uint8_t msg[wire::kMaxMessageBytes];
  for (;;) {
    int fd = -1;
    long got = ReceiveMessage(guard_sock, msg, sizeof msg, &fd);
    if (got <= 0) rt::Exit(kExitSetupFailure);  // PID 1 gave up: never run the command
    const uint32_t type = TypeOf(msg, static_cast<size_t>(got));
    if (fd < 0 || (type != kToCommandGo && type != kToCommandReopen)) {
      rt::Exit(kExitSetupFailure);
    }
    if (type == kToCommandGo) {
      r = SRT_SYS(__NR_fchdir, fd);
      SRT_SYS(__NR_close, fd);
      if (Failed(r)) fail(wire::kStageCwd, r);
      break;
    }
    // A device the caller passed (or /dev/null for a closed standard descriptor), which PID 1
    // opened through the sandbox's read-only node after the go-ahead: no descriptor of the
    // host's node reaches the command, so it cannot change that node's mode or owner.
    const int target = IntAt(msg, static_cast<size_t>(got), 0);
    if (fd != target) {
      r = SRT_SYS(__NR_dup3, fd, target, 0);
      SRT_SYS(__NR_close, fd);
      if (Failed(r)) fail(wire::kStageFds, r);
    } else {
      SRT_SYS(__NR_fcntl, fd, F_SETFD, 0);
    }
  }
  SRT_SYS(__NR_close, guard_sock);
  DropPendingStops();
  uint64_t empty = 0;
  SRT_SYS(__NR_rt_sigprocmask, SIG_SETMASK, &empty, 0, sizeof empty);
  Exec(status_fd, plan.argv, envp, plan.argc);
}

int ExitCodeOf(int status) {
  int sig = status & 0x7f;
  if (sig == 0) return (status >> 8) & 0xff;
  return 128 + sig;
}

}  // namespace

int RunInit(int argc, char** argv, char** envp) {
  // Before anything else: nothing that later runs in the sandbox may read our memory, environment
  // or file descriptors through /proc or ptrace.
  SRT_SYS(__NR_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0);
  SRT_SYS(__NR_prctl, PR_SET_NAME, "srt-init", 0, 0, 0);
  // bwrap entered the working directory before srt-agent put its protections (denyWrite, the
  // mandatory denies) in place: PID 1's is the writable directory beneath any protection mounted
  // at or above it. No command may start there, nor reach it through /proc/self/cwd while it
  // enters its own: each enters it by path, without magic links, after the protections (a plain
  // run's through the descriptor PID 1 passes with the go-ahead; a warm sandbox's in
  // serve_role.cc).
  SRT_SYS(__NR_chdir, "/");
  int ctl = -1, plan_fd = -1;
  if (argc != 4 || !rt::ParseInt(argv[2], ctl) || !rt::ParseInt(argv[3], plan_fd)) {
    Die(-1, wire::kStagePlan, -EINVAL, "usage: srt-init init CTL-FD PLAN-FD (started by srt only)");
  }

  size_t size = 0;
  long map = rt::MapPlan(plan_fd, wire::kMaxPlanBytes, size);
  if (Failed(map)) Die(ctl, wire::kStagePlan, map, "map plan");
  const auto* data = reinterpret_cast<const uint8_t*>(map);
  InitPlan plan;
  if (!DecodeInitPlan(data, size, plan)) {
    Die(ctl, wire::kStagePlan, -EINVAL, "malformed plan");
  }
  plan.argv = static_cast<const char**>(MapAnonymous((plan.argc + 1) * sizeof(char*)));
  if (!plan.argv || !DecodeInitPlan(data, size, plan)) {
    Die(ctl, wire::kStagePlan, -ENOMEM, "plan arguments");
  }

  if (plan.stderr_fd != 2) {
    long r = SRT_SYS(__NR_dup3, plan.stderr_fd, 2, 0);
    if (Failed(r)) Die(ctl, wire::kStageFds, r, "dup3 stderr");
  }
  // Keep stdio, the control socket and the caller's fds; everything else bwrap or srt left open
  // (the plan, the filter, srt-init's own executable) is closed here.
  int keep[kMaxKeepFds + 1];
  size_t nkeep = 0;
  keep[nkeep++] = ctl;
  for (size_t i = 0; i < plan.keep_count; ++i) keep[nkeep++] = plan.keep_fds[i];
  rt::CloseAllExcept(3, keep, nkeep);

  // SIGCHLD arrives through a signalfd; every other signal is blocked (PID 1 ignores signals it
  // has no handler for anyway; srt relays signals for the command over the control socket).
  uint64_t all = ~0ULL;
  SRT_SYS(__NR_rt_sigprocmask, SIG_BLOCK, &all, 0, sizeof all);
  uint64_t chld = 1ULL << (SIGCHLD - 1);
  long sfd = SRT_SYS(__NR_signalfd4, -1, &chld, sizeof chld, O_CLOEXEC | O_NONBLOCK);
  if (Failed(sfd)) Die(ctl, wire::kStageSignals, sfd, "signalfd");

  long self = SRT_SYS(__NR_getpid);
  long pidfd = SRT_SYS(__NR_pidfd_open, self, 0);
  if (Failed(pidfd)) Die(ctl, wire::kStagePidfd, pidfd, "pidfd_open");
  if (Failed(SendMessage(ctl, wire::kMsgHello, nullptr, 0, static_cast<int>(pidfd)))) {
    rt::Exit(kExitSetupFailure);
  }
  SRT_SYS(__NR_close, pidfd);

  int tty = -1;
  if (plan.terminal) {
    // The command's own terminal, a pty of the sandbox's /dev/pts (bwrap's --dev): the caller's
    // terminal never enters the sandbox, so nothing in it can change that one's modes or size,
    // or type into it. srt relays the master to and from the caller's terminal, and sets its
    // modes and size before the go-ahead.
    long master = SRT_SYS(__NR_openat, AT_FDCWD, "/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC, 0);
    if (Failed(master)) Die(ctl, wire::kStageTerminal, master, "/dev/ptmx");
    int unlock = 0;
    long r = SRT_SYS(__NR_ioctl, master, TIOCSPTLCK, &unlock);
    if (Failed(r)) Die(ctl, wire::kStageTerminal, r, "unlock the pty");
    // TIOCGPTPEER: the replica of this very master, with no path lookup to be fooled.
    long replica = SRT_SYS(__NR_ioctl, master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (Failed(replica)) Die(ctl, wire::kStageTerminal, replica, "open the pty's replica");
    if (Failed(SendMessage(ctl, wire::kMsgTerminal, nullptr, 0, static_cast<int>(master)))) {
      rt::Exit(kExitSetupFailure);
    }
    SRT_SYS(__NR_close, master);
    tty = static_cast<int>(replica);
    // PID 1 leads the session the terminal controls and the command runs in, as a login shell
    // does: the command's group then has a parent in its session, so it is no orphan and Ctrl-Z
    // stops it (the kernel ignores the terminal's stop signals for orphaned groups). bwrap's
    // --new-session may already have made PID 1 the leader.
    SRT_SYS(__NR_setsid);
    r = SRT_SYS(__NR_ioctl, tty, TIOCSCTTY, 0);
    if (Failed(r)) Die(ctl, wire::kStageTerminal, r, "make the pty the controlling terminal");
  }

  // srt sends the seccomp filters (compiled when srt was built) as soon as PID 1 has said hello,
  // and the go-ahead only once srt-agent has finished its work.
  uint8_t msg[wire::kMaxMessageBytes];
  auto await = [&](uint32_t type, int* fd) {
    for (;;) {
      long n = ReceiveMessage(ctl, msg, sizeof msg, fd);
      if (n <= 0) rt::Exit(kExitSetupFailure);  // srt is gone or gave up: never start the command
      if (TypeOf(msg, static_cast<size_t>(n)) == type && (!fd || *fd >= 0)) return n;
      if (fd && *fd >= 0) SRT_SYS(__NR_close, *fd);
    }
  };
  int filter_fd = -1;
  long deny_len = IntAt(msg, static_cast<size_t>(await(wire::kMsgFilters, &filter_fd)), 0);
  long filter_len = SRT_SYS(__NR_pread64, filter_fd, g_filter, sizeof g_filter, 0);
  SRT_SYS(__NR_close, filter_fd);
  if (Failed(filter_len) || filter_len == 0 || filter_len % 8 != 0 ||
      static_cast<size_t>(filter_len) >= sizeof g_filter || deny_len <= 0 || deny_len % 8 != 0 ||
      deny_len > filter_len) {
    Die(ctl, wire::kStageSeccomp, Failed(filter_len) ? filter_len : -EINVAL, "read seccomp filter");
  }
  if (plan.serve) {
    await(wire::kMsgGo, nullptr);
    return RunServe(ctl, static_cast<int>(sfd), plan, g_filter, static_cast<size_t>(deny_len),
                    static_cast<size_t>(filter_len - deny_len));
  }

  int status_pipe[2] = {-1, -1};
  long r = SRT_SYS(__NR_pipe2, status_pipe, O_CLOEXEC);
  if (Failed(r)) Die(ctl, wire::kStageFork, r, "pipe2");
  // The command hands its write guard's listener back over this pair and waits on it for the
  // go-ahead (PID 1 is not filtered).
  int guard_sock[2] = {-1, -1};
  r = MessagePair(guard_sock);
  if (Failed(r)) Die(ctl, wire::kStageFork, r, "socketpair");
  long pid = SRT_SYS(__NR_clone, SIGCHLD, 0, 0, 0, 0);
  if (Failed(pid)) Die(ctl, wire::kStageFork, pid, "fork");
  if (pid == 0) {
    SRT_SYS(__NR_close, ctl);
    SRT_SYS(__NR_close, sfd);
    SRT_SYS(__NR_close, status_pipe[0]);
    SRT_SYS(__NR_close, guard_sock[0]);
    RunCommand(plan, envp, status_pipe[1], static_cast<size_t>(deny_len),
               static_cast<size_t>(filter_len - deny_len), guard_sock[1], tty);
  }
  SRT_SYS(__NR_close, status_pipe[1]);
  SRT_SYS(__NR_close, guard_sock[1]);
  const bool terminal = tty >= 0;
  if (terminal) SRT_SYS(__NR_close, tty);
  SRT_SYS(__NR_setpgid, pid, pid);
  if (filter_len > deny_len) {
    // The listener, on to srt (which hands it to the agent). Nothing comes if the command failed
    // before its filters were in place: the status pipe says why.
    int listener = -1;
    long n = ReceiveMessage(guard_sock[0], msg, sizeof msg, &listener);
    if (n > 0 && listener >= 0) SendMessage(ctl, wire::kMsgGuard, nullptr, 0, listener);
    if (listener >= 0) SRT_SYS(__NR_close, listener);
  }

  await(wire::kMsgGo, nullptr);
  // Now, and not before: the devices are opened through the sandbox's /dev, whose nodes the agent
  // has made read-only (see RunCommand). A command that already failed is not told anything; the
  // status pipe says why it failed.
  for (size_t i = 0; i < plan.reopen_count; ++i) {
    const InitPlan::Reopen& d = plan.reopens[i];
    long fd = SRT_SYS(__NR_openat, AT_FDCWD, d.path, d.flags | O_NOCTTY | O_CLOEXEC, 0);
    if (Failed(fd)) {
      SRT_SYS(__NR_kill, pid, SIGKILL);
      Die(ctl, wire::kStageFds, fd, d.path);
    }
    int32_t target = d.fd;
    SendMessage(guard_sock[0], kToCommandReopen, &target, sizeof target, static_cast<int>(fd));
    SRT_SYS(__NR_close, fd);
  }
  // The working directory, by its path now that the protections are in place (bwrap's --chdir
  // came before them), and without magic links: a symlink the command's earlier processes or
  // another sandbox put in the path cannot lead anywhere else. The command, filtered already,
  // only enters it.
  long cwd = rt::OpenWorkingDirectory(plan.cwd);
  if (Failed(cwd)) {
    SRT_SYS(__NR_kill, pid, SIGKILL);
    Die(ctl, wire::kStageCwd, cwd, plan.cwd);
  }
  SendMessage(guard_sock[0], kToCommandGo, nullptr, 0, static_cast<int>(cwd));
  SRT_SYS(__NR_close, cwd);
  SRT_SYS(__NR_close, guard_sock[0]);
  int32_t report[2] = {0, 0};
  long got;
  do {
    got = SRT_SYS(__NR_read, status_pipe[0], report, sizeof report);
  } while (got == -EINTR);
  SRT_SYS(__NR_close, status_pipe[0]);
  if (got == sizeof report && report[0] != 0) {
    const auto stage = static_cast<wire::Stage>(report[0]);
    ReportFailure(ctl, -1, stage, -report[1],
                  stage == wire::kStageCwd ? plan.cwd : "command set-up");
  } else if (got == sizeof report) {
    SendInts(ctl, wire::kMsgExecFailed, report[1]);
  } else {
    SendInts(ctl, wire::kMsgStarted, static_cast<int32_t>(pid));
  }

  int command_status = 0;
  bool command_done = false;
  PollFd fds[2] = {{ctl, kPollIn, 0}, {static_cast<int>(sfd), kPollIn, 0}};
  bool srt_gone = false;
  while (!command_done && !srt_gone) {
    fds[0].revents = fds[1].revents = 0;
    r = SRT_SYS(__NR_ppoll, fds, 2, 0, 0, 0);
    if (r == -EINTR) continue;
    if (fds[1].revents) {
      signalfd_siginfo info[8];
      while (SRT_SYS(__NR_read, sfd, info, sizeof info) > 0) {
      }
      int st = 0;
      long reaped;
      // With a terminal, Ctrl-Z stops the command: srt hears of it, so that its caller's shell
      // gets its terminal back, and continues the command when it is resumed.
      const int flags = WNOHANG | (terminal ? WUNTRACED : 0);
      while ((reaped = SRT_SYS(__NR_wait4, -1, &st, flags, 0)) > 0) {
        if ((st & 0xff) == 0x7f) {
          if (reaped == pid) SendInts(ctl, wire::kMsgStopped, (st >> 8) & 0xff);
          continue;
        }
        if (reaped == pid) {
          command_status = st;
          command_done = true;
        }
      }
    }
    if (fds[0].revents && !command_done) {
      long n = ReceiveMessage(ctl, msg, sizeof msg);
      if (n <= 0) {
        srt_gone = true;  // srt died: take the sandbox down with it
      } else if (TypeOf(msg, static_cast<size_t>(n)) == wire::kMsgSignal) {
        int32_t sig = IntAt(msg, static_cast<size_t>(n), 0);
        if (sig > 0 && sig < 65) SRT_SYS(__NR_kill, -pid, sig);
      }
    }
  }
  // The command is gone (or srt is): nothing else in the sandbox may outlive it.
  SRT_SYS(__NR_kill, -1, SIGKILL);
  for (;;) {
    int st = 0;
    long reaped = SRT_SYS(__NR_wait4, -1, &st, 0, 0);
    if (reaped == -EINTR) continue;
    if (reaped < 0) break;
    if (reaped == pid && !command_done) {
      command_status = st;
      command_done = true;
    }
  }
  if (srt_gone) return kExitSetupFailure;
  SendInts(ctl, wire::kMsgExited, command_status);
  return ExitCodeOf(command_status);
}

}  // namespace srt::init
