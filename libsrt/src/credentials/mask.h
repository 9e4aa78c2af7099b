// SPDX-License-Identifier: Apache-2.0
// credentials/mask: what the sandbox sees in place of a secret. Pure: the caller gives the real
// values (srt's environment, a file's bytes) and a source of random bytes (getrandom in srt,
// a fixed sequence in tests), and gets back the fake values and the secrets for srt's proxy.
//
// A sentinel has the real value's byte length wherever that keeps enough entropy, so that the
// proxy can swap it in a body without touching Content-Length:
//   real >= 47 bytes:      "fake_value_" + uuid4 + [a-z0-9_-] padding (upstream's form)
//   32 <= real < 47 bytes: "fake_value_" + [a-z0-9] characters (>= 21 of them, > 108 bits)
//   real < 32 bytes:       "fake_value_" + uuid4, 47 bytes: longer than the real value, so the
//                          proxy injects it in request heads only (never in a body)
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/domain_pattern.h"
#include "network_policy/network_policy.h"
#include "srt/result.h"
#include "srt/settings.h"

namespace srt::credentials {

// `n` random bytes, or why there are none.
using RandomSource = std::function<Result<std::string>(size_t n)>;

inline constexpr std::string_view kSentinelPrefix = "fake_value_";
// Limits on what srt holds and the proxy scans for: a masked value (a whole file, a variable),
// and the secrets one sandbox may have.
inline constexpr size_t kMaxMaskedValueBytes = size_t{64} * 1024;
inline constexpr size_t kMaxSecrets = 256;

[[nodiscard]] Result<std::string> MintSentinel(size_t real_length, const RandomSource& random);

// What happened to one value.
struct Masked {
  enum class Outcome {
    kMasked,  // `fake` replaces the value; `secrets` map its sentinels back
    kDenied,  // the value must not reach the sandbox at all (onExtractNoMatch "deny")
    kPassed,  // the real value passes unprotected (onExtractNoMatch "warn"); `warning` says so
  };
  Outcome outcome = Outcome::kMasked;
  std::string fake;
  std::vector<CredentialSecret> secrets;
  std::string warning;  // kDenied/kPassed: a sentence for the user
};

// Masks `real` as `options` say. `name` names the credential in secrets and messages ("env
// GITHUB_TOKEN", "file /home/me/.netrc"); `inject_hosts` are its hosts (ports dropped).
// Errors: kInvalidArgument for onExtractNoMatch "error" (naming the credential, never the
// value), a value over kMaxMaskedValueBytes; the random source's error.
[[nodiscard]] Result<Masked> MaskValue(std::string_view name, std::string_view real,
                                       const CredentialMaskOptions& options,
                                       const std::vector<DomainPattern>& inject_hosts,
                                       const RandomSource& random);

// A credential's inject hosts: its injectHosts, else network.allowedDomains; ports dropped
// (injection is per host). Entries were validated by the settings decoder.
[[nodiscard]] std::vector<DomainPattern> InjectHosts(const CredentialMaskOptions& options,
                                                     const std::vector<std::string>& allowed);

// The command's environment with credentials.envVars applied: denied variables removed, masked
// ones replaced by their fakes (a variable the environment lacks is skipped).
// Masked AWS key pairs (credentials.awsPairs, and AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN when no awsPairs entry names any of them) for SigV4 re-signing: a pair is
// made when its key id and secret variables were both masked whole-value; its session token
// joins when that variable was masked too. A masked secret without a masked key id is a warning
// (its requests cannot be re-signed).
struct EnvironmentPlan {
  std::vector<std::string> environment;
  std::vector<CredentialSecret> secrets;
  std::vector<AwsKeyPair> aws_pairs;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // for --debug: what was done to which name (no values)
};
[[nodiscard]] Result<EnvironmentPlan> PlanEnvironment(const CredentialSettings& credentials,
                                                      const std::vector<std::string>& allowed,
                                                      std::vector<std::string> environment,
                                                      const RandomSource& random);

}  // namespace srt::credentials
