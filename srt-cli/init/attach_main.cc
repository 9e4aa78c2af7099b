// SPDX-License-Identifier: Apache-2.0
// srt-attach: `srt --attach SOCKET ...` as a freestanding program (no libc, as srt-init; see
// rt.h). Every command attached to a warm sandbox pays its client's start, and srt's (the
// dynamic loader, glibc's start-up, which probes the CPU dozens of times and costs about
// 0.8 ms where CPUID traps, then libssl, libcrypto, c-ares, libnl) is most of the
// per-command cost; this client's is an exec and a few page faults.
//
// It speaks the same frames (srt-cli/attach_protocol.h) and sends the same exec plan
// (init_protocol/exec_plan.h) as srt's client (srt-cli/attach_client.cc), and keeps the same
// contract: the caller's stdio, environment and working directory; signals relayed; the exit
// status srt would give. Whatever it receives from the server is checked for size and range.
#include <asm/ioctls.h>
#include <asm/termbits.h>
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/memfd.h>
#include <linux/prctl.h>
#include <linux/signal.h>
#include <linux/signalfd.h>

#include "attach_args.h"
#include "init_protocol/exec_plan.h"
#include "init_protocol/wire.h"
#include "ipc.h"
#include "rt.h"

namespace srt::attach {

namespace {

using rt::Failed;

constexpr int kExitSetupFailure = 125;  // srt's (srt/result.h)
constexpr int kExitSignalBase = 128;

// The frames of srt-cli/attach_protocol.h (one per packet, u32 type first).
constexpr uint32_t kAttachRun = 1, kAttachSignal = 2;
constexpr uint32_t kAttachStarted = 101, kAttachExited = 102, kAttachError = 103;
constexpr uint32_t kAttachVersion = 1;
constexpr size_t kMaxAttachFrameBytes = 4096;

constexpr int kAfUnix = 1, kSockSeqpacket = 5, kSockCloexec = 02000000;
constexpr int kSolSocket = 1, kSoPeercred = 17;

const char kVersion[] = SRT_VERSION;

const char kHelp[] =
    "Usage: srt-attach SOCKET [-d|--debug] [-c] COMMAND [ARG...]\n"
    "\n"
    "Runs COMMAND in the warm sandbox of 'srt --serve SOCKET', exactly as\n"
    "'srt --attach SOCKET [-d] [-c] COMMAND [ARG...]' does (the caller's stdio, environment and\n"
    "working directory; signals relayed; srt's exit statuses), from a small executable that\n"
    "starts in a fraction of srt's time. See srt-attach(1) and srt(1).\n"
    "\n"
    "Options:\n"
    "  -c COMMAND     run COMMAND with bash -c (the words after it are $0, $1, ...)\n"
    "  -d, --debug    say what srt-attach does, on stderr\n"
    "  -h, --help     print this help\n"
    "  -V, --version  print the version\n";

// A line for stderr, built in a fixed buffer (a longer one is cut).
class Line {
 public:
  Line& Add(const char* s) {
    while (*s && n_ < sizeof buf_ - 1) buf_[n_++] = *s++;
    return *this;
  }
  Line& Int(long v) {
    char b[24];
    b[rt::FormatInt(v, b)] = 0;
    return Add(b);
  }
  // As srt's strings::Quote: in single quotes, with \ and ' escaped and control bytes as \xNN.
  Line& Quoted(const char* s) {
    Add("'");
    for (; *s; ++s) {
      const auto u = static_cast<unsigned char>(*s);
      if (u == '\\' || u == '\'') {
        char e[3] = {'\\', *s, 0};
        Add(e);
      } else if (u < 0x20 || u == 0x7f) {
        Hex(u);
      } else {
        char c[2] = {*s, 0};
        Add(c);
      }
    }
    return Add("'");
  }
  // As srt's strings::EscapeNonPrintable: bytes outside 0x20..0x7e as \xNN.
  Line& Escaped(const char* s, size_t len) {
    for (size_t i = 0; i < len; ++i) {
      const auto u = static_cast<unsigned char>(s[i]);
      if (u < 0x20 || u >= 0x7f) {
        Hex(u);
      } else {
        char c[2] = {s[i], 0};
        Add(c);
      }
    }
    return *this;
  }
  void Print() {
    buf_[n_++] = '\n';
    rt::WriteAll(2, buf_, n_);
  }

