// SPDX-License-Identifier: Apache-2.0
// mitm/ossl.h: RAII owners for the OpenSSL objects mitm/ uses (house style §2.4: a C handle is a
// unique_ptr with a struct deleter), and OpenSSL's error queue as an srt::Error. Internal to
// mitm/: no header outside this module includes OpenSSL.
#pragma once

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>

#include "srt/result.h"

namespace srt::proxy::mitm {

struct BioFree {
  void operator()(BIO* b) const { BIO_free_all(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;
using SslPtr = std::unique_ptr<SSL, SslFree>;

// OpenSSL's queued errors, joined with "; " (the queue is emptied), or "unknown error".
inline std::string TakeOpensslErrors() {
  std::string out;
  unsigned long code = 0;
  while ((code = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? std::string("unknown error") : out;
}

// `what`: OpenSSL's errors.
[[nodiscard]] inline Error OpensslError(std::string_view what, Errc code = Errc::kInternal) {
  return MakeError(code, std::string(what) + ": " + TakeOpensslErrors());
}

}  // namespace srt::proxy::mitm
