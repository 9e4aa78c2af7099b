// SPDX-License-Identifier: Apache-2.0
// srt-mcp/config: the configuration file -> McpConfig, and the exact text of its errors.
#include "config/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace srt::mcp {
namespace {

McpConfig Parse(const std::string& text) {
  Result<McpConfig> c = ParseMcpConfig(text, "srt-mcp.json");
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().message());
  return c ? *c : McpConfig{};
}

std::string ErrorOf(const std::string& text) {
  Result<McpConfig> c = ParseMcpConfig(text, "srt-mcp.json");
  EXPECT_FALSE(c.has_value());
  return c ? "" : c.error().message();
}

TEST(McpConfigTest, TheIssuesExampleParses) {
  McpConfig c = Parse(R"({
  "listen": {"hostname": "127.0.0.1", "port": 8787},
  "auth": {"bearerTokenFiles": ["/etc/srt-mcp/token"]},   // optional
  "allowedOrigins": ["https://claude.ai"],
  /* one server */
  "servers": {
    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"],
              "env": {}, "cwd": "/srv/data",
              "srt": {"filesystem": {"allowWrite": ["/srv/data"], "denyRead": [], "denyWrite": []},
                      "network": {"allowedDomains": [], "deniedDomains": []}},
              "limits": {"memory": "512M", "cpus": 1, "pids": 256}}
  },
  "routes": [{"name": "wiki", "upstream": "http://127.0.0.1:9101"}]
})");
  EXPECT_EQ(c.listen_host, "127.0.0.1");
  EXPECT_EQ(c.listen_port, 8787);
  EXPECT_EQ(c.bearer_token_files, std::vector<std::string>{"/etc/srt-mcp/token"});
  EXPECT_EQ(c.allowed_origins, std::vector<std::string>{"https://claude.ai"});
  ASSERT_EQ(c.servers.size(), 1u);
  const StdioServer& s = c.servers.at("files");
  EXPECT_EQ(s.argv, (std::vector<std::string>{
                        "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/data"}));
  EXPECT_EQ(s.cwd, "/srv/data");
  ASSERT_EQ(s.settings.filesystem.allow_write.size(), 1u);
  EXPECT_EQ(s.settings.filesystem.allow_write[0].path, "/srv/data");
  ASSERT_TRUE(s.limits);
  EXPECT_EQ(s.limits->memory_bytes, uint64_t{512} << 20);
  EXPECT_EQ(s.limits->cpu_millis, 1000u);
  EXPECT_EQ(s.limits->pids, 256u);
  ASSERT_EQ(c.routes.size(), 1u);
  EXPECT_EQ(c.routes[0].host, "127.0.0.1");
  EXPECT_EQ(c.routes[0].port, 9101);
  EXPECT_EQ(c.routes[0].base_path, "");
}

// Every server's sandbox is denied the daemon's token files and configuration, whatever its own
// `srt` block says (a hostile review read every client's token from one server).
TEST(McpConfigTest, TheDaemonsSecretsAreHiddenFromEveryServer) {
  McpConfig c = Parse(R"({
  "auth": {"bearerTokenFiles": ["/etc/srt-mcp/a", "/etc/srt-mcp/b"]},
  "servers": {"one": {"command": "x"},
              "two": {"command": "y", "srt": {"filesystem": {"denyRead": ["/srv/private"]}}}}
})");
  HideDaemonSecrets(c, "/etc/srt-mcp/config.json");
  ASSERT_EQ(c.servers.size(), 2u);
  for (const auto& [name, server] : c.servers) {
    std::vector<std::string> denied;
    for (const PathEntry& e : server.settings.filesystem.deny_read) denied.push_back(e.path);
    for (const char* secret : {"/etc/srt-mcp/a", "/etc/srt-mcp/b", "/etc/srt-mcp/config.json"}) {
      EXPECT_NE(std::find(denied.begin(), denied.end(), secret), denied.end()) << name << secret;
    }
  }
  EXPECT_EQ(c.servers.at("two").settings.filesystem.deny_read.front().path, "/srv/private");
}

