// SPDX-License-Identifier: Apache-2.0
// server/credential_rewriter.cc: inject::Exchange behind the ExchangeRewriter seam.
#include "server/credential_rewriter.h"

#include <string>
#include <utility>
#include <vector>

#include "base/ascii.h"
#include "base/host.h"
#include "inject/exchange.h"

namespace srt::proxy {
namespace {

class CredentialRewriter final : public ExchangeRewriter {
 public:
  CredentialRewriter(std::shared_ptr<const inject::Injector> injector, const Host& host)
      : injector_(std::move(injector)), exchange_(*injector_, host) {}

  Result<void> OnRequestHead(RequestHead& head) override {
    // Host is the proxy's (it puts it back); every other value may carry a sentinel.
    for (HeaderField& f : head.headers) {
      if (ascii::EqualsIgnoreCase(f.name, "host")) continue;
      f.value = exchange_.RequestHeaderValue(f.value);
    }
    return Ok();
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
    return out;
  }

 private:
  std::shared_ptr<const inject::Injector> injector_;  // outlives exchange_, which refers to it
  inject::Exchange exchange_;
};

}  // namespace

RewriterFactory CredentialRewriterFactory(std::shared_ptr<const inject::Injector> injector) {
  return [injector =
              std::move(injector)](const RequestHead& head) -> std::unique_ptr<ExchangeRewriter> {
    Result<Host> host = CanonicalizeHost(head.host);
    if (!host) return nullptr;
    return std::make_unique<CredentialRewriter>(injector, *host);
  };
}

}  // namespace srt::proxy
