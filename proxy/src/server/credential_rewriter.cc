// SPDX-License-Identifier: Apache-2.0
// server/credential_rewriter.cc: inject::Exchange and the SigV4 re-signer behind the
// ExchangeRewriter seam.
#include "server/credential_rewriter.h"

#include <string>
#include <utility>
#include <vector>

#include "base/ascii.h"
#include "base/host.h"
#include "inject/exchange.h"
#include "inject/sigv4.h"
#include "inject/sigv4_plan.h"

namespace srt::proxy {
namespace {

// The fields the proxy drops on the way out (terminated_session.cc): never signed.
bool Dropped(std::string_view name) {
  return ascii::EqualsIgnoreCase(name, "Proxy-Authorization") ||
         ascii::EqualsIgnoreCase(name, "Proxy-Connection");
}

std::vector<inject::sigv4::Header> ForSigning(const std::vector<HeaderField>& fields) {
  std::vector<inject::sigv4::Header> out;
  for (const HeaderField& f : fields) {
    if (!Dropped(f.name)) out.push_back({f.name, f.value});
  }
  return out;
}

class CredentialRewriter final : public ExchangeRewriter {
 public:
  CredentialRewriter(std::shared_ptr<const inject::Injector> injector,
                     std::shared_ptr<const SigV4Resigner> resigner, const Host& host)
      : injector_(std::move(injector)),
        resigner_(std::move(resigner)),
        host_(host),
        exchange_(*injector_, host) {}

  Result<void> OnRequestHead(RequestHead& head) override {
    // SigV4 is judged on the head as the sandbox sent it: the trigger is the sentinel key id,
    // which the injection below swaps.
    if (resigner_) {
      decision_ = inject::PlanSigV4(resigner_->pairs, resigner_->passthrough, host_, head.method,
                                    head.target, ForSigning(head.headers));
      if (decision_.action == inject::SigV4Decision::Action::kDeny) {
        return MakeError(Errc::kPermissionDenied, decision_.reason);
      }
    }
    // Host is the proxy's (it puts it back); every other value may carry a sentinel.
    for (HeaderField& f : head.headers) {
      if (ascii::EqualsIgnoreCase(f.name, "host")) continue;
      f.value = exchange_.RequestHeaderValue(f.value);
    }
    if (decision_.action != inject::SigV4Decision::Action::kResign) return Ok();
    // The signature covers the headers as they go out (real key id, real session token).
    if (decision_.unsigned_payload) return Resign(head, inject::sigv4::kUnsignedPayload);
    hold_ = true;  // the body's hash is signed: the proxy holds it first
    return Ok();
  }

  uint64_t HoldsRequestBody() const override {
    return hold_ ? inject::sigv4::kMaxResignBodyBytes : 0;
  }

  Result<void> OnRequestBodyHeld(RequestHead& head, std::string_view body) override {
    return Resign(head, inject::sigv4::Sha256Hex(body));
  }

  std::string HeldBodyTooLarge() const override {
    return inject::SigV4BodyTooLarge(inject::sigv4::kMaxResignBodyBytes);
  }

  void OnResponseHead(ResponseHead& head) override {
    for (HeaderField& f : head.headers) {
      std::string out;
      exchange_.ResponseHead(f.value, out);
      f.value = std::move(out);
    }
  }

  bool RewritesBodies() const override { return true; }
  // inject::Exchange swaps only same-length pairs in bodies.
  bool KeepsBodyLengths() const override { return true; }

  // The proxy hands over decoded bodies: no chunk framing, so no data spans.
  std::string OnRequestBody(std::string_view piece, bool last) override {
    std::string out;
    exchange_.RequestBody(piece, nullptr, last, out);
    return out;
  }
  std::string OnResponseBody(std::string_view piece, bool last) override {
    std::string out;
    exchange_.ResponseBody(piece, nullptr, last, out);
    return out;
  }

  std::vector<CredentialCount> credential_counts() const override {
    std::vector<CredentialCount> out;
    for (const inject::Totals& t : exchange_.totals()) {
      out.push_back({t.name, t.injected, t.kept, t.masked});
    }
    // A re-signed request: the pair's real secret went into its signature.
    if (resigned_) out.push_back({"sigv4 " + decision_.pair->name, 1, 0, 0});
    return out;
  }

 private:
  Result<void> Resign(RequestHead& head, std::string_view payload_hash) {
    std::vector<inject::sigv4::Header> headers = ForSigning(head.headers);
    SRT_RETURN_IF_ERROR(
        inject::ApplySigV4(decision_, head.method, head.target, headers, payload_hash));
    // Back into the head, the dropped fields with them (the proxy drops them again).
    std::vector<HeaderField> out;
    for (HeaderField& f : head.headers) {
      if (Dropped(f.name)) out.push_back(std::move(f));
    }
    for (inject::sigv4::Header& h : headers) out.push_back({h.name, std::move(h.value)});
    head.headers = std::move(out);
    resigned_ = true;
    return Ok();
  }

  std::shared_ptr<const inject::Injector> injector_;  // outlives exchange_, which refers to it
  std::shared_ptr<const SigV4Resigner> resigner_;     // outlives decision_, which points into it
  const Host host_;
  inject::Exchange exchange_;
  inject::SigV4Decision decision_;
  bool hold_ = false;
  bool resigned_ = false;
};

}  // namespace

RewriterFactory CredentialRewriterFactory(std::shared_ptr<const inject::Injector> injector,
                                          std::shared_ptr<const SigV4Resigner> resigner) {
  if (resigner && resigner->pairs.empty()) resigner = nullptr;
  return [injector = std::move(injector), resigner = std::move(resigner)](
             const RequestHead& head) -> std::unique_ptr<ExchangeRewriter> {
    Result<Host> host = CanonicalizeHost(head.host);
    if (!host) return nullptr;
    return std::make_unique<CredentialRewriter>(injector, resigner, *host);
  };
}

}  // namespace srt::proxy
