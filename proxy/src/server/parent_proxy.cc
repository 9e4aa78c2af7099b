// SPDX-License-Identifier: Apache-2.0
#include "server/parent_proxy.h"

#include "http/base64.h"

namespace srt::proxy {

ParentProxy ParentProxyFor(const ProxyUrl& url) {
  ParentProxy out{url.host, url.port, "", url.display};
  if (url.user) out.authorization = "Basic " + http::EncodeBase64(*url.user + ":" + url.password);
  return out;
}

const ParentProxy* ParentProxies::For(bool tunnel, const Host& host, uint16_t port) const {
  const ParentProxy* parent = nullptr;
  if (tunnel && https) {
    parent = &*https;
  } else if (http) {
    parent = &*http;
  }
  if (parent == nullptr || no_proxy.Bypass(host, port)) return nullptr;
  return parent;
}

}  // namespace srt::proxy