TEST(McpConfigTest, DefaultsListenOnLoopback8787) {
  McpConfig c = Parse("{}");
  EXPECT_EQ(c.listen_host, "127.0.0.1");
  EXPECT_EQ(c.listen_port, 8787);
  EXPECT_TRUE(c.bearer_token_files.empty());
  EXPECT_EQ(c.limits, DaemonLimits{});
}

TEST(McpConfigTest, SyntaxErrorsSayLineAndColumn) {
  EXPECT_EQ(ErrorOf("{\n  \"listen\": {\"port\": 80,}\n}"),
            "srt-mcp.json:2:25: syntax error while parsing object key - unexpected '}'; expected "
            "string literal");
  EXPECT_EQ(ErrorOf(""), "srt-mcp.json: empty");
}

TEST(McpConfigTest, SchemaErrorsNamePositionPointerAndValue) {
  EXPECT_EQ(ErrorOf("{\n  \"servers\": {\"a\": {\"command\": \"x\",\n    \"limits\": {\"memory\": "
                    "\"12Q\"}}}}"),
            "srt-mcp.json:3:16: /servers/a/limits/memory: '\"12Q\"' is not a size (512M, 2G, "
            "1048576)");
  EXPECT_EQ(ErrorOf("{\"listen\": {\"prot\": 1}}"),
            "srt-mcp.json:1:13: /listen/prot: unknown key (known: hostname, port, domains)");
  EXPECT_EQ(ErrorOf("{\"servers\": {\"a b\": {\"command\": \"x\"}}}"),
            "srt-mcp.json:1:14: /servers/a b: 'a b' is not a name (1 to 64 letters, digits, '-' "
            "and '_': it becomes the path /mcp/NAME and the host NAME.<domain>)");
  EXPECT_EQ(ErrorOf("{\"servers\": {\"a\": {\"args\": []}}}"),
            "srt-mcp.json:1:14: /servers/a: has no \"command\"");
  EXPECT_EQ(ErrorOf("{\"servers\": {\"a\": {\"command\": \"x\", \"cwd\": \"rel\"}}}"),
            "srt-mcp.json:1:36: /servers/a/cwd: 'rel' is not an absolute path");
  EXPECT_EQ(ErrorOf("{\"listen\": {\"port\": 70000}}"),
            "srt-mcp.json:1:13: /listen/port: 70000 is out of range (0 to 65535)");
  EXPECT_EQ(ErrorOf("{\"listen\": {\"port\": 1, \"port\": 2}}"),
            "srt-mcp.json:1:24: /listen/port: the key appears twice (which one counts would be a "
            "guess)");
}

TEST(McpConfigTest, ArrayElementsHaveTheirOwnPositions) {
  EXPECT_EQ(ErrorOf("{\"servers\": {\"a\": {\"command\": \"x\",\n \"args\": [\"ok\",\n    7]}}}"),
            "srt-mcp.json:3:5: /servers/a/args/1: must be a string, not a number");
  EXPECT_EQ(ErrorOf("{\"allowedOrigins\": [\"https://a.example\", \"https://b.example/\"]}"),
            "srt-mcp.json:1:42: /allowedOrigins/1: 'https://b.example/' is not an origin "
            "(scheme://host[:port], no path)");
}

TEST(McpConfigTest, TheSrtBlockGoesThroughLibsrtsParser) {
  std::string e = ErrorOf(
      "{\"servers\": {\"a\": {\"command\": \"x\",\n  \"srt\": {\"filesystem\": {\"denyReed\": "
      "[]}}}}}");
  EXPECT_TRUE(e.starts_with("srt-mcp.json:2:3: /servers/a/srt: /filesystem/denyReed")) << e;
  EXPECT_NE(e.find("did you mean 'denyRead'"), std::string::npos) << e;
}

