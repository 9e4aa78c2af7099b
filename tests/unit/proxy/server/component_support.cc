// SPDX-License-Identifier: Apache-2.0
// component_support.cc: loopback streams, in-test servers and child processes for the proxy's
// component tests.
#include "component_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace srt::proxy::testing {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

socklen_t MakeAddress(const std::string& ip, uint16_t port, sockaddr_storage& storage) {
  std::memset(&storage, 0, sizeof storage);
  if (ip.find(':') != std::string::npos) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    if (inet_pton(AF_INET6, ip.c_str(), &a->sin6_addr) != 1) return 0;
    return sizeof(sockaddr_in6);
  }
  auto* a = reinterpret_cast<sockaddr_in*>(&storage);
  a->sin_family = AF_INET;
  a->sin_port = htons(port);
  if (inet_pton(AF_INET, ip.c_str(), &a->sin_addr) != 1) return 0;
  return sizeof(sockaddr_in);
}

std::optional<Listening> Bind(const std::string& ip) {
  sockaddr_storage storage;
  const socklen_t length = MakeAddress(ip, 0, storage);
  if (length == 0) return std::nullopt;
  UniqueFd fd(socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return std::nullopt;
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0) return std::nullopt;
  socklen_t got = sizeof storage;
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&storage), &got) != 0) {
    return std::nullopt;
  }
  const uint16_t port = storage.ss_family == AF_INET6
                            ? ntohs(reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port)
                            : ntohs(reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
  return Listening{std::move(fd), port};
}

// Waits until `fd` is readable (or writable) or `stop_fd` fires or the deadline passes.
Stream::Status WaitFd(int fd, short events, int stop_fd, Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Stream::Status::kTimeout;
    pollfd fds[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    const int n = poll(fds, stop_fd >= 0 ? 2 : 1, static_cast<int>(std::min<long>(left, 1000)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Stream::Status::kError;
    }
    if (n == 0) continue;
    if (stop_fd >= 0 && (fds[1].revents & POLLIN) != 0) return Stream::Status::kStopped;
    if (fds[0].revents != 0) return Stream::Status::kOk;
  }
}

}  // namespace

std::optional<Listening> ListenTcp(const std::string& ip, int backlog) {
  std::optional<Listening> l = Bind(ip);
  if (!l || listen(l->fd.get(), backlog) != 0) return std::nullopt;
  return l;
}

std::optional<Listening> BindWithoutListening(const std::string& ip) { return Bind(ip); }

UniqueFd ConnectTcp(const std::string& ip, uint16_t port) {
  sockaddr_storage storage;
  const socklen_t length = MakeAddress(ip, port, storage);
  if (length == 0) return UniqueFd();
  UniqueFd fd(socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd || connect(fd.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0) {
    return UniqueFd();
  }
  const int one = 1;
  (void)setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

std::string_view StatusName(Stream::Status status) {
  switch (status) {
    case Stream::Status::kOk:
      return "ok";
    case Stream::Status::kEof:
      return "eof";
    case Stream::Status::kReset:
      return "reset";
    case Stream::Status::kTimeout:
      return "timeout";
    case Stream::Status::kStopped:
      return "stopped";
    case Stream::Status::kError:
      return "error";
  }
  return "?";
}

bool Stream::SendAll(std::string_view bytes) {
  size_t sent = 0;
  const Clock::time_point deadline = Deadline();
  while (sent < bytes.size()) {
    const ssize_t n =
        send(fd_.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (WaitFd(fd_.get(), POLLOUT, stop_fd_, deadline) != Status::kOk) return false;
      continue;
    }
    return false;
  }
  return true;
}

void Stream::ShutdownWrite() { (void)shutdown(fd_.get(), SHUT_WR); }

bool Stream::Fill(Clock::time_point deadline) {
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = recv(fd_.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      buffer_.append(buf, static_cast<size_t>(n));
      status_ = Status::kOk;
      return true;
    }
    if (n == 0) {
      status_ = Status::kEof;
      return false;
    }
    if (errno == ECONNRESET) {
      status_ = Status::kReset;
      return false;
    }
    if (errno != EAGAIN && errno != EINTR) {
      status_ = Status::kError;
      return false;
    }
    const Status waited = WaitFd(fd_.get(), POLLIN, stop_fd_, deadline);
    if (waited != Status::kOk) {
      status_ = waited;
      return false;
    }
  }
}

std::optional<std::string> Stream::ReadExactly(size_t n, Clock::time_point deadline) {
  while (buffer_.size() < n) {
    if (!Fill(deadline)) return std::nullopt;
  }
  std::string out = buffer_.substr(0, n);
  buffer_.erase(0, n);
  return out;
}

std::optional<std::string> Stream::ReadUntil(std::string_view delimiter,
                                             Clock::time_point deadline) {
  size_t from = 0;
  for (;;) {
    const size_t at = buffer_.find(delimiter, from);
    if (at != std::string::npos) {
      std::string out = buffer_.substr(0, at + delimiter.size());
      buffer_.erase(0, at + delimiter.size());
      return out;
    }
    from = buffer_.size() >= delimiter.size() ? buffer_.size() - delimiter.size() + 1 : 0;
    if (!Fill(deadline)) return std::nullopt;
  }
}

std::string Stream::ReadToEnd(Clock::time_point deadline) {
  while (Fill(deadline)) {
  }
  return std::exchange(buffer_, std::string());
}

bool Stream::WaitClosed(Clock::time_point deadline) {
  while (Fill(deadline)) {
  }
  return status_ == Status::kEof || status_ == Status::kReset;
}

// --- HTTP ---------------------------------------------------------------------------------

std::optional<std::string> HttpMessage::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return std::nullopt;
}