 private:
  void Hex(unsigned char u) {
    static const char kHex[] = "0123456789abcdef";
    char e[5] = {'\\', 'x', kHex[u >> 4], kHex[u & 0xf], 0};
    Add(e);
  }
  char buf_[1024];
  size_t n_ = 0;
};

// strerror's text for `err`, as srt prints it ("No such file or directory").
const char* ErrnoText(int err, char* scratch) {
  switch (err) {
    case ECONNREFUSED:
      return "Connection refused";
    case EISDIR:
      return "Is a directory";
    case ETXTBSY:
      return "Text file busy";
    case ENAMETOOLONG:
      return "File name too long";
    case EMFILE:
      return "Too many open files";
    case EAGAIN:
      return "Resource temporarily unavailable";
    default:
      break;
  }
  // rt::ErrnoName says "ENOENT (No such file or directory)": the part in parentheses.
  const char* name = rt::ErrnoName(err, scratch);
  const char* open = name;
  while (*open && *open != '(') ++open;
  if (!*open) return "unknown error";
  size_t n = 0;
  for (const char* c = open + 1; *c && *c != ')' && n < 63; ++c) scratch[n++] = *c;
  scratch[n] = 0;
  return scratch;
}

int Fail(Line& line) {
  line.Print();
  return kExitSetupFailure;
}

// The caller's terminal in raw mode while its command runs (as srt's RawTerminal).
class RawTerminal {
 public:
  void Enter() {
    if (raw_) return;
    int pgrp = 0;
    if (Failed(SRT_SYS(__NR_ioctl, 0, TCGETS, &saved_))) return;  // not a terminal
    if (Failed(SRT_SYS(__NR_ioctl, 0, TIOCGPGRP, &pgrp)) || pgrp != SRT_SYS(__NR_getpgid, 0)) {
      return;  // in the background
    }
    termios raw = saved_;  // cfmakeraw(3)
    raw.c_iflag &=
        ~static_cast<tcflag_t>(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
    raw.c_oflag &= ~static_cast<tcflag_t>(OPOST);
    raw.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    raw.c_cflag &= ~static_cast<tcflag_t>(CSIZE | PARENB);
    raw.c_cflag |= CS8;
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    raw_ = !Failed(SRT_SYS(__NR_ioctl, 0, TCSETSW, &raw));  // tcsetattr(TCSADRAIN)
  }
  void Leave() {
    if (raw_) SRT_SYS(__NR_ioctl, 0, TCSETSW, &saved_);
    raw_ = false;
  }

 private:
  termios saved_{};
  bool raw_ = false;
};

// The exec plan, written to a memfd through a buffer.
class PlanWriter {
 public:
  explicit PlanWriter(int fd) : fd_(fd) {
    U32(wire::kPlanMagic);
    U32(wire::kPlanVersion);
  }
  void Record(uint16_t tag, const char* s) {
    const size_t len = strlen(s) + 1;
    U32(tag);
    U32(static_cast<uint32_t>(len));
    Bytes(s, len);
  }
  // 0, or -errno (-E2BIG above the plan's limit).
  long Finish() {
    Flush();
    return error_;
  }