TEST(McpConfigTest, NoAuthMeansLoopbackOnly) {
  EXPECT_EQ(ErrorOf("{\"listen\": {\"hostname\": \"0.0.0.0\"}}"),
            "srt-mcp.json:1:13: /listen/hostname: '0.0.0.0' is not a loopback address, and there "
            "is no `auth`: srt-mcp listens beyond this host only with auth.bearerTokenFiles");
  McpConfig c = Parse(
      "{\"listen\": {\"hostname\": \"0.0.0.0\"}, \"auth\": {\"bearerTokenFiles\": [\"/t\"]}}");
  EXPECT_EQ(c.listen_host, "0.0.0.0");
  EXPECT_TRUE(Parse("{\"listen\": {\"hostname\": \"::1\"}}").bearer_token_files.empty());
  EXPECT_TRUE(Parse("{\"listen\": {\"hostname\": \"localhost\"}}").bearer_token_files.empty());
  EXPECT_EQ(ErrorOf("{\"listen\": {\"hostname\": \"example.com\"}}"),
            "srt-mcp.json:1:13: /listen/hostname: 'example.com' is not an IP address or "
            "\"localhost\"");
  EXPECT_EQ(ErrorOf("{\"auth\": {\"bearerTokenFiles\": [\"token\"]}}"),
            "srt-mcp.json:1:32: /auth/bearerTokenFiles/0: 'token' is not an absolute path");
}

TEST(McpConfigTest, RoutesAndNames) {
  McpConfig c = Parse(
      "{\"routes\": [{\"name\": \"w\", \"upstream\": \"http://[::1]:81/a/b/\"},"
      " {\"name\": \"x\", \"upstream\": \"http://localhost\"}]}");
  EXPECT_EQ(c.routes[0].host, "::1");
  EXPECT_EQ(c.routes[0].port, 81);
  EXPECT_EQ(c.routes[0].base_path, "/a/b");
  EXPECT_EQ(c.routes[1].host, "127.0.0.1");
  EXPECT_EQ(c.routes[1].port, 80);
  EXPECT_EQ(ErrorOf("{\"routes\": [{\"name\": \"w\", \"upstream\": \"https://x.example\"}]}"),
            "srt-mcp.json:1:27: /routes/0/upstream: 'https://x.example' is not an http:// URL "
            "(srt-mcp speaks plain HTTP to upstreams on this host)");
  EXPECT_EQ(ErrorOf("{\"routes\": [{\"name\": \"w\", \"upstream\": \"http://wiki.internal\"}]}"),
            "srt-mcp.json:1:27: /routes/0/upstream: 'http://wiki.internal': the host must be an "
            "IP address or localhost (no DNS at run time)");
  EXPECT_EQ(ErrorOf("{\"servers\": {\"w\": {\"command\": \"x\"}}, \"routes\": [{\"name\": \"w\", "
                    "\"upstream\": \"http://127.0.0.1\"}]}"),
            "srt-mcp.json:1:50: /routes/0/name: 'w' is already the name of a server or route");
}

TEST(McpConfigTest, Limits) {
  McpConfig c = Parse(
      "{\"limits\": {\"maxBodyBytes\": 2048, \"maxSessionsPerClient\": 2, \"sessionIdle\": "
      "\"5m\"}}");
  EXPECT_EQ(c.limits.max_body_bytes, 2048u);
  EXPECT_EQ(c.limits.max_sessions_per_client, 2u);
  EXPECT_EQ(c.limits.session_idle, std::chrono::minutes(5));
  EXPECT_EQ(ErrorOf("{\"limits\": {\"maxBodyBytes\": -1}}"),
            "srt-mcp.json:1:13: /limits/maxBodyBytes: -1 is negative");
  EXPECT_EQ(ErrorOf("{\"limits\": {\"sessionIdle\": \"soon\"}}"),
            "srt-mcp.json:1:13: /limits/sessionIdle: 'soon' is not a duration (30s, 5m, 1h30m)");
}

