// SPDX-License-Identifier: Apache-2.0
// support/fake_control_plane.cc: spawning, scripting and reaping the fake control plane.
#include "poller/support/fake_control_plane.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>

#include "base/ascii.h"
#include "support/child_process.h"

extern char** environ;

namespace srt::testing {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr int kReadyFd = 3;  // the child's end of the readiness pipe

using srt::ascii::EqualsIgnoreCase;

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Waits until fd is ready for `events` or the deadline passes.
Result<void> WaitFd(int fd, short events, Clock::time_point deadline, std::string_view what) {
  while (true) {
    pollfd pfd{fd, events, 0};
    int r = ::poll(&pfd, 1, RemainingMs(deadline));
    if (r > 0) {
      return Ok();
    }
    if (r == 0) {
      return MakeError(Errc::kSystem, std::string(what) + ": timed out");
    }
    if (errno != EINTR) {
      return SysError(std::string(what) + ": poll");
    }
  }
}

// RFC 9112 §7.1: chunk-size [ext] CRLF data CRLF ... 0 CRLF trailers CRLF.
Result<std::string> Dechunk(std::string_view in) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t eol = in.find("\r\n", pos);
    if (eol == std::string_view::npos) {
      return MakeError(Errc::kProtocol, "chunked body: truncated chunk header");
    }
    std::string size_text(in.substr(pos, eol - pos));
    size_t semi = size_text.find(';');
    if (semi != std::string::npos) {
      size_text.resize(semi);
    }
    char* end = nullptr;
    unsigned long size = std::strtoul(size_text.c_str(), &end, 16);
    if (size_text.empty() || end == size_text.c_str()) {
      return MakeError(Errc::kProtocol, "chunked body: bad chunk size '" + size_text + "'");
    }
    pos = eol + 2;
    if (size == 0) {
      return out;
    }
    if (in.size() - pos < size + 2) {
      return MakeError(Errc::kProtocol, "chunked body: truncated chunk");
    }
    out.append(in.substr(pos, size));
    pos += size + 2;
  }
}

Result<HttpResponse> ParseResponse(const std::string& raw) {
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) {
    return MakeError(Errc::kProtocol, "response without a complete header (" +
                                          std::to_string(raw.size()) + " bytes)");
  }
  HttpResponse resp;
  size_t line_end = raw.find("\r\n");
  std::string status_line = raw.substr(0, line_end);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) {
    return MakeError(Errc::kProtocol, "bad status line '" + status_line + "'");
  }
  resp.status = std::atoi(status_line.c_str() + 9);
  size_t pos = line_end + 2;
  while (pos < head_end) {
    size_t eol = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, eol - pos);
    pos = eol + 2;
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      return MakeError(Errc::kProtocol, "bad header line '" + line + "'");
    }
    std::string value = line.substr(colon + 1);
    size_t first = value.find_first_not_of(" \t");
    value = first == std::string::npos ? "" : value.substr(first);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
      value.pop_back();
    }
    resp.headers.push_back({line.substr(0, colon), value});
  }
  std::string_view body = std::string_view(raw).substr(head_end + 4);
  std::optional<std::string> te = resp.Header("Transfer-Encoding");
  if (te && EqualsIgnoreCase(*te, "chunked")) {
    SRT_ASSIGN_OR_RETURN(resp.body, Dechunk(body));
    return resp;
  }
  if (std::optional<std::string> cl = resp.Header("Content-Length")) {
    size_t n = std::strtoul(cl->c_str(), nullptr, 10);
    if (body.size() < n) {
      return MakeError(Errc::kProtocol, "body shorter than Content-Length " + *cl);
    }
    body = body.substr(0, n);
  }
  resp.body = std::string(body);
  return resp;
}

// `name` from PATH (resolved before fork: execvp may allocate).
std::optional<std::string> FindInPath(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return IsExecutable(name) ? std::optional<std::string>(name) : std::nullopt;
  }
  // NOLINTNEXTLINE(concurrency-mt-unsafe): nothing in the tests calls setenv concurrently.
  const char* path = std::getenv("PATH");
  std::string p = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) {
      end = p.size();
    }
    if (end > start) {
      std::string candidate = p.substr(start, end - start) + "/" + name;
      if (IsExecutable(candidate)) {
        return candidate;
      }
    }
    start = end + 1;
  }
  return std::nullopt;
}

