// SPDX-License-Identifier: Apache-2.0
// srt-poller/toolbox_protocol: the one description of the protocol between srt-poller and
// srt-toolbox (docs/poller.md "Toolbox protocol"), used by both ends. One JSON object per line:
//
//   toolbox -> poller  {"ready":true,"version":1}                             once, first
//   poller -> toolbox  {"id":7,"tool":"bash","input":{...},"timeout_ms":120000}  a call
//   poller -> toolbox  {"cancel":7}                                           stop call 7 now
//   toolbox -> poller  {"id":7,"is_error":false,"content":[{"type":"text","text":"..."}]}
//
// Pure: formatting and parsing only, no I/O. The toolbox runs inside a session's sandbox, so
// everything the poller parses here comes from a hostile process: the parsers never throw,
// bound the nesting before nlohmann's recursive parser sees a line, and accept only the shapes
// the toolbox itself produces.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "srt/result.h"

namespace srt::poller::toolbox_protocol {

inline constexpr int kVersion = 1;
// One line in either direction (a write tool's content travels in one).
inline constexpr size_t kMaxLineBytes = 64u << 20;
// Calls the toolbox reads and queues while one runs.
inline constexpr size_t kMaxQueuedCalls = 64;
// Arrays and objects inside one another in a line: a tool's input is a flat object, an answer
// is three deep; far more than either, and far below what would exhaust a stack.
inline constexpr int kMaxNesting = 64;

// The tools srt-toolbox serves: the runner leaves every other tool name to other clients.
inline constexpr std::array<std::string_view, 6> kServedTools = {"bash", "read", "write",
                                                                 "edit", "glob", "grep"};

// --- toolbox -> poller -------------------------------------------------------------------

std::string FormatReady();
// Ok for the ready line of this protocol version; otherwise an error that says what came.
[[nodiscard]] Result<void> ParseReady(std::string_view line);

// The answer to call `id` (an integer or a string; null when a bad line had none); invalid
// UTF-8 in `text` becomes U+FFFD.
std::string FormatAnswer(const nlohmann::json& id, std::string_view text, bool is_error);

struct Answer {
  std::optional<uint64_t> id;  // nullopt: the answer to a line without a usable id
  bool is_error = false;
  std::string text;
};
// Exactly the shape FormatAnswer writes for the ids the poller sends (unsigned integers) or
// null; anything else is an error naming the field at fault.
[[nodiscard]] Result<Answer> ParseAnswer(std::string_view line);

// The content blocks of an answer, as the Managed Agents API takes them: one text block.
std::string ContentJson(std::string_view text);

// --- poller -> toolbox -------------------------------------------------------------------

// `input` must be a JSON object; `timeout` is the call's own deadline.
std::string FormatCall(uint64_t id, std::string_view tool, const nlohmann::json& input,
                       std::chrono::milliseconds timeout);
std::string FormatCancel(uint64_t id);

// A decoded line on the toolbox's side. Exactly one of call/cancel/bad is meaningful, by `kind`.
// (nlohmann::json's destructor and moves do not throw, but clang-tidy 14 follows them into its
// assertion code, which could.)
struct Message {  // NOLINT(bugprone-exception-escape)
  enum class Kind { kCall, kCancel, kBad };
  Kind kind = Kind::kBad;
  nlohmann::json id;  // the call's (or cancel's) id; null when unknown
  std::string tool;
  nlohmann::json input;
  long long timeout_ms = 0;  // 0 = the default per-call deadline
  std::string error;         // kBad: what is wrong
};
Message ParseMessage(std::string_view line);

}  // namespace srt::poller::toolbox_protocol
