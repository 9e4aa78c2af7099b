// SPDX-License-Identifier: Apache-2.0
// srt-mcp end to end: the real srt-mcp binary serving @modelcontextprotocol/server-filesystem,
// server-memory and a fixture server (fixture_server.mjs), each session's process in its own
// sandbox, driven by the official MCP TypeScript SDK client (srt_mcp_client.mjs) and by raw
// HTTP for what a well-behaved client never sends. Skips without bwrap sandboxes, node or the
// npm packages, unless SRT_MUST_WORK=1.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "srt_runner.h"

namespace srt::mcp {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool MustWork() {
  const char* must = std::getenv("SRT_MUST_WORK");
  return must && std::string(must) == "1";
}

std::string NodeModules() {
  const char* dir = std::getenv("SRT_MCP_NODE_MODULES");
  return dir && *dir ? dir : SRT_MCP_NODE_MODULES;
}

std::string FindNode() {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    std::string p = std::string(dir) + "/node";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One HTTP exchange on a fresh connection: `request` is sent as is; the reply is read until the
// server closes or `limit` passes.
struct Reply {
  int status = 0;
  std::string head;
  std::string body;
  bool closed = false;
};
Reply Exchange(uint16_t port, const std::string& request, std::chrono::milliseconds limit = 10s,
               std::chrono::milliseconds pause_before_read = 0ms) {
  Reply r;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return r;
  }
  size_t off = 0;
  while (off < request.size()) {
    ssize_t n = send(fd, request.data() + off, request.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  std::this_thread::sleep_for(pause_before_read);
  std::string all;
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) {
      r.closed = true;
      break;
    }
    all.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  size_t end = all.find("\r\n\r\n");
  r.head = all.substr(0, end);
  if (end != std::string::npos) r.body = all.substr(end + 4);
  if (all.size() > 12) r.status = std::atoi(all.substr(9, 3).c_str());
  return r;
}

std::string Post(const std::string& path, const std::string& body, const std::string& extra = "") {
  return "POST " + path +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
         "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
         extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

const std::string kInitialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
    R"("capabilities":{},"clientInfo":{"name":"raw","version":"1"}}})";

std::string HeaderValue(const std::string& head, const std::string& name) {
  std::istringstream in(head);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > name.size() && strncasecmp(line.c_str(), name.c_str(), name.size()) == 0 &&
        line[name.size()] == ':') {
      return line.substr(name.size() + 2);
    }
  }
  return "";
}

class SrtMcpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = FindNode();
    std::string why;
    if (!it::SandboxingWorks()) {
      why = "bwrap sandboxes do not work on this host";
    } else if (node_.empty()) {
      why = "node is not installed";
    } else if (access((NodeModules() + "/@modelcontextprotocol/sdk/package.json").c_str(), R_OK) !=
               0) {
      why = "the MCP SDK is not installed (npm ci --prefix tests/mcp --ignore-scripts)";
    }
    if (!why.empty()) {
      if (MustWork()) FAIL() << why << " (SRT_MUST_WORK=1)";
      GTEST_SKIP() << why;
    }
    char tmpl[] = "/tmp/srt-mcp-e2e.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ + "/data");
    fs::create_directories(root_ + "/ro");
  }

  void TearDown() override {
    StopDaemon();
    if (!root_.empty()) {
      EXPECT_TRUE(it::Eventually([&] { return it::ProcessesMatching(root_).empty(); }))
          << "processes left behind";
      std::error_code ec;
      fs::remove_all(root_, ec);
    }
  }

  // The configuration every test starts from: the two npm servers and the fixture.
  json BaseConfig() {
    const std::string nm = NodeModules();
    json srt = {{"filesystem", {{"allowWrite", {root_ + "/data"}}}}};
    return {
        {"listen", {{"hostname", "127.0.0.1"}, {"port", 0}}},
        {"allowedOrigins", {"https://claude.ai"}},
        {"servers",
         {{"files",
           {{"command", node_},
            {"args",
             {nm + "/@modelcontextprotocol/server-filesystem/dist/index.js", root_ + "/data",
              root_ + "/ro"}},
            {"cwd", root_ + "/data"},
            {"srt", srt},
            {"limits", {{"memory", "512M"}, {"pids", 256}}}}},
          {"memory",
           {{"command", node_},
            {"args", {nm + "/@modelcontextprotocol/server-memory/dist/index.js"}},
            {"env", {{"MEMORY_FILE_PATH", root_ + "/data/memory.jsonl"}}},
            {"srt", srt}}},
          {"fixture",
           {{"command", node_},
            // The scratch directory as an (ignored) argument: this test's processes are the
            // ones whose command line names it, whatever other tests run meanwhile.
            {"args", {std::string(SRT_MCP_TESTS_DIR) + "/fixture_server.mjs", root_}},
            {"env", {{"FIXTURE_LOG", root_ + "/data/fixture.log"}}},
            {"srt", srt}}}}},
        {"limits", {{"maxSessionsPerClient", 3}, {"maxBodyBytes", 65536}, {"headTimeout", "1s"}}}};
  }

  // Starts srt-mcp on `config`; returns once it listens (port_ set). Its log is root_/log.
  void StartDaemon(const json& config) {
    const std::string cfg = root_ + "/srt-mcp.json";
    std::ofstream(cfg) << "// written by srt_mcp_e2e_test\n" << config.dump(2) << "\n";
    log_ = root_ + "/log";
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      dup2(fd, 1);
      dup2(fd, 2);
      execl(SRT_MCP_BINARY, SRT_MCP_BINARY, "--config", cfg.c_str(), nullptr);
      _exit(127);
    }
    ASSERT_TRUE(it::Eventually(
        [&] {
          for (const json& line : LogLines()) {
            if (line.value("event", "") == "listening") {
              port_ = static_cast<uint16_t>(line["port"].get<int>());
              return true;
            }
          }
          return false;
        },
        10s))
        << Slurp(log_);
  }

  // SIGTERM, then the exit status (-1 if it did not exit within `limit`, after SIGKILL).
  int StopDaemon(std::chrono::milliseconds limit = 20s) {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(50ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return -1;
  }

  std::vector<json> LogLines() {
    std::vector<json> out;
    std::istringstream in(Slurp(log_));
    std::string line;
    while (std::getline(in, line)) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_discarded()) out.push_back(j);
    }
    return out;
  }

  std::string Url() { return "http://127.0.0.1:" + std::to_string(port_); }

  // Runs a scenario of srt_mcp_client.mjs; its findings, or {"failed": ...}.
  json Client(const std::string& scenario, const std::vector<std::string>& args = {}) {
    std::string cmd =
        "'" + node_ + "' '" SRT_MCP_TESTS_DIR "/srt_mcp_client.mjs' " + scenario + " " + Url();
    for (const std::string& a : args) cmd += " '" + a + "'";
    cmd += " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
    size_t brace = out.rfind("\n{");
    json j = json::parse(brace == std::string::npos ? out : out.substr(brace + 1), nullptr, false);
    if (j.is_discarded()) return {{"failed", out}};
    return j;
  }

  std::string node_;
  std::string root_;
  std::string log_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

