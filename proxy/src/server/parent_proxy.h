// server/parent_proxy.h: the upstream ("corporate") proxies srt chains to: network.parentProxy,
// or srt's own HTTP_PROXY / HTTPS_PROXY / NO_PROXY when the settings name none. Pure.
//
// Routes: plain-HTTP requests go to the `http` proxy in absolute form; everything tunnelled
// (CONNECT, SOCKS5, captured connections) goes to the `https` proxy, falling back to `http`, as
// a CONNECT. Destinations NO_PROXY covers (loopback always) are dialed directly. The resolved-
// address guard does not apply on the parent route: the parent resolves the name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "filter/host.h"
#include "filter/no_proxy.h"
#include "srt/result.h"

namespace srt::proxy {

struct ParentProxy {
  Host host;  // canonical; a name is resolved (without the guard) when dialing
  uint16_t port = 0;
  // "Basic <base64(user:password)>" from the URL's userinfo (percent-decoded), or "".
  std::string authorization;
  // "http://host:port" without credentials, for messages and the decision log.
  std::string display;
};

// Parses "http://[user[:password]@]host[:port][/]" (port 80 when absent; a bare "host:port" is
// read as http://host:port, as curl and Go do). Errors (kInvalidArgument) name `what` (e.g.
// "network.parentProxy.http") and quote the URL with its password replaced by "***":
// another scheme (https:// proxies need TLS to the proxy, which srt does not speak), a path,
// query or fragment, a bad host or port, bad percent-encoding.
[[nodiscard]] Result<ParentProxy> ParseParentProxyUrl(std::string_view url, std::string_view what);

struct ParentProxies {
  std::optional<ParentProxy> http;
  std::optional<ParentProxy> https;
  NoProxy no_proxy;

  // The parent for a destination, or nullptr to dial it directly.
  [[nodiscard]] const ParentProxy* For(bool tunnel, const Host& host, uint16_t port) const;
};

}  // namespace srt::proxy
