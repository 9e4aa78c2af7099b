// SPDX-License-Identifier: Apache-2.0
// MCP test client: runs a stdio MCP server command (srt ... node server.js ...) with pipes, as root
// or as an unprivileged user, and speaks JSON-RPC 2.0 to it as newline-delimited messages.
//
// Usage: construct (the command starts at once), Notify()/Call() with a time limit on every wait,
// then CloseAndWait() (EOF on stdin is how an MCP client ends a stdio session). The destructor
// SIGKILLs the process group of a command that is still running, so a failed test leaves nothing.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "srt_runner.h"

namespace srt::mcp {

class McpSession {
 public:
  // Starts `argv` in `cwd` with HOME=`home`, in its own process group; as `who` (nobody for
  // kUnprivileged, through setpriv). Throws std::runtime_error if it cannot be spawned.
  McpSession(it::Identity who, const std::vector<std::string>& argv, const std::string& cwd,
             const std::string& home);
  ~McpSession();
  McpSession(const McpSession&) = delete;
  McpSession& operator=(const McpSession&) = delete;

  // Sends a notification (no id, no answer).
  void Notify(const std::string& method, const nlohmann::json& params = nlohmann::json::object());
  // Sends a request and returns the whole response message (with "result" or "error"), or
  // nullopt if none came within `limit` (the reason is in failure()).
  std::optional<nlohmann::json> Call(const std::string& method, const nlohmann::json& params,
                                     std::chrono::milliseconds limit = std::chrono::seconds(20));
  // Closes the server's stdin and waits up to `limit` for the command to exit; returns its exit
  // status (128+N for signal N), or -1 after killing it when the limit passed.
  int CloseAndWait(std::chrono::milliseconds limit = std::chrono::seconds(20));
  // Sends `sig` to the command (srt), as an MCP client does to stop a server.
  void Signal(int sig);
  // Waits up to `limit` for the command to exit, reading its output meanwhile; the exit status,
  // or -1 after killing it when the limit passed.
  int WaitForExit(std::chrono::milliseconds limit = std::chrono::seconds(20));

  pid_t pid() const { return pid_; }
  const std::string& failure() const { return failure_; }
  // Everything the command wrote on stderr so far.
  const std::string& err() const { return err_; }
  // Lines on stdout that were not JSON-RPC 2.0 messages (MCP forbids any).
  const std::vector<std::string>& stray_lines() const { return stray_; }
  // Messages from the server that were neither the awaited response nor a notification.
  const std::vector<nlohmann::json>& unexpected() const { return unexpected_; }

 private:
  void Send(const nlohmann::json& message);
  // Reads stdout/stderr until a complete stdout line is available or the deadline passes.
  std::optional<std::string> NextLine(std::chrono::steady_clock::time_point deadline);
  void KillGroup();

  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  int errfd_ = -1;
  bool exited_ = false;
  long next_id_ = 1;
  std::string out_buf_;
  std::string err_;
  std::string failure_;
  std::vector<std::string> stray_;
  std::vector<nlohmann::json> unexpected_;
};

// The text of every "text" item in a tools/call result's content, joined by newlines.
std::string ToolText(const nlohmann::json& result);

}  // namespace srt::mcp
