// SPDX-License-Identifier: Apache-2.0
// The file tools and the search tools of the toolbox (internal to srt_poller_toolbox).
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "toolbox/confined_root.h"
#include "toolbox/interrupt.h"
#include "toolbox/toolbox.h"

namespace srt::poller::toolbox {

// Decoded input fields: absent and null give `fallback`; any other wrong type is an error whose
// message is "<field> must be a <type>".
[[nodiscard]] Result<std::string> InputString(const nlohmann::json& in, const char* field);
[[nodiscard]] Result<bool> InputBool(const nlohmann::json& in, const char* field);
[[nodiscard]] Result<long long> InputInt(const nlohmann::json& in, const char* field);

ToolResult ReadTool(const ConfinedRoot& root, const nlohmann::json& in);
ToolResult WriteTool(const ConfinedRoot& root, const nlohmann::json& in);
ToolResult EditTool(const ConfinedRoot& root, const nlohmann::json& in);
ToolResult GlobTool(const ConfinedRoot& root, const nlohmann::json& in);
// grep matches with RE2 (Go's regexp syntax). When `deadline` passes the result has `timed_out`
// set.
struct GrepContext {
  std::chrono::steady_clock::time_point deadline;
  Interrupt* interrupt = nullptr;
};
ToolResult GrepTool(const ConfinedRoot& root, const nlohmann::json& in, const GrepContext& ctx);

}  // namespace srt::poller::toolbox
