// SPDX-License-Identifier: Apache-2.0
// srt-mcp/protocol/checks: the decisions made on every request before it reaches a session or an
// upstream: Host (DNS rebinding), Origin, the bearer token, the MCP protocol version. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace srt::mcp {

// Which Host header values the daemon answers to.
struct HostPolicy {
  std::string listen_host;   // as configured ("127.0.0.1", "::1", "localhost")
  uint16_t listen_port = 0;  // the bound port
  bool loopback = true;      // also localhost, 127.0.0.1 and [::1] at that port
  std::vector<std::string> domains;
};
struct HostMatch {
  bool allowed = false;
  std::string route;  // NAME when the Host was NAME.<domain>, else ""
};
// RFC 9110 §7.2: Host is host[:port]; names compare case-insensitively. A missing Host (HTTP/1.0)
// is refused: a browser always sends one, so its absence proves nothing about rebinding.
[[nodiscard]] HostMatch CheckHost(std::optional<std::string_view> host, const HostPolicy& policy);

// MCP transports "Security Warning": an Origin that is present and not listed is 403. Origins
// compare as RFC 6454 §6.1 serialisations: scheme and host case-insensitively, the port exactly.
[[nodiscard]] bool OriginAllowed(std::string_view origin, const std::vector<std::string>& allowed);

// `Authorization: Bearer <token>` (RFC 6750 §2.1) against each token, in time independent of
// where they differ. Returns the index of the matching token, or nullopt.
[[nodiscard]] std::optional<size_t> MatchBearer(std::optional<std::string_view> authorization,
                                                const std::vector<std::string>& tokens);

// The MCP protocol versions srt-mcp serves over Streamable HTTP.
[[nodiscard]] bool ProtocolVersionSupported(std::string_view version);
inline constexpr std::string_view kSupportedProtocolVersions =
    "2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28";
// 2026-07-28 and later: no sessions, no GET stream, request metadata mirrored in headers.
inline constexpr std::string_view kSessionlessProtocolVersion = "2026-07-28";

// MCP 2026-07-28 "Server Validation": the mirrored headers must be present and agree with the
// body: MCP-Protocol-Version with params._meta's io.modelcontextprotocol/protocolVersion,
// Mcp-Method with the method, and for tools/call, prompts/get and resources/read, Mcp-Name with
// params.name or params.uri (its "=?base64?...?=" form decoded first). Returns why not, or "".
// (Mcp-Param-* headers need the tool's inputSchema and are left to the server.)
struct MirroredHeaders {
  std::optional<std::string_view> protocol_version;
  std::optional<std::string_view> method;
  std::optional<std::string_view> name;
};
[[nodiscard]] std::string CheckMirroredHeaders(const MirroredHeaders& headers,
                                               std::string_view body_method,
                                               const std::optional<std::string>& body_version,
                                               const std::optional<std::string>& body_name,
                                               const std::optional<std::string>& body_uri);

// Whether an Accept header lists `type` (or type/*, */*). RFC 9110 §12.5.1, q=0 excluded.
[[nodiscard]] bool Accepts(std::optional<std::string_view> accept, std::string_view type);

}  // namespace srt::mcp
