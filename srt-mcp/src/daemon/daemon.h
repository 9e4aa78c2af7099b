// SPDX-License-Identifier: Apache-2.0
// srt-mcp/daemon/daemon: the srt-mcp server: one listener, HTTP/1.1 connections on one event
// loop, an MCP session per initialize (each with its own sandboxed server process), and
// byte-transparent HTTP routes.
//
// Usage protocol:
//   1. Create(config, options): loads and checks the bearer tokens (0600 files), binds the
//      listener (port 0 picks one: port()), builds nothing else.
//   2. Run() on the thread that is to own the loop (and the sandboxes' supervisor threads):
//      returns after Shutdown() finished draining: every session ended and every server
//      process gone (stdin closed, then SIGTERM, then SIGKILL), within options.drain.
//   3. Shutdown() is thread-safe (main calls it on SIGTERM through a signalfd, tests directly).
//      So is Reload() (SIGHUP): options.reload reads the configuration again; new, changed and
//      removed servers and routes apply to new sessions and requests, sessions already running
//      keep their server until they end, and a configuration that fails (to parse, or its token
//      files) is logged and changes nothing. `listen` is bound once: a change needs a restart.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "daemon/server_process.h"
#include "srt/result.h"

namespace srt::mcp {

struct DaemonOptions {
  // Receives each JSON log line (without '\n'); default: stderr. Called on the loop thread and,
  // for a sandbox's warnings, on supervisor threads: it must be thread-safe.
  std::function<void(std::string_view)> log;
  // srt-init; default: found next to this program or in the install prefix.
  std::optional<std::string> init_path;
  // How long Shutdown() waits for sessions to end before SIGKILLing their processes.
  std::chrono::milliseconds drain{10'000};
  // Between closing a server's stdin and SIGTERM, and between SIGTERM and SIGKILL.
  std::chrono::milliseconds stop_grace{2'000};
  // Restart backoff after a server process crashed: first delay, doubled up to the maximum.
  std::chrono::milliseconds backoff_min{1'000};
  std::chrono::milliseconds backoff_max{30'000};
  // What runs each server process; default: an srt sandbox (MakeSandboxRunner).
  RunnerFactory runner;
  // Reads and parses the configuration again for Reload() (main: the --config file, with
  // HideDaemonSecrets applied). Called on the loop thread. Unset: Reload() logs and does nothing.
  std::function<Result<McpConfig>()> reload;
};

class Daemon {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Daemon>> Create(McpConfig config,
                                                              DaemonOptions options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  uint16_t port() const;
  void Run();
  void Shutdown();
  void Reload();
  // A signalfd to watch: SIGHUP read from it is Reload(), any other signal starts Shutdown()
  // (srt-mcp's main: SIGTERM, SIGINT). Call before Run().
  [[nodiscard]] Result<void> WatchSignals(int signal_fd);

  class Impl;

 private:
  explicit Daemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Reads a bearer token file: refused unless a regular file owned by this user or root with no
// group or other permission bits; surrounding whitespace trimmed; at least 16 bytes.
[[nodiscard]] Result<std::string> LoadBearerToken(const std::string& path);

}  // namespace srt::mcp
