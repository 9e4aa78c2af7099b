// SPDX-License-Identifier: Apache-2.0
#include "mitm/tls_engine.h"

#include <openssl/x509v3.h>

#include <list>
#include <unordered_map>

#include "base/strings.h"
#include "mitm/certs.h"
#include "mitm/tls_stream_impl.h"

namespace srt::proxy::mitm {
namespace {

constexpr const char* kTls13Suites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
constexpr unsigned char kAlpnHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

// ALPN (RFC 7301 §3.2): http/1.1 if the client offers it, else no ALPN at all, so a client
// offering h2 never gets it (the proxy parses HTTP/1.1).
int SelectHttp11(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
                 unsigned int inlen, void*) {
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, kAlpnHttp11, sizeof kAlpnHttp11, in, inlen) ==
      OPENSSL_NPN_NEGOTIATED) {
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

Result<SslCtxPtr> NewContext(bool server) {
  SslCtxPtr ctx(SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()));
  if (!ctx) return OpensslError("SSL_CTX_new");
  if (SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1) {
    return OpensslError("TLS minimum version");
  }
  // Many servers close without close_notify; the HTTP framing says whether a message is whole.
  SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
  // TLS 1.3 suites, AES-128-GCM first on both legs (OpenSSL's default puts AES-256-GCM first):
  // the proxy decrypts and encrypts every byte, so the cipher is most of what a terminated
  // tunnel costs, and AES-128-GCM is about 15% cheaper per byte with AES-NI. It is TLS 1.3's
  // mandatory suite (RFC 8446 §9.1), first in BoringSSL's, Go's and the browsers' order, and
  // 128-bit keys stay out of reach of any brute force (Grover's quadratic speed-up included, per
  // NIST's post-quantum category 1). All three suites stay allowed. Towards the client srt
  // chooses (server preference), except that a client putting ChaCha20 first (one without AES
  // hardware) gets it. Why: bench/README.md, "the cipher". TLS 1.2 keeps OpenSSL's order.
  if (SSL_CTX_set_ciphersuites(ctx.get(), kTls13Suites) != 1) {
    return OpensslError("TLS 1.3 cipher suites");
  }
  if (server)
    SSL_CTX_set_options(ctx.get(), SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_RELEASE_BUFFERS);
  return ctx;
}

struct CachedLeaf {
  SslCtxPtr ctx;
  std::chrono::steady_clock::time_point minted;
  std::list<std::string>::iterator lru;
};

}  // namespace

struct TlsEngine::Impl {
  Options options;
  CaMaterial ca;
  PkeyPtr leaf_key;
  std::string ca_pem;
  std::string bundle;
  std::vector<std::string> notes;
  SslCtxPtr client_ctx;
  std::list<std::string> lru;  // most recent first
  std::unordered_map<std::string, CachedLeaf> leaves;
  size_t minted = 0;

  Result<SSL_CTX*> LeafContext(std::string_view host, bool is_ip) {
    const std::string key = (is_ip ? "ip:" : "dns:") + std::string(host);
    const auto now = std::chrono::steady_clock::now();
    if (auto it = leaves.find(key); it != leaves.end()) {
      if (now - it->second.minted < options.leaf_lifetime / 2) {
        lru.splice(lru.begin(), lru, it->second.lru);
        return it->second.ctx.get();
      }
      lru.erase(it->second.lru);
      leaves.erase(it);
    }
    SRT_ASSIGN_OR_RETURN(X509Ptr cert,
                         MintLeaf(ca, leaf_key.get(), host, is_ip, options.leaf_lifetime));
    SRT_ASSIGN_OR_RETURN(SslCtxPtr ctx, NewContext(/*server=*/true));
    if (SSL_CTX_use_certificate(ctx.get(), cert.get()) != 1 ||
        SSL_CTX_use_PrivateKey(ctx.get(), leaf_key.get()) != 1) {
      return OpensslError("leaf context");
    }
    SSL_CTX_set_alpn_select_cb(ctx.get(), SelectHttp11, nullptr);
    ++minted;
    while (leaves.size() >= options.max_cached_leaves && !lru.empty()) {
      leaves.erase(lru.back());
      lru.pop_back();
    }
    lru.push_front(key);
    SSL_CTX* raw = ctx.get();
    leaves.emplace(key, CachedLeaf{std::move(ctx), now, lru.begin()});
    return raw;
  }
};

TlsEngine::TlsEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TlsEngine::~TlsEngine() = default;

