// SPDX-License-Identifier: Apache-2.0
// tls/client_hello.h: the server name (SNI) a TLS client asks for, read from the first bytes of a
// connection without terminating TLS. Pure; reads only the span it is given; allocates at most
// kMaxTlsClientHelloBytes.
//
// Usage: call ExtractSni(buffered) with everything received so far; on kNeedMore read more and
// call again with the grown buffer. The bytes are only looked at, never consumed: the caller
// forwards them unchanged.
//
// What is read (RFC 8446 §5.1, §4.1.2; RFC 5246 §6.2, §7.4.1.2): TLSPlaintext records of type
// handshake(22) with legacy_record_version 0x0300..0x0304, the handshake header (client_hello(1),
// uint24 length), and the ClientHello's legacy_version, random, legacy_session_id (<= 32 bytes),
// cipher_suites (even, >= 2 bytes), legacy_compression_methods (>= 1 byte) and extensions, whose
// length must cover the rest of the hello exactly. Extension 0 is server_name (RFC 6066 §3): a
// non-empty ServerNameList with at most one host_name(0) entry; entries of other types are skipped.
//
// Decisions: a ClientHello split across several records is reassembled (RFC 8446 §5.1 allows it,
// and post-quantum key shares make large hellos real); records of any other type before the hello
// is complete are malformed. The records holding the hello, headers included, must fit in
// kMaxTlsClientHelloBytes (16 KiB), otherwise kMalformed. Zero-length handshake records, a
// repeated extension (RFC 8446 §4.2) and bytes after the extensions are malformed. A hello
// without an extensions block (pre-TLS 1.0 style) is kNoSni. The host_name is checked for
// structure only: 1..kMaxSniHostBytes (255) bytes of visible ASCII (no NUL, controls, space or
// non-ASCII: RFC 6066 §3 names are ASCII, and the name ends up in log lines); anything else is
// kMalformed. It is returned as sent (case kept, a trailing dot kept, an IP literal, which RFC
// 6066 forbids but some clients send, kept): the capture session runs CanonicalizeHost
// (filter/host.h) on it, which judges and normalises it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace srt::proxy::tls {

enum class SniStatus {
  kFound,      // a ClientHello with a server_name: `host`
  kNoSni,      // a well-formed ClientHello without one
  kNotTls,     // the first bytes are not a TLS handshake record (decided from up to 3 bytes)
  kNeedMore,   // a valid prefix of a ClientHello
  kMalformed,  // a TLS handshake record, but not a well-formed ClientHello within the limits
};

struct SniResult {
  SniStatus status = SniStatus::kNeedMore;
  std::string host;     // kFound: the host_name as sent (see above), not validated as a host
  size_t consumed = 0;  // kFound, kNoSni: bytes of the records that held the ClientHello
  std::string error;    // kNotTls, kMalformed: why, for debug logs
};

[[nodiscard]] SniResult ExtractSni(std::span<const uint8_t> first_bytes);

}  // namespace srt::proxy::tls
