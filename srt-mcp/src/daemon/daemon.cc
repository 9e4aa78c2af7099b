// SPDX-License-Identifier: Apache-2.0
// srt-mcp/daemon/daemon.cc: the listener, client connections (HTTP/1.1 with keep-alive, SSE),
// MCP sessions over sandboxed stdio servers, HTTP routes, /healthz, and the drain on shutdown.
// Everything here runs on the loop thread but for the supervisor threads (server_process.h).
#include "daemon/daemon.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "base/strings.h"
#include "base/system_text.h"
#include "base/unique_fd.h"
#include "daemon/server_process.h"
#include "http/chunked_decoder.h"
#include "http/head_parser.h"
#include "http/response_writer.h"
#include "loop/event_loop.h"
#include "protocol/checks.h"
#include "protocol/jsonrpc.h"
#include "protocol/sse.h"
#include "protocol/streams.h"
#include "sys/fd.h"
#include "sys/random_hex.h"

namespace srt::mcp {
namespace {

// True if a segment of `path` is "." or ".." once %2e/%2E is read as '.'.
bool HasDotSegment(std::string_view path) {
  std::string segment;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (segment == "." || segment == "..") return true;
      segment.clear();
    } else if (path[i] == '%' && i + 2 < path.size() && path[i + 1] == '2' &&
               (path[i + 2] == 'e' || path[i + 2] == 'E')) {
      segment += '.';
      i += 2;
    } else {
      segment += path[i];
    }
  }
  return false;
}

using Clock = std::chrono::steady_clock;
using proxy::EventLoop;
using proxy::Handler;
using HttpRequest = proxy::http::Request;

constexpr size_t kReadChunk = size_t{64} * 1024;
constexpr size_t kMaxStderrLine = 4096;
// A server's stderr lines are logged at most this many at once, then at kStderrLinesPerSecond
// (a token bucket per session); the rest are counted in a server_stderr_suppressed record.
constexpr double kStderrBurst = 100;
constexpr double kStderrLinesPerSecond = 10;
constexpr size_t kMaxOutBuffer = size_t{16} << 20;   // a client that stops reading is dropped
constexpr size_t kMaxKeptStreams = 64;               // complete streams kept for replay
constexpr size_t kMaxToServer = size_t{8} << 20;     // bytes queued for a server's stdin
constexpr std::chrono::milliseconds kCorkDelay{20};  // Conn::corked

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string NowIso() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  gmtime_r(&ts.tv_sec, &t);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1'000'000);
  return buf;
}

// A small adaptor: a loop Handler that calls a function.
class FnHandler final : public Handler {
 public:
  explicit FnHandler(std::function<void(uint32_t)> fn) : fn_(std::move(fn)) {}
  void OnEvents(uint32_t events) override { fn_(events); }

 private:
  std::function<void(uint32_t)> fn_;
};

Result<void> SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return SysError("fcntl O_NONBLOCK");
  return Ok();
}

bool IsHopByHop(std::string_view name) {
  static const char* kNames[] = {"connection",
                                 "keep-alive",
                                 "proxy-connection",
                                 "proxy-authenticate",
                                 "proxy-authorization",
                                 "te",
                                 "trailer",
                                 "transfer-encoding",
                                 "upgrade",
                                 "host",
                                 "content-length"};
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::any_of(std::begin(kNames), std::end(kNames),
                     [&](const char* n) { return lower == n; });
}

// Hop-by-hop fields of a response (RFC 9110 §7.6.1), which srt-mcp replaces by its own
// Connection: close; Transfer-Encoding and Content-Length stay (the body is relayed as framed).
bool IsResponseHopByHop(std::string_view lower) {
  return lower == "connection" || lower == "keep-alive" || lower == "proxy-connection" ||
         lower == "te" || lower == "trailer" || lower == "upgrade";
}

// Who a peer address is, for the per-client limits without auth: every loopback address is one
// client ("loopback"), or 127.0.0.2 would be a second client with a second set of limits.
// A stream socketpair for one of a server's standard descriptors: {srt-mcp's end, the server's}.
// `ours_not`: the direction srt-mcp's end does not use (SHUT_RD for the server's stdin, SHUT_WR
// for its stdout and stderr), shut so the pair carries bytes one way only.
Result<std::pair<UniqueFd, UniqueFd>> StdioPair(int ours_not) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return SysError("socketpair(AF_UNIX, SOCK_STREAM)");
  }
  std::pair<UniqueFd, UniqueFd> pair{UniqueFd(sv[0]), UniqueFd(sv[1])};
  if (shutdown(sv[0], ours_not) != 0) return SysError("shutdown");
  return pair;
}

constexpr std::string_view kLoopbackClient = "loopback";
std::string ClientOfPeer(std::string_view peer) {
  if (peer.starts_with("127.") || peer == "::1" || peer.starts_with("::ffff:127.")) {
    return std::string(kLoopbackClient);
  }
  return std::string(peer);
}

