// SPDX-License-Identifier: Apache-2.0
// server/decider_step.h: one request's turn with `srt proxy`'s decider, the part plain HTTP
// (http_session.cc) and terminated TLS (terminated_session.cc) share: the req frame made from a
// parsed request, a verdict read as a refusal or not, need_body's body read from the client's
// buffer (de-chunked, bounded by the verdict's max), and an allow's header edits. Internal to
// server/. Pure apart from the ChunkedDecoder it carries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/host.h"
#include "decider/protocol.h"
#include "http/chunked_decoder.h"
#include "http/head_parser.h"
#include "server/decider_link.h"

namespace srt::proxy {

// The req frame for `request` to `host`:`port` (for a terminated tunnel, the CONNECT's target
// and the ClientHello's server name): path and query as spelled, header names lower-case, Host
// as hostHeader, Proxy-Authorization and Proxy-Connection left out.
[[nodiscard]] decider::Request DeciderRequest(const http::Request& request, const Host& host,
                                              uint16_t port,
                                              std::optional<std::string> sni = std::nullopt);

// How the proxy answers a request the decider did not allow: status, X-Deny-Reason mark, reason.
struct DeciderRefusal {
  int status = 0;
  std::string_view mark;
  std::string reason;
};
// The refusal an outcome means (unavailable, bad request, deny); nullopt for allow and
// need_body.
[[nodiscard]] std::optional<DeciderRefusal> RefusalFor(const DeciderLink::Outcome& outcome);
// The outcome of a request whose body the decider has seen: a second need_body is the decider's
// error (the link refuses it too), so the request is answered as with no decider.
[[nodiscard]] DeciderLink::Outcome AfterBodyShown(DeciderLink::Outcome outcome);

// Whether an allow's edits drop the client's field `name`: removed, set anew, or (a credential)
// one of the credential fields.
[[nodiscard]] bool EditsDrop(const decider::Verdict& edits, std::string_view name);
// The fields an allow adds, as "name: value\r\n" lines: its setHeaders, then its credential
// (Bearer, or for class "github" to github.com, Basic x-access-token:<value> as git expects).
[[nodiscard]] std::string EditedFields(const decider::Verdict& edits, const Host& host);

// need_body: the request's body, read from the front of the client's buffer as it arrives.
// Content-Length: its first min(length, max) bytes. Chunked: de-chunked (http/chunked_decoder.h,
// the proxy's one reader of that grammar) until more than `max` bytes of content or the end came;
// the decider is shown at most `max`, `cut` when there was more. What was read is taken off the
// buffer and goes upstream first after an allow (ForwardPrefix), framed as the request was:
// chunked content re-framed in chunks of srt's own, its extensions and trailer fields dropped.
class DeciderBody {
 public:
  DeciderBody(const http::Framing& framing, uint32_t max);
  // Takes body bytes off the front of `in`. kDone: ready to show; kError: not a valid chunked
  // body (error() says why).
  ParseStatus Feed(std::string& in);
  // How many more bytes the buffer needs to hold for Feed to make progress (a read limit).
  [[nodiscard]] size_t want() const;
  [[nodiscard]] std::string_view shown() const;
  [[nodiscard]] bool cut() const;
  [[nodiscard]] const std::string& error() const { return error_; }
  // After an allow: what goes upstream right after the head, and (chunked) whether the body
  // ended within it. The rest of the body continues by the request's framing: Content-Length
  // with remaining() bytes left, chunked through TakeDecoder() and re-framed.
  [[nodiscard]] std::string ForwardPrefix() const;
  [[nodiscard]] bool ended() const { return ended_; }
  [[nodiscard]] uint64_t remaining() const { return length_left_; }
  [[nodiscard]] http::ChunkedDecoder TakeDecoder() { return std::move(decoder_); }

 private:
  http::Framing framing_;
  uint32_t max_;
  std::string held_;          // content read (chunked: decoded), at most max_ + one piece
  uint64_t length_left_ = 0;  // Content-Length: bytes not read yet
  http::ChunkedDecoder decoder_;
  bool ended_ = false;
  std::string error_;
};

}  // namespace srt::proxy
