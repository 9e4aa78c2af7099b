// SPDX-License-Identifier: Apache-2.0
// server/host_match.h: whether a request's Host header names the destination its tunnel was
// opened for (upstream srt's requireHostMatch; RFC 9110 §7.2, §7.4 421 Misdirected Request).
// Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/host.h"

namespace srt::proxy {

// True if `value` (a Host field value: host, [v6] or host:port) names `target` (canonical) on
// `port`: the same host once canonicalised (case, trailing dot, IPv4 spellings), and the same
// port, which may be left out only when `port` is `default_port`. Anything else, an empty port
// or a value of another shape included, is false.
[[nodiscard]] bool HostHeaderNames(std::string_view value, const Host& target, uint16_t port,
                                   uint16_t default_port);

// network.requireHostMatch on an opaque tunnel (CONNECT, SOCKS5): what its client's first bytes
// say. A TLS ClientHello whose SNI names another host than the target, or an HTTP/1.x request
// whose Host (one, and present in HTTP/1.1) does not name it, is refused; so is a ClientHello or
// head the client leaves unfinished past kMaxTunnelPeekBytes or at EOF, and malformed TLS. Other
// bytes (ssh, a database protocol) pass: there is no host name in them to check. Only the first
// ClientHello or request head is read (later requests on a plain-HTTP tunnel are not checked).
enum class PeekVerdict { kNeedMore, kPass, kRefuse };
struct TunnelPeek {
  PeekVerdict verdict = PeekVerdict::kNeedMore;
  std::string reason;  // kRefuse: why, for the decision log
};
inline constexpr size_t kMaxTunnelPeekBytes = size_t{64} * 1024;
// Pure. `eof`: the client sent nothing more (and will not).
[[nodiscard]] TunnelPeek PeekTunnel(std::string_view first_bytes, const Host& target, uint16_t port,
                                    bool eof);

}  // namespace srt::proxy
