// SPDX-License-Identifier: Apache-2.0
// server/parent_proxy.h: the upstream ("corporate") proxies srt chains to: network.parentProxy,
// or srt's own HTTP_PROXY / HTTPS_PROXY / NO_PROXY when the settings name none (the network
// policy parsed the URLs). Pure.
//
// Routes: plain-HTTP requests go to the `http` proxy in absolute form; everything tunnelled
// (CONNECT, SOCKS5, captured connections) goes to the `https` proxy, falling back to `http`, as
// a CONNECT. Destinations NO_PROXY covers (loopback always) are dialed directly. The resolved-
// address guard does not apply on the parent route: the parent resolves the name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/host.h"
#include "base/proxy_url.h"
#include "filter/no_proxy.h"

namespace srt::proxy {

struct ParentProxy {
  Host host;
  uint16_t port = 0;
  // "Basic <base64(user:password)>" from the URL's userinfo, or "".
  std::string authorization;
  // "http://host:port" without credentials, for messages and the decision log.
  std::string display;
};

// The parent a parsed URL (base/proxy_url.h) names.
[[nodiscard]] ParentProxy ParentProxyFor(const ProxyUrl& url);

struct ParentProxies {
  std::optional<ParentProxy> http;
  std::optional<ParentProxy> https;
  NoProxy no_proxy;

  // The parent for a destination, or nullptr to dial it directly.
  [[nodiscard]] const ParentProxy* For(bool tunnel, const Host& host, uint16_t port) const;
};

}  // namespace srt::proxy
