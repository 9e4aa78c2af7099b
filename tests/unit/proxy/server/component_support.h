// SPDX-License-Identifier: Apache-2.0
// component_support.h: what the proxy's component tests run against: blocking loopback streams
// with deadlines, threaded in-test servers (an HTTP/1.1 origin, an echo server, a fake parent
// proxy), a minimal HTTP/1.1 reader for the test's side, and posix_spawn of real clients (curl,
// python3) with their output captured.
//
// Everything here is blocking and bounded: every read takes a deadline, every server stops (its
// threads joined, its sockets closed) in Stop() or its destructor, and a child process that
// outlives its limit is killed and reaped.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/unique_fd.h"

namespace srt::proxy::testing {

using Clock = std::chrono::steady_clock;

// The default bound on any single wait in these tests: generous, so a loaded machine (or ASan)
// does not fail them, and finite, so a bug fails a test instead of hanging the suite.
inline constexpr std::chrono::seconds kWait{15};

[[nodiscard]] inline Clock::time_point Deadline(std::chrono::milliseconds after = kWait) {
  return Clock::now() + after;
}

// A listening TCP socket on `ip` ("127.0.0.1", "::1") and an ephemeral port (CLOEXEC, blocking).
struct Listening {
  UniqueFd fd;
  uint16_t port = 0;
};
[[nodiscard]] std::optional<Listening> ListenTcp(const std::string& ip, int backlog = 128);
// A socket bound to `ip`:<ephemeral> that does not listen: connecting to it is refused.
[[nodiscard]] std::optional<Listening> BindWithoutListening(const std::string& ip);
// A blocking connection to ip:port; an empty fd on failure.
[[nodiscard]] UniqueFd ConnectTcp(const std::string& ip, uint16_t port);

// One end of a TCP connection, read with deadlines into an internal buffer. `stop_fd` (an
// eventfd, optional) ends every wait as soon as it becomes readable: the in-test servers use it
// to unblock their threads.
class Stream {
 public:
  enum class Status { kOk, kEof, kReset, kTimeout, kStopped, kError };

  explicit Stream(UniqueFd fd, int stop_fd = -1) : fd_(std::move(fd)), stop_fd_(stop_fd) {}
  Stream(Stream&&) = default;
  Stream& operator=(Stream&&) = default;

  [[nodiscard]] int fd() const { return fd_.get(); }
  [[nodiscard]] bool valid() const { return static_cast<bool>(fd_); }
  // How the last read ended (kOk while data keeps coming).
  [[nodiscard]] Status status() const { return status_; }
  // Bytes read and not consumed yet.
  [[nodiscard]] std::string& buffer() { return buffer_; }

  bool SendAll(std::string_view bytes);
  // Shuts the write side (the peer reads EOF).
  void ShutdownWrite();
  // Reads once more into buffer(); false (status() says why) on EOF, error, stop or deadline.
  bool Fill(Clock::time_point deadline);
  // Consumes and returns exactly `n` bytes, or nullopt.
  std::optional<std::string> ReadExactly(size_t n, Clock::time_point deadline = Deadline());
  // Consumes and returns everything up to and including `delimiter`, or nullopt.
  std::optional<std::string> ReadUntil(std::string_view delimiter,
                                       Clock::time_point deadline = Deadline());
  // Reads until EOF, reset or the deadline and returns everything (buffer() included).
  std::string ReadToEnd(Clock::time_point deadline = Deadline());
  // True if the peer ended the connection (EOF or reset) before the deadline; bytes that arrive
  // before that are appended to buffer().
  bool WaitClosed(Clock::time_point deadline = Deadline());

 private:
  UniqueFd fd_;
  int stop_fd_ = -1;
  std::string buffer_;
  Status status_ = Status::kOk;
};

[[nodiscard]] std::string_view StatusName(Stream::Status status);

// --- A minimal HTTP/1.1 reader for the test's own side -------------------------------------

struct HttpMessage {
  std::string start_line;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string head;  // raw, the empty line included
  std::string body;  // de-chunked
  std::string raw;   // every byte of the message as received

  // The first header named `name` (case-insensitive).
  [[nodiscard]] std::optional<std::string> Header(std::string_view name) const;
  [[nodiscard]] bool HasHeader(std::string_view name) const { return Header(name).has_value(); }
  // Response: the status code; 0 if the start line is not a status line.
  [[nodiscard]] int status() const;
  // Request: method and target.
  [[nodiscard]] std::string method() const;
  [[nodiscard]] std::string target() const;
};

// Reads one head (start line to the empty line); nullopt at EOF/timeout (stream.status()).
std::optional<HttpMessage> ReadHttpHead(Stream& stream, Clock::time_point deadline = Deadline());
// Reads a body framed by the head: chunked, Content-Length, none (`no_body`, or a request
// without framing) or, for responses, until close. False if it could not be read whole.
bool ReadHttpBody(Stream& stream, HttpMessage& message, bool is_request, bool no_body,
                  Clock::time_point deadline = Deadline());
// One response: interim (1xx other than 101) responses are skipped unless `keep_interim`.
// `head_request`: the request was HEAD, so no body follows.
std::optional<HttpMessage> ReadHttpResponse(Stream& stream, bool head_request = false,
                                            Clock::time_point deadline = Deadline());

// --- In-test servers ------------------------------------------------------------------------

// A threaded TCP server: one thread accepts, one thread per connection runs `serve`. Stop()
// (also from the destructor) wakes every wait through an eventfd and joins all threads.
class TcpServer {
 public:
  using Serve = std::function<void(Stream& stream, int connection)>;

