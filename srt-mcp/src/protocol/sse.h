// SPDX-License-Identifier: Apache-2.0
// srt-mcp/protocol/sse: Server-Sent Events (WHATWG HTML §9.2 "event stream interpretation")
// inside HTTP/1.1 chunked framing (RFC 9112 §7.1). Pure.
#pragma once

#include <string>
#include <string_view>

namespace srt::mcp {

// "id: <id>\ndata: <line>\n...\n\n": `data` split at CR, LF and CRLF into data lines, so a
// message can never end the event early or inject a field. `id` must be visible ASCII.
[[nodiscard]] std::string SseEvent(std::string_view id, std::string_view data);
// One HTTP chunk: hex size CRLF payload CRLF. An empty payload gives "" (not the last chunk).
[[nodiscard]] std::string Chunk(std::string_view payload);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace srt::mcp
