// SPDX-License-Identifier: Apache-2.0
// proxy_limits.h: every bound the proxy puts on what a client (or an upstream server) controls, in
// one place (house style §2.6). Each parser takes these as defaults; tests hit every one of them.
//
// Why not `limits.h`: the proxy's sources are included from proxy/src, and a `limits.h` on an -I
// path shadows the C library's <limits.h> for every header that includes it (<climits> does).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace srt::proxy {

// --- HTTP/1.1 (RFC 9112) -------------------------------------------------------------------------

// The whole request or response head: start line, field lines and the empty line that ends it.
// Answered with 431 (RFC 6585 §5) for requests, 502 for responses.
inline constexpr size_t kMaxHttpHeadBytes = size_t{64} * 1024;
// Field lines in one head (431).
inline constexpr size_t kMaxHttpHeaderCount = 100;
// One field name (431).
inline constexpr size_t kMaxHttpHeaderNameBytes = 256;
// The request line without its CRLF (414 URI Too Long; RFC 9112 §3 recommends at least 8000
// octets). Also bounds a response's status line.
inline constexpr size_t kMaxHttpRequestLineBytes = size_t{8} * 1024;
// A chunk-size line of a chunked body (RFC 9112 §7.1): size, extensions, CRLF. Extensions are
// forwarded, never interpreted, so they only need to fit.
inline constexpr size_t kMaxHttpChunkLineBytes = size_t{4} * 1024;
// Empty lines a client may send before a request line (RFC 9112 §2.2 says to ignore "at least
// one"; some clients send a CRLF after a POST body). More are a 400.
inline constexpr size_t kMaxHttpLeadingEmptyLines = 4;
// The trailer section of a chunked body (RFC 9112 §7.1.2), its final CRLF included.
inline constexpr size_t kMaxHttpTrailerBytes = size_t{16} * 1024;

// --- SOCKS5 (RFC 1928, RFC 1929) -----------------------------------------------------------------

// RFC 1929 §2: ULEN and PLEN are one octet, so the protocol itself caps both at 255.
inline constexpr size_t kMaxSocksUsernameBytes = 255;
inline constexpr size_t kMaxSocksPasswordBytes = 255;

// --- Names -------------------------------------------------------------------------------------

// RFC 1035 §2.3.4: a name is at most 255 octets in wire form (length octets and the root label
// included), which is at most 253 characters as dotted text without the trailing dot. Applied to
// DNS questions and names sent to the resolver. Hosts a client names (HTTP, SOCKS5, SNI) are
// judged by CanonicalizeHost instead (filter/host.h: at most 255 characters, upstream's rule).
inline constexpr size_t kMaxDnsNameWireBytes = 255;
inline constexpr size_t kMaxDnsNameTextBytes = 253;
// RFC 1035 §2.3.4: labels are 63 octets or less.
inline constexpr size_t kMaxDnsLabelBytes = 63;

// --- DNS stub (RFC 1035, RFC 6891) ---------------------------------------------------------------

// Address records in one answer; the rest are dropped.
inline constexpr size_t kMaxDnsAnswers = 32;
// A response over UDP without EDNS (RFC 1035 §4.2.1).
inline constexpr size_t kDnsUdpMessageBytes = 512;
// The UDP payload size the stub advertises and honours at most with EDNS (DNS flag day 2020:
// 1232 avoids IP fragmentation on any path).
inline constexpr size_t kDnsEdnsUdpMessageBytes = 1232;
// A message over TCP: the two-octet length prefix (RFC 1035 §4.2.2).
inline constexpr size_t kDnsTcpMessageBytes = 65535;

// --- TLS ---------------------------------------------------------------------------------------

// The bytes of a connection's start that the SNI extractor looks at: the ClientHello with its
// record headers. One full TLS record is 5 + 2^14 bytes (RFC 8446 §5.1); a hello larger than
// this is reported as malformed, never buffered without bound.
inline constexpr size_t kMaxTlsClientHelloBytes = size_t{16} * 1024;
// The longest server_name (host_name) accepted: the longest host CanonicalizeHost accepts
// (filter/host.h kMaxHostLength). RFC 6066 allows 2^16 - 1; a longer one is a malformed hello.
inline constexpr size_t kMaxSniHostBytes = 255;

// --- Connections (used by the sessions) ----------------------------------------------------------

// Client connections open at once, over all listeners; further ones are accepted and closed.
// Ten thousand idle tunnels cost about 27 MiB of the proxy's memory and no CPU; the cap a
// running proxy uses is also bounded by its descriptors (MaxConnectionsForNofile).
inline constexpr size_t kMaxConcurrentConnections = 16384;
// Descriptors kept for the rest of srt's process (its pipes, the sandbox's, the resolver's, the
// log) when the connection cap is derived from RLIMIT_NOFILE.
inline constexpr size_t kReservedFds = 256;
// A connection holds its client and upstream sockets; a busy tunnel borrows splice pipes from a
// pool, and a refused pipe falls back to copying, so two descriptors per connection suffice.
inline constexpr size_t kFdsPerConnection = 2;
// The connection cap for a process whose soft RLIMIT_NOFILE is `nofile`.
constexpr size_t MaxConnectionsForNofile(uint64_t nofile) {
  if (nofile <= kReservedFds + kFdsPerConnection) return 1;
  const uint64_t fit = (nofile - kReservedFds) / kFdsPerConnection;
  return fit < kMaxConcurrentConnections ? static_cast<size_t>(fit) : kMaxConcurrentConnections;
}
// Time a client has to send a complete request head, SOCKS5 handshake or DNS-over-TCP query.
inline constexpr std::chrono::seconds kHandshakeTimeout{30};
// A relayed connection with no traffic in either direction for this long is closed.
inline constexpr std::chrono::seconds kIdleTimeout{600};

}  // namespace srt::proxy
