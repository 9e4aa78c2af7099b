// SPDX-License-Identifier: Apache-2.0
// runner/session_events.h: the session events the runner consumes, as one plain struct.
//
// The API layer turns each SSE `data:` object and each history entry into an Event
// (ParseSessionEvent in api/work.h); the runner never sees raw JSON except a tool's input, which
// it forwards untouched to the ToolExecutor.
#pragma once

#include <string>
#include <string_view>

#include "api/work.h"
#include "srt/result.h"

namespace srt::poller {

// Event types the runner acts on (work-queue-protocol §2.5). Anything else only resets the idle
// clock.
inline constexpr std::string_view kAgentToolUse = "agent.tool_use";
inline constexpr std::string_view kAgentCustomToolUse = "agent.custom_tool_use";
inline constexpr std::string_view kAgentMcpToolUse = "agent.mcp_tool_use";
inline constexpr std::string_view kUserToolConfirmation = "user.tool_confirmation";
inline constexpr std::string_view kUserToolResult = "user.tool_result";
inline constexpr std::string_view kUserCustomToolResult = "user.custom_tool_result";
inline constexpr std::string_view kSessionStatusIdle = "session.status_idle";
inline constexpr std::string_view kSessionStatusTerminated = "session.status_terminated";
inline constexpr std::string_view kSessionDeleted = "session.deleted";
inline constexpr std::string_view kStopReasonEndTurn = "end_turn";

// The runner consumes the API layer's decoded event (api/work.h); only these fields matter
// here: id, type, name, input_json, evaluated_permission, session_thread_id, tool_use_id,
// result, custom_tool_use_id, stop_reason.
using Event = SessionEvent;

}  // namespace srt::poller
