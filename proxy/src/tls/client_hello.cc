// SPDX-License-Identifier: Apache-2.0
// tls/client_hello.cc: SNI from a TLS ClientHello (RFC 8446, RFC 6066).
#include "tls/client_hello.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proxy_limits.h"
#include "wire/ascii.h"
#include "wire/byte_reader.h"

namespace srt::proxy::tls {
namespace {

constexpr uint8_t kContentTypeHandshake = 22;
constexpr uint8_t kHandshakeClientHello = 1;
constexpr uint16_t kExtensionServerName = 0;
constexpr uint8_t kNameTypeHostName = 0;
constexpr size_t kRecordHeaderBytes = 5;
constexpr size_t kMaxRecordPayload = 16384;  // 2^14, RFC 8446 §5.1

SniResult Make(SniStatus status, std::string error = {}) {
  SniResult r;
  r.status = status;
  r.error = std::move(error);
  return r;
}

// Parses a complete ClientHello body (after the handshake header).
SniResult ParseClientHello(std::span<const uint8_t> body) {
  auto malformed = [](std::string why) { return Make(SniStatus::kMalformed, std::move(why)); };
  ByteReader r(body);
  std::optional<uint16_t> legacy_version = r.ReadU16();
  if (!legacy_version || (*legacy_version >> 8) != 0x03) {
    return malformed("ClientHello: bad legacy_version");
  }
  if (!r.Skip(32)) {
    return malformed("ClientHello: truncated random");
  }
  std::optional<uint8_t> session_id_len = r.ReadU8();
  if (!session_id_len || *session_id_len > 32 || !r.Skip(*session_id_len)) {
    return malformed("ClientHello: bad legacy_session_id");
  }
  std::optional<uint16_t> suites_len = r.ReadU16();
  if (!suites_len || *suites_len < 2 || *suites_len % 2 != 0 || !r.Skip(*suites_len)) {
    return malformed("ClientHello: bad cipher_suites");
  }
  std::optional<uint8_t> compression_len = r.ReadU8();
  if (!compression_len || *compression_len < 1 || !r.Skip(*compression_len)) {
    return malformed("ClientHello: bad legacy_compression_methods");
  }
  if (r.empty()) {
    return Make(SniStatus::kNoSni);  // no extensions at all
  }
  std::optional<uint16_t> extensions_len = r.ReadU16();
  if (!extensions_len || *extensions_len != r.remaining()) {
    return malformed("ClientHello: extensions do not fill the rest of the hello");
  }
  std::vector<uint16_t> seen;
  std::optional<std::string> host;
  while (!r.empty()) {
    std::optional<uint16_t> type = r.ReadU16();
    std::optional<uint16_t> len = type ? r.ReadU16() : std::nullopt;
    std::optional<ByteReader> data = len ? r.ReadSub(*len) : std::nullopt;
    if (!data) {
      return malformed("ClientHello: truncated extension");
    }
    seen.push_back(*type);
    if (*type != kExtensionServerName) {
      continue;
    }
    // RFC 6066 §3: ServerNameList server_name_list<1..2^16-1>; ServerName = NameType name_type,
    // then for host_name(0) HostName<1..2^16-1>. Other name types also start with a 16-bit
    // length ("MUST begin with a 16-bit length field"), so they can be skipped.
    std::optional<uint16_t> list_len = data->ReadU16();
    if (!list_len || *list_len == 0 || *list_len != data->remaining()) {
      return malformed("server_name: bad server_name_list length");
    }
    while (!data->empty()) {
      std::optional<uint8_t> name_type = data->ReadU8();
      std::optional<uint16_t> name_len = name_type ? data->ReadU16() : std::nullopt;
      std::optional<std::string_view> name = name_len ? data->ReadString(*name_len) : std::nullopt;
      if (!name) {
        return malformed("server_name: truncated entry");
      }
      if (*name_type != kNameTypeHostName) {
        continue;
      }
      if (host) {
        // RFC 6066 §3: no more than one name of the same name_type.
        return malformed("server_name: more than one host_name");
      }
      // Structure only: whether the name is a valid host is CanonicalizeHost's call.
      if (name->empty()) {
        return malformed("server_name: empty host_name");
      }
      if (name->size() > kMaxSniHostBytes) {
        return malformed("server_name: host_name longer than " + std::to_string(kMaxSniHostBytes) +
                         " bytes");
      }
      if (!ascii::IsVisible(*name)) {
        return malformed("server_name: host_name " + ascii::QuoteForMessage(*name) +
                         " has a byte outside visible ASCII");
      }
      host = std::string(*name);
    }
  }
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) {
    // RFC 8446 §4.2: no more than one extension of the same type.
    return malformed("ClientHello: an extension appears twice");
  }
  if (!host) {
    return Make(SniStatus::kNoSni);
  }
  SniResult out = Make(SniStatus::kFound);
  out.host = std::move(*host);
  return out;
}

}  // namespace

