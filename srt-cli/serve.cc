// SPDX-License-Identifier: Apache-2.0
// `srt --serve` and `srt --attach` (see serve.h).
#include "serve.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>  // RENAME_NOREPLACE
#include <cstring>
#include <list>
#include <mutex>
#include <thread>

#include "attach_protocol.h"
#include "base/strings.h"
#include "base/system_text.h"
#include "init_protocol/exec_plan.h"

extern char** environ;

namespace srt::cli {

namespace {

// At most this many attached commands at once (srt-init runs at most wire::kMaxExecs).
constexpr size_t kMaxSessions = 128;
// A client has this long to send its command after it connects.
constexpr int kFirstFrameMillis = 10000;

Result<void> SendFrame(int sock, const AttachFrame& frame, const std::vector<int>& fds = {}) {
  std::vector<uint8_t> bytes = EncodeAttachFrame(frame);
  iovec iov{bytes.data(), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))] = {};
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(fds.size() * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  for (;;) {
    if (sendmsg(sock, &msg, MSG_NOSIGNAL) >= 0) return Ok();
    if (errno != EINTR) return SysError("send");
  }
}

// One frame and up to 4 descriptors; an empty frame (type 0) at EOF.
struct Received {
  std::vector<uint8_t> bytes;
  std::vector<UniqueFd> fds;
  bool eof = false;
};

Result<Received> ReceiveFrame(int sock) {
  Received r;
  r.bytes.resize(kMaxAttachFrameBytes + 1);
  iovec iov{r.bytes.data(), r.bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return SysError("receive");
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      r.fds.emplace_back(fd);
    }
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    return MakeError(Errc::kProtocol, "a frame longer than " +
                                          std::to_string(kMaxAttachFrameBytes) +
                                          " bytes or with too many descriptors");
  }
  r.bytes.resize(static_cast<size_t>(n));
  r.eof = n == 0;
  return r;
}

Result<uid_t> PeerUid(int sock) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return SysError("SO_PEERCRED");
  }
  return cred.uid;
}