// The tokens a Connection field names, lower-cased.
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::set<std::string> ConnectionOptions(const std::vector<proxy::http::Header>& headers) {
  std::set<std::string> out;
  for (const proxy::http::Header& h : headers) {
    if (Lower(h.name) != "connection") continue;
    std::string_view v = h.value;
    while (!v.empty()) {
      size_t comma = v.find(',');
      std::string token = Lower(v.substr(0, comma));
      token.erase(std::remove_if(token.begin(), token.end(),
                                 [](char ch) { return ch == ' ' || ch == '\t'; }),
                  token.end());
      if (!token.empty()) out.insert(token);
      v = comma == std::string_view::npos ? "" : v.substr(comma + 1);
    }
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

class Daemon::Impl {
 public:
  struct Session;
  struct Conn;

  Impl(McpConfig config, DaemonOptions options, std::vector<std::string> tokens,
       std::unique_ptr<EventLoop> loop, UniqueFd listener, uint16_t port)
      : config_(std::move(config)),
        options_(std::move(options)),
        tokens_(std::move(tokens)),
        loop_(std::move(loop)),
        listener_(std::move(listener)),
        port_(port),
        accept_handler_([this](uint32_t) { Accept(); }) {
    host_policy_ = {config_.listen_host, port_, IsLoopbackHost(config_.listen_host),
                    config_.domains};
    for (const auto& [name, server] : config_.servers) health_[name] = Health{};
    for (const HttpRoute& r : config_.routes) health_[r.name] = Health{};
    for (const std::string& t : tokens_) TokenClient(t);
  }

  // The client a bearer token is: "token<N>", N given in the order tokens were first seen and
  // kept across reloads, so that a session stays its opener's whatever place its token has in
  // a reloaded list (not the token's index in tokens_: a reordered list would hand one token's
  // sessions to another).
  std::string TokenClient(const std::string& token) {
    auto [it, added] = token_clients_.try_emplace(token, "");
    if (added) it->second = "token" + std::to_string(next_token_client_++);
    return it->second;
  }

  uint16_t port() const { return port_; }

  Result<void> Start() { return loop_->Add(listener_.get(), EPOLLIN, &accept_handler_); }

  void Run() {
    Log("info", "listening", {{"address", config_.listen_host}, {"port", Num(port_)}});
    loop_->Run();
    Log("info", "stopped", {});
  }

  void Shutdown() {
    loop_->RunInLoop([this] { BeginShutdown(); });
  }

  void Reload() {
    loop_->RunInLoop([this] { ReloadNow(); });
  }

  Result<void> WatchSignals(int fd) {
    signal_fd_ = fd;
    signal_handler_ = std::make_unique<FnHandler>([this](uint32_t) {
      signalfd_siginfo info;
      bool reload = false;
      bool stop = false;
      while (read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        (info.ssi_signo == SIGHUP ? reload : stop) = true;
      }
      if (stop) {
        BeginShutdown();
      } else if (reload) {
        ReloadNow();
      }
    });
    return loop_->Add(fd, EPOLLIN, signal_handler_.get());
  }

  // SIGHUP: the configuration again. What is read and checked first (the file, its token
  // files) must all be good, or nothing changes. Then new sessions and requests see the new
  // servers, routes, origins, tokens and limits; running sessions keep the server they started
  // with (Session::config) until they end.
  void ReloadNow() {
    if (shutting_down_) return;
    if (!options_.reload) {
      Log("warn", "reload_failed", {{"error", "no configuration file to read again"}});
      return;
    }
    Result<McpConfig> next = options_.reload();
    if (!next) {
      Log("error", "reload_failed",
          {{"error", next.error().message()}, {"kept", "the running configuration"}});
      return;
    }
    std::vector<std::string> tokens;
    for (const std::string& path : next->bearer_token_files) {
      Result<std::string> t = LoadBearerToken(path);
      if (!t) {
        Log("error", "reload_failed",
            {{"error", t.error().message()}, {"kept", "the running configuration"}});
        return;
      }
      tokens.push_back(std::move(*t));
    }
    if (next->listen_host != config_.listen_host ||
        (next->listen_port != config_.listen_port && next->listen_port != 0) ||
        next->domains != config_.domains) {
      Log("warn", "reload", {{"warning", "listen is bound at start: its change takes a restart"}});
    }
    if (tokens.empty() && !IsLoopbackHost(config_.listen_host)) {
      Log("error", "reload_failed",
          {{"error",
            "refusing to serve '" + config_.listen_host + "' without auth.bearerTokenFiles"},
           {"kept", "the running configuration"}});
      return;
    }
    for (const std::string& w : next->warnings) Log("warn", "reload", {{"warning", w}});
    next->listen_host = config_.listen_host;
    next->listen_port = config_.listen_port;
    next->domains = config_.domains;
    config_ = std::move(*next);
    // A token no longer listed is revoked: its sessions end now rather than idle out.
    std::set<std::string> revoked;
    for (const std::string& old : tokens_) {
      if (std::find(tokens.begin(), tokens.end(), old) == tokens.end()) {
        revoked.insert(TokenClient(old));
      }
    }
    tokens_ = std::move(tokens);
    for (const std::string& t : tokens_) TokenClient(t);
    std::vector<std::shared_ptr<Session>> ended;
    for (const auto& [id, s] : sessions_) {
      if (revoked.contains(s->client)) ended.push_back(s);
    }
    for (const auto& [key, s] : sessionless_) {
      if (revoked.contains(s->client)) ended.push_back(s);
    }
    for (const auto& s : ended) {
      EndSession(s, "its bearer token was removed from the configuration");
    }
    // Nor is a revoked token kept in memory.
    std::erase_if(token_clients_, [&](const auto& kv) { return revoked.contains(kv.second); });
    std::map<std::string, Health> health;
    for (const auto& [name, server] : config_.servers) health[name] = health_[name];
    for (const HttpRoute& r : config_.routes) health[r.name] = health_[r.name];
    health_ = std::move(health);
    for (auto it = backoff_.begin(); it != backoff_.end();) {
      const size_t nl = it->first.find('\n');
      const bool gone = !config_.servers.contains(it->first.substr(0, nl)) ||
                        revoked.contains(it->first.substr(nl + 1));
      it = gone ? backoff_.erase(it) : std::next(it);
    }
    Log("info", "reloaded",
        {{"servers", Num(static_cast<long long>(config_.servers.size()))},
         {"routes", Num(static_cast<long long>(config_.routes.size()))}});
  }

  ~Impl() {
    // Run() has returned: connections and sessions are torn down without the loop.
    for (auto& [fd, c] : conns_) loop_->Remove(fd);
    conns_.clear();
  }

  // --- Health --------------------------------------------------------------------------------
  struct Health {
    std::string state = "up";  // up, starting, failed
    std::string last_error;
  };
  // Restart backoff after a crash, per (server, client): a client that crashes its own server
  // waits, the server's other clients do not. Bounded: one entry per server and token (without
  // auth, per server and client address, and all of loopback is one).
  struct Backoff {
    int consecutive_failures = 0;
    Clock::time_point retry_after{};
  };
  static std::string BackoffKey(const std::string& server, const std::string& client) {
    return server + "\n" + client;
  }

  // --- Logging -------------------------------------------------------------------------------
  void Log(std::string_view level, std::string_view event,
           std::initializer_list<std::pair<std::string_view, std::string>> fields) {
    std::string line = "{\"time\":\"" + NowIso() + "\",\"level\":\"" + std::string(level) +
                       "\",\"event\":" + JsonString(event);
    for (const auto& [k, v] : fields) {
      line += ",\"" + std::string(k) + "\":";
      // Numbers are passed as text starting with a digit and marked by the key's '#' suffix-free
      // convention: callers pass numbers through Num().
      if (!v.empty() && v[0] == '\x01') {
        line += v.substr(1);
      } else {
        line += JsonString(v);
      }
    }
    line += "}";
    if (options_.log) {
      options_.log(line);
    } else {
      line += "\n";
      (void)sys::WriteAll(2, line, "log");
    }
  }
  static std::string Num(long long v) { return "\x01" + std::to_string(v); }

  // --- Sessions ------------------------------------------------------------------------------
  struct Session {
    std::string id;
    std::string server;  // its name
    // The server as configured when the session started: a reload changes new sessions only.
    std::shared_ptr<const StdioServer> config;
    std::string client;  // who opened it (token index or peer address)
    SessionStreams streams;
    std::unique_ptr<ServerProcess> process;
    UniqueFd stdin_fd;
    UniqueFd stdout_fd;
    UniqueFd stderr_fd;
    std::unique_ptr<FnHandler> stdin_handler;
    std::unique_ptr<FnHandler> stdout_handler;
    std::unique_ptr<FnHandler> stderr_handler;
    std::string to_server;  // bytes for stdin not yet written
    std::string stdout_line;
    std::string stderr_line;
    double stderr_budget = kStderrBurst;  // lines that may be logged now
    Clock::time_point stderr_refilled = Clock::now();
    uint64_t stderr_suppressed = 0;  // lines dropped since the last record of them
    bool started = false;
    bool ending = false;  // removed from sessions_, the process is being stopped
    bool exited = false;
    std::string end_reason;
    std::map<uint64_t, Conn*> attached;  // stream -> the connection it writes to
    std::deque<uint64_t> complete_streams;
    EventLoop::TimerId idle_timer = EventLoop::kNoTimer;
    EventLoop::TimerId time_limit_timer = EventLoop::kNoTimer;
    EventLoop::TimerId term_timer = EventLoop::kNoTimer;
    EventLoop::TimerId kill_timer = EventLoop::kNoTimer;
    Clock::time_point started_at = Clock::now();
    // MCP 2026-07-28: no session; one process per (server, client) serves that client's
    // requests, whose ids srt-mcp replaces by its own (clients may reuse theirs across requests).
    bool sessionless = false;
    std::string sessionless_key;
    std::map<uint64_t, std::string> original_ids;  // stream -> the client's id
    explicit Session(size_t replay) : streams(replay) {}
  };

  // --- Connections ---------------------------------------------------------------------------
  enum class ConnState { kReading, kStreaming, kProxying, kClosing };
  struct Conn final : Handler {
    Impl* impl = nullptr;
    UniqueFd fd;
    std::string peer;
    // What maxConnectionsPerClient counts this connection as: ClientOfPeer(peer), or for a
    // loopback peer with auth, the token its last request proved (CountAsClient).
    std::string peer_client;
    bool loopback_peer = false;
    std::string in;
    std::string out;
    ConnState state = ConnState::kReading;
    bool close_after_write = false;
    EventLoop::TimerId timer = EventLoop::kNoTimer;
    // A request's SSE head waits (at most kCorkDelay) for the first event, so that a quick
    // answer leaves as one write: head, event and the body's end (one packet, one wake-up of the
    // client, instead of three).
    bool corked = false;
    EventLoop::TimerId cork_timer = EventLoop::kNoTimer;
    // Where the corked SSE head lies in `out`: while nothing follows it, the stream's answer may
    // still replace it by an application/json response (EndStreamWith).
    size_t cork_head_at = 0;
    size_t cork_head_end = 0;
    uint32_t watched = EPOLLIN | EPOLLRDHUP;  // what the loop watches on `fd` (Watch)
    bool head_started = false;                // bytes of a request arrived (the head timeout runs)
    // A chunked request body being read: the decoder, the content so far, and how many bytes
    // after the head it has been fed.
    std::optional<proxy::http::ChunkedDecoder> body_chunks;
    std::string body_content;
    size_t body_fed = 0;
    // The client shut its side down (read EOF): what it sent is still answered, then the
    // connection closes; nothing more is read.
    bool read_eof = false;
    // The request being answered (for the log).
    Clock::time_point request_start{};
    std::string log_method;
    std::string log_route;
    std::string log_session;
    std::string log_rpc;
    int log_status = 0;
    // Streaming: the session and stream this connection carries.
    std::weak_ptr<Session> session;
    uint64_t stream = 0;
    // Proxying: the upstream connection.
    UniqueFd upstream;
    std::unique_ptr<FnHandler> upstream_handler;
    std::string to_upstream;
    bool upstream_connected = false;
    bool upstream_eof = false;
    // The upstream's response: its head is parsed (bounded) and re-sent, its body relayed as
    // framed and no further (a second response after the first never reaches the client).
    bool upstream_head_done = false;
    std::string upstream_in;
    bool head_request = false;  // HEAD: the response has no body
    proxy::http::Framing upstream_framing;
    uint64_t upstream_left = 0;  // kContentLength: body bytes still to relay
    std::optional<proxy::http::ChunkedDecoder> upstream_chunked;
    EventLoop::TimerId upstream_timer = EventLoop::kNoTimer;
    bool closed = false;
    void OnEvents(uint32_t events) override { impl->OnConnEvents(*this, events); }
  };

  // --- Accepting -----------------------------------------------------------------------------
  void Accept() {
    while (true) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      int fd = accept4(listener_.get(), reinterpret_cast<sockaddr*>(&addr), &len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // The connection stays in the backlog and the listener readable: watching it now
          // would spin. It is watched again when a connection closes, or after a while.
          PauseAccepting(errno);
        }
        return;  // EAGAIN, or a transient error (ECONNABORTED): the next readiness retries
      }
      UniqueFd owned(fd);
      char host[INET6_ADDRSTRLEN] = "?";
      if (addr.ss_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, host, sizeof host);
      } else if (addr.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr, host, sizeof host);
      }
      std::string peer_client = ClientOfPeer(host);
      if (shutting_down_ || conns_.size() >= config_.limits.max_connections ||
          conns_per_client_[peer_client] >= config_.limits.max_connections_per_client) {
        static constexpr std::string_view kBusy =
            "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\n"
            "Connection: close\r\n\r\n";
        (void)!write(fd, kBusy.data(), kBusy.size());
        if (conns_per_client_[peer_client] == 0) conns_per_client_.erase(peer_client);
        continue;
      }
      // SSE events are small writes that must leave now: without this, Nagle's algorithm holds
      // each behind the client's delayed ACK (~40 ms per tools/call on loopback).
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto c = std::make_unique<Conn>();
      c->impl = this;
      c->fd = std::move(owned);
      c->peer = host;
      c->peer_client = peer_client;
      c->loopback_peer = peer_client == kLoopbackClient;
      Conn* raw = c.get();
      if (!loop_->Add(fd, EPOLLIN | EPOLLRDHUP, raw)) continue;
      conns_[fd] = std::move(c);
      ++conns_per_client_[peer_client];
      // A new connection's first head must arrive within headTimeout (keepAliveIdle is for a
      // connection that was served): idle connections cannot hold the slots for long.
      ArmTimer(*raw, config_.limits.head_timeout);
    }
  }

  // Behind a tunnel on loopback (cloudflared, a TLS terminator) every user's connections come
  // from 127.0.0.1, where the address tells no one apart: once a request proves a token, its
  // connection counts against maxConnectionsPerClient as that token instead of as loopback.
  // False (the caller answers 503) when the token already holds its share.
  bool CountAsClient(Conn& c, const std::string& client) {
    if (c.peer_client == client) return true;
    size_t& mine = conns_per_client_[client];
    if (mine >= config_.limits.max_connections_per_client) {
      if (mine == 0) conns_per_client_.erase(client);
      return false;
    }
    ++mine;
    if (auto it = conns_per_client_.find(c.peer_client);
        it != conns_per_client_.end() && --it->second == 0) {
      conns_per_client_.erase(it);
    }
    c.peer_client = client;
    return true;
  }

  void PauseAccepting(int error) {
    if (accept_paused_ || !listener_) return;
    accept_paused_ = true;
    loop_->Remove(listener_.get());
    Log("warn", "accept",
        {{"error", std::string("accept: ") + ErrnoText(error)},
         {"connections", Num(static_cast<long long>(conns_.size()))}});
    accept_timer_ = loop_->AddTimer(std::chrono::milliseconds(250), [this] {
      accept_timer_ = EventLoop::kNoTimer;
      ResumeAccepting();
    });
  }

  void ResumeAccepting() {
    if (!accept_paused_) return;
    accept_paused_ = false;
    loop_->CancelTimer(accept_timer_);
    accept_timer_ = EventLoop::kNoTimer;
    if (!listener_ || shutting_down_) return;
    if (!loop_->Add(listener_.get(), EPOLLIN, &accept_handler_)) return;
    Accept();
  }

  void ArmTimer(Conn& c, std::chrono::milliseconds after) {
    loop_->CancelTimer(c.timer);
    int fd = c.fd.get();
    c.timer = loop_->AddTimer(after, [this, fd] {
      auto it = conns_.find(fd);
      if (it == conns_.end()) return;
      it->second->timer = EventLoop::kNoTimer;
      Conn& conn = *it->second;
      if (conn.state == ConnState::kReading && conn.head_started) {
        // Slowloris: the head and body did not arrive within headTimeout.
        SendSimple(conn, 408, "the request did not arrive in time", /*close=*/true);
      } else if (conn.state == ConnState::kReading) {
        CloseConn(conn);
      }
    });
  }

  void OnConnEvents(Conn& c, uint32_t events) {
    if (c.closed) return;
    if (events & EPOLLOUT) Flush(c);
    if (c.closed) return;
    if (c.read_eof) {
      // Nothing is read any more; a hang-up now is the client gone for good.
      if (events & (EPOLLHUP | EPOLLERR)) ConnGone(c);
      return;
    }
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ReadConn(c);
  }

  // What the loop watches on a client connection: reading until the client's EOF (then not at
  // all: EOF and EPOLLRDHUP stay readable, and would wake the loop for ever), writing while
  // bytes wait.
  void Watch(Conn& c) {
    uint32_t events =
        (c.read_eof ? 0u : EPOLLIN | EPOLLRDHUP) | (c.out.empty() || c.corked ? 0u : EPOLLOUT);
    if (events == c.watched) return;  // an epoll_ctl per write saved
    c.watched = events;
    (void)loop_->Modify(c.fd.get(), events);
  }

  void ReadConn(Conn& c) {
    char buf[kReadChunk];
    while (!c.closed) {
      ssize_t n = read(c.fd.get(), buf, sizeof buf);
      if (n > 0) {
        if (c.state == ConnState::kClosing) continue;  // discarded: we are closing
        c.in.append(buf, static_cast<size_t>(n));
        if (c.in.size() > kMaxHeadBytes() + config_.limits.max_body_bytes + 4096) {
          // Mid-stream there is no room for an HTTP answer: the connection just goes.
          if (c.state == ConnState::kReading) {
            SendSimple(c, 413, "request too large", /*close=*/true);
          } else {
            ConnGone(c);
          }
          return;
        }
        // A short read emptied the socket: the loop (level-triggered) says when there is more
        // (or EOF), which saves a read that would only say EAGAIN, per request.
        if (static_cast<size_t>(n) < sizeof buf) break;
        continue;
      }
      if (n == 0) {
        // Half-closed (shutdown(SHUT_WR) after its request), or gone: either way, what it sent
        // is answered, then the connection closes.
        c.read_eof = true;
        Watch(c);
        if (c.state == ConnState::kStreaming) {
          // Closing a request's stream cancels it, but EOF alone cannot tell a client that
          // closed from one that only half-closed and still reads. An SSE comment (ignored by
          // SSE parsers) asks: a closed socket answers it with a reset, which the loop reports
          // as EPOLLHUP/EPOLLERR (OnConnEvents: ConnGone, the request cancelled).
          Uncork(c);
          if (!c.closed) Queue(c, Chunk(": \n\n"));
          return;
        }
        break;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      ConnGone(c);
      return;
    }
    if (c.state == ConnState::kReading) ProcessInput(c);
    // EOF with no complete request left to answer: nothing more will come.
    if (!c.closed && c.read_eof && c.state == ConnState::kReading && !c.close_after_write) {
      CloseConn(c);
    }
  }

  static size_t kMaxHeadBytes() { return proxy::http::Limits{}.max_head_bytes; }

  // The client closed (or broke) its connection.
  void ConnGone(Conn& c) {
    if (c.state == ConnState::kStreaming) {
      // MCP 2026-07-28: closing a request's stream cancels it; srt-mcp does the same for earlier
      // revisions and tells the server (docs/mcp.md).
      DetachStream(c, /*cancel=*/true);
    }
    CloseConn(c);
  }

  void CloseConn(Conn& c) {
    if (c.closed) return;
    c.closed = true;
    if (c.state == ConnState::kStreaming) DetachStream(c, /*cancel=*/true);
    if (!c.log_method.empty()) LogRequest(c);
    loop_->CancelTimer(c.timer);
    loop_->CancelTimer(c.cork_timer);
    if (c.upstream) {
      loop_->Remove(c.upstream.get());
      c.upstream.reset();
    }
    loop_->CancelTimer(c.upstream_timer);
    if (auto it = conns_per_client_.find(c.peer_client);
        it != conns_per_client_.end() && --it->second == 0) {
      conns_per_client_.erase(it);
    }
    int fd = c.fd.get();
    loop_->Remove(fd);
    // Destroyed after this iteration: the caller may still be inside c's OnEvents.
    loop_->RunInLoop([this, fd] {
      conns_.erase(fd);
      ResumeAccepting();  // an fd is free again
      MaybeFinishShutdown();
    });
  }

  void LogRequest(Conn& c) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - c.request_start);
    Log("info", "request",
        {{"client", c.peer},
         {"method", c.log_method},
         {"route", c.log_route},
         {"session", c.log_session},
         {"rpc", c.log_rpc},
         {"status", Num(c.log_status)},
         {"duration_ms", Num(ms.count())}});
    c.log_method.clear();
  }

  // --- Writing -------------------------------------------------------------------------------
  void Queue(Conn& c, std::string_view bytes) {
    if (c.closed) return;
    if (c.out.size() + bytes.size() > kMaxOutBuffer) {
      // The client does not read what it asked for.
      ConnGone(c);
      return;
    }
    c.out.append(bytes);
    Flush(c);
  }

  void Uncork(Conn& c) {
    if (!c.corked) return;
    c.corked = false;
    loop_->CancelTimer(c.cork_timer);
    c.cork_timer = EventLoop::kNoTimer;
    Flush(c);
  }

  void Flush(Conn& c) {
    if (c.corked || c.closed) return;
    while (!c.out.empty()) {
      ssize_t n = send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        Watch(c);
        return;
      }
      ConnGone(c);
      return;
    }
    Watch(c);
    if (c.close_after_write) {
      CloseConn(c);
      return;
    }
    if (c.state == ConnState::kProxying && c.upstream && !c.upstream_eof) {
      (void)loop_->Modify(
          c.upstream.get(),
          EPOLLIN | EPOLLRDHUP | (c.to_upstream.empty() && c.upstream_connected ? 0u : EPOLLOUT));
    }
    if (c.state == ConnState::kProxying && c.upstream_eof) CloseConn(c);
  }

  // A complete response with a body; `extra` are header lines ending in CRLF.
  void SendResponse(Conn& c, int status, std::string_view content_type, std::string_view body,
                    const std::string& extra = "", bool close = false) {
    std::string head = "HTTP/1.1 " + std::to_string(status) + " " +
                       std::string(proxy::http::StatusPhrase(status)) + "\r\n";
    if (!content_type.empty()) head += "Content-Type: " + std::string(content_type) + "\r\n";
    head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    head += "Cache-Control: no-store\r\n";
    head += extra;
    if (close || shutting_down_) head += "Connection: close\r\n";
    head += "\r\n";
    c.log_status = status;
    c.close_after_write = close || shutting_down_;
    if (!c.log_method.empty()) LogRequest(c);
    c.state = ConnState::kReading;
    Queue(c, head + std::string(body));
    if (!c.closed && !c.close_after_write) {
      ArmTimer(c, config_.limits.keepalive_idle);
      c.head_started = false;
      // Pipelined bytes already here.
      if (!c.in.empty())
        loop_->RunInLoop([this, fd = c.fd.get()] {
          auto it = conns_.find(fd);
          if (it != conns_.end() && it->second->state == ConnState::kReading)
            ProcessInput(*it->second);
        });
    }
  }

  // An error answer: a JSON-RPC error without an id as the body (MCP: "MAY comprise a JSON-RPC
  // error response that has no id").
  void SendSimple(Conn& c, int status, std::string_view message, bool close = false,
                  const std::string& extra = "") {
    SendResponse(c, status, "application/json",
                 ErrorResponse("null", status == 503 ? kServerBusy : kInvalidRequest, message),
                 extra, close);
  }

  // --- Requests ------------------------------------------------------------------------------
  void ProcessInput(Conn& c) {
    if (c.in.empty() || c.closed) return;
    if (!c.head_started) {
      c.head_started = true;
      c.request_start = Clock::now();
      ArmTimer(c, config_.limits.head_timeout);
    }
    proxy::http::RequestHeadResult head = proxy::http::ParseRequestHead(c.in);
    if (head.status == proxy::ParseStatus::kNeedMore) {
      if (c.read_eof) CloseConn(c);  // the rest of it will never come
      return;
    }
    if (head.status == proxy::ParseStatus::kError) {
      c.log_method = "?";
      SendSimple(c, head.http_error, "malformed request: " + head.error, /*close=*/true);
      return;
    }
    const HttpRequest& req = head.request;
    if (req.chunked) {
      ProcessChunkedBody(c, head);
      return;
    }
    const uint64_t body_length = req.content_length.value_or(0);
    if (body_length > config_.limits.max_body_bytes) {
      c.log_method = req.method;
      SendSimple(
          c, 413,
          "the body is larger than " + std::to_string(config_.limits.max_body_bytes) + " bytes",
          /*close=*/true);
      return;
    }
    if (c.in.size() < head.consumed + body_length) {
      if (c.read_eof) CloseConn(c);
      return;
    }
    std::string body = c.in.substr(head.consumed, body_length);
    c.in.erase(0, head.consumed + body_length);
    StartHandling(c, req, body);
  }

  void StartHandling(Conn& c, const HttpRequest& req, const std::string& body) {
    c.head_started = false;
    loop_->CancelTimer(c.timer);
    c.timer = EventLoop::kNoTimer;
    c.log_method = req.method;
    c.log_route.clear();
    c.log_session.clear();
    c.log_rpc.clear();
    // After the client's EOF, the connection closes once the last request it sent is answered.
    Handle(c, req, body, req.ConnectionClose() || (c.read_eof && c.in.empty()));
  }

  // A chunked request body (RFC 9112 §7.1), through the proxy's decoder, fed what arrived since
  // the last call; its content is bounded by maxBodyBytes.
  void ProcessChunkedBody(Conn& c, const proxy::http::RequestHeadResult& head) {
    const HttpRequest& req = head.request;
    if (!c.body_chunks) {
      c.body_chunks.emplace();
      c.body_content.clear();
      c.body_fed = 0;
    }
    const size_t from = head.consumed + c.body_fed;
    proxy::http::ChunkedDecoder::Step step = c.body_chunks->Feed(
        std::span<const char>(c.in.data() + from, c.in.size() - from), &c.body_content);
    c.body_fed += step.consumed;
    auto refuse = [&](int status, const std::string& why) {
      c.body_chunks.reset();
      c.body_content.clear();
      c.log_method = req.method;
      SendSimple(c, status, why, /*close=*/true);
    };
    if (step.status == proxy::ParseStatus::kError) {
      refuse(400, "malformed chunked body: " + c.body_chunks->error());
      return;
    }
    if (c.body_content.size() > config_.limits.max_body_bytes) {
      refuse(413,
             "the body is larger than " + std::to_string(config_.limits.max_body_bytes) + " bytes");
      return;
    }
    if (step.status == proxy::ParseStatus::kNeedMore) {
      if (c.read_eof) CloseConn(c);
      return;
    }
    std::string body = std::move(c.body_content);
    c.in.erase(0, head.consumed + c.body_fed);
    c.body_chunks.reset();
    c.body_content.clear();
    c.body_fed = 0;
    StartHandling(c, req, body);
  }

  std::optional<std::string_view> Header(const HttpRequest& r, std::string_view name) {
    const proxy::http::Header* h = r.Find(name);
    if (!h) return std::nullopt;
    return std::string_view(h->value);
  }

  void Handle(Conn& c, const HttpRequest& req, const std::string& body, bool close) {
    if (req.form != proxy::http::TargetForm::kOrigin) {
      SendSimple(c, 400, "srt-mcp takes origin-form request targets", true);
      return;
    }
    // DNS rebinding: only the names this daemon is reached by.
    HostMatch host = CheckHost(Header(req, "host"), host_policy_);
    if (!host.allowed) {
      SendSimple(c, 403,
                 "the Host " + strings::QuoteForMessage(Header(req, "host").value_or("")) +
                     " is not served here",
                 close);
      return;
    }
    if (std::count_if(req.headers.begin(), req.headers.end(),
                      [](const proxy::http::Header& h) { return Lower(h.name) == "origin"; }) > 1) {
      // Which one a browser meant is unknowable; checking only one of them is no check.
      SendSimple(c, 403, "more than one Origin field", close);
      return;
    }
    if (auto origin = Header(req, "origin");
        origin && !OriginAllowed(*origin, config_.allowed_origins)) {
      SendSimple(c, 403, "this Origin is not allowed", close);
      return;
    }
    // Without auth a client is its address, every loopback address being one client.
    std::string client = c.peer_client;
    if (!tokens_.empty()) {
      std::optional<size_t> who = MatchBearer(Header(req, "authorization"), tokens_);
      if (!who) {
        SendSimple(c, 401, "a valid bearer token is required", close,
                   "WWW-Authenticate: Bearer realm=\"srt-mcp\"\r\n");
        return;
      }
      client = TokenClient(tokens_[*who]);
      if (c.loopback_peer && !CountAsClient(c, client)) {
        SendSimple(c, 503, "too many connections for this client", true, "Retry-After: 1\r\n");
        return;
      }
    }
    std::string path = req.target.substr(0, req.target.find('?'));
    std::string query =
        req.target.find('?') == std::string::npos ? "" : req.target.substr(req.target.find('?'));
    if (path == "/healthz") {
      if (req.method != "GET") {
        SendSimple(c, 405, "GET only", close, "Allow: GET\r\n");
        return;
      }
      SendResponse(c, 200, "application/json", HealthJson(), "", close);
      return;
    }
    std::string name;
    std::string rest;
    if (!host.route.empty()) {
      name = host.route;
      if (path != "/" && path != "/mcp" && !path.starts_with("/mcp/"))
        rest = path;
      else if (path.starts_with("/mcp/"))
        rest = path.substr(4);
    } else if (path.starts_with("/mcp/")) {
      std::string_view tail = std::string_view(path).substr(5);
      size_t slash = tail.find('/');
      name = std::string(tail.substr(0, slash));
      rest = slash == std::string_view::npos ? "" : std::string(tail.substr(slash));
    }
    c.log_route = name;
    if (auto s = config_.servers.find(name); s != config_.servers.end() && rest.empty()) {
      HandleMcp(c, req, body, s->second, client, close);
      return;
    }
    // A session of a server that a reload removed goes on until it ends.
    if (auto sid = Header(req, "mcp-session-id"); sid && rest.empty()) {
      if (auto it = sessions_.find(std::string(*sid));
          it != sessions_.end() && it->second->server == name && !name.empty() &&
          Header(req, "mcp-protocol-version") != kSessionlessProtocolVersion) {
        std::shared_ptr<const StdioServer> old = it->second->config;
        HandleMcp(c, req, body, *old, client, close);
        return;
      }
    }
    for (const HttpRoute& r : config_.routes) {
      if (r.name == name) {
        StartProxy(c, req, body, r, rest, query);
        return;
      }
    }
    SendSimple(c, 404, "no MCP server or route here", close);
  }

  std::string HealthJson() {
    std::string out = "{\"routes\":{";
    bool first = true;
    auto add = [&](const std::string& name, const char* kind, size_t sessions) {
      const Health& h = health_[name];
      if (!first) out += ",";
      first = false;
      out += JsonString(name) + ":{\"kind\":\"" + kind + "\",\"state\":" + JsonString(h.state);
      if (!h.last_error.empty()) out += ",\"lastError\":" + JsonString(h.last_error);
      if (std::string_view(kind) == "stdio") out += ",\"sessions\":" + std::to_string(sessions);
      out += "}";
    };
    for (const auto& entry : config_.servers) {
      const std::string& name = entry.first;
      auto n = static_cast<size_t>(
          std::count_if(sessions_.begin(), sessions_.end(),
                        [&](const auto& kv) { return kv.second->server == name; }) +
          std::count_if(sessionless_.begin(), sessionless_.end(),
                        [&](const auto& kv) { return kv.second->server == name; }));
      add(name, "stdio", n);
    }
    for (const HttpRoute& r : config_.routes) add(r.name, "http", 0);
    out += "},\"sessions\":" + std::to_string(sessions_.size() + sessionless_.size()) + "}";
    return out;
  }

  // --- MCP over Streamable HTTP ----------------------------------------------------------------
  void HandleMcp(Conn& c, const HttpRequest& req, const std::string& body,
                 const StdioServer& server, const std::string& client, bool close) {
    if (auto v = Header(req, "mcp-protocol-version"); v && !ProtocolVersionSupported(*v)) {
      SendSimple(c, 400,
                 "unsupported MCP-Protocol-Version '" +
                     strings::EscapeNonPrintable(v->substr(0, 32)) +
                     "' (supported: " + std::string(kSupportedProtocolVersions) + ")",
                 close);
      return;
    }
    if (Header(req, "mcp-protocol-version") == kSessionlessProtocolVersion) {
      HandleSessionless(c, req, body, server, client, close);
      return;
    }
    std::optional<std::string_view> sid = Header(req, "mcp-session-id");
    std::shared_ptr<Session> session;
    if (sid) {
      auto it = sessions_.find(std::string(*sid));
      // A session is its opener's: another token's request gets the same 404 as a wrong id.
      if (it == sessions_.end() || it->second->server != server.name ||
          it->second->client != client) {
        SendSimple(c, 404, "no such session (start a new one with initialize)", close);
        return;
      }
      session = it->second;
      c.log_session = session->id.substr(0, 8);
      TouchSession(session);
    }
    if (req.method == "DELETE") {
      if (!session) {
        SendSimple(c, 400, "DELETE needs an Mcp-Session-Id", close);
        return;
      }
      EndSession(session, "the client ended the session");
      SendResponse(c, 200, "", "", "", close);
      return;
    }
    if (req.method == "GET") {
      if (!session) {
        SendSimple(c, 400, "GET needs an Mcp-Session-Id", close);
        return;
      }
      if (!Accepts(Header(req, "accept"), "text/event-stream")) {
        SendSimple(c, 406, "GET opens an SSE stream: Accept must list text/event-stream", close);
        return;
      }
      OpenGetStream(c, session, Header(req, "last-event-id"), close);
      return;
    }
    if (req.method != "POST") {
      SendSimple(c, 405, "POST, GET or DELETE", close, "Allow: POST, GET, DELETE\r\n");
      return;
    }
    if (!Accepts(Header(req, "accept"), "application/json") ||
        !Accepts(Header(req, "accept"), "text/event-stream")) {
      SendSimple(c, 406, "Accept must list application/json and text/event-stream", close);
      return;
    }
    Result<Message> msg = ClassifyMessage(body);
    if (!msg) {
      SendResponse(
          c, 400, "application/json",
          ErrorResponse("null", kParseError, "not a JSON-RPC message: " + msg.error().message()),
          "", close);
      return;
    }
    c.log_rpc = msg->method;
    if (!session) {
      if (msg->kind != MessageKind::kRequest || msg->method != "initialize") {
        SendSimple(c, 400, "no Mcp-Session-Id: only initialize starts a session", close);
        return;
      }
      auto created = CreateSession(c, server, client, close);
      if (!created) return;  // answered
      session = *created;
      c.log_session = session->id.substr(0, 8);
    } else if (msg->kind == MessageKind::kRequest && msg->method == "initialize") {
      SendSimple(c, 400, "this session is already initialized", close);
      return;
    }
    // A server that does not read its stdin cannot make the daemon hold every message for it.
    if (session->to_server.size() > kMaxToServer) {
      SendSimple(c, 503, "the server is not reading its input", close, "Retry-After: 1\r\n");
      return;
    }
    if (msg->kind != MessageKind::kRequest) {
      ToServer(*session, body);
      SendResponse(c, 202, "", "", "", close);
      return;
    }
    if (session->streams.inflight() >= config_.limits.max_inflight_per_session) {
      SendSimple(c, 503, "too many requests in flight in this session", close,
                 "Retry-After: 1\r\n");
      return;
    }
    Result<uint64_t> stream = session->streams.OpenRequest(msg->id, msg->progress_token);
    if (!stream) {
      SendResponse(c, 400, "application/json",
                   ErrorResponse(msg->id, kInvalidRequest, stream.error().message()), "", close);
      return;
    }
    AttachStream(c, session, *stream, close, /*cork=*/true);
    ToServer(*session, body);
  }

  // MCP 2026-07-28: POST only, no sessions (Mcp-Session-Id and Last-Event-ID are ignored), the
  // mirrored headers checked against the body, closing the response stream cancels.
  void HandleSessionless(Conn& c, const HttpRequest& req, const std::string& body,
                         const StdioServer& server, const std::string& client, bool close) {
    if (req.method != "POST") {
      SendSimple(c, 405, "MCP 2026-07-28 has no GET stream and no sessions: POST only", close,
                 "Allow: POST\r\n");
      return;
    }
    if (!Accepts(Header(req, "accept"), "application/json") ||
        !Accepts(Header(req, "accept"), "text/event-stream")) {
      SendSimple(c, 406, "Accept must list application/json and text/event-stream", close);
      return;
    }
    Result<Message> msg = ClassifyMessage(body);
    if (!msg) {
      SendResponse(
          c, 400, "application/json",
          ErrorResponse("null", kParseError, "not a JSON-RPC message: " + msg.error().message()),
          "", close);
      return;
    }
    c.log_rpc = msg->method;
    if (msg->kind == MessageKind::kResponse) {
      SendSimple(c, 400, "MCP 2026-07-28 clients send no JSON-RPC responses", close);
      return;
    }
    const std::string why = CheckMirroredHeaders(
        {Header(req, "mcp-protocol-version"), Header(req, "mcp-method"), Header(req, "mcp-name")},
        msg->method, msg->meta_protocol_version, msg->name, msg->uri);
    if (!why.empty()) {
      SendResponse(c, 400, "application/json",
                   ErrorResponse(msg->id.empty() ? "null" : msg->id, kHeaderMismatch,
                                 "Header mismatch: " + why),
                   "", close);
      return;
    }
    const std::string key = server.name + "\n" + client;
    std::shared_ptr<Session> session;
    if (auto it = sessionless_.find(key); it != sessionless_.end()) session = it->second;
    if (!session) {
      auto created = CreateSession(c, server, client, close);
      if (!created) return;  // answered
      session = *created;
      sessions_.erase(session->id);  // reachable by its key only, never by an id
      session->sessionless = true;
      session->sessionless_key = key;
      sessionless_[key] = session;
    }
    c.log_session = session->id.substr(0, 8);
    TouchSession(session);
    if (session->to_server.size() > kMaxToServer) {
      SendSimple(c, 503, "the server is not reading its input", close, "Retry-After: 1\r\n");
      return;
    }
    if (msg->kind == MessageKind::kNotification) {
      ToServer(*session, body);
      SendResponse(c, 202, "", "", "", close);
      return;
    }
    if (session->streams.inflight() >= config_.limits.max_inflight_per_session) {
      SendSimple(c, 503, "too many requests in flight for this client", close,
                 "Retry-After: 1\r\n");
      return;
    }
    const std::string internal = "\"srt-mcp-" + std::to_string(++next_internal_id_) + "\"";
    Result<uint64_t> stream = session->streams.OpenRequest(internal, msg->progress_token);
    if (!stream) {
      SendSimple(c, 400, stream.error().message(), close);
      return;
    }
    session->original_ids[*stream] = msg->id;
    AttachStream(c, session, *stream, close, /*cork=*/true);
    ToServer(*session, ReplaceId(body, internal));
  }

  // What goes on a stream: a sessionless request's response carries the client's own id again.
  std::string OutgoingData(Session& s, const SessionStreams::Delivery& d) {
    if (!s.sessionless || !d.ends_stream) return d.record.data;
    auto it = s.original_ids.find(d.stream);
    if (it == s.original_ids.end()) return d.record.data;
    std::string out = ReplaceId(d.record.data, it->second);
    s.original_ids.erase(it);
    return out.empty() ? d.record.data : out;
  }

  Result<std::shared_ptr<Session>> CreateSession(Conn& c, const StdioServer& server,
                                                 const std::string& client, bool close) {
    auto busy = [&](const std::string& why, long retry) -> Error {
      SendSimple(c, 503, why, close, "Retry-After: " + std::to_string(retry) + "\r\n");
      return MakeError(Errc::kDenied, why);
    };
    if (shutting_down_) return busy("srt-mcp is shutting down", 5);
    // Ending sessions count until their process is gone: opening and deleting sessions in a loop
    // must not pile up sandboxes that are still stopping.
    if (all_sessions_.size() >= config_.limits.max_sessions) return busy("too many sessions", 5);
    auto mine = static_cast<size_t>(
        std::count_if(all_sessions_.begin(), all_sessions_.end(),
                      [&](const auto& session) { return session->client == client; }));
    if (mine >= config_.limits.max_sessions_per_client) {
      return busy("too many sessions for this client", 5);
    }
    Health& h = health_[server.name];
    if (auto b = backoff_.find(BackoffKey(server.name, client));
        b != backoff_.end() && Clock::now() < b->second.retry_after) {
      auto wait =
          std::chrono::duration_cast<std::chrono::seconds>(b->second.retry_after - Clock::now());
      return busy("the server '" + server.name + "' failed recently: " + h.last_error,
                  std::max<long>(1, wait.count() + 1));
    }
    Result<std::string> id = sys::RandomHex(16);
    if (!id) {
      SendSimple(c, 503, "no session id: " + id.error().message(), close, "Retry-After: 1\r\n");
      return id.error();
    }
    auto s = std::make_shared<Session>(config_.limits.replay_events);
    s->id = *id;
    s->server = server.name;
    s->config = std::make_shared<const StdioServer>(server);
    s->client = client;
    // The server's stdin, stdout and stderr are stream socketpairs, as node's child_process
    // gives its children: libsrt passes a socket into the sandbox as it is (nothing on the host
    // can be reopened through it), where it relays a pipe through a thread per direction (a
    // pipe can be reopened through /proc/self/fd), which cost every call two more wake-ups and
    // eight more syscalls. Each pair is one-way: a read of the server's stdout gets EOF, and
    // what it writes to its stdin fails (EPIPE) rather than pile up unread.
    auto in = StdioPair(SHUT_RD);
    auto out = StdioPair(SHUT_WR);
    auto err = StdioPair(SHUT_WR);
    if (!in || !out || !err) {
      SendSimple(c, 503, "no sockets for the server", close, "Retry-After: 1\r\n");
      return MakeError(Errc::kSystem, "socketpair");
    }
    s->stdin_fd = std::move(in->first);
    s->stdout_fd = std::move(out->first);
    s->stderr_fd = std::move(err->first);
    for (int fd : {s->stdin_fd.get(), s->stdout_fd.get(), s->stderr_fd.get()}) {
      (void)SetNonBlocking(fd);
    }
    std::weak_ptr<Session> weak = s;
    s->stdin_handler = std::make_unique<FnHandler>([this, weak](uint32_t) {
      if (auto p = weak.lock()) FlushToServer(*p);
    });
    s->stdout_handler = std::make_unique<FnHandler>([this, weak](uint32_t) {
      if (auto p = weak.lock()) ReadServerStdout(p);
    });
    s->stderr_handler = std::make_unique<FnHandler>([this, weak](uint32_t) {
      if (auto p = weak.lock()) ReadServerStderr(*p);
    });
    (void)loop_->Add(s->stdout_fd.get(), EPOLLIN, s->stdout_handler.get());
    (void)loop_->Add(s->stderr_fd.get(), EPOLLIN, s->stderr_handler.get());

    SandboxOptions o;
    o.settings = server.settings;
    o.argv = server.argv;
    // HOME: the env's, else the sandbox's private TMPDIR, which only exists once the sandbox
    // does; a shell sets it there (srt's TMPDIR is the one writable place every policy has).
    if (!server.env.contains("HOME")) {
      std::vector<std::string> argv = {"/bin/sh", "-c", "HOME=\"${TMPDIR:-/tmp}\" exec \"$@\"",
                                       "srt-mcp-server"};
      argv.insert(argv.end(), server.argv.begin(), server.argv.end());
      o.argv = std::move(argv);
    }
    std::vector<std::string> env;
    for (const auto& [k, v] : server.env) env.push_back(k + "=" + v);
    if (!server.env.contains("PATH")) env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
    if (!server.env.contains("LANG")) env.push_back("LANG=C.UTF-8");
    o.env = std::move(env);
    o.cwd = server.cwd.value_or("/");
    o.id = "mcp-" + server.name.substr(0, 40) + "-" + s->id.substr(0, 12);
    o.init_path = options_.init_path;
    o.warn = [this, name = server.name](std::string_view w) {
      Log("warn", "sandbox", {{"route", name}, {"warning", std::string(w)}});
    };
    if (server.limits &&
        (server.limits->memory_bytes || server.limits->cpu_millis || server.limits->pids)) {
      ResourceLimits l;
      l.memory_bytes = server.limits->memory_bytes;
      l.cpu_millis = server.limits->cpu_millis;
      l.pids = server.limits->pids;
      o.limits = l;
    }
    if (h.state != "failed") h.state = "starting";
    s->process = ServerProcess::Launch(
        *loop_, options_.runner, std::move(o), std::move(in->second), std::move(out->second),
        std::move(err->second),
        [this, weak, name = server.name, client](const Result<void>& started) {
          Health& health = health_[name];
          if (!started) {
            health.state = "failed";
            health.last_error = started.error().message();
            BackOff(name, client);
            Log("error", "server_start", {{"route", name}, {"error", health.last_error}});
            if (auto p = weak.lock()) {
              EndSession(p, "the MCP server '" + name + "' did not start: " + health.last_error);
            }
            return;
          }
          health.state = "up";
          if (auto p = weak.lock()) {
            p->started = true;
            FlushToServer(*p);
            if (p->ending) ArmStopTimers(p);  // ended while its sandbox was starting
          }
        },
        [this, weak](const ProcessExit& exit) {
          if (auto p = weak.lock()) ServerExited(p, exit);
        });
    if (server.limits && server.limits->time.count() > 0) {
      s->time_limit_timer = loop_->AddTimer(server.limits->time, [this, weak] {
        if (auto p = weak.lock()) {
          p->time_limit_timer = EventLoop::kNoTimer;
          EndSession(p, "the session reached its time limit");
        }
      });
    }
    sessions_[s->id] = s;
    all_sessions_.insert(s);
    TouchSession(s);
    Log("info", "session_start",
        {{"route", server.name}, {"session", s->id.substr(0, 8)}, {"client", client}});
    return s;
  }

  void BackOff(const std::string& server, const std::string& client) {
    Backoff& b = backoff_[BackoffKey(server, client)];
    ++b.consecutive_failures;
    std::chrono::milliseconds delay =
        options_.backoff_min * (int64_t{1} << std::min(b.consecutive_failures - 1, 16));
    delay = std::min(delay, options_.backoff_max);
    b.retry_after = Clock::now() + delay;
  }

  void TouchSession(const std::shared_ptr<Session>& s) {
    loop_->CancelTimer(s->idle_timer);
    std::weak_ptr<Session> weak = s;
    s->idle_timer = loop_->AddTimer(config_.limits.session_idle, [this, weak] {
      if (auto p = weak.lock()) {
        p->idle_timer = EventLoop::kNoTimer;
        // Streams still open count as use.
        if (!p->attached.empty() || p->streams.inflight() > 0) {
          TouchSession(p);
          return;
        }
        EndSession(p, "the session was idle too long");
      }
    });
  }

  // SSE response head for a stream; the connection then carries the stream.
  void AttachStream(Conn& c, const std::shared_ptr<Session>& s, uint64_t stream, bool close,
                    bool cork = false) {
    std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        "X-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n";
    if (!s->sessionless) head += "Mcp-Session-Id: " + s->id + "\r\n";
    if (close) head += "Connection: close\r\n";
    head += "\r\n";
    c.state = ConnState::kStreaming;
    c.session = s;
    c.stream = stream;
    c.log_status = 200;
    c.close_after_write = false;
    if (close) closing_after_stream_.insert(c.fd.get());
    s->attached[stream] = &c;
    c.cork_head_at = c.out.size();
    if (cork) {
      c.corked = true;
      c.cork_timer = loop_->AddTimer(kCorkDelay, [this, fd = c.fd.get()] {
        auto it = conns_.find(fd);
        if (it == conns_.end()) return;
        it->second->cork_timer = EventLoop::kNoTimer;
        Uncork(*it->second);
      });
    }
    Queue(c, head);
    c.cork_head_end = c.out.size();
  }

  void OpenGetStream(Conn& c, const std::shared_ptr<Session>& s,
                     std::optional<std::string_view> last_event_id, bool close) {
    if (last_event_id) {
      Result<SessionStreams::Resume> r = s->streams.ResumeAfter(*last_event_id);
      if (!r) {
        SendSimple(c, 400, r.error().message(), close);
        return;
      }
      if (s->attached.contains(r->stream)) {
        SendSimple(c, 409, "that stream is already connected", close);
        return;
      }
      AttachStream(c, s, r->stream, close);
      if (r->stream == 0) {
        s->streams.SetStandaloneAttached(true);
        (void)s->streams.TakeStandalonePending();  // the replay covers them
      }
      for (const SseRecord& rec : r->records) Queue(c, Chunk(SseEvent(rec.id, rec.data)));
      if (r->complete && !c.closed) EndStream(c, *s);
      return;
    }
    if (s->attached.contains(0)) {
      SendSimple(c, 409, "this session's GET stream is already connected", close);
      return;
    }
    AttachStream(c, s, 0, close);
    s->streams.SetStandaloneAttached(true);
    for (const SseRecord& rec : s->streams.TakeStandalonePending()) {
      Queue(c, Chunk(SseEvent(rec.id, rec.data)));
    }
  }

  // A stream's final message (its request's answer). An answer that comes while the stream's
  // SSE head still waits in `out` with nothing after it (a quick answer, no notification
  // before it) replaces that head: one application/json response, which every revision allows
  // for a request ("the server MUST either return Content-Type: text/event-stream ... or
  // Content-Type: application/json"; POST's Accept must list both) and which the client reads
  // without an SSE parser. Otherwise it is the stream's last event.
  void EndStreamWith(Conn& c, Session& s, const SessionStreams::Delivery& d) {
    std::string data = OutgoingData(s, d);
    if (c.corked && c.stream != 0 && c.out.size() == c.cork_head_end) {
      c.out.resize(c.cork_head_at);
      EndStream(c, s, {}, data);
      return;
    }
    EndStream(c, s, Chunk(SseEvent(d.record.id, data)));
  }

  // The stream's response was sent: the chunked body ends, the connection is free again.
  // `last_event`: the stream's final event, sent in the same write as the body's end; or
  // `json`: the whole answer as one application/json response (its SSE head was withdrawn).
  void EndStream(Conn& c, Session& s, std::string_view last_event = {},
                 std::optional<std::string_view> json = std::nullopt) {
    s.attached.erase(c.stream);
    if (c.stream == 0) s.streams.SetStandaloneAttached(false);
    c.session.reset();
    bool close = closing_after_stream_.erase(c.fd.get()) > 0 || shutting_down_ || c.read_eof;
    c.state = ConnState::kReading;
    LogRequest(c);
    c.close_after_write = close;
    c.corked = false;
    loop_->CancelTimer(c.cork_timer);
    c.cork_timer = EventLoop::kNoTimer;
    if (json) {
      std::string response =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ";
      response.reserve(response.size() + json->size() + 128);
      response += std::to_string(json->size());
      response += "\r\nCache-Control: no-store\r\n";
      if (!s.sessionless) {
        response += "Mcp-Session-Id: ";
        response += s.id;
        response += "\r\n";
      }
      if (close) response += "Connection: close\r\n";
      response += "\r\n";
      response += *json;
      Queue(c, response);
    } else {
      std::string end;
      end.reserve(last_event.size() + kLastChunk.size());
      end += last_event;
      end += kLastChunk;
      Queue(c, end);
    }
    if (!c.closed && !close) {
      ArmTimer(c, config_.limits.keepalive_idle);
      if (!c.in.empty()) ProcessInput(c);
    }
  }

  // The connection carrying a stream goes away.
  void DetachStream(Conn& c, bool cancel) {
    auto s = c.session.lock();
    c.session.reset();
    c.state = ConnState::kClosing;
    closing_after_stream_.erase(c.fd.get());
    if (!s) return;
    s->attached.erase(c.stream);
    if (c.stream == 0) {
      s->streams.SetStandaloneAttached(false);
      return;
    }
    s->original_ids.erase(c.stream);
    std::string id = s->streams.Abandon(c.stream);
    if (cancel && !id.empty() && !s->ending) {
      ToServer(*s, CancelledNotification(id, "the client closed the request's stream"));
      Log("info", "cancelled",
          {{"route", s->server}, {"session", s->id.substr(0, 8)}, {"request", id}});
    }
  }

  // --- The server's pipes ----------------------------------------------------------------------
  void ToServer(Session& s, std::string_view message) {
    if (s.ending || !s.stdin_fd) return;
    // MCP stdio: newline-delimited, no embedded newlines. A JSON text's newlines are only
    // whitespace between tokens (JSON strings cannot hold raw ones), so they become spaces.
    std::string line(message);
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::replace(line.begin(), line.end(), '\r', ' ');
    s.to_server += line;
    s.to_server += '\n';
    if (s.started) FlushToServer(s);
  }

  void FlushToServer(Session& s) {
    if (!s.stdin_fd) return;
    while (!s.to_server.empty()) {
      ssize_t n = send(s.stdin_fd.get(), s.to_server.data(), s.to_server.size(), MSG_NOSIGNAL);
      if (n > 0) {
        s.to_server.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        if (!loop_->IsRegistered(s.stdin_fd.get())) {
          (void)loop_->Add(s.stdin_fd.get(), EPOLLOUT, s.stdin_handler.get());
        }
        return;
      }
      // EPIPE: the server closed its stdin; its exit ends the session.
      s.to_server.clear();
      break;
    }
    loop_->Remove(s.stdin_fd.get());
    if (s.ending) s.stdin_fd.reset();
  }

  void ReadServerStdout(const std::shared_ptr<Session>& s) {
    char buf[kReadChunk];
    while (s->stdout_fd) {
      ssize_t n = read(s->stdout_fd.get(), buf, sizeof buf);
      if (n > 0) {
        std::string_view data(buf, static_cast<size_t>(n));
        while (!data.empty()) {
          size_t nl = data.find('\n');
          s->stdout_line.append(data.substr(0, nl));
          if (s->stdout_line.size() > config_.limits.max_message_bytes) {
            EndSession(s, "the MCP server wrote a message longer than " +
                              std::to_string(config_.limits.max_message_bytes) + " bytes");
            return;
          }
          if (nl == std::string_view::npos) break;
          data.remove_prefix(nl + 1);
          std::string line = std::move(s->stdout_line);
          s->stdout_line.clear();
          FromServer(s, std::move(line));
          if (!s->stdout_fd) return;
        }
        // A short read emptied the pipe: the loop (level-triggered) says when there is more,
        // which saves a read that would only say EAGAIN, per message.
        if (static_cast<size_t>(n) < sizeof buf) return;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      // EOF: the server closed its stdout (it is ending); its exit ends the session.
      loop_->Remove(s->stdout_fd.get());
      s->stdout_fd.reset();
      return;
    }
  }

  void FromServer(const std::shared_ptr<Session>& s, std::string line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) return;
    Result<Message> m = ClassifyMessage(line);
    if (!m) {
      Log("warn", "server_output",
          {{"route", s->server},
           {"session", s->id.substr(0, 8)},
           {"error", "not a JSON-RPC message: " + m.error().message()}});
      return;
    }
    // Not TouchSession: idleness is the client's (a chatty server kept abandoned sessions alive
    // for ever, a hostile review found); streams it keeps open still count as use.
    std::optional<SessionStreams::Delivery> d = s->streams.Route(*m, std::move(line));
    if (!d) return;
    if (d->ends_stream) {
      s->complete_streams.push_back(d->stream);
      while (s->complete_streams.size() > kMaxKeptStreams) {
        s->streams.Forget(s->complete_streams.front());
        s->complete_streams.pop_front();
      }
    }
    auto it = s->attached.find(d->stream);
    if (it == s->attached.end()) {
      if (d->ends_stream) s->original_ids.erase(d->stream);
      return;  // kept for a GET with Last-Event-ID
    }
    Conn& c = *it->second;
    if (d->ends_stream) {
      EndStreamWith(c, *s, *d);
    } else {
      Queue(c, Chunk(SseEvent(d->record.id, OutgoingData(*s, *d))));
      Uncork(c);  // a notification or progress goes now
    }
  }

  void ReadServerStderr(Session& s) {
    char buf[4096];
    while (s.stderr_fd) {
      ssize_t n = read(s.stderr_fd.get(), buf, sizeof buf);
      if (n > 0) {
        for (char ch : std::string_view(buf, static_cast<size_t>(n))) {
          if (ch == '\n' || s.stderr_line.size() >= kMaxStderrLine) {
            LogStderrLine(s);
            s.stderr_line.clear();
            if (ch == '\n') continue;
          }
          s.stderr_line += ch;
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      loop_->Remove(s.stderr_fd.get());
      s.stderr_fd.reset();
      LogStderrSuppressed(s);
      return;
    }
  }

  void LogStderrLine(Session& s) {
    const Clock::time_point now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - s.stderr_refilled).count();
    s.stderr_budget = std::min(kStderrBurst, s.stderr_budget + seconds * kStderrLinesPerSecond);
    s.stderr_refilled = now;
    if (s.stderr_budget < 1) {
      ++s.stderr_suppressed;
      return;
    }
    s.stderr_budget -= 1;
    LogStderrSuppressed(s);
    // The server's words, escaped by the JSON log line: it cannot forge log records.
    Log("info", "server_stderr",
        {{"route", s.server}, {"session", s.id.substr(0, 8)}, {"line", s.stderr_line}});
  }

  void LogStderrSuppressed(Session& s) {
    if (s.stderr_suppressed == 0) return;
    Log("warn", "server_stderr_suppressed",
        {{"route", s.server},
         {"session", s.id.substr(0, 8)},
         {"lines", Num(static_cast<long long>(s.stderr_suppressed))}});
    s.stderr_suppressed = 0;
  }

  // --- Ending sessions -------------------------------------------------------------------------
  // Ends a session: in-flight requests get a JSON-RPC error, streams end, the id is forgotten
  // (404 from now on), and the process is stopped: stdin closed, SIGTERM, SIGKILL.
  void EndSession(const std::shared_ptr<Session>& s, const std::string& reason,
                  int code = kServerGone) {
    if (s->ending) return;
    s->ending = true;
    s->end_reason = reason;
    sessions_.erase(s->id);
    if (auto it = sessionless_.find(s->sessionless_key);
        s->sessionless && it != sessionless_.end() && it->second == s) {
      sessionless_.erase(it);
    }
    loop_->CancelTimer(s->idle_timer);
    loop_->CancelTimer(s->time_limit_timer);
    for (const auto& [stream, id] : s->streams.InFlight()) {
      Message answer;
      answer.kind = MessageKind::kResponse;
      answer.id = id;
      std::optional<SessionStreams::Delivery> d =
          s->streams.Route(answer, ErrorResponse(id, code, reason));
      auto it = d ? s->attached.find(d->stream) : s->attached.end();
      if (it != s->attached.end()) {
        EndStreamWith(*it->second, *s, *d);
      }
    }
    // The GET stream, and streams resumed after their response, end too.
    std::vector<Conn*> rest;
    for (auto& [stream, conn] : s->attached) rest.push_back(conn);
    for (Conn* c : rest) {
      if (!c->closed) EndStream(*c, *s);
    }
    Log("info", "session_end",
        {{"route", s->server}, {"session", s->id.substr(0, 8)}, {"reason", reason}});
    // EOF on stdin is how an MCP client ends a stdio server (MCP stdio transport); then SIGTERM
    // and SIGKILL for one that does not listen.
    if (s->to_server.empty() && s->stdin_fd) {
      loop_->Remove(s->stdin_fd.get());
      s->stdin_fd.reset();
    }
    if (s->started) ArmStopTimers(s);
    // else: on_started arms them; a signal before the process runs would reach nothing.
  }

  // SIGTERM after the grace, then SIGKILL after another, unless the process exits first.
  void ArmStopTimers(const std::shared_ptr<Session>& s) {
    std::weak_ptr<Session> weak = s;
    s->term_timer = loop_->AddTimer(options_.stop_grace, [this, weak] {
      auto p = weak.lock();
      if (!p || p->exited) return;
      p->term_timer = EventLoop::kNoTimer;
      if (p->stdin_fd) {
        loop_->Remove(p->stdin_fd.get());
        p->stdin_fd.reset();
      }
      if (p->process) p->process->Signal(SIGTERM);
      p->kill_timer = loop_->AddTimer(options_.stop_grace, [weak] {
        auto q = weak.lock();
        if (q && !q->exited && q->process) q->process->Signal(SIGKILL);
      });
    });
  }

  void ServerExited(const std::shared_ptr<Session>& s, const ProcessExit& exit) {
    s->exited = true;
    Health& h = health_[s->server];
    const bool crashed = !s->ending;
    if (crashed) {
      std::string what = exit.error.empty()
                             ? "the MCP server '" + s->server + "' exited with status " +
                                   std::to_string(exit.code) +
                                   (exit.oom_killed ? " (it reached its memory limit)" : "")
                             : exit.error;
      if (s->started) {
        h.state = "failed";
        h.last_error = what;
        BackOff(s->server, s->client);
      }
      EndSession(s, what);
    } else if (s->started && Clock::now() - s->started_at > std::chrono::seconds(1)) {
      backoff_.erase(BackoffKey(s->server, s->client));
    }
    LogStderrSuppressed(*s);
    // Whatever is left in the pipes is read no more.
    for (UniqueFd* fd : {&s->stdin_fd, &s->stdout_fd, &s->stderr_fd}) {
      if (*fd) {
        loop_->Remove(fd->get());
        fd->reset();
      }
    }
    loop_->CancelTimer(s->term_timer);
    loop_->CancelTimer(s->kill_timer);
    Log(crashed ? "error" : "info", "server_exit",
        {{"route", s->server},
         {"session", s->id.substr(0, 8)},
         {"status", Num(exit.code)},
         {"reason", crashed ? "crashed" : s->end_reason}});
    // The supervisor thread has posted its last word: joining it is immediate.
    s->process.reset();
    all_sessions_.erase(s);
    MaybeFinishShutdown();
  }

  // --- Routes: byte-transparent HTTP proxying ----------------------------------------------------
  void StartProxy(Conn& c, const HttpRequest& req, const std::string& body, const HttpRoute& route,
                  const std::string& rest, const std::string& query) {
    // Dot segments (also percent-encoded) would climb out of the route's base path at the
    // upstream: refused, not resolved.
    if (HasDotSegment(rest)) {
      SendSimple(c, 400, "a path with '.' or '..' segments is not forwarded", true);
      return;
    }
    Health& h = health_[route.name];
    sockaddr_storage addr{};
    socklen_t len = 0;
    int family = AF_INET;
    if (route.host.find(':') != std::string::npos) {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
      a6->sin6_family = AF_INET6;
      a6->sin6_port = htons(route.port);
      inet_pton(AF_INET6, route.host.c_str(), &a6->sin6_addr);
      len = sizeof *a6;
      family = AF_INET6;
    } else {
      auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
      a4->sin_family = AF_INET;
      a4->sin_port = htons(route.port);
      inet_pton(AF_INET, route.host.c_str(), &a4->sin_addr);
      len = sizeof *a4;
    }
    UniqueFd fd(socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (fd) {
      int one = 1;  // relayed bytes leave at once, as on the client side
      setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (!fd ||
        (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 && errno != EINPROGRESS)) {
      h.state = "failed";
      h.last_error = std::string("connect: ") + ErrnoText(errno);
      SendSimple(c, 502, "the upstream is unreachable", true);
      return;
    }
    // The request as the upstream sees it: its own path below the route, our hop-by-hop
    // fields and our bearer token gone, the connection closed after one exchange.
    // /mcp/NAME/REST?QUERY -> BASE/REST?QUERY ("/" when both are empty).
    std::string target = route.base_path + rest;
    if (target.empty()) target = "/";
    target += query;
    std::string head = req.method + " " + target + " HTTP/1.1\r\n";
    const std::set<std::string> named_by_connection = ConnectionOptions(req.headers);
    for (const proxy::http::Header& hd : req.headers) {
      std::string lower = Lower(hd.name);
      if (IsHopByHop(hd.name) || named_by_connection.contains(lower)) continue;
      if (!tokens_.empty() && lower == "authorization") continue;
      head += hd.name + ": " + hd.value + "\r\n";
    }
    head += "Host: " + (family == AF_INET6 ? "[" + route.host + "]" : route.host) + ":" +
            std::to_string(route.port) + "\r\n";
    if (!body.empty() || req.content_length || req.chunked) {
      head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    }
    head += "Connection: close\r\n\r\n";
    c.to_upstream = head + body;
    c.state = ConnState::kProxying;
    c.log_status = 0;
    c.upstream = std::move(fd);
    c.upstream_head_done = false;
    c.upstream_in.clear();
    c.head_request = req.method == "HEAD";
    // The upstream must accept and send its response head in time; a stream after that head
    // may last as long as it likes.
    c.upstream_timer = loop_->AddTimer(config_.limits.upstream_timeout, [this, fd = c.fd.get(),
                                                                         name = route.name] {
      auto it = conns_.find(fd);
      if (it == conns_.end()) return;
      Conn& conn = *it->second;
      conn.upstream_timer = EventLoop::kNoTimer;
      if (conn.closed || conn.state != ConnState::kProxying || conn.upstream_head_done) return;
      Health& health = health_[name];
      health.state = "failed";
      health.last_error = conn.upstream_connected ? "no response in time" : "connect: timed out";
      UpstreamFailed(conn, 504, "the upstream did not answer in time");
    });
    Conn* raw = &c;
    c.upstream_handler = std::make_unique<FnHandler>(
        [this, raw, name = route.name](uint32_t events) { OnUpstream(*raw, events, name); });
    (void)loop_->Add(c.upstream.get(), EPOLLOUT | EPOLLIN | EPOLLRDHUP, c.upstream_handler.get());
  }

  void OnUpstream(Conn& c, uint32_t events, const std::string& route) {
    if (c.closed || !c.upstream) return;
    Health& h = health_[route];
    if (!c.upstream_connected && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(c.upstream.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        h.state = "failed";
        h.last_error = std::string("connect: ") + ErrnoText(err);
        UpstreamFailed(c, 502, "the upstream is unreachable");
        return;
      }
      c.upstream_connected = true;
      h.state = "up";
      h.last_error.clear();
    }
    if (!c.to_upstream.empty() && (events & EPOLLOUT)) {
      ssize_t n = send(c.upstream.get(), c.to_upstream.data(), c.to_upstream.size(), MSG_NOSIGNAL);
      if (n > 0) c.to_upstream.erase(0, static_cast<size_t>(n));
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        CloseConn(c);
        return;
      }
    }
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
      char buf[kReadChunk];
      // Backpressure: no more from upstream while the client has a lot unread.
      if (c.out.size() < kMaxOutBuffer / 2) {
        ssize_t n = read(c.upstream.get(), buf, sizeof buf);
        if (n > 0) {
          FromUpstream(c, std::string_view(buf, static_cast<size_t>(n)));
          if (c.closed || !c.upstream) return;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          if (!c.upstream_head_done) {
            UpstreamFailed(c, 502, "the upstream closed the connection without a response");
            return;
          }
          // The end of a body delimited by the close; a short Content-Length or chunked body
          // just ends (the client sees a short body and the close).
          UpstreamDone(c);
          return;
        }
      }
    }
    if (c.upstream) {
      // Not reading (the client is behind) means not watching EPOLLRDHUP either: it stays set.
      uint32_t want = (c.out.size() < kMaxOutBuffer / 2 ? EPOLLIN | EPOLLRDHUP : 0u) |
                      (c.to_upstream.empty() && c.upstream_connected ? 0u : EPOLLOUT);
      (void)loop_->Modify(c.upstream.get(), want);
    }
  }

  // Bytes from the upstream: the head parsed and re-sent (bounded, hop-by-hop fields replaced by
  // Connection: close), then the body relayed as it is framed, and nothing after it.
  void FromUpstream(Conn& c, std::string_view data) {
    if (!c.upstream_head_done) {
      c.upstream_in.append(data);
      while (true) {
        proxy::http::ResponseHeadResult head = proxy::http::ParseResponseHead(c.upstream_in);
        if (head.status == proxy::ParseStatus::kNeedMore) return;  // the parser bounds the head
        if (head.status == proxy::ParseStatus::kError) {
          UpstreamFailed(c, 502, "the upstream's response is malformed: " + head.error);
          return;
        }
        const proxy::http::Response& r = head.response;
        if (r.status < 200 && r.status != 101) {
          c.upstream_in.erase(0, head.consumed);  // 1xx: interim, not relayed
          continue;
        }
        if (r.status == 101) {
          UpstreamFailed(c, 502, "the upstream switched protocols");
          return;
        }
        std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " +
                          std::string(proxy::http::StatusPhrase(r.status)) + "\r\n";
        const std::set<std::string> named = ConnectionOptions(r.headers);
        for (const proxy::http::Header& h : r.headers) {
          const std::string lower = Lower(h.name);
          if (IsResponseHopByHop(lower) || named.contains(lower)) continue;
          out += h.name + ": " + h.value + "\r\n";
        }
        out += "Connection: close\r\n\r\n";
        proxy::http::Request request;
        request.method = c.head_request ? "HEAD" : "GET";
        c.upstream_framing = proxy::http::BodyFraming(request, r);
        c.upstream_left = c.upstream_framing.length;
        if (c.upstream_framing.kind == proxy::http::Framing::Kind::kChunked) {
          c.upstream_chunked.emplace();
        }
        c.upstream_head_done = true;
        c.log_status = r.status;
        loop_->CancelTimer(c.upstream_timer);
        c.upstream_timer = EventLoop::kNoTimer;
        std::string rest = c.upstream_in.substr(head.consumed);
        c.upstream_in.clear();
        c.upstream_in.shrink_to_fit();
        Queue(c, out);
        if (c.closed) return;
        if (c.upstream_framing.kind == proxy::http::Framing::Kind::kNone) {
          UpstreamDone(c);
          return;
        }
        if (!rest.empty()) RelayBody(c, rest);
        return;
      }
    }
    RelayBody(c, data);
  }

  void RelayBody(Conn& c, std::string_view data) {
    using Kind = proxy::http::Framing::Kind;
    switch (c.upstream_framing.kind) {
      case Kind::kContentLength: {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(c.upstream_left, data.size()));
        c.upstream_left -= n;
        Queue(c, data.substr(0, n));
        if (!c.closed && c.upstream_left == 0) UpstreamDone(c);
        return;
      }
      case Kind::kChunked: {
        proxy::http::ChunkedDecoder::Step step = c.upstream_chunked->Feed(data);
        Queue(c, data.substr(0, step.consumed));
        if (c.closed) return;
        if (step.status == proxy::ParseStatus::kDone) {
          UpstreamDone(c);
        } else if (step.status == proxy::ParseStatus::kError) {
          // Mid-body there is no room for an answer: the client sees the close.
          Log("warn", "upstream",
              {{"route", c.log_route},
               {"error", "bad chunked body: " + c.upstream_chunked->error()}});
          UpstreamDone(c);
        }
        return;
      }
      case Kind::kUntilClose:
        Queue(c, data);
        return;
      case Kind::kNone:
        UpstreamDone(c);
        return;
    }
  }

  // The response is complete (or cut): the upstream goes, the client's connection closes once
  // what is queued for it is sent.
  void UpstreamDone(Conn& c) {
    c.upstream_eof = true;
    loop_->CancelTimer(c.upstream_timer);
    c.upstream_timer = EventLoop::kNoTimer;
    if (c.upstream) {
      loop_->Remove(c.upstream.get());
      c.upstream.reset();
    }
    if (c.out.empty()) CloseConn(c);
  }

  // No response from the upstream: `status` to the client (nothing was sent to it yet).
  void UpstreamFailed(Conn& c, int status, const std::string& why) {
    loop_->CancelTimer(c.upstream_timer);
    c.upstream_timer = EventLoop::kNoTimer;
    if (c.upstream) {
      loop_->Remove(c.upstream.get());
      c.upstream.reset();
    }
    c.state = ConnState::kReading;
    SendSimple(c, status, why, /*close=*/true);
  }

  // --- Shutdown --------------------------------------------------------------------------------
  void BeginShutdown() {
    if (shutting_down_) return;
    shutting_down_ = true;
    Log("info", "shutdown", {{"sessions", Num(static_cast<long long>(sessions_.size()))}});
    loop_->Remove(listener_.get());
    listener_.reset();
    std::vector<std::shared_ptr<Session>> all;
    for (auto& [id, s] : sessions_) all.push_back(s);
    for (auto& [key, s] : sessionless_) all.push_back(s);
    for (auto& s : all) EndSession(s, "srt-mcp is shutting down", kServerGone);
    // Idle keep-alive connections go now; the others after their current response.
    std::vector<Conn*> idle;
    for (auto& [fd, c] : conns_) {
      if (c->state == ConnState::kReading && !c->head_started) idle.push_back(c.get());
    }
    for (Conn* c : idle) CloseConn(*c);
    loop_->AddTimer(options_.drain, [this] {
      for (const auto& s : all_sessions_) {
        if (s->process) s->process->Signal(SIGKILL);
      }
      std::vector<Conn*> open;
      for (auto& [fd, c] : conns_) open.push_back(c.get());
      for (Conn* c : open) CloseConn(*c);
      drain_expired_ = true;
      MaybeFinishShutdown();
    });
    MaybeFinishShutdown();
  }

  void MaybeFinishShutdown() {
    if (!shutting_down_ || !all_sessions_.empty()) return;
    if (!conns_.empty() && !drain_expired_) return;
    loop_->Stop();
  }

  McpConfig config_;
  DaemonOptions options_;
  std::vector<std::string> tokens_;
  std::map<std::string, std::string> token_clients_;  // token -> its client (TokenClient)
  uint64_t next_token_client_ = 0;
  std::unique_ptr<EventLoop> loop_;
  UniqueFd listener_;
  uint16_t port_;
  FnHandler accept_handler_;
  HostPolicy host_policy_;
  int signal_fd_ = -1;
  std::unique_ptr<FnHandler> signal_handler_;
  std::map<int, std::unique_ptr<Conn>> conns_;
  std::map<std::string, size_t> conns_per_client_;  // by Conn::peer_client
  bool accept_paused_ = false;                      // out of descriptors (PauseAccepting)
  EventLoop::TimerId accept_timer_ = EventLoop::kNoTimer;
  std::set<int> closing_after_stream_;
  std::unordered_map<std::string, std::shared_ptr<Session>> sessions_;  // live, by id
  std::set<std::shared_ptr<Session>> all_sessions_;  // live and ending, until the process exits
  // MCP 2026-07-28: a process per (server, client), by "server\nclient".
  std::map<std::string, std::shared_ptr<Session>> sessionless_;
  uint64_t next_internal_id_ = 0;
  std::map<std::string, Health> health_;
  std::map<std::string, Backoff> backoff_;  // by BackoffKey
  bool shutting_down_ = false;
  bool drain_expired_ = false;
};