 private:
  void U32(uint32_t v) {
    uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                    static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
    Bytes(b, 4);
  }
  void Bytes(const void* p, size_t n) {
    total_ += n;
    if (total_ > wire::kMaxExecPlanBytes) error_ = -E2BIG;
    const auto* b = static_cast<const uint8_t*>(p);
    while (n > 0 && !error_) {
      if (used_ == sizeof buf_) Flush();
      size_t take = sizeof buf_ - used_ < n ? sizeof buf_ - used_ : n;
      memcpy(buf_ + used_, b, take);
      used_ += take;
      b += take;
      n -= take;
    }
  }
  void Flush() {
    size_t done = 0;
    while (done < used_ && !error_) {
      long w = SRT_SYS(__NR_write, fd_, buf_ + done, used_ - done);
      if (w == -EINTR) continue;
      if (Failed(w)) error_ = w;
      if (w > 0) done += static_cast<size_t>(w);
    }
    used_ = 0;
  }
  int fd_;
  uint8_t buf_[16384];
  size_t used_ = 0;
  size_t total_ = 0;
  long error_ = 0;
};

uint32_t U32At(const uint8_t* b, size_t at) {
  return static_cast<uint32_t>(b[at]) | static_cast<uint32_t>(b[at + 1]) << 8 |
         static_cast<uint32_t>(b[at + 2]) << 16 | static_cast<uint32_t>(b[at + 3]) << 24;
}

long SendSignal(int sock, int sig) {
  const int32_t v = sig;
  return init::SendMessage(sock, kAttachSignal, &v, sizeof v);
}

int Run(int argc, char** argv, char** envp) {
  // As srt: no core, and no ptrace or /proc/PID/mem by the user's other processes.
  if (Failed(SRT_SYS(__NR_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0))) return kExitSetupFailure;
  // As srt: a closed standard descriptor would be the number of the next one opened.
  for (int fd = 0; fd <= 2; ++fd) {
    if (SRT_SYS(__NR_fcntl, fd, F_GETFD) == -EBADF) {
      long null = SRT_SYS(__NR_openat, AT_FDCWD, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
      if (null != fd) return kExitSetupFailure;
    }
  }
  const AttachArgs args = ParseAttachArgs(argc, argv);
  switch (args.action) {
    case AttachArgs::kHelp:
      rt::WriteStr(1, kHelp);
      return 0;
    case AttachArgs::kVersion:
      rt::WriteStr(1, "srt-attach ");
      rt::WriteStr(1, kVersion);
      rt::WriteStr(1, "\n");
      return 0;
    case AttachArgs::kError: {
      Line line;
      line.Add("srt-attach: ");
      if (args.error_arg) line.Quoted(args.error_arg).Add(" ");
      return Fail(line.Add(args.error));
    }
    case AttachArgs::kRun:
      break;
  }
  // As srt: SRT_DEBUG=1 (or true) is -d.
  bool debug = args.debug;
  for (char** e = envp; e && *e; ++e) {
    debug |= detail::Eq(*e, "SRT_DEBUG=1") || detail::Eq(*e, "SRT_DEBUG=true");
  }
  char scratch[64];
  const char* path = args.socket;
  auto what = [&](Line& line) -> Line& { return line.Add("srt: --attach ").Quoted(path); };

  long sock = SRT_SYS(__NR_socket, kAfUnix, kSockSeqpacket | kSockCloexec, 0);
  if (Failed(sock)) {
    Line l;
    return Fail(what(l).Add(": socket: ").Add(ErrnoText(static_cast<int>(-sock), scratch)));
  }
  struct {
    uint16_t family;
    char path[108];
  } addr{};
  addr.family = kAfUnix;
  const size_t path_len = strlen(path);
  if (path_len >= sizeof addr.path) {
    Line l;
    return Fail(what(l).Add(": the path is too long for a socket"));
  }
  memcpy(addr.path, path, path_len + 1);
  long r = SRT_SYS(__NR_connect, sock, &addr, sizeof addr);
  if (Failed(r)) {
    const int err = static_cast<int>(-r);
    Line l;
    what(l);
    if (err == ENOENT || err == ECONNREFUSED) {
      return Fail(l.Add(": no srt --serve is running there (")
                      .Add(ErrnoText(err, scratch))
                      .Add("); start one with 'srt --serve ")
                      .Add(path)
                      .Add("'"));
    }
    return Fail(l.Add(": connect: ").Add(ErrnoText(err, scratch)));
  }
  struct {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
  } cred{};
  uint32_t cred_len = sizeof cred;
  r = SRT_SYS(__NR_getsockopt, sock, kSolSocket, kSoPeercred, &cred, &cred_len);
  if (Failed(r)) {
    Line l;
    return Fail(what(l).Add(": SO_PEERCRED: ").Add(ErrnoText(static_cast<int>(-r), scratch)));
  }
  if (cred.uid != static_cast<uint32_t>(SRT_SYS(__NR_geteuid))) {
    Line l;
    return Fail(what(l)
                    .Add(": the socket is served by uid ")
                    .Int(cred.uid)
                    .Add(", not by you; refusing to hand it a command"));
  }

  // Signals for the command, taken before it can start.
  uint64_t relayed = 0;
  const int kRelayed[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};
  for (int s : kRelayed) relayed |= 1ull << (s - 1);
  SRT_SYS(__NR_rt_sigprocmask, SIG_BLOCK, &relayed, 0, sizeof relayed);
  long sfd = SRT_SYS(__NR_signalfd4, -1, &relayed, sizeof relayed, O_CLOEXEC);
  if (Failed(sfd)) {
    Line l;
    return Fail(l.Add("srt: signalfd: ").Add(ErrnoText(static_cast<int>(-sfd), scratch)));
  }

  // The command's plan: argv, the environment, the working directory.
  char cwd[4096];
  r = SRT_SYS(__NR_getcwd, cwd, sizeof cwd);
  // The system call (unlike libc's getcwd) returns "(unreachable)..." for a directory outside
  // this process's root: no path to send either.
  if (Failed(r) || cwd[0] != '/') {
    Line l;
    return Fail(l.Add("srt: the working directory no longer exists or cannot be read (getcwd: ")
                    .Add(ErrnoText(Failed(r) ? static_cast<int>(-r) : ENOENT, scratch))
                    .Add("); change to a directory that exists and run again"));
  }
  long memfd = SRT_SYS(__NR_memfd_create, "srt-attach", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (Failed(memfd)) {
    Line l;
    return Fail(l.Add("srt: memfd: ").Add(ErrnoText(static_cast<int>(-memfd), scratch)));
  }
  {
    PlanWriter plan(static_cast<int>(memfd));
    if (args.shell_command) {
      plan.Record(wire::kTagArg, "bash");
      plan.Record(wire::kTagArg, "-c");
      plan.Record(wire::kTagArg, args.shell_command);
    }
    for (size_t i = 0; i < args.word_count; ++i) plan.Record(wire::kTagArg, args.words[i]);
    for (char** e = envp; e && *e; ++e) {
      const char* c = *e;
      while (*c && *c != '=') ++c;
      if (*c == '=' && c != *e) plan.Record(wire::kTagEnv, *e);
    }
    plan.Record(wire::kTagCwd, cwd);
    r = plan.Finish();
  }
  if (r == -E2BIG) {
    Line l;
    return Fail(l.Add("srt: the command and its environment exceed ")
                    .Int(static_cast<long>(wire::kMaxExecPlanBytes))
                    .Add(" bytes"));
  }
  if (Failed(r)) {
    Line l;
    return Fail(l.Add("srt: memfd: ").Add(ErrnoText(static_cast<int>(-r), scratch)));
  }
  SRT_SYS(__NR_fcntl, memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  const int passed[4] = {static_cast<int>(memfd), 0, 1, 2};
  const uint32_t version = kAttachVersion;
  r = init::SendMessageFds(static_cast<int>(sock), kAttachRun, &version, sizeof version, passed, 4);
  SRT_SYS(__NR_close, memfd);
  if (Failed(r)) {
    Line l;
    return Fail(what(l).Add(": send: ").Add(ErrnoText(static_cast<int>(-r), scratch)));
  }

  RawTerminal terminal;
  int relayed_signal = 0;
  uint8_t frame[kMaxAttachFrameBytes + 1];
  for (;;) {
    rt::PollFd p[2] = {{static_cast<int>(sock), rt::kPollIn, 0},
                       {static_cast<int>(sfd), rt::kPollIn, 0}};
    r = SRT_SYS(__NR_ppoll, p, 2, 0, 0, 0);
    if (r == -EINTR) continue;
    if (Failed(r)) {
      terminal.Leave();
      Line l;
      return Fail(l.Add("srt: poll: ").Add(ErrnoText(static_cast<int>(-r), scratch)));
    }
    if (p[1].revents) {
      signalfd_siginfo info{};
      if (SRT_SYS(__NR_read, sfd, &info, sizeof info) == static_cast<long>(sizeof info)) {
        const int sig = static_cast<int>(info.ssi_signo);
        if (sig == SIGCONT) terminal.Enter();  // `fg`: the keys are the command's again
        if (!relayed_signal && sig != SIGCONT && sig != SIGWINCH) relayed_signal = sig;
        if (debug) {
          Line l;
          l.Add("srt: debug: relaying signal ").Int(sig).Add(" to the command").Print();
        }
        SendSignal(static_cast<int>(sock), sig);
      }
      continue;
    }
    int fds[4];
    size_t nfds = 0;
    long n = init::ReceiveMessageFds(static_cast<int>(sock), frame, sizeof frame, fds, 4, &nfds);
    if (n <= 0 && n != -EPROTO) {
      terminal.Leave();
      Line l;
      return Fail(what(l).Add(": srt --serve ended before the command did"));
    }
    if (n == -EPROTO || nfds > 0) {
      for (size_t i = 0; i < nfds; ++i) SRT_SYS(__NR_close, fds[i]);
      terminal.Leave();
      Line l;
      return Fail(what(l).Add(": unexpected descriptors from srt --serve"));
    }
    const auto len = static_cast<size_t>(n);
    const uint32_t type = len >= 4 ? U32At(frame, 0) : 0;
    if (len > kMaxAttachFrameBytes) {
      terminal.Leave();
      Line l;
      return Fail(what(l).Add(": malformed attach frame: longer than 4096 bytes"));
    }
    if (type == kAttachStarted && len == 4) {
      terminal.Enter();
      continue;
    }
    if (type == kAttachError && len > 4) {
      terminal.Leave();
      Line l;
      return Fail(what(l).Add(": ").Escaped(reinterpret_cast<const char*>(frame + 4), len - 4));
    }
    if (type != kAttachExited || len != 20) {
      terminal.Leave();
      Line l;
      return Fail(what(l)
                      .Add(": malformed attach frame: type ")
                      .Int(type)
                      .Add(" with ")
                      .Int(static_cast<long>(len) - 4)
                      .Add(" bytes of payload"));
    }
    const auto code = static_cast<int32_t>(U32At(frame, 4));
    const auto signal = static_cast<int32_t>(U32At(frame, 8));
    const auto exec_errno = static_cast<int32_t>(U32At(frame, 12));
    const auto relayed_by_server = static_cast<int32_t>(U32At(frame, 16));
    terminal.Leave();
    if (code < 0 || code > 255 || signal < 0 || signal > 64 || exec_errno < 0 ||
        exec_errno > 4095 || relayed_by_server < 0 || relayed_by_server > 64) {
      Line l;
      return Fail(what(l).Add(": malformed attach frame: exit status out of range"));
    }
    if (exec_errno) {
      // As a shell says it: a name looked up in PATH is "command not found".
      const char* name = args.shell_command ? "bash" : args.words[0];
      bool looked_up = true;
      for (const char* c = name; *c; ++c) looked_up &= *c != '/';
      size_t name_len = strlen(name);
      Line l;
      l.Add("srt: ").Escaped(name, name_len < 200 ? name_len : 200).Add(": ");
      l.Add(exec_errno == ENOENT && looked_up ? "command not found"
                                              : ErrnoText(exec_errno, scratch));
      l.Print();
    }
    switch (relayed_signal) {
      case SIGINT:
      case SIGTERM:
      case SIGHUP:
      case SIGQUIT:
        return kExitSignalBase + relayed_signal;
      default:
        return code;
    }
  }
}

}  // namespace

}  // namespace srt::attach

// rt.cc's _start enters here.
extern "C" int SrtInitMain(int argc, char** argv, char** envp) {
  return srt::attach::Run(argc, argv, envp);
}