// The client's command plan, copied out of its memfd first (the client may still write to it).
Result<AttachCommand> ReadCommand(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return SysError("fstat the command plan");
  if (!S_ISREG(st.st_mode) || st.st_size <= 0 ||
      static_cast<uint64_t>(st.st_size) > wire::kMaxExecPlanBytes) {
    return MakeError(Errc::kProtocol, "the command plan is not a file of 1 to " +
                                          std::to_string(wire::kMaxExecPlanBytes) + " bytes");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("read the command plan");
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return DecodeAttachCommand(bytes);
}

class Server {
 public:
  Server(ServeSocket& socket, Sandbox& sandbox, const Print& print)
      : socket_(socket), sandbox_(sandbox), print_(print) {}

  Result<void> Start() {
    stop_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!stop_) return SysError("eventfd");
    acceptor_ = std::thread([this] { Accept(); });
    return Ok();
  }

  // After the sandbox has ended: every command with it.
  void Finish() {
    uint64_t one = 1;
    (void)!write(stop_.get(), &one, sizeof one);
    if (acceptor_.joinable()) acceptor_.join();
    std::list<SessionThread> sessions;
    {
      std::lock_guard<std::mutex> lock(mu_);
      sessions.swap(sessions_);
    }
    for (SessionThread& s : sessions) s.thread.join();
  }

 private:
  void Accept() {
    const uid_t self = geteuid();
    for (;;) {
      pollfd p[2] = {{socket_.fd(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
      if (poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[1].revents) return;
      UniqueFd conn(accept4(socket_.fd(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn) continue;
      Result<uid_t> uid = PeerUid(conn.get());
      if (!uid || *uid != self) {
        // Another user (root included): the socket's mode keeps them out; this is the second
        // lock.
        print_("srt: --serve: refused a client of uid " +
               (uid ? std::to_string(*uid) : std::string("?")) + ": it serves its own user only");
        (void)SendFrame(conn.get(), {kAttachError, {}, "srt --serve serves its own user only"});
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      // The threads of commands that are over are joined here, so that a long-lived server
      // holds no more of them than run at once.
      for (auto it = sessions_.begin(); it != sessions_.end();) {
        if (it->done) {
          it->thread.join();
          it = sessions_.erase(it);
        } else {
          ++it;
        }
      }
      if (active_ >= kMaxSessions) {
        (void)SendFrame(conn.get(), {kAttachError,
                                     {},
                                     "srt --serve runs " + std::to_string(kMaxSessions) +
                                         " commands already; try again later"});
        continue;
      }
      ++active_;
      SessionThread& slot = sessions_.emplace_back();
      slot.thread = std::thread([this, &slot, c = std::move(conn)]() mutable {
        Session(std::move(c));
        std::lock_guard<std::mutex> l(mu_);
        --active_;
        slot.done = true;
      });
    }
  }

  // One attached command, start to end.
  void Session(UniqueFd conn) {
    const int sock = conn.get();
    auto refuse = [&](const std::string& why) { (void)SendFrame(sock, {kAttachError, {}, why}); };
    pollfd first{sock, POLLIN, 0};
    if (poll(&first, 1, kFirstFrameMillis) <= 0) return refuse("no command within 10 s");
    Result<Received> got = ReceiveFrame(sock);
    if (!got) return refuse(got.error().message());
    if (got->eof) return;
    Result<AttachFrame> frame = ParseAttachFrame(got->bytes, /*from_client=*/true);
    if (!frame) return refuse(frame.error().message());
    if (frame->type != kAttachRun || got->fds.size() != 4) {
      return refuse("malformed attach frame: expected a command with 4 descriptors");
    }
    Result<AttachCommand> command = ReadCommand(got->fds[0].get());
    if (!command) return refuse(command.error().message());
    ExecOptions options;
    options.argv = std::move(command->argv);
    options.env = std::move(command->env);
    options.cwd = std::move(command->cwd);
    options.stdin_fd = got->fds[1].get();
    options.stdout_fd = got->fds[2].get();
    options.stderr_fd = got->fds[3].get();
    Result<Execution> exec = sandbox_.Exec(std::move(options));
    if (!exec) return refuse(exec.error().message());
    if (!SendFrame(sock, {kAttachStarted, {}, {}})) (void)exec->Signal(SIGKILL);
    bool client = true;
    for (;;) {
      pollfd p[2] = {{exec->done_fd(), POLLIN, 0}, {client ? sock : -1, POLLIN, 0}};
      if (poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        (void)exec->Signal(SIGKILL);
        break;
      }
      if (p[0].revents) break;
      if (!p[1].revents) continue;
      Result<Received> r = ReceiveFrame(sock);
      Result<AttachFrame> f = r && !r->eof ? ParseAttachFrame(r->bytes, true)
                                           : Result<AttachFrame>(MakeError(Errc::kProtocol, ""));
      if (!f || f->type != kAttachSignal || !r->fds.empty()) {
        // The client is gone (or broke the protocol): its command goes, as a plain run's
        // does when srt dies.
        client = false;
        (void)exec->Signal(SIGKILL);
        continue;
      }
      (void)exec->Signal(f->values[0]);
    }
    Result<ExitStatus> status = exec->Wait();
    if (!client) return;
    if (!status) return refuse(status.error().message());
    (void)SendFrame(sock,
                    {kAttachExited,
                     {status->code, status->signal, status->exec_errno, status->relayed_signal},
                     {}});
  }

  ServeSocket& socket_;
  Sandbox& sandbox_;
  const Print& print_;
  UniqueFd stop_;
  std::thread acceptor_;
  std::mutex mu_;
  struct SessionThread {
    std::thread thread;
    bool done = false;  // under mu_
  };
  std::list<SessionThread> sessions_;  // std::list: a slot stays put while its thread runs
  size_t active_ = 0;
};

}  // namespace

Result<std::unique_ptr<ServeSocket>> ServeSocket::Create(const std::string& path) {
  const std::string what = "--serve " + strings::Quote(path);
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    return MakeError(Errc::kInvalidArgument, what + ": name a socket file, not a directory");
  }
  std::unique_ptr<ServeSocket> s(new ServeSocket());
  s->path_ = path;
  s->name_ = name;
  // The directory, with no symlink followed on the way (one planted in a path the sandbox
  // could write would put the socket elsewhere).
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  s->dir_.reset(static_cast<int>(syscall(SYS_openat2, AT_FDCWD, dir.c_str(), &how, sizeof how)));
  if (!s->dir_ && errno == ENOSYS) {
    // FIXME: remove once Linux 5.6 is the baseline: the last component alone is checked.
    s->dir_.reset(open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!s->dir_ && errno == ELOOP) {
    return MakeError(Errc::kInvalidArgument,
                     what +
                         ": the path goes through a symlink, which srt does not follow "
                         "here; name the real directory");
  }
  if (!s->dir_) return SysError(what + ": open its directory");
  struct stat st {};
  if (fstat(s->dir_.get(), &st) != 0) return SysError(what + ": stat its directory");
  if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    return MakeError(Errc::kPermissionDenied,
                     what + ": its directory " + strings::Quote(dir) +
                         " can be written by other users, who could replace the socket; use a "
                         "directory of your own (mode 0700, e.g. $XDG_RUNTIME_DIR)");
  }
  // A socket left by an srt --serve that died is replaced; anything else there is refused.
  if (fstatat(s->dir_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
      return MakeError(Errc::kInvalidArgument,
                       what + ": exists and is not a socket of yours; remove it or name another");
    }
    UniqueFd probe(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string via = "/proc/self/fd/" + std::to_string(s->dir_.get()) + "/" + name;
    if (via.size() >= sizeof a.sun_path) {
      return MakeError(Errc::kInvalidArgument, what + ": the name is too long for a socket");
    }
    std::memcpy(a.sun_path, via.c_str(), via.size() + 1);
    if (probe && connect(probe.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      return MakeError(Errc::kInvalidArgument, what + ": another srt --serve is serving it");
    }
    if (unlinkat(s->dir_.get(), name.c_str(), 0) != 0)
      return SysError(what + ": remove the stale socket");
  }
  s->listen_.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!s->listen_) return SysError("socket");
  // Bound and listening under a name of its own first, then renamed into place: a client that
  // finds the socket can connect at once (no ECONNREFUSED between bind and listen).
  const std::string temporary = "." + name + "." + std::to_string(getpid());
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string via = "/proc/self/fd/" + std::to_string(s->dir_.get()) + "/" + temporary;
  if (via.size() >= sizeof a.sun_path) {
    return MakeError(Errc::kInvalidArgument, what + ": the name is too long for a socket");
  }
  std::memcpy(a.sun_path, via.c_str(), via.size() + 1);
  (void)unlinkat(s->dir_.get(), temporary.c_str(), 0);  // one a killed srt of this pid left
  // 0600 from birth: no moment in which another user could connect.
  const mode_t old = umask(0177);
  const int bound = bind(s->listen_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a);
  const int bind_errno = errno;
  umask(old);
  if (bound != 0) return SysError(what + ": bind", bind_errno);
  if (listen(s->listen_.get(), 64) != 0 ||
      fstatat(s->dir_.get(), temporary.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    Error e = SysError(what + ": listen");
    (void)unlinkat(s->dir_.get(), temporary.c_str(), 0);
    return e;
  }
  // RENAME_NOREPLACE: a name someone made since the check above is not replaced.
  if (syscall(SYS_renameat2, s->dir_.get(), temporary.c_str(), s->dir_.get(), name.c_str(),
              RENAME_NOREPLACE) != 0) {
    Error e = SysError(what + ": rename the socket into place");
    (void)unlinkat(s->dir_.get(), temporary.c_str(), 0);
    return e;
  }
  s->dev_ = st.st_dev;
  s->ino_ = st.st_ino;
  return s;
}

ServeSocket::~ServeSocket() {
  if (!dir_ || !listen_) return;
  // Only the socket made here: a file put in its place since is not ours to remove.
  struct stat st {};
  if (fstatat(dir_.get(), name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev_ &&
      st.st_ino == ino_) {
    (void)unlinkat(dir_.get(), name_.c_str(), 0);
  }
}

Result<ExitStatus> Serve(ServeSocket& socket, Sandbox& sandbox, int signal_fd, const Print& print) {
  // The server's threads take no signal: the main thread reads them from `signal_fd`.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  Server server(socket, sandbox, print);
  Result<void> started = server.Start();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!started) {
    (void)sandbox.Stop();
    (void)sandbox.Wait();
    return std::move(started).error();
  }
  Result<ExitStatus> status = sandbox.Wait(signal_fd);
  server.Finish();
  return status;
}

namespace {

int AttachFail(const Print& print, const std::string& message) {
  print("srt: " + message);
  return kExitSetupFailure;
}

// The caller's terminal in raw mode while its command runs: its keys (Ctrl-C too) are for the
// command's terminal in the sandbox.
class RawTerminal {
 public:
  void Enter() {
    if (raw_ || !isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) != getpgrp()) return;
    if (tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    cfmakeraw(&raw);
    raw_ = tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0;
  }
  void Leave() {
    if (raw_) (void)tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_);
    raw_ = false;
  }
  ~RawTerminal() { Leave(); }

 private:
  termios saved_{};
  bool raw_ = false;
};

}  // namespace

int Attach(const std::string& socket_path, const std::vector<std::string>& argv, bool debug,
           const Print& print) {
  const std::string what = "--attach " + strings::Quote(socket_path);
  UniqueFd sock(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!sock) return AttachFail(print, what + ": socket: " + ErrnoText(errno));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof a.sun_path) {
    return AttachFail(print, what + ": the path is too long for a socket");
  }
  std::memcpy(a.sun_path, socket_path.c_str(), socket_path.size() + 1);
  if (connect(sock.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ECONNREFUSED) {
      return AttachFail(print, what + ": no srt --serve is running there (" + ErrnoText(err) +
                                   "); start one with 'srt --serve " + socket_path + "'");
    }
    return AttachFail(print, what + ": connect: " + ErrnoText(err));
  }
  Result<uid_t> uid = PeerUid(sock.get());
  if (!uid) return AttachFail(print, what + ": " + uid.error().message());
  if (*uid != geteuid()) {
    return AttachFail(print, what + ": the socket is served by uid " + std::to_string(*uid) +
                                 ", not by you; refusing to hand it a command");
  }

  // Signals for the command, taken before it can start.
  sigset_t relayed;
  sigemptyset(&relayed);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT}) {
    sigaddset(&relayed, s);
  }
  pthread_sigmask(SIG_BLOCK, &relayed, nullptr);
  UniqueFd sfd(signalfd(-1, &relayed, SFD_CLOEXEC));
  if (!sfd) return AttachFail(print, std::string("signalfd: ") + ErrnoText(errno));

  AttachCommand command;
  command.argv = argv;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq && eq != *e) command.env.emplace_back(*e);
  }
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd))
    return AttachFail(print, std::string("getcwd: ") + ErrnoText(errno));
  command.cwd = cwd;
  const std::string plan = EncodeAttachCommand(command);
  if (plan.size() > wire::kMaxExecPlanBytes) {
    return AttachFail(print, "the command and its environment exceed " +
                                 std::to_string(wire::kMaxExecPlanBytes) + " bytes");
  }
  UniqueFd memfd(memfd_create("srt-attach", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!memfd || write(memfd.get(), plan.data(), plan.size()) != static_cast<ssize_t>(plan.size())) {
    return AttachFail(print, std::string("memfd: ") + ErrnoText(errno));
  }
  (void)fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  if (Result<void> sent =
          SendFrame(sock.get(), {kAttachRun, {static_cast<int32_t>(kAttachVersion)}, {}},
                    {memfd.get(), STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO});
      !sent) {
    return AttachFail(print, what + ": " + sent.error().message());
  }
  memfd.reset();

  RawTerminal terminal;
  int relayed_signal = 0;
  for (;;) {
    pollfd p[2] = {{sock.get(), POLLIN, 0}, {sfd.get(), POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return AttachFail(print, std::string("poll: ") + ErrnoText(errno));
    }
    if (p[1].revents) {
      signalfd_siginfo info{};
      if (read(sfd.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        const int sig = static_cast<int>(info.ssi_signo);
        if (sig == SIGCONT) terminal.Enter();  // `fg`: the keys are the command's again
        if (!relayed_signal && sig != SIGCONT && sig != SIGWINCH) relayed_signal = sig;
        if (debug) print("srt: debug: relaying signal " + std::to_string(sig) + " to the command");
        (void)SendFrame(sock.get(), {kAttachSignal, {sig}, {}});
      }
      continue;
    }
    Result<Received> got = ReceiveFrame(sock.get());
    if (!got || got->eof) {
      terminal.Leave();
      return AttachFail(print, what + ": srt --serve ended before the command did");
    }
    Result<AttachFrame> frame = ParseAttachFrame(got->bytes, /*from_client=*/false);
    if (!frame || !got->fds.empty()) {
      terminal.Leave();
      return AttachFail(print, what + ": " +
                                   (frame ? std::string("unexpected descriptors from srt --serve")
                                          : frame.error().message()));
    }
    switch (frame->type) {
      case kAttachStarted:
        terminal.Enter();
        continue;
      case kAttachError:
        terminal.Leave();
        return AttachFail(print, what + ": " + strings::EscapeNonPrintable(frame->text));
      case kAttachExited:
        break;
      default:
        continue;
    }
    terminal.Leave();
    const int code = frame->values[0];
    const int exec_errno = frame->values[2];
    if (exec_errno) {
      const std::string& name = argv.empty() ? std::string() : argv[0];
      const bool looked_up = name.find('/') == std::string::npos;
      print("srt: " + strings::EscapeNonPrintable(name.substr(0, 200)) + ": " +
            (exec_errno == ENOENT && looked_up ? std::string("command not found")
                                               : ErrnoText(exec_errno)));
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

}  // namespace srt::cli
