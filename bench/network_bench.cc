// SPDX-License-Identifier: Apache-2.0
// srt-network-bench: what srt's allowlist proxy costs, measured side by side with a direct
// loopback connection (and upstream srt's proxy when it is installed): CONNECT tunnel throughput,
// connection-setup latency, the proxy's memory with many open tunnels, and (by running
// srt-startup-bench --network) `srt -c true` with the network on.
//
// The origin is a thread of this program on the host's 127.0.0.1. The client is this same
// program (`--client ...`), run directly on the host for the "direct" contender and inside the
// sandbox for srt and upstream, where it reaches the origin through the proxy named by
// $HTTP_PROXY with CONNECT. The client times the transfers itself, so sandbox start-up is never
// in a throughput or latency figure.
//
// The machine is shared and noisy: contenders are interleaved round by round (the order rotates)
// and only medians and ratios are reported. Targets are printed as PASS/MISS for information;
// the program exits non-zero only when it cannot measure.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/unique_fd.h"
#include "bench_util.h"

extern char** environ;

namespace {

using srt::UniqueFd;
using srt::bench::ClockSeconds;
using srt::bench::DescribeStatus;
using srt::bench::Die;
using srt::bench::Errno;
using srt::bench::FirstLines;
using srt::bench::IsExecutableFile;
using srt::bench::LoadAverage;
using srt::bench::Median;
using srt::bench::ProcSample;
using srt::bench::SampleTree;
using srt::bench::Stats;
using srt::bench::Summarize;
using srt::bench::Verdict;
using srt::bench::WriteAll;

constexpr double kTargetThroughputRatio = 0.8;
constexpr double kTargetRssMib = 32;
constexpr rlim_t kProxyNofile = 65536;  // what srt raises its soft RLIMIT_NOFILE to
constexpr std::string_view kClientFlag = "--client";

// Bytes the origin sends per tunnel in the RSS test, and the padding header the client sends:
// "each tunnel having moved a few KiB".
constexpr uint64_t kHoldDownBytes = 4096;
constexpr size_t kHoldUpPad = 2048;
// Body of a latency probe's response.
constexpr uint64_t kProbeBytes = 64;
// What the bench reads of each process in a contender's tree (Pss only where it says so).
constexpr unsigned kTreeFields = srt::bench::kSampleStatus | srt::bench::kSampleCpu;

double Now() { return ClockSeconds(CLOCK_MONOTONIC); }

// =============================================================================================
// The client (`srt-network-bench --client MODE ...`): runs on the host or inside a sandbox,
// prints its measurements on stdout. Blocking sockets, one thing at a time.

namespace client {

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "srt-network-bench client: %s\n", message.c_str());
  std::exit(3);
}

struct Via {
  sockaddr_in addr{};
  std::string authorization;  // "Basic ...", empty for a direct connection
  bool proxy = false;
};

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << 16 |
                 static_cast<uint32_t>(static_cast<uint8_t>(in[i + 1])) << 8 |
                 static_cast<uint8_t>(in[i + 2]);
    for (int s : {18, 12, 6, 0}) out += kAlphabet[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << 16 |
                 static_cast<uint32_t>(static_cast<uint8_t>(in[i + 1])) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// RFC 3986 §2.1: userinfo in a proxy URL is percent-encoded (upstream's user name ends in %3D).
std::string PercentDecode(std::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size() && std::isxdigit(static_cast<uint8_t>(in[i + 1])) &&
        std::isxdigit(static_cast<uint8_t>(in[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(in.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

sockaddr_in Resolve(const std::string& host, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (host == "localhost" || inet_pton(AF_INET, host.c_str(), &a.sin_addr) == 1) {
    if (host == "localhost") a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
    Fail("cannot resolve '" + host + "'");
  }
  a.sin_addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  freeaddrinfo(res);
  return a;
}

// $HTTP_PROXY, e.g. http://srt.<id>:<token>@localhost:3128 (resolved once, before any timing).
Via ProxyFromEnvironment() {
  const char* v = getenv("HTTP_PROXY");
  if (v == nullptr || *v == '\0') v = getenv("http_proxy");
  if (v == nullptr || *v == '\0') Fail("no HTTP_PROXY in the environment");
  std::string_view url = v;
  if (!url.starts_with("http://")) Fail("HTTP_PROXY '" + std::string(url) + "' is not http://");
  url.remove_prefix(7);
  url = url.substr(0, url.find('/'));
  Via via;
  via.proxy = true;
  if (size_t at = url.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = url.substr(0, at);
    size_t colon = userinfo.find(':');
    std::string user = PercentDecode(userinfo.substr(0, colon));
    std::string pass =
        colon == std::string_view::npos ? "" : PercentDecode(userinfo.substr(colon + 1));
    via.authorization = "Basic " + Base64(user + ":" + pass);
    url.remove_prefix(at + 1);
  }
  size_t colon = url.rfind(':');
  if (colon == std::string_view::npos) Fail("HTTP_PROXY has no port");
  via.addr = Resolve(std::string(url.substr(0, colon)),
                     static_cast<uint16_t>(std::atoi(std::string(url.substr(colon + 1)).c_str())));
  return via;
}

UniqueFd Connect(const sockaddr_in& addr) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) Fail(Errno("socket"));
  int one = 1;
  (void)::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  while (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINTR) Fail(Errno("connect"));
  }
  return fd;
}

// Upstream starts its in-sandbox listeners (socat) in the background, right before the command:
// wait until the proxy accepts connections, so no timed connection meets that race.
void WaitForListener(const sockaddr_in& addr) {
  const double give_up = Now() + 10;
  while (true) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) Fail(Errno("socket"));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return;
    if ((errno != ECONNREFUSED && errno != EINTR) || Now() > give_up) Fail(Errno("connect"));
    ::usleep(10 * 1000);
  }
}

// Reads until the end of an HTTP head; bytes past it stay in `rest`. `first_byte` gets the time
// the first byte arrived.
std::string ReadHead(int fd, std::string& rest, double* first_byte = nullptr) {
  std::string buf = std::move(rest);
  rest.clear();
  char chunk[4096];
  size_t end;
  while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (buf.size() > 64 * 1024) Fail("response head too long");
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Fail(Errno("recv"));
    if (n == 0) Fail("connection closed before the end of the response head");
    if (first_byte != nullptr && buf.empty()) *first_byte = Now();
    buf.append(chunk, static_cast<size_t>(n));
  }
  rest = buf.substr(end + 4);
  buf.resize(end + 4);
  return buf;
}

void ExpectStatus200(const std::string& head, const char* what) {
  // "HTTP/1.x 200 ..."
  if (head.size() < 12 || !head.starts_with("HTTP/1.") || head.compare(8, 4, " 200") != 0) {
    Fail(std::string(what) + " answered: " + head.substr(0, head.find('\r')));
  }
}

uint64_t ContentLength(const std::string& head) {
  size_t at = head.find("\r\nContent-Length: ");
  if (at == std::string::npos) Fail("response without Content-Length");
  return std::strtoull(head.c_str() + at + 18, nullptr, 10);
}

