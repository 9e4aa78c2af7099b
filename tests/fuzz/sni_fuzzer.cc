// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: SNI extraction (tls/client_hello.h). Properties: a decided result (found, no
// SNI) covers at most the input and at most 16 KiB and is the same from exactly the bytes it
// covers; a prefix is either undecided or decided the same way; a found name is 1..255 bytes of
// visible ASCII, and CanonicalizeHost accepts it or refuses it as a "malformed host"; kNotTls is
// decided from the first three bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "base/host.h"
#include "proxy_limits.h"
#include "tls/client_hello.h"
#include "wire/ascii.h"

namespace {

using srt::CanonicalizeHost;
using srt::Host;
using srt::kMalformedHost;
using namespace srt::proxy;       // NOLINT(google-build-using-namespace)
using namespace srt::proxy::tls;  // NOLINT(google-build-using-namespace)

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

bool Same(const SniResult& a, const SniResult& b) {
  return a.status == b.status && a.host == b.host && a.consumed == b.consumed && a.error == b.error;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  SniResult r = ExtractSni(in);
  switch (r.status) {
    case SniStatus::kFound:
    case SniStatus::kNoSni:
      Require(r.consumed > 0 && r.consumed <= size && r.consumed <= kMaxTlsClientHelloBytes);
      Require(Same(ExtractSni(in.first(r.consumed)), r));
      Require(ExtractSni(in.first(r.consumed - 1)).status == SniStatus::kNeedMore);
      break;
    case SniStatus::kNotTls:
      Require(size > 0 && Same(ExtractSni(in.first(size < 3 ? size : 3)), r));
      break;
    case SniStatus::kMalformed:
      Require(!r.error.empty() && r.host.empty());
      break;
    case SniStatus::kNeedMore:
      Require(size < kMaxTlsClientHelloBytes);
      break;
  }
  if (r.status == SniStatus::kFound) {
    Require(!r.host.empty() && r.host.size() <= kMaxSniHostBytes && ascii::IsVisible(r.host));
    srt::Result<Host> host = CanonicalizeHost(r.host);
    Require(host.has_value() || host.error().message().starts_with(kMalformedHost));
  } else {
    Require(r.host.empty());
  }
  // A prefix is undecided, or decided the same way.
  const size_t cut = size > 0 ? data[size - 1] % (size + 1) : 0;
  SniResult p = ExtractSni(in.first(cut));
  Require(p.status == SniStatus::kNeedMore || Same(p, r));
  return 0;
}