  TcpServer() = default;
  ~TcpServer() { Stop(); }
  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;

  // Listens on `ip`:<ephemeral>; false if that fails (e.g. no IPv6).
  bool Start(const std::string& ip, Serve serve);
  void Stop();

  [[nodiscard]] uint16_t port() const { return port_; }
  // Connections accepted so far / whose `serve` has returned (and whose socket is closed).
  [[nodiscard]] int accepted() const;
  [[nodiscard]] int finished() const;
  // Waits until finished() >= n.
  bool WaitFinished(int n, Clock::time_point deadline = Deadline());

 private:
  void AcceptLoop();

  Serve serve_;
  UniqueFd listener_;
  UniqueFd stop_;
  uint16_t port_ = 0;
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> workers_;
  int accepted_ = 0;
  int finished_ = 0;
};

// Echoes every byte back until the client shuts its side, then shuts its own.
class EchoServer {
 public:
  bool Start(const std::string& ip = "127.0.0.1");
  void Stop() { server_.Stop(); }
  [[nodiscard]] uint16_t port() const { return server_.port(); }
  [[nodiscard]] int accepted() const { return server_.accepted(); }
  bool WaitFinished(int n, Clock::time_point deadline = Deadline()) {
    return server_.WaitFinished(n, deadline);
  }

 private:
  TcpServer server_;
};

// An HTTP/1.1 origin with keep-alive. Routes (by the request-target's path):
//   HEAD any          200, Content-Length: 5, no body
//   /echo             200, the request body back (Content-Length)
//   /chunked          200, chunked body "chunked-body"
//   /close            200 without framing, body "until close", then closes
//   /204, /304        no body
//   /upgrade          101 Switching Protocols, then echoes bytes until EOF
//   /hangup           closes without answering
//   /stall            never answers (waits until the connection or the server closes)
//   /big/<n>          200, n bytes "abc...z" repeated (Content-Length)
//   /then-close       200, Content-Length: 2, "ok", then closes (no "Connection: close")
//   /then-reset       the same, then closes with a reset (SO_LINGER 0)
//   anything else     200, body "hello <path>" (Content-Length)
// Requests with "Expect: 100-continue" get "100 Continue" before the body is read. Every
// response carries "X-Connection: <n>" (the connection's number, from 1) and "X-Host: <Host>".
class OriginServer {
 public:
  struct Request {
    int connection = 0;
    HttpMessage message;
  };

  bool Start(const std::string& ip = "127.0.0.1");
  void Stop() { server_.Stop(); }
  [[nodiscard]] uint16_t port() const { return server_.port(); }
  [[nodiscard]] int accepted() const { return server_.accepted(); }
  bool WaitFinished(int n, Clock::time_point deadline = Deadline()) {
    return server_.WaitFinished(n, deadline);
  }
  [[nodiscard]] std::vector<Request> requests() const;

 private:
  void Serve(Stream& stream, int connection);

  TcpServer server_;
  mutable std::mutex mu_;
  std::vector<Request> requests_;
};

// A fake parent ("corporate") proxy. CONNECT: answers `connect_status` ("200 Connection
// established" by default) and then echoes, as if it had reached the destination. An
// absolute-form request: 200 with body "via parent <target>" (keep-alive). Records every head.
class FakeParentProxy {
 public:
  bool Start(std::string connect_status = "200 Connection established");
  void Stop() { server_.Stop(); }
  [[nodiscard]] uint16_t port() const { return server_.port(); }
  [[nodiscard]] int accepted() const { return server_.accepted(); }
  [[nodiscard]] std::vector<HttpMessage> heads() const;

 private:
  void Serve(Stream& stream, int connection);

  TcpServer server_;
  std::string connect_status_;
  mutable std::mutex mu_;
  std::vector<HttpMessage> heads_;
};

// --- Child processes ----------------------------------------------------------------------

struct ProcessResult {
  int exit_code = -1;  // -1 if it did not exit normally
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
  [[nodiscard]] std::string Describe() const;
};

// posix_spawn()s argv[0] (an absolute path) with a minimal environment (PATH=/usr/bin:/bin,
// LC_ALL=C, HOME=/nonexistent: no proxy variables, no rc files), stdin from /dev/null, default
// signal dispositions, and captures stdout and stderr. Killed (SIGKILL) after `limit`.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         std::chrono::milliseconds limit = std::chrono::seconds(60));

// True if `path` is an executable file.
[[nodiscard]] bool Executable(const std::string& path);

}  // namespace srt::proxy::testing