// A connection to 127.0.0.1:port, through the proxy's CONNECT when `via.proxy`.
UniqueFd OpenStream(const Via& via, uint16_t port) {
  if (!via.proxy) {
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_port = htons(port);
    target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return Connect(target);
  }
  UniqueFd fd = Connect(via.addr);
  const std::string authority = "127.0.0.1:" + std::to_string(port);
  std::string req = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
  if (!via.authorization.empty()) req += "Proxy-Authorization: " + via.authorization + "\r\n";
  req += "\r\n";
  if (!WriteAll(fd.get(), req)) Fail(Errno("send CONNECT"));
  std::string rest;
  std::string head = ReadHead(fd.get(), rest);
  ExpectStatus200(head, "the proxy");
  if (!rest.empty()) Fail("the proxy sent bytes after its 200");
  return fd;
}

std::string Request(const std::string& path, uint16_t port, size_t pad = 0) {
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n";
  if (pad > 0) req += "X-Pad: " + std::string(pad, 'p') + "\r\n";
  return req + "\r\n";
}

// Reads the body after `head` until Content-Length bytes came; returns their count.
uint64_t ReadBody(int fd, const std::string& head, const std::string& rest) {
  static char buf[256 * 1024];
  const uint64_t want = ContentLength(head);
  uint64_t got = rest.size();
  while (got < want) {
    size_t ask = static_cast<size_t>(std::min<uint64_t>(sizeof buf, want - got));
    ssize_t n = ::recv(fd, buf, ask, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Fail(Errno("recv body"));
    if (n == 0) {
      Fail("connection closed after " + std::to_string(got) + " of " + std::to_string(want) +
           " body bytes");
    }
    got += static_cast<uint64_t>(n);
  }
  return got;
}

// One line from stdin (the bench's go-ahead); false at EOF.
bool ReadStdinLine() {
  char c;
  while (true) {
    ssize_t n = ::read(0, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return true;
  }
}

void WaitForStdinEof() {
  while (ReadStdinLine()) {
  }
}

void Say(const std::string& line) {
  if (!WriteAll(1, line + "\n")) std::exit(3);
}

// throughput: one download of `bytes`, timed from sending the request (the tunnel is up) to the
// last body byte. With `sync` it says "ready" and waits for a line before the request, and after
// "result" waits for stdin's EOF before closing, so the bench can sample CPU around the transfer.
int Throughput(const Via& via, uint16_t port, uint64_t bytes, bool sync) {
  UniqueFd fd = OpenStream(via, port);
  if (sync) {
    Say("ready");
    if (!ReadStdinLine()) return 0;
  }
  const double cpu0 = srt::bench::SelfCpuSeconds();
  const double t0 = Now();
  if (!WriteAll(fd.get(), Request("/bytes/" + std::to_string(bytes), port))) {
    Fail(Errno("send request"));
  }
  std::string rest;
  std::string head = ReadHead(fd.get(), rest);
  ExpectStatus200(head, "the origin");
  uint64_t got = ReadBody(fd.get(), head, rest);
  const double t1 = Now();
  char line[160];
  std::snprintf(line, sizeof line, "result bytes=%" PRIu64 " seconds=%.6f cpu=%.6f", got, t1 - t0,
                srt::bench::SelfCpuSeconds() - cpu0);
  Say(line);
  if (sync) WaitForStdinEof();
  return 0;
}

// latency: `count` sequential connections, each timed from connect() to the first byte of the
// origin's response (through the proxy: connect, CONNECT, its 200, the request, the response).
int Latency(const Via& via, uint16_t port, int count) {
  std::string out = "result us=";
  const std::string req = Request("/bytes/" + std::to_string(kProbeBytes), port);
  for (int i = 0; i < count; ++i) {
    const double t0 = Now();
    UniqueFd fd = OpenStream(via, port);
    if (!WriteAll(fd.get(), req)) Fail(Errno("send request"));
    std::string rest;
    double first = 0;
    std::string head = ReadHead(fd.get(), rest, &first);
    ExpectStatus200(head, "the origin");
    ReadBody(fd.get(), head, rest);
    char sample[32];
    std::snprintf(sample, sizeof sample, "%s%.1f", i ? "," : "", (first - t0) * 1e6);
    out += sample;
  }
  Say(out);
  return 0;
}

// hold: says "idle", waits for a line, opens `count` tunnels that each move kHoldUpPad bytes up
// and kHoldDownBytes down, says "open", and keeps them until stdin's EOF.
int Hold(const Via& via, uint16_t port, int count) {
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &nofile);
  }
  Say("idle");
  if (!ReadStdinLine()) return 0;
  std::vector<UniqueFd> open;
  open.reserve(static_cast<size_t>(count));
  const std::string req = Request("/hold/" + std::to_string(kHoldDownBytes), port, kHoldUpPad);
  const double t0 = Now();
  for (int i = 0; i < count; ++i) {
    UniqueFd fd = OpenStream(via, port);
    if (!WriteAll(fd.get(), req)) Fail(Errno("send request"));
    std::string rest;
    std::string head = ReadHead(fd.get(), rest);
    ExpectStatus200(head, "the origin");
    ReadBody(fd.get(), head, rest);
    open.push_back(std::move(fd));
  }
  char line[96];
  std::snprintf(line, sizeof line, "open tunnels=%d seconds=%.3f", count, Now() - t0);
  Say(line);
  WaitForStdinEof();
  return 0;
}

// argv after --client: MODE direct|proxy PORT N [sync]
int Main(int argc, char** argv) {
  if (argc < 4) Fail("usage: --client throughput|latency|hold direct|proxy PORT N [sync]");
  std::string_view mode = argv[0];
  std::string_view route = argv[1];
  const auto port = static_cast<uint16_t>(std::strtoul(argv[2], nullptr, 10));
  const uint64_t n = std::strtoull(argv[3], nullptr, 10);
  const bool sync = argc > 4 && std::string_view(argv[4]) == "sync";
  Via via;
  if (route == "proxy") {
    via = ProxyFromEnvironment();
    WaitForListener(via.addr);
  } else if (route != "direct") {
    Fail("route must be direct or proxy, not '" + std::string(route) + "'");
  }
  if (mode == "throughput") return Throughput(via, port, n, sync);
  if (mode == "latency") return Latency(via, port, static_cast<int>(n));
  if (mode == "hold") return Hold(via, port, static_cast<int>(n));
  Fail("unknown mode '" + std::string(mode) + "'");
}

}  // namespace client

// =============================================================================================
// The bench

std::vector<pid_t> g_children;  // spawned and not yet reaped: stopped at exit

