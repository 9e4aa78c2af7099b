// SPDX-License-Identifier: Apache-2.0
// srt-mcp/daemon, in process on loopback: the HTTP server (keep-alive, pipelining, chunked SSE),
// sessions, streams, replay, cancellation, limits and shutdown, with a fake server process (a
// ServerRunner that answers on the pipes from its supervisor thread), so the daemon's threads
// run under TSan (srt_tsan_tests). The real sandboxes are tests/mcp/srt_mcp_e2e_test.
#include "daemon/daemon.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace srt::mcp {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// What the fake servers saw, shared with the test.
struct FakeWorld {
  std::mutex mu;
  std::vector<std::string> cancelled;  // requestIds of notifications/cancelled
  int started = 0;
  int ended = 0;
  std::vector<int> signals;
  std::vector<uint32_t> pids_limits;  // each process's SandboxOptions::limits->pids (0: none)
  std::vector<std::vector<mode_t>> stdio_types;  // each process's stdin, stdout, stderr (S_IFMT)
};

// A stdio MCP server in a thread: initialize, tools/call with arguments.op of echo (answers the
// arguments), sleep (no answer), notify (a notification, then the answer), huge (a line of
// arguments.bytes), exit (exits 3), deaf (answers, then stops reading stdin), spam (arguments.lines
// lines on stderr, then the answer), chatter (the answer, then a notification every 50 ms),
// slow (the answer after 300 ms).
class FakeRunner final : public ServerRunner {
 public:
  explicit FakeRunner(FakeWorld& world) : world_(world) {}
  Result<void> Start(SandboxOptions o) override {
    in_ = UniqueFd(fcntl(o.stdin_fd, F_DUPFD_CLOEXEC, 3));
    out_ = UniqueFd(fcntl(o.stdout_fd, F_DUPFD_CLOEXEC, 3));
    err_ = UniqueFd(fcntl(o.stderr_fd, F_DUPFD_CLOEXEC, 3));
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return SysError("pipe2");
    wake_read_ = UniqueFd(p[0]);
    wake_write_ = UniqueFd(p[1]);
    std::lock_guard lock(world_.mu);
    ++world_.started;
    world_.pids_limits.push_back(o.limits ? o.limits->pids : 0);
    std::vector<mode_t> types;
    for (int fd : {o.stdin_fd, o.stdout_fd, o.stderr_fd}) {
      struct stat st {};
      types.push_back(fstat(fd, &st) == 0 ? st.st_mode & S_IFMT : 0);
    }
    world_.stdio_types.push_back(std::move(types));
    return Ok();
  }
  ProcessExit Wait() override {
    ProcessExit exit = Serve();
    out_.reset();
    err_.reset();
    std::lock_guard lock(world_.mu);
    ++world_.ended;
    return exit;
  }
  void Signal(int signal) override {
    {
      std::lock_guard lock(world_.mu);
      world_.signals.push_back(signal);
    }
    const char b = static_cast<char>(signal);
    (void)!write(wake_write_.get(), &b, 1);
  }

 private:
  void Send(const json& m) {
    std::string line = m.dump() + "\n";
    (void)!write(out_.get(), line.data(), line.size());
  }
  ProcessExit Serve() {
    std::string buf;
    bool chatter = false;
    while (true) {
      pollfd p[2] = {{in_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
      int ready = poll(p, 2, chatter ? 50 : -1);
      if (ready < 0) continue;
      if (ready == 0) {
        Send({{"jsonrpc", "2.0"}, {"method", "notifications/message"}, {"params", {{"t", 1}}}});
        continue;
      }
      if (p[1].revents) {
        char sig = 0;
        (void)!read(wake_read_.get(), &sig, 1);
        if (sig == SIGTERM || sig == SIGKILL) return {128 + sig, false, ""};
      }
      if (!p[0].revents) continue;
      char chunk[4096];
      ssize_t n = read(in_.get(), chunk, sizeof chunk);
      if (n <= 0) return {0, false, ""};  // EOF on stdin: an MCP stdio server ends
      buf.append(chunk, static_cast<size_t>(n));
      size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        json m = json::parse(buf.substr(0, nl), nullptr, false);
        buf.erase(0, nl + 1);
        if (m.is_discarded()) continue;
        std::string method = m.value("method", "");
        if (method == "initialize") {
          Send({{"jsonrpc", "2.0"},
                {"id", m["id"]},
                {"result", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()}}}});
        } else if (method == "notifications/cancelled") {
          std::lock_guard lock(world_.mu);
          world_.cancelled.push_back(m["params"]["requestId"].dump());
        } else if (method == "tools/call") {
          json args = m["params"]["arguments"];
          std::string op = args.value("op", "");
          if (op == "exit") return {3, false, ""};
          if (op == "deaf") {
            // Answers, then never reads stdin again: only a signal ends it.
            Send({{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", args}});
            pollfd w{wake_read_.get(), POLLIN, 0};
            while (poll(&w, 1, -1) <= 0) {
            }
            char sig = 0;
            (void)!read(wake_read_.get(), &sig, 1);
            return {128 + sig, false, ""};
          }
          if (op == "sleep") continue;
          if (op == "slow") std::this_thread::sleep_for(std::chrono::milliseconds(300));
          if (op == "chatter") chatter = true;
          if (op == "spam") {
            const std::string line = "a line on stderr\n";
            for (int i = 0; i < args["lines"].get<int>(); ++i) {
              (void)!write(err_.get(), line.data(), line.size());
            }
          }
          if (op == "notify") {
            Send({{"jsonrpc", "2.0"}, {"method", "notifications/message"}, {"params", args}});
          }
          if (op == "huge") {
            Send({{"jsonrpc", "2.0"},
                  {"id", m["id"]},
                  {"result", std::string(args["bytes"].get<size_t>(), 'x')}});
            continue;
          }
          Send({{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", args}});
        }
      }
    }
  }

  FakeWorld& world_;
  UniqueFd in_;
  UniqueFd out_;
  UniqueFd err_;
  UniqueFd wake_read_;
  UniqueFd wake_write_;
};

// A client connection that reads HTTP/1.1 responses, Content-Length or chunked.
class Client {
 public:
  explicit Client(uint16_t port, const char* source = nullptr) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (source) {
      sockaddr_in from{};
      from.sin_family = AF_INET;
      inet_pton(AF_INET, source, &from.sin_addr);
      (void)bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from);
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Client() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  void Send(const std::string& s) { (void)!send(fd_, s.data(), s.size(), MSG_NOSIGNAL); }
  void ShutdownWrite() { (void)shutdown(fd_, SHUT_WR); }
  // What one read returns once bytes are there.
  std::string ReadOnce(std::chrono::milliseconds limit = 5s) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(limit.count())) != 1) return "";
    char b[65536];
    ssize_t n = read(fd_, b, sizeof b);
    return n > 0 ? std::string(b, static_cast<size_t>(n)) : "";
  }
  // Everything until the server closes the connection (or `limit` passes).
  std::string ReadAll(std::chrono::milliseconds limit = 5s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (Fill(deadline)) {
    }
    std::string out = std::move(buf_);
    buf_.clear();
    return out;
  }

  struct Response {
    int status = 0;
    std::string head;
    std::string body;  // de-chunked
    bool chunked = false;
  };
  // The next response's head, and its whole body unless `head_only` (for a stream).
  Response Read(bool head_only = false, std::chrono::milliseconds limit = 5s) {
    Response r;
    auto deadline = std::chrono::steady_clock::now() + limit;
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill(deadline)) return r;
    }
    r.head = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    r.status = std::stoi(r.head.substr(9, 3));
    r.chunked = Header(r.head, "Transfer-Encoding") == "chunked";
    if (head_only) return r;
    if (r.chunked) {
      while (true) {
        std::optional<std::string> c = NextChunk(limit);
        if (!c || c->empty()) break;
        r.body += *c;
      }
    } else {
      size_t len = std::stoul("0" + Header(r.head, "Content-Length"));
      while (buf_.size() < len) {
        if (!Fill(deadline)) return r;
      }
      r.body = buf_.substr(0, len);
      buf_.erase(0, len);
    }
    return r;
  }
  // The next chunk's payload; "" for the last chunk; nullopt on timeout or close.
  std::optional<std::string> NextChunk(std::chrono::milliseconds limit = 5s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    size_t crlf;
    while ((crlf = buf_.find("\r\n")) == std::string::npos) {
      if (!Fill(deadline)) return std::nullopt;
    }
    size_t len = std::stoul(buf_.substr(0, crlf), nullptr, 16);
    while (buf_.size() < crlf + 2 + len + 2) {
      if (!Fill(deadline)) return std::nullopt;
    }
    std::string payload = buf_.substr(crlf + 2, len);
    buf_.erase(0, crlf + 2 + len + 2);
    return payload;
  }
  // True if the server closed the connection within `limit`.
  bool ClosedWithin(std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!Fill(deadline)) return closed_;
    }
    return closed_;
  }
  static std::string Header(const std::string& head, const std::string& name) {
    size_t pos = 0;
    while ((pos = head.find("\r\n", pos)) != std::string::npos) {
      pos += 2;
      if (strncasecmp(head.c_str() + pos, (name + ":").c_str(), name.size() + 1) == 0) {
        size_t e = head.find("\r\n", pos);
        return head.substr(pos + name.size() + 2,
                           e == std::string::npos ? e : e - pos - name.size() - 2);
      }
    }
    return "";
  }
  bool connected() const { return connected_; }

 private:
  bool Fill(std::chrono::steady_clock::time_point deadline) {
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char b[65536];
      ssize_t n = read(fd_, b, sizeof b);
      if (n <= 0) {
        closed_ = true;
        return false;
      }
      buf_.append(b, static_cast<size_t>(n));
      return true;
    }
    return false;
  }
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  std::string buf_;
};

