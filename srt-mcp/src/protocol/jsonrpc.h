// SPDX-License-Identifier: Apache-2.0
// srt-mcp/protocol/jsonrpc: one JSON-RPC 2.0 message (a POST body, a line of a server's stdout)
// classified, and the few messages srt-mcp makes itself. Pure; the text is hostile and bounded by
// the caller (body and line limits); nesting is bounded here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "srt/result.h"

namespace srt::mcp {

enum class MessageKind { kRequest, kNotification, kResponse };

struct Message {
  MessageKind kind = MessageKind::kNotification;
  std::string id;      // the id as compact JSON text ("1", "\"a\""); "" for notifications
  std::string method;  // requests and notifications
  // params._meta.progressToken as compact JSON text, or "".
  std::string progress_token;
  // notifications/cancelled: params.requestId as compact JSON text, or "".
  std::string cancelled_id;
  // For MCP 2026-07-28's header checks: params._meta["io.modelcontextprotocol/protocolVersion"],
  // params.name and params.uri when they are strings (else unset).
  std::optional<std::string> meta_protocol_version;
  std::optional<std::string> name;
  std::optional<std::string> uri;
};

// Classifies one message. Errors (kProtocol) say why: not JSON, nested deeper than 64, a batch
// (removed in 2025-06-18), no "jsonrpc": "2.0", an id that is not a string or number, neither
// a method nor a result/error.
[[nodiscard]] Result<Message> ClassifyMessage(std::string_view text);

// {"jsonrpc":"2.0","id":<id_json>,"error":{"code":code,"message":message}}; `id_json` is
// compact JSON text ("null" for an error that answers no request).
[[nodiscard]] std::string ErrorResponse(std::string_view id_json, int code,
                                        std::string_view message);
// `message` (a JSON-RPC object, already classified) with its "id" replaced by `id_json`.
// Returns "" if `message` is not a JSON object.
[[nodiscard]] std::string ReplaceId(std::string_view message, std::string_view id_json);

// notifications/cancelled for request `id_json`, with `reason`.
[[nodiscard]] std::string CancelledNotification(std::string_view id_json, std::string_view reason);

// JSON-RPC error codes srt-mcp uses (JSON-RPC 2.0 §5.1; -32000..-32099 are the server's).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kInternalError = -32603;
inline constexpr int kServerGone = -32000;      // the session's server process ended
inline constexpr int kServerBusy = -32001;      // a limit of the session was reached
inline constexpr int kHeaderMismatch = -32020;  // MCP 2026-07-28: headers and body disagree

}  // namespace srt::mcp