// Runs `binary` with `argv` to completion, stdin from /dev/null, stdout onto `out_fd` and stderr
// onto `err_fd` (-1: ours); its exit status (128 + signal if killed) or an error.
Result<int> RunToExit(const std::string& binary, const std::vector<std::string>& argv, int out_fd,
                      int err_fd) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) {
    cargv.push_back(const_cast<char*>(a.c_str()));
  }
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  if (err_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  }
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, binary.c_str(), &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return SysError("posix_spawn '" + binary + "'", rc);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return SysError("waitpid");
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A CA and a server certificate for 127.0.0.1/localhost, made with the openssl CLI in `dir`.
Result<void> MakeTlsMaterial(const std::string& dir) {
  const std::string log = dir + "/openssl.log";
  const std::string ext = dir + "/server.ext";
  {
    UniqueFd f(::open(ext.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!f) {
      return SysError("open '" + ext + "'");
    }
    static constexpr std::string_view kExt =
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
    if (::write(f.get(), kExt.data(), kExt.size()) != static_cast<ssize_t>(kExt.size())) {
      return SysError("write '" + ext + "'");
    }
  }
  const std::vector<std::vector<std::string>> steps = {
      {"openssl",
       "req",
       "-x509",
       "-newkey",
       "ec",
       "-pkeyopt",
       "ec_paramgen_curve:prime256v1",
       "-nodes",
       "-keyout",
       dir + "/ca.key",
       "-out",
       dir + "/ca.pem",
       "-days",
       "2",
       "-subj",
       "/CN=srt fake control plane test CA",
       "-addext",
       "basicConstraints=critical,CA:TRUE",
       "-addext",
       "keyUsage=critical,keyCertSign,cRLSign"},
      {"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
       "-keyout", dir + "/server.key", "-out", dir + "/server.csr", "-subj", "/CN=127.0.0.1"},
      {"openssl", "x509", "-req", "-in", dir + "/server.csr", "-CA", dir + "/ca.pem", "-CAkey",
       dir + "/ca.key", "-CAcreateserial", "-out", dir + "/server.pem", "-days", "2", "-extfile",
       ext},
  };
  std::optional<std::string> openssl = FindInPath("openssl");
  if (!openssl) {
    return MakeError(Errc::kNotFound, "'openssl' is not on PATH");
  }
  UniqueFd log_fd(::open(log.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (!log_fd) {
    return SysError("open '" + log + "'");
  }
  for (const auto& argv : steps) {
    SRT_ASSIGN_OR_RETURN(int status, RunToExit(*openssl, argv, log_fd.get(), log_fd.get()));
    if (status != 0) {
      return MakeError(Errc::kSystem, "openssl " + argv[1] + " exited with " +
                                          std::to_string(status) + ": " +
                                          ReadWholeFd(log_fd.get()));
    }
  }
  return Ok();
}

// The interpreter's real binary (sys.executable). PATH may hold a wrapper script instead (pyenv
// shims run python as their child), and then our pid would not be the fake's.
Result<std::string> ResolveInterpreter(const std::string& python) {
  UniqueFd out(::memfd_create("srt-test-python-path", MFD_CLOEXEC));
  if (!out) {
    return SysError("memfd_create");
  }
  SRT_ASSIGN_OR_RETURN(
      int status, RunToExit(python, {python, "-c", "import sys; sys.stdout.write(sys.executable)"},
                            out.get(), -1));
  std::string path = ReadWholeFd(out.get());
  if (status != 0 || !IsExecutable(path)) {
    return MakeError(Errc::kNotFound,
                     "'" + python + "' did not name its interpreter (got '" + path + "')");
  }
  return path;
}

struct Spawned {
  pid_t pid;
  UniqueFd log;
  UniqueFd stdin_write;
  UniqueFd ready_read;
};

Result<Spawned> Spawn(const std::vector<std::string>& args) {
  UniqueFd log(::memfd_create("srt-test-fake-control-plane-log", MFD_CLOEXEC));
  if (!log) {
    return SysError("memfd_create");
  }
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    return SysError("pipe2");
  }
  UniqueFd stdin_read(p[0]);
  UniqueFd stdin_write(p[1]);
  if (::pipe2(p, O_CLOEXEC) != 0) {
    return SysError("pipe2");
  }
  UniqueFd ready_read(p[0]);
  UniqueFd ready_write(p[1]);
  SRT_ASSIGN_OR_RETURN(pid_t pid, SpawnChild(args, {{stdin_read.get(), STDIN_FILENO},
                                                    {log.get(), STDOUT_FILENO},
                                                    {log.get(), STDERR_FILENO},
                                                    {ready_write.get(), kReadyFd}}));
  return Spawned{pid, std::move(log), std::move(stdin_write), std::move(ready_read)};
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

}  // namespace

// ---- HTTP client ----

std::optional<std::string> HttpResponse::Header(std::string_view name) const {
  for (const HttpHeader& h : headers) {
    if (EqualsIgnoreCase(h.name, name)) {
      return h.value;
    }
  }
  return std::nullopt;
}

Result<HttpResponse> HttpCall(const HttpRequest& request) {
  const auto deadline = Clock::now() + request.timeout;
  const std::string where =
      request.method + " " + request.host + ":" + std::to_string(request.port) + request.target;
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s) {
    return SysError("socket");
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(request.port);
  if (::inet_pton(AF_INET, request.host.c_str(), &addr.sin_addr) != 1) {
    return MakeError(Errc::kInvalidArgument, "'" + request.host + "' is not an IPv4 address");
  }
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != EINPROGRESS) {
      return SysError(where + ": connect");
    }
    SRT_RETURN_IF_ERROR(WaitFd(s.get(), POLLOUT, deadline, where + ": connect"));
    int err = 0;
    socklen_t len = sizeof(err);
    if (::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      return SysError(where + ": connect", err);
    }
  }
  std::string out = request.method + " " + request.target + " HTTP/1.1\r\nHost: " + request.host +
                    ":" + std::to_string(request.port) + "\r\nConnection: close\r\n";
  for (const HttpHeader& h : request.headers) {
    out += h.name + ": " + h.value + "\r\n";
  }
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT") {
    out += "Content-Length: " + std::to_string(request.body.size()) + "\r\n";
  }
  out += "\r\n";
  out += request.body;
  size_t sent = 0;
  while (sent < out.size()) {
    ssize_t n = ::send(s.get(), out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      SRT_RETURN_IF_ERROR(WaitFd(s.get(), POLLOUT, deadline, where + ": send"));
    } else {
      return SysError(where + ": send");
    }
  }
  std::string raw;
  char buf[16384];
  while (true) {
    ssize_t n = ::recv(s.get(), buf, sizeof(buf), 0);
    if (n > 0) {
      raw.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno == EAGAIN || errno == EINTR) {
      SRT_RETURN_IF_ERROR(WaitFd(s.get(), POLLIN, deadline, where + ": recv"));
    } else if (errno == ECONNRESET && raw.empty()) {
      return SysError(where + ": recv");
    } else if (errno == ECONNRESET) {
      break;
    } else {
      return SysError(where + ": recv");
    }
  }
  Result<HttpResponse> resp = ParseResponse(raw);
  if (!resp) {
    return std::move(resp).error().Wrap(where);
  }
  return resp;
}

