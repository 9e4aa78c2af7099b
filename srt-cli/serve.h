// SPDX-License-Identifier: Apache-2.0
// srt-cli/serve: `srt --serve SOCKET` (a warm sandbox that runs each command `srt --attach
// SOCKET` sends) and `srt --attach SOCKET CMD...` (the client).
//
// The socket is a SOCK_SEQPACKET Unix socket, mode 0600, made through a descriptor of its
// directory (no symlink followed on the way, none planted at the name) in a directory no other
// user may write to; each side checks that the other runs as the same user (SO_PEERCRED). It is
// never reachable from inside the sandbox: the sandbox's seccomp filter refuses AF_UNIX sockets,
// and no descriptor of the server's reaches a command (srt-init forks each with the three the
// client passed, and nothing else).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attach_client.h"  // Print
#include "base/unique_fd.h"
#include "srt/result.h"
#include "srt/sandbox.h"

namespace srt::cli {

// The listening socket of `srt --serve`, removed (if it is still the one made here) on
// destruction.
class ServeSocket {
 public:
  // The socket's directory, opened and checked (no symlink, no other user can write it, no
  // live server there, a dead one's socket removed); nothing is bound yet.
  [[nodiscard]] static Result<std::unique_ptr<ServeSocket>> Open(const std::string& path);
  // Binds and listens at the name (mode 0600 from birth, renamed into place).
  [[nodiscard]] Result<void> Listen();
  ~ServeSocket();
  ServeSocket(const ServeSocket&) = delete;
  ServeSocket& operator=(const ServeSocket&) = delete;
  int fd() const { return listen_.get(); }
  // Its real absolute path (for SandboxOptions::outside_writable).
  const std::string& real_path() const { return real_path_; }

 private:
  ServeSocket() = default;
  std::string path_;
  std::string name_;
  std::string real_path_;
  UniqueFd dir_;
  UniqueFd listen_;
  unsigned long dev_ = 0;
  unsigned long ino_ = 0;
};

// Serves `socket` with `sandbox` (started with SandboxOptions::serve) until the sandbox ends:
// Wait(signal_fd) on this thread (SIGINT, SIGTERM, SIGHUP and SIGQUIT end it), one thread
// accepting clients and one per attached command. Returns once every command is over.
[[nodiscard]] Result<ExitStatus> Serve(ServeSocket& socket, Sandbox& sandbox, int signal_fd,
                                       const Print& print);

}  // namespace srt::cli
