// SPDX-License-Identifier: Apache-2.0
// inject/sigv4_plan.cc: the SigV4 decision for one request, and the re-signature.
#include "inject/sigv4_plan.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "base/ascii.h"
#include "inject/injector.h"

namespace srt::proxy::inject {
namespace {

SigV4Decision Deny(std::string reason) {
  SigV4Decision d;
  d.action = SigV4Decision::Action::kDeny;
  d.reason = std::move(reason);
  return d;
}

void SetHeader(std::vector<sigv4::Header>& headers, std::string_view name, std::string value) {
  bool set = false;
  std::erase_if(headers, [&](sigv4::Header& h) {
    if (!ascii::EqualsIgnoreCase(h.name, name)) return false;
    if (set) return true;  // one copy only
    h.value = value;
    set = true;
    return false;
  });
  if (!set) headers.push_back({std::string(name), std::move(value)});
}

constexpr std::string_view kSessionToken = "x-amz-security-token";
constexpr std::string_view kContentSha = "x-amz-content-sha256";

}  // namespace

SigV4Decision PlanSigV4(const std::vector<AwsKeyPair>& pairs, const SigV4Passthrough& passthrough,
                        const Host& host, std::string_view method, std::string_view target,
                        const std::vector<sigv4::Header>& headers) {
  (void)method;
  if (pairs.empty()) return {};
  const std::optional<sigv4::Detected> detected = sigv4::Detect(headers, target);
  if (!detected) return {};
  const auto it = std::find_if(pairs.begin(), pairs.end(), [&](const AwsKeyPair& p) {
    return p.access_key_id_sentinel == detected->access_key_id;
  });
  // Another key (a real, unmasked one too) is neither re-signed nor refused.
  if (it == pairs.end()) return {};
  const AwsKeyPair& pair = *it;
  if (!HostMatches(host, pair.inject_hosts)) return {};
  if (detected->shape != sigv4::Shape::kHeader) {
    const bool pass = detected->shape == sigv4::Shape::kStreaming   ? passthrough.streaming
                      : detected->shape == sigv4::Shape::kPresigned ? passthrough.presigned
                                                                    : passthrough.sigv4a;
    if (pass) return {};
    const std::string kind(sigv4::ShapeName(detected->shape));
    return Deny("AWS SigV4 " + kind +
                " request uses a masked credential but cannot be re-signed by the sandbox "
                "proxy; denied by policy. Set credentials.sigv4." +
                kind +
                " to \"passthrough\" to forward it unmodified (it will fail upstream: the "
                "signature covers the masked placeholder).");
  }
  std::optional<sigv4::Authorization> auth =
      sigv4::ParseAuthorization(sigv4::FindHeader(headers, "authorization").value_or(""));
  if (!auth) {
    return Deny(
        "AWS SigV4 request uses a masked credential but its Authorization header is malformed; "
        "the proxy cannot re-sign it.");
  }
  const std::optional<std::string_view> amz_date = sigv4::FindHeader(headers, "x-amz-date");
  if (!amz_date) {
    return Deny(
        "AWS SigV4 request uses a masked credential but carries no x-amz-date header; the "
        "proxy cannot re-sign it.");
  }
  const bool has_token = !pair.session_token.empty();
  for (const std::string& name : auth->signed_headers) {
    if (name == kSessionToken && has_token) continue;  // set below
    if (!sigv4::FindHeader(headers, name)) {
      return Deny("AWS SigV4 request uses a masked credential but signed header \"" + name +
                  "\" is missing; the proxy cannot re-sign it.");
    }
  }
  SigV4Decision d;
  d.action = SigV4Decision::Action::kResign;
  d.pair = &pair;
  d.amz_date = std::string(*amz_date);
  d.signed_headers = auth->signed_headers;
  if (has_token && std::find(d.signed_headers.begin(), d.signed_headers.end(), kSessionToken) ==
                       d.signed_headers.end()) {
    d.signed_headers.emplace_back(kSessionToken);
  }
  d.unsigned_payload = sigv4::FindHeader(headers, kContentSha) == sigv4::kUnsignedPayload;
  d.authorization = std::move(*auth);
  return d;
}

Result<void> ApplySigV4(const SigV4Decision& decision, std::string_view method,
                        std::string_view target, std::vector<sigv4::Header>& headers,
                        std::string_view payload_hash) {
  const AwsKeyPair& pair = *decision.pair;
  if (!pair.session_token.empty()) SetHeader(headers, kSessionToken, pair.session_token);
  // The hash of the bytes that go out is the one signed, not the client's claim.
  if (!decision.unsigned_payload && sigv4::FindHeader(headers, kContentSha)) {
    SetHeader(headers, kContentSha, std::string(payload_hash));
  }
  const sigv4::Request request{method,
                               target,
                               &headers,
                               decision.signed_headers,
                               payload_hash,
                               decision.amz_date,
                               decision.authorization.scope};
  Result<std::string> auth = sigv4::Sign(request, pair.access_key_id, pair.secret_access_key);
  if (!auth) {
    return MakeError(Errc::kPermissionDenied,
                     "AWS SigV4 re-signing failed: " + auth.error().message());
  }
  SetHeader(headers, "Authorization", std::move(*auth));
  return Ok();
}

std::string SigV4BodyTooLarge(size_t limit) {
  return "AWS SigV4 request uses a masked credential and signs a literal body hash, so the "
         "proxy must buffer the body to re-sign it, but the body exceeds the " +
         std::to_string(limit) +
         "-byte buffering limit; denied. Sign the payload as UNSIGNED-PAYLOAD to stream it "
         "without buffering, or use an unmasked credential to have the request forwarded "
         "untouched.";
}

}  // namespace srt::proxy::inject