bool WaitFor(const std::function<bool()>& predicate, std::chrono::milliseconds timeout,
             std::chrono::milliseconds interval) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (predicate()) {
      return true;
    }
    std::this_thread::sleep_for(interval);
  }
  return predicate();
}

// ---- FakeControlPlane ----

Result<std::unique_ptr<FakeControlPlane>> FakeControlPlane::Start(const Options& options) {
  std::unique_ptr<FakeControlPlane> fake(new FakeControlPlane());
  fake->options_ = options;
  std::optional<std::string> python =
      FindInPath(options.python.empty() ? "python3" : options.python);
  if (!python) {
    return MakeError(Errc::kNotFound, "python3 is not on PATH");
  }
  SRT_ASSIGN_OR_RETURN(std::string interpreter, ResolveInterpreter(*python));
  std::string script = options.script;
  if (script.empty()) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): nothing in the tests calls setenv concurrently.
    const char* env = std::getenv("SRT_FAKE_CONTROL_PLANE");
    script = env != nullptr && *env != '\0' ? env : SRT_FAKE_CONTROL_PLANE_SCRIPT;
  }
  if (::access(script.c_str(), R_OK) != 0) {
    return SysError("fake control plane script '" + script + "'");
  }
  char ping[32];
  std::snprintf(ping, sizeof(ping), "%g", options.ping_interval_seconds);
  std::vector<std::string> args = {interpreter,       script,
                                   "--port",          "0",
                                   "--ready-fd",      std::to_string(kReadyFd),
                                   "--stdin-watch",   "on",
                                   "--env-id",        options.environment_id,
                                   "--env-key",       options.environment_key,
                                   "--ttl-seconds",   std::to_string(options.ttl_seconds),
                                   "--ping-interval", ping};
  if (options.tls) {
    const char* tmp = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe)
    std::string templ =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/srt-fake-cp-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      return SysError("mkdtemp '" + templ + "'");
    }
    fake->temp_dir_ = templ;
    SRT_RETURN_IF_ERROR(MakeTlsMaterial(templ));
    fake->ca_file_ = templ + "/ca.pem";
    args.insert(args.end(),
                {"--tls-cert", templ + "/server.pem", "--tls-key", templ + "/server.key"});
  }
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());

  SRT_ASSIGN_OR_RETURN(Spawned child, Spawn(args));
  fake->pid_ = child.pid;
  fake->log_ = std::move(child.log);
  fake->stdin_write_ = std::move(child.stdin_write);

  // "READY <port> <control_port>\n" on the ready pipe.
  const auto deadline = Clock::now() + options.startup_timeout;
  std::string line;
  while (line.find('\n') == std::string::npos) {
    Result<void> ready = WaitFd(child.ready_read.get(), POLLIN, deadline, "fake control plane");
    if (!ready) {
      return std::move(ready).error().Wrap("waiting for READY; its log:\n" + fake->log());
    }
    char buf[128];
    ssize_t n = ::read(child.ready_read.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return MakeError(Errc::kSystem,
                       "fake control plane exited before READY; its log:\n" + fake->log());
    }
    line.append(buf, static_cast<size_t>(n));
  }
  unsigned port = 0;
  unsigned control_port = 0;
  if (std::sscanf(line.c_str(), "READY %u %u", &port, &control_port) != 2 || port == 0 ||
      port > 65535 || control_port == 0 || control_port > 65535) {
    return MakeError(Errc::kProtocol, "fake control plane: bad ready line '" + line + "'");
  }
  fake->port_ = static_cast<uint16_t>(port);
  fake->control_port_ = static_cast<uint16_t>(control_port);
  return fake;
}