// A server without limits.pids still gets a pids limit (a fork bomb in one session's sandbox
// must not take the host's process table); "pids": 0 is the explicit way to run without one.
TEST(McpConfigTest, ServersGetADefaultPidsLimit) {
  McpConfig c = Parse(
      "{\"servers\": {\"a\": {\"command\": \"x\"}, \"b\": {\"command\": \"x\", \"limits\": "
      "{\"memory\": \"64M\"}}, \"c\": {\"command\": \"x\", \"limits\": {\"pids\": 0}}}}");
  ASSERT_TRUE(c.servers.at("a").limits);
  EXPECT_EQ(c.servers.at("a").limits->pids, kDefaultServerPids);
  EXPECT_EQ(c.servers.at("b").limits->pids, kDefaultServerPids);
  EXPECT_EQ(c.servers.at("b").limits->memory_bytes, uint64_t{64} << 20);
  EXPECT_EQ(c.servers.at("c").limits->pids, 0u);
  EXPECT_EQ(kDefaultServerPids, 256u);
  EXPECT_EQ(
      ErrorOf("{\"servers\": {\"a\": {\"command\": \"x\", \"limits\": {\"pids\": 8}}}}"),
      "srt-mcp.json:1:47: /servers/a/limits/pids: 8 is out of range (16 to 4194304; 0: no limit)");
}

TEST(McpConfigTest, ConnectionAndUpstreamLimits) {
  McpConfig d = Parse("{}");
  EXPECT_EQ(d.limits.max_connections_per_client, 64u);
  EXPECT_EQ(d.limits.upstream_timeout, std::chrono::seconds(30));
  McpConfig c =
      Parse("{\"limits\": {\"maxConnectionsPerClient\": 3, \"upstreamTimeout\": \"2s\"}}");
  EXPECT_EQ(c.limits.max_connections_per_client, 3u);
  EXPECT_EQ(c.limits.upstream_timeout, std::chrono::seconds(2));
  EXPECT_EQ(ErrorOf("{\"limits\": {\"maxConnectionsPerClient\": 0}}"),
            "srt-mcp.json:1:13: /limits/maxConnectionsPerClient: 0 is out of range (1 to 65536)");
}

TEST(McpConfigTest, ServerEnvAndType) {
  McpConfig c = Parse(
      "{\"servers\": {\"m\": {\"type\": \"stdio\", \"command\": \"node\", \"env\": {\"A\": "
      "\"1\"}}}}");
  EXPECT_EQ(c.servers.at("m").env.at("A"), "1");
  EXPECT_EQ(ErrorOf("{\"servers\": {\"m\": {\"type\": \"http\", \"command\": \"x\"}}}"),
            "srt-mcp.json:1:20: /servers/m/type: 'http': only \"stdio\" servers run in sandboxes "
            "(put an HTTP server in `routes`)");
  EXPECT_EQ(ErrorOf("{\"servers\": {\"m\": {\"command\": \"x\", \"env\": {\"A\": 1}}}}"),
            "srt-mcp.json:1:44: /servers/m/env/A: must be a string, not a number");
}

TEST(McpConfigTest, HostileInputIsBounded) {
  std::string deep(100, '[');
  EXPECT_EQ(ErrorOf(deep), "srt-mcp.json: nested deeper than 32 levels");
  EXPECT_EQ(ErrorOf(std::string(2 << 20, ' ')),
            "srt-mcp.json: larger than 1 MiB, not a configuration file");
}

TEST(McpConfigTest, IsLoopbackHost) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.8.9.10"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
}

}  // namespace
}  // namespace srt::mcp

namespace srt::mcp {
namespace {

TEST(McpConfigTest, TheShippedExampleParses) {
  std::ifstream in(SRT_EXAMPLES_DIR "/srt-mcp.json");
  std::stringstream text;
  text << in.rdbuf();
  Result<McpConfig> c = ParseMcpConfig(text.str(), "examples/srt-mcp.json");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->servers.size(), 2u);
  EXPECT_TRUE(c->servers.contains("files"));
  EXPECT_TRUE(c->servers.contains("memory"));
  EXPECT_EQ(c->routes.size(), 1u);
  EXPECT_TRUE(c->warnings.empty());
}

}  // namespace
}  // namespace srt::mcp
