// SPDX-License-Identifier: Apache-2.0
// Network integration-test support: the in-process HTTP origin and the helper daemons.
#include "network_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

extern char** environ;

namespace srt::it {
namespace {

using Clock = std::chrono::steady_clock;

sockaddr_in Loopback(uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  return addr;
}

UniqueFd BoundSocket(uint16_t port) {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s) {
    return s;
  }
  // SO_REUSEADDR: connections in TIME_WAIT from an earlier test do not make a port busy (the
  // daemons that bind it later set the option too).
  const int one = 1;
  (void)::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr = Loopback(port);
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return UniqueFd();
  }
  return s;
}

uint16_t LocalPort(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return ntohs(addr.sin_port);
}

std::string ReadMemfd(int fd) {
  std::string out;
  char buf[4096];
  off_t offset = 0;
  ssize_t n;
  while ((n = ::pread(fd, buf, sizeof(buf), offset)) > 0) {
    out.append(buf, static_cast<size_t>(n));
    offset += n;
  }
  return out;
}

// Waits for `fd` to become readable, or for `stop` (an eventfd), or `limit`; true if `fd` is.
bool ReadableBefore(int fd, int stop, std::chrono::milliseconds limit) {
  pollfd p[2] = {{fd, POLLIN, 0}, {stop, POLLIN, 0}};
  int rc;
  do {
    rc = ::poll(p, 2, static_cast<int>(limit.count()));
  } while (rc < 0 && errno == EINTR);
  return rc > 0 && p[1].revents == 0 && p[0].revents != 0;
}

struct Spawned {
  pid_t pid;
  UniqueFd log;
};

Spawned SpawnLogged(const std::vector<std::string>& argv, const std::string& cwd, bool own_group) {
  UniqueFd log(::memfd_create("srt-it-daemon-log", MFD_CLOEXEC));
  if (!log) {
    throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
  }
  std::vector<char*> cargv;
  for (const std::string& a : argv) {
    cargv.push_back(const_cast<char*>(a.c_str()));
  }
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, log.get(), 1);
  posix_spawn_file_actions_adddup2(&fa, log.get(), 2);
  if (!cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  short flags = POSIX_SPAWN_SETSIGMASK;
  if (own_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, cargv[0], &fa, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    throw std::runtime_error("spawn '" + argv[0] + "': " + std::strerror(rc));
  }
  return {pid, std::move(log)};
}

}  // namespace

uint16_t FreeTcpPort() {
  UniqueFd s = BoundSocket(0);
  return s ? LocalPort(s.get()) : 0;
}

bool TcpPortIsFree(uint16_t port) { return static_cast<bool>(BoundSocket(port)); }

bool WaitForTcp(uint16_t port, std::chrono::milliseconds limit) {
  auto deadline = Clock::now() + limit;
  do {
    UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr = Loopback(port);
    if (s && ::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (Clock::now() < deadline);
  return false;
}

OriginServer::OriginServer(uint16_t port) {
  listener_ = BoundSocket(port);
  if (!listener_ || ::listen(listener_.get(), 64) != 0) {
    throw std::runtime_error("origin: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " +
                             std::strerror(errno));
  }
  port_ = LocalPort(listener_.get());
  stop_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop_) {
    throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  }
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

OriginServer::~OriginServer() {
  const uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof(one));
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers.swap(workers_);
  }
  for (std::thread& t : workers) {
    t.join();
  }
}

std::string OriginServer::Response(const std::string& method, const std::string& target) {
  const std::string body = "origin: " + method + " " + target + "\n";
  return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

std::vector<std::string> OriginServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void OriginServer::AcceptLoop() {
  while (ReadableBefore(listener_.get(), stop_.get(), std::chrono::hours(1))) {
    UniqueFd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) {
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    workers_.emplace_back([this, c = std::move(conn)]() mutable { Serve(std::move(c)); });
  }
}

void OriginServer::Serve(UniqueFd conn) {
  std::string head;
  // A client that sends nothing within 5 s is dropped (bounded, so the destructor never hangs).
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 64 * 1024) {
    if (!ReadableBefore(conn.get(), stop_.get(), std::chrono::seconds(5))) {
      return;
    }
    char buf[4096];
    ssize_t n = ::recv(conn.get(), buf, sizeof(buf), 0);
    if (n <= 0) {
      return;
    }
    head.append(buf, static_cast<size_t>(n));
  }
  // Request line: METHOD SP request-target SP HTTP-version (RFC 9112 §3).
  const std::string request_line = head.substr(0, head.find("\r\n"));
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = request_line.rfind(' ');
  std::string method = request_line.substr(0, sp1);
  std::string target =
      sp1 != std::string::npos && sp2 > sp1 ? request_line.substr(sp1 + 1, sp2 - sp1 - 1) : "";
  std::string response;
  if (target.rfind("/echo", 0) == 0) {
    // /echo...: reads a Content-Length body too, records head and body, and answers with both.
    const size_t end = head.find("\r\n\r\n") + 4;
    std::string lower = head.substr(0, end);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t length = 0;
    if (size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
      length = std::strtoul(lower.c_str() + at + 17, nullptr, 10);
    }
    length = std::min<size_t>(length, 64 * 1024);
    while (head.size() < end + length &&
           ReadableBefore(conn.get(), stop_.get(), std::chrono::seconds(5))) {
      char buf[4096];
      ssize_t n = ::recv(conn.get(), buf, sizeof(buf), 0);
      if (n <= 0) break;
      head.append(buf, static_cast<size_t>(n));
    }
    const std::string whole = head.substr(0, end + length);
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(whole);
    }
    response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
               std::to_string(whole.size()) + "\r\nConnection: close\r\n\r\n" + whole;
  } else {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(head.substr(0, head.find("\r\n\r\n")));
    }
    response = Response(method, target);
  }
  size_t sent = 0;
  while (sent < response.size()) {
    ssize_t n = ::send(conn.get(), response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      return;
    }
    sent += static_cast<size_t>(n);
  }
  ::shutdown(conn.get(), SHUT_WR);
  // Let the client read everything before the close (a close with unread input sends RST).
  char drain[512];
  while (ReadableBefore(conn.get(), stop_.get(), std::chrono::seconds(2)) &&
         ::recv(conn.get(), drain, sizeof(drain), 0) > 0) {
  }
}

Daemon::Daemon(const std::vector<std::string>& argv, const std::string& cwd) {
  Spawned s = SpawnLogged(argv, cwd, /*own_group=*/true);
  pid_ = s.pid;
  log_ = std::move(s.log);
}

Daemon::~Daemon() {
  // The daemon stays a zombie until the end (WNOWAIT), so its pid, which is also the process
  // group id, cannot be reused while the group is signalled.
  ::kill(-pid_, SIGTERM);
  auto deadline = Clock::now() + std::chrono::seconds(2);
  while (Running() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(-pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

bool Daemon::Running() {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == 0;
}

std::string Daemon::log() const { return ReadMemfd(log_.get()); }

ToolResult RunTool(const std::vector<std::string>& argv, const std::string& cwd) {
  ToolResult result;
  std::optional<Spawned> s;
  try {
    s.emplace(SpawnLogged(argv, cwd, /*own_group=*/false));
  } catch (const std::runtime_error& e) {
    result.output = e.what();
    return result;
  }
  int status = 0;
  while (::waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.output = ReadMemfd(s->log.get());
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string FindTool(const std::vector<std::string>& candidates) {
  for (const std::string& c : candidates) {
    struct stat st {};
    if (::stat(c.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(c.c_str(), X_OK) == 0) {
      return c;
    }
  }
  return "";
}

}  // namespace srt::it
