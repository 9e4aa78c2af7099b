// SPDX-License-Identifier: Apache-2.0
// mitm/tls_engine.h: what TLS termination needs for one proxy: the CA (ephemeral, made here in
// srt's memory, or loaded from caCertPath/caKeyPath), the leaf certificates it mints per host
// (cached, bounded), the store that verifies origins (the system's roots plus extraCaCertPaths),
// and the trust bundle the sandbox is pointed at. Names no OpenSSL type.
//
// Usage protocol:
//   auto engine = TlsEngine::Create(options);        // any thread; slow-ish (reads the bundle)
//   engine->trust_bundle()                           // write it where the sandbox reads it
//   ... on the proxy's loop thread only (the leaf cache is not locked):
//   auto client_side = engine->NewServerStream(host, is_ip);  // presents a leaf for `host`
//   auto origin_side = engine->NewClientStream(host, is_ip);  // verifies the origin as `host`
//
// Both sides offer/accept ALPN "http/1.1" only, so the client and the origin speak the HTTP/1.1
// the proxy parses (a client that offers only h2 gets no ALPN and falls back). TLS 1.2 or newer.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mitm/tls_stream.h"
#include "srt/result.h"

namespace srt::proxy::mitm {

// Debian's (and most distributions') bundle of the system's trusted roots.
inline constexpr std::string_view kSystemBundlePath = "/etc/ssl/certs/ca-certificates.crt";
// Leaves kept at once (least recently used dropped first); a client naming many hosts makes the
// proxy mint, never grow.
inline constexpr size_t kMaxCachedLeaves = 1024;
// A leaf's validity. Re-minted once half of it is gone, so a leaf handed out is always valid for
// at least half of this.
inline constexpr std::chrono::hours kLeafLifetime{7 * 24};

class TlsEngine {
 public:
  struct Options {
    // Both or neither: neither makes an ephemeral CA.
    std::string ca_cert_path;
    std::string ca_key_path;
    // Instead of the paths: the CA's key and certificate as one PEM text (`srt proxy --ca-fd`,
    // mitm/certs.h ParseCaPem), named in errors by ca_pem_source. Wiped by Create().
    std::string ca_pem;
    std::string ca_pem_source;
    // PEM files whose CERTIFICATE blocks are trusted for origins and added to the bundle;
    // missing, unreadable or certificate-less files are skipped (noted in notes()).
    std::vector<std::string> extra_ca_cert_paths;
    std::string system_bundle_path = std::string(kSystemBundlePath);
    size_t max_cached_leaves = kMaxCachedLeaves;
    std::chrono::seconds leaf_lifetime = kLeafLifetime;
  };

  // kInvalidArgument / kPermissionDenied / kNotFound for the CA files, naming them.
  [[nodiscard]] static Result<std::unique_ptr<TlsEngine>> Create(Options options);
  ~TlsEngine();
  TlsEngine(const TlsEngine&) = delete;
  TlsEngine& operator=(const TlsEngine&) = delete;

  // The CA certificate, PEM.
  [[nodiscard]] const std::string& ca_pem() const;
  // The CA, then the system's bundle, then the extra certificates: what the sandbox trusts.
  [[nodiscard]] const std::string& trust_bundle() const;
  // What was skipped while building the stores, for --debug.
  [[nodiscard]] const std::vector<std::string>& notes() const;

  // A server-side stream presenting a leaf for `host` (a canonical name, or an IP literal
  // without brackets when `is_ip`). Fails only if minting fails.
  [[nodiscard]] Result<std::unique_ptr<TlsStream>> NewServerStream(std::string_view host,
                                                                   bool is_ip);
  // A client-side stream that sends `host` as SNI (not for an IP) and verifies the origin's
  // chain against the store and its name (or address) against `host`.
  [[nodiscard]] Result<std::unique_ptr<TlsStream>> NewClientStream(std::string_view host,
                                                                   bool is_ip);

  [[nodiscard]] size_t cached_leaves() const;
  [[nodiscard]] size_t leaves_minted() const;

 private:
  struct Impl;
  explicit TlsEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace srt::proxy::mitm