void StopChildren() {
  for (pid_t pid : g_children) {
    ::kill(pid, SIGTERM);
  }
  for (pid_t pid : g_children) {
    int status = 0;
    bool reaped = false;
    for (int i = 0; i < 300 && !reaped; ++i) {  // up to 3 s for srt to tear its sandbox down
      reaped = ::waitpid(pid, &status, WNOHANG) == pid;
      if (!reaped) ::usleep(10 * 1000);
    }
    if (!reaped) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
  g_children.clear();
}

void Cleanup() {
  StopChildren();
  srt::bench::RemoveScratch();  // after the children: srt may still use it until then
}

// ---------------------------------------------------------------------------------------------
// Options

enum Section : unsigned { kThroughput = 1, kLatency = 2, kRss = 4, kStartup = 8 };

struct Options {
  int runs = 5;
  uint64_t bytes = uint64_t{1} << 30;
  int connections = 200;
  int tunnels = 1000;
  int startup_runs = 20;
  int timeout_s = 300;
  unsigned only = kThroughput | kLatency | kRss | kStartup;
  std::string srt;
  std::string upstream;
  std::string node;
  std::string workdir = "/var/tmp";
  bool no_upstream = false;
};

constexpr std::string_view kUsage =
    "Usage: srt-network-bench [OPTIONS]\n"
    "\n"
    "Measures srt's allowlist proxy beside a direct loopback connection (and upstream srt when\n"
    "installed), interleaved: CONNECT tunnel throughput, connection-setup latency, the proxy's\n"
    "RSS with many open tunnels, and `srt -c true` with the network on (srt-startup-bench\n"
    "--network).\n"
    "\n"
    "  --runs N          rounds for throughput and latency (default 5)\n"
    "  --bytes N         bytes per download, K/M/G suffixes allowed (default 1G)\n"
    "  --connections N   sequential connections per latency run (default 200)\n"
    "  --tunnels N       concurrent tunnels for the RSS test (default 1000)\n"
    "  --startup-runs N  --runs for srt-startup-bench --network (default 20)\n"
    "  --only LIST       comma-separated: throughput,latency,rss,startup (default all)\n"
    "  --srt PATH        srt binary (default: next to this program)\n"
    "  --upstream PATH   upstream srt: its cli.js, its package dir, or a dir holding node_modules\n"
    "                    (default: bench/node_modules of the source tree, then ./bench, then .)\n"
    "  --no-upstream     do not run upstream srt\n"
    "  --node PATH       node for upstream srt (default: `node` in PATH)\n"
    "  --timeout S       give up on a contender's run after S seconds (default 300)\n"
    "  --workdir DIR     where the scratch directory is created (default /var/tmp)\n";

uint64_t ParseBytes(const char* value) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(value, &end, 10);
  uint64_t scale = 1;
  if (end != value && *end != '\0' && end[1] == '\0') {
    switch (*end) {
      case 'K':
      case 'k':
        scale = uint64_t{1} << 10;
        ++end;
        break;
      case 'M':
      case 'm':
        scale = uint64_t{1} << 20;
        ++end;
        break;
      case 'G':
      case 'g':
        scale = uint64_t{1} << 30;
        ++end;
        break;
      default:
        break;
    }
  }
  if (errno != 0 || end == value || *end != '\0' || v == 0 || v > (uint64_t{1} << 40) / scale) {
    Die(std::string("--bytes: expected a size such as 1G or 268435456, got '") + value + "'");
  }
  return v * scale;
}

Options ParseOptions(int argc, char** argv) {
  using srt::bench::ParseCount;
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&] { return srt::bench::OptionValue(argc, argv, i); };
    if (a == "--help" || a == "-h") {
      srt::bench::PrintUsageAndExit(kUsage);
    } else if (a == "--runs") {
      o.runs = ParseCount(a, value(), 1);
    } else if (a == "--bytes") {
      o.bytes = ParseBytes(value());
    } else if (a == "--connections") {
      o.connections = ParseCount(a, value(), 1);
    } else if (a == "--tunnels") {
      o.tunnels = ParseCount(a, value(), 1, 60000);
    } else if (a == "--startup-runs") {
      o.startup_runs = ParseCount(a, value(), 1);
    } else if (a == "--timeout") {
      o.timeout_s = ParseCount(a, value(), 1);
    } else if (a == "--only") {
      o.only = 0;
      std::string_view list = value();
      while (!list.empty()) {
        std::string_view one = list.substr(0, list.find(','));
        list = one.size() < list.size() ? list.substr(one.size() + 1) : std::string_view();
        if (one == "throughput") {
          o.only |= kThroughput;
        } else if (one == "latency") {
          o.only |= kLatency;
        } else if (one == "rss") {
          o.only |= kRss;
        } else if (one == "startup") {
          o.only |= kStartup;
        } else {
          Die("--only: unknown section '" + std::string(one) +
              "' (throughput, latency, rss, startup)");
        }
      }
    } else if (a == "--srt") {
      o.srt = value();
    } else if (a == "--upstream") {
      o.upstream = value();
    } else if (a == "--no-upstream") {
      o.no_upstream = true;
    } else if (a == "--node") {
      o.node = value();
    } else if (a == "--workdir") {
      o.workdir = value();
    } else {
      srt::bench::DieUnknownOption(a);
    }
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// The origin: a thread serving 127.0.0.1:<ephemeral>. "GET /bytes/N" answers N bytes and
// "GET /hold/N" the same, and either way the connection stays until the client closes it. Bodies
// go out with sendfile(2) from a memfd, so the origin copies nothing itself.

