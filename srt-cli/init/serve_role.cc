// SPDX-License-Identifier: Apache-2.0
// srt-init `init` in a warm sandbox: the command loop of PID 1 (see serve_role.h).
//
// Each command is a child of PID 1 forked on srt's kMsgExec, so it starts as a plain `srt` run's
// command does, without a bwrap of its own: it leads a process group (or, with a terminal, a
// session) of its own, gets the three descriptors srt passed as 0-2 and nothing else of PID 1's,
// sets no_new_privs, enters a Landlock domain of its own (so that it can neither read another
// command's descriptors through /proc nor signal it) and loads the sandbox's seccomp filters
// last, then execs. Its exit is reported by the id srt gave it, and what is left of its process
// group is killed then. PID 1
// stays unfiltered and unsignalable from inside (a pid namespace's init gets only the signals it
// handles), and non-dumpable, so no command can reach its descriptors or signal it.
#include "serve_role.h"

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

#include "init_protocol/exec_plan.h"
#include "ipc.h"
#include "rt.h"

namespace srt::init {

namespace {

using rt::Failed;

constexpr int kExitSetupFailure = 125;

struct Slot {
  bool used = false;
  uint32_t id = 0;
  long pid = 0;  // 0 until started
  int tty = -1;  // the replica of its terminal, until it is forked
  bool session = false;
};

Slot g_slots[wire::kMaxExecs];
// The commands' devpts instance (kMsgServePtys), a mount no path in the sandbox reaches.
int g_ptys = -1;

Slot* Find(uint32_t id) {
  for (Slot& s : g_slots) {
    if (s.used && s.id == id) return &s;
  }
  return nullptr;
}

Slot* Take(uint32_t id) {
  if (Find(id)) return nullptr;  // ids are srt's, unique while in use
  for (Slot& s : g_slots) {
    if (!s.used) {
      s = Slot{};
      s.used = true;
      s.id = id;
      return &s;
    }
  }
  return nullptr;
}

void Release(Slot& s) {
  if (s.tty >= 0) SRT_SYS(__NR_close, s.tty);
  s = Slot{};
}

void SendExecInts(int ctl, uint32_t type, uint32_t id, int32_t a, int32_t b = 0) {
  int32_t v[3] = {static_cast<int32_t>(id), a, b};
  SendMessage(ctl, type, v, sizeof v);
}

// The ruleset of a Landlock domain of a command's own (it and its children), which restricts no
// file or port: the kernel then refuses it ptrace access to every process outside it - another
// command's /proc/PID/fd (its stdio), environ and mem - and (LANDLOCK_SCOPE_SIGNAL) signals to
// them, and abstract Unix sockets outside it. Made once per warm sandbox: each command's
// landlock_restrict_self(2) with it makes a domain of that command's own. Landlock ABI 6 (Linux
// 6.12) or later; without it (0 here) the commands of a warm sandbox can reach each other
// (docs/serve.md). Returns the ruleset's descriptor (CLOEXEC), 0, or -errno.
long MakeIsolationRuleset() {
  constexpr int kCreateRulesetVersion = 1;
  constexpr long kScopeAbi = 6;
  constexpr uint64_t kScopeAbstractUnixSocket = 1, kScopeSignal = 2;
  long abi = SRT_SYS(__NR_landlock_create_ruleset, 0, 0, kCreateRulesetVersion);
  if (Failed(abi) || abi < kScopeAbi) return 0;
  struct {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
  } attr{0, 0, kScopeAbstractUnixSocket | kScopeSignal};
  long ruleset = SRT_SYS(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  return Failed(ruleset) ? ruleset : (ruleset == 0 ? -EBADF : ruleset);
}

// The command's own domain, from MakeIsolationRuleset()'s result. Returns 0 or -errno.
long IsolateFromOtherCommands(long ruleset) {
  if (ruleset == 0) return 0;
  if (Failed(ruleset)) return ruleset;
  long r = SRT_SYS(__NR_landlock_restrict_self, ruleset, 0);
  SRT_SYS(__NR_close, ruleset);
  return r;
}

// The command's side of the fork. Never returns.
[[noreturn]] void RunExecChild(const InitPlan& init_plan, const wire::ExecPlan& plan,
                               const int stdio[3], int tty, int status_fd, int guard_sock,
                               long ruleset, const uint8_t* filter, size_t deny_len,
                               size_t guard_len) {
  if (tty >= 0) {
    // A session of its own, led by the command, with its terminal as the controlling one: the
    // terminal's signals (Ctrl-C) reach this command's foreground job and nothing else.
    SRT_SYS(__NR_setsid);
    SRT_SYS(__NR_ioctl, tty, TIOCSCTTY, 0);
  } else {
    SRT_SYS(__NR_setpgid, 0, 0);
  }
  uint64_t empty = 0;
  SRT_SYS(__NR_rt_sigprocmask, SIG_SETMASK, &empty, 0, sizeof empty);
  int32_t report[2] = {0, 0};
  auto fail = [&](wire::Stage stage, long err) {
    report[0] = stage;
    report[1] = static_cast<int32_t>(-err);
    rt::WriteAll(status_fd, report, sizeof report);
    rt::Exit(kExitSetupFailure);
  };
  // The descriptors srt passed were received above 2 (PID 1's own 0-2 are open).
  for (int slot = 0; slot < 3; ++slot) {
    if (stdio[slot] < 3) fail(wire::kStageFds, -EBADF);
    long r = SRT_SYS(__NR_dup3, stdio[slot], slot, 0);
    if (Failed(r)) fail(wire::kStageFds, r);
  }
  for (size_t i = 0; i < plan.reopen_count; ++i) {
    const wire::ExecPlan::Reopen& d = plan.reopens[i];
    long fd = SRT_SYS(__NR_openat, AT_FDCWD, d.path, d.flags | O_NOCTTY | O_CLOEXEC, 0);
    if (Failed(fd)) fail(wire::kStageFds, fd);
    long r = SRT_SYS(__NR_dup3, fd, d.fd, 0);
    SRT_SYS(__NR_close, fd);
    if (Failed(r)) fail(wire::kStageFds, r);
  }
  if (tty >= 0) {
    for (int slot = 0; slot < 3; ++slot) {
      if ((plan.terminal & (1u << slot)) == 0) continue;
      long r = SRT_SYS(__NR_dup3, tty, slot, 0);
      if (Failed(r)) fail(wire::kStageTerminal, r);
    }
  }
  // Nothing of PID 1's reaches the command: not srt's socket, not another command's stdio.
  int keep[3] = {status_fd, guard_sock, static_cast<int>(ruleset)};
  rt::CloseAllExcept(3, keep, ruleset > 0 ? 3 : 2);
  // By path (PID 1's own working directory is /), without magic links: a symlink to
  // /proc/self/cwd, put in the path by a command's leftover process, leads nowhere.
  long r = rt::OpenWorkingDirectory(plan.cwd);
  if (!Failed(r)) {
    long fd = r;
    r = SRT_SYS(__NR_fchdir, fd);
    SRT_SYS(__NR_close, fd);
  }
  if (Failed(r)) fail(wire::kStageCwd, r);
  if (init_plan.set_nofile) {
    r = SRT_SYS(__NR_prlimit64, 0, rt::kRlimitNofile, init_plan.nofile, 0);
    if (Failed(r)) fail(wire::kStageNofile, r);
  }
  r = SRT_SYS(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (Failed(r)) fail(wire::kStageNoNewPrivs, r);
  r = IsolateFromOtherCommands(ruleset);
  if (Failed(r)) fail(wire::kStageIsolate, r);
  LoadFiltersAndExec(status_fd, guard_sock, filter, deny_len, guard_len, plan.argv,
                     const_cast<char**>(plan.envp), plan.argc);
}

// kMsgExecTerminalOpen: a pty for the command to come; the master goes to srt, which sets its
// modes and size before it sends the command. The pty is one of g_ptys, the devpts instance the
// agent made and mounted nowhere, not of the sandbox's /dev/pts: no other command of the sandbox,
// and nothing one left behind, has a name to open it by (a process can open any pty of a devpts
// it reaches, as its user). Without that instance, no terminal: never one of /dev/pts.
void OpenTerminal(int ctl, uint32_t id) {
  Slot* s = Take(id);
  if (!s) {
    SendExecInts(ctl, wire::kMsgExecRefused, id, wire::kStageTerminal, EAGAIN);
    return;
  }
  long master = g_ptys < 0 ? -ENODEV
                           : SRT_SYS(__NR_openat, g_ptys, "ptmx",
                                     O_RDWR | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC, 0);
  int unlock = 0;
  long r = Failed(master) ? master : SRT_SYS(__NR_ioctl, master, TIOCSPTLCK, &unlock);
  long replica =
      Failed(r) ? r : SRT_SYS(__NR_ioctl, master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (Failed(replica)) {
    if (!Failed(master)) SRT_SYS(__NR_close, master);
    Release(*s);
    SendExecInts(ctl, wire::kMsgExecRefused, id, wire::kStageTerminal,
                 static_cast<int32_t>(-replica));
    return;
  }
  s->tty = static_cast<int>(replica);
  s->session = true;
  SendMessage(ctl, wire::kMsgExecTerminal, &id, sizeof id, static_cast<int>(master));
  SRT_SYS(__NR_close, master);
}

// kMsgExec: decodes the plan, forks the command and reports whether it runs.
void Exec(int ctl, const InitPlan& init_plan, uint32_t id, const int* fds, size_t nfds,
          int guard_sock, long ruleset, const uint8_t* filter, size_t deny_len, size_t guard_len) {
  auto refuse = [&](wire::Stage stage, int err) {
    SendExecInts(ctl, wire::kMsgExecRefused, id, stage, err);
  };
  if (nfds != 4) return refuse(wire::kStagePlan, EINVAL);
  size_t size = 0;
  long map = rt::MapPlan(fds[0], wire::kMaxExecPlanBytes, size);
  if (Failed(map)) return refuse(wire::kStagePlan, static_cast<int>(-map));
  const auto* data = reinterpret_cast<const uint8_t*>(map);
  wire::ExecPlan plan;
  long arrays = 0;
  size_t arrays_bytes = 0;
  bool ok = wire::DecodeExecPlan(data, size, plan);
  if (ok) {
    arrays_bytes = (plan.argc + plan.envc + 2) * sizeof(char*);
    arrays = SRT_SYS(__NR_mmap, 0, arrays_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ok = !Failed(arrays);
  }
  if (ok) {
    plan.argv = reinterpret_cast<const char**>(arrays);
    plan.envp = plan.argv + plan.argc + 1;
    ok = wire::DecodeExecPlan(data, size, plan);
  }
  auto unmap = [&] {
    if (arrays && !Failed(arrays)) SRT_SYS(__NR_munmap, arrays, arrays_bytes);
    SRT_SYS(__NR_munmap, map, size);
  };
  if (!ok) {
    unmap();
    return refuse(wire::kStagePlan, EINVAL);
  }
  // A command with a terminal uses the slot kMsgExecTerminalOpen took; any other a new one.
  Slot* s = plan.terminal ? Find(id) : Take(id);
  if (!s || s->pid != 0 || (plan.terminal != 0) != (s->tty >= 0)) {
    if (s && !plan.terminal) Release(*s);
    unmap();
    return refuse(wire::kStageFork, plan.terminal ? EINVAL : EAGAIN);
  }
  int status_pipe[2] = {-1, -1};
  long r = SRT_SYS(__NR_pipe2, status_pipe, O_CLOEXEC);
  long pid = Failed(r) ? r : SRT_SYS(__NR_clone, SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) {
    SRT_SYS(__NR_close, status_pipe[0]);
    RunExecChild(init_plan, plan, fds + 1, s->tty, status_pipe[1], guard_sock, ruleset, filter,
                 deny_len, guard_len);
  }
  unmap();
  if (Failed(pid)) {
    if (!Failed(r)) {
      SRT_SYS(__NR_close, status_pipe[0]);
      SRT_SYS(__NR_close, status_pipe[1]);
    }
    Release(*s);
    return refuse(wire::kStageFork, static_cast<int>(-pid));
  }
  SRT_SYS(__NR_close, status_pipe[1]);
  if (s->tty >= 0) {
    SRT_SYS(__NR_close, s->tty);
    s->tty = -1;
  } else {
    SRT_SYS(__NR_setpgid, pid, pid);  // from both sides: no signal can come before it
  }
  int32_t report[2] = {0, 0};
  long got;
  do {
    got = SRT_SYS(__NR_read, status_pipe[0], report, sizeof report);
  } while (got == -EINTR);
  SRT_SYS(__NR_close, status_pipe[0]);
  if (got == sizeof report) {
    // It never ran; its exit is reaped and ignored (the slot is free, the pid not yet reusable).
    Release(*s);
    return refuse(static_cast<wire::Stage>(report[0]), report[1]);
  }
  s->pid = pid;
  SendExecInts(ctl, wire::kMsgExecStarted, id, static_cast<int32_t>(pid));
}

}  // namespace

int RunServe(int ctl, int sfd, const InitPlan& plan, const uint8_t* filter, size_t deny_len,
             size_t guard_len) {
  // Each command hands its write guard's listener back over this pair; PID 1 passes it on.
  int guard_sock[2] = {-1, -1};
  long r = MessagePair(guard_sock);
  if (Failed(r)) {
    ReportFailure(ctl, -1, wire::kStageFork, r, "socketpair");
    return kExitSetupFailure;
  }
  // Once, not per command (PID 1 itself stays outside every domain).
  const long ruleset = MakeIsolationRuleset();
  SendMessage(ctl, wire::kMsgServing, nullptr, 0);
  uint8_t msg[wire::kMaxMessageBytes];
  bool stop = false;
  while (!stop) {
    rt::PollFd p[3] = {
        {ctl, rt::kPollIn, 0}, {sfd, rt::kPollIn, 0}, {guard_sock[0], rt::kPollIn, 0}};
    r = SRT_SYS(__NR_ppoll, p, 3, 0, 0, 0);
    if (r == -EINTR) continue;
    if (Failed(r)) break;
    if (p[2].revents) {
      int listener = -1;
      long n = ReceiveMessage(guard_sock[0], msg, sizeof msg, &listener);
      if (n > 0 && listener >= 0) SendMessage(ctl, wire::kMsgGuard, nullptr, 0, listener);
      if (listener >= 0) SRT_SYS(__NR_close, listener);
    }
    if (p[1].revents) {
      signalfd_siginfo info[8];
      while (SRT_SYS(__NR_read, sfd, info, sizeof info) > 0) {
      }
      int st = 0;
      long reaped;
      while ((reaped = SRT_SYS(__NR_wait4, -1, &st, WNOHANG | WUNTRACED, 0)) > 0) {
        Slot* s = nullptr;
        for (Slot& x : g_slots) {
          if (x.used && x.pid == reaped) s = &x;
        }
        if (!s) continue;  // an orphan that came to PID 1, or a command that never ran
        if ((st & 0xff) == 0x7f) {
          // Stopped (Ctrl-Z on its terminal): nobody could continue it later, so at once.
          SRT_SYS(__NR_kill, -reaped, SIGCONT);
          continue;
        }
        // As a plain run ends: nothing of the command's process group outlives it.
        SRT_SYS(__NR_kill, -reaped, SIGKILL);
        SendExecInts(ctl, wire::kMsgExecExited, s->id, st);
        Release(*s);
      }
    }
    if (p[0].revents) {
      int fds[4];
      size_t nfds = 0;
      long n = ReceiveMessageFds(ctl, msg, sizeof msg, fds, 4, &nfds);
      if (n == -EPROTO) continue;
      if (n <= 0) break;  // srt is gone: take the sandbox down
      const auto len = static_cast<size_t>(n);
      const uint32_t type = TypeOf(msg, len);
      const auto id = static_cast<uint32_t>(IntAt(msg, len, 0));
      if (type == wire::kMsgExec && len == 8) {
        Exec(ctl, plan, id, fds, nfds, guard_sock[1], ruleset, filter, deny_len, guard_len);
      } else if (type == wire::kMsgServePtys && len == 8 && nfds == 1 && g_ptys < 0) {
        constexpr long kDevptsSuperMagic = 0x1cd1;
        long statfs[16] = {};  // struct statfs starts with f_type
        if (!Failed(SRT_SYS(__NR_fstatfs, fds[0], statfs)) && statfs[0] == kDevptsSuperMagic) {
          g_ptys = fds[0];
          nfds = 0;  // kept
        }
      } else if (type == wire::kMsgExecTerminalOpen && len == 8 && nfds == 0) {
        OpenTerminal(ctl, id);
      } else if (type == wire::kMsgExecSignal && len == 12 && nfds == 0) {
        const int32_t sig = IntAt(msg, len, 1);
        Slot* s = Find(id);
        if (s && s->pid > 0 && sig > 0 && sig < 65) {
          SRT_SYS(__NR_kill, -s->pid, sig);
        } else if (s && s->pid == 0) {
          Release(*s);  // a terminal opened for a command srt gave up on
        }
      } else if (type == wire::kMsgStop) {
        stop = true;
      }
      for (size_t i = 0; i < nfds; ++i) SRT_SYS(__NR_close, fds[i]);
    }
  }
  // The warm sandbox ends: nothing in it may outlive it.
  SRT_SYS(__NR_kill, -1, SIGKILL);
  for (;;) {
    int st = 0;
    long reaped = SRT_SYS(__NR_wait4, -1, &st, 0, 0);
    if (reaped == -EINTR) continue;
    if (reaped < 0) break;
  }
  SendInts(ctl, wire::kMsgExited, 0);
  return 0;
}

}  // namespace srt::init
