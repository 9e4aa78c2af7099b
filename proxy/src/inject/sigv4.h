// SPDX-License-Identifier: Apache-2.0
// inject/sigv4: AWS Signature Version 4, pure. What the proxy needs to re-sign a request that a
// sandboxed client signed with a masked (sentinel) key pair: tell the signature's shape from the
// head, parse an `Authorization: AWS4-HMAC-SHA256 ...` value, build the canonical request and
// the string to sign from the request as it goes to the origin, derive the signing key and
// sign (HMAC-SHA256 from OpenSSL's libcrypto). Checked against AWS's published example
// (tests/unit/proxy/inject/sigv4_test.cc); the pair registry and the policy are sigv4_plan.h.
//
// Usage:
//   std::optional<Detected> d = Detect(headers, target);            // which shape, which key id
//   std::optional<Authorization> a = ParseAuthorization(value);      // header SigV4 only
//   Result<std::string> auth = Sign({method, target, &headers, a->signed_headers, hash,
//                                    amz_date, a->scope}, real_key_id, real_secret);
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"

namespace srt::proxy::inject::sigv4 {

inline constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
inline constexpr std::string_view kAlgorithmV4a = "AWS4-ECDSA-P256-SHA256";
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
// The largest request body the proxy holds to hash it for a re-signature (upstream's bound).
inline constexpr size_t kMaxResignBodyBytes = size_t{64} * 1024 * 1024;
// Limits on what a client controls in an Authorization value.
inline constexpr size_t kMaxSignedHeaders = 64;
inline constexpr size_t kMaxAuthorizationBytes = 8192;

struct Header {
  std::string name;  // any case
  std::string value;
};

// The credential scope: <date>/<region>/<service>/aws4_request.
struct Scope {
  std::string date;  // YYYYMMDD
  std::string region;
  std::string service;
  bool operator==(const Scope&) const = default;
};

struct Authorization {
  std::string access_key_id;
  Scope scope;
  std::vector<std::string> signed_headers;  // lower case, as listed
  std::string signature;                    // hex
  bool operator==(const Authorization&) const = default;
};

// `AWS4-HMAC-SHA256 Credential=<akid>/<date>/<region>/<service>/aws4_request,
// SignedHeaders=<h1;h2;...>, Signature=<hex>` (components in any order, each once, separated
// by commas and optional blanks). nullopt when it is anything else.
[[nodiscard]] std::optional<Authorization> ParseAuthorization(std::string_view value);

// The shape of a signed request, from its head alone.
enum class Shape {
  kHeader,     // Authorization: AWS4-HMAC-SHA256, a body hash the proxy can reproduce
  kStreaming,  // ... with x-amz-content-sha256: STREAMING-* (aws-chunked, per-chunk signatures)
  kPresigned,  // X-Amz-Algorithm=AWS4-HMAC-SHA256 and X-Amz-Signature in the query
  kSigV4a,     // Authorization: AWS4-ECDSA-P256-SHA256 (asymmetric: nothing to recompute)
};
[[nodiscard]] std::string_view ShapeName(Shape shape);  // "streaming", "presigned", "sigv4a"

struct Detected {
  Shape shape = Shape::kHeader;
  std::string access_key_id;  // from the credential scope (the query's, decoded)
};
// nullopt when the request carries no SigV4 signature srt recognises. The key id is read
// leniently (an Authorization value ParseAuthorization refuses still names it), so that a
// malformed signature over a masked key is refused rather than passed.
[[nodiscard]] std::optional<Detected> Detect(const std::vector<Header>& headers,
                                             std::string_view target);

// The first value of a header (names compared without case), or nullopt.
[[nodiscard]] std::optional<std::string_view> FindHeader(const std::vector<Header>& headers,
                                                         std::string_view name);

// The canonical URI of a path as it goes on the wire: S3's verbatim ("/" when empty); any other
// service's with dot segments and empty segments resolved and percent-encoded once more ("/"
// kept), as the AWS SDKs sign it.
[[nodiscard]] std::string CanonicalUri(std::string_view raw_path, std::string_view service);
// The canonical query string: each name and value percent-decoded (left as it is when that
// fails) and encoded strictly (RFC 3986 unreserved kept), pairs sorted by name then value.
[[nodiscard]] std::string CanonicalQuery(std::string_view raw_query);
// Strict percent-encoding: everything but A-Z a-z 0-9 - _ . ~ as %XX (upper case).
[[nodiscard]] std::string UriEncode(std::string_view bytes);

struct Request {
  std::string_view method;
  std::string_view target;  // origin-form, as it goes to the origin
  const std::vector<Header>* headers = nullptr;
  std::vector<std::string> signed_headers;  // lower case
  std::string_view payload_hash;            // hex, or UNSIGNED-PAYLOAD
  std::string_view amz_date;                // X-Amz-Date
  Scope scope;
};

// The canonical request. Error (kInvalidArgument) when a signed header is not in the request.
// A header sent more than once is signed as its values joined by ",".
[[nodiscard]] Result<std::string> CanonicalRequest(const Request& request);
[[nodiscard]] std::string StringToSign(std::string_view canonical_request,
                                       std::string_view amz_date, const Scope& scope);
// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"),
// 32 raw bytes.
[[nodiscard]] std::string SigningKey(std::string_view secret, const Scope& scope);
[[nodiscard]] std::string Sha256Hex(std::string_view data);
[[nodiscard]] std::string HmacSha256Hex(std::string_view key, std::string_view data);

// The Authorization value signing `request` with the key pair.
[[nodiscard]] Result<std::string> Sign(const Request& request, std::string_view access_key_id,
                                       std::string_view secret);

}  // namespace srt::proxy::inject::sigv4
