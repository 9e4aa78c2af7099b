// SPDX-License-Identifier: Apache-2.0
// api/work.h: the JSON objects of the work-queue, session and skills APIs (pure).
//
// Every parser takes the raw response body and returns a plain struct, or an Error (kProtocol
// for malformed JSON or a wrong shape, kInvalidArgument for an unsafe id) that names the field
// by JSON pointer and quotes the value at fault:
//   work: /data/id: 'a/b' is not a safe id (allowed: A-Z a-z 0-9 _ -, 1 to 128 characters)
// Untrusted input never throws or crashes; documents nested deeper than kMaxJsonDepth are refused
// before parsing. nlohmann-json is used in work.cc only; nothing here exposes it. Raw JSON
// (the work object for --on-work, a tool's `input`) is handed on as text.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"

namespace srt::poller {

inline constexpr size_t kMaxIdLength = 128;
inline constexpr int kMaxJsonDepth = 128;

// Session, work, environment and skill ids end up in URL paths and directory names, so they must
// match [A-Za-z0-9_-]{1,128}. No prefix is assumed (`session_...` and `sesn_...` both occur).
// `what` names the field in the error: "session id: 'x y' is not a safe id (...)".
[[nodiscard]] srt::Result<void> ValidateId(std::string_view what, std::string_view id);

// A work item (work-queue-protocol.md §2.3).
struct Work {
  std::string id;                     // validated id
  std::string environment_id;         // validated id, or empty when absent
  std::string data_type;              // "session", "healthcheck", ...
  std::string data_id;                // validated id when data_type is "session"; else as sent
  std::string state;                  // queued|starting|active|stopping|stopped, or empty
  std::optional<std::string> secret;  // base64url JSON; only on the poll response
  std::map<std::string, std::string> metadata;  // string values only; others are skipped
  std::string created_at;
  std::string raw_json;  // the object exactly as received (--on-work passes it on stdin)