std::string Post(const std::string& body, const std::string& extra = "") {
  return "POST /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Accept: application/json, text/event-stream\r\n" +
         extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}
std::string Call(const std::string& id, const json& args) {
  return json{{"jsonrpc", "2.0"},
              {"id", json::parse(id)},
              {"method", "tools/call"},
              {"params", {{"name", "t"}, {"arguments", args}}}}
      .dump();
}
const std::string kInit =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})";

// The JSON of each "data:" line in SSE text; or of an application/json body (a quick answer
// without an SSE stream), which is one JSON object.
std::vector<json> Events(const std::string& sse) {
  std::vector<json> out;
  if (sse.starts_with("{")) {
    out.push_back(json::parse(sse, nullptr, false));
    return out;
  }
  size_t pos = 0;
  while ((pos = sse.find("data: ", pos)) != std::string::npos) {
    size_t e = sse.find('\n', pos);
    out.push_back(json::parse(sse.substr(pos + 6, e - pos - 6), nullptr, false));
    pos = e;
  }
  return out;
}

class DaemonTest : public ::testing::Test {
 protected:
  void Start(const std::string& limits = "{}", const std::string& server_limits = "{}",
             const std::string& more = "") {
    StartWith(
        R"({"listen": {"port": 0, "domains": ["mcp.test"]}, "servers": {"fake": {"command": "fake", "limits": )" +
        server_limits + R"(}}, "limits": )" + limits + more + "}");
  }
  void StartWith(const std::string& text) {
    Result<McpConfig> config = ParseMcpConfig(text, "test.json");
    ASSERT_TRUE(config) << config.error().message();
    DaemonOptions o;
    o.log = [this](std::string_view line) {
      std::lock_guard lock(log_mu_);
      log_.emplace_back(line);
    };
    o.runner = [this] { return std::make_unique<FakeRunner>(world_); };
    o.stop_grace = 200ms;
    o.backoff_min = 100ms;
    o.reload = [this]() -> Result<McpConfig> {
      std::lock_guard lock(log_mu_);
      return ParseMcpConfig(reload_text_, "reload.json");
    };
    Result<std::unique_ptr<Daemon>> d = Daemon::Create(std::move(*config), o);
    ASSERT_TRUE(d) << d.error().message();
    daemon_ = std::move(*d);
    port_ = daemon_->port();
    thread_ = std::thread([this] { daemon_->Run(); });
  }
  void TearDown() override {
    if (daemon_) {
      daemon_->Shutdown();
      thread_.join();
      std::lock_guard lock(world_.mu);
      EXPECT_EQ(world_.started, world_.ended) << "a server process outlived the daemon";
    }
  }
  // A new session over `c`; its id.
  std::string Initialize(Client& c) {
    c.Send(Post(kInit));
    Client::Response r = c.Read();
    EXPECT_EQ(r.status, 200) << r.head << r.body;
    EXPECT_EQ(Client::Header(r.head, "Content-Type"), "application/json");
    return Client::Header(r.head, "Mcp-Session-Id");
  }
  std::string Sid(const std::string& id) { return "Mcp-Session-Id: " + id + "\r\n"; }
  bool Logged(const std::string& needle) {
    std::lock_guard lock(log_mu_);
    for (const std::string& l : log_) {
      if (l.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  bool Eventually(const std::function<bool()>& f, std::chrono::milliseconds limit = 5s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (f()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return f();
  }

  FakeWorld world_;
  std::string reload_text_;  // what the configuration file says at the next Reload()
  std::mutex log_mu_;
  std::vector<std::string> log_;
  std::unique_ptr<Daemon> daemon_;
  std::thread thread_;
  uint16_t port_ = 0;
};

TEST_F(DaemonTest, KeepAliveAndPipelinedRequests) {
  Start();
  Client c(port_);
  const std::string health = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  c.Send(health + health);
  Client::Response a = c.Read();
  Client::Response b = c.Read();
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(json::parse(b.body)["routes"]["fake"]["state"], "up");
  // Split at every byte: the head parser waits for the rest.
  for (char ch : health) c.Send(std::string(1, ch));
  EXPECT_EQ(c.Read().status, 200);
}

TEST_F(DaemonTest, ASessionFromInitializeToDelete) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);
  ASSERT_EQ(sid.size(), 32u);
  c.Send(Post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", Sid(sid)));
  EXPECT_EQ(c.Read().status, 202);
  c.Send(Post(Call("1", {{"op", "echo"}, {"v", 42}}), Sid(sid)));
  Client::Response r = c.Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Client::Header(r.head, "Content-Type"), "application/json");
  std::vector<json> events = Events(r.body);
  ASSERT_EQ(events.size(), 1u) << r.body;
  EXPECT_EQ(events[0]["result"]["v"], 42);
  c.Send("DELETE /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\n" + Sid(sid) + "\r\n");
  EXPECT_EQ(c.Read().status, 200);
  c.Send(Post(Call("2", {{"op", "echo"}}), Sid(sid)));
  EXPECT_EQ(c.Read().status, 404);
  EXPECT_TRUE(Eventually([&] {
    std::lock_guard lock(world_.mu);
    return world_.ended == 1;
  }));
}

TEST_F(DaemonTest, ServerMessagesWithoutARequestGoToTheGetStream) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);
  Client get(port_);
  get.Send("GET /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n" + Sid(sid) +
           "\r\n");
  Client::Response head = get.Read(/*head_only=*/true);
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.chunked);
  c.Send(Post(Call("5", {{"op", "notify"}, {"text", "hello"}}), Sid(sid)));
  Client::Response r = c.Read();
  std::vector<json> on_post = Events(r.body);
  ASSERT_EQ(on_post.size(), 1u) << r.body;
  EXPECT_EQ(on_post[0]["id"], 5);
  std::optional<std::string> chunk = get.NextChunk();
  ASSERT_TRUE(chunk);
  std::vector<json> on_get = Events(*chunk);
  ASSERT_EQ(on_get.size(), 1u);
  EXPECT_EQ(on_get[0]["method"], "notifications/message");
  EXPECT_NE(chunk->find("id: 0-1\n"), std::string::npos) << *chunk;
  // A second GET stream is refused while the first is connected.
  Client get2(port_);
  get2.Send("GET /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n" +
            Sid(sid) + "\r\n");
  EXPECT_EQ(get2.Read().status, 409);
}

