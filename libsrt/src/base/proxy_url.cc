// SPDX-License-Identifier: Apache-2.0
#include "base/proxy_url.h"

#include "base/ascii.h"
#include "base/strings.h"

namespace srt {
namespace {

std::string Redacted(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t at = url.find('@', start);
  if (at == std::string_view::npos) return std::string(url);
  const size_t colon = url.find(':', start);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon + 1)) + "***" + std::string(url.substr(at));
}

std::optional<std::string> PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size() || !ascii::IsHexDigit(s[i + 1]) || !ascii::IsHexDigit(s[i + 2])) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>(ascii::HexValue(static_cast<uint8_t>(s[i + 1])) * 16 +
                                    ascii::HexValue(static_cast<uint8_t>(s[i + 2]))));
    i += 2;
  }
  return out;
}

}  // namespace

Result<ProxyUrl> ParseProxyUrl(std::string_view url) {
  auto fail = [&](std::string_view why) {
    return MakeError(Errc::kInvalidArgument,
                     strings::QuoteForMessage(Redacted(url), 200) + " " + std::string(why));
  };
  std::string_view rest = url;
  if (const size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
    if (!ascii::EqualsIgnoreCase(rest.substr(0, scheme), "http")) {
      return fail("is not an http:// proxy URL (srt talks plain HTTP to a parent proxy)");
    }
    rest.remove_prefix(scheme + 3);
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find_first_of("/?#") != std::string_view::npos) {
    return fail("has a path, query or fragment; a proxy URL is http://host:port");
  }
  ProxyUrl out;
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    rest.remove_prefix(at + 1);
    const size_t colon = userinfo.find(':');
    std::optional<std::string> user = PercentDecode(userinfo.substr(0, colon));
    std::optional<std::string> password =
        PercentDecode(colon == std::string_view::npos ? "" : userinfo.substr(colon + 1));
    if (!user || !password) return fail("has bad percent-encoding in its user or password");
    out.user = std::move(*user);
    out.password = std::move(*password);
  }
  std::string_view host = rest;
  std::string_view port_text;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return fail("has an unclosed '[' in its host");
    host = rest.substr(0, close + 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return fail("has bytes after its IPv6 host");
      port_text = rest.substr(close + 2);
      if (port_text.empty()) return fail("has an empty port");
    }
  } else if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port_text = rest.substr(colon + 1);
    if (port_text.empty()) return fail("has an empty port");
  }
  if (!port_text.empty()) {
    const std::optional<uint16_t> port =
        ascii::ParsePort(port_text, ascii::LeadingZeros::kAccepted);
    if (!port) return fail("has a bad port");
    out.port = *port;
  }
  Result<Host> canonical = CanonicalizeHost(host);
  if (!canonical) return fail("has a bad host");
  out.host = std::move(*canonical);
  out.display = "http://" + FormatAuthority(out.host, out.port);
  return out;
}

}  // namespace srt