  bool is_session() const { return data_type == "session"; }
};

// A work object.
[[nodiscard]] srt::Result<Work> ParseWork(std::string_view body);
// The poll response: nullopt for an empty queue, which arrives as 204, an empty body, JSON
// `null`, or (Go SDK parity) an object without an id.
[[nodiscard]] srt::Result<std::optional<Work>> ParsePollResponse(int status, std::string_view body);

// The decoded per-item secret: base64url (padding optional; the standard alphabet is accepted
// too) of {"sessions_token": "...", "api_base_url"?: "..."}. The token must be printable ASCII
// without spaces (it becomes an HTTP header); api_base_url, if set, must be http(s)://.
struct WorkSecret {
  std::string sessions_token;
  std::optional<std::string> api_base_url;
};
[[nodiscard]] srt::Result<WorkSecret> DecodeWorkSecret(std::string_view secret);
// Base64 or base64url, padded or not; errors name the offending character's offset.
[[nodiscard]] srt::Result<std::string> DecodeBase64Url(std::string_view text);

// POST .../heartbeat (§2.2).
struct HeartbeatResponse {
  std::string last_heartbeat;  // echo it as the next expected_last_heartbeat, byte for byte
  bool lease_extended = false;
  std::string state;
  std::optional<int64_t> ttl_seconds;
};
[[nodiscard]] srt::Result<HeartbeatResponse> ParseHeartbeatResponse(std::string_view body);

// GET .../work/stats (§2.3 "Queue stats"): read-only, so `srt-poller --check` uses it to prove
// the environment key and the base URL work.
struct QueueStats {
  int64_t depth = 0;            // items waiting to be claimed
  int64_t pending = 0;          // claimed but not yet acked
  int64_t workers_polling = 0;  // workers that polled in the last 30 s
};
[[nodiscard]] srt::Result<QueueStats> ParseQueueStats(std::string_view body);

// Session events (§2.5). Known types get their fields; anything else is kUnknown with `type`
// kept, so new server event types pass through harmlessly.
enum class EventKind {
  kAgentToolUse,             // agent.tool_use
  kAgentCustomToolUse,       // agent.custom_tool_use
  kUserToolConfirmation,     // user.tool_confirmation
  kUserToolResult,           // user.tool_result
  kUserCustomToolResult,     // user.custom_tool_result
  kSessionStatusIdle,        // session.status_idle
  kSessionStatusTerminated,  // session.status_terminated
  kSessionDeleted,           // session.deleted
  kUnknown,
};

struct SessionEvent {
  EventKind kind = EventKind::kUnknown;
  std::string type;  // as sent
  std::string id;    // event id; required for tool uses, may be empty for others
  // agent.tool_use / agent.custom_tool_use
  std::string name;
  std::string input_json;            // the `input` value re-serialised (compact JSON)
  std::string evaluated_permission;  // allow|ask|deny|other; empty when absent (tool_use only)
  std::string session_thread_id;     // empty when absent or null
  // user.tool_confirmation (tool_use_id, result), user.tool_result (tool_use_id)
  std::string tool_use_id;
  std::string result;  // allow|deny as sent
  // user.custom_tool_result
  std::string custom_tool_use_id;
  // session.status_idle
  std::string stop_reason;  // stop_reason.type: end_turn|requires_action|...; empty if absent
  std::vector<std::string> stop_event_ids;  // stop_reason.event_ids (requires_action)
  std::string processed_at;
};

EventKind EventKindFromType(std::string_view type);
[[nodiscard]] srt::Result<SessionEvent> ParseSessionEvent(std::string_view json);

// GET /v1/sessions/{id}/events: one page.
struct EventPage {
  std::vector<SessionEvent> data;
  std::optional<std::string> next_page;  // nullopt (or absent/empty) = last page
};
[[nodiscard]] srt::Result<EventPage> ParseEventPage(std::string_view body);

// GET /v1/sessions/{id}: the parts the worker uses.
struct SkillRef {
  std::string skill_id;  // validated id
  std::string version;   // "latest", a numeric version, or empty (= latest); validated if set
  std::string type;      // anthropic|custom
};
// A `memory_store` entry of the session's resources[] (the newer official workers mount each).
struct MemoryStoreRef {
  std::string memory_store_id;  // validated id
  bool read_only = false;       // access "read_only"; "read_write" or absent = false
  std::string mount_path;       // as sent (the caller validates it); empty when absent or null
  std::string name;             // as sent; empty when absent or null
};
struct Session {
  std::string id;
  std::vector<SkillRef> skills;               // agent.skills[]
  std::vector<MemoryStoreRef> memory_stores;  // resources[] of type memory_store, in order
  std::string metadata_json;                  // `metadata` as compact JSON ("{}" when absent)
  std::string raw_json;
};
[[nodiscard]] srt::Result<Session> ParseSession(std::string_view body);

// A memory of a store (GET /v1/memory_stores/{store}/memories[/{id}]): a text document at a
// path. `content` is set only by the `full` view.
struct Memory {
  std::string id;    // validated id
  std::string path;  // as sent (the caller validates it before it names a file)
  std::optional<std::string> content;
  std::string content_sha256;  // lowercase hex, 64 characters
};
struct MemoryPage {
  std::vector<Memory> data;  // `memory_prefix` items (a listing with `depth`) are left out
  std::optional<std::string> next_page;
};
[[nodiscard]] srt::Result<Memory> ParseMemory(std::string_view body);
[[nodiscard]] srt::Result<MemoryPage> ParseMemoryPage(std::string_view body);

// GET /v1/skills/{id}/versions[/{v}].
struct SkillVersion {
  std::string skill_id;
  std::string version;  // validated id charset
  std::string name;     // as sent; a path component only after the caller validates it
  std::string directory;
  std::string description;
  std::string created_at;
};
struct SkillVersionPage {
  std::vector<SkillVersion> data;
  std::optional<std::string> next_page;
};
[[nodiscard]] srt::Result<SkillVersion> ParseSkillVersion(std::string_view body);
[[nodiscard]] srt::Result<SkillVersionPage> ParseSkillVersionPage(std::string_view body);

// The message of an API error body {"type":"error","error":{"type":T,"message":M}} as "T: M",
// or nullopt when the body is not one. Control characters are dropped; at most 512 bytes.
std::optional<std::string> ParseApiErrorMessage(std::string_view body);

// Results the worker posts (POST /v1/sessions/{id}/events).
enum class ResultKind {
  kToolResult,        // user.tool_result {tool_use_id}
  kCustomToolResult,  // user.custom_tool_result {custom_tool_use_id}
};
struct PostedToolResult {
  ResultKind kind = ResultKind::kToolResult;
  std::string tool_use_id;  // the agent.tool_use / agent.custom_tool_use event id
  bool is_error = false;
  std::string content_json;  // a JSON array of content blocks; TextContent() builds one
};
// [{"type":"text","text":<text>}]; invalid UTF-8 is replaced by U+FFFD.
std::string TextContent(std::string_view text);
// {"events":[...]}. Errors if a content_json is not a JSON array or a tool_use_id is empty.
[[nodiscard]] srt::Result<std::string> EncodeEventsBody(
    const std::vector<PostedToolResult>& results);

// The body of a memory create ({"path","content"}) or update ({"content"} with, when
// `expected_sha256` is set, a content_sha256 precondition). Invalid UTF-8 is replaced by U+FFFD
// (callers send only valid UTF-8: a memory is a text document).
std::string EncodeMemoryWrite(std::optional<std::string_view> path, std::string_view content,
                              std::optional<std::string_view> expected_sha256);

}  // namespace srt::poller