Result<std::unique_ptr<TlsEngine>> TlsEngine::Create(Options options) {
  std::string ca_pem = std::move(options.ca_pem);
  options.ca_pem.clear();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (impl->options.max_cached_leaves == 0) impl->options.max_cached_leaves = 1;
  if (options.ca_cert_path.empty() != options.ca_key_path.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     "tlsTerminate: caCertPath and caKeyPath must be provided together");
  }
  if (!ca_pem.empty()) {
    if (!options.ca_cert_path.empty()) {
      OPENSSL_cleanse(ca_pem.data(), ca_pem.size());
      return MakeError(Errc::kInvalidArgument, "a CA from PEM text and from files at once");
    }
    SRT_ASSIGN_OR_RETURN(impl->ca, ParseCaPem(std::move(ca_pem), options.ca_pem_source));
  } else if (options.ca_cert_path.empty()) {
    SRT_ASSIGN_OR_RETURN(impl->ca, MakeEphemeralCa());
  } else {
    SRT_ASSIGN_OR_RETURN(impl->ca, LoadCa(options.ca_cert_path, options.ca_key_path));
  }
  SRT_ASSIGN_OR_RETURN(impl->leaf_key, NewEcKey());
  impl->ca_pem = CertificatePem(impl->ca.cert.get());
  if (impl->ca_pem.empty()) return OpensslError("write the CA certificate");

  // The origin side: the system's roots and the extra certificates (not srt's own CA: an
  // origin never presents a leaf srt minted).
  SRT_ASSIGN_OR_RETURN(impl->client_ctx, NewContext(/*server=*/false));
  SSL_CTX_set_verify(impl->client_ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_set_alpn_protos(impl->client_ctx.get(), kAlpnHttp11, sizeof kAlpnHttp11) != 0) {
    return OpensslError("ALPN");
  }
  X509_STORE* store = SSL_CTX_get_cert_store(impl->client_ctx.get());
  impl->bundle = impl->ca_pem;
  Result<std::string> system = ReadSmallFile(options.system_bundle_path, kMaxBundleFileBytes);
  if (!system) {
    impl->notes.push_back("tlsTerminate: no system trust bundle (" + system.error().message() +
                          "); origins are verified against extraCaCertPaths only");
  } else {
    for (X509Ptr& cert : ReadPemCertificates(*system)) (void)X509_STORE_add_cert(store, cert.get());
    if (!system->empty() && system->back() != '\n') system->push_back('\n');
    impl->bundle += *system;
  }
  for (const std::string& path : options.extra_ca_cert_paths) {
    Result<std::string> text = ReadSmallFile(path, kMaxBundleFileBytes);
    if (!text) {
      impl->notes.push_back("tlsTerminate.extraCaCertPaths: " + text.error().message() +
                            ", skipping");
      continue;
    }
    std::vector<X509Ptr> certs = ReadPemCertificates(*text);
    if (certs.empty()) {
      impl->notes.push_back("tlsTerminate.extraCaCertPaths: " + strings::Quote(path) +
                            " has no PEM CERTIFICATE block, skipping");
      continue;
    }
    for (X509Ptr& cert : certs) {
      (void)X509_STORE_add_cert(store, cert.get());  // a duplicate is not an error worth a note
      impl->bundle += CertificatePem(cert.get());
    }
  }
  ERR_clear_error();
  return std::unique_ptr<TlsEngine>(new TlsEngine(std::move(impl)));
}

const std::string& TlsEngine::ca_pem() const { return impl_->ca_pem; }
const std::string& TlsEngine::trust_bundle() const { return impl_->bundle; }
const std::vector<std::string>& TlsEngine::notes() const { return impl_->notes; }
size_t TlsEngine::cached_leaves() const { return impl_->leaves.size(); }
size_t TlsEngine::leaves_minted() const { return impl_->minted; }

namespace {

// `host`: for a client stream, the name (or address) the origin must prove.
Result<std::unique_ptr<TlsStream>> NewStream(SSL_CTX* ctx, bool client, std::string_view host = {},
                                             bool is_ip = false) {
  auto impl = std::make_unique<TlsStream::Impl>();
  impl->ssl.reset(SSL_new(ctx));
  if (!impl->ssl) return OpensslError("SSL_new");
  BIO* in = NewInputBio(*impl);
  BIO* out = NewOutputBio(*impl);
  if (in == nullptr || out == nullptr) {
    BIO_free(in);
    BIO_free(out);
    return OpensslError("BIO_new");
  }
  SSL_set_bio(impl->ssl.get(), in, out);
  impl->in = in;
  impl->out = out;
  impl->client = client;
  if (client) {
    SSL* ssl = impl->ssl.get();
    const std::string name(host);
    if (is_ip) {
      // RFC 6066 §3: no SNI for an address; the certificate must name the address (iPAddress).
      if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str()) != 1) {
        return OpensslError("verify the origin as " + strings::Quote(name), Errc::kInvalidArgument);
      }
    } else if (SSL_set_tlsext_host_name(ssl, name.c_str()) != 1 ||
               SSL_set1_host(ssl, name.c_str()) != 1) {
      return OpensslError("verify the origin as " + strings::Quote(name), Errc::kInvalidArgument);
    }
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    SSL_set_connect_state(ssl);
  } else {
    SSL_set_accept_state(impl->ssl.get());
  }
  return std::make_unique<TlsStream>(std::move(impl));
}

}  // namespace

Result<std::unique_ptr<TlsStream>> TlsEngine::NewServerStream(std::string_view host, bool is_ip) {
  SRT_ASSIGN_OR_RETURN(SSL_CTX * ctx, impl_->LeafContext(host, is_ip));
  return NewStream(ctx, /*client=*/false);
}

Result<std::unique_ptr<TlsStream>> TlsEngine::NewClientStream(std::string_view host, bool is_ip) {
  return NewStream(impl_->client_ctx.get(), /*client=*/true, host, is_ip);
}

}  // namespace srt::proxy::mitm