// ---------------------------------------------------------------------------------------------

Result<std::string> LoadBearerToken(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) return SysError("bearer token file '" + path + "'");
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return SysError("stat '" + path + "'");
  if (!S_ISREG(st.st_mode)) {
    return MakeError(Errc::kPermissionDenied,
                     "bearer token file '" + path + "' is not a regular file");
  }
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    return MakeError(Errc::kPermissionDenied, "bearer token file '" + path +
                                                  "' is owned by another user (uid " +
                                                  std::to_string(st.st_uid) + ")");
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return MakeError(Errc::kPermissionDenied,
                     "bearer token file '" + path + "' has mode " + mode +
                         ": readable by others than its owner (chmod 600 it)");
  }
  if (st.st_size > 4096) {
    return MakeError(Errc::kInvalidArgument, "bearer token file '" + path + "' is over 4 KiB");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = read(fd.get(), text.data(), text.size());
  if (n < 0) return SysError("read '" + path + "'");
  text.resize(static_cast<size_t>(n));
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.erase(0, 1);
  if (text.size() < 16) {
    return MakeError(Errc::kInvalidArgument,
                     "bearer token file '" + path + "' holds fewer than 16 characters");
  }
  if (std::any_of(text.begin(), text.end(), [](char ch) { return ch <= ' ' || ch == 0x7f; })) {
    return MakeError(Errc::kInvalidArgument,
                     "bearer token file '" + path + "' holds whitespace or control characters");
  }
  return text;
}

