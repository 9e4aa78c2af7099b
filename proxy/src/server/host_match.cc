// SPDX-License-Identifier: Apache-2.0
#include "server/host_match.h"

#include <string>

#include "http/head_parser.h"
#include "tls/client_hello.h"
#include "wire/ascii.h"

namespace srt::proxy {
namespace {

// Splits host and port text (port "" when absent); false for another shape.
bool Split(std::string_view value, std::string_view& host, std::string_view& port) {
  if (value.starts_with('[')) {
    const size_t end = value.find(']');
    if (end == std::string_view::npos) return false;
    host = value.substr(1, end - 1);
    const std::string_view rest = value.substr(end + 1);
    if (rest.empty()) {
      port = "";
      return true;
    }
    if (!rest.starts_with(':')) return false;
    port = rest.substr(1);
    return !port.empty();
  }
  const size_t colon = value.find(':');
  if (colon == std::string_view::npos) {
    host = value;
    port = "";
    return true;
  }
  if (value.find(':', colon + 1) != std::string_view::npos) return false;  // unbracketed v6
  host = value.substr(0, colon);
  port = value.substr(colon + 1);
  return !port.empty();
}

constexpr uint8_t kTlsHandshakeRecord = 0x16;

// Whether `bytes` is, or may still become, an HTTP/1.x request line: a method token, a space,
// a target without spaces or controls, " HTTP/1." and a digit. kPass: it cannot be one.
PeekVerdict LooksLikeHttp(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size() && ascii::IsTchar(bytes[i])) ++i;
  if (i == bytes.size()) return PeekVerdict::kNeedMore;
  if (i == 0 || bytes[i] != ' ') return PeekVerdict::kPass;
  ++i;
  const size_t target = i;
  while (i < bytes.size() && static_cast<unsigned char>(bytes[i]) > 0x20 &&
         static_cast<unsigned char>(bytes[i]) < 0x7f) {
    ++i;
  }
  if (i == bytes.size()) return PeekVerdict::kNeedMore;
  if (i == target || bytes[i] != ' ') return PeekVerdict::kPass;
  constexpr std::string_view kVersion = "HTTP/1.";
  const std::string_view rest = bytes.substr(i + 1);
  const size_t n = std::min(rest.size(), kVersion.size());
  if (rest.substr(0, n) != kVersion.substr(0, n)) return PeekVerdict::kPass;
  return PeekVerdict::kRefuse;  // "is HTTP" (the caller reads it so), or a prefix of it
}

TunnelPeek Refuse(std::string reason) { return {PeekVerdict::kRefuse, std::move(reason)}; }

TunnelPeek PeekTls(std::string_view bytes, const Host& target, bool eof) {
  tls::SniResult hello =
      tls::ExtractSni({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  switch (hello.status) {
    case tls::SniStatus::kNeedMore:
      if (eof || bytes.size() >= kMaxTunnelPeekBytes) {
        return Refuse("TLS ClientHello larger than the limit or cut short");
      }
      return {};
    case tls::SniStatus::kNotTls:
    case tls::SniStatus::kMalformed:
      return Refuse("malformed TLS ClientHello: " + hello.error);
    case tls::SniStatus::kNoSni:
      return {PeekVerdict::kPass, ""};
    case tls::SniStatus::kFound:
      break;
  }
  Result<Host> asked = CanonicalizeHost(hello.host);
  if (!asked || !(*asked == target)) {
    return Refuse("TLS server name does not match the request target (requireHostMatch)");
  }
  return {PeekVerdict::kPass, ""};
}

TunnelPeek PeekHttp(std::string_view bytes, const Host& target, uint16_t port, bool eof) {
  http::Limits limits;
  limits.max_head_bytes = kMaxTunnelPeekBytes;
  http::RequestHeadResult head = http::ParseRequestHead(bytes, limits);
  if (head.status == ParseStatus::kNeedMore) {
    if (eof || bytes.size() >= kMaxTunnelPeekBytes) {
      return Refuse("HTTP request head larger than the limit or cut short");
    }
    return {};
  }
  if (head.status == ParseStatus::kError) return Refuse("bad HTTP request: " + head.error);
  const http::Request& request = head.request;
  std::vector<std::string_view> hosts;
  for (const http::Header& h : request.headers) {
    if (ascii::EqualsIgnoreCase(h.name, "Host")) hosts.push_back(h.value);
  }
  if (hosts.size() > 1) return Refuse("more than one Host header (requireHostMatch)");
  if (hosts.empty()) {
    if (request.version == http::Version::kHttp10) return {PeekVerdict::kPass, ""};
    return Refuse("HTTP/1.1 request without a Host header (requireHostMatch)");
  }
  // Through a tunnel the port is fixed by the CONNECT: a Host without one names it.
  if (!HostHeaderNames(hosts.front(), target, port, port)) {
    return Refuse("Host header does not match the request target (requireHostMatch)");
  }
  return {PeekVerdict::kPass, ""};
}

}  // namespace

TunnelPeek PeekTunnel(std::string_view first_bytes, const Host& target, uint16_t port, bool eof) {
  if (first_bytes.empty()) {
    return eof ? TunnelPeek{PeekVerdict::kPass, ""} : TunnelPeek{};
  }
  if (static_cast<uint8_t>(first_bytes[0]) == kTlsHandshakeRecord) {
    return PeekTls(first_bytes, target, eof);
  }
  switch (LooksLikeHttp(first_bytes.substr(0, std::min(first_bytes.size(), kMaxTunnelPeekBytes)))) {
    case PeekVerdict::kPass:
      return {PeekVerdict::kPass, ""};
    case PeekVerdict::kNeedMore:
      if (eof || first_bytes.size() >= kMaxTunnelPeekBytes) return {PeekVerdict::kPass, ""};
      return {};
    case PeekVerdict::kRefuse:
      break;
  }
  return PeekHttp(first_bytes, target, port, eof);
}

bool HostHeaderNames(std::string_view value, const Host& target, uint16_t port,
                     uint16_t default_port) {
  std::string_view host;
  std::string_view port_text;
  if (value.empty() || !Split(value, host, port_text)) return false;
  Result<Host> named = CanonicalizeHost(host);
  if (!named || !(*named == target)) return false;
  // Brackets hold an IPv6 literal and nothing else (RFC 3986 §3.2.2).
  if (value.starts_with('[') != (named->kind == Host::Kind::kIpv6)) return false;
  if (port_text.empty()) return port == default_port;
  // Digits only, no sign or leading '+'; leading zeros as the number they spell.
  if (port_text.size() > 5) return false;
  uint32_t n = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint32_t>(c - '0');
  }
  return n == port;
}

}  // namespace srt::proxy
