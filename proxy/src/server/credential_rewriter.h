// SPDX-License-Identifier: Apache-2.0
// server/credential_rewriter: credential injection (inject/exchange.h) on the TLS-terminated
// path, through the rewriter seam (proxy/exchange_rewriter.h): each request's header values and
// body get the real values of the sentinels whose inject hosts cover the CONNECT target, and the
// response head and body get the sentinels back for every real value. The plain-HTTP path calls
// inject::Exchange directly (http_session.cc); this is the same exchange behind the seam.
// A request signed with AWS SigV4 over a masked key pair's sentinel key id is re-signed with the
// real pair after the injection (inject/sigv4_plan.h), holding its body to hash it unless the
// client signed UNSIGNED-PAYLOAD; what cannot be re-signed is refused (403) as credentials.sigv4
// says.
#pragma once

#include <memory>
#include <vector>

#include "inject/injector.h"
#include "proxy/exchange_rewriter.h"

namespace srt::proxy {

// The masked AWS key pairs and credentials.sigv4, shared by every request.
struct SigV4Resigner {
  std::vector<AwsKeyPair> pairs;
  SigV4Passthrough passthrough;
};

// The factory for ProxyOptions::rewriter: one rewriter per request, for its CONNECT target; a
// target that does not canonicalise gets none (the request goes out as the sandbox sent it,
// sentinels and all).
[[nodiscard]] RewriterFactory CredentialRewriterFactory(
    std::shared_ptr<const inject::Injector> injector,
    std::shared_ptr<const SigV4Resigner> resigner = nullptr);

}  // namespace srt::proxy
