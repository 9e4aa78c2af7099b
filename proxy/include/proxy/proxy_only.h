// SPDX-License-Identifier: Apache-2.0
// proxy/proxy_only.h: `srt proxy`, the proxy alone (upstream srt 0.0.83's proxy-only mode): no
// sandbox, every plain-HTTP request decided by an external decider over inherited descriptors
// (decider protocol v1, docs/srt-proxy.md), the host lists from the decider's hello.
//
// Proxy-only defaults, which nothing turns off: the Host of a request must name its target
// (421), CONNECT tunnels and SOCKS5 are refused (403 opaque_tunnel, REP 1), and names that
// resolve to private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) are refused on
// top of the usual denied addresses. The proxy's own refusals say why in X-Deny-Reason.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::proxy {

struct ProxyOnlyOptions {
  UniqueFd listener;         // a listening TCP socket (inherited, or bound by the caller)
  std::string listening_on;  // for "serving ...": "fd N" or "127.0.0.1:PORT"
  UniqueFd decider_in;       // decider -> proxy
  UniqueFd decider_out;      // proxy -> decider (a dup of decider_in for one socket)
  UniqueFd lifeline;         // optional: its EOF stops the proxy
  UniqueFd stop_signals;     // optional: a signalfd (SIGTERM, SIGINT) that stops the proxy
  std::vector<std::string> strip_response_headers;
  bool plaintext_header_set = false;
  std::chrono::milliseconds verdict_timeout{5000};
  // Lines for stderr ("serving ...", decisions with debug); never null.
  std::function<void(const std::string&)> log;
  bool debug = false;
};

// Runs the proxy on the calling thread until the lifeline ends, the decider link dies, or a
// stop signal arrives. Returns why it stopped ("lifeline closed", "decider: <why>", "SIGTERM");
// an error if it could not start ("start failed: ..." is the caller's to print).
[[nodiscard]] Result<std::string> RunProxyOnly(ProxyOnlyOptions options);

}  // namespace srt::proxy