TEST_F(DaemonTest, LastEventIdReplaysAStreamsMessages) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);                                    // stream 1
  c.Send(Post(Call("\"a\"", {{"op", "echo"}, {"n", 1}}), Sid(sid)));  // stream 2
  Client::Response first = c.Read();
  ASSERT_EQ(first.status, 200);
  // A quick answer is one application/json body; its stream still keeps it as event 2-1.
  EXPECT_EQ(json::parse(first.body)["result"]["n"], 1) << first.body;
  // Resuming from before that event replays it, then the stream ends (its response was sent).
  Client again(port_);
  again.Send("GET /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n" +
             Sid(sid) + "Last-Event-ID: 2-0\r\n\r\n");
  Client::Response replay = again.Read();
  EXPECT_EQ(replay.status, 200);
  std::vector<json> events = Events(replay.body);
  ASSERT_EQ(events.size(), 1u) << replay.body;
  EXPECT_EQ(events[0]["result"]["n"], 1);
  Client bad(port_);
  bad.Send("GET /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n" + Sid(sid) +
           "Last-Event-ID: 9-1\r\n\r\n");
  EXPECT_EQ(bad.Read().status, 400);
}

TEST_F(DaemonTest, ClosingARequestsConnectionCancelsIt) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);
  {
    Client caller(port_);
    caller.Send(Post(Call("\"slow\"", {{"op", "sleep"}}), Sid(sid)));
    EXPECT_EQ(caller.Read(/*head_only=*/true).status, 200);
  }
  EXPECT_TRUE(Eventually([&] {
    std::lock_guard lock(world_.mu);
    return world_.cancelled == std::vector<std::string>{"\"slow\""};
  }));
  // The session goes on.
  c.Send(Post(Call("7", {{"op", "echo"}}), Sid(sid)));
  EXPECT_EQ(c.Read().status, 200);
}

TEST_F(DaemonTest, RequestsInFlightAreLimited) {
  Start(R"({"maxInflightPerSession": 1})");
  Client c(port_);
  std::string sid = Initialize(c);
  Client caller(port_);
  caller.Send(Post(Call("1", {{"op", "sleep"}}), Sid(sid)));
  EXPECT_EQ(caller.Read(/*head_only=*/true).status, 200);
  c.Send(Post(Call("2", {{"op", "echo"}}), Sid(sid)));
  Client::Response r = c.Read();
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(Client::Header(r.head, "Retry-After"), "1");
  // The same id twice in flight is the client's mistake.
  Client dup(port_);
  dup.Send(Post(Call("1", {{"op", "echo"}}), Sid(sid)));
  EXPECT_EQ(dup.Read().status, 503);
}

TEST_F(DaemonTest, AServerLineOverTheLimitEndsTheSession) {
  Start(R"({"maxMessageBytes": 2048})");
  Client c(port_);
  std::string sid = Initialize(c);
  c.Send(Post(Call("1", {{"op", "huge"}, {"bytes", 100000}}), Sid(sid)));
  Client::Response r = c.Read();
  std::vector<json> events = Events(r.body);
  ASSERT_EQ(events.size(), 1u) << r.body;
  EXPECT_EQ(events[0]["error"]["code"], -32000);
  EXPECT_NE(events[0]["error"]["message"].get<std::string>().find("longer than 2048 bytes"),
            std::string::npos);
  c.Send(Post(Call("2", {{"op", "echo"}}), Sid(sid)));
  EXPECT_EQ(c.Read().status, 404);
}

TEST_F(DaemonTest, ACrashAnswersTheCallsInFlightAndBacksOff) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);
  Client slow(port_);
  slow.Send(Post(Call("\"waiting\"", {{"op", "sleep"}}), Sid(sid)));
  EXPECT_EQ(slow.Read(/*head_only=*/true).status, 200);
  c.Send(Post(Call("1", {{"op", "exit"}}), Sid(sid)));
  // The call that crashed it is answered at once (one JSON body), the one waiting on its
  // stream with the stream's last event.
  Client::Response crashed = c.Read();
  EXPECT_EQ(crashed.status, 200);
  std::vector<json> answer = Events(crashed.body);
  ASSERT_EQ(answer.size(), 1u) << crashed.body;
  EXPECT_EQ(answer[0]["error"]["message"], "the MCP server 'fake' exited with status 3");
  std::optional<std::string> chunk = slow.NextChunk();
  ASSERT_TRUE(chunk);
  std::vector<json> events = Events(*chunk);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["error"]["message"], "the MCP server 'fake' exited with status 3");
  EXPECT_EQ(slow.NextChunk(), "");  // the stream ends
  Client h(port_);
  h.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  json health = json::parse(h.Read().body);
  EXPECT_EQ(health["routes"]["fake"]["state"], "failed");
  h.Send(Post(kInit));
  EXPECT_EQ(h.Read().status, 503);  // within the backoff
  std::this_thread::sleep_for(150ms);
  h.Send(Post(kInit));
  EXPECT_EQ(h.Read().status, 200);
}

TEST_F(DaemonTest, AServerThatStopsReadingCannotMakeTheDaemonHoldEverything) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);
  c.Send(Post(Call("1", {{"op", "deaf"}}), Sid(sid)));
  EXPECT_EQ(c.Read().status, 200);
  const std::string big = json{{"jsonrpc", "2.0"},
                               {"method", "notifications/x"},
                               {"params", {{"pad", std::string(3 << 20, 'p')}}}}
                              .dump();
  int status = 0;
  for (int i = 0; i < 6 && status != 503; ++i) {
    c.Send(Post(big, Sid(sid)));
    status = c.Read().status;
  }
  EXPECT_EQ(status, 503);
}

// MCP 2026-07-28: POST only, no sessions, mirrored headers checked.
std::string Modern(const std::string& id, const json& args, const std::string& headers = "") {
  json body = {{"jsonrpc", "2.0"},
               {"id", json::parse(id)},
               {"method", "tools/call"},
               {"params",
                {{"name", "t"},
                 {"arguments", args},
                 {"_meta", {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}}}}}};
  return Post(body.dump(),
              "MCP-Protocol-Version: 2026-07-28\r\n" +
                  (headers.empty() ? "Mcp-Method: tools/call\r\nMcp-Name: t\r\n" : headers));
}

