// SPDX-License-Identifier: Apache-2.0
// `srt --serve` and `srt --attach` (see serve.h).
#include "serve.h"

#include <fcntl.h>
#include <limits.h>  // PATH_MAX
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>  // RENAME_NOREPLACE
#include <cstring>
#include <list>
#include <mutex>
#include <thread>

#include "attach_protocol.h"
#include "attach_socket.h"
#include "base/path.h"
#include "base/start_thread.h"
#include "base/strings.h"
#include "base/system_text.h"
#include "init_protocol/exec_plan.h"

namespace srt::cli {

namespace {

// At most this many attached commands at once (srt-init runs at most wire::kMaxExecs).
constexpr size_t kMaxSessions = 128;
// Threads kept waiting for the next client once their command is over.
constexpr size_t kMaxIdleWorkers = 4;
// A client has this long to send its command after it connects.
constexpr int kFirstFrameMillis = 10000;

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

// The threads that serve commands wait for clients themselves, each in poll(2) on the listening
// socket (non-blocking: the one the kernel hands a connection to accepts it, the others go back
// to waiting), so a command is served by the thread that accepted it: no hand-over from an
// acceptor and no thread started per command. One thread more is started whenever none is left
// waiting (up to kMaxSessions serving), and a thread whose command is over ends when
// kMaxIdleWorkers are waiting already.
class Server {
 public:
  Server(ServeSocket& socket, Sandbox& sandbox, const Print& print)
      : socket_(socket), sandbox_(sandbox), print_(print) {}

  Result<void> Start() {
    stop_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!stop_) return SysError("eventfd");
    const int flags = fcntl(socket_.fd(), F_GETFL);
    if (flags < 0 || fcntl(socket_.fd(), F_SETFL, flags | O_NONBLOCK) != 0) {
      return SysError("fcntl O_NONBLOCK on the socket");
    }
    std::lock_guard<std::mutex> lock(mu_);
    return SpawnWorker();
  }

  // After the sandbox has ended: every command with it.
  void Finish() {
    uint64_t one = 1;
    (void)!write(stop_.get(), &one, sizeof one);  // never read: every waiting thread sees it
    std::list<Worker> workers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      workers.swap(workers_);
    }
    for (Worker& w : workers) w.thread.join();
  }

 private:
  struct Worker;

