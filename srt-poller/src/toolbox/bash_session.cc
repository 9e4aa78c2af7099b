// SPDX-License-Identifier: Apache-2.0
// BashSession: the persistent shell on a PTY (see bash_session.h).
#include "toolbox/bash_session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/system_text.h"
#include "sys/landlock.h"
#include "sys/spawn.h"
#include "toolbox/limits.h"
#include "toolbox/text.h"

extern char** environ;

namespace srt::poller::toolbox {
namespace {

using Clock = std::chrono::steady_clock;

// A per-call marker with a random nonce, so a command cannot predict it and spoof the exit-code
// framing (the Go tool's "__ANT_CMD_<16 hex>_DONE__").
std::string NewSentinel() {
  unsigned char bytes[8] = {};
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // cannot happen after boot; the marker is then merely predictable
    got += static_cast<size_t>(n);
  }
  std::string s = "__ANT_CMD_";
  char hex[3];
  for (unsigned char b : bytes) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    s += hex;
  }
  return s + "_DONE__";
}

// Parses the exit code after the marker: optional spaces, an optional '-', digits. -1 when the
// framing is corrupt (the Go tool's "treat as failure").
int ParseExitCode(std::string_view tail) {
  size_t i = 0;
  while (i < tail.size() && (tail[i] == ' ' || tail[i] == '\t')) ++i;
  bool neg = i < tail.size() && tail[i] == '-';
  if (neg) ++i;
  long v = 0;
  size_t digits = 0;
  while (i < tail.size() && tail[i] >= '0' && tail[i] <= '9' && digits < 10) {
    v = v * 10 + (tail[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0) return -1;
  return static_cast<int>(neg ? -v : v);
}

std::string Finish(std::string_view raw, bool truncated) {
  std::string out = CleanTerminalOutput(raw);
  return truncated ? "[output truncated]\n" + out : out;
}

}  // namespace

std::vector<std::string> ShellEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string_view name = kv.substr(0, kv.find('='));
    if (name.starts_with("ANTHROPIC_")) continue;  // credentials never reach the shell
    if (name == "PS1" || name == "PS2" || name == "TERM") continue;
    env.emplace_back(kv);
  }
  env.emplace_back("PS1=");
  env.emplace_back("PS2=");
  env.emplace_back("TERM=dumb");
  return env;
}

