// SPDX-License-Identifier: Apache-2.0
// http/head_parser.h: HTTP/1.x request and response heads for the proxy (RFC 9110, RFC 9112).
// Pure and incremental: no I/O, never reads outside the span it is given, allocation bounded by
// http::Limits.
//
// Usage protocol (the sessions in http/):
//   1. Append what the socket delivered to the connection's buffer; call ParseRequestHead(buffer,
//      limits, resume) with the whole buffer, where `resume` is 0 on the first call and the last
//      result's `resume` afterwards (it only saves work: 0 is always correct).
//   2. kNeedMore: read more, go to 1. kError: answer `http_error` (FormatResponse) and close; the
//      message in `error` is for debug logs and quotes at most 64 sanitised bytes of the input.
//   3. kDone: the head is buffer[0, consumed); the body (BodyFraming) or pipelined bytes follow.
//   For a response from upstream, the same with ParseResponseHead; any kError means 502.
//
// Strict where a disagreement between srt and another HTTP implementation could matter (framing,
// line endings and field syntax of requests, RFC 9112 §11.2), tolerant only where the RFC allows it
// and nothing downstream depends on it. Decisions:
//   - Requests need CRLF line endings; a bare LF (the RFC 9112 §2.2 "MAY recognize a single LF") or
//     a bare CR anywhere in the head is 400. Responses may end lines with a bare LF (forwarded
//     verbatim to the client, which reads them too); a bare CR is an error in both.
//   - Up to kMaxHttpLeadingEmptyLines CRLFs before a request line are skipped (RFC 9112 §2.2).
//   - obs-fold (a field line starting with SP/HTAB, RFC 9112 §5.2) and whitespace between a field
//     name and its colon (RFC 9112 §5.1) are errors; so is whitespace before the first field line.
//   - Request line: exactly `method SP target SP version` (single spaces, RFC 9112 §3).
//     HTTP/1.0 and HTTP/1.1; HTTP/1.2..1.9 are read as 1.1 (RFC 9112 §2.3); any other version 505.
//   - Content-Length (RFC 9110 §8.6, RFC 9112 §6.3): repeated or listed values must all be equal;
//     Content-Length together with Transfer-Encoding is an error (request smuggling), in requests
//     (400) and responses (502: we forward bytes verbatim, so we cannot drop Content-Length).
//   - Transfer-Encoding in requests: "chunked" must be the final coding and appear once (400);
//     codings other than chunked/gzip/deflate/compress (and x-gzip/x-compress) are 501
//     (RFC 9112 §6.1). Transfer-Encoding in an HTTP/1.0 message is an error (RFC 9112 §6.1).
//   - More than one Host field line is 400 (RFC 9112 §3.2). A missing Host is not an error: for
//     absolute-form and CONNECT the proxy ignores Host anyway (RFC 9112 §3.2.2).
//   - Hosts are checked for URI syntax only (RFC 3986 §3.2.2): a non-empty reg-name (letters,
//     digits, unreserved, sub-delims, well-formed %XX) or a bracketed IPv6 literal (hex digits,
//     ':' and '.', at least one ':'; no IPvFuture, no zone id). Anything else, userinfo
//     (`user@host`, RFC 9110 §4.2.4), an empty host and a bad port are 400. Whether the host
//     names something ("127.1", "2130706433", "a..b", "exa%6dple.com", "*.x") is not the
//     parser's call: the session runs CanonicalizeHost (filter/host.h) on `Request::host` and
//     answers a host it rejects with 403 "malformed host", as upstream srt does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy_limits.h"
#include "wire/parse_status.h"

