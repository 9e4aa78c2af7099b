// SPDX-License-Identifier: Apache-2.0
// srt-mcp/config: the daemon's configuration file (JSON with // and /* */ comments) -> McpConfig.
// Pure: no I/O (the caller reads the file; token files are checked at start by the daemon).
//
// Every error names the origin (the file), the line:column of the offending key or value and
// its JSON pointer, and quotes the bad value:
//   "srt-mcp.json:7:21: /servers/files/limits/memory: '12Q' is not a size (512M, 2G, 1048576)".
// Unknown keys are errors: a misspelt limit or origin list ignored would leave the daemon more
// open than the file says. Each server's `srt` block goes through libsrt's ParseSettings.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"
#include "srt/settings.h"

namespace srt::mcp {

// The pids limit of a server without `limits.pids` ("pids": 0 runs it without one).
inline constexpr uint32_t kDefaultServerPids = 256;

// `servers.NAME.limits`: the sandbox's cgroup limits (0: unset) and a wall-clock limit per
// server process (0: none). Every parsed server has limits: pids is kDefaultServerPids unless
// the file says otherwise.
struct ServerLimits {
  uint64_t memory_bytes = 0;
  uint32_t cpu_millis = 0;
  uint32_t pids = 0;
  std::chrono::milliseconds time{0};
  bool operator==(const ServerLimits&) const = default;
};

// A stdio MCP server (the `.mcp.json` mcpServers shape plus `srt` and `limits`); one sandboxed
// process of it per MCP session.
struct StdioServer {
  std::string name;
  std::vector<std::string> argv;  // command, then args
  // Exactly what `env` says; the daemon adds PATH, LANG and HOME when absent (docs/mcp.md).
  std::map<std::string, std::string> env;
  std::optional<std::string> cwd;  // absolute; default "/"
  Settings settings;               // the `srt` block (libsrt's settings, defaults when absent)
  std::vector<std::string> settings_warnings;
  std::optional<ServerLimits> limits;
};

// An HTTP upstream, proxied byte-transparently below /mcp/NAME.
struct HttpRoute {
  std::string name;
  std::string upstream;  // as written
  std::string host;      // an IP literal ("127.0.0.1", "::1") or "localhost"
  uint16_t port = 80;
  std::string base_path;  // "" or "/path" without a trailing '/'
};

// Limits on what clients may make the daemon hold (`limits`, all optional; docs/mcp.md).
struct DaemonLimits {
  size_t max_body_bytes = size_t{4} << 20;     // a POST body (413 beyond)
  size_t max_message_bytes = size_t{4} << 20;  // one line of a server's stdout
  uint32_t max_connections = 256;              // open client connections
  uint32_t max_connections_per_client = 64;    // per peer address (all of loopback is one peer)
  uint32_t max_sessions = 64;                  // MCP sessions, all clients together
  uint32_t max_sessions_per_client = 16;       // 503 + Retry-After beyond
  uint32_t max_inflight_per_session = 32;      // requests awaiting a response
  std::chrono::milliseconds session_idle{30 * 60 * 1000};  // ended after this long unused
  std::chrono::milliseconds head_timeout{10'000};  // a request's head and body must arrive within
  std::chrono::milliseconds keepalive_idle{60'000};
  // A route's upstream must accept and send its response head within this (504 otherwise).
  std::chrono::milliseconds upstream_timeout{30'000};
  size_t replay_events = 64;  // per SSE stream, for Last-Event-ID
  bool operator==(const DaemonLimits&) const = default;
};

struct McpConfig {
  std::string listen_host = "127.0.0.1";  // an IP literal or "localhost"
  uint16_t listen_port = 8787;
  // Host names (besides the listen host, and localhost/127.0.0.1/[::1] on loopback) a request's
  // Host header may carry; a `NAME.<domain>` Host routes to NAME (`listen.domains`).
  std::vector<std::string> domains;
  std::vector<std::string> bearer_token_files;  // absolute; empty: no authentication
  std::vector<std::string> allowed_origins;     // exact "scheme://host[:port]" values
  std::map<std::string, StdioServer> servers;
  std::vector<HttpRoute> routes;
  DaemonLimits limits;
  std::vector<std::string> warnings;  // from the servers' srt blocks
};

// Parses and validates configuration text. `origin` names it in every message.
// Errors: Errc::kInvalidArgument, "origin:LINE:COL: ..." (see the file comment).
[[nodiscard]] Result<McpConfig> ParseMcpConfig(std::string_view text, std::string_view origin);

// Hides the daemon's own secrets from every server's sandbox: each bearer token file and the
// configuration file (`config_path`, absolute) join each server's filesystem.denyRead, whatever
// its `srt` block says. A server runs as the daemon's user, which can read them otherwise (a
// hostile review read every client's token from one server).
void HideDaemonSecrets(McpConfig& config, const std::string& config_path);

// True for 127.0.0.0/8, ::1 and "localhost".
[[nodiscard]] bool IsLoopbackHost(std::string_view host);

}  // namespace srt::mcp
