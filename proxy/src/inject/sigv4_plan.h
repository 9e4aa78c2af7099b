// SPDX-License-Identifier: Apache-2.0
// inject/sigv4_plan: what the proxy does with one request signed with SigV4 over a masked AWS
// key pair (network_policy.h AwsKeyPair), pure. The trigger is the sentinel key id in the
// signature's credential scope, matched exactly; a request signed with any other key (a real,
// unmasked one included) is never touched. To a host the pair may not be injected at, nothing
// happens either.
//
// Usage, per request on a TLS-terminated tunnel:
//   SigV4Decision d = PlanSigV4(pairs, passthrough, host, method, target, headers);  // as sent
//   kDeny: refuse 403 with d.reason.  kNone: forward as usual.
//   kResign: inject into the headers as usual, then, with the payload hash (d.unsigned_payload,
//   the empty body's, or the held body's: sigv4::Sha256Hex(body)):
//     ApplySigV4(d, method, target, headers, hash);   // Authorization and friends replaced
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/host.h"
#include "inject/sigv4.h"
#include "network_policy/network_policy.h"
#include "srt/result.h"

namespace srt::proxy::inject {

struct SigV4Decision {
  enum class Action { kNone, kDeny, kResign };
  Action action = Action::kNone;
  std::string reason;  // kDeny: for the 403 and the decision log (no value in it)
  // kResign:
  const AwsKeyPair* pair = nullptr;  // one of PlanSigV4's `pairs`, which outlive the decision
  sigv4::Authorization authorization;
  std::string amz_date;
  std::vector<std::string> signed_headers;  // the client's, plus x-amz-security-token when the
                                            // pair has a session token
  bool unsigned_payload = false;            // x-amz-content-sha256: UNSIGNED-PAYLOAD
};

[[nodiscard]] SigV4Decision PlanSigV4(const std::vector<AwsKeyPair>& pairs,
                                      const SigV4Passthrough& passthrough, const Host& host,
                                      std::string_view method, std::string_view target,
                                      const std::vector<sigv4::Header>& headers);

// Re-signs `headers` (as they go to the origin) for a kResign decision: X-Amz-Security-Token
// set to the real session token (when the pair has one), x-amz-content-sha256 set to
// `payload_hash` (when the client sent one that is not UNSIGNED-PAYLOAD), Authorization
// replaced. Error: a signed header is missing.
[[nodiscard]] Result<void> ApplySigV4(const SigV4Decision& decision, std::string_view method,
                                      std::string_view target, std::vector<sigv4::Header>& headers,
                                      std::string_view payload_hash);

// The 403 reason for a body over the buffering limit.
[[nodiscard]] std::string SigV4BodyTooLarge(size_t limit);

}  // namespace srt::proxy::inject
