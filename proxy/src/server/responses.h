// SPDX-License-Identifier: Apache-2.0
// server/responses.h: every byte the proxy itself sends a client instead of a destination's,
// matching upstream srt where a client can see it (upstream-srt.md §4.9). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace srt::proxy {

// Body of a refusal by the allow/deny lists. Plain HTTP gets it with a trailing newline.
inline constexpr std::string_view kBlockedBody = "Connection blocked by network allowlist";

// A host refused by the lists. CONNECT: "HTTP/1.1 403 <reason>", the reason as status phrase;
// plain HTTP: "403 Forbidden". Both carry X-Proxy-Error: blocked-by-allowlist.
[[nodiscard]] std::string HttpBlocked(bool connect, std::string_view reason);
// An allowed name that resolved only to refused addresses ("resolved to a loopback address").
// X-Proxy-Error: blocked-by-sandbox-runtime; body "Connection to <host> blocked: <refusal>\n".
[[nodiscard]] std::string HttpResolvedBlocked(bool connect, std::string_view host,
                                              std::string_view refusal);
// A CONNECT past network.tlsTerminate.maxTunnels: 503 with X-Proxy-Error: too-many-tunnels and
// the body "too many TLS-terminated tunnels at once" (upstream's bytes), then close.
[[nodiscard]] std::string HttpTooManyTunnels();
// The proxy's own answer to a request inside a terminated tunnel (421 misdirected, 405 TRACE,
// 502 origin failure, 403 rewriter refusal, 400): "<status> <standard phrase>", text/plain,
// X-Proxy-Error: blocked-by-sandbox-runtime, body "<reason>\n" (upstream's respondDenied);
// `close` adds Connection: close.
[[nodiscard]] std::string HttpRefusedInTunnel(int status, std::string_view reason, bool close);
// A CONNECT refused by network.refuseOpaqueTunnels (upstream's bytes): 403 Forbidden,
// text/plain, X-Proxy-Error: blocked-by-sandbox-runtime, body "this proxy does not tunnel
// CONNECTs it cannot inspect".
[[nodiscard]] std::string HttpOpaqueTunnelRefused();
// `srt proxy`'s refusals: "<status> <standard phrase>", text/plain, X-Deny-Reason: <mark>
// (host_not_allowed, decider, decider_unavailable, bad_request, misdirected, ...), body
// "<body>\n"; `close` adds Connection: close.
[[nodiscard]] std::string HttpDenied(int status, std::string_view mark, std::string_view body,
                                     bool close);
// The body of a plain-HTTP allow that sets headers while plaintext header sets are off.
inline constexpr std::string_view kPlaintextHeaderSetBody =
    "the allow decision sets headers, and headers are not set on plain-HTTP requests unless "
    "plaintext header sets are enabled; nothing was forwarded";
// 407 with Proxy-Authenticate: Basic realm="srt" and an empty body.
[[nodiscard]] std::string HttpProxyAuthRequired();
// A failed dial: CONNECT gets exactly "HTTP/1.1 502 Bad Gateway\r\n\r\n", plain HTTP a
// text/plain "Bad Gateway" body.
[[nodiscard]] std::string HttpBadGateway(bool connect);
// A request the proxy cannot serve (a parser error's status, or 400 for a bad target).
// CONNECT 400 is exactly "HTTP/1.1 400 Bad Request\r\n\r\n".
[[nodiscard]] std::string HttpError(int status, bool connect);

// SSH identification string and SSH_MSG_DISCONNECT (RFC 4253 §4.2, §11.1; reason 1, host not
// allowed to connect) in an unencrypted binary packet: what a SOCKS5 client without
// credentials asking for port 22 gets, so ssh prints why instead of a bare protocol error.
[[nodiscard]] std::string SshPolicyRefusal(std::string_view description);

}  // namespace srt::proxy