TEST_F(SrtMcpTest, SdkClientUsesFilesystemAndMemoryServers) {
  StartDaemon(BaseConfig());
  json r = Client("basic", {root_ + "/data", root_ + "/ro"});
  ASSERT_FALSE(r.contains("failed")) << r.dump(2) << Slurp(log_);
  EXPECT_EQ(r["sessionId"].get<std::string>().size(), 32u);
  EXPECT_NE(r["filesTools"].dump().find("write_file"), std::string::npos);
  EXPECT_FALSE(r["writeInside"]["isError"].get<bool>()) << r.dump(2);
  EXPECT_EQ(Slurp(root_ + "/data/hello.txt"), "hello from the SDK");
  // The server lets the client write in both its directories; the sandbox does not.
  EXPECT_TRUE(r["writeOutside"]["isError"].get<bool>()) << r.dump(2);
  EXPECT_NE(r["writeOutside"]["text"].get<std::string>().find("EROFS"), std::string::npos);
  EXPECT_FALSE(fs::exists(root_ + "/ro/evil.txt"));
  EXPECT_EQ(r["readBack"], "hello from the SDK");
  EXPECT_NE(r["memoryTools"].dump().find("create_entities"), std::string::npos);
  EXPECT_NE(r["graph"].get<std::string>().find("serves MCP over HTTP"), std::string::npos);
  EXPECT_NE(Slurp(root_ + "/data/memory.jsonl").find("srt-mcp"), std::string::npos);
  // Every request is logged, and no log line carries a whole session id.
  bool saw_call = false;
  for (const json& line : LogLines()) {
    if (line.value("event", "") == "request" && line.value("rpc", "") == "tools/call") {
      saw_call = true;
      EXPECT_EQ(line["route"].get<std::string>().empty(), false);
      EXPECT_EQ(line["session"].get<std::string>().size(), 8u);
    }
  }
  EXPECT_TRUE(saw_call);
  EXPECT_EQ(Slurp(log_).find(r["sessionId"].get<std::string>()), std::string::npos);
  EXPECT_EQ(StopDaemon(), 0);
}