TEST_F(DaemonTest, SessionlessRequestsShareOneProcessPerClientAndKeepTheirIds) {
  Start();
  // Two requests with the same id at once, from one client: each gets its own answer.
  Client slow(port_);
  slow.Send(Modern("1", {{"op", "sleep"}}));
  Client::Response held = slow.Read(/*head_only=*/true);
  EXPECT_EQ(held.status, 200);
  EXPECT_EQ(Client::Header(held.head, "Mcp-Session-Id"), "");
  Client c(port_);
  c.Send(Modern("1", {{"op", "echo"}, {"n", 7}}, ""));
  Client::Response r = c.Read();
  EXPECT_EQ(r.status, 200) << r.head << r.body;
  EXPECT_EQ(Client::Header(r.head, "Mcp-Session-Id"), "");
  // A quick answer is one JSON body here too, with the client's own id back on it.
  EXPECT_EQ(Client::Header(r.head, "Content-Type"), "application/json");
  std::vector<json> events = Events(r.body);
  ASSERT_EQ(events.size(), 1u) << r.body;
  EXPECT_EQ(events[0]["id"], 1);
  EXPECT_EQ(events[0]["result"]["n"], 7);
  // Closing the stream is the cancellation; the server hears of it under srt-mcp's own id.
  slow.Close();
  EXPECT_TRUE(Eventually([&] {
    std::lock_guard lock(world_.mu);
    return world_.cancelled.size() == 1 && world_.cancelled[0].starts_with("\"srt-mcp-");
  }));
  std::lock_guard lock(world_.mu);
  EXPECT_EQ(world_.started, 1);
}

TEST_F(DaemonTest, SessionlessRefusals) {
  Start();
  Client c(port_);
  c.Send(
      "GET /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
      "MCP-Protocol-Version: 2026-07-28\r\n\r\n");
  Client::Response get = c.Read();
  EXPECT_EQ(get.status, 405);
  EXPECT_EQ(Client::Header(get.head, "Allow"), "POST");
  c.Send(
      "DELETE /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nMCP-Protocol-Version: 2026-07-28\r\n\r\n");
  EXPECT_EQ(c.Read().status, 405);
  c.Send(Modern("2", {{"op", "echo"}}, "Mcp-Method: tools/call\r\nMcp-Name: other\r\n"));
  Client::Response mismatch = c.Read();
  EXPECT_EQ(mismatch.status, 400);
  json error = json::parse(mismatch.body);
  EXPECT_EQ(error["id"], 2);
  EXPECT_EQ(error["error"]["code"], -32020);
  EXPECT_EQ(error["error"]["message"],
            "Header mismatch: Mcp-Name header value 'other' does not match the body");
  c.Send(Modern("3", {{"op", "echo"}}, "Mcp-Name: t\r\n"));
  EXPECT_EQ(c.Read().status, 400);  // no Mcp-Method
  // A notification: 202.
  json note = {
      {"jsonrpc", "2.0"},
      {"method", "notifications/x"},
      {"params", {{"_meta", {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}}}}}};
  c.Send(Post(note.dump(), "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: notifications/x\r\n"));
  EXPECT_EQ(c.Read().status, 202);
}

TEST_F(DaemonTest, TheHostNameCanNameTheServer) {
  Start();
  Client c(port_);
  const std::string host = "Host: fake.mcp.test:" + std::to_string(port_) + "\r\n";
  c.Send("POST /mcp HTTP/1.1\r\n" + host +
         "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
         "Content-Length: " +
         std::to_string(kInit.size()) + "\r\n\r\n" + kInit);
  Client::Response r = c.Read();
  EXPECT_EQ(r.status, 200) << r.head << r.body;
  EXPECT_EQ(Client::Header(r.head, "Mcp-Session-Id").size(), 32u);
  c.Send("GET /healthz HTTP/1.1\r\nHost: mcp.test\r\n\r\n");
  EXPECT_EQ(c.Read().status, 200);
  c.Send("GET /healthz HTTP/1.1\r\nHost: a.b.mcp.test\r\n\r\n");
  EXPECT_EQ(c.Read().status, 403);
  c.Send("POST /mcp HTTP/1.1\r\nHost: nope.mcp.test\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(c.Read().status, 404);
}

TEST_F(DaemonTest, AServerProcessHasATimeLimit) {
  Start("{}", R"({"time": "300ms"})");
  Client c(port_);
  std::string sid = Initialize(c);
  c.Send(Post(Call("1", {{"op", "sleep"}}), Sid(sid)));
  Client::Response r = c.Read(false, 5s);
  std::vector<json> events = Events(r.body);
  ASSERT_EQ(events.size(), 1u) << r.body;
  EXPECT_EQ(events[0]["error"]["message"], "the session reached its time limit");
}

TEST_F(DaemonTest, IdleSessionsExpire) {
  Start(R"({"sessionIdle": "300ms"})");
  Client c(port_);
  std::string sid = Initialize(c);
  EXPECT_TRUE(Eventually([&] { return Logged("the session was idle too long"); }));
  c.Send(Post(Call("1", {{"op", "echo"}}), Sid(sid)));
  EXPECT_EQ(c.Read().status, 404);
}

TEST_F(DaemonTest, IdleConnectionsAndSlowHeadsAreClosed) {
  Start(R"({"keepAliveIdle": "200ms", "headTimeout": "200ms"})");
  Client idle(port_);
  EXPECT_TRUE(idle.ClosedWithin(2s));
  Client slow(port_);
  slow.Send("GET /healthz HTTP/1.1\r\n");
  Client::Response r = slow.Read(false, 2s);
  EXPECT_EQ(r.status, 408);
}

TEST_F(DaemonTest, OversizedAndMalformedRequests) {
  Start(R"({"maxBodyBytes": 1024})");
  Client big(port_);
  big.Send("POST /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000\r\n\r\n");
  EXPECT_EQ(big.Read().status, 413);
  Client junk(port_);
  junk.Send("GARBAGE\r\n\r\n");
  EXPECT_EQ(junk.Read().status, 400);
  Client head(port_);
  head.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + std::string(70000, 'a') +
            "\r\n\r\n");
  EXPECT_EQ(head.Read().status, 431);
  Client accept(port_);
  accept.Send(
      "POST /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n"
      "Content-Length: 2\r\n\r\n{}");
  EXPECT_EQ(accept.Read().status, 406);
}

// --- What a hostile review found (issue 13) ----------------------------------------------------

