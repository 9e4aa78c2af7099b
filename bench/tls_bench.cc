// SPDX-License-Identifier: Apache-2.0
// srt-tls-bench: what TLS termination (network.tlsTerminate) costs. Three contenders reach one
// HTTPS/1.1 origin on 127.0.0.1 with a blocking OpenSSL client in this process:
//   direct      TLS to the origin itself;
//   opaque      CONNECT through srt's proxy (no termination), TLS end to end;
//   terminated  CONNECT through srt's proxy with termination: TLS to the proxy's leaf, the proxy's
//               own verified TLS to the origin, every request parsed and logged.
// Figures: keep-alive request rate (GET of a 100-byte body on one connection) and bulk
// throughput (one GET of --bulk-mib MiB). Then plain HTTP (issue 12): a keep-alive request rate
// and the set-up of a fresh connection (connect, one GET, its answer), direct and through the
// proxy (absolute-form requests, the proxy keeping its connection to the origin), and the same
// keep-alive rate with real clients: curl and Python's http.client, each a program of its own,
// unpinned, on one CPU and split over two (--only clients). Rounds are
// interleaved and medians printed; nothing is asserted (the machine is shared and noisy). The proxy
// runs in this process on its own loop thread, as in srt; no sandbox is started (srt-network-bench
// measures that path).
#include <arpa/inet.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "dns/resolver.h"
#include "loop/loop_thread.h"
#include "mitm/certs.h"
#include "mitm/tls_engine.h"
#include "server/proxy_server.h"
#include "server/rules.h"

namespace {

using srt::UniqueFd;
using namespace srt::proxy;  // NOLINT(google-build-using-namespace): a benchmark's main file
using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "srt-tls-bench: %s\n", what.c_str());
  (void)std::fflush(nullptr);
  _exit(1);  // threads of the origin may still run: no exit handlers
}

UniqueFd Listen(uint16_t& port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (!fd || bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      listen(fd.get(), 128) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    Die("listen on 127.0.0.1");
  }
  port = ntohs(a.sin_port);
  return fd;
}