TEST_F(SrtMcpTest, TwoClientsGetSeparateSessionsAndSandboxes) {
  StartDaemon(BaseConfig());
  json r;
  std::thread t([&] { r = Client("two", {"fixture", "hold"}); });
  // Both server processes run at once, one per session.
  EXPECT_TRUE(it::Eventually(
      [&] { return it::ProcessesMatching("fixture_server.mjs " + root_).size() >= 2; }, 15s));
  t.join();
  ASSERT_FALSE(r.contains("failed")) << r.dump(2) << Slurp(log_);
  EXPECT_NE(r["sessions"][0], r["sessions"][1]);
  // Each sandbox has its own private TMPDIR, which is also the server's HOME.
  std::string a = r["pids"][0];
  std::string b = r["pids"][1];
  EXPECT_NE(a, b);
  EXPECT_NE(a.find("/tmp/srt-"), std::string::npos) << a;
  EXPECT_EQ(StopDaemon(), 0);
}

TEST_F(SrtMcpTest, ClosingACallsStreamCancelsItAtTheServer) {
  StartDaemon(BaseConfig());
  json r = Client("disconnect");
  ASSERT_FALSE(r.contains("failed")) << r.dump(2) << Slurp(log_);
  EXPECT_TRUE(it::Eventually(
      [&] { return Slurp(root_ + "/data/fixture.log").find("slow-1") != std::string::npos; }));
  EXPECT_NE(Slurp(root_ + "/data/fixture.log").find("closed the request"), std::string::npos);
  EXPECT_FALSE(r["after"].get<std::string>().empty());
}

TEST_F(SrtMcpTest, ProgressNotificationsReachTheRequestsStream) {
  StartDaemon(BaseConfig());
  json r = Client("progress");
  ASSERT_FALSE(r.contains("failed")) << r.dump(2) << Slurp(log_);
  EXPECT_EQ(r["text"], "notified");
  EXPECT_EQ(r["progress"], json::array({1}));
}

