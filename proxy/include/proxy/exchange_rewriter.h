// SPDX-License-Identifier: Apache-2.0
// proxy/exchange_rewriter.h: the seam where a request rewriter plugs into the proxy's terminated
// TLS tunnels (network.tlsTerminate): srt's proxy parses every request it decrypts, and before the
// request goes to the origin it asks a per-request ExchangeRewriter, made by the factory in
// ProxyConfig::rewriter (null by default: nothing is rewritten), to rewrite its head; the
// response head passes through the same rewriter on its way back. Made for credential
// injection (a sentinel the sandbox holds replaced by the real secret going out, and back
// coming in).
//
// Contract:
//   - Everything runs on the proxy's loop thread; a rewriter must not block.
//   - The factory is called once per request, after the proxy's own checks passed (the Host and
//     TLS server name name the CONNECT target, the method is not TRACE/TRACK); returning null
//     forwards that request unchanged.
//   - OnRequestHead may change `target` and `headers`. Host and the framing fields
//     (Content-Length, Transfer-Encoding) are the proxy's: the proxy puts them back as they were,
//     so a rewriter cannot aim a request at another host or desynchronise the body. An error
//     refuses the request: 403 with X-Proxy-Error: blocked-by-sandbox-runtime and the message
//     as the body, one decision-log record with the message as the reason.
//   - OnResponseHead may change `headers` (the framing fields excepted, as above) and `reason`.
//   - Bodies are forwarded verbatim, both ways. A body rewriter (substitutions that change a
//     body's length) needs the proxy to re-frame bodies as chunked; that is not there yet
//     (TODO(tls): OnRequestBody/OnResponseBody with re-framing).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "srt/result.h"

namespace srt::proxy {

struct HeaderField {
  std::string name;  // as the client sent it
  std::string value;
  bool operator==(const HeaderField&) const = default;
};

struct RequestHead {
  std::string method;
  std::string target;                // origin-form as it goes upstream: "/path?query"
  std::string host;                  // the CONNECT target, canonical (read only)
  uint16_t port = 443;               // (read only)
  std::vector<HeaderField> headers;  // in order, Host included
};

struct ResponseHead {
  int status = 0;  // (read only)
  std::string reason;
  std::vector<HeaderField> headers;
};

class ExchangeRewriter {
 public:
  virtual ~ExchangeRewriter() = default;
  [[nodiscard]] virtual Result<void> OnRequestHead(RequestHead& head) = 0;
  virtual void OnResponseHead(ResponseHead& head) = 0;
};

// Makes the rewriter for one request (its head as the client sent it), or null for none.
using RewriterFactory = std::function<std::unique_ptr<ExchangeRewriter>(const RequestHead&)>;

}  // namespace srt::proxy