FakeControlPlane::~FakeControlPlane() { Stop(); }

void FakeControlPlane::Stop() {
  stdin_write_.reset();
  if (pid_ > 0) {
    TerminateChild(pid_, std::chrono::milliseconds(2000));
    pid_ = -1;
  }
  if (!temp_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
    temp_dir_.clear();
  }
}

std::string FakeControlPlane::base_url() const {
  return std::string(options_.tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::string FakeControlPlane::log() const { return log_ ? ReadWholeFd(log_.get()) : std::string(); }

Result<nlohmann::json> FakeControlPlane::Control(std::string_view method, std::string_view path,
                                                 const nlohmann::json& body) const {
  HttpRequest req;
  req.port = control_port_;
  req.method = std::string(method);
  req.target = std::string(path);
  if (!body.is_null()) {
    req.body = body.dump();
    req.headers.push_back({"Content-Type", "application/json"});
  }
  SRT_ASSIGN_OR_RETURN(HttpResponse resp, HttpCall(req));
  if (resp.status < 200 || resp.status > 299) {
    return MakeError(Errc::kProtocol, "fake control plane: " + req.method + " " + req.target +
                                          ": HTTP " + std::to_string(resp.status) + ": " +
                                          resp.body);
  }
  json parsed = json::parse(resp.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return MakeError(Errc::kProtocol,
                     "fake control plane: " + req.target + ": answer is not JSON: " + resp.body);
  }
  return parsed;
}

Result<HttpResponse> FakeControlPlane::Api(std::string_view method, std::string_view target,
                                           std::string_view bearer, std::string body,
                                           std::vector<HttpHeader> extra_headers) const {
  if (options_.tls) {
    return MakeError(Errc::kUnsupported, "Api() speaks plain HTTP; the fake is in TLS mode");
  }
  HttpRequest req;
  req.port = port_;
  req.method = std::string(method);
  req.target = std::string(target);
  req.headers = {{"anthropic-version", "2023-06-01"},
                 {"anthropic-beta", "managed-agents-2026-04-01"}};
  if (!bearer.empty()) {
    req.headers.push_back({"Authorization", "Bearer " + std::string(bearer)});
  }
  if (!body.empty()) {
    req.headers.push_back({"Content-Type", "application/json"});
  }
  req.headers.insert(req.headers.end(), extra_headers.begin(), extra_headers.end());
  req.body = std::move(body);
  return HttpCall(req);
}

Result<FakeControlPlane::Enqueued> FakeControlPlane::Enqueue(const WorkOptions& options) const {
  json body = {{"data_type", options.data_type},
               {"with_secret", options.with_secret},
               {"metadata", options.metadata}};
  if (!options.session_id.empty()) {
    body["session_id"] = options.session_id;
  }
  if (!options.sessions_token.empty()) {
    body["sessions_token"] = options.sessions_token;
  }
  if (!options.work_id.empty()) {
    body["work_id"] = options.work_id;
  }
  if (!options.api_base_url.empty()) {
    body["api_base_url"] = options.api_base_url;
  }
  SRT_ASSIGN_OR_RETURN(json work, Control("POST", "/_fake/work", body));
  Enqueued out;
  out.work_id = work.at("id").get<std::string>();
  out.session_id = work.at("data").at("id").get<std::string>();
  if (work.at("sessions_token").is_string()) {
    out.sessions_token = work.at("sessions_token").get<std::string>();
  }
  if (work.at("secret").is_string()) {
    out.secret = work.at("secret").get<std::string>();
  }
  out.work = std::move(work);
  return out;
}

Result<nlohmann::json> FakeControlPlane::PutSession(const std::string& session_id,
                                                    nlohmann::json session) const {
  session["id"] = session_id;
  return Control("POST", "/_fake/sessions", session);
}

Result<nlohmann::json> FakeControlPlane::AppendEvents(const std::string& session_id,
                                                      const nlohmann::json& events) const {
  SRT_ASSIGN_OR_RETURN(
      json r, Control("POST", "/_fake/sessions/" + UrlEncode(session_id) + "/events",
                      json{{"events", events.is_array() ? events : json::array({events})}}));
  return r.at("data");
}

Result<nlohmann::json> FakeControlPlane::Events(const std::string& session_id) const {
  SRT_ASSIGN_OR_RETURN(json r,
                       Control("GET", "/_fake/sessions/" + UrlEncode(session_id) + "/events"));
  return r.at("data");
}

Result<nlohmann::json> FakeControlPlane::Results(const std::string& session_id) const {
  SRT_ASSIGN_OR_RETURN(json r,
                       Control("GET", "/_fake/sessions/" + UrlEncode(session_id) + "/results"));
  return r.at("data");
}

Result<nlohmann::json> FakeControlPlane::Session(const std::string& session_id) const {
  return Control("GET", "/_fake/sessions/" + UrlEncode(session_id));
}

Result<nlohmann::json> FakeControlPlane::Requests(const RequestFilter& filter) const {
  std::string q;
  auto add = [&q](std::string_view key, const std::string& value) {
    if (!value.empty()) {
      q += (q.empty() ? "?" : "&") + std::string(key) + "=" + UrlEncode(value);
    }
  };
  add("endpoint", filter.endpoint);
  add("method", filter.method);
  add("session", filter.session_id);
  add("work", filter.work_id);
  add("path_re", filter.path_regex);
  if (filter.since_seq > 0) {
    add("since", std::to_string(filter.since_seq));
  }
  SRT_ASSIGN_OR_RETURN(json r, Control("GET", "/_fake/requests" + q));
  return r.at("data");
}

Result<nlohmann::json> FakeControlPlane::Requests() const { return Requests(RequestFilter{}); }

Result<std::string> FakeControlPlane::AddFault(const Fault& fault) const {
  json spec = {
      {"kind", fault.kind}, {"status", fault.status}, {"count", fault.count}, {"skip", fault.skip}};
  auto add = [&spec](const char* key, const std::string& value) {
    if (!value.empty()) {
      spec[key] = value;
    }
  };
  add("endpoint", fault.endpoint);
  add("method", fault.method);
  add("path", fault.path_regex);
  add("session", fault.session_id);
  add("work", fault.work_id);
  if (fault.delay_ms > 0) {
    spec["delay_ms"] = fault.delay_ms;
  }
  if (fault.retry_after) {
    spec["retry_after"] = *fault.retry_after;
  }
  if (!fault.headers.empty()) {
    json h = json::object();
    for (const HttpHeader& header : fault.headers) {
      h[header.name] = header.value;
    }
    spec["headers"] = h;
  }
  if (fault.body) {
    spec["body"] = *fault.body;
  }
  if (fault.kind == "stream_drop") {
    spec["after_events"] = fault.after_events;
    spec["abrupt"] = fault.abrupt;
  }
  SRT_ASSIGN_OR_RETURN(json r, Control("POST", "/_fake/faults", spec));
  return r.at("data").at(0).at("id").get<std::string>();
}

Result<void> FakeControlPlane::ClearFaults() const {
  SRT_RETURN_IF_ERROR(Control("DELETE", "/_fake/faults"));
  return Ok();
}

Result<int> FakeControlPlane::DropStreams(const std::string& session_id, bool abrupt) const {
  SRT_ASSIGN_OR_RETURN(json r,
                       Control("POST", "/_fake/sessions/" + UrlEncode(session_id) + "/drop_streams",
                               json{{"abrupt", abrupt}}));
  return r.at("dropped").get<int>();
}

Result<void> FakeControlPlane::StreamError(const std::string& session_id,
                                           const nlohmann::json& error) const {
  json body = json::object();
  if (!error.is_null()) {
    body["error"] = error;
  }
  SRT_RETURN_IF_ERROR(
      Control("POST", "/_fake/sessions/" + UrlEncode(session_id) + "/stream_error", body));
  return Ok();
}

Result<nlohmann::json> FakeControlPlane::StopWork(const std::string& work_id, bool force) const {
  return Control("POST", "/_fake/stop_work", json{{"work_id", work_id}, {"force", force}});
}

Result<void> FakeControlPlane::StealLease(const std::string& work_id) const {
  SRT_RETURN_IF_ERROR(Control("POST", "/_fake/work/" + UrlEncode(work_id) + "/steal"));
  return Ok();
}

Result<nlohmann::json> FakeControlPlane::WorkState(const std::string& work_id) const {
  return Control("GET", "/_fake/work/" + UrlEncode(work_id));
}

Result<nlohmann::json> FakeControlPlane::AddSkill(const Skill& skill) const {
  json files = json::object();
  for (const auto& [path, file] : skill.files) {
    files[path] = {{"content", file.content}, {"mode", file.mode}};
  }
  json members = json::array();
  for (const SkillMember& m : skill.members) {
    members.push_back({{"name", m.name},
                       {"type", m.type},
                       {"content", m.content},
                       {"target", m.target},
                       {"mode", m.mode}});
  }
  json body = {{"format", skill.format}, {"files", files}, {"members", members}};
  if (!skill.skill_id.empty()) {
    body["skill_id"] = skill.skill_id;
  }
  if (!skill.version.empty()) {
    body["version"] = skill.version;
  }
  if (!skill.name.empty()) {
    body["name"] = skill.name;
  }
  if (!skill.top_dir.empty()) {
    body["top_dir"] = skill.top_dir;
  }
  return Control("POST", "/_fake/skills", body);
}

Result<nlohmann::json> FakeControlPlane::PutMemoryStore(
    const std::string& store_id, const std::map<std::string, std::string>& memories) const {
  json contents = json::object();
  for (const auto& [path, content] : memories) {
    contents[path] = content;
  }
  return Control("POST", "/_fake/memory_stores", json{{"id", store_id}, {"memories", contents}});
}

Result<std::map<std::string, std::string>> FakeControlPlane::MemoryStoreContents(
    const std::string& store_id) const {
  SRT_ASSIGN_OR_RETURN(json store, MemoryStore(store_id));
  std::map<std::string, std::string> out;
  for (const json& memory : store.at("memories")) {
    out[memory.at("path").get<std::string>()] = memory.at("content").get<std::string>();
  }
  return out;
}

Result<nlohmann::json> FakeControlPlane::MemoryStore(const std::string& store_id) const {
  return Control("GET", "/_fake/memory_stores/" + UrlEncode(store_id));
}

Result<void> FakeControlPlane::Configure(const nlohmann::json& settings) const {
  SRT_RETURN_IF_ERROR(Control("POST", "/_fake/config", settings));
  return Ok();
}

Result<void> FakeControlPlane::Reset() const {
  SRT_RETURN_IF_ERROR(Control("POST", "/_fake/reset"));
  return Ok();
}

Result<nlohmann::json> FakeControlPlane::WaitForRequest(const RequestFilter& filter,
                                                        std::chrono::milliseconds timeout) const {
  SRT_ASSIGN_OR_RETURN(json all, WaitForRequests(filter, 1, timeout));
  return all.at(0);
}

namespace {

// Polls `fetch` until `done` holds for its value; that value, the first fetch error, or (after
// `timeout`) an error made by `timed_out` from the last value.
Result<json> PollUntil(const std::function<Result<json>()>& fetch,
                       const std::function<bool(const json&)>& done,
                       std::chrono::milliseconds timeout,
                       const std::function<std::string(const json&)>& timed_out) {
  json last;
  std::optional<Error> error;
  bool ok = WaitFor(
      [&] {
        Result<json> r = fetch();
        if (!r) {
          error = r.error();
          return true;
        }
        last = std::move(*r);
        return done(last);
      },
      timeout);
  if (error) {
    return *error;
  }
  if (!ok) {
    return MakeError(Errc::kInternal, timed_out(last));
  }
  return last;
}

}  // namespace

Result<nlohmann::json> FakeControlPlane::WaitForRequests(const RequestFilter& filter, size_t count,
                                                         std::chrono::milliseconds timeout) const {
  return PollUntil([&] { return Requests(filter); },
                   [&](const json& all) { return all.size() >= count; }, timeout,
                   [&](const json& all) {
                     return "timed out waiting for " + std::to_string(count) +
                            " request(s) of endpoint '" + filter.endpoint + "'; saw " +
                            std::to_string(all.size());
                   });
}

Result<nlohmann::json> FakeControlPlane::WaitForResults(const std::string& session_id, size_t count,
                                                        std::chrono::milliseconds timeout) const {
  return PollUntil([&] { return Results(session_id); },
                   [&](const json& all) { return all.size() >= count; }, timeout,
                   [&](const json& all) {
                     return "timed out waiting for " + std::to_string(count) +
                            " result(s) in session '" + session_id + "'; have: " + all.dump();
                   });
}

Result<nlohmann::json> FakeControlPlane::WaitForWorkState(const std::string& work_id,
                                                          std::string_view state,
                                                          std::chrono::milliseconds timeout) const {
  return PollUntil([&] { return WorkState(work_id); },
                   [&](const json& work) { return work.at("state") == state; }, timeout,
                   [&](const json& work) {
                     return "timed out waiting for work '" + work_id + "' to be '" +
                            std::string(state) + "'; it is " +
                            work.value("state", std::string("?"));
                   });
}

Result<void> FakeControlPlane::WaitForStreams(const std::string& session_id, int count,
                                              std::chrono::milliseconds timeout) const {
  SRT_RETURN_IF_ERROR(PollUntil(
      [&] { return Session(session_id); },
      [&](const json& session) { return session.at("streams").get<int>() == count; }, timeout,
      [&](const json& session) {
        return "timed out waiting for " + std::to_string(count) + " stream(s) of session '" +
               session_id + "'; have " + std::to_string(session.at("streams").get<int>());
      }));
  return Ok();
}

}  // namespace srt::testing
