// SPDX-License-Identifier: Apache-2.0
// support/dnsmasq.cc: spawning, probing and reaping the test dnsmasq.
#include "support/dnsmasq.h"

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "support/child_process.h"

namespace srt::testing {
namespace {

using Clock = std::chrono::steady_clock;

// A port free for both UDP and TCP on 127.0.0.1 right now. dnsmasq binds it a moment later; if
// somebody else wins the race, Start() notices ("Address already in use") and tries again.
Result<uint16_t> PickPort() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    UniqueFd udp(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    UniqueFd tcp(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!udp || !tcp) {
      return SysError("socket");
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(udp.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      return SysError("bind(UDP 127.0.0.1:0)");
    }
    socklen_t len = sizeof(addr);
    if (::getsockname(udp.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return SysError("getsockname");
    }
    if (::bind(tcp.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      return ntohs(addr.sin_port);
    }
  }
  return MakeError(Errc::kSystem, "no port free for both UDP and TCP on 127.0.0.1");
}

// One A query for "probe.srt.invalid"; any reply with our id means dnsmasq is serving.
bool Answers(uint16_t port, std::chrono::milliseconds wait) {
  UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!s) {
    return false;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  static constexpr unsigned char kQuery[] = {
      0x5e, 0x11, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // header, RD
      5,    'p',  'r',  'o',  'b',  'e',  3,    's',  'r',  't',  7,    'i',
      'n',  'v',  'a',  'l',  'i',  'd',  0,    0x00, 0x01, 0x00, 0x01,  // A IN
  };
  if (::sendto(s.get(), kQuery, sizeof(kQuery), 0, reinterpret_cast<sockaddr*>(&addr),
               sizeof(addr)) != static_cast<ssize_t>(sizeof(kQuery))) {
    return false;
  }
  pollfd pfd{s.get(), POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(wait.count())) != 1) {
    return false;
  }
  unsigned char reply[512];
  ssize_t n = ::recv(s.get(), reply, sizeof(reply), 0);  // ECONNREFUSED until it listens
  return n >= 12 && reply[0] == kQuery[0] && reply[1] == kQuery[1];
}

struct Spawned {
  pid_t pid;
  UniqueFd log;
};

// dnsmasq with its stdout and stderr in a memfd we can read at any time.
Result<Spawned> Spawn(const std::string& binary, const std::vector<std::string>& args) {
  UniqueFd log(::memfd_create("srt-test-dnsmasq-log", MFD_CLOEXEC));
  if (!log) {
    return SysError("memfd_create");
  }
  std::vector<std::string> argv = {binary};
  argv.insert(argv.end(), args.begin(), args.end());
  SRT_ASSIGN_OR_RETURN(pid_t pid,
                       SpawnChild(argv, {{log.get(), STDOUT_FILENO}, {log.get(), STDERR_FILENO}}));
  return Spawned{pid, std::move(log)};
}

}  // namespace

bool MustWork() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): nothing in the tests calls setenv concurrently.
  const char* v = std::getenv("SRT_MUST_WORK");
  return v != nullptr && std::string(v) == "1";
}

std::optional<std::string> Dnsmasq::Find(const std::string& binary) {
  if (!binary.empty()) {
    return IsExecutable(binary) ? std::optional<std::string>(binary) : std::nullopt;
  }
  std::vector<std::string> dirs;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): nothing in the tests calls setenv concurrently.
  if (const char* path = std::getenv("PATH")) {
    std::string p(path);
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      if (end == std::string::npos) {
        end = p.size();
      }
      if (end > start) {
        dirs.push_back(p.substr(start, end - start));
      }
      start = end + 1;
    }
  }
  dirs.emplace_back("/usr/sbin");
  dirs.emplace_back("/sbin");
  for (const std::string& dir : dirs) {
    std::string candidate = dir + "/dnsmasq";
    if (IsExecutable(candidate)) {
      return candidate;
    }
  }
  return std::nullopt;
}

Result<std::unique_ptr<Dnsmasq>> Dnsmasq::Start(const Options& options) {
  std::optional<std::string> binary = Find(options.binary);
  if (!binary) {
    return MakeError(Errc::kNotFound,
                     "dnsmasq is not installed (Debian: apt-get install dnsmasq-base)");
  }
  // Stay who we are: without --user/--group dnsmasq started as root switches to nobody/dip, and
  // the kernel clears PR_SET_PDEATHSIG on that credential change.
  std::vector<std::string> identity;
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* pw_found = nullptr;
  if (::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &pw_found) == 0 &&
      pw_found != nullptr) {
    identity.push_back(std::string("--user=") + pw.pw_name);
  }
  group gr{};
  group* gr_found = nullptr;
  if (::getgrgid_r(::getegid(), &gr, buf.data(), buf.size(), &gr_found) == 0 &&
      gr_found != nullptr) {
    identity.push_back(std::string("--group=") + gr.gr_name);
  }

  std::string last_failure;
  for (int attempt = 0; attempt < 5; ++attempt) {
    SRT_ASSIGN_OR_RETURN(uint16_t port, PickPort());
    std::vector<std::string> args = {
        "--keep-in-foreground",
        "--conf-file=/dev/null",  // not /etc/dnsmasq.conf
        "--no-resolv",
        "--no-hosts",
        "--no-poll",
        "--pid-file",  // no pid file
        "--log-facility=-",
        "--bind-interfaces",
        "--listen-address=127.0.0.1",
        "--port=" + std::to_string(port),
    };
    args.insert(args.end(), identity.begin(), identity.end());
    args.insert(args.end(), options.args.begin(), options.args.end());
    SRT_ASSIGN_OR_RETURN(Spawned child, Spawn(*binary, args));
    std::unique_ptr<Dnsmasq> d(new Dnsmasq(child.pid, port, std::move(child.log)));

    auto deadline = Clock::now() + options.startup_timeout;
    bool exited = false;
    while (Clock::now() < deadline) {
      if (Answers(port, std::chrono::milliseconds(50))) {
        return d;
      }
      int status = 0;
      if (::waitpid(d->pid_, &status, WNOHANG) == d->pid_) {
        exited = true;
        d->pid_ = -1;  // reaped; nothing for the destructor to stop
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::string log = d->log();
    if (exited && log.find("Address already in use") != std::string::npos) {
      last_failure = log;
      continue;  // lost the port race
    }
    return MakeError(Errc::kSystem,
                     std::string(exited ? "dnsmasq exited during startup"
                                        : "dnsmasq did not answer within the startup timeout") +
                         "; its log:\n" + log);
  }
  return MakeError(Errc::kSystem,
                   "dnsmasq: no usable port after 5 attempts; last log:\n" + last_failure);
}

Dnsmasq::~Dnsmasq() { Stop(); }

void Dnsmasq::Stop() {
  if (pid_ > 0) {
    TerminateChild(pid_, std::chrono::milliseconds(2000));
    pid_ = -1;
  }
}

std::string Dnsmasq::address() const { return "127.0.0.1:" + std::to_string(port_); }

Endpoint Dnsmasq::endpoint() const { return Endpoint{*ParseIpv4("127.0.0.1"), port_}; }

std::string Dnsmasq::log() const { return ReadWholeFd(log_.get()); }

}  // namespace srt::testing