// A connection that never sends a request head goes after headTimeout, not keepAliveIdle: idle
// unauthenticated connections cannot hold the connection slots for long.
TEST_F(DaemonTest, ANewConnectionMustSendItsHeadWithinTheHeadTimeout) {
  Start(R"({"keepAliveIdle": "20s", "headTimeout": "200ms"})");
  Client idle(port_);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(idle.ClosedWithin(3s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  // After a request, the connection may idle for keepAliveIdle.
  Client kept(port_);
  kept.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(kept.Read().status, 200);
  EXPECT_FALSE(kept.ClosedWithin(600ms));
}

// One client (one peer address; every loopback address is one client) cannot take every
// connection slot.
TEST_F(DaemonTest, ConnectionsPerClientAreLimited) {
  Start(R"({"maxConnectionsPerClient": 2})");
  Client a(port_);
  Client b(port_, "127.0.0.2");
  std::this_thread::sleep_for(100ms);
  Client c(port_, "127.0.0.3");
  Client::Response r = c.Read();
  EXPECT_EQ(r.status, 503) << r.head;
  EXPECT_EQ(Client::Header(r.head, "Retry-After"), "1");
  EXPECT_TRUE(c.ClosedWithin(2s));
  // A slot frees when a connection goes (once the daemon has seen it go).
  a.Close();
  EXPECT_TRUE(Eventually([&] {
    Client d(port_);
    d.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    return d.Read().status == 200;
  }));
}

// The CPU time the daemon's loop thread used so far.
std::chrono::nanoseconds ThreadCpu(std::thread& t) {
  clockid_t clock;
  if (pthread_getcpuclockid(t.native_handle(), &clock) != 0) return {};
  timespec ts{};
  clock_gettime(clock, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

// accept4 failing with EMFILE leaves the connection in the backlog and the listener readable:
// the loop must stop watching it until an fd frees, not spin.
TEST_F(DaemonTest, AcceptBacksOffWhenOutOfDescriptors) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own (UBSan's memory probe "
                  "opens a pipe): at EMFILE it reports a fresh object's vptr as invalid";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own (UBSan's memory probe "
                  "opens a pipe): at EMFILE it reports a fresh object's vptr as invalid";
#endif
#endif
  Start();
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  Client waiting(port_);  // connected below, once no descriptor is left for the daemon
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  int highest = 0;
  for (int i = 0; i < 4096; ++i) {
    if (fcntl(i, F_GETFD) >= 0) highest = i;
  }
  // No free descriptor below the highest open one (the gaps filled), none above it: accept4
  // gets EMFILE.
  std::vector<int> fillers;
  while (true) {
    int filler = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (filler < 0) break;
    if (filler > highest) {
      close(filler);
      break;
    }
    fillers.push_back(filler);
  }
  rlimit low = old;
  low.rlim_cur = static_cast<rlim_t>(highest + 1);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port_);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  std::this_thread::sleep_for(100ms);
  const std::chrono::nanoseconds before = ThreadCpu(thread_);
  std::this_thread::sleep_for(500ms);
  const std::chrono::nanoseconds used = ThreadCpu(thread_) - before;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  for (int filler : fillers) close(filler);
  EXPECT_LT(used, 100ms) << "the loop spun on a listener it could not accept from";
  EXPECT_TRUE(Eventually([&] { return Logged("\"event\":\"accept\""); }));
  // Once descriptors are there again, the connection is served.
  const std::string health = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  (void)!send(fd, health.data(), health.size(), MSG_NOSIGNAL);
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 5000), 1);
  char buf[64] = {};
  EXPECT_GT(read(fd, buf, sizeof buf - 1), 12);
  EXPECT_EQ(std::string(buf).substr(0, 12), "HTTP/1.1 200");
  close(fd);
}

// Without auth, every loopback source address is the same client: 127.0.0.2 is no way around
// maxSessionsPerClient.
TEST_F(DaemonTest, LoopbackAddressesAreOneClient) {
  Start(R"({"maxSessionsPerClient": 1})");
  Client a(port_);
  std::string sid = Initialize(a);
  ASSERT_EQ(sid.size(), 32u);
  Client b(port_, "127.0.0.2");
  b.Send(Post(kInit));
  Client::Response r = b.Read();
  EXPECT_EQ(r.status, 503) << r.head << r.body;
  EXPECT_NE(r.body.find("too many sessions for this client"), std::string::npos);
}

// Writes `token` to a 0600 file in `dir`; its path.
std::string TokenFile(const std::string& dir, const std::string& name, const std::string& token) {
  std::string path = dir + "/" + name;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  (void)!write(fd, token.data(), token.size());
  close(fd);
  return path;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/srt-mcp-test-XXXXXX";
    path_ = mkdtemp(tmpl) ? tmpl : "";
  }
  ~TempDir() {
    if (!path_.empty()) (void)!system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One client crashing its own server backs off that client, not every client of the server.
TEST_F(DaemonTest, ACrashBacksOffTheClientThatCausedIt) {
  TempDir dir;
  const std::string alice = "alice-token-0123456789";
  const std::string bob = "bob-token-0123456789ab";
  StartWith(R"({"listen": {"port": 0}, "auth": {"bearerTokenFiles": [")" +
            TokenFile(dir.path(), "a", alice) + R"(", ")" + TokenFile(dir.path(), "b", bob) +
            R"("]}, "servers": {"fake": {"command": "fake"}}})");
  auto as = [](const std::string& token) { return "Authorization: Bearer " + token + "\r\n"; };
  Client a(port_);
  a.Send(Post(kInit, as(alice)));
  Client::Response init = a.Read();
  ASSERT_EQ(init.status, 200);
  a.Send(Post(Call("1", {{"op", "exit"}}),
              as(alice) + Sid(Client::Header(init.head, "Mcp-Session-Id"))));
  EXPECT_EQ(a.Read().status, 200);
  Client b(port_);
  b.Send(Post(kInit, as(bob)));
  EXPECT_EQ(b.Read().status, 200);  // bob's sessions are not alice's crashes
  a.Send(Post(kInit, as(alice)));
  Client::Response again = a.Read();
  EXPECT_EQ(again.status, 503) << again.head;  // alice waits out her backoff
  EXPECT_FALSE(Client::Header(again.head, "Retry-After").empty());
}

// Behind a tunnel on loopback (cloudflared, a TLS terminator) every client's connections come
// from 127.0.0.1: with auth, a loopback connection counts against maxConnectionsPerClient as
// its token once a request proves one, so one user's streams do not use up another's
// connections; connections that have not authenticated yet still share the loopback's count.
TEST_F(DaemonTest, LoopbackConnectionsCountAsTheirToken) {
  TempDir dir;
  const std::string alice = "alice-token-0123456789";
  const std::string bob = "bob-token-0123456789ab";
  StartWith(R"({"listen": {"port": 0}, "auth": {"bearerTokenFiles": [")" +
            TokenFile(dir.path(), "a", alice) + R"(", ")" + TokenFile(dir.path(), "b", bob) +
            R"("]}, "servers": {"fake": {"command": "fake"}},
               "limits": {"maxConnectionsPerClient": 2}})");
  auto as = [](const std::string& token) { return "Authorization: Bearer " + token + "\r\n"; };
  const std::string health = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  Client a1(port_);
  Client a2(port_);
  a1.Send(health + as(alice) + "\r\n");
  a2.Send(health + as(alice) + "\r\n");
  EXPECT_EQ(a1.Read().status, 200);
  EXPECT_EQ(a2.Read().status, 200);
  // Alice holds her two; Bob, through the same loopback, still gets his.
  Client b1(port_);
  b1.Send(health + as(bob) + "\r\n");
  EXPECT_EQ(b1.Read().status, 200);
  // A third of Alice's is refused at her first request, and closed.
  Client a3(port_);
  a3.Send(health + as(alice) + "\r\n");
  Client::Response over = a3.Read();
  EXPECT_EQ(over.status, 503) << over.head;
  EXPECT_FALSE(Client::Header(over.head, "Retry-After").empty());
  EXPECT_TRUE(a3.ClosedWithin(1s));
  // Unauthenticated connections share the loopback's count: two idle ones fill it.
  Client idle1(port_);
  Client idle2(port_);
  std::this_thread::sleep_for(100ms);  // both accepted
  Client idle3(port_);
  EXPECT_EQ(idle3.Read(false, 2s).status, 503);
  // Alice's first still works (keep-alive), as her own.
  a1.Send(health + as(alice) + "\r\n");
  EXPECT_EQ(a1.Read().status, 200);
}