SniResult ExtractSni(std::span<const uint8_t> first_bytes) {
  ByteReader r(first_bytes);
  std::vector<uint8_t> handshake;     // the ClientHello reassembled from record fragments
  std::optional<size_t> message_len;  // handshake header + body, once known
  while (true) {
    // TLSPlaintext: ContentType type; ProtocolVersion legacy_record_version; uint16 length.
    // The first record decides kNotTls from as few bytes as possible.
    const bool first = r.offset() == 0;
    std::optional<uint8_t> type = r.ReadU8();
    if (!type) {
      return Make(SniStatus::kNeedMore);
    }
    if (*type != kContentTypeHandshake) {
      return first ? Make(SniStatus::kNotTls, "not a TLS handshake record")
                   : Make(SniStatus::kMalformed, "a non-handshake record inside the ClientHello");
    }
    std::optional<uint8_t> major = r.ReadU8();
    if (!major) {
      return Make(SniStatus::kNeedMore);
    }
    std::optional<uint8_t> minor = *major == 0x03 ? r.ReadU8() : std::nullopt;
    if (*major != 0x03 || (minor && *minor > 0x04)) {
      return first ? Make(SniStatus::kNotTls, "not a TLS record version")
                   : Make(SniStatus::kMalformed, "bad record version inside the ClientHello");
    }
    if (!minor) {
      return Make(SniStatus::kNeedMore);
    }
    std::optional<uint16_t> length = r.ReadU16();
    if (!length) {
      return Make(SniStatus::kNeedMore);
    }
    if (*length == 0 || *length > kMaxRecordPayload) {
      // RFC 8446 §5.1: no zero-length handshake fragments; at most 2^14 bytes.
      return Make(SniStatus::kMalformed, "bad record length");
    }
    if (r.offset() + *length > kMaxTlsClientHelloBytes) {
      return Make(SniStatus::kMalformed, "ClientHello larger than 16 KiB");
    }
    std::optional<std::span<const uint8_t>> fragment = r.ReadBytes(*length);
    if (!fragment) {
      return Make(SniStatus::kNeedMore);
    }
    handshake.insert(handshake.end(), fragment->begin(), fragment->end());
    if (!message_len && handshake.size() >= 4) {
      // Handshake: HandshakeType msg_type; uint24 length.
      ByteReader header(handshake);
      if (header.ReadU8() != kHandshakeClientHello) {
        return Make(SniStatus::kMalformed, "first handshake message is not a ClientHello");
      }
      message_len = 4 + static_cast<size_t>(*header.ReadU24());
      if (*message_len > kMaxTlsClientHelloBytes) {
        return Make(SniStatus::kMalformed, "ClientHello larger than 16 KiB");
      }
    }
    if (message_len && handshake.size() >= *message_len) {
      break;
    }
    // The rest of the hello needs at least one more record: refuse now if that cannot fit.
    if (message_len && r.offset() + kRecordHeaderBytes + (*message_len - handshake.size()) >
                           kMaxTlsClientHelloBytes) {
      return Make(SniStatus::kMalformed, "ClientHello larger than 16 KiB");
    }
  }
  SniResult out =
      ParseClientHello(std::span<const uint8_t>(handshake).subspan(4, *message_len - 4));
  if (out.status == SniStatus::kFound || out.status == SniStatus::kNoSni) {
    out.consumed = r.offset();
  }
  return out;
}

}  // namespace srt::proxy::tls
