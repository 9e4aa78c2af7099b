// SPDX-License-Identifier: Apache-2.0
// server/decision_log.h: one record per connection (or refused DNS query) the proxy decided on,
// allowed or denied, and its two renderings: a JSON line for --log-file/--log-fd, a readable
// line for --debug. Pure.
//
// JSON line (keys always present, in this order; strings JSON-escaped, non-ASCII as \u00XX of
// each byte so a line is always valid UTF-8 and never splits):
//   {"time":"2026-11-29T13:53:49.123Z","sandbox":"…","protocol":"connect","host":"example.com",
//    "port":443,"address":"93.184.216.34:443","decision":"allow","reason":"","entry":
//    "example.com","bytes_up":517,"bytes_down":4096,"duration_ms":12.5,"end":"closed","error":""}
// and, only when the exchange met masked credentials, a last key
//    "credentials":[{"name":"env GITHUB_TOKEN","injected":1,"kept":0,"masked":0}]
// protocol: "http" (absolute-form), "connect", "socks5", "capture" (transparent), "dns",
// "external" (relayed to the user's own proxy, httpProxyPort/socksProxyPort).
// address: what was dialed ("ip:port"), the parent proxy's address when chained ("via" names
// it), "" when nothing was dialed. decision: "allow" | "deny". reason: why it was denied (the
// 403 status phrase, "resolved to a loopback address", "missing proxy credentials", ...).
// end: how an allowed connection ended ("closed", "idle", "error", "dial-failed", "shutdown").
// protocol "https": one request on a TLS-terminated tunnel (network.tlsTerminate); its record
// has three more keys after "error": "method", "path" (without the query: it may carry
// secrets) and "status" (the origin's, or the proxy's own refusal: 405, 421, 502; 0 if none).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace srt::proxy {

enum class Protocol { kHttp, kConnect, kSocks5, kCapture, kDns, kExternal, kHttps };

[[nodiscard]] std::string_view ProtocolName(Protocol protocol);

struct ConnectionRecord {
  std::chrono::system_clock::time_point time;  // when the client's request was complete
  Protocol protocol = Protocol::kConnect;
  std::string host;  // canonical, or the raw text (as the client sent it) when malformed
  uint16_t port = 0;
  std::string address;  // dialed endpoint, or ""
  bool via_parent = false;
  bool allowed = false;
  std::string reason;         // denied: why
  std::string matched_entry;  // the settings entry that decided, if any
  uint64_t bytes_up = 0;      // client -> destination
  uint64_t bytes_down = 0;    // destination -> client
  std::chrono::microseconds duration{0};
  std::string end;    // allowed: how it ended
  std::string error;  // allowed but failed: the dial or relay error
  // Masked credentials met in the exchange, by name (never a value): sentinels swapped for real
  // values ("injected"), sentinels left alone ("kept": the host is not one of the credential's
  // injectHosts), real values swapped back in the response ("masked").
  struct CredentialUse {
    std::string name;
    uint64_t injected = 0;
    uint64_t kept = 0;
    uint64_t masked = 0;
  };
  std::vector<CredentialUse> credentials;
  // kHttps only: the request.
  std::string method;
  std::string path;  // without the query
  int status = 0;
};

// The reason of a SOCKS5 tunnel refused by network.refuseOpaqueTunnels; its text form is
// upstream's violation line, "deny socks-tunnel host:port (refuseOpaqueTunnels)".
inline constexpr std::string_view kRefuseOpaqueTunnelsReason = "refuseOpaqueTunnels";

// Where records go; called on the proxy's loop thread, must not block for long.
using RecordSink = std::function<void(const ConnectionRecord&)>;

// One JSON object and a trailing '\n'.
[[nodiscard]] std::string FormatRecordJson(const ConnectionRecord& record,
                                           std::string_view sandbox_id);
// "allow connect example.com:443 -> 93.184.216.34:443 (517 B up, 4.0 KiB down, 12 ms, closed)",
// "deny http evil.com:80 (host is not on the allow list)". No trailing newline.
[[nodiscard]] std::string FormatRecordText(const ConnectionRecord& record);
// "example.com:443", "[::1]:80"; a DNS query's name alone. Escaped as the text form.
[[nodiscard]] std::string FormatDestination(const ConnectionRecord& record);

// What srt logs of a connection came from the sandbox (a target, a name). Both forms escape
// every byte that a shell reading the line would act on ($ ` \ " ' ; & | < > ( ) !) or a terminal
// would (controls, bytes >= 0x7f), so that a logged $(...) can never run.
// A JSON string literal (quotes included), those bytes as \u00XX: parsers read the original.
[[nodiscard]] std::string JsonQuote(std::string_view text);
// The text form, those bytes as \xNN.
[[nodiscard]] std::string LogSafe(std::string_view text);

}  // namespace srt::proxy