int HttpMessage::status() const {
  if (!start_line.starts_with("HTTP/") || start_line.size() < 12) return 0;
  return std::atoi(start_line.substr(9, 3).c_str());
}

std::string HttpMessage::method() const { return start_line.substr(0, start_line.find(' ')); }

std::string HttpMessage::target() const {
  const size_t a = start_line.find(' ');
  const size_t b = start_line.rfind(' ');
  if (a == std::string::npos || b <= a) return "";
  return start_line.substr(a + 1, b - a - 1);
}

std::optional<HttpMessage> ReadHttpHead(Stream& stream, Clock::time_point deadline) {
  std::optional<std::string> head = stream.ReadUntil("\r\n\r\n", deadline);
  if (!head) return std::nullopt;
  HttpMessage m;
  m.head = *head;
  m.raw = *head;
  size_t pos = head->find("\r\n");
  m.start_line = head->substr(0, pos);
  pos += 2;
  while (pos < head->size()) {
    const size_t end = head->find("\r\n", pos);
    if (end == pos) break;
    const std::string line = head->substr(pos, end - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      m.headers.emplace_back(line.substr(0, colon), Trim(line.substr(colon + 1)));
    }
    pos = end + 2;
  }
  return m;
}

bool ReadHttpBody(Stream& stream, HttpMessage& m, bool is_request, bool no_body,
                  Clock::time_point deadline) {
  if (no_body) return true;
  const std::optional<std::string> te = m.Header("Transfer-Encoding");
  if (te && te->find("chunked") != std::string::npos) {
    for (;;) {
      std::optional<std::string> line = stream.ReadUntil("\r\n", deadline);
      if (!line) return false;
      m.raw += *line;
      const size_t size = std::strtoul(line->c_str(), nullptr, 16);
      if (size == 0) {
        // Trailers, then the empty line.
        for (;;) {
          std::optional<std::string> trailer = stream.ReadUntil("\r\n", deadline);
          if (!trailer) return false;
          m.raw += *trailer;
          if (*trailer == "\r\n") return true;
        }
      }
      std::optional<std::string> data = stream.ReadExactly(size + 2, deadline);
      if (!data) return false;
      m.raw += *data;
      m.body += data->substr(0, size);
    }
  }
  if (const std::optional<std::string> cl = m.Header("Content-Length")) {
    std::optional<std::string> data =
        stream.ReadExactly(static_cast<size_t>(std::strtoull(cl->c_str(), nullptr, 10)), deadline);
    if (!data) return false;
    m.raw += *data;
    m.body = *data;
    return true;
  }
  if (is_request) return true;
  m.body = stream.ReadToEnd(deadline);
  m.raw += m.body;
  return stream.status() == Stream::Status::kEof;
}

std::optional<HttpMessage> ReadHttpResponse(Stream& stream, bool head_request,
                                            Clock::time_point deadline) {
  for (;;) {
    std::optional<HttpMessage> m = ReadHttpHead(stream, deadline);
    if (!m) return std::nullopt;
    const int status = m->status();
    if (status >= 100 && status < 200 && status != 101) continue;
    const bool no_body = head_request || status == 101 || status == 204 || status == 304;
    if (!ReadHttpBody(stream, *m, /*is_request=*/false, no_body, deadline)) return std::nullopt;
    return m;
  }
}

// --- Servers ------------------------------------------------------------------------------

bool TcpServer::Start(const std::string& ip, Serve serve) {
  std::optional<Listening> l = ListenTcp(ip);
  if (!l) return false;
  stop_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop_) return false;
  listener_ = std::move(l->fd);
  port_ = l->port;
  serve_ = std::move(serve);
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return true;
}

