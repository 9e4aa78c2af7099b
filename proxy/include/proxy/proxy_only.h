// SPDX-License-Identifier: Apache-2.0
// proxy/proxy_only.h: `srt proxy`, the proxy alone (upstream srt 0.0.83's proxy-only mode): no
// sandbox, every plain-HTTP request decided by an external decider over inherited descriptors
// (decider protocol v1, docs/srt-proxy.md), the host lists from the decider's hello.
//
// Proxy-only defaults, which nothing turns off: the Host of a request must name its target
// (421), SOCKS5 is refused (REP 1), CONNECT tunnels are refused (403 opaque_tunnel) unless a CA
// was given (`ca_pem`): then every allowed CONNECT is TLS-terminated and each request inside it
// is decided like a plain-HTTP one (a tunnel that carries no TLS is closed), and names that
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
  // `--ca-fd`: the TLS-termination CA's private key and certificate, PEM (wiped once read), and
  // what names it in errors ("--ca-fd 5"). Empty: no termination.
  std::string ca_pem;
  std::string ca_source;
  // PEM files whose certificates are trusted for origins besides the system's roots (as
  // upstream's Node runtime reads NODE_EXTRA_CA_CERTS); unreadable ones are skipped (debug).
  std::vector<std::string> extra_ca_cert_paths;
  std::chrono::milliseconds verdict_timeout{5000};
  // SRT_PROXY_REPORT_RSS_MS: "srt-proxy rss <bytes>" (the resident set size) through `log` this
  // often, from the start on; 0: never.
  std::chrono::milliseconds report_rss_every{0};
  // Lines for stderr ("serving ...", decisions with debug); never null.
  std::function<void(const std::string&)> log;
  bool debug = false;
};

// Runs the proxy on the calling thread until the lifeline ends, the decider link dies, or a
// stop signal arrives. Returns why it stopped ("lifeline closed", "decider: <why>", "SIGTERM");
// an error if it could not start ("start failed: ..." is the caller's to print), kInvalidArgument
// for a CA that cannot be used (before anything is sent to the decider).
[[nodiscard]] Result<std::string> RunProxyOnly(ProxyOnlyOptions options);

}  // namespace srt::proxy