  // Under mu_. The threads of workers that ended are joined here, so that a long-lived server
  // holds no more threads than serve or wait. Fails when no thread can be started (a process
  // limit): the server then goes on with the threads it has.
  Result<void> SpawnWorker() {
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (it->done) {
        it->thread.join();
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
    if (stopping_) return Ok();
    Worker& slot = workers_.emplace_back();
    Result<std::thread> thread =
        StartThread("start a thread serving commands", [this, &slot] { Work(slot); });
    if (!thread) {
      workers_.pop_back();
      return std::move(thread).error();
    }
    ++waiting_;
    slot.thread = std::move(*thread);
    return Ok();
  }

  void Work(Worker& self) {
    const uid_t uid_self = geteuid();
    for (;;) {
      pollfd p[2] = {{socket_.fd(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
      if (poll(p, 2, -1) < 0 && errno != EINTR) break;
      if (p[1].revents) break;
      if (!p[0].revents) continue;
      UniqueFd conn(accept4(socket_.fd(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn) continue;  // another thread took it (EAGAIN), or the client left
      Result<uid_t> uid = PeerUid(conn.get());
      if (!uid || *uid != uid_self) {
        // Another user (root included): the socket's mode keeps them out; this is the second
        // lock.
        print_("srt: --serve: refused a client of uid " +
               (uid ? std::to_string(*uid) : std::string("?")) + ": it serves its own user only");
        (void)SendFrame(conn.get(), {kAttachError, {}, "srt --serve serves its own user only"});
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (active_ >= kMaxSessions) {
          (void)SendFrame(conn.get(), {kAttachError,
                                       {},
                                       "srt --serve runs " + std::to_string(kMaxSessions) +
                                           " commands already; try again later"});
          continue;
        }
        ++active_;
        --waiting_;
        if (waiting_ == 0 && active_ < kMaxSessions) {
          // The next client's. Without it, the next client waits for a thread that is done.
          if (Result<void> spawned = SpawnWorker(); !spawned) {
            print_("srt: --serve: " + spawned.error().message() +
                   "; the next command waits for one that ends");
          }
        }
      }
      Session(std::move(conn));
      std::lock_guard<std::mutex> lock(mu_);
      --active_;
      if (waiting_ >= kMaxIdleWorkers) {
        self.done = true;
        return;
      }
      ++waiting_;
    }
    std::lock_guard<std::mutex> lock(mu_);
    --waiting_;
    self.done = true;
  }

  // One attached command, start to end.
  void Session(UniqueFd conn) {
    const int sock = conn.get();
    auto refuse = [&](const std::string& why) { (void)SendFrame(sock, {kAttachError, {}, why}); };
    pollfd first{sock, POLLIN, 0};
    if (poll(&first, 1, kFirstFrameMillis) <= 0) return refuse("no command within 10 s");
    Result<ReceivedFrame> got = ReceiveFrame(sock);
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
      Result<ReceivedFrame> r = ReceiveFrame(sock);
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
  std::mutex mu_;
  struct Worker {
    std::thread thread;
    bool done = false;  // under mu_
  };
  std::list<Worker> workers_;  // std::list: a slot stays put while its thread runs
  size_t active_ = 0;          // serving a command
  size_t waiting_ = 0;         // waiting for a client
  bool stopping_ = false;
};

}  // namespace

Result<std::unique_ptr<ServeSocket>> ServeSocket::Open(const std::string& path) {
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
  // The socket's real path, from the descriptor it will be made in (the name given may be
  // relative or go through '..'): the sandbox must not be able to write there.
  char real[PATH_MAX];
  const std::string link = "/proc/self/fd/" + std::to_string(s->dir_.get());
  const ssize_t n = readlink(link.c_str(), real, sizeof real - 1);
  if (n <= 0) return SysError(what + ": its directory's real path");
  s->real_path_ = std::string(real, static_cast<size_t>(n)) + (n == 1 ? "" : "/") + name;
  return s;
}

Result<void> ServeSocket::Listen() {
  const std::string what = "--serve " + strings::Quote(path_);
  const std::string& name = name_;
  struct stat st {};
  listen_.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!listen_) return SysError("socket");
  // Bound and listening under a name of its own first, then renamed into place: a client that
  // finds the socket can connect at once (no ECONNREFUSED between bind and listen).
  const std::string temporary = "." + name + "." + std::to_string(getpid());
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string via = "/proc/self/fd/" + std::to_string(dir_.get()) + "/" + temporary;
  if (via.size() >= sizeof a.sun_path) {
    return MakeError(Errc::kInvalidArgument, what + ": the name is too long for a socket");
  }
  std::memcpy(a.sun_path, via.c_str(), via.size() + 1);
  (void)unlinkat(dir_.get(), temporary.c_str(), 0);  // one a killed srt of this pid left
  // 0600 from birth: no moment in which another user could connect.
  const mode_t old = umask(0177);
  const int bound = bind(listen_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a);
  const int bind_errno = errno;
  umask(old);
  if (bound != 0) return SysError(what + ": bind", bind_errno);
  if (listen(listen_.get(), 64) != 0 ||
      fstatat(dir_.get(), temporary.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    Error e = SysError(what + ": listen");
    (void)unlinkat(dir_.get(), temporary.c_str(), 0);
    return e;
  }
  // RENAME_NOREPLACE: a name someone made since the check above is not replaced.
  if (syscall(SYS_renameat2, dir_.get(), temporary.c_str(), dir_.get(), name.c_str(),
              RENAME_NOREPLACE) != 0) {
    Error e = SysError(what + ": rename the socket into place");
    (void)unlinkat(dir_.get(), temporary.c_str(), 0);
    return e;
  }
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  return Ok();
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

}  // namespace srt::cli