void TcpServer::Stop() {
  if (!acceptor_.joinable()) return;
  const uint64_t one = 1;
  (void)!write(stop_.get(), &one, sizeof one);
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers.swap(workers_);
  }
  for (std::thread& t : workers) t.join();
  listener_.reset();
}

int TcpServer::accepted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return accepted_;
}

int TcpServer::finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_;
}

bool TcpServer::WaitFinished(int n, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_until(lock, deadline, [&] { return finished_ >= n; });
}

void TcpServer::AcceptLoop() {
  for (;;) {
    if (WaitFd(listener_.get(), POLLIN, stop_.get(), Deadline(std::chrono::hours(1))) !=
        Stream::Status::kOk) {
      return;
    }
    UniqueFd fd(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd) continue;
    const int one = 1;
    (void)setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::lock_guard<std::mutex> lock(mu_);
    const int connection = ++accepted_;
    workers_.emplace_back([this, connection, raw = fd.release()] {
      {
        Stream stream(UniqueFd(raw), stop_.get());
        serve_(stream, connection);
      }  // closed here, before it counts as finished
      std::lock_guard<std::mutex> done(mu_);
      ++finished_;
      cv_.notify_all();
    });
  }
}

namespace {

void Echo(Stream& stream) {
  const Clock::time_point deadline = Deadline(std::chrono::minutes(5));
  for (;;) {
    if (!stream.buffer().empty()) {
      const std::string bytes = std::exchange(stream.buffer(), std::string());
      if (!stream.SendAll(bytes)) return;
    }
    if (!stream.Fill(deadline)) break;
  }
  if (stream.status() == Stream::Status::kEof) stream.ShutdownWrite();
}

}  // namespace

bool EchoServer::Start(const std::string& ip) {
  return server_.Start(ip, [](Stream& stream, int) { Echo(stream); });
}

bool OriginServer::Start(const std::string& ip) {
  return server_.Start(ip, [this](Stream& stream, int connection) { Serve(stream, connection); });
}

std::vector<OriginServer::Request> OriginServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void OriginServer::Serve(Stream& stream, int connection) {
  const Clock::time_point deadline = Deadline(std::chrono::minutes(5));
  for (;;) {
    std::optional<HttpMessage> request = ReadHttpHead(stream, deadline);
    if (!request) return;
    const std::optional<std::string> expect = request->Header("Expect");
    if (expect && EqualsIgnoreCase(*expect, "100-continue")) {
      if (!stream.SendAll("HTTP/1.1 100 Continue\r\n\r\n")) return;
    }
    if (!ReadHttpBody(stream, *request, /*is_request=*/true, /*no_body=*/false, deadline)) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back({connection, *request});
    }
    const std::string method = request->method();
    std::string path = request->target();
    if (const size_t q = path.find('?'); q != std::string::npos) path.resize(q);
    const std::string common = "X-Connection: " + std::to_string(connection) +
                               "\r\nX-Host: " + request->Header("Host").value_or("") + "\r\n";
    std::string response;
    if (path == "/hangup") return;
    if (path == "/stall") {  // never answers; waits for the proxy (or Stop()) to close
      (void)stream.WaitClosed(deadline);
      return;
    }
    if (method == "HEAD") {
      response = "HTTP/1.1 200 OK\r\n" + common + "Content-Length: 5\r\n\r\n";
    } else if (path == "/echo") {
      response = "HTTP/1.1 200 OK\r\n" + common +
                 "Content-Length: " + std::to_string(request->body.size()) + "\r\n\r\n" +
                 request->body;
    } else if (path == "/echo-chunked") {  // the body back in chunks of 5 bytes
      response = "HTTP/1.1 200 OK\r\n" + common + "Transfer-Encoding: chunked\r\n\r\n";
      for (size_t i = 0; i < request->body.size(); i += 5) {
        const std::string piece = request->body.substr(i, 5);
        response += std::to_string(piece.size()) + "\r\n" + piece + "\r\n";
      }
      response += "0\r\n\r\n";
    } else if (path == "/chunked") {
      response =
          "HTTP/1.1 200 OK\r\n" + common +
          "Transfer-Encoding: chunked\r\n\r\n5\r\nchunk\r\n6\r\ned-bod\r\n1\r\ny\r\n0\r\n\r\n";
    } else if (path == "/close") {
      (void)stream.SendAll("HTTP/1.1 200 OK\r\n" + common + "Connection: close\r\n\r\nuntil close");
      return;
    } else if (path.starts_with("/big/")) {
      const size_t n = std::strtoul(path.c_str() + 5, nullptr, 10);
      std::string body(n, '\0');
      for (size_t i = 0; i < n; ++i) body[i] = static_cast<char>('a' + i % 26);
      response = "HTTP/1.1 200 OK\r\n" + common + "Content-Length: " + std::to_string(n) +
                 "\r\n\r\n" + body;
    } else if (path == "/then-close") {
      // Keep-alive as far as the response says, then the server drops the connection.
      (void)stream.SendAll("HTTP/1.1 200 OK\r\n" + common + "Content-Length: 2\r\n\r\nok");
      return;
    } else if (path == "/then-reset") {
      // The same, but the server drops the connection with a reset.
      (void)stream.SendAll("HTTP/1.1 200 OK\r\n" + common + "Content-Length: 2\r\n\r\nok");
      const linger reset{1, 0};
      (void)setsockopt(stream.fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
      return;
    } else if (path == "/close-header") {
      // Says Connection: close but keeps the connection open: it must not be reused.
      response =
          "HTTP/1.1 200 OK\r\n" + common + "Connection: close\r\nContent-Length: 2\r\n\r\nok";
    } else if (path == "/extra") {
      // More bytes than the framing says: the connection's next bytes are not a response.
      response = "HTTP/1.1 200 OK\r\n" + common + "Content-Length: 2\r\n\r\nokEXTRA";
    } else if (path == "/then-stray") {
      // Answers, then speaks unasked while the connection is idle (a 408 before an idle close).
      if (!stream.SendAll("HTTP/1.1 200 OK\r\n" + common + "Content-Length: 2\r\n\r\nok")) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      response = "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n";
    } else if (path == "/204") {
      response = "HTTP/1.1 204 No Content\r\n" + common + "\r\n";
    } else if (path == "/304") {
      response = "HTTP/1.1 304 Not Modified\r\n" + common + "ETag: \"v1\"\r\n\r\n";
    } else if (path == "/upgrade") {
      if (!stream.SendAll("HTTP/1.1 101 Switching Protocols\r\n" + common +
                          "Connection: Upgrade\r\nUpgrade: echo\r\n\r\n")) {
        return;
      }
      return Echo(stream);
    } else {
      const std::string body = "hello " + path;
      response = "HTTP/1.1 200 OK\r\n" + common +
                 "Content-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
                 "\r\n\r\n" + body;
    }
    if (!stream.SendAll(response)) return;
  }
}