// A server cannot flood the log through its stderr: lines beyond a burst are counted, not logged.
TEST_F(DaemonTest, AServersStderrIsRateLimited) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);
  c.Send(Post(Call("1", {{"op", "spam"}, {"lines", 5000}}), Sid(sid)));
  EXPECT_EQ(c.Read().status, 200);
  c.Send("DELETE /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\n" + Sid(sid) + "\r\n");
  EXPECT_EQ(c.Read().status, 200);
  EXPECT_TRUE(Eventually([&] { return Logged("\"event\":\"server_stderr_suppressed\""); }));
  std::lock_guard lock(log_mu_);
  size_t lines = 0;
  for (const std::string& l : log_) {
    if (l.find("\"event\":\"server_stderr\"") != std::string::npos) ++lines;
  }
  EXPECT_GT(lines, 0u);
  EXPECT_LE(lines, 200u);
}

// An HTTP upstream on loopback: answers each connection with `reply` after reading a request
// head (and keeps it open for `hold` when asked), recording the heads it read.
class Upstream {
 public:
  explicit Upstream(std::string reply, std::chrono::milliseconds hold = 0ms)
      : reply_(std::move(reply)), hold_(hold) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    (void)listen(fd_, 16);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~Upstream() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    thread_.join();
    close(fd_);
  }
  uint16_t port() const { return port_; }
  std::vector<std::string> heads() {
    std::lock_guard lock(mu_);
    return heads_;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::string in;
      char b[4096];
      auto deadline = std::chrono::steady_clock::now() + 3s;
      while (in.find("\r\n\r\n") == std::string::npos &&
             std::chrono::steady_clock::now() < deadline) {
        pollfd q{c, POLLIN, 0};
        if (poll(&q, 1, 50) <= 0) continue;
        ssize_t n = read(c, b, sizeof b);
        if (n <= 0) break;
        in.append(b, static_cast<size_t>(n));
      }
      {
        std::lock_guard lock(mu_);
        heads_.push_back(in.substr(0, in.find("\r\n\r\n")));
      }
      (void)!send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
      auto until = std::chrono::steady_clock::now() + hold_;
      while (!stop_ && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
      close(c);
    }
  }
  std::string reply_;
  std::chrono::milliseconds hold_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::string> heads_;
  std::thread thread_;
};

std::string WithRoute(uint16_t port, const std::string& limits = "{}") {
  return R"({"listen": {"port": 0}, "servers": {"fake": {"command": "fake"}}, "routes": [{"name": "up", "upstream": "http://127.0.0.1:)" +
         std::to_string(port) + R"(/base"}], "limits": )" + limits + "}";
}

