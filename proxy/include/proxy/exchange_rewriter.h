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
//   - Bodies are forwarded verbatim, both ways, unless RewritesBodies() says otherwise. Then the
//     proxy decodes each body (Content-Length or chunked; a response also until close), hands its
//     content to OnRequestBody / OnResponseBody in pieces as it streams, and sends what they
//     return re-framed as chunked (Content-Length and Transfer-Encoding replaced; an HTTP/1.0
//     client gets the response delimited by the end of the connection). `last` is true exactly
//     once, with the final piece (possibly empty). Substitutions may change lengths. A rewriter
//     that matches strings across pieces holds back what it needs (at most the longest string
//     it looks for) and returns it with a later piece; what it holds is its memory to bound. An
//     HTTP/1.0 request body is forwarded verbatim (it cannot be chunked), and an origin that
//     refuses chunked requests (411) refuses rewritten ones.
//   - A rewriter whose head depends on the body (a signature over its hash) asks for it to be
//     held: HoldsRequestBody() > 0. The proxy then reads the whole body first (decoded, through
//     OnRequestBody when RewritesBodies(); more than HoldsRequestBody() bytes refuse the request
//     403 with HeldBodyTooLarge()), sets the head's framing to Content-Length, calls
//     OnRequestBodyHeld with the head and the body as they go out, and sends both. A request
//     without a body gets OnRequestBodyHeld(head, "") at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
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
  // Whether the body calls below are made (asked once per request, after OnRequestHead).
  [[nodiscard]] virtual bool RewritesBodies() const { return false; }
  // Whether what the body calls return adds up to exactly what they were given, byte count for
  // byte count. Then a body with a Content-Length keeps it (the origin need not take chunked
  // requests, nor the client chunked responses); the proxy checks the total and fails the
  // exchange if it differs.
  [[nodiscard]] virtual bool KeepsBodyLengths() const { return false; }
  // Hold the request body before the head goes out, at most this many bytes (0: stream it).
  // Asked once per request, after OnRequestHead.
  [[nodiscard]] virtual uint64_t HoldsRequestBody() const { return 0; }
  // The held body is in: may change the head as OnRequestHead may; an error refuses the request.
  [[nodiscard]] virtual Result<void> OnRequestBodyHeld(RequestHead& head, std::string_view body) {
    (void)head;
    (void)body;
    return {};
  }
  // Why a held body over the limit is refused.
  [[nodiscard]] virtual std::string HeldBodyTooLarge() const {
    return "the request body is larger than the proxy holds";
  }
  // A piece of the decoded request / response body; returns the bytes to send in its place.
  virtual std::string OnRequestBody(std::string_view piece, bool last) {
    (void)last;
    return std::string(piece);
  }
  virtual std::string OnResponseBody(std::string_view piece, bool last) {
    (void)last;
    return std::string(piece);
  }
  // For the exchange's decision-log record, asked when it is written: the credentials the
  // rewriter met, by name with counts (never a value). Empty by default.
  struct CredentialCount {
    std::string name;
    uint64_t injected = 0;  // sentinels swapped for the real value going out
    uint64_t kept = 0;      // sentinels left alone (not one of the credential's hosts)
    uint64_t masked = 0;    // real values swapped back to the sentinel coming in
  };
  [[nodiscard]] virtual std::vector<CredentialCount> credential_counts() const { return {}; }
};

// Makes the rewriter for one request (its head as the client sent it), or null for none.
using RewriterFactory = std::function<std::unique_ptr<ExchangeRewriter>(const RequestHead&)>;

}  // namespace srt::proxy
