// SPDX-License-Identifier: Apache-2.0
// server/credential_rewriter: credential injection (inject/exchange.h) on the TLS-terminated
// path, through the rewriter seam (proxy/exchange_rewriter.h): each request's header values and
// body get the real values of the sentinels whose inject hosts cover the CONNECT target, and the
// response head and body get the sentinels back for every real value. The plain-HTTP path calls
// inject::Exchange directly (http_session.cc); this is the same exchange behind the seam.
#pragma once

#include <memory>

#include "inject/injector.h"
#include "proxy/exchange_rewriter.h"

namespace srt::proxy {

// The factory for ProxyOptions::rewriter: one rewriter per request, for its CONNECT target; a
// target that does not canonicalise gets none (the request goes out as the sandbox sent it,
// sentinels and all).
[[nodiscard]] RewriterFactory CredentialRewriterFactory(
    std::shared_ptr<const inject::Injector> injector);

}  // namespace srt::proxy
