// SPDX-License-Identifier: Apache-2.0
// Network integration-test support: an HTTP origin in the test process, loopback port helpers,
// and helper daemons (sshd, openssl s_server) that are started, stopped and reaped by pid.
//
// Usage:
//   OriginServer origin;                           // 127.0.0.1:<ephemeral>, serves until destroyed
//   Daemon sshd({"/usr/sbin/sshd", "-D", "-e", "-f", config});
//   ASSERT_TRUE(WaitForTcp(port, std::chrono::seconds(5))) << sshd.log();
//   ...                                            // ~Daemon: SIGTERM, SIGKILL after 2 s, reaped
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.h"

namespace srt::it {

// A TCP port on 127.0.0.1 that nobody listens on right now (0 if none could be found).
[[nodiscard]] uint16_t FreeTcpPort();
// True if 127.0.0.1:`port` can be bound right now.
[[nodiscard]] bool TcpPortIsFree(uint16_t port);
// Polls until something accepts TCP connections on 127.0.0.1:`port`, or `limit` passes.
[[nodiscard]] bool WaitForTcp(uint16_t port, std::chrono::milliseconds limit);

// A minimal HTTP/1.x origin on 127.0.0.1: every request gets 200 and the body
// "origin: <METHOD> <request-target>\n" (so a test sees the form the proxy forwarded), then the
// connection is closed. One thread per connection; every wait is bounded; the destructor stops
// and joins them all.
class OriginServer {
 public:
  // Listens on 127.0.0.1:`port` (0: an ephemeral port). Throws std::runtime_error on failure.
  explicit OriginServer(uint16_t port = 0);
  ~OriginServer();
  OriginServer(const OriginServer&) = delete;
  OriginServer& operator=(const OriginServer&) = delete;

  [[nodiscard]] uint16_t port() const { return port_; }
  // The request heads served so far (without the blank line that ends them), oldest first; for
  // a target starting with "/echo", the whole request (head, blank line, Content-Length body),
  // which is also the response's body.
  [[nodiscard]] std::vector<std::string> requests() const;
  // The exact bytes sent in reply to a request for `target` ("/path").
  [[nodiscard]] static std::string Response(const std::string& method, const std::string& target);

 private:
  void AcceptLoop();
  void Serve(UniqueFd conn);

  UniqueFd listener_;
  UniqueFd stop_;  // eventfd: readable once the destructor runs
  uint16_t port_ = 0;
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::vector<std::thread> workers_;   // guarded by mu_
  std::vector<std::string> requests_;  // guarded by mu_
};

// A child process in its own process group with stdout and stderr in a memfd. The destructor
// sends SIGTERM to that group (the daemon and the children it forked, e.g. sshd's per-connection
// processes), then SIGKILL after 2 s, and reaps the daemon.
class Daemon {
 public:
  // Throws std::runtime_error if the program cannot be started.
  explicit Daemon(const std::vector<std::string>& argv, const std::string& cwd = "");
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  // False once the daemon has exited (it is reaped only by the destructor).
  [[nodiscard]] bool Running();
  // What it wrote to stdout and stderr so far.
  [[nodiscard]] std::string log() const;

 private:
  pid_t pid_ = -1;
  UniqueFd log_;
};

struct ToolResult {
  int status = -1;     // exit status, 128+N for signal N, -1 if it could not be started
  std::string output;  // stdout and stderr (or why it could not be started)
};
// Runs `argv` to completion, stdin /dev/null.
[[nodiscard]] ToolResult RunTool(const std::vector<std::string>& argv, const std::string& cwd = "");

// The first of `candidates` that is an executable file, or "".
[[nodiscard]] std::string FindTool(const std::vector<std::string>& candidates);

}  // namespace srt::it
