// SPDX-License-Identifier: Apache-2.0
#include "server/host_match.h"

#include <string>

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

}  // namespace

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
