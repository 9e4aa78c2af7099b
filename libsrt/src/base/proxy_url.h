// SPDX-License-Identifier: Apache-2.0
// base/proxy_url.h: the grammar of a parent ("corporate") proxy URL, the one srt chains to:
// network.parentProxy.http / .https and srt's own HTTP_PROXY / HTTPS_PROXY. Parsed once, where
// the URL is read (settings validation, the network policy); the proxy gets the result. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/host.h"
#include "srt/result.h"

namespace srt {

struct ProxyUrl {
  Host host;  // canonical; a name is resolved (without the address guard) when dialing
  uint16_t port = 80;
  // The userinfo before '@', percent-decoded; no '@': no user and an empty password.
  std::optional<std::string> user;
  std::string password;
  // "http://host:port" without credentials, for messages and the decision log.
  std::string display;
  bool operator==(const ProxyUrl&) const = default;
};

// Parses "http://[user[:password]@]host[:port][/]" (port 80 when absent; a bare "host:port" is
// read as http://host:port, as curl and Go do). The error (kInvalidArgument) quotes the URL with
// its password replaced by "***" and says what is wrong: another scheme (https:// proxies need
// TLS to the proxy, which srt does not speak), a path, query or fragment, a bad host or port,
// bad percent-encoding. The caller wraps it with the key or variable it came from.
[[nodiscard]] Result<ProxyUrl> ParseProxyUrl(std::string_view url);

}  // namespace srt
