// SPDX-License-Identifier: Apache-2.0
// socks5/socks5_parser.h: the client's side of a SOCKS5 handshake (RFC 1928) with
// username/password authentication (RFC 1929), and the server's replies. Pure and incremental.
//
// Usage protocol (socks5_session): each Parse* takes everything buffered since the previous
// message was consumed and returns kNeedMore (a valid prefix; read more), kError (refuse; for a
// request, send Reply(`reply`) first) or kDone with `consumed` bytes used. Bytes after `consumed`
// belong to the next message (or, after a successful CONNECT reply, to the tunnel).
//   greeting -> MethodSelection(...) -> [ParseUserPass -> UserPassStatus(...)] -> ParseRequest ->
//   Reply(...).
// The parsers never read outside their span and allocate at most 255 bytes per field.
//
// Decisions: NMETHODS = 0 parses (the session answers kMethodNoAcceptable); ULEN/PLEN = 0 parse
// (an empty name or password is then just wrong); a non-zero RSV is ignored; any CMD parses so the
// session can answer kReplyCommandNotSupported; an unknown ATYP is an error carrying
// kReplyAddressTypeNotSupported. A domain name (ATYP 3) is returned as sent, also when it spells
// an IP literal ("127.1", "::1"): the session runs CanonicalizeHost (filter/host.h) on it and
// answers a host it rejects with kReplyNotAllowed, as upstream srt does. The parser refuses only
// a name that cannot be a text host at all, with the same kReplyNotAllowed: an empty one, or one
// with a byte outside visible ASCII (NUL, controls, space, DEL, non-ASCII; there is no IDNA
// here, and such bytes must not reach a log line).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/address.h"
#include "proxy_limits.h"
#include "wire/parse_status.h"

namespace srt::proxy::socks5 {

inline constexpr uint8_t kVersion = 0x05;
// RFC 1929 §2: the version of the username/password subnegotiation.
inline constexpr uint8_t kUserPassVersion = 0x01;

// RFC 1928 §3: METHOD values.
inline constexpr uint8_t kMethodNoAuth = 0x00;
inline constexpr uint8_t kMethodGssapi = 0x01;
inline constexpr uint8_t kMethodUserPass = 0x02;
inline constexpr uint8_t kMethodNoAcceptable = 0xff;

// RFC 1928 §4: CMD values.
inline constexpr uint8_t kCommandConnect = 0x01;
inline constexpr uint8_t kCommandBind = 0x02;
inline constexpr uint8_t kCommandUdpAssociate = 0x03;

// RFC 1928 §4/§5: ATYP values.
inline constexpr uint8_t kAddressIpv4 = 0x01;
inline constexpr uint8_t kAddressDomain = 0x03;
inline constexpr uint8_t kAddressIpv6 = 0x04;

// RFC 1928 §6: REP values.
inline constexpr uint8_t kReplySucceeded = 0x00;
inline constexpr uint8_t kReplyGeneralFailure = 0x01;
inline constexpr uint8_t kReplyNotAllowed = 0x02;  // "connection not allowed by ruleset"
inline constexpr uint8_t kReplyNetworkUnreachable = 0x03;
inline constexpr uint8_t kReplyHostUnreachable = 0x04;
inline constexpr uint8_t kReplyConnectionRefused = 0x05;
inline constexpr uint8_t kReplyTtlExpired = 0x06;
inline constexpr uint8_t kReplyCommandNotSupported = 0x07;
inline constexpr uint8_t kReplyAddressTypeNotSupported = 0x08;

// RFC 1928 §3: VER NMETHODS METHODS.
struct Greeting {
  std::vector<uint8_t> methods;  // as sent, 0..255 of them
  bool Offers(uint8_t method) const;
  bool operator==(const Greeting&) const = default;
};
struct GreetingResult {
  ParseStatus status = ParseStatus::kNeedMore;
  size_t consumed = 0;
  std::string error;
  Greeting greeting;
};
[[nodiscard]] GreetingResult ParseGreeting(std::span<const uint8_t> in);

// RFC 1929 §2: VER ULEN UNAME PLEN PASSWD.
struct UserPass {
  std::string username;  // raw bytes, 0..kMaxSocksUsernameBytes
  std::string password;  // raw bytes, 0..kMaxSocksPasswordBytes
  bool operator==(const UserPass&) const = default;
};
struct UserPassResult {
  ParseStatus status = ParseStatus::kNeedMore;
  size_t consumed = 0;
  std::string error;
  UserPass credentials;
};
[[nodiscard]] UserPassResult ParseUserPass(std::span<const uint8_t> in);

// RFC 1928 §4: VER CMD RSV ATYP DST.ADDR DST.PORT.
struct Request {
  uint8_t command = 0;  // any value; see kCommand*
  uint8_t address_type = 0;
  // The destination as text. ATYP 1/4: `address` formatted (FormatIpAddress). ATYP 3:
  // the name exactly as sent (case kept, visible ASCII only, 1..255 bytes), not validated: pass
  // it to CanonicalizeHost.
  std::string host;
  std::optional<IpAddress> address;  // ATYP 1/4 only; empty for a name, even "10.0.0.1"
  uint16_t port = 0;
  bool operator==(const Request&) const = default;
};
struct RequestResult {
  ParseStatus status = ParseStatus::kNeedMore;
  size_t consumed = 0;
  uint8_t reply = kReplySucceeded;  // kError: the REP to send before closing
  std::string error;
  Request request;
};
[[nodiscard]] RequestResult ParseRequest(std::span<const uint8_t> in);

// The server's answers: VER METHOD; VER STATUS (RFC 1929: 0 = success); and
// VER REP RSV ATYP BND.ADDR BND.PORT, with 0.0.0.0:0 when there is no bound address to report.
[[nodiscard]] std::array<uint8_t, 2> MethodSelection(uint8_t method);
[[nodiscard]] std::array<uint8_t, 2> UserPassStatus(bool ok);
[[nodiscard]] std::vector<uint8_t> Reply(uint8_t rep, const std::optional<IpAddress>& bound = {},
                                         uint16_t bound_port = 0);

// For the listener's protocol mux, from a connection's first byte. SOCKS4/4a (VN = 4) is refused:
// it has no authentication, so it could not be held to the proxy's credentials.
[[nodiscard]] inline bool LooksLikeSocks5(uint8_t first_byte) { return first_byte == kVersion; }
[[nodiscard]] inline bool LooksLikeSocks4(uint8_t first_byte) { return first_byte == 0x04; }

}  // namespace srt::proxy::socks5
