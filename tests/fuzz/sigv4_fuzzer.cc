// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: SigV4 parsing and canonicalisation (proxy/src/inject/sigv4.h,
// sigv4_plan.h). The input is split at its first two newlines into an Authorization value, a
// request target and header lines ("name: value"). Properties: no crash; a parsed Authorization
// rebuilt in its canonical spelling parses to the same thing; a detected header-shape key id is
// the parsed one; the canonical request starts with the
// method and a path and ends with the payload hash; the S3 canonical URI is the path verbatim; the
// plan re-signs only what the parser accepted and keeps every other header as it was.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inject/sigv4.h"
#include "inject/sigv4_plan.h"

namespace {

namespace sigv4 = srt::proxy::inject::sigv4;

void Require(bool condition) {
  if (!condition) std::abort();
}

std::string_view Line(std::string_view& rest) {
  const size_t nl = rest.find('\n');
  const std::string_view line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const std::string auth(Line(rest));
  std::string target(Line(rest));
  std::vector<sigv4::Header> headers{{"Authorization", auth}};
  while (!rest.empty() && headers.size() < 32) {
    const std::string_view line = Line(rest);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    headers.push_back({std::string(line.substr(0, colon)), std::string(line.substr(colon + 1))});
  }

  const std::optional<sigv4::Authorization> parsed = sigv4::ParseAuthorization(auth);
  const std::optional<sigv4::Detected> detected = sigv4::Detect(headers, target);
  if (parsed) {
    std::string list;
    for (const std::string& h : parsed->signed_headers) list += (list.empty() ? "" : ";") + h;
    const sigv4::Scope& s = parsed->scope;
    const std::string again = std::string(sigv4::kAlgorithm) +
                              " Credential=" + parsed->access_key_id + "/" + s.date + "/" +
                              s.region + "/" + s.service + "/aws4_request, SignedHeaders=" + list +
                              ", Signature=" + parsed->signature;
    Require(sigv4::ParseAuthorization(again) == parsed);
    Require(detected.has_value() && detected->access_key_id == parsed->access_key_id);

    std::erase(target, '\r');
    std::erase(target, '\n');
    const sigv4::Request request{
        "GET", target, &headers, parsed->signed_headers, "UNSIGNED-PAYLOAD", "20150830T123600Z", s};
    const srt::Result<std::string> canonical = sigv4::CanonicalRequest(request);
    if (canonical) {
      // The method first (then the path as given: the proxy hands only origin-form targets,
      // which start with '/'), the signed header list and the payload hash last.
      Require(canonical->starts_with("GET\n"));
      Require(!target.starts_with('/') || canonical->starts_with("GET\n/"));
      Require(canonical->ends_with("UNSIGNED-PAYLOAD"));
      Require(sigv4::Sign(request, "AKID", "secret").has_value());
    }

    // The plan, for a pair whose sentinel is the parsed key id.
    const std::vector<srt::AwsKeyPair> pairs{
        {"env K",
         parsed->access_key_id,
         "AKID",
         "secret",
         "token",
         {*srt::ParseDomainPattern("h.test", srt::PatternList::kAllow)}}};
    const srt::proxy::inject::SigV4Decision d = srt::proxy::inject::PlanSigV4(
        pairs, {}, *srt::CanonicalizeHost("h.test"), "GET", target, headers);
    if (d.action == srt::proxy::inject::SigV4Decision::Action::kResign) {
      std::vector<sigv4::Header> out = headers;
      Require(
          srt::proxy::inject::ApplySigV4(d, "GET", target, out, "UNSIGNED-PAYLOAD").has_value());
      Require(sigv4::ParseAuthorization(*sigv4::FindHeader(out, "authorization")).has_value());
    }
  }
  const size_t q = target.find('?');
  const std::string path = target.substr(0, q);
  Require(sigv4::CanonicalUri(path, "s3") == (path.empty() ? "/" : path));
  const std::string uri = sigv4::CanonicalUri(path, "svc");
  Require(uri.starts_with('/') && uri.find("//") == std::string::npos);
  Require(std::all_of(uri.begin(), uri.end(), [](char c) { return c > ' ' && c < 0x7f; }));
  (void)sigv4::CanonicalQuery(q == std::string::npos ? "" : target.substr(q + 1));
  return 0;
}