UniqueFd Connect(uint16_t port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (!fd || connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) Die("connect");
  const int one = 1;
  (void)setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// The CPUs this process may use, as found at start.
cpu_set_t& AllowedCpus() {
  static cpu_set_t set = [] {
    cpu_set_t s;
    CPU_ZERO(&s);
    if (sched_getaffinity(0, sizeof s, &s) != 0) Die("sched_getaffinity");
    return s;
  }();
  return set;
}

// Pins the thread or process `tid` (0: the caller) to `cpu`, or (cpu < 0) lets it run on every
// CPU allowed at start. Async-signal-safe once AllowedCpus() has run (a forked child calls it).
void PinThread(pid_t tid, int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  if (cpu >= 0) CPU_SET(static_cast<size_t>(cpu), &one);
  (void)sched_setaffinity(tid, sizeof one, cpu >= 0 ? &one : &AllowedCpus());
}

// The origin: a thread per connection, blocking OpenSSL. "GET /small" -> 100 bytes,
// "GET /bulk/N" -> N bytes, keep-alive.
class Origin {
 public:
  explicit Origin(srt::proxy::mitm::CaMaterial& ca) {
    srt::Result<srt::proxy::mitm::PkeyPtr> key = srt::proxy::mitm::NewEcKey();
    srt::Result<srt::proxy::mitm::X509Ptr> leaf =
        srt::proxy::mitm::MintLeaf(ca, key->get(), "127.0.0.1", true, std::chrono::hours(1));
    if (!leaf) Die("origin certificate");
    ctx_.reset(SSL_CTX_new(TLS_server_method()));
    SSL_CTX_use_certificate(ctx_.get(), leaf->get());
    SSL_CTX_use_PrivateKey(ctx_.get(), key->get());
    listener_ = Listen(port_);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~Origin() {
    stop_ = true;
    (void)shutdown(listener_.get(), SHUT_RDWR);
    acceptor_.join();
    for (std::thread& t : workers_) t.join();
  }
  uint16_t port() const { return port_; }

 private:
  void Accept() {
    for (;;) {
      UniqueFd c(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (stop_ || !c) return;
      workers_.emplace_back([this, fd = std::make_shared<UniqueFd>(std::move(c))] { Serve(*fd); });
    }
  }
  void Serve(const UniqueFd& fd) {
    const int one = 1;
    (void)setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    srt::proxy::mitm::SslPtr ssl(SSL_new(ctx_.get()));
    SSL_set_fd(ssl.get(), fd.get());
    if (SSL_accept(ssl.get()) != 1) return;
    static const std::string chunk(size_t{256} * 1024, 'x');
    std::string in;
    for (;;) {
      size_t end;
      while ((end = in.find("\r\n\r\n")) == std::string::npos) {
        char buf[4096];
        const int n = SSL_read(ssl.get(), buf, sizeof buf);
        if (n <= 0) return;
        in.append(buf, static_cast<size_t>(n));
      }
      const std::string head = in.substr(0, end);
      in.erase(0, end + 4);
      size_t size = 100;
      if (head.starts_with("GET /bulk/")) size = std::strtoull(head.c_str() + 10, nullptr, 10);
      const std::string h =
          "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(size) + "\r\n\r\n";
      if (SSL_write(ssl.get(), h.data(), static_cast<int>(h.size())) <= 0) return;
      while (size > 0) {
        const size_t n = std::min(size, chunk.size());
        if (SSL_write(ssl.get(), chunk.data(), static_cast<int>(n)) <= 0) return;
        size -= n;
      }
    }
  }

  srt::proxy::mitm::SslCtxPtr ctx_;
  UniqueFd listener_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

// The plain HTTP origin: a thread per connection. "GET /small" -> 100 bytes, keep-alive unless
// the request says Connection: close. Head and body go out in one write, as servers do.
class PlainOrigin {
 public:
  PlainOrigin() {
    listener_ = Listen(port_);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~PlainOrigin() {
    stop_ = true;
    (void)shutdown(listener_.get(), SHUT_RDWR);
    acceptor_.join();
    for (std::thread& t : workers_) t.join();
  }
  uint16_t port() const { return port_; }
  // Connections accepted so far: a client that keeps its connection alive makes one per run.
  int accepted() const { return accepted_; }
  // The CPU each connection's thread runs on from now (-1: any).
  void PinTo(int cpu) { cpu_ = cpu; }

 private:
  void Accept() {
    for (;;) {
      UniqueFd c(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (stop_ || !c) return;
      ++accepted_;
      workers_.emplace_back([this, fd = std::make_shared<UniqueFd>(std::move(c))] {
        PinThread(0, cpu_);
        Serve(*fd);
      });
    }
  }
  static void Serve(const UniqueFd& fd) {
    const int one = 1;
    (void)setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const std::string response =
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x');
    std::string in;
    for (;;) {
      size_t end;
      while ((end = in.find("\r\n\r\n")) == std::string::npos) {
        char buf[4096];
        const ssize_t n = read(fd.get(), buf, sizeof buf);
        if (n <= 0) return;
        in.append(buf, static_cast<size_t>(n));
      }
      const bool close = in.substr(0, end).find("Connection: close") != std::string::npos;
      in.erase(0, end + 4);
      if (write(fd.get(), response.data(), response.size()) !=
          static_cast<ssize_t>(response.size())) {
        return;
      }
      if (close) return;
    }
  }

  UniqueFd listener_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::atomic<int> cpu_{-1};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

// One plain HTTP client connection, to the origin or (proxy_port != 0) to the proxy with
// absolute-form requests.
class PlainClient {
 public:
  PlainClient(uint16_t origin_port, uint16_t proxy_port)
      : fd_(Connect(proxy_port != 0 ? proxy_port : origin_port)),
        prefix_(proxy_port != 0 ? "http://127.0.0.1:" + std::to_string(origin_port) : ""),
        host_("127.0.0.1:" + std::to_string(origin_port)) {}
  size_t Get(const std::string& path, bool close = false) {
    const std::string req = "GET " + prefix_ + path + " HTTP/1.1\r\nHost: " + host_ + "\r\n" +
                            (close ? "Connection: close\r\n\r\n" : "\r\n");
    if (write(fd_.get(), req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
      Die("plain write");
    }
    size_t end;
    char buf[16 * 1024];
    while ((end = in_.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t n = read(fd_.get(), buf, sizeof buf);
      if (n <= 0) Die("plain read head");
      in_.append(buf, static_cast<size_t>(n));
    }
    const size_t cl = in_.find("Content-Length: ");
    if (cl == std::string::npos || cl > end) Die("no Content-Length: " + in_.substr(0, end));
    const size_t size = std::strtoull(in_.c_str() + cl + 16, nullptr, 10);
    while (in_.size() < end + 4 + size) {
      const ssize_t n = read(fd_.get(), buf, sizeof buf);
      if (n <= 0) Die("plain read body");
      in_.append(buf, static_cast<size_t>(n));
    }
    in_.erase(0, end + 4 + size);
    return size;
  }

 private:
  UniqueFd fd_;
  std::string prefix_;
  std::string host_;
  std::string in_;
};

// One client connection: TCP (through a CONNECT when proxy_port != 0), then TLS trusting `ca`.
class Client {
 public:
  Client(uint16_t origin_port, uint16_t proxy_port, X509* ca) {
    fd_ = Connect(proxy_port != 0 ? proxy_port : origin_port);
    if (proxy_port != 0) {
      const std::string req = "CONNECT 127.0.0.1:" + std::to_string(origin_port) +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
      if (write(fd_.get(), req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
        Die("CONNECT");
      }
      std::string reply;
      char c;
      while (reply.find("\r\n\r\n") == std::string::npos && read(fd_.get(), &c, 1) == 1) {
        reply.push_back(c);
      }
      if (!reply.starts_with("HTTP/1.1 200")) Die("CONNECT refused: " + reply);
    }
    ctx_.reset(SSL_CTX_new(TLS_client_method()));
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx_.get()), ca);
    SSL_CTX_set_verify(ctx_.get(), SSL_VERIFY_PEER, nullptr);
    ssl_.reset(SSL_new(ctx_.get()));
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_.get()), "127.0.0.1");
    SSL_set_fd(ssl_.get(), fd_.get());
    if (SSL_connect(ssl_.get()) != 1) {
      ERR_print_errors_fp(stderr);
      Die("TLS handshake");
    }
    host_ = "127.0.0.1:" + std::to_string(origin_port);
  }
  // GET `path`; returns the body size.
  size_t Get(const std::string& path) {
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: " + host_ + "\r\n\r\n";
    if (SSL_write(ssl_.get(), req.data(), static_cast<int>(req.size())) <= 0) Die("write");
    std::string in;
    size_t end;
    char buf[64 * 1024];
    while ((end = in.find("\r\n\r\n")) == std::string::npos) {
      const int n = SSL_read(ssl_.get(), buf, sizeof buf);
      if (n <= 0) Die("read head");
      in.append(buf, static_cast<size_t>(n));
    }
    const size_t cl = in.find("Content-Length: ");
    if (cl == std::string::npos) Die("no Content-Length: " + in.substr(0, end));
    const size_t size = std::strtoull(in.c_str() + cl + 16, nullptr, 10);
    size_t have = in.size() - end - 4;
    while (have < size) {
      const int n = SSL_read(ssl_.get(), buf, static_cast<int>(std::min(sizeof buf, size - have)));
      if (n <= 0) Die("read body");
      have += static_cast<size_t>(n);
    }
    return size;
  }

 private:
  UniqueFd fd_;
  srt::proxy::mitm::SslCtxPtr ctx_;
  srt::proxy::mitm::SslPtr ssl_;
  std::string host_;
};

struct Contender {
  const char* name;
  uint16_t proxy_port;
  X509* ca;
  std::vector<double> rates;
  std::vector<double> mibps;
  std::vector<double> bulk_ratios;       // this round's bulk / direct's in the same round
  std::vector<double> proxy_ms_per_gib;  // the proxy thread's CPU during the bulk GET
  std::vector<double> all_ms_per_gib;    // every thread's: client, origin and proxy
};

struct PlainContender {
  const char* name;
  uint16_t proxy_port;
  std::vector<double> rates;
  std::vector<double> setup_us;
  std::vector<double> rate_ratios;           // this round's rate / direct's in the same round
  std::vector<double> proxy_us_per_request;  // the proxy thread's CPU, keep-alive requests
};

// CPU time (ns) the thread `tid` of this process has used (schedstat's first field): the
// proxy's own cost, which the machine's load does not inflate the way it does wall time.
double ThreadCpuNs(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/schedstat";
  UniqueFd f(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  char buf[128] = {};
  if (!f || read(f.get(), buf, sizeof buf - 1) <= 0) return 0;
  return static_cast<double>(std::strtoull(buf, nullptr, 10));
}

// CPU time (ns) every thread of this process has used.
double ProcessCpuNs() {
  rusage u{};
  (void)getrusage(RUSAGE_SELF, &u);
  return (static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e9) +
         (static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e3);
}

// Heap bytes in use in this process (every arena).
double HeapInUse() { return static_cast<double>(mallinfo2().uordblks); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// A program found on PATH, as an absolute path ("" when there is none).
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (end > start && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

struct ProgramRun {
  double secs;      // wall time from fork to reaping
  double cpu_ns;    // its CPU time, user and system
  std::string out;  // its standard output (the first 4 KiB)
};

// Runs `argv` (argv[0] an absolute path) pinned to `cpu` (-1: any allowed CPU) with its standard
// output read here; dies when it fails.
ProgramRun RunProgram(const std::vector<std::string>& args, int cpu) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) Die("pipe2");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) Die("fork");
  if (pid == 0) {  // only async-signal-safe calls from here: this process has threads
    PinThread(0, cpu);
    if (dup2(write_end.get(), STDOUT_FILENO) < 0) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  write_end.reset();
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(read_end.get(), buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (out.size() < sizeof buf) out.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  rusage u{};
  while (wait4(pid, &status, 0, &u) < 0 && errno == EINTR) {
  }
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die(args[0] + " failed: " + out);
  const double cpu_ns = (static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e9) +
                        (static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e3);
  return {secs, cpu_ns, out};
}

// The Python interpreter itself: a version manager's `python3` on PATH may be a shell script
// (pyenv's shim) whose own start-up is no part of the figure.
std::string FindPython() {
  const std::string on_path = FindOnPath("python3");
  if (on_path.empty()) return "";
  std::string exe = RunProgram({on_path, "-c", "import sys; print(sys.executable)"}, -1).out;
  while (!exe.empty() && exe.back() == '\n') exe.pop_back();
  return !exe.empty() && access(exe.c_str(), X_OK) == 0 ? exe : on_path;
}

// The Python client: `n` GETs on one http.client connection (absolute-form through the proxy
// when its port is not 0); prints the wall and CPU seconds of the last n - 1 (the first one
// connects).
constexpr const char* kPythonClient = R"(
import http.client, sys, time
n, port, proxy = (int(a) for a in sys.argv[1:4])
c = http.client.HTTPConnection('127.0.0.1', proxy or port)
path = 'http://127.0.0.1:%d/small' % port if proxy else '/small'
host = {'Host': '127.0.0.1:%d' % port}
def get():
    c.request('GET', path, headers=host)
    r = c.getresponse()
    if r.status != 200 or len(r.read()) != 100:
        sys.exit('bad answer: %d' % r.status)
get()
t, cpu = time.perf_counter(), time.process_time()
for _ in range(n - 1):
    get()
print(time.perf_counter() - t, time.process_time() - cpu)
)";

// One real client's figures in one view (unpinned or pinned), direct and through the proxy.
struct RealClientFigures {
  std::vector<double> rates[2];      // [0] direct, [1] proxy: requests per second
  std::vector<double> ratios;        // this round's proxy rate / direct's
  std::vector<double> client_us[2];  // the client program's CPU per request
  std::vector<double> origin_us[2];  // the origin's threads' CPU per request
  std::vector<double> proxy_us_per_request;
  // This round's CPU per request direct (client + origin) over proxied (client + origin + proxy
  // thread): the ratio a machine whose CPUs are all busy would give.
  std::vector<double> cpu_ratios;
  int most_origin_connections = 0;  // per run: 1 when the connection was kept alive
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  int requests = 2000;
  size_t bulk_mib = 256;
  int connections = 200;
  int tunnels = 100;
  bool run_tls = true;
  bool run_plain = true;
  bool run_clients = true;
  (void)AllowedCpus();  // before any thread or child changes its own
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
    } else if (a == "--requests" && i + 1 < argc) {
      requests = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
    } else if (a == "--bulk-mib" && i + 1 < argc) {
      bulk_mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--only" && i + 1 < argc) {
      const std::string only = argv[++i];
      run_tls = only == "tls";
      run_plain = only == "plain";
      run_clients = only == "clients";
      if (!run_tls && !run_plain && !run_clients) Die("--only: tls, plain or clients");
    } else if (a == "--tunnels" && i + 1 < argc) {
      tunnels = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
    } else if (a == "--connections" && i + 1 < argc) {
      connections = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
    } else {
      std::printf(
          "usage: srt-tls-bench [--rounds N] [--requests N] [--bulk-mib N] [--connections N] "
          "[--tunnels N] [--only tls|plain|clients]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  srt::Result<srt::proxy::mitm::CaMaterial> origin_ca = srt::proxy::mitm::MakeEphemeralCa();
  if (!origin_ca) Die(origin_ca.error().message());
  Origin origin(*origin_ca);
  PlainOrigin plain_origin;
  const std::string ca_file = "/tmp/srt-tls-bench-ca-" + std::to_string(getpid()) + ".pem";
  {
    UniqueFd f(open(ca_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    const std::string pem = srt::proxy::mitm::CertificatePem(origin_ca->cert.get());
    if (!f || write(f.get(), pem.data(), pem.size()) != static_cast<ssize_t>(pem.size())) {
      Die("write " + ca_file);
    }
  }
  srt::proxy::mitm::TlsEngine::Options engine_options;
  engine_options.extra_ca_cert_paths = {ca_file};
  srt::Result<std::unique_ptr<srt::proxy::mitm::TlsEngine>> engine =
      srt::proxy::mitm::TlsEngine::Create(engine_options);
  (void)unlink(ca_file.c_str());
  if (!engine) Die(engine.error().message());
  std::vector<srt::proxy::mitm::X509Ptr> proxy_ca =
      srt::proxy::mitm::ReadPemCertificates((*engine)->ca_pem());

  // Two proxies on one loop thread: one opaque, one terminating.
  srt::NetworkPolicy policy;
  srt::Result<srt::DomainPattern> allow = srt::ParseDomainPattern(
      "127.0.0.1:" + std::to_string(origin.port()), srt::PatternList::kAllow);
  if (!allow) Die(allow.error().message());
  policy.allowed.push_back({*allow, "127.0.0.1", ""});
  srt::Result<srt::DomainPattern> allow_plain = srt::ParseDomainPattern(
      "127.0.0.1:" + std::to_string(plain_origin.port()), srt::PatternList::kAllow);
  if (!allow_plain) Die(allow_plain.error().message());
  policy.allowed.push_back({*allow_plain, "127.0.0.1", ""});
  std::shared_ptr<const NetworkRules> rules = BuildNetworkRules(policy, {});
  LoopThread thread("srt-tls-bench");
  if (!thread.Start()) Die("loop thread");
  uint16_t opaque_port = 0;
  uint16_t terminating_port = 0;
  UniqueFd opaque_listener = Listen(opaque_port);
  UniqueFd terminating_listener = Listen(terminating_port);
  std::unique_ptr<ProxyServer> opaque;
  std::unique_ptr<ProxyServer> terminating;
  std::shared_ptr<srt::proxy::mitm::TlsEngine> shared_engine = std::move(*engine);
  std::promise<void> made;
  pid_t loop_tid = 0;
  thread.loop().RunInLoop([&] {
    for (bool tls : {false, true}) {
      ProxyOptions options;
      if (tls) {
        TlsTermination t;
        t.engine = shared_engine;
        options.tls = std::move(t);
      }
      srt::Result<std::unique_ptr<Resolver>> resolver = CreateAresResolver(thread.loop(), {});
      if (!resolver) Die(resolver.error().message());
      srt::Result<std::unique_ptr<ProxyServer>> server =
          ProxyServer::Create(thread.loop(), std::move(options), std::move(*resolver), rules);
      if (!server ||
          !(*server)->AddListener(std::move(tls ? terminating_listener : opaque_listener),
                                  ListenerRole::kProxy)) {
        Die("proxy server");
      }
      (tls ? terminating : opaque) = std::move(*server);
    }
    loop_tid = static_cast<pid_t>(gettid());
    made.set_value();
  });
  made.get_future().wait();

  std::vector<Contender> contenders = {
      {"direct", 0, origin_ca->cert.get(), {}, {}, {}, {}, {}},
      {"opaque", opaque_port, origin_ca->cert.get(), {}, {}, {}, {}, {}},
      {"terminated", terminating_port, proxy_ca[0].get(), {}, {}, {}, {}, {}}};
  const std::string bulk = "/bulk/" + std::to_string(bulk_mib * 1024 * 1024);
  for (int round = 0; run_tls && round < rounds; ++round) {
    std::vector<double> round_bulk(contenders.size());
    for (size_t k = 0; k < contenders.size(); ++k) {
      Contender& c = contenders[(k + static_cast<size_t>(round)) % contenders.size()];
      Client client(origin.port(), c.proxy_port, c.ca);
      auto start = Clock::now();
      for (int i = 0; i < requests; ++i) client.Get("/small");
      const double secs = std::chrono::duration<double>(Clock::now() - start).count();
      c.rates.push_back(requests / secs);
      start = Clock::now();
      const double cpu_before = ThreadCpuNs(loop_tid);
      const double all_before = ProcessCpuNs();
      const size_t got = client.Get(bulk);
      const double bulk_secs = std::chrono::duration<double>(Clock::now() - start).count();
      const double gib = static_cast<double>(got) / (1024.0 * 1024.0 * 1024.0);
      c.proxy_ms_per_gib.push_back((ThreadCpuNs(loop_tid) - cpu_before) / 1e6 / gib);
      c.all_ms_per_gib.push_back((ProcessCpuNs() - all_before) / 1e6 / gib);
      c.mibps.push_back(static_cast<double>(got) / (1024.0 * 1024.0) / bulk_secs);
      round_bulk[static_cast<size_t>(&c - contenders.data())] = c.mibps.back();
    }
    for (size_t k = 1; k < contenders.size(); ++k) {
      contenders[k].bulk_ratios.push_back(round_bulk[k] / round_bulk[0]);
    }
  }
  if (run_tls) {
    std::printf(
        "srt-tls-bench: %d rounds, %d keep-alive requests and one %zu MiB GET per round "
        "(medians)\n",
        rounds, requests, bulk_mib);
    std::printf("%-12s %14s %16s\n", "contender", "requests/s", "bulk MiB/s");
    for (const Contender& c : contenders) {
      std::printf("%-12s %14.0f %16.1f\n", c.name, Median(c.rates), Median(c.mibps));
    }
    const double direct_rate = Median(contenders[0].rates);
    const double direct_bulk = Median(contenders[0].mibps);
    std::printf(
        "terminated / direct: %.2f (requests), %.2f (bulk); opaque / direct: %.2f, %.2f\n",
        Median(contenders[2].rates) / direct_rate, Median(contenders[2].mibps) / direct_bulk,
        Median(contenders[1].rates) / direct_rate, Median(contenders[1].mibps) / direct_bulk);
    std::printf(
        "bulk, median of per-round ratios: terminated / direct %.2f (target >= 0.70), "
        "opaque / direct %.2f\n",
        Median(contenders[2].bulk_ratios), Median(contenders[1].bulk_ratios));
    std::printf("proxy thread CPU per GiB of bulk (medians): terminated %.0f ms, opaque %.0f ms\n",
                Median(contenders[2].proxy_ms_per_gib), Median(contenders[1].proxy_ms_per_gib));
    // With every thread busy on 2 vCPUs the throughput is 2 CPUs over the CPU per byte, so
    // this is the best ratio the machine allows, whatever the scheduling.
    const double all_direct = Median(contenders[0].all_ms_per_gib);
    const double all_terminated = Median(contenders[2].all_ms_per_gib);
    std::printf(
        "all threads' CPU per GiB of bulk (client + origin + proxy, medians): direct %.0f ms, "
        "opaque %.0f ms, terminated %.0f ms; CPU-bound ceiling of terminated / direct: %.2f\n",
        all_direct, Median(contenders[1].all_ms_per_gib), all_terminated,
        all_direct / all_terminated);

    // Memory per idle terminated tunnel: `tunnels` connections each after a 1 MiB GET, then
    // idle; the heap they hold, terminated minus direct (the clients' and the origin's TLS
    // state is in both), is the proxy's: its session and two TLS streams.
    std::vector<double> held(2);
    for (size_t k : {size_t{0}, size_t{2}}) {
      const double before = HeapInUse();
      {
        std::vector<std::unique_ptr<Client>> open;
        for (int i = 0; i < tunnels; ++i) {
          open.push_back(
              std::make_unique<Client>(origin.port(), contenders[k].proxy_port, contenders[k].ca));
          open.back()->Get("/bulk/1048576");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        held[k == 0 ? 0 : 1] = (HeapInUse() - before) / tunnels;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::printf(
        "heap per idle tunnel after a 1 MiB GET (%d tunnels): direct %.1f KiB, terminated %.1f "
        "KiB; the proxy's share %.1f KiB (target <= 64 KiB: %s)\n",
        tunnels, held[0] / 1024, held[1] / 1024, (held[1] - held[0]) / 1024,
        held[1] - held[0] <= 64 * 1024 ? "PASS" : "MISS");
  }

  // Plain HTTP: the opaque proxy serves absolute-form requests too.
  std::vector<PlainContender> plain = {{"direct", 0, {}, {}, {}, {}},
                                       {"proxy", opaque_port, {}, {}, {}, {}}};
  for (int round = 0; run_plain && round < rounds; ++round) {
    std::vector<double> round_rates(plain.size());
    for (size_t k = 0; k < plain.size(); ++k) {
      PlainContender& c = plain[(k + static_cast<size_t>(round)) % plain.size()];
      {
        PlainClient client(plain_origin.port(), c.proxy_port);
        const auto start = Clock::now();
        const double cpu_before = ThreadCpuNs(loop_tid);
        for (int i = 0; i < requests; ++i) client.Get("/small");
        const double secs = std::chrono::duration<double>(Clock::now() - start).count();
        c.proxy_us_per_request.push_back((ThreadCpuNs(loop_tid) - cpu_before) / 1e3 / requests);
        c.rates.push_back(requests / secs);
        round_rates[static_cast<size_t>(&c - plain.data())] = requests / secs;
      }
      std::vector<double> setups;
      for (int i = 0; i < connections; ++i) {
        const auto start = Clock::now();
        PlainClient client(plain_origin.port(), c.proxy_port);
        client.Get("/small", /*close=*/true);
        setups.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
      c.setup_us.push_back(Median(setups));
    }
    plain[1].rate_ratios.push_back(round_rates[1] / round_rates[0]);
  }
  if (run_plain) {
    std::printf(
        "\nplain HTTP: %d rounds, %d keep-alive requests and %d fresh connections (connect, one "
        "GET, its answer) per round (medians)\n",
        rounds, requests, connections);
    std::printf("%-12s %14s %16s\n", "contender", "requests/s", "set-up us");
    for (const PlainContender& c : plain) {
      std::printf("%-12s %14.0f %16.1f\n", c.name, Median(c.rates), Median(c.setup_us));
    }
    const double plain_direct = Median(plain[0].setup_us);
    const double plain_proxy = Median(plain[1].setup_us);
    std::printf(
        "proxy / direct: %.2f (requests, ratio of medians; median of per-round ratios %.2f; target "
        ">= 0.70; the proxy adds %.1f us per request), "
        "set-up %.1f us = %.2fx direct + %.1f us (target <= 2x direct + 100 us: %s)\n",
        Median(plain[1].rates) / Median(plain[0].rates), Median(plain[1].rate_ratios),
        1e6 / Median(plain[1].rates) - 1e6 / Median(plain[0].rates), plain_proxy,
        plain_proxy / plain_direct, plain_proxy - plain_direct,
        plain_proxy <= 2 * plain_direct + 100 ? "PASS" : "MISS");
    std::printf("proxy thread CPU per keep-alive request (median): %.1f us\n",
                Median(plain[1].proxy_us_per_request));
  }
  // Real clients: each run is a program of its own making `requests` GETs on one kept-alive
  // connection. curl's rate is (requests - 1) over the difference between a run of `requests`
  // URLs and a run of one (its start-up and first connection cancel out); Python times its own
  // last requests - 1. Three views: unpinned (where the scheduler puts them), every thread on one
  // CPU (the CPU-bound view: no wake-up crosses CPUs, each request costs what its threads' CPU
  // does) and split (the client on one CPU, the origin's and proxy's threads on another: every
  // hand-off between client and server side wakes the other CPU).
  struct RealClient {
    const char* name;
    std::string exe;
  };
  std::vector<RealClient> real = {{"curl", FindOnPath("curl")}, {"python", FindPython()}};
  const cpu_set_t& allowed = AllowedCpus();
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(static_cast<size_t>(c), &allowed)) cpus.push_back(c);
  }
  constexpr size_t kViews = 3;
  const char* view_names[kViews] = {"unpinned", "one-cpu", "split"};
  const size_t views = cpus.size() >= 2 ? 3 : 2;
  std::vector<RealClientFigures> figures(real.size() * kViews);
  const std::string origin_url = "http://127.0.0.1:" + std::to_string(plain_origin.port());
  // One run: the wall seconds and the client's CPU (ns) of `n` - 1 kept-alive GETs; the proxy
  // thread's CPU, the rest of this process's (the origin's threads) and the connections the origin
  // accepted over the run of `n`.
  struct ClientSample {
    double secs = 0;
    double client_cpu_ns = 0;
    double proxy_cpu_ns = 0;
    double origin_cpu_ns = 0;
    int origin_connections = 0;
  };
  const auto run_client = [&](const RealClient& rc, uint16_t proxy_port, int cpu,
                              int n) -> ClientSample {
    ClientSample sample;
    double cpu_before = ThreadCpuNs(loop_tid);
    double process_before = ProcessCpuNs();
    int accepted_before = plain_origin.accepted();
    if (std::string(rc.name) == "curl") {
      const auto args = [&](int count) {
        std::vector<std::string> a = {rc.exe, "-q", "-s", "-S", "--fail", "-o", "/dev/null"};
        if (proxy_port != 0) {
          a.insert(a.end(), {"-x", "http://127.0.0.1:" + std::to_string(proxy_port)});
        } else {
          a.insert(a.end(), {"--noproxy", "*"});
        }
        a.push_back(origin_url + "/small[1-" + std::to_string(count) + "]");
        return a;
      };
      const ProgramRun one = RunProgram(args(1), cpu);
      cpu_before = ThreadCpuNs(loop_tid);
      process_before = ProcessCpuNs();
      accepted_before = plain_origin.accepted();
      const ProgramRun all = RunProgram(args(n), cpu);
      sample.secs = all.secs - one.secs;
      sample.client_cpu_ns = all.cpu_ns - one.cpu_ns;
    } else {
      const ProgramRun r =
          RunProgram({rc.exe, "-c", kPythonClient, std::to_string(n),
                      std::to_string(plain_origin.port()), std::to_string(proxy_port)},
                     cpu);
      char* end = nullptr;
      sample.secs = std::strtod(r.out.c_str(), &end);
      sample.client_cpu_ns = std::strtod(end, nullptr) * 1e9;
    }
    sample.proxy_cpu_ns = ThreadCpuNs(loop_tid) - cpu_before;
    sample.origin_cpu_ns = ProcessCpuNs() - process_before - sample.proxy_cpu_ns;
    sample.origin_connections = plain_origin.accepted() - accepted_before;
    return sample;
  };
  const int client_requests = std::max(requests, 2);
  for (int round = 0; run_clients && round < rounds; ++round) {
    for (size_t k = 0; k < real.size(); ++k) {
      if (real[k].exe.empty()) continue;
      for (size_t v = 0; v < views; ++v) {
        RealClientFigures& f = figures[(k * kViews) + v];
        const int client_cpu = v == 0 ? -1 : v == 1 ? cpus[0] : cpus[1];
        const int server_cpu = v == 0 ? -1 : cpus[0];
        PinThread(loop_tid, server_cpu);
        plain_origin.PinTo(server_cpu);
        double round_rates[2] = {0, 0};
        double round_cpu_us[2] = {0, 0};  // client + origin (+ proxy) per request
        for (size_t j = 0; j < 2; ++j) {
          const size_t c = (j + static_cast<size_t>(round)) % 2;
          const ClientSample sample =
              run_client(real[k], c == 1 ? opaque_port : 0, client_cpu, client_requests);
          f.most_origin_connections =
              std::max(f.most_origin_connections, sample.origin_connections);
          const double client_us = sample.client_cpu_ns / 1e3 / (client_requests - 1);
          const double origin_us = sample.origin_cpu_ns / 1e3 / client_requests;
          const double proxy_us = sample.proxy_cpu_ns / 1e3 / client_requests;
          f.client_us[c].push_back(client_us);
          f.origin_us[c].push_back(origin_us);
          if (c == 1) f.proxy_us_per_request.push_back(proxy_us);
          round_cpu_us[c] = client_us + origin_us + (c == 1 ? proxy_us : 0);
          // curl's difference of two runs can be lost in the noise: no figure this round
          if (sample.secs <= 0) continue;
          round_rates[c] = (client_requests - 1) / sample.secs;
          f.rates[c].push_back(round_rates[c]);
        }
        if (round_rates[0] > 0 && round_rates[1] > 0) {
          f.ratios.push_back(round_rates[1] / round_rates[0]);
        }
        if (round_cpu_us[0] > 0 && round_cpu_us[1] > 0) {
          f.cpu_ratios.push_back(round_cpu_us[0] / round_cpu_us[1]);
        }
      }
    }
  }
  PinThread(loop_tid, -1);
  plain_origin.PinTo(-1);
  if (run_clients) {
    std::printf(
        "\nplain HTTP keep-alive with real clients: %d rounds, %d GETs of a 100-byte body on one "
        "connection per run, the client a program of its own (medians; one-cpu: every thread on "
        "CPU "
        "%d; split: the client on CPU %d, the origin and the proxy on CPU %d)\n",
        rounds, client_requests, cpus[0], cpus.size() >= 2 ? cpus[1] : -1, cpus[0]);
    std::printf("%-7s %-9s %12s %12s %10s %10s %13s %17s %7s\n", "client", "view", "direct req/s",
                "proxy req/s", "direct us", "proxy +us", "proxy/direct", "per-round min-max",
                "conns");
    for (size_t k = 0; k < real.size(); ++k) {
      if (real[k].exe.empty()) {
        std::printf("%-7s not found, skipped\n", real[k].name);
        continue;
      }
      for (size_t v = 0; v < views; ++v) {
        const RealClientFigures& f = figures[(k * kViews) + v];
        const double direct = Median(f.rates[0]);
        const double proxied = Median(f.rates[1]);
        const auto [lo, hi] = std::minmax_element(f.ratios.begin(), f.ratios.end());
        const bool any = !f.ratios.empty();
        std::printf("%-7s %-9s %12.0f %12.0f %10.1f %10.1f %13.2f %8.2f-%-8.2f %7d\n", real[k].name,
                    view_names[v], direct, proxied, direct > 0 ? 1e6 / direct : 0,
                    direct > 0 && proxied > 0 ? (1e6 / proxied) - (1e6 / direct) : 0,
                    any ? Median(f.ratios) : 0, any ? *lo : 0, any ? *hi : 0,
                    f.most_origin_connections);
      }
    }
    std::printf(
        "CPU us per request (medians): the client program, the origin's threads, the proxy "
        "thread; cpu-bound = direct's client + origin over proxied's client + origin + proxy\n");
    std::printf("%-7s %-9s %14s %14s %14s %14s %11s %10s\n", "client", "view", "client direct",
                "client proxied", "origin direct", "origin proxied", "proxy", "cpu-bound");
    for (size_t k = 0; k < real.size(); ++k) {
      if (real[k].exe.empty()) continue;
      for (size_t v = 0; v < views; ++v) {
        const RealClientFigures& f = figures[(k * kViews) + v];
        std::printf("%-7s %-9s %14.1f %14.1f %14.1f %14.1f %11.1f %10.2f\n", real[k].name,
                    view_names[v], Median(f.client_us[0]), Median(f.client_us[1]),
                    Median(f.origin_us[0]), Median(f.origin_us[1]), Median(f.proxy_us_per_request),
                    Median(f.cpu_ratios));
      }
    }
    for (size_t k = 0; k < real.size(); ++k) {
      if (real[k].exe.empty()) continue;
      std::printf("%s, proxy / direct (median of per-round ratios, target >= 0.70):", real[k].name);
      for (size_t v = 0; v < views; ++v) {
        const double r = Median(figures[(k * kViews) + v].ratios);
        std::printf(" %s %.2f %s%s", view_names[v], r, r >= 0.7 ? "PASS" : "MISS",
                    v + 1 < views ? "," : "");
      }
      // The one-cpu view's CPU: no wake-up of an idle CPU inflates it.
      const RealClientFigures& one = figures[(k * kViews) + 1];
      std::printf("; cpu-bound %.2f, proxy thread CPU %.1f us per request (one-cpu)\n",
                  Median(one.cpu_ratios), Median(one.proxy_us_per_request));
    }
  }
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) == 3)
    std::printf("load average %.2f %.2f %.2f\n", load[0], load[1], load[2]);

  std::promise<void> gone;
  thread.loop().RunInLoop([&] {
    opaque.reset();
    terminating.reset();
    gone.set_value();
  });
  gone.get_future().wait();
  thread.Stop();
  return 0;
}