Result<std::unique_ptr<BashSession>> BashSession::Start(const BashOptions& options) {
  std::unique_ptr<BashSession> s(new BashSession());
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return SysError("open /dev/ptmx");
  s->master_.reset(master);
  if (grantpt(master) != 0) return SysError("grantpt");
  if (unlockpt(master) != 0) return SysError("unlockpt");
  char name[128];
  if (ptsname_r(master, name, sizeof name) != 0) return SysError("ptsname");
  // Hold the replica open until the shell has it, so reading the master cannot see EIO (no
  // replica open) during start-up.
  UniqueFd replica(open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!replica) return SysError(std::string("open '") + name + "'");
  int flags = fcntl(master, F_GETFL);
  if (flags < 0 || fcntl(master, F_SETFL, flags | O_NONBLOCK) != 0) return SysError("fcntl");
  // The terminal's modes, set here rather than by `stty` in the shell (an exec less on the
  // session's first call). Beyond the Go tool's `stty -echo`: -icanon, because a command written
  // while bash is between two readline() calls meets the canonical line discipline, which
  // silently drops everything past 4095 bytes of a line; and -ixon, so a ^S in a command cannot
  // freeze the output. bash saves these modes at its start and restores them after each command.
  termios modes{};
  if (tcgetattr(replica.get(), &modes) != 0) return SysError("tcgetattr");
  modes.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON);
  modes.c_iflag &= ~static_cast<tcflag_t>(IXON);
  if (tcsetattr(replica.get(), TCSANOW, &modes) != 0) return SysError("tcsetattr");

  // The shell and everything it starts get a Landlock domain of their own that may signal only
  // itself: not us (its parent, $PPID), not srt-init (PID 1). Without it, `kill -STOP $PPID`
  // wedges the session until srt-poller's deadlines end it. A kernel without signal scoping
  // (Linux < 6.12) starts the shell without; srt-poller warns about it at start.
  SRT_ASSIGN_OR_RETURN(UniqueFd scope, sys::SignalScopeRuleset());
  sys::SpawnRequest request;
  request.path = options.shell;
  request.argv = {options.shell, "--noprofile", "--norc"};
  request.env = options.env;
  request.fds = {{replica.get(), 0}, {replica.get(), 1}, {replica.get(), 2}};
  request.new_session = true;
  request.controlling_terminal = true;  // as a login shell's: job control and ^C reach its jobs
  request.cwd = options.cwd;
  request.landlock_ruleset_fd = scope ? scope.get() : -1;
  request.join_cgroup_fds = options.cgroup_fds;
  Result<pid_t> spawned = sys::Spawn(request);
  if (!spawned && (spawned.error().sys_errno() == E2BIG || spawned.error().sys_errno() == ENOMEM)) {
    // execve says E2BIG when it cannot get the pages for the (tiny) argv: the memory of the
    // shell's cgroup is full, most likely with files the agent left in /tmp or /dev/shm.
    return Error(Errc::kSystem,
                 "start bash: no memory left for a new shell (files in /tmp and /dev/shm count "
                 "against it): " +
                     spawned.error().message(),
                 spawned.error().sys_errno());
  }
  if (!spawned) return std::move(spawned).error();
  const pid_t pid = *spawned;
  s->pid_ = pid;
  long pidfd = syscall(SYS_pidfd_open, pid, 0);
  if (pidfd >= 0) s->pidfd_.reset(static_cast<int>(pidfd));

  // The Go tool's `set +m` (an interactive bash turns job control on whatever its arguments
  // say); set +H: an interactive bash expands `!` history references, which would mangle
  // commands such as `echo "hi!x"` ("event not found") that run fine in the Go tool's
  // script-like shell. `( : )`: the shell can fork. A shell whose work cgroup is held at its
  // pids limit (a fork bomb that outlived the last shell) retries its fork past the set-up's
  // deadline, and the caller then ends what holds the cgroup and starts another. A fork of
  // bash, not an exec: cheaper than the `stty` that used to be this probe. The answer says the
  // shell is up.
  NoInterrupt never;
  Outcome setup = s->Run("set +m; set +H; ( : )", kBashSetupTimeout,
                         Clock::now() + kBashSetupTimeout, never, /*redirect_stdin=*/false);
  if (setup.status != Status::kDone) {
    return MakeError(Errc::kSystem, "start bash: the shell did not answer" +
                                        (setup.error.empty() ? "" : ": " + setup.error));
  }
  return s;
}

BashSession::~BashSession() { Kill(); }

