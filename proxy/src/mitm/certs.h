// SPDX-License-Identifier: Apache-2.0
// mitm/certs.h: the certificates of TLS termination: the CA (made in memory, or read from the
// user's files), the leaf certificates it signs per host, and PEM files read into certificates.
// Internal to mitm/ (it names OpenSSL types; tls_engine.h is the module's face).
//
// The ephemeral CA is an EC P-256 key and a self-signed certificate named as upstream srt names
// its own (CN "sandbox-runtime ephemeral CA", O "sandbox-runtime"), so a user who has seen one
// recognises the other; P-256 instead of upstream's RSA-2048 because it is made at every start
// and P-256 keys take microseconds where RSA-2048 takes tens of milliseconds. Its key exists only
// in srt's memory. Leaves share one P-256 key per engine (as upstream shares one RSA key), carry
// exactly one subjectAltName (the host: DNS, or IP for an address), serverAuth, and are valid
// from an hour ago (clock skew) for `lifetime`, never past the CA's own notAfter.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "mitm/ossl.h"
#include "srt/result.h"

namespace srt::proxy::mitm {

struct CaMaterial {
  X509Ptr cert;
  PkeyPtr key;
};

inline constexpr std::string_view kEphemeralCaCommonName = "sandbox-runtime ephemeral CA";
inline constexpr std::string_view kEphemeralCaOrganization = "sandbox-runtime";
// The ephemeral CA lives as long as srt's process; its certificate says 825 days as upstream's.
inline constexpr std::chrono::hours kEphemeralCaLifetime{825 * 24};
// A CA or key file larger than this is refused; a bundle (extraCaCertPaths, the system's)
// larger than kMaxBundleFileBytes is skipped.
inline constexpr size_t kMaxCaFileBytes = size_t{1} << 20;
inline constexpr size_t kMaxBundleFileBytes = size_t{16} << 20;

// A fresh EC P-256 key.
[[nodiscard]] Result<PkeyPtr> NewEcKey();
[[nodiscard]] Result<CaMaterial> MakeEphemeralCa();
// caCertPath/caKeyPath: each opened with O_NOFOLLOW (a symlink is refused) and must be a regular
// file; the key must not be readable or writable by group or others, and must be owned by srt's
// user or root. The certificate must be a CA (basicConstraints CA:TRUE) and match the key.
// kPermissionDenied / kInvalidArgument / kNotFound naming the path.
[[nodiscard]] Result<CaMaterial> LoadCa(const std::string& cert_path, const std::string& key_path);
// How CaFromPem's errors name where the key and the certificate came from.
struct CaPemNames {
  std::string key;       // "tlsTerminate.caKeyPath '/k.pem'"
  std::string cert;      // "tlsTerminate.caCertPath '/c.pem'"
  std::string mismatch;  // the whole message for a key that does not match the certificate
};
// The CA from PEM text: the first private key of `key_pem` (any type; an encrypted one is
// refused, never prompted for) and the first CERTIFICATE of `cert_pem`, which must be a CA and
// match the key. `key_pem` is wiped (OPENSSL_cleanse) whatever the outcome; no message quotes it.
[[nodiscard]] Result<CaMaterial> CaFromPem(std::string& key_pem, std::string_view cert_pem,
                                           const CaPemNames& names);
// `srt proxy --ca-fd`: one PEM text holding the CA's private key and its certificate (upstream
// srt's proxy-only CA), at most kMaxCaFileBytes; `source` ("--ca-fd 5") names it in errors.
// The text is wiped whatever the outcome.
[[nodiscard]] Result<CaMaterial> ParseCaPem(std::string pem, std::string_view source);
// A leaf for `host`: a canonical DNS name, or an IPv4/IPv6 literal when `is_ip` (no brackets).
[[nodiscard]] Result<X509Ptr> MintLeaf(const CaMaterial& ca, EVP_PKEY* leaf_key,
                                       std::string_view host, bool is_ip,
                                       std::chrono::seconds lifetime);
// The certificate as PEM text.
[[nodiscard]] std::string CertificatePem(X509* cert);
// Every CERTIFICATE block of PEM `text` (other blocks skipped; a damaged block ends the scan).
[[nodiscard]] std::vector<X509Ptr> ReadPemCertificates(std::string_view text);
// A file's bytes, at most `limit`: opened O_RDONLY|O_CLOEXEC|O_NOFOLLOW, a regular file.
[[nodiscard]] Result<std::string> ReadSmallFile(const std::string& path, size_t limit);

}  // namespace srt::proxy::mitm
