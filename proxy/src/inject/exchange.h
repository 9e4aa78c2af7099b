// SPDX-License-Identifier: Apache-2.0
// inject/exchange: credential injection for one HTTP/1 exchange, the same on every proxy path
// that sees requests in clear (plain-HTTP absolute-form today, TLS-terminated tunnels next).
// Pure: bytes in, bytes out; the session owns the sockets and the framing parsers.
//
// Usage, per request (after the policy allowed `host`):
//   inject::Exchange x(*injector, host);                  // injector: ProxyOptions::injector
//   value = x.RequestHeaderValue(value);                  // each header value (not Host)
//   x.RequestBody(piece, /*data=*/nullptr, last, out);    // Content-Length / until-close body
//   x.RequestBody(piece, &chunk_data_spans, last, out);   // chunked: ChunkedDecoder's spans
//   x.ResponseHead(head_bytes, out);
//   x.ResponseBody(piece, spans_or_null, last, out);
//   if (x.overflowed()) fail the exchange;                // a chunked body held > 1 MiB
//   record.credentials = x.Totals();                      // names and counts, never values
// Bodies keep their length (only same-length pairs are swapped there), so Content-Length and
// chunk sizes are forwarded as they came; header values may change length.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/host.h"
#include "inject/injector.h"

namespace srt::proxy::inject {

// One credential's counts in an exchange.
struct Totals {
  std::string name;
  uint64_t injected = 0;  // sentinels swapped for the real value (request)
  uint64_t kept = 0;      // sentinels left alone: another host, or lengths differ in a body
  uint64_t masked = 0;    // real values swapped back to the sentinel (response)
};

using DataSpans = std::vector<std::pair<size_t, size_t>>;

class Exchange {
 public:
  Exchange(const Injector& injector, const Host& host);

  [[nodiscard]] std::string RequestHeaderValue(std::string_view value);
  // A piece of the request body. `data`: the chunk-data spans of a chunked body (ChunkedDecoder
  // reports them), or null for a body that is all payload. `last`: the body ends with it.
  void RequestBody(std::string_view piece, const DataSpans* data, bool last, std::string& out);
  // A response head (status line and fields), whole.
  void ResponseHead(std::string_view head, std::string& out);
  void ResponseBody(std::string_view piece, const DataSpans* data, bool last, std::string& out);
  // A chunked body held more than kMaxFramedHoldBytes back: end the exchange (passing the bytes
  // on could hand over a secret).
  [[nodiscard]] bool overflowed() const;
  // The credentials met so far, in the injector's order.
  [[nodiscard]] std::vector<Totals> totals() const;

 private:
  static void Body(Rewriter& plain, FramedRewriter& framed, std::string_view piece,
                   const DataSpans* data, bool last, std::string& out);

  std::unique_ptr<Rewriter> request_head_;
  std::unique_ptr<Rewriter> request_body_;
  FramedRewriter request_chunked_;
  std::unique_ptr<Rewriter> response_head_;
  std::unique_ptr<Rewriter> response_body_;
  FramedRewriter response_chunked_;
};

}  // namespace srt::proxy::inject