class Origin {
 public:
  Origin() {
    listener_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!listener_) Die(Errno("socket"));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(listener_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listener_.get(), 4096) != 0 ||
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      Die(Errno("origin: bind/listen 127.0.0.1:0"));
    }
    port_ = ntohs(a.sin_port);
    body_.reset(::memfd_create("origin-body", MFD_CLOEXEC));
    if (!body_) Die(Errno("memfd_create"));
    const std::string chunk(kBodyFileBytes, 'x');
    if (!WriteAll(body_.get(), chunk)) Die(Errno("write origin body"));
    epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!epoll_ || !wake_) Die(Errno("origin: epoll/eventfd"));
    Add(listener_.get(), EPOLLIN);
    Add(wake_.get(), EPOLLIN);
    thread_ = std::thread([this] { Run(); });
    if (pthread_getcpuclockid(thread_.native_handle(), &cpu_clock_) != 0) {
      Die("pthread_getcpuclockid failed");
    }
  }
  ~Origin() {
    uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof one);
    thread_.join();
  }
  Origin(const Origin&) = delete;
  Origin& operator=(const Origin&) = delete;

  uint16_t port() const { return port_; }
  // CPU time of the serving thread so far.
  double CpuSeconds() const { return ClockSeconds(cpu_clock_); }
  // Connections open right now (for the RSS test's sanity check).
  size_t open_connections() const { return open_.load(); }

 private:
  static constexpr size_t kBodyFileBytes = 1 << 20;

  struct Conn {
    UniqueFd fd;
    std::string in;
    std::string head;
    size_t head_sent = 0;
    uint64_t body_left = 0;
    uint64_t body_pos = 0;
    bool sending = false;
    bool answered = false;
  };

  void Add(int fd, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) Die(Errno("origin: epoll_ctl"));
  }
  void Modify(int fd, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev);
  }
  void Close(int fd) {
    (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
    conns_.erase(fd);
    open_.store(conns_.size());
  }

  void Run() {
    epoll_event events[64];
    while (true) {
      int n = ::epoll_wait(epoll_.get(), events, 64, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return;
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_.get()) return;
        if (fd == listener_.get()) {
          Accept();
          continue;
        }
        auto it = conns_.find(fd);
        if (it == conns_.end()) continue;
        OnEvents(*it->second, events[i].events);
      }
    }
  }

  void Accept() {
    while (true) {
      int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or EMFILE: the client sees a stalled connect
      int one = 1;
      (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto conn = std::make_unique<Conn>();
      conn->fd.reset(fd);
      conns_[fd] = std::move(conn);
      open_.store(conns_.size());
      Add(fd, EPOLLIN | EPOLLRDHUP);
    }
  }

  void OnEvents(Conn& c, uint32_t events) {
    const int fd = c.fd.get();
    if (c.sending) {
      if (events & (EPOLLERR | EPOLLHUP)) return Close(fd);
      return Send(c);
    }
    char buf[16 * 1024];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return Close(fd);
    if (n < 0 || c.answered) return;  // after the answer: wait for the client to close
    c.in.append(buf, static_cast<size_t>(n));
    size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (c.in.size() > 64 * 1024) Close(fd);
      return;
    }
    uint64_t size = 0;
    for (std::string_view prefix : {"GET /bytes/", "GET /hold/"}) {
      if (c.in.starts_with(prefix)) size = std::strtoull(c.in.c_str() + prefix.size(), nullptr, 10);
    }
    c.in.clear();
    c.head = size > 0 ? "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                        "Content-Length: " +
                            std::to_string(size) + "\r\n\r\n"
                      : "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    c.body_left = size;
    c.sending = true;
    c.answered = true;
    Modify(fd, EPOLLOUT);
    Send(c);
  }

  void Send(Conn& c) {
    const int fd = c.fd.get();
    while (c.head_sent < c.head.size()) {
      ssize_t n = ::send(fd, c.head.data() + c.head_sent, c.head.size() - c.head_sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) return Close(fd);
      c.head_sent += static_cast<size_t>(n);
    }
    while (c.body_left > 0) {
      auto off = static_cast<off_t>(c.body_pos % kBodyFileBytes);
      size_t count = static_cast<size_t>(
          std::min<uint64_t>(c.body_left, kBodyFileBytes - static_cast<uint64_t>(off)));
      ssize_t n = ::sendfile(fd, body_.get(), &off, count);
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) return Close(fd);
      c.body_left -= static_cast<uint64_t>(n);
      c.body_pos += static_cast<uint64_t>(n);
    }
    c.sending = false;
    c.head.clear();
    Modify(fd, EPOLLIN | EPOLLRDHUP);
  }

  UniqueFd listener_;
  UniqueFd body_;
  UniqueFd epoll_;
  UniqueFd wake_;
  uint16_t port_ = 0;
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;  // origin thread only
  std::atomic<size_t> open_{0};
  std::thread thread_;
  clockid_t cpu_clock_{};
};

// ---------------------------------------------------------------------------------------------
// The reference relay: the least a user-space TCP relay can do on this host, for comparison with
// the proxies. Two blocking threads per connection, each splice(2)ing one direction through its
// own 1 MiB pipe; no event loop, no parsing, no sandbox. Throughput contender only.

class Relay {
 public:
  explicit Relay(uint16_t origin_port) : origin_port_(origin_port) {
    listener_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!listener_) Die(Errno("socket"));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(listener_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listener_.get(), 64) != 0 ||
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      Die(Errno("relay: bind/listen 127.0.0.1:0"));
    }
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~Relay() {
    stopping_ = true;
    ::shutdown(listener_.get(), SHUT_RDWR);  // wakes accept(2)
    acceptor_.join();
    for (std::thread& t : workers_) t.join();
  }
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  uint16_t port() const { return port_; }

 private:
  struct Pair {
    UniqueFd client;
    UniqueFd upstream;
  };

  void Accept() {
    while (!stopping_) {
      UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;
      }
      sockaddr_in origin{};
      origin.sin_family = AF_INET;
      origin.sin_port = htons(origin_port_);
      origin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      UniqueFd upstream(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (!upstream ||
          ::connect(upstream.get(), reinterpret_cast<sockaddr*>(&origin), sizeof origin) != 0) {
        continue;  // the client sees its connection close
      }
      // Both directions share the sockets; the last one to finish closes them.
      auto pair = std::make_shared<Pair>(Pair{std::move(client), std::move(upstream)});
      workers_.emplace_back([pair] { Pump(pair->client.get(), pair->upstream.get()); });
      workers_.emplace_back([pair] { Pump(pair->upstream.get(), pair->client.get()); });
    }
  }

  static void Pump(int from, int to) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) {
      ::shutdown(to, SHUT_WR);
      return;
    }
    UniqueFd r(p[0]), w(p[1]);
    (void)::fcntl(w.get(), F_SETPIPE_SZ, 1 << 20);
    constexpr unsigned kFlags = SPLICE_F_MOVE | SPLICE_F_MORE;
    while (true) {
      ssize_t n = ::splice(from, nullptr, w.get(), nullptr, 1 << 20, kFlags);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      while (n > 0) {
        ssize_t m = ::splice(r.get(), nullptr, to, nullptr, static_cast<size_t>(n), kFlags);
        if (m < 0 && errno == EINTR) continue;
        if (m <= 0) {
          ::shutdown(from, SHUT_RD);
          return;
        }
        n -= m;
      }
    }
    ::shutdown(to, SHUT_WR);
  }

  uint16_t origin_port_;
  uint16_t port_ = 0;
  UniqueFd listener_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::vector<std::thread> workers_;  // acceptor thread only, until it is joined
};

// ---------------------------------------------------------------------------------------------
// Children: posix_spawn (the bench has the origin thread), pipes for stdin/stdout/stderr, a pidfd
// for the deadline. Every child is stopped by its pid if the bench leaves early.

class Child {
 public:
  Child(const std::vector<std::string>& argv, bool stdin_pipe, int timeout_s)
      : deadline_(Now() + timeout_s) {
    int in[2] = {-1, -1}, out[2], err[2];
    if ((stdin_pipe && ::pipe2(in, O_CLOEXEC) != 0) || ::pipe2(out, O_CLOEXEC) != 0 ||
        ::pipe2(err, O_CLOEXEC) != 0) {
      Die(Errno("pipe2"));
    }
    UniqueFd in_r(in[0]), out_w(out[1]), err_w(err[1]);
    in_.reset(in[1]);
    out_.reset(out[0]);
    err_.reset(err[0]);
    for (int fd : {out_.get(), err_.get()}) ::fcntl(fd, F_SETFL, O_NONBLOCK);
    UniqueFd devnull;
    if (!stdin_pipe) {
      devnull.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
      if (!devnull) Die(Errno("open /dev/null"));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, stdin_pipe ? in_r.get() : devnull.get(), 0);
    posix_spawn_file_actions_adddup2(&fa, out_w.get(), 1);
    posix_spawn_file_actions_adddup2(&fa, err_w.get(), 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int rc = ::posix_spawn(&pid_, argv[0].c_str(), &fa, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) Die("posix_spawn '" + argv[0] + "': " + std::strerror(rc));
    g_children.push_back(pid_);
    // glibc 2.36's <sys/pidfd.h> lacks C linkage for C++, hence the raw syscall.
    pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
    if (!pidfd_) Die(Errno("pidfd_open"));
  }
  ~Child() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& err() const { return err_buf_; }

  // The next line of the child's stdout; nullopt once it has exited without one.
  std::optional<std::string> ReadLine() {
    while (true) {
      if (size_t nl = out_buf_.find('\n'); nl != std::string::npos) {
        std::string line = out_buf_.substr(0, nl);
        out_buf_.erase(0, nl + 1);
        return line;
      }
      if (exited_) return std::nullopt;
      Pump();
    }
  }

  bool Tell(std::string_view line) { return in_ && WriteAll(in_.get(), std::string(line) + "\n"); }

  // Closes the child's stdin and reaps it; returns the wait status.
  int Wait() {
    in_.reset();
    while (!exited_) Pump();
    if (!reaped_) {
      while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
      }
      reaped_ = true;
      std::erase(g_children, pid_);
    }
    return status_;
  }