namespace srt::proxy::http {

// Bounds on one head; the defaults come from proxy_limits.h.
struct Limits {
  size_t max_head_bytes = kMaxHttpHeadBytes;
  size_t max_headers = kMaxHttpHeaderCount;
  size_t max_header_name_bytes = kMaxHttpHeaderNameBytes;
  size_t max_request_line_bytes = kMaxHttpRequestLineBytes;
};

enum class Version { kHttp10, kHttp11 };

// What went wrong, for tests and for sessions that answer differently per cause. The HTTP status
// the proxy should answer is in the result's `http_error`.
enum class HeadError {
  kNone,
  kBadStartLine,        // 400: not `method SP target SP version` / `version SP code SP reason`
  kBadMethod,           // 400: the method is not a token
  kBadTarget,           // 400: a request-target of the wrong form or with invalid characters
  kBadAuthority,        // 400: host not URI syntax or empty, port invalid, userinfo present
  kHttpsAbsoluteForm,   // 400: `GET https://...`: TLS to the origin goes through CONNECT
  kUnsupportedScheme,   // 400: absolute-form with a scheme other than http
  kUnsupportedVersion,  // 505 (requests): a well-formed version other than HTTP/1.x
  kBadStatus,           // (responses) a status code outside 100..599
  kBareLineEnding,      // 400: a bare CR, or (requests) a bare LF
  kBadHeader,           // 400: an invalid field line, name or value
  kObsFold,             // 400: a field line continued onto the next (obs-fold)
  kBadFraming,          // 400: Content-Length/Transfer-Encoding invalid or in conflict
  kUnknownCoding,       // 501: a transfer coding srt does not know
  kStartLineTooLong,    // 414 (requests)
  kHeadTooLarge,        // 431 (requests)
  kTooManyHeaders,      // 431
  kHeaderNameTooLong,   // 431
};

// Which form the request-target has (RFC 9112 §3.2).
enum class TargetForm { kOrigin, kAbsolute, kAuthority, kAsterisk };

struct Header {
  std::string name;   // as sent
  std::string value;  // leading and trailing whitespace removed
  bool operator==(const Header&) const = default;
};

// The user and password of `Proxy-Authorization: Basic base64(user:pass)` (RFC 7617).
struct BasicCredentials {
  std::string user;
  std::string password;
  bool operator==(const BasicCredentials&) const = default;
};

struct Request {
  std::string method;  // as sent; methods are case-sensitive (RFC 9110 §9.1)
  std::string target;  // the request-target exactly as sent
  Version version = Version::kHttp11;
  std::vector<Header> headers;  // in order, duplicates kept

  // The destination, from the target (never from the Host header, RFC 9112 §3.2.2).
  TargetForm form = TargetForm::kOrigin;
  // kAbsolute/kAuthority: the host exactly as the authority spells it (case kept, no
  // normalisation), an IPv6 literal without its brackets ("[::1]:443" -> "::1"); visible ASCII
  // only. Else empty. Not validated beyond URI syntax: pass it to CanonicalizeHost.
  std::string host;
  uint16_t port = 0;  // kAbsolute (default 80) and kAuthority (mandatory); else 0
  // What to send upstream as origin-form: kAbsolute: "/path?query" ("/" when the path is empty,
  // RFC 9112 §3.2.1); kOrigin: the target; kAuthority, kAsterisk: empty.
  std::string path;

  // Validated framing fields (RFC 9112 §6): the Content-Length value if present, and whether the
  // message is chunked (Transfer-Encoding present; for requests it always ends in chunked).
  std::optional<uint64_t> content_length;
  bool chunked = false;

  // The first field line named `name` (case-insensitive), or nullptr. Points into `headers`.
  const Header* Find(std::string_view name) const;
  // True if the client wants the connection closed after this exchange: a `close` connection
  // option, or HTTP/1.0 without `keep-alive` (RFC 9112 §9.3).
  bool ConnectionClose() const;
  // The credentials of exactly one `Proxy-Authorization: Basic <base64>` field; nullopt when the
  // field is missing, repeated, of another scheme, or not strictly valid base64 of `user:pass`
  // without control characters. The session answers 407 in every nullopt case.
  std::optional<BasicCredentials> ProxyAuthorization() const;