// A route's upstream that accepts and then says nothing: 504 after upstreamTimeout.
TEST_F(DaemonTest, AnUpstreamThatDoesNotAnswerIs504) {
  Upstream silent("", 10s);
  StartWith(WithRoute(silent.port(), R"({"upstreamTimeout": "300ms"})"));
  Client c(port_);
  c.Send("GET /mcp/up/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  Client::Response r = c.Read(false, 5s);
  EXPECT_EQ(r.status, 504) << r.head;
  EXPECT_TRUE(c.ClosedWithin(2s));
}

// The upstream's response is parsed: its head bounded, hop-by-hop fields replaced by
// Connection: close, its body relayed up to its length, and nothing after it.
TEST_F(DaemonTest, AnUpstreamsResponseIsOneBoundedResponse) {
  Upstream two(
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nKeep-Alive: x\r\n"
      "Connection: keep-alive\r\n\r\nhello"
      "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged");
  StartWith(WithRoute(two.port()));
  Client c(port_);
  c.Send("GET /mcp/up/x?q=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string all = c.ReadAll();
  EXPECT_EQ(all.find("forged"), std::string::npos) << all;
  EXPECT_NE(all.find("\r\n\r\nhello"), std::string::npos) << all;
  EXPECT_NE(all.find("\r\nConnection: close\r\n"), std::string::npos) << all;
  EXPECT_EQ(all.find("Keep-Alive"), std::string::npos) << all;
  EXPECT_EQ(all.find("keep-alive"), std::string::npos) << all;
  ASSERT_EQ(two.heads().size(), 1u);
  EXPECT_TRUE(two.heads()[0].starts_with("GET /base/x?q=1 HTTP/1.1\r\n")) << two.heads()[0];
}

TEST_F(DaemonTest, AnUpstreamsChunkedResponseEndsAtItsLastChunk) {
  Upstream chunked(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged",
      2s);
  StartWith(WithRoute(chunked.port()));
  Client c(port_);
  c.Send("GET /mcp/up HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  auto t0 = std::chrono::steady_clock::now();
  std::string all = c.ReadAll();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms) << "waited for the upstream to close";
  EXPECT_NE(all.find("5\r\nhello\r\n0\r\n\r\n"), std::string::npos) << all;
  EXPECT_EQ(all.find("forged"), std::string::npos) << all;
}

TEST_F(DaemonTest, AnUpstreamsOversizedHeadIs502) {
  Upstream big("HTTP/1.1 200 OK\r\nX: " + std::string(70000, 'a') + "\r\n\r\n");
  StartWith(WithRoute(big.port()));
  Client c(port_);
  c.Send("GET /mcp/up HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  Client::Response r = c.Read();
  EXPECT_EQ(r.status, 502) << r.head;
}

// Dot segments, also percent-encoded, never reach a real route's upstream.
TEST_F(DaemonTest, DotSegmentsDoNotReachARoutesUpstream) {
  Upstream up("HTTP/1.1 204 No Content\r\n\r\n");
  StartWith(WithRoute(up.port()));
  for (const char* path :
       {"/mcp/up/..", "/mcp/up/a/../../etc", "/mcp/up/%2e%2E/x", "/mcp/up/./x", "/mcp/up/a/%2E"}) {
    Client c(port_);
    c.Send(std::string("GET ") + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    EXPECT_EQ(c.Read().status, 400) << path;
  }
  Client ok(port_);
  ok.Send("GET /mcp/up/a..b/.x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(ok.Read().status, 204);
  ASSERT_EQ(up.heads().size(), 1u);
  EXPECT_TRUE(up.heads()[0].starts_with("GET /base/a..b/.x HTTP/1.1\r\n")) << up.heads()[0];
}

// Two Origin fields: refused whatever the first says (a check of one of them is no check).
TEST_F(DaemonTest, ARepeatedOriginIsRefused) {
  Start("{}", "{}", R"(, "allowedOrigins": ["https://claude.ai"])");
  Client c(port_);
  c.Send(
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://claude.ai\r\n"
      "Origin: https://evil.example\r\n\r\n");
  EXPECT_EQ(c.Read().status, 403);
  Client good(port_);
  good.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://claude.ai\r\n\r\n");
  EXPECT_EQ(good.Read().status, 200);
}

// A client that half-closes after its request still gets its answer, then the connection closes.
TEST_F(DaemonTest, AHalfClosedClientIsAnswered) {
  Start();
  Client h(port_);
  h.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  h.ShutdownWrite();
  Client::Response r = h.Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(h.ClosedWithin(2s));
  Client s(port_);
  s.Send(Post(kInit));
  s.ShutdownWrite();
  Client::Response init = s.Read();
  EXPECT_EQ(init.status, 200) << init.head;
  std::vector<json> events = Events(init.body);
  ASSERT_EQ(events.size(), 1u) << init.body;
  EXPECT_EQ(events[0]["result"]["protocolVersion"], "2025-06-18");
  EXPECT_TRUE(s.ClosedWithin(2s));
}

// Every server process gets a pids limit, the configured one or the default.
TEST_F(DaemonTest, ServerProcessesGetAPidsLimit) {
  Start();
  Client c(port_);
  Initialize(c);
  std::lock_guard lock(world_.mu);
  EXPECT_EQ(world_.pids_limits, std::vector<uint32_t>{kDefaultServerPids});
}

// Idleness is the client's: a server that keeps talking on its own does not keep a session
// nobody uses alive.
TEST_F(DaemonTest, IdleSessionsExpireWhileTheirServerTalks) {
  Start(R"({"sessionIdle": "400ms"})");
  Client c(port_);
  std::string sid = Initialize(c);
  c.Send(Post(Call("1", {{"op", "chatter"}}), Sid(sid)));
  EXPECT_EQ(c.Read().status, 200);
  // The chatter goes to the standalone stream's buffer (no GET stream is connected).
  EXPECT_TRUE(Eventually([&] { return Logged("the session was idle too long"); }, 4s));
  c.Send(Post(Call("2", {{"op", "echo"}}), Sid(sid)));
  EXPECT_EQ(c.Read().status, 404);
}

// SIGHUP (Reload()): new, changed and removed servers take effect for new sessions; sessions
// already running keep their server until they end; a file that does not parse changes nothing.
TEST_F(DaemonTest, ReloadAppliesToNewSessionsAndKeepsRunningOnes) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);
  {
    std::lock_guard lock(log_mu_);
    reload_text_ = "{\"listen\": {\"port\": 0},\n \"servers\": {\"fake\": {\"command\": 7}}}";
  }
  daemon_->Reload();
  EXPECT_TRUE(Eventually([&] {
    return Logged("reload.json:2:") && Logged("/servers/fake/command") &&
           Logged("\"event\":\"reload_failed\"");
  }));
  Client same(port_);
  same.Send(Post(kInit));
  EXPECT_EQ(same.Read().status, 200);  // the old configuration still serves
  {
    std::lock_guard lock(log_mu_);
    reload_text_ = R"({"listen": {"port": 0}, "servers": {"other": {"command": "fake"}}})";
  }
  daemon_->Reload();
  EXPECT_TRUE(Eventually([&] { return Logged("\"event\":\"reloaded\""); }));
  // The running session of the removed server goes on until it ends.
  c.Send(Post(Call("1", {{"op", "echo"}, {"v", 1}}), Sid(sid)));
  Client::Response r = c.Read();
  EXPECT_EQ(r.status, 200) << r.head << r.body;
  ASSERT_EQ(Events(r.body).size(), 1u);
  EXPECT_EQ(Events(r.body)[0]["result"]["v"], 1);
  // No new session of it; the new server serves.
  Client gone(port_);
  gone.Send(Post(kInit));
  EXPECT_EQ(gone.Read().status, 404);
  Client added(port_);
  const std::string body = kInit;
  added.Send(
      "POST /mcp/other HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Accept: application/json, text/event-stream\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(added.Read().status, 200);
  Client h(port_);
  h.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  json health = json::parse(h.Read().body);
  EXPECT_TRUE(health["routes"].contains("other"));
  EXPECT_FALSE(health["routes"].contains("fake"));
  c.Send("DELETE /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\n" + Sid(sid) + "\r\n");
  EXPECT_EQ(c.Read().status, 200);
  c.Send(Post(Call("2", {{"op", "echo"}}), Sid(sid)));
  EXPECT_EQ(c.Read().status, 404);
}

// A chunked request body is read (bounded by maxBodyBytes), not refused with 411.
std::string Chunked(const std::string& body, size_t piece) {
  std::string out;
  for (size_t i = 0; i < body.size(); i += piece) {
    std::string part = body.substr(i, piece);
    char size[32];
    std::snprintf(size, sizeof size, "%zx", part.size());
    out += std::string(size) + "\r\n" + part + "\r\n";
  }
  return out + "0\r\n\r\n";
}
const std::string kChunkedPost =
    "POST /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

TEST_F(DaemonTest, ChunkedRequestBodiesAreRead) {
  Start(R"({"maxBodyBytes": 1024})");
  Client c(port_);
  c.Send(kChunkedPost + Chunked(kInit, 7));
  Client::Response r = c.Read();
  EXPECT_EQ(r.status, 200) << r.head << r.body;
  std::string sid = Client::Header(r.head, "Mcp-Session-Id");
  ASSERT_EQ(sid.size(), 32u);
  // Split across writes, with a chunk extension and a trailer; the connection stays usable.
  std::string call = Chunked(Call("1", {{"op", "echo"}, {"v", 3}}), 5);
  call.insert(call.find("\r\n"), ";ext=1");
  call.replace(call.size() - 2, 2, "X-Trailer: 1\r\n\r\n");
  std::string request =
      "POST /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Accept: application/json, text/event-stream\r\n" +
      Sid(sid) + "Transfer-Encoding: chunked\r\n\r\n" + call;
  for (size_t i = 0; i < request.size(); i += 9) {
    c.Send(request.substr(i, 9));
    std::this_thread::sleep_for(1ms);
  }
  Client::Response echo = c.Read();
  EXPECT_EQ(echo.status, 200);
  ASSERT_EQ(Events(echo.body).size(), 1u) << echo.body;
  EXPECT_EQ(Events(echo.body)[0]["result"]["v"], 3);
  // Over the limit: 413, however it is chunked.
  Client big(port_);
  big.Send(kChunkedPost + Chunked(std::string(2000, 'x'), 100));
  EXPECT_EQ(big.Read().status, 413);
  Client bad(port_);
  bad.Send(kChunkedPost + "zz\r\nhello\r\n0\r\n\r\n");
  Client::Response malformed = bad.Read();
  EXPECT_EQ(malformed.status, 400);
  EXPECT_TRUE(bad.ClosedWithin(2s));
}

// A quick answer leaves as one write: the SSE head waits for it, and the event and the body's
// end go with it (one packet, one wake-up of the client, rather than three).
TEST_F(DaemonTest, AQuickAnswerLeavesInOneWrite) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);
  for (int i = 0; i < 5; ++i) {
    const std::string body = Call(std::to_string(i), {{"op", "echo"}, {"v", i}});
    c.Send(Post(body, Sid(sid)));
    std::string first = c.ReadOnce();
    EXPECT_TRUE(first.starts_with("HTTP/1.1 200 OK\r\n")) << first;
    // One JSON-RPC response and nothing before it: one application/json body, no SSE framing
    // for the client to parse (MCP transports: the server returns text/event-stream or
    // application/json to a request, and the client must support both).
    size_t end = first.find("\r\n\r\n");
    ASSERT_NE(end, std::string::npos) << first;
    std::string head = first.substr(0, end);
    EXPECT_EQ(Client::Header(head, "Content-Type"), "application/json") << first;
    EXPECT_EQ(Client::Header(head, "Mcp-Session-Id"), sid) << first;
    std::string payload = first.substr(end + 4);
    EXPECT_EQ(Client::Header(head, "Content-Length"), std::to_string(payload.size())) << first;
    json answer = json::parse(payload, nullptr, false);
    EXPECT_EQ(answer["id"], i) << first;
    EXPECT_EQ(answer["result"]["v"], i) << first;
  }
  // A notification before the answer opens an SSE stream: both go on it, in order.
  c.Send(Post(Call("9", {{"op", "notify"}, {"text", "hi"}}), Sid(sid)));
  Client::Response streamed = c.Read();
  EXPECT_EQ(Client::Header(streamed.head, "Content-Type"), "text/event-stream") << streamed.head;
  EXPECT_TRUE(streamed.chunked);
  c.Send(Post(Call("10", {{"op", "echo"}}), Sid(sid)));
  EXPECT_EQ(json::parse(c.Read().body)["id"], 10);
  // A slow one still gets its head within the cork delay (the client sees the stream open).
  Client slow(port_);
  slow.Send(Post(Call("\"s\"", {{"op", "sleep"}}), Sid(sid)));
  Client::Response slow_head = slow.Read(/*head_only=*/true, 1s);
  EXPECT_EQ(slow_head.status, 200);
  EXPECT_EQ(Client::Header(slow_head.head, "Content-Type"), "text/event-stream");
}

// A server's stdin, stdout and stderr are sockets: libsrt passes a socket into the sandbox as it
// is, where each pipe would be relayed by a thread of its own (a pipe can be reopened through
// /proc/self/fd), two more wake-ups and eight more syscalls per tools/call. The server still
// sees EOF on stdin when srt-mcp ends it (the session's DELETE below).
TEST_F(DaemonTest, AServersStdioAreSockets) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);
  c.Send(Post(Call("1", {{"op", "echo"}, {"v", 1}}), Sid(sid)));
  EXPECT_EQ(json::parse(c.Read().body)["result"]["v"], 1);
  {
    std::lock_guard lock(world_.mu);
    ASSERT_EQ(world_.stdio_types.size(), 1u);
    EXPECT_EQ(world_.stdio_types[0], (std::vector<mode_t>{S_IFSOCK, S_IFSOCK, S_IFSOCK}));
  }
  c.Send("DELETE /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\n" + Sid(sid) + "\r\n");
  EXPECT_EQ(c.Read().status, 200);
  EXPECT_TRUE(Eventually([&] {
    std::lock_guard lock(world_.mu);
    return world_.ended == 1 && world_.signals.empty();  // EOF on stdin ended it, no signal
  }));
}

// A reload that reorders or removes bearer tokens: a session stays its opener's, whatever
// place its token has in the new list, and a removed token's sessions end.
TEST_F(DaemonTest, AReloadKeepsSessionsWithTheirTokens) {
  TempDir dir;
  const std::string alice = "alice-token-0123456789";
  const std::string bob = "bob-token-0123456789ab";
  const std::string a = TokenFile(dir.path(), "a", alice);
  const std::string b = TokenFile(dir.path(), "b", bob);
  auto config = [](const std::vector<std::string>& files) {
    json c = {{"listen", {{"port", 0}}},
              {"auth", {{"bearerTokenFiles", files}}},
              {"servers", {{"fake", {{"command", "fake"}}}}}};
    return c.dump();
  };
  StartWith(config({a, b}));
  auto as = [](const std::string& token) { return "Authorization: Bearer " + token + "\r\n"; };
  Client ca(port_);
  ca.Send(Post(kInit, as(alice)));
  std::string alices = Client::Header(ca.Read().head, "Mcp-Session-Id");
  Client cb(port_);
  cb.Send(Post(kInit, as(bob)));
  std::string bobs = Client::Header(cb.Read().head, "Mcp-Session-Id");
  ASSERT_EQ(alices.size(), 32u);
  ASSERT_EQ(bobs.size(), 32u);
  {
    std::lock_guard lock(log_mu_);
    reload_text_ = config({b, a});  // bob's token is now the first
  }
  daemon_->Reload();
  ASSERT_TRUE(Eventually([&] { return Logged("\"event\":\"reloaded\""); }));
  cb.Send(Post(Call("1", {{"op", "echo"}}), as(bob) + Sid(alices)));
  EXPECT_EQ(cb.Read().status, 404);  // alice's session is not bob's
  cb.Send(Post(Call("2", {{"op", "echo"}}), as(bob) + Sid(bobs)));
  EXPECT_EQ(cb.Read().status, 200);
  ca.Send(Post(Call("3", {{"op", "echo"}}), as(alice) + Sid(alices)));
  EXPECT_EQ(ca.Read().status, 200);
  {
    std::lock_guard lock(log_mu_);
    reload_text_ = config({b});  // alice's token revoked
  }
  daemon_->Reload();
  EXPECT_TRUE(Eventually([&] { return Logged("its bearer token was removed"); }));
  EXPECT_TRUE(Eventually([&] {
    std::lock_guard lock(world_.mu);
    return world_.ended == 1;
  }));
  cb.Send(Post(Call("4", {{"op", "echo"}}), as(bob) + Sid(bobs)));
  EXPECT_EQ(cb.Read().status, 200);
}

// A client that half-closes while its request's stream is open still reads: the stream goes on
// to its answer, and nothing is cancelled (only a closed connection cancels).
TEST_F(DaemonTest, AHalfCloseDuringAStreamDoesNotCancelIt) {
  Start();
  Client c(port_);
  std::string sid = Initialize(c);
  Client h(port_);
  h.Send(Post(Call("\"x\"", {{"op", "slow"}, {"v", 5}}), Sid(sid)));
  ASSERT_EQ(h.Read(/*head_only=*/true).status, 200);
  h.ShutdownWrite();
  std::string events;
  while (std::optional<std::string> chunk = h.NextChunk()) {
    if (chunk->empty()) break;
    events += *chunk;
  }
  std::vector<json> answer = Events(events);
  ASSERT_EQ(answer.size(), 1u) << events;
  EXPECT_EQ(answer[0]["result"]["v"], 5);
  EXPECT_TRUE(h.ClosedWithin(2s));
  std::lock_guard lock(world_.mu);
  EXPECT_TRUE(world_.cancelled.empty());
}

TEST_F(DaemonTest, ShutdownEndsSessionsAndReturns) {
  Start();
  Client a(port_);
  Client b(port_);
  std::string s1 = Initialize(a);
  std::string s2 = Initialize(b);
  EXPECT_NE(s1, s2);
  Client slow(port_);
  slow.Send(Post(Call("1", {{"op", "sleep"}}), Sid(s1)));
  EXPECT_EQ(slow.Read(/*head_only=*/true).status, 200);
  daemon_->Shutdown();
  thread_.join();
  std::optional<std::string> chunk = slow.NextChunk();
  ASSERT_TRUE(chunk);
  EXPECT_NE(chunk->find("srt-mcp is shutting down"), std::string::npos);
  std::lock_guard lock(world_.mu);
  EXPECT_EQ(world_.started, 2);
  EXPECT_EQ(world_.ended, 2);
  daemon_.reset();
}

}  // namespace
}  // namespace srt::mcp
