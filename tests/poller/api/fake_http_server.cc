// SPDX-License-Identifier: Apache-2.0
// fake_http_server.cc: the loopback scripted HTTP server used by client_test.cc.
#include "fake_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace srt::poller::testing {
namespace {

std::string Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 412:
      return "Precondition Failed";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

bool WriteAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

FakeHttpServer::FakeHttpServer() {
  listen_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listen_) throw std::runtime_error("socket");
  int one = 1;
  ::setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_.get(), 16) != 0) {
    throw std::runtime_error("bind/listen");
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Loop(); });
}

FakeHttpServer::~FakeHttpServer() {
  stop_ = true;
  thread_.join();
}

void FakeHttpServer::Enqueue(ScriptedResponse r) {
  std::lock_guard<std::mutex> lock(mu_);
  script_.push_back(std::move(r));
}

void FakeHttpServer::EnqueueJson(int status, std::string body,
                                 std::vector<std::pair<std::string, std::string>> headers) {
  ScriptedResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  if (!r.body.empty()) r.headers.emplace_back("Content-Type", "application/json");
  Enqueue(std::move(r));
}

std::vector<RecordedRequest> FakeHttpServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

size_t FakeHttpServer::request_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_.size();
}

void FakeHttpServer::Release() { release_ = true; }

void FakeHttpServer::Loop() {
  while (!stop_) {
    pollfd p{listen_.get(), POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    UniqueFd conn(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (conn) Serve(std::move(conn));
  }
}

void FakeHttpServer::Serve(UniqueFd conn) {
  std::string in;
  char buf[4096];
  size_t head_end = std::string::npos;
  auto read_more = [&]() {
    pollfd p{conn.get(), POLLIN, 0};
    if (::poll(&p, 1, 2000) <= 0) return false;
    ssize_t n = ::recv(conn.get(), buf, sizeof(buf), 0);
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
    return true;
  };
  while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
    if (!read_more()) return;
  }
  RecordedRequest req;
  req.at = std::chrono::steady_clock::now();
  std::string_view head(in.data(), head_end);
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = line.rfind(' ');
  req.method = std::string(line.substr(0, sp1));
  req.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  size_t q = req.target.find('?');
  req.path = req.target.substr(0, q);
  req.query = q == std::string::npos ? "" : req.target.substr(q + 1);
  size_t content_length = 0;
  while (eol != std::string_view::npos && eol < head.size()) {
    size_t next = head.find("\r\n", eol + 2);
    std::string_view h =
        head.substr(eol + 2, next == std::string_view::npos ? head.npos : next - eol - 2);
    size_t colon = h.find(':');
    if (colon != std::string_view::npos) {
      req.headers.Add(h.substr(0, colon), h.substr(colon + 1));
    }
    eol = next;
  }
  if (auto cl = req.headers.Get("Content-Length")) content_length = std::stoul(std::string(*cl));
  while (in.size() < head_end + 4 + content_length) {
    if (!read_more()) break;
  }
  req.body = in.substr(head_end + 4, content_length);

  ScriptedResponse resp;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(req);
    if (script_.empty()) {
      resp.status = 599;
      resp.body = "no scripted response";
    } else {
      resp = std::move(script_.front());
      script_.pop_front();
    }
  }
  std::string out = "HTTP/1.1 " + std::to_string(resp.status) + " " + Reason(resp.status) + "\r\n";
  for (const auto& [k, v] : resp.headers) out += k + ": " + v + "\r\n";
  out += "Connection: close\r\n";
  if (resp.chunks.empty() && resp.status != 204) {
    out += "Content-Length: " + std::to_string(resp.body.size()) + "\r\n";
  }
  out += "\r\n";
  if (resp.chunks.empty()) {
    out += resp.body;
    WriteAll(conn.get(), out);
  } else {
    if (!WriteAll(conn.get(), out)) return;
    for (const std::string& c : resp.chunks) {
      if (resp.chunk_delay.count() > 0) std::this_thread::sleep_for(resp.chunk_delay);
      if (!WriteAll(conn.get(), c)) return;
    }
  }
  if (resp.hold_open) {
    while (!stop_ && !release_) {
      // Notice the client hanging up (cancel) so the next request is served promptly.
      pollfd p{conn.get(), POLLIN, 0};
      if (::poll(&p, 1, 10) > 0) {
        ssize_t n = ::recv(conn.get(), buf, sizeof(buf), 0);
        if (n <= 0) break;
      }
    }
  }
  ::shutdown(conn.get(), SHUT_WR);
}

}  // namespace srt::poller::testing