TEST_F(SrtMcpTest, ACrashedServerEndsItsSessionWithAClearError) {
  StartDaemon(BaseConfig());
  json r = Client("crash");
  ASSERT_FALSE(r.contains("failed")) << r.dump(2) << Slurp(log_);
  EXPECT_NE(r["error"].get<std::string>().find("'fixture' exited with status 3"), std::string::npos)
      << r.dump(2);
  EXPECT_EQ(r["statusAfter"], 404);
  Reply health =
      Exchange(port_, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  json h = json::parse(health.body);
  EXPECT_EQ(h["routes"]["fixture"]["state"], "failed");
  EXPECT_NE(h["routes"]["fixture"]["lastError"].get<std::string>().find("status 3"),
            std::string::npos);
  EXPECT_EQ(h["routes"]["files"]["state"], "up");
  // Restarted with backoff: a new session at once is refused, saying when to retry.
  Reply again = Exchange(port_, Post("/mcp/fixture", kInitialize));
  EXPECT_EQ(again.status, 503) << again.head;
  EXPECT_FALSE(HeaderValue(again.head, "Retry-After").empty());
  std::this_thread::sleep_for(1200ms);
  Reply later = Exchange(port_, Post("/mcp/fixture", kInitialize));
  EXPECT_EQ(later.status, 200) << later.head << later.body;
}

TEST_F(SrtMcpTest, RefusesWhatTheTransportForbids) {
  StartDaemon(BaseConfig());
  auto status = [&](const std::string& request) { return Exchange(port_, request).status; };
  // Origin: absent or listed is fine, another is 403 (DNS rebinding).
  EXPECT_EQ(status(Post("/mcp/fixture", kInitialize, "Origin: https://evil.example\r\n")), 403);
  Reply ok = Exchange(port_, Post("/mcp/fixture", kInitialize, "Origin: https://claude.ai\r\n"));
  EXPECT_EQ(ok.status, 200) << ok.head;
  const std::string sid = HeaderValue(ok.head, "Mcp-Session-Id");
  EXPECT_EQ(sid.size(), 32u);
  // Host: only the names the daemon is reached by.
  EXPECT_EQ(status("GET /healthz HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n"),
            403);
  EXPECT_EQ(status("GET /healthz HTTP/1.1\r\nHost: localhost:" + std::to_string(port_) +
                   "\r\nConnection: close\r\n\r\n"),
            200);
  // Bodies beyond maxBodyBytes: 413, before the body is read.
  std::string big =
      Post("/mcp/fixture", std::string(70000, ' '), "Mcp-Session-Id: " + sid + "\r\n");
  EXPECT_EQ(status(big), 413);
  // Unknown session: 404; no session on a non-initialize: 400.
  const std::string list = R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})";
  EXPECT_EQ(
      status(Post("/mcp/fixture", list, "Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n")),
      404);
  EXPECT_EQ(status(Post("/mcp/fixture", list)), 400);
  // A session is bound to its server.
  EXPECT_EQ(status(Post("/mcp/files", list, "Mcp-Session-Id: " + sid + "\r\n")), 404);
  // MCP-Protocol-Version: unsupported is 400, supported goes through.
  EXPECT_EQ(status(Post("/mcp/fixture", list,
                        "Mcp-Session-Id: " + sid + "\r\nMCP-Protocol-Version: 1999-01-01\r\n")),
            400);
  Reply listed =
      Exchange(port_, Post("/mcp/fixture", list,
                           "Mcp-Session-Id: " + sid + "\r\nMCP-Protocol-Version: 2025-06-18\r\n"));
  EXPECT_EQ(listed.status, 200);
  EXPECT_NE(listed.body.find("\"sleep\""), std::string::npos) << listed.body;
  // Not JSON-RPC: 400 with a parse error.
  Reply junk = Exchange(port_, Post("/mcp/fixture", "[1,2]", "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(junk.status, 400);
  EXPECT_NE(junk.body.find("-32700"), std::string::npos);
  // Unknown routes and methods.
  EXPECT_EQ(status(Post("/mcp/nope", kInitialize)), 404);
  EXPECT_EQ(status("PUT /mcp/fixture HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                   "Content-Length: 0\r\n\r\n"),
            405);
  // DELETE ends the session; it is gone afterwards.
  EXPECT_EQ(status("DELETE /mcp/fixture HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                   "Mcp-Session-Id: " +
                   sid + "\r\n\r\n"),
            200);
  EXPECT_EQ(status(Post("/mcp/fixture", list, "Mcp-Session-Id: " + sid + "\r\n")), 404);
}

TEST_F(SrtMcpTest, Mcp20260728RequestsNeedNoSession) {
  StartDaemon(BaseConfig());
  const std::string body =
      R"({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"pid","arguments":{},)"
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})";
  Reply r = Exchange(port_, Post("/mcp/fixture", body,
                                 "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
                                 "Mcp-Name: pid\r\n"));
  EXPECT_EQ(r.status, 200) << r.head << r.body;
  EXPECT_EQ(HeaderValue(r.head, "Mcp-Session-Id"), "");
  EXPECT_NE(r.body.find(R"("id":"a")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("/tmp/srt-"), std::string::npos) << r.body;  // from inside a sandbox
  Reply get = Exchange(port_,
                       "GET /mcp/fixture HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                       "Accept: text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\r\n");
  EXPECT_EQ(get.status, 405);
}

TEST_F(SrtMcpTest, TooManySessionsIs503WithRetryAfter) {
  StartDaemon(BaseConfig());
  for (int i = 0; i < 3; ++i) {
    Reply r = Exchange(port_, Post("/mcp/fixture", kInitialize));
    ASSERT_EQ(r.status, 200) << i << r.head;
  }
  Reply r = Exchange(port_, Post("/mcp/fixture", kInitialize));
  EXPECT_EQ(r.status, 503);
  EXPECT_FALSE(HeaderValue(r.head, "Retry-After").empty());
  EXPECT_NE(r.body.find("too many sessions"), std::string::npos);
}

TEST_F(SrtMcpTest, SlowHeadsAreCutOff) {
  StartDaemon(BaseConfig());  // headTimeout 1s
  auto start = std::chrono::steady_clock::now();
  Reply r = Exchange(port_, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n", 5s);
  EXPECT_EQ(r.status, 408);
  EXPECT_TRUE(r.closed);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
}

TEST_F(SrtMcpTest, BearerTokensAreRequiredAndChecked) {
  const std::string token_file = root_ + "/token";
  const std::string token = "s3cret-token-0123456789abcdef";
  std::ofstream(token_file) << token << "\n";
  chmod(token_file.c_str(), 0644);
  json config = BaseConfig();
  config["auth"] = {{"bearerTokenFiles", {token_file}}};
  {
    // Readable by others: refused at start, naming the file.
    std::ofstream(root_ + "/bad.json") << config.dump();
    std::string cmd = std::string(SRT_MCP_BINARY) + " --config " + root_ + "/bad.json --check 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096] = {};
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    int rc = pclose(p);
    std::string out(buf, n);
    EXPECT_EQ(WEXITSTATUS(rc), 2) << out;
    EXPECT_NE(out.find("readable by others"), std::string::npos) << out;
    EXPECT_NE(out.find(token_file), std::string::npos) << out;
  }
  chmod(token_file.c_str(), 0600);
  StartDaemon(config);
  const std::string health = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  Reply none = Exchange(port_, health + "\r\n");
  EXPECT_EQ(none.status, 401);
  EXPECT_NE(HeaderValue(none.head, "WWW-Authenticate").find("Bearer"), std::string::npos);
  EXPECT_EQ(
      Exchange(port_, health + "Authorization: Bearer wrong-token-0123456789abcd\r\n\r\n").status,
      401);
  EXPECT_EQ(Exchange(port_, health + "Authorization: Bearer " + token + "\r\n\r\n").status, 200);
  json r = Client("auth", {token});
  ASSERT_FALSE(r.contains("failed")) << r.dump(2) << Slurp(log_);
  EXPECT_EQ(r["tools"], 5);
  EXPECT_EQ(Slurp(log_).find(token), std::string::npos) << "the token was logged";
}

TEST_F(SrtMcpTest, SigtermEndsEverySessionAndExitsZero) {
  StartDaemon(BaseConfig());
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(Exchange(port_, Post("/mcp/fixture", kInitialize)).status, 200);
  }
  ASSERT_TRUE(it::Eventually(
      [&] { return it::ProcessesMatching("fixture_server.mjs " + root_).size() >= 2; }, 10s));
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(StopDaemon(), 0) << Slurp(log_);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 12s);
  EXPECT_TRUE(it::ProcessesMatching(root_).empty());
  bool stopped = false;
  for (const json& line : LogLines()) stopped |= line.value("event", "") == "stopped";
  EXPECT_TRUE(stopped);
}

TEST_F(SrtMcpTest, RoutesProxyToTheUpstream) {
  // A one-shot upstream that answers with what it received.
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(ls, 4), 0);
  socklen_t len = sizeof a;
  getsockname(ls, reinterpret_cast<sockaddr*>(&a), &len);
  const int upstream_port = ntohs(a.sin_port);
  std::string seen;
  std::thread upstream([&] {
    int c = accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
    char buf[8192];
    while (seen.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = read(c, buf, sizeof buf);
      if (n <= 0) break;
      seen.append(buf, static_cast<size_t>(n));
    }
    std::string body = "upstream says hi";
    std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                        std::to_string(body.size()) + "\r\n\r\n" + body;
    (void)!write(c, reply.data(), reply.size());
    close(c);
  });
  json config = BaseConfig();
  config["routes"] = {
      {{"name", "wiki"},
       {"upstream", "http://127.0.0.1:" + std::to_string(upstream_port) + "/base"}}};
  StartDaemon(config);
  Reply r = Exchange(port_,
                     "GET /mcp/wiki/page?q=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Connection: keep-alive, X-Drop\r\nX-Drop: 1\r\nX-Keep: 2\r\n\r\n");
  upstream.join();
  close(ls);
  EXPECT_EQ(r.status, 200) << r.head;
  EXPECT_EQ(r.body, "upstream says hi");
  EXPECT_TRUE(seen.starts_with("GET /base/page?q=1 HTTP/1.1\r\n")) << seen;
  EXPECT_NE(seen.find("X-Keep: 2"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("X-Drop"), std::string::npos) << seen;
  EXPECT_NE(seen.find("Host: 127.0.0.1:" + std::to_string(upstream_port)), std::string::npos);
}

// SIGHUP reads the file again: a file that does not parse is logged with file:line:column and
// changes nothing; a good one adds a route for new requests; srt-mcp keeps running either way.
TEST_F(SrtMcpTest, SighupReloadsTheConfiguration) {
  StartDaemon(BaseConfig());
  const std::string cfg = root_ + "/srt-mcp.json";
  const std::string health =
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(Exchange(port_, Post("/mcp/fixture", kInitialize)).status, 200);
  std::ofstream(cfg)
      << "{\n  \"listen\": {\"port\": 0},\n  \"servers\": {\"x\": {\"command\": [1]}}\n}\n";
  ASSERT_EQ(kill(pid_, SIGHUP), 0);
  EXPECT_TRUE(it::Eventually(
      [&] {
        for (const json& line : LogLines()) {
          if (line.value("event", "") == "reload_failed" &&
              line.value("error", "").starts_with(cfg + ":3:")) {
            return true;
          }
        }
        return false;
      },
      10s))
      << Slurp(log_);
  json before = json::parse(Exchange(port_, health).body, nullptr, false);
  EXPECT_TRUE(before["routes"].contains("fixture")) << before.dump();
  json config = BaseConfig();
  config["routes"] = {{{"name", "wiki"}, {"upstream", "http://127.0.0.1:9"}}};
  std::ofstream(cfg) << config.dump(2) << "\n";
  ASSERT_EQ(kill(pid_, SIGHUP), 0);
  EXPECT_TRUE(it::Eventually(
      [&] {
        json h = json::parse(Exchange(port_, health).body, nullptr, false);
        return h.is_object() && h["routes"].contains("wiki");
      },
      10s))
      << Slurp(log_);
  EXPECT_EQ(Exchange(port_, Post("/mcp/fixture", kInitialize)).status, 200);
  EXPECT_EQ(kill(pid_, 0), 0);  // still running
}

}  // namespace
}  // namespace srt::mcp