bool FakeParentProxy::Start(std::string connect_status) {
  connect_status_ = std::move(connect_status);
  return server_.Start("127.0.0.1",
                       [this](Stream& stream, int connection) { Serve(stream, connection); });
}

std::vector<HttpMessage> FakeParentProxy::heads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return heads_;
}

void FakeParentProxy::Serve(Stream& stream, int) {
  const Clock::time_point deadline = Deadline(std::chrono::minutes(5));
  for (;;) {
    std::optional<HttpMessage> head = ReadHttpHead(stream, deadline);
    if (!head) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      heads_.push_back(*head);
    }
    if (head->method() == "CONNECT") {
      const bool ok = connect_status_.starts_with("2");
      if (!stream.SendAll("HTTP/1.1 " + connect_status_ + "\r\n" +
                          (ok ? "" : "Content-Length: 0\r\n") + "\r\n")) {
        return;
      }
      if (ok) Echo(stream);
      return;
    }
    if (!ReadHttpBody(stream, *head, /*is_request=*/true, /*no_body=*/false, deadline)) return;
    const std::string body = "via parent " + head->target();
    if (!stream.SendAll("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\n\r\n" + body)) {
      return;
    }
  }
}

// --- Processes ----------------------------------------------------------------------------

std::string ProcessResult::Describe() const {
  std::string text = timed_out ? "timed out" : "exit " + std::to_string(exit_code);
  if (signal != 0) text += " (signal " + std::to_string(signal) + ")";
  return text + "\nstdout: " + out + "\nstderr: " + err;
}

bool Executable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::milliseconds limit) {
  ProcessResult result;
  int out[2];
  int err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return result;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return result;
  }
  UniqueFd out_read(out[0]), out_write(out[1]), err_read(err[0]), err_write(err[1]);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings = {"PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent"};
  std::vector<char*> env;
  for (std::string& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);  // the test process ignores it; the child must not inherit that
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  out_write.reset();
  err_write.reset();
  if (rc != 0) {
    result.err = std::string("posix_spawn: ") + std::strerror(rc);
    return result;
  }

  const Clock::time_point deadline = Clock::now() + limit;
  bool out_open = true;
  bool err_open = true;
  while (out_open || err_open) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_open ? out_read.get() : -1, POLLIN, 0},
                     {err_open ? err_read.get() : -1, POLLIN, 0}};
    const int n = poll(fds, 2, static_cast<int>(std::min<long>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    char buf[4096];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        (i == 0 ? out_open : err_open) = false;
      }
    }
  }
  if (result.timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace srt::proxy::testing