  bool operator==(const Request&) const = default;
};

struct Response {
  Version version = Version::kHttp11;
  int status = 0;      // 100..599
  std::string reason;  // may be empty
  std::vector<Header> headers;
  std::optional<uint64_t> content_length;
  bool transfer_encoding = false;  // a Transfer-Encoding field is present
  bool chunked = false;            // ... and its final coding is chunked

  const Header* Find(std::string_view name) const;
  // True if the server closes the connection after this response (`close`, or HTTP/1.0 without
  // `keep-alive`).
  bool ConnectionClose() const;

  bool operator==(const Response&) const = default;
};

// Fields shared by both results.
struct HeadResultBase {
  ParseStatus status = ParseStatus::kNeedMore;
  size_t consumed = 0;  // kDone: the head's length, its empty line (and skipped CRLFs) included
  size_t resume = 0;    // kNeedMore: pass to the next call on the same, grown buffer
  int http_error = 0;   // kError: the status to answer: 400, 414, 431, 501, 505; 502 for responses
  HeadError error_code = HeadError::kNone;
  std::string error;  // kError: what was wrong, quoting the offending bytes (sanitised)
};
struct RequestHeadResult : HeadResultBase {
  Request request;  // kDone
};
struct ResponseHeadResult : HeadResultBase {
  Response response;  // kDone
};

// Parses a request head at the start of `in`. See the usage protocol above.
[[nodiscard]] RequestHeadResult ParseRequestHead(std::span<const char> in,
                                                 const Limits& limits = {}, size_t resume = 0);
// Parses a response head at the start of `in`.
[[nodiscard]] ResponseHeadResult ParseResponseHead(std::span<const char> in,
                                                   const Limits& limits = {}, size_t resume = 0);

// RFC 9110 §7.6.1: a Connection field's options are for one hop only; a proxy forwards none of
// the fields they name. Of the options themselves srt forwards `close`, `keep-alive` and
// `upgrade` (what the next hop's connection does), never a field name: a client naming a field
// there could otherwise have the next hop remove one the proxy added (a decider's edit).
// The field names `headers`' Connection fields name, besides those three (views into `headers`;
// usually none, and then nothing is allocated).
[[nodiscard]] std::vector<std::string_view> NamedByConnection(const std::vector<Header>& headers);
// Whether `name` is one of `named` (from NamedByConnection), case-insensitively.
[[nodiscard]] bool IsNamed(const std::vector<std::string_view>& named, std::string_view name);
// A Connection field's value as the next hop gets it: its close, keep-alive and upgrade options,
// in order; "" when it has none (the field is then left out).
[[nodiscard]] std::string ConnectionForNextHop(std::string_view value);

// How the body after a head is delimited (RFC 9112 §6.3).
struct Framing {
  enum class Kind {
    kNone,           // no body: the next message starts right after the head
    kContentLength,  // exactly `length` bytes
    kChunked,        // chunked: find the end with ChunkedDecoder
    kUntilClose,     // responses only: everything until the server closes
  };
  Kind kind = Kind::kNone;
  uint64_t length = 0;
  bool operator==(const Framing&) const = default;
};
// The body of a request: chunked, Content-Length, or none (RFC 9112 §6.3 items 4 to 6).
// CONNECT has none (RFC 9110 §9.3.6: its bytes after the head belong to the tunnel).
[[nodiscard]] Framing BodyFraming(const Request& request);
// The body of a response to `request`: none after HEAD and for 1xx, 204 and 304; none for a 2xx
// to CONNECT (a tunnel follows; srt never forwards CONNECT, though). 101 also has no body, but the
// connection stops being HTTP after it. Otherwise chunked, Content-Length, or until close.
[[nodiscard]] Framing BodyFraming(const Request& request, const Response& response);

}  // namespace srt::proxy::http
