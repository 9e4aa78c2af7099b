// SPDX-License-Identifier: Apache-2.0
// The client of a warm sandbox (see attach_client.h).
#include "attach_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attach_protocol.h"
#include "attach_socket.h"
#include "base/strings.h"
#include "base/system_text.h"
#include "base/unique_fd.h"
#include "init_protocol/exec_plan.h"
#include "srt/result.h"

extern char** environ;

namespace srt::cli {

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
  if (!getcwd(cwd, sizeof cwd)) {
    return AttachFail(print, std::string("the working directory no longer exists or cannot be read "
                                         "(getcwd: ") +
                                 ErrnoText(errno) +
                                 "); change to a directory that exists and run again");
  }
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
    Result<ReceivedFrame> got = ReceiveFrame(sock.get());
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