 private:
  // Waits for output or the child's exit (whichever first), reads what is there.
  void Pump() {
    if (srt::bench::StopRequested()) Die("interrupted");
    pollfd fds[3] = {{out_.get(), POLLIN, 0}, {err_.get(), POLLIN, 0}, {pidfd_.get(), POLLIN, 0}};
    const double left = deadline_ - Now();
    if (left <= 0) {
      Die("a run took longer than --timeout; its stderr:\n" + err_buf_);
    }
    int n = ::poll(fds, 3, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
    if (n < 0 && errno != EINTR) Die(Errno("poll"));
    Drain(out_.get(), out_buf_);
    Drain(err_.get(), err_buf_);
    if (fds[2].revents & POLLIN) {
      exited_ = true;
      Drain(out_.get(), out_buf_);  // what it wrote just before exiting
      Drain(err_.get(), err_buf_);
    }
  }
  static void Drain(int fd, std::string& to) {
    char buf[4096];
    while (to.size() < (1u << 20)) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      to.append(buf, static_cast<size_t>(n));
    }
  }

  double deadline_;
  pid_t pid_ = -1;
  UniqueFd pidfd_, in_, out_, err_;
  std::string out_buf_, err_buf_;
  bool exited_ = false;
  bool reaped_ = false;
  int status_ = 0;
};

// A child's stderr in a message: its first lines, indented.
std::string Indented(const std::string& text) { return FirstLines(text, 12); }

// "key=value" from a client's result line.
double Field(const std::string& line, std::string_view key) {
  size_t at = line.find(" " + std::string(key) + "=");
  if (at == std::string::npos) return NAN;
  return std::strtod(line.c_str() + at + key.size() + 2, nullptr);
}

// ---------------------------------------------------------------------------------------------
// Contenders: how each one runs the client.

enum class Kind { kDirect, kRelay, kSrt, kUpstream };

struct Contender {
  Kind kind;
  std::string label;
};

struct Setup {
  Options opt;
  std::string self;      // this program, also the client
  std::string settings;  // allowedDomains ["127.0.0.1:PORT"]
  std::string upstream_cli;
  uint16_t port = 0;        // the origin
  uint16_t relay_port = 0;  // the reference relay (0: none)
};

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// argv that runs `--client MODE ROUTE PORT N [sync]` as contender `kind`.
std::vector<std::string> ClientArgv(const Setup& s, Kind kind, std::string_view mode, uint64_t n,
                                    bool sync) {
  const bool host = kind == Kind::kDirect || kind == Kind::kRelay;
  std::vector<std::string> client = {s.self,
                                     std::string(kClientFlag),
                                     std::string(mode),
                                     host ? "direct" : "proxy",
                                     std::to_string(kind == Kind::kRelay ? s.relay_port : s.port),
                                     std::to_string(n)};
  if (sync) client.push_back("sync");
  if (host) return client;
  std::string command;
  for (const std::string& a : client) command += (command.empty() ? "" : " ") + ShellQuote(a);
  if (kind == Kind::kSrt) return {s.opt.srt, "-s", s.settings, "-c", command};
  return {s.opt.node, s.upstream_cli, "--settings", s.settings, "-c", command};
}

// Direct first, srt second (the ratios refer to them by index), then upstream, then the
// reference relay when `with_relay`.
std::vector<Contender> Contenders(const Setup& s, bool with_relay = false) {
  std::vector<Contender> cs = {{Kind::kDirect, "direct (host loopback)"},
                               {Kind::kSrt, "srt (CONNECT via proxy)"}};
  if (!s.upstream_cli.empty()) cs.push_back({Kind::kUpstream, "upstream srt (node)"});
  if (with_relay && s.relay_port != 0) {
    cs.push_back({Kind::kRelay, "splice relay (reference)"});
  }
  return cs;
}

[[noreturn]] void RunFailed(const Contender& c, const std::string& what, Child& child) {
  int status = child.Wait();
  Die(c.label + ": " + what + " (" + DescribeStatus(status) + "); stderr:\n" +
      Indented(child.err()));
}

// CPU seconds per group of processes between two samples of a contender's tree. The groups:
// the front end holding the proxy (srt or node), per-connection bridges (upstream's socat), the
// client, and the rest (bwrap, srt-init, bash, ...).
struct CpuSplit {
  double origin = 0, proxy = 0, bridges = 0, client = 0, other = 0;
  double total() const { return origin + proxy + bridges + client + other; }
};

CpuSplit CpuBetween(const std::vector<ProcSample>& before, const std::vector<ProcSample>& after,
                    pid_t front_end, Kind kind) {
  std::unordered_map<pid_t, uint64_t> start;
  for (const ProcSample& p : before) start[p.pid] = p.cpu_ns;
  CpuSplit split;
  for (const ProcSample& p : after) {
    uint64_t s = start.contains(p.pid) ? start[p.pid] : 0;
    double sec = static_cast<double>(p.cpu_ns - std::min(s, p.cpu_ns)) / 1e9;
    if (p.comm == "srt-network-ben") {  // comm is cut to 15 characters
      split.client += sec;
    } else if (kind != Kind::kDirect && p.pid == front_end) {
      split.proxy += sec;
    } else if (p.comm == "socat") {
      split.bridges += sec;
    } else {
      split.other += sec;
    }
  }
  return split;
}

// ---------------------------------------------------------------------------------------------
// 1. Throughput

struct ThroughputRun {
  double mbps = 0;
  double seconds = 0;
  CpuSplit cpu;
};

double BenchCpuSeconds() { return ClockSeconds(CLOCK_PROCESS_CPUTIME_ID); }

