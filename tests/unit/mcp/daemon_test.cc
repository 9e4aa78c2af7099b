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
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
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
};

// A stdio MCP server in a thread: initialize, tools/call with arguments.op of echo (answers the
// arguments), sleep (no answer), notify (a notification, then the answer), huge (a line of
// arguments.bytes), exit (exits 3), deaf (answers, then stops reading stdin).
class FakeRunner final : public ServerRunner {
 public:
  explicit FakeRunner(FakeWorld& world) : world_(world) {}
  Result<void> Start(SandboxOptions o) override {
    in_ = UniqueFd(fcntl(o.stdin_fd, F_DUPFD_CLOEXEC, 3));
    out_ = UniqueFd(fcntl(o.stdout_fd, F_DUPFD_CLOEXEC, 3));
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return SysError("pipe2");
    wake_read_ = UniqueFd(p[0]);
    wake_write_ = UniqueFd(p[1]);
    std::lock_guard lock(world_.mu);
    ++world_.started;
    return Ok();
  }
  ProcessExit Wait() override {
    ProcessExit exit = Serve();
    out_.reset();
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
    while (true) {
      pollfd p[2] = {{in_.get(), POLLIN, 0}, {wake_read_.get(), POLLIN, 0}};
      if (poll(p, 2, -1) < 0) continue;
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
  UniqueFd wake_read_;
  UniqueFd wake_write_;
};

// A client connection that reads HTTP/1.1 responses, Content-Length or chunked.
class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
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

// The JSON of each "data:" line in SSE text.
std::vector<json> Events(const std::string& sse) {
  std::vector<json> out;
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
  void Start(const std::string& limits = "{}", const std::string& server_limits = "{}") {
    Result<McpConfig> config = ParseMcpConfig(
        R"({"listen": {"port": 0, "domains": ["mcp.test"]}, "servers": {"fake": {"command": "fake", "limits": )" +
            server_limits + R"(}}, "limits": )" + limits + "}",
        "test.json");
    ASSERT_TRUE(config) << config.error().message();
    DaemonOptions o;
    o.log = [this](std::string_view line) {
      std::lock_guard lock(log_mu_);
      log_.emplace_back(line);
    };
    o.runner = [this] { return std::make_unique<FakeRunner>(world_); };
    o.stop_grace = 200ms;
    o.backoff_min = 100ms;
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
    EXPECT_EQ(Client::Header(r.head, "Content-Type"), "text/event-stream");
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
  EXPECT_NE(r.body.find("id: "), std::string::npos);
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
  EXPECT_NE(first.body.find("id: 2-1\n"), std::string::npos) << first.body;
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
  EXPECT_EQ(c.Read(/*head_only=*/true).status, 200);
  for (Client* who : {&slow, &c}) {
    std::optional<std::string> chunk = who->NextChunk();
    ASSERT_TRUE(chunk);
    std::vector<json> events = Events(*chunk);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0]["error"]["message"], "the MCP server 'fake' exited with status 3");
    EXPECT_EQ(who->NextChunk(), "");  // the stream ends
  }
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
  Client chunked(port_);
  chunked.Send("POST /mcp/fake HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  EXPECT_EQ(chunked.Read().status, 411);
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