Result<std::unique_ptr<Daemon>> Daemon::Create(McpConfig config, DaemonOptions options) {
  std::vector<std::string> tokens;
  for (const std::string& path : config.bearer_token_files) {
    SRT_ASSIGN_OR_RETURN(std::string t, LoadBearerToken(path));
    tokens.push_back(std::move(t));
  }
  if (tokens.empty() && !IsLoopbackHost(config.listen_host)) {
    return MakeError(Errc::kDenied, "refusing to listen on '" + config.listen_host +
                                        "' without auth.bearerTokenFiles");
  }
  std::string host = config.listen_host == "localhost" ? "127.0.0.1" : config.listen_host;
  const bool v6 = host.find(':') != std::string::npos;
  UniqueFd fd(socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return SysError("socket");
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(config.listen_port);
    if (inet_pton(AF_INET6, host.c_str(), &a->sin6_addr) != 1) {
      return MakeError(Errc::kInvalidArgument, "bad listen address '" + host + "'");
    }
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(config.listen_port);
    if (inet_pton(AF_INET, host.c_str(), &a->sin_addr) != 1) {
      return MakeError(Errc::kInvalidArgument, "bad listen address '" + host + "'");
    }
    len = sizeof *a;
  }
  const std::string where =
      (v6 ? "[" + host + "]" : host) + ":" + std::to_string(config.listen_port);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0)
    return SysError("bind " + where);
  if (listen(fd.get(), 128) != 0) return SysError("listen " + where);
  sockaddr_storage bound{};
  socklen_t blen = sizeof bound;
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &blen);
  uint16_t port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  SRT_ASSIGN_OR_RETURN(std::unique_ptr<EventLoop> loop, EventLoop::Create());
  auto impl = std::make_unique<Impl>(std::move(config), std::move(options), std::move(tokens),
                                     std::move(loop), std::move(fd), port);
  SRT_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Daemon::~Daemon() = default;
uint16_t Daemon::port() const { return impl_->port(); }
void Daemon::Run() { impl_->Run(); }
void Daemon::Shutdown() { impl_->Shutdown(); }
void Daemon::Reload() { impl_->Reload(); }
Result<void> Daemon::WatchSignals(int signal_fd) { return impl_->WatchSignals(signal_fd); }

}  // namespace srt::mcp