ThroughputRun RunThroughput(const Setup& s, const Origin& origin, const Contender& c) {
  Child child(ClientArgv(s, c.kind, "throughput", s.opt.bytes, /*sync=*/true), true,
              s.opt.timeout_s);
  std::optional<std::string> line = child.ReadLine();
  if (!line || *line != "ready") RunFailed(c, "no 'ready' from the client", child);
  std::vector<ProcSample> before = SampleTree(child.pid(), kTreeFields);
  const double origin0 = origin.CpuSeconds();
  const double bench0 = BenchCpuSeconds();
  if (!child.Tell("go")) RunFailed(c, "cannot reach the client's stdin", child);
  line = child.ReadLine();
  const double bench1 = BenchCpuSeconds();
  const double origin1 = origin.CpuSeconds();
  if (!line || !line->starts_with("result ")) RunFailed(c, "no result from the client", child);
  std::vector<ProcSample> after = SampleTree(child.pid(), kTreeFields);
  int status = child.Wait();
  if (status != 0) RunFailed(c, "the run failed", child);
  ThroughputRun r;
  const double bytes = Field(*line, "bytes");
  r.seconds = Field(*line, "seconds");
  if (!(bytes == static_cast<double>(s.opt.bytes)) || !(r.seconds > 0)) {
    Die(c.label + ": bad result line '" + *line + "'");
  }
  r.mbps = bytes / r.seconds / 1e6;
  r.cpu = CpuBetween(before, after, child.pid(), c.kind);
  r.cpu.origin = origin1 - origin0;
  if (c.kind == Kind::kRelay) {
    // The relay's threads are the rest of this process (the main thread only waits meanwhile).
    r.cpu.proxy = std::max(0.0, (bench1 - bench0) - r.cpu.origin);
  }
  return r;
}

struct Verdicts {
  std::vector<std::string> lines;  // repeated in the summary
};

size_t IndexOf(const std::vector<Contender>& cs, Kind kind) {
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].kind == kind) return i;
  }
  return cs.size();
}

void Throughput(const Setup& s, const Origin& origin, Verdicts& v) {
  std::vector<Contender> cs = Contenders(s, /*with_relay=*/true);
  std::vector<std::vector<ThroughputRun>> runs(cs.size());
  const std::string load0 = LoadAverage();
  std::printf(
      "1. CONNECT tunnel throughput: %.0f MiB per download, %d rounds (+1 warm-up), order "
      "rotated per round\n",
      static_cast<double>(s.opt.bytes) / (1 << 20), s.opt.runs);
  std::fflush(stdout);
  for (int round = -1; round < s.opt.runs; ++round) {
    for (size_t k = 0; k < cs.size(); ++k) {
      size_t i = (k + static_cast<size_t>(round + 1)) % cs.size();
      ThroughputRun r = RunThroughput(s, origin, cs[i]);
      if (round >= 0) runs[i].push_back(r);
    }
  }
  std::printf("   load average %s before, %s after\n", load0.c_str(), LoadAverage().c_str());
  std::printf("   %-26s %8s %6s %6s %7s   %s\n", "contender", "MB/s med", "min", "max", "/direct",
              "CPU s per GiB (medians): origin proxy bridge client other = total");
  std::vector<double> med(cs.size());
  const double gib = static_cast<double>(s.opt.bytes) / (1 << 30);
  for (size_t i = 0; i < cs.size(); ++i) {
    std::vector<double> mbps, o, p, b, cl, ot, tot;
    for (const ThroughputRun& r : runs[i]) {
      mbps.push_back(r.mbps);
      o.push_back(r.cpu.origin / gib);
      p.push_back(r.cpu.proxy / gib);
      b.push_back(r.cpu.bridges / gib);
      cl.push_back(r.cpu.client / gib);
      ot.push_back(r.cpu.other / gib);
      tot.push_back(r.cpu.total() / gib);
    }
    Stats st = Summarize(mbps);
    med[i] = st.median;
    std::printf("   %-26s %8.0f %6.0f %6.0f %6.2fx   %6.2f %5.2f %6.2f %6.2f %5.2f = %5.2f\n",
                cs[i].label.c_str(), st.median, st.min, st.max, st.median / med[0], Median(o),
                Median(p), Median(b), Median(cl), Median(ot), Median(tot));
  }
  std::printf(
      "   (MB = 10^6 bytes. Timed by the client from its request, sent once the tunnel is up, to\n"
      "   the last body byte. CPU: /proc/PID/task/*/schedstat of the contender's process tree and\n"
      "   the origin thread's clock, sampled around the transfer; proxy = srt's process, node, or\n"
      "   the reference relay's threads; bridge = upstream's socat processes.)\n");
  const size_t srt = IndexOf(cs, Kind::kSrt);
  const size_t up = IndexOf(cs, Kind::kUpstream);
  const size_t relay = IndexOf(cs, Kind::kRelay);
  std::vector<double> paired;
  for (size_t r = 0; r < runs[0].size(); ++r) {
    paired.push_back(runs[srt][r].mbps / runs[0][r].mbps);
  }
  const double ratio = med[srt] / med[0];
  char line[256];
  std::snprintf(line, sizeof line,
                "throughput srt/direct %.2fx (%.0f vs %.0f MB/s; per-round median %.2fx)   target "
                ">= %.1fx: %s",
                ratio, med[srt], med[0], Median(paired), kTargetThroughputRatio,
                Verdict(ratio >= kTargetThroughputRatio));
  std::printf("   %s\n", line);
  v.lines.push_back(line);
  if (up < cs.size()) {
    std::snprintf(line, sizeof line,
                  "throughput upstream/direct %.2fx (%.0f MB/s); srt/upstream %.1fx",
                  med[up] / med[0], med[up], med[srt] / med[up]);
    std::printf("   %s\n", line);
    v.lines.push_back(line);
  }
  if (relay < cs.size()) {
    std::snprintf(line, sizeof line,
                  "throughput reference splice relay/direct %.2fx (%.0f MB/s); srt/relay %.2fx",
                  med[relay] / med[0], med[relay], med[srt] / med[relay]);
    std::printf("   %s\n", line);
    v.lines.push_back(line);
  }
  std::printf("\n");
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// 2. Latency

std::vector<double> RunLatency(const Setup& s, const Contender& c) {
  Child child(ClientArgv(s, c.kind, "latency", static_cast<uint64_t>(s.opt.connections), false),
              false, s.opt.timeout_s);
  std::optional<std::string> line = child.ReadLine();
  if (!line || !line->starts_with("result us=")) RunFailed(c, "no result from the client", child);
  if (int status = child.Wait(); status != 0) RunFailed(c, "the run failed", child);
  std::vector<double> us;
  const char* p = line->c_str() + 10;
  while (*p) {
    char* end = nullptr;
    us.push_back(std::strtod(p, &end));
    if (end == p) break;
    p = *end == ',' ? end + 1 : end;
  }
  if (us.size() != static_cast<size_t>(s.opt.connections)) Die(c.label + ": short latency result");
  return us;
}

void Latency(const Setup& s, Verdicts& v) {
  std::vector<Contender> cs = Contenders(s);
  std::vector<std::vector<double>> all(cs.size()), per_run(cs.size());
  const std::string load0 = LoadAverage();
  std::printf(
      "2. Connection setup: %d sequential connections per run, %d rounds (+1 warm-up), "
      "order rotated\n",
      s.opt.connections, s.opt.runs);
  std::fflush(stdout);
  for (int round = -1; round < s.opt.runs; ++round) {
    for (size_t k = 0; k < cs.size(); ++k) {
      size_t i = (k + static_cast<size_t>(round + 1)) % cs.size();
      std::vector<double> us = RunLatency(s, cs[i]);
      if (round < 0) continue;
      all[i].insert(all[i].end(), us.begin(), us.end());
      per_run[i].push_back(Median(us));
    }
  }
  std::printf("   load average %s before, %s after\n", load0.c_str(), LoadAverage().c_str());
  std::printf("   %-26s %9s %9s %9s %9s %9s\n", "contender", "min µs", "median", "p90", "max",
              "/direct");
  std::vector<double> med(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    Stats st = Summarize(all[i]);
    med[i] = st.median;
    std::printf("   %-26s %9.1f %9.1f %9.1f %9.1f %8.1fx\n", cs[i].label.c_str(), st.min, st.median,
                st.p90, st.max, st.median / med[0]);
  }
  std::printf(
      "   (timed by the client from connect() to the first byte of the origin's response; through\n"
      "   a proxy that is connect, CONNECT + Basic credentials, the proxy's 200, the request and\n"
      "   the response: two round trips through the proxy against one direct)\n");
  char line[256];
  std::snprintf(line, sizeof line,
                "setup latency srt/direct %.1fx (median %.0f vs %.0f µs, +%.0f µs; median of "
                "per-run medians %.0f µs)",
                med[1] / med[0], med[1], med[0], med[1] - med[0], Median(per_run[1]));
  std::printf("   %s\n", line);
  v.lines.push_back(line);
  if (cs.size() > 2) {  // no relay here: [2] is upstream
    std::snprintf(line, sizeof line,
                  "setup latency upstream/direct %.1fx (median %.0f µs), upstream/srt %.1fx",
                  med[2] / med[0], med[2], med[2] / med[1]);
    std::printf("   %s\n", line);
    v.lines.push_back(line);
  }
  std::printf("\n");
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// 3. RSS with many open tunnels

std::string Mib(double kib) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", kib / 1024);
  return buf;
}

// Sum of Pss per process name over a tree.
std::string TreeByName(const std::vector<ProcSample>& tree) {
  std::map<std::string, std::pair<int, long>> by;
  for (const ProcSample& p : tree) {
    auto& [count, kib] = by[p.comm == "srt-network-ben" ? "client" : p.comm];
    ++count;
    kib += std::max(p.pss_kib, 0L);
  }
  std::string out;
  for (const auto& [name, v] : by) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s x%d %s", out.empty() ? "" : ", ", name.c_str(), v.first,
                  Mib(static_cast<double>(v.second)).c_str());
    out += buf;
  }
  return out;
}