void BashSession::Kill() {
  if (pid_ <= 0) return;
  // The shell leads its own session and process group (set +m keeps every job in it).
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  master_.reset();
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

BashSession::Outcome BashSession::Exec(std::string_view command, std::chrono::milliseconds timeout,
                                       Clock::time_point deadline, Interrupt& interrupt) {
  if (pid_ <= 0) return {Status::kFailed, "", -1, "session closed"};
  // Output of an earlier command's background jobs belongs to nobody: drop it.
  char scratch[4096];
  while (read(master_.get(), scratch, sizeof scratch) > 0) {
  }
  return Run(command, timeout, deadline, interrupt, /*redirect_stdin=*/true);
}

BashSession::Outcome BashSession::Run(std::string_view command, std::chrono::milliseconds timeout,
                                      Clock::time_point deadline, Interrupt& interrupt,
                                      bool redirect_stdin) {
  const std::string sentinel = NewSentinel();
  const size_t half = sentinel.size() / 2;
  // The marker is printed from two adjacent quoted halves so an echo of this input can never
  // contain it whole. printf sits on its own line so that a syntax error in `command`, which
  // makes bash drop the rest of the line, still reports ($? = 2) instead of hanging.
  std::string input = "{ ";
  input.append(command);
  input += "\n}";
  if (redirect_stdin) input += " </dev/null";
  input += " 2>&1\nprintf '\\n" + sentinel.substr(0, half) + "''" + sentinel.substr(half) +
           "%d\\n' $?\n";

  const Clock::time_point own_deadline = Clock::now() + timeout;
  const Clock::time_point until = std::min(own_deadline, deadline);
  std::string buf;
  bool truncated = false;
  size_t written = 0;
  size_t search_from = 0;
  size_t found = std::string::npos;
  bool ended = false;  // the shell exited or hung up: no more output will come

  auto keep_tail = [&](std::string& b) {
    if (b.size() > kBashOutputLimit) {
      b.erase(0, b.size() - kBashOutputLimit);
      truncated = true;
    }
  };

  for (;;) {
    if (found != std::string::npos) {
      size_t nl = buf.find_first_of("\r\n", found + sentinel.size());
      if (nl == std::string::npos && ended) nl = buf.size();
      if (nl != std::string::npos) {
        Outcome o;
        o.status = Status::kDone;
        o.exit_code = ParseExitCode(
            std::string_view(buf).substr(found + sentinel.size(), nl - found - sentinel.size()));
        // The Go tool caps the whole buffer, marker line included.
        size_t after = buf.size() - found;
        std::string body = buf.substr(0, found);
        if (body.size() + after > kBashOutputLimit) {
          size_t keep = kBashOutputLimit > after ? kBashOutputLimit - after : 0;
          if (body.size() > keep) body.erase(0, body.size() - keep);
          truncated = true;
        }
        o.output = Finish(body, truncated);
        return o;
      }
    }
    Clock::time_point now = Clock::now();
    if (now >= until) {
      keep_tail(buf);
      Outcome o;
      o.status = own_deadline <= deadline ? Status::kTimedOut : Status::kDeadline;
      o.output = Finish(buf, truncated) + "\n[timed out]";
      return o;
    }
    auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
    pollfd p[3] = {
        {master_.get(), POLLIN, 0}, {pidfd_.get(), POLLIN, 0}, {interrupt.fd(), POLLIN, 0}};
    if (written < input.size()) p[0].events |= POLLOUT;
    int n = poll(p, 3, static_cast<int>(std::min<long long>(wait_ms, 60'000)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return {Status::kFailed, "", -1, std::string("poll: ") + ErrnoText(errno)};
    }
    if (p[2].revents != 0 && interrupt.Check()) {
      return {Status::kInterrupted, Finish(buf, truncated), -1, "interrupted"};
    }
    if (p[0].revents & POLLOUT) {
      ssize_t w = write(master_.get(), input.data() + written, input.size() - written);
      if (w > 0) {
        written += static_cast<size_t>(w);
      } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
        return {Status::kFailed, "", -1, std::string("write to pty: ") + ErrnoText(errno)};
      }
    }
    bool hup = (p[0].revents & (POLLHUP | POLLERR)) != 0;
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char chunk[16384];
      for (;;) {
        ssize_t r = read(master_.get(), chunk, sizeof chunk);
        if (r > 0) {
          buf.append(chunk, static_cast<size_t>(r));
          continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) hup = false;
        break;  // EIO: every replica fd is closed, the shell is gone
      }
      if (found == std::string::npos) {
        size_t pos = buf.find(sentinel, search_from);
        if (pos != std::string::npos) {
          found = pos;
        } else {
          search_from = buf.size() > sentinel.size() ? buf.size() - sentinel.size() : 0;
          // Keep memory bounded while a command streams: amortised trim to the tail.
          if (buf.size() > 2 * kBashOutputLimit) {
            size_t drop = buf.size() - kBashOutputLimit;
            buf.erase(0, drop);
            search_from -= std::min(search_from, drop);
            truncated = true;
          }
        }
      }
      if (hup && found == std::string::npos) {
        return {Status::kFailed, "", -1, "bash session terminated"};
      }
      ended = ended || hup;
    }
    if (p[1].revents != 0) ended = true;
    if (p[1].revents != 0 && found == std::string::npos) {
      // The shell exited. Whatever it printed last is still in the PTY; take it, then give up.
      char chunk[16384];
      ssize_t r;
      while ((r = read(master_.get(), chunk, sizeof chunk)) > 0)
        buf.append(chunk, static_cast<size_t>(r));
      if (buf.find(sentinel, search_from) == std::string::npos) {
        return {Status::kFailed, "", -1, "bash session terminated"};
      }
      found = buf.find(sentinel, search_from);
    }
  }
}

}  // namespace srt::poller::toolbox
