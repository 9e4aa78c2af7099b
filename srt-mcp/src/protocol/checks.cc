// SPDX-License-Identifier: Apache-2.0
// srt-mcp/protocol/checks.cc: Host, Origin, bearer token, protocol version, Accept.
#include "protocol/checks.h"

#include <algorithm>

#include "http/base64.h"

namespace srt::mcp {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "host[:port]" ("[v6]:port" too); the port is "" when absent.
std::pair<std::string, std::string> SplitHostPort(std::string_view hp) {
  if (hp.starts_with('[')) {
    size_t close = hp.find(']');
    if (close == std::string_view::npos) return {"", ""};
    std::string host(hp.substr(0, close + 1));
    std::string_view rest = hp.substr(close + 1);
    if (rest.empty()) return {host, ""};
    if (!rest.starts_with(':')) return {"", ""};
    return {host, std::string(rest.substr(1))};
  }
  size_t colon = hp.rfind(':');
  if (colon == std::string_view::npos) return {std::string(hp), ""};
  return {std::string(hp.substr(0, colon)), std::string(hp.substr(colon + 1))};
}

}  // namespace

HostMatch CheckHost(std::optional<std::string_view> host, const HostPolicy& policy) {
  if (!host) return {};
  auto [name, port] = SplitHostPort(Trim(*host));
  name = Lower(name);
  if (name.empty()) return {};
  if (!port.empty() && port != std::to_string(policy.listen_port)) return {};
  std::string listen = Lower(policy.listen_host);
  if (listen.find(':') != std::string::npos) listen = "[" + listen + "]";
  if (name == listen) return {true, ""};
  if (policy.loopback && (name == "localhost" || name == "127.0.0.1" || name == "[::1]")) {
    return {true, ""};
  }
  for (const std::string& d : policy.domains) {
    if (name == d) return {true, ""};
    if (name.size() > d.size() + 1 && name.ends_with(d) &&
        name[name.size() - d.size() - 1] == '.') {
      std::string label = name.substr(0, name.size() - d.size() - 1);
      if (label.find('.') == std::string::npos) return {true, label};
    }
  }
  return {};
}

bool OriginAllowed(std::string_view origin, const std::vector<std::string>& allowed) {
  origin = Trim(origin);
  auto norm = [](std::string_view o) {
    size_t scheme_end = o.find("://");
    if (scheme_end == std::string_view::npos) return std::string(o);
    std::string out = Lower(o.substr(0, scheme_end + 3));
    auto [host, port] = SplitHostPort(o.substr(scheme_end + 3));
    out += Lower(host);
    const bool default_port = (out.starts_with("https://") && port == "443") ||
                              (out.starts_with("http://") && port == "80");
    if (!port.empty() && !default_port) out += ":" + port;
    return out;
  };
  const std::string o = norm(origin);
  return std::any_of(allowed.begin(), allowed.end(),
                     [&](const std::string& a) { return norm(a) == o; });
}

std::optional<size_t> MatchBearer(std::optional<std::string_view> authorization,
                                  const std::vector<std::string>& tokens) {
  if (!authorization) return std::nullopt;
  std::string_view v = Trim(*authorization);
  if (v.size() < 7 || Lower(v.substr(0, 7)) != "bearer ") return std::nullopt;
  std::string_view presented = Trim(v.substr(7));
  std::optional<size_t> match;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    // Every byte of the longer of the two is looked at, whatever the contents: the time
    // depends on the lengths only (a token's length is not the secret).
    const size_t n = std::max(t.size(), presented.size());
    unsigned char diff = t.size() == presented.size() ? 0 : 1;
    for (size_t k = 0; k < n; ++k) {
      const unsigned char a = k < t.size() ? static_cast<unsigned char>(t[k]) : 0;
      const unsigned char b = k < presented.size() ? static_cast<unsigned char>(presented[k]) : 0;
      diff = static_cast<unsigned char>(diff | (a ^ b));
    }
    if (diff == 0 && !t.empty() && !match) match = i;
  }
  return match;
}

bool ProtocolVersionSupported(std::string_view version) {
  return version == "2025-03-26" || version == "2025-06-18" || version == "2025-11-25" ||
         version == kSessionlessProtocolVersion;
}

std::string CheckMirroredHeaders(const MirroredHeaders& headers, std::string_view body_method,
                                 const std::optional<std::string>& body_version,
                                 const std::optional<std::string>& body_name,
                                 const std::optional<std::string>& body_uri) {
  auto quote = [](std::string_view v) { return "'" + std::string(v.substr(0, 64)) + "'"; };
  if (!headers.protocol_version) return "MCP-Protocol-Version is missing";
  if (!body_version || *body_version != *headers.protocol_version) {
    return "MCP-Protocol-Version " + quote(*headers.protocol_version) +
           " does not match the body's io.modelcontextprotocol/protocolVersion";
  }
  if (!headers.method) return "Mcp-Method is missing";
  if (*headers.method != body_method) {
    return "Mcp-Method header value " + quote(*headers.method) + " does not match body value " +
           quote(body_method);
  }
  const std::optional<std::string>* source = nullptr;
  if (body_method == "tools/call" || body_method == "prompts/get") source = &body_name;
  if (body_method == "resources/read") source = &body_uri;
  if (!source) return "";
  if (!headers.name) return "Mcp-Name is missing";
  std::string name(*headers.name);
  // The sentinel form (case-sensitive markers): base64 of the UTF-8 value.
  constexpr std::string_view kOpen = "=?base64?";
  constexpr std::string_view kClose = "?=";
  if (name.size() >= kOpen.size() + kClose.size() && name.starts_with(kOpen) &&
      name.ends_with(kClose)) {
    std::optional<std::string> decoded = proxy::http::DecodeBase64(
        std::string_view(name).substr(kOpen.size(), name.size() - kOpen.size() - kClose.size()));
    if (!decoded) return "Mcp-Name is not valid base64";
    name = std::move(*decoded);
  }
  if (!*source || **source != name) {
    return "Mcp-Name header value " + quote(name) + " does not match the body";
  }
  return "";
}

bool Accepts(std::optional<std::string_view> accept, std::string_view type) {
  if (!accept) return false;
  std::string_view rest = *accept;
  const std::string wanted = Lower(type);
  const std::string wildcard = wanted.substr(0, wanted.find('/')) + "/*";
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    size_t semi = item.find(';');
    std::string media = Lower(Trim(item.substr(0, semi)));
    std::string params = semi == std::string_view::npos ? "" : Lower(item.substr(semi));
    params.erase(std::remove(params.begin(), params.end(), ' '), params.end());
    bool q_zero = params.find(";q=0") != std::string::npos &&
                  params.find_first_of("123456789", params.find(";q=0")) == std::string::npos;
    if (q_zero) continue;
    if (media == wanted || media == wildcard || media == "*/*") return true;
  }
  return false;
}

}  // namespace srt::mcp