void Rss(const Setup& s, const Origin& origin, Verdicts& v) {
  std::printf("3. Proxy memory with %d concurrent CONNECT tunnels (each moved %zu B up, %" PRIu64
              " B down, then stays open)\n",
              s.opt.tunnels, kHoldUpPad, kHoldDownBytes);
  std::printf("   load average %s\n", LoadAverage().c_str());
  std::fflush(stdout);
  for (const Contender& c : Contenders(s)) {
    if (c.kind == Kind::kDirect) continue;
    Child child(ClientArgv(s, c.kind, "hold", static_cast<uint64_t>(s.opt.tunnels), false), true,
                s.opt.timeout_s);
    std::optional<std::string> line = child.ReadLine();
    if (!line || *line != "idle") RunFailed(c, "no 'idle' from the client", child);
    std::vector<ProcSample> idle = SampleTree(child.pid(), kTreeFields);
    if (idle.empty()) RunFailed(c, "its process is gone", child);
    if (!child.Tell("go")) RunFailed(c, "cannot reach the client's stdin", child);
    line = child.ReadLine();
    if (!line || !line->starts_with("open ")) RunFailed(c, "the tunnels did not open", child);
    std::vector<ProcSample> full = SampleTree(child.pid(), kTreeFields | srt::bench::kSamplePss);
    const size_t at_origin = origin.open_connections();
    if (int status = child.Wait(); status != 0) RunFailed(c, "the run failed", child);
    const ProcSample& fe0 = idle.front();
    const ProcSample& fe = full.front();
    const std::string who =
        c.kind == Kind::kSrt ? "srt process" : "node process (upstream's proxy)";
    std::printf("   %s, pid %d:\n", c.label.c_str(), fe.pid);
    std::printf(
        "     %-32s VmRSS %s idle, %s with the tunnels open (+%.1f KiB per tunnel); "
        "VmHWM %s\n",
        who.c_str(), Mib(static_cast<double>(fe0.rss_kib)).c_str(),
        Mib(static_cast<double>(fe.rss_kib)).c_str(),
        static_cast<double>(fe.rss_kib - fe0.rss_kib) / s.opt.tunnels,
        Mib(static_cast<double>(fe.hwm_kib)).c_str());
    std::printf("     %-32s %d opened in %.2f s; %zu connections open at the origin\n", "tunnels",
                s.opt.tunnels, Field(*line, "seconds"), at_origin);
    std::printf("     %-32s Pss %s\n", "own memory", Mib(static_cast<double>(fe.pss_kib)).c_str());
    std::printf("     %-32s %s\n", "whole tree, Pss by name", TreeByName(full).c_str());
    char out[256];
    if (c.kind == Kind::kSrt) {
      const double peak = static_cast<double>(std::max(fe.rss_kib, fe.hwm_kib)) / 1024;
      std::snprintf(out, sizeof out,
                    "srt RSS with %d tunnels: VmRSS %.2f MiB, VmHWM %.2f MiB   target <= %.0f "
                    "MiB: %s",
                    s.opt.tunnels, static_cast<double>(fe.rss_kib) / 1024,
                    static_cast<double>(fe.hwm_kib) / 1024, kTargetRssMib,
                    Verdict(peak <= kTargetRssMib));
    } else {
      long bridges = 0;
      int count = 0;
      for (const ProcSample& p : full) {
        if (p.comm == "socat") {
          bridges += std::max(p.pss_kib, 0L);
          ++count;
        }
      }
      std::snprintf(out, sizeof out,
                    "upstream RSS with %d tunnels: node VmRSS %.2f MiB (VmHWM %.2f MiB); plus %d "
                    "socat bridges, Pss sum %.2f MiB",
                    s.opt.tunnels, static_cast<double>(fe.rss_kib) / 1024,
                    static_cast<double>(fe.hwm_kib) / 1024, count,
                    static_cast<double>(bridges) / 1024);
    }
    std::printf("     %s\n", out);
    v.lines.push_back(out);
    std::fflush(stdout);
  }
  std::printf(
      "   (VmRSS/VmHWM from /proc/PID/status of the process the bench spawned, Pss from\n"
      "   smaps_rollup, read while the client holds the tunnels open; Pss splits shared pages\n"
      "   between the processes that map them; kernel socket buffers are in none of these)\n\n");
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// 4. Start-up with the network on: srt-startup-bench --network, whose output is passed through.

void Startup(const Setup& s, Verdicts& v) {
  const std::string bench =
      std::filesystem::path(s.self).parent_path().string() + "/srt-startup-bench";
  if (!IsExecutableFile(bench)) Die("no srt-startup-bench next to this program");
  std::vector<std::string> argv = {
      bench, "--network", "--runs", std::to_string(s.opt.startup_runs), "--srt", s.opt.srt};
  if (s.upstream_cli.empty()) {
    argv.push_back("--no-upstream");
  } else {
    argv.insert(argv.end(), {"--upstream", s.upstream_cli, "--node", s.opt.node});
  }
  std::printf("4. `srt -c true` with the network on: srt-startup-bench --network --runs %d\n\n",
              s.opt.startup_runs);
  std::fflush(stdout);
  Child child(argv, false, 3600);
  while (std::optional<std::string> line = child.ReadLine()) {
    std::printf("   %s\n", line->c_str());
    std::fflush(stdout);
    if (line->find("target <=") != std::string::npos ||
        line->find("with network / without") != std::string::npos) {
      std::string_view t = *line;
      while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
      v.lines.emplace_back(t);
    }
  }
  if (int status = child.Wait(); status != 0) {
    Die("srt-startup-bench --network failed (" + DescribeStatus(status) + "):\n" +
        Indented(child.err()));
  }
  std::printf("\n");
}

// The proxy needs two descriptors per tunnel and the origin one: make sure the hard limit lets
// srt raise its soft limit to kProxyNofile (root only) and that the bench's own soft limit covers
// the origin's connections. Children inherit the bench's limits.
std::string PrepareNofile(int tunnels) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) Die(Errno("getrlimit"));
  if (lim.rlim_max < kProxyNofile && geteuid() == 0) {
    rlimit raised = {std::max(lim.rlim_cur, std::min<rlim_t>(kProxyNofile, 4096)), kProxyNofile};
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
  }
  const auto need = static_cast<rlim_t>(tunnels) * 2 + 256;
  if (lim.rlim_cur < need && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = std::min(need, lim.rlim_max);
    (void)setrlimit(RLIMIT_NOFILE, &lim);
  }
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) Die(Errno("getrlimit"));
  std::string note;
  if (lim.rlim_max < kProxyNofile) {
    note = geteuid() == 0 ? " (could not raise the hard limit: no CAP_SYS_RESOURCE?)"
                          : " (not root: hard limit left as is)";
  }
  if (lim.rlim_cur < need) {
    Die("RLIMIT_NOFILE " + std::to_string(lim.rlim_cur) + " is too low for --tunnels " +
        std::to_string(tunnels) + " (raise the hard limit, or lower --tunnels)");
  }
  return std::to_string(lim.rlim_cur) + " soft / " + std::to_string(lim.rlim_max) + " hard" + note;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == kClientFlag) {
    return client::Main(argc - 2, argv + 2);
  }
  Setup s;
  srt::bench::SetProgramName("srt-network-bench");
  s.opt = ParseOptions(argc, argv);
  Options& opt = s.opt;
  srt::bench::CatchStopSignals();
  signal(SIGPIPE, SIG_IGN);  // children get it back (posix_spawnattr_setsigdefault)
  std::atexit(Cleanup);

  const std::string start_cwd = std::filesystem::current_path().string();
  s.self = srt::bench::SelfPath();
  if (opt.srt.empty()) opt.srt = std::filesystem::path(s.self).parent_path().string() + "/srt";
  if (!IsExecutableFile(opt.srt)) Die("no srt at '" + opt.srt + "' (use --srt PATH)");
  opt.srt = std::filesystem::canonical(opt.srt).string();
  s.upstream_cli = srt::bench::FindUpstreamCli(opt.upstream, opt.no_upstream, start_cwd);
  std::string upstream_note;
  if (!s.upstream_cli.empty()) {
    if (opt.node.empty()) opt.node = srt::bench::FindInPath("node");
    if (opt.node.empty() || !IsExecutableFile(opt.node)) {
      upstream_note = "found " + s.upstream_cli + " but no node (use --node PATH)";
      s.upstream_cli.clear();
    }
  } else {
    upstream_note = opt.no_upstream ? "skipped (--no-upstream)"
                                    : "not installed (npm ci --prefix bench, or --upstream PATH)";
  }
  const std::string nofile = PrepareNofile(opt.only & kRss ? opt.tunnels : 0);

  const std::string tmpl = srt::bench::CreateScratch(opt.workdir, "srt-netbench");
  if (chdir(tmpl.c_str()) != 0) Die(Errno("chdir '" + tmpl + "'"));

  Origin origin;
  s.port = origin.port();
  std::optional<Relay> relay;
  if (opt.only & kThroughput) {
    relay.emplace(s.port);
    s.relay_port = relay->port();
  }
  s.settings = tmpl + "/settings.json";
  // Upstream wants every filesystem key present; srt takes the same file.
  srt::bench::WriteFile(
      s.settings, "{\n  \"network\": {\"allowedDomains\": [\"127.0.0.1:" + std::to_string(s.port) +
                      "\"], \"deniedDomains\": []},\n"
                      "  \"filesystem\": {\"allowWrite\": [\".\"], \"denyRead\": [], "
                      "\"denyWrite\": []}\n}\n");

  // Each contender must work before anything is timed; upstream is dropped (with the reason) if
  // it does not.
  for (const Contender& c : Contenders(s, /*with_relay=*/true)) {
    Child child(ClientArgv(s, c.kind, "latency", 1, false), false, opt.timeout_s);
    std::optional<std::string> line = child.ReadLine();
    int status = child.Wait();
    if (line && line->starts_with("result ") && status == 0) continue;
    std::string why = DescribeStatus(status) + ":\n" + Indented(child.err());
    if (c.kind != Kind::kUpstream) Die(c.label + " cannot reach the origin, " + why);
    upstream_note = "installed but failed, " + why;
    s.upstream_cli.clear();
  }

  utsname uts{};
  uname(&uts);
  std::printf("srt network benchmark\n");
  std::printf("  host      %ld CPUs online, Linux %s, load average %s\n",
              sysconf(_SC_NPROCESSORS_ONLN), uts.release, LoadAverage().c_str());
  std::printf("  srt       %s\n", opt.srt.c_str());
  if (!s.upstream_cli.empty()) {
    std::printf("  upstream  %s (node %s)\n", s.upstream_cli.c_str(), opt.node.c_str());
  } else {
    std::printf("  upstream  %s\n", upstream_note.c_str());
  }
  std::printf("  origin    127.0.0.1:%u, a thread of this program (sendfile from a memfd)\n",
              s.port);
  std::printf(
      "  client    %s --client ...: on the host (direct), or inside the sandbox through\n"
      "            $HTTP_PROXY with CONNECT (srt, upstream)\n",
      s.self.c_str());
  std::printf("  settings  allowedDomains [\"127.0.0.1:%u\"], allowWrite [.]; RLIMIT_NOFILE %s\n\n",
              s.port, nofile.c_str());
  std::fflush(stdout);

  Verdicts v;
  if (opt.only & kThroughput) Throughput(s, origin, v);
  if (opt.only & kLatency) Latency(s, v);
  if (opt.only & kRss) Rss(s, origin, v);
  if (opt.only & kStartup) Startup(s, v);

  std::printf("summary (load average now %s)\n", LoadAverage().c_str());
  for (const std::string& line : v.lines) std::printf("  %s\n", line.c_str());
  return 0;
}
