// SPDX-License-Identifier: Apache-2.0
// runner/tool_executor.h: what the session runner needs from whatever runs a tool call (in the
// product: srt-toolbox inside the session's sandbox, over its framed JSON protocol).
#pragma once

#include <chrono>
#include <string>

namespace srt::poller {

struct ToolCall {
  std::string id;                 // the agent.tool_use / agent.custom_tool_use event id
  std::string name;               // "bash", "read", ... or a custom tool name
  std::string input_json;         // the tool input object exactly as the event carried it
  bool custom = false;            // agent.custom_tool_use (answered with user.custom_tool_result)
  std::string session_thread_id;  // for logs; not echoed into the result (Go parity)
  std::string confirmation;       // "allow" when a user confirmation released it, else ""
};

struct ToolResult {
  bool is_error = false;
  // A JSON array of content blocks, normally [{"type":"text","text":"..."}]. Anything that is
  // not a JSON array is posted as one text block; an empty array as "(no output)".
  std::string content_json = "[]";
  // Set by an executor that enforced `timeout` itself; the runner then posts Go's timeout text.
  bool timed_out = false;
};

class ToolExecutor {
 public:
  virtual ~ToolExecutor() = default;

  // Runs one call to completion and returns its result; never throws. The runner calls Run from
  // one thread, one call at a time. `timeout` is the per-tool limit: the executor should stop
  // the tool at that point (returning timed_out = true); the runner also calls Cancel() when
  // it expires, so an executor may rely on that instead.
  virtual ToolResult Run(const ToolCall& call, std::chrono::milliseconds timeout) = 0;

  // Makes the Run in progress return soon with an error result (e.g. "tool cancelled"). Called
  // from another thread; must only signal (never wait for Run to return). A Cancel that arrives
  // when nothing runs is a no-op and must not affect a later Run. The runner only calls it
  // while a Run is (or was, a moment ago) in progress, never for a call that has not started.
  virtual void Cancel() = 0;
};

}  // namespace srt::poller
