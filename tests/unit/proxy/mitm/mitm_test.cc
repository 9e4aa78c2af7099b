// SPDX-License-Identifier: Apache-2.0
// mitm/: the ephemeral and loaded CA, leaf minting (SAN, validity, cache bound), the trust
// bundle, and two TlsStreams talking to each other through memory (a leaf verified against the
// engine's own CA, an origin refused when its CA is not trusted).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "mitm/certs.h"
#include "mitm/tls_engine.h"

namespace srt::proxy::mitm {
namespace {

class TempDir {
 public:
  TempDir() {
    char buf[] = "/tmp/srt-mitm-test-XXXXXX";
    path_ = mkdtemp(buf);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0600) {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    chmod(p.c_str(), mode);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string SubjectAltName(X509* cert) {
  GENERAL_NAMES* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  std::string out;
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    if (n->type == GEN_DNS) {
      out +=
          "DNS:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(n->d.dNSName)),
                               static_cast<size_t>(ASN1_STRING_length(n->d.dNSName)));
    } else if (n->type == GEN_IPADD) {
      out += "IP:" + std::to_string(ASN1_STRING_length(n->d.iPAddress)) + "bytes";
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

bool Verifies(X509* leaf, X509* ca, const char* host) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx);
  X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
  if (host != nullptr) X509_VERIFY_PARAM_set1_host(param, host, 0);
  const bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return ok;
}

TEST(CertsTest, EphemeralCaIsNamedAsUpstreamsAndIsACa) {
  Result<CaMaterial> ca = MakeEphemeralCa();
  ASSERT_TRUE(ca.has_value()) << ca.error().message();
  char cn[128];
  X509_NAME_get_text_by_NID(X509_get_subject_name(ca->cert.get()), NID_commonName, cn, sizeof cn);
  EXPECT_STREQ(cn, "sandbox-runtime ephemeral CA");
  EXPECT_EQ(X509_check_ca(ca->cert.get()), 1);
  EXPECT_EQ(EVP_PKEY_get_base_id(ca->key.get()), EVP_PKEY_EC);
  // Two CAs are two keys.
  Result<CaMaterial> other = MakeEphemeralCa();
  EXPECT_NE(EVP_PKEY_eq(ca->key.get(), other->key.get()), 1);
}

TEST(CertsTest, LeavesNameTheirHostAndChainToTheCa) {
  Result<CaMaterial> ca = MakeEphemeralCa();
  Result<PkeyPtr> key = NewEcKey();
  Result<X509Ptr> leaf =
      MintLeaf(*ca, key->get(), "api.example.com", false, std::chrono::hours(24));
  ASSERT_TRUE(leaf.has_value()) << leaf.error().message();
  EXPECT_EQ(SubjectAltName(leaf->get()), "DNS:api.example.com");
  EXPECT_TRUE(Verifies(leaf->get(), ca->cert.get(), "api.example.com"));
  EXPECT_FALSE(Verifies(leaf->get(), ca->cert.get(), "other.example.com"));
  EXPECT_EQ(X509_check_ca(leaf->get()), 0);
  // Short validity: a day from an hour ago.
  int days = 0;
  int secs = 0;
  ASSERT_EQ(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(leaf->get()),
                           X509_get0_notAfter(leaf->get())),
            1);
  EXPECT_EQ(days * 86400 + secs, 25 * 3600);

  Result<X509Ptr> v4 = MintLeaf(*ca, key->get(), "10.1.2.3", true, std::chrono::hours(1));
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(SubjectAltName(v4->get()), "IP:4bytes");
  Result<X509Ptr> v6 = MintLeaf(*ca, key->get(), "2001:db8::1", true, std::chrono::hours(1));
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(SubjectAltName(v6->get()), "IP:16bytes");

  // Nothing a client could smuggle into the SAN's config syntax.
  for (const char* evil : {"a.com,DNS:evil.com", "a.com,IP:1.2.3.4", "", "a b", "x\ny"}) {
    EXPECT_FALSE(MintLeaf(*ca, key->get(), evil, false, std::chrono::hours(1)).has_value()) << evil;
  }
  EXPECT_FALSE(MintLeaf(*ca, key->get(), "1.2.3.4,DNS:x", true, std::chrono::hours(1)).has_value());
}

TEST(CertsTest, LoadedCaFilesAreChecked) {
  TempDir dir;
  Result<CaMaterial> ca = MakeEphemeralCa();
  const std::string cert = dir.Write("ca.pem", CertificatePem(ca->cert.get()), 0644);
  const std::string key = dir.Write("ca.key", KeyPem(ca->key.get()), 0600);
  Result<CaMaterial> loaded = LoadCa(cert, key);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
  EXPECT_EQ(X509_cmp(loaded->cert.get(), ca->cert.get()), 0);

  const std::string loose = dir.Write("loose.key", KeyPem(ca->key.get()), 0640);
  Result<CaMaterial> r = LoadCa(cert, loose);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "tlsTerminate.caKeyPath '" + loose +
                                     "' has mode 0640: a CA key must not be accessible to group "
                                     "or others (chmod 600 it)");
  const std::string link = dir.path() + "/link.key";
  ASSERT_EQ(symlink(key.c_str(), link.c_str()), 0);
  r = LoadCa(cert, link);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(),
            "tlsTerminate.caKeyPath '" + link + "' is a symbolic link (refused; name the file)");
  const std::string cert_link = dir.path() + "/link.pem";
  ASSERT_EQ(symlink(cert.c_str(), cert_link.c_str()), 0);
  EXPECT_FALSE(LoadCa(cert_link, key).has_value());

  Result<CaMaterial> other = MakeEphemeralCa();
  const std::string other_key = dir.Write("other.key", KeyPem(other->key.get()), 0600);
  r = LoadCa(cert, other_key);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("does not belong to the certificate"), std::string::npos);

  Result<PkeyPtr> leaf_key = NewEcKey();
  Result<X509Ptr> leaf = MintLeaf(*ca, leaf_key->get(), "x.test", false, std::chrono::hours(1));
  const std::string leaf_pem = dir.Write("leaf.pem", CertificatePem(leaf->get()), 0644);
  const std::string leaf_key_pem = dir.Write("leaf.key", KeyPem(leaf_key->get()), 0600);
  r = LoadCa(leaf_pem, leaf_key_pem);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("not a CA certificate"), std::string::npos);
  EXPECT_FALSE(LoadCa(dir.path() + "/missing.pem", key).has_value());
}

// Moves bytes between two streams until neither has output left.
void Shuttle(TlsStream& a, TlsStream& b) {
  for (int i = 0; i < 20; ++i) {
    std::string ab;
    std::string ba;
    a.Drain(ab);
    b.Drain(ba);
    if (ab.empty() && ba.empty()) return;
    b.Feed(ab);
    a.Feed(ba);
    (void)a.Handshake();
    (void)b.Handshake();
  }
}

TEST(TlsEngineTest, AServerStreamIsTrustedThroughTheBundleAndCached) {
  TempDir dir;
  TlsEngine::Options options;
  options.system_bundle_path = dir.path() + "/no-system-bundle";
  options.max_cached_leaves = 2;
  Result<std::unique_ptr<TlsEngine>> engine = TlsEngine::Create(options);
  ASSERT_TRUE(engine.has_value()) << engine.error().message();
  // No system bundle: the bundle is the CA alone, and a note says so.
  EXPECT_EQ((*engine)->trust_bundle(), (*engine)->ca_pem());
  ASSERT_EQ((*engine)->notes().size(), 1u);

  // A second engine trusts the first's CA as an "extra" and so accepts its leaves.
  const std::string ca_file = dir.Write("proxy-ca.pem", (*engine)->trust_bundle(), 0644);
  TlsEngine::Options client_options;
  client_options.system_bundle_path = options.system_bundle_path;
  client_options.extra_ca_cert_paths = {ca_file, dir.path() + "/missing.pem"};
  Result<std::unique_ptr<TlsEngine>> client_engine = TlsEngine::Create(client_options);
  ASSERT_TRUE(client_engine.has_value());
  EXPECT_NE((*client_engine)->trust_bundle().find((*engine)->ca_pem()), std::string::npos);

  Result<std::unique_ptr<TlsStream>> server = (*engine)->NewServerStream("origin.test", false);
  Result<std::unique_ptr<TlsStream>> client =
      (*client_engine)->NewClientStream("origin.test", false);
  ASSERT_TRUE(server.has_value() && client.has_value());
  EXPECT_EQ((*client)->Handshake(), TlsStream::Status::kWantInput);
  Shuttle(**client, **server);
  ASSERT_TRUE((*client)->handshake_done()) << (*client)->error();
  ASSERT_TRUE((*server)->handshake_done()) << (*server)->error();
  ASSERT_EQ((*client)->Write("GET / HTTP/1.1\r\n\r\n"), TlsStream::Status::kOk);
  Shuttle(**client, **server);
  std::string got;
  EXPECT_EQ((*server)->Read(got, 1024), TlsStream::Status::kOk);
  EXPECT_EQ(got, "GET / HTTP/1.1\r\n\r\n");
  (*client)->Close();
  Shuttle(**client, **server);
  got.clear();
  EXPECT_EQ((*server)->Read(got, 1024), TlsStream::Status::kClosed);

  // The cache: one leaf per host, at most two kept.
  EXPECT_EQ((*engine)->leaves_minted(), 1u);
  ASSERT_TRUE((*engine)->NewServerStream("origin.test", false).has_value());
  EXPECT_EQ((*engine)->leaves_minted(), 1u);
  ASSERT_TRUE((*engine)->NewServerStream("a.test", false).has_value());
  ASSERT_TRUE((*engine)->NewServerStream("127.0.0.1", true).has_value());
  EXPECT_EQ((*engine)->leaves_minted(), 3u);
  EXPECT_EQ((*engine)->cached_leaves(), 2u);

  // A client that verifies another name refuses the leaf, with the reason.
  Result<std::unique_ptr<TlsStream>> server2 = (*engine)->NewServerStream("origin.test", false);
  Result<std::unique_ptr<TlsStream>> wrong = (*client_engine)->NewClientStream("other.test", false);
  (void)(*wrong)->Handshake();
  Shuttle(**wrong, **server2);
  EXPECT_EQ((*wrong)->Handshake(), TlsStream::Status::kError);
  EXPECT_EQ((*wrong)->error(), "certificate verify failed: hostname mismatch");

  // And one that does not trust the CA at all says so.
  Result<std::unique_ptr<TlsStream>> server3 = (*engine)->NewServerStream("origin.test", false);
  Result<std::unique_ptr<TlsStream>> untrusting = (*engine)->NewClientStream("origin.test", false);
  (void)(*untrusting)->Handshake();
  Shuttle(**untrusting, **server3);
  EXPECT_EQ((*untrusting)->Handshake(), TlsStream::Status::kError);
  EXPECT_EQ((*untrusting)->error(),
            "certificate verify failed: unable to get local issuer certificate");
}

// A peer that is a plain OpenSSL endpoint over memory BIOs, with OpenSSL's defaults except the
// TLS 1.3 suites it is given (empty: the defaults, AES-256-GCM first).
class PlainPeer {
 public:
  PlainPeer(bool server, const char* suites) {
    ctx_.reset(SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()));
    if (suites[0] != '\0') SSL_CTX_set_ciphersuites(ctx_.get(), suites);
    if (server) {
      Result<CaMaterial> ca = MakeEphemeralCa();
      Result<PkeyPtr> key = NewEcKey();
      Result<X509Ptr> leaf = MintLeaf(*ca, key->get(), "origin.test", false, std::chrono::hours(1));
      SSL_CTX_use_certificate(ctx_.get(), leaf->get());
      SSL_CTX_use_PrivateKey(ctx_.get(), key->get());
      ca_pem_ = CertificatePem(ca->cert.get());
    }
    ssl_.reset(SSL_new(ctx_.get()));
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(in_, -1);
    SSL_set_bio(ssl_.get(), in_, out_);
    if (server) {
      SSL_set_accept_state(ssl_.get());
    } else {
      SSL_set_connect_state(ssl_.get());
    }
  }
  // Moves bytes both ways until neither side has any; true once both handshakes are done.
  bool Talk(TlsStream& stream) {
    for (int i = 0; i < 20; ++i) {
      (void)SSL_do_handshake(ssl_.get());
      (void)stream.Handshake();
      std::string to_peer;
      stream.Drain(to_peer);
      char buf[16384];
      std::string to_stream;
      int n;
      while ((n = BIO_read(out_, buf, sizeof buf)) > 0)
        to_stream.append(buf, static_cast<size_t>(n));
      if (to_peer.empty() && to_stream.empty()) break;
      BIO_write(in_, to_peer.data(), static_cast<int>(to_peer.size()));
      stream.Feed(to_stream);
    }
    return SSL_is_init_finished(ssl_.get()) == 1 && stream.handshake_done();
  }
  std::string cipher() const { return SSL_get_cipher_name(ssl_.get()); }
  const std::string& ca_pem() const { return ca_pem_; }

 private:
  SslCtxPtr ctx_;
  SslPtr ssl_;
  BIO* in_ = nullptr;   // owned by ssl_
  BIO* out_ = nullptr;  // owned by ssl_
  std::string ca_pem_;
};

// Both legs prefer TLS_AES_128_GCM_SHA256 (bench/README.md: the proxy runs the cipher twice per
// byte); a client that puts ChaCha20 first (no AES hardware) still gets it.
TEST(TlsEngineTest, BothLegsPreferAes128GcmAndAChaChaClientKeepsChaCha) {
  TempDir dir;
  TlsEngine::Options options;
  options.system_bundle_path = dir.path() + "/no-system-bundle";
  Result<std::unique_ptr<TlsEngine>> engine = TlsEngine::Create(options);
  ASSERT_TRUE(engine.has_value()) << engine.error().message();

  // The client leg: srt's leaf towards a client with OpenSSL's defaults (AES-256-GCM first).
  Result<std::unique_ptr<TlsStream>> server = (*engine)->NewServerStream("origin.test", false);
  ASSERT_TRUE(server.has_value());
  PlainPeer client(/*server=*/false, "");
  ASSERT_TRUE(client.Talk(**server)) << (*server)->error();
  EXPECT_EQ(client.cipher(), "TLS_AES_128_GCM_SHA256");
  EXPECT_EQ((*server)->cipher(), "TLS_AES_128_GCM_SHA256");

  // A client that asks for ChaCha20-Poly1305 first gets it.
  Result<std::unique_ptr<TlsStream>> server2 = (*engine)->NewServerStream("origin.test", false);
  PlainPeer chacha(/*server=*/false, "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384");
  ASSERT_TRUE(chacha.Talk(**server2)) << (*server2)->error();
  EXPECT_EQ(chacha.cipher(), "TLS_CHACHA20_POLY1305_SHA256");

  // The origin leg: srt's client towards an origin with OpenSSL's defaults (which follows the
  // client's order).
  PlainPeer origin(/*server=*/true, "");
  TlsEngine::Options client_options;
  client_options.system_bundle_path = options.system_bundle_path;
  client_options.extra_ca_cert_paths = {dir.Write("origin-ca.pem", origin.ca_pem(), 0644)};
  Result<std::unique_ptr<TlsEngine>> client_engine = TlsEngine::Create(client_options);
  ASSERT_TRUE(client_engine.has_value());
  Result<std::unique_ptr<TlsStream>> up = (*client_engine)->NewClientStream("origin.test", false);
  ASSERT_TRUE(up.has_value());
  ASSERT_TRUE(origin.Talk(**up)) << (*up)->error();
  EXPECT_EQ(origin.cipher(), "TLS_AES_128_GCM_SHA256");
}

TEST(TlsEngineTest, CaFilesMustComeTogether) {
  TlsEngine::Options options;
  options.ca_cert_path = "/x.pem";
  Result<std::unique_ptr<TlsEngine>> engine = TlsEngine::Create(options);
  ASSERT_FALSE(engine.has_value());
  EXPECT_EQ(engine.error().message(),
            "tlsTerminate: caCertPath and caKeyPath must be provided together");
}

}  // namespace
}  // namespace srt::proxy::mitm

namespace srt::proxy::mitm {
namespace {

// `srt proxy --ca-fd`: one PEM text, key and certificate in either order; every failure names
// the descriptor and never quotes the key.
TEST(CertsTest, ACaFromOnePemTextIsChecked) {
  Result<CaMaterial> ca = MakeEphemeralCa();
  ASSERT_TRUE(ca.has_value());
  const std::string key = KeyPem(ca->key.get());
  const std::string cert = CertificatePem(ca->cert.get());
  for (const std::string& pem : {key + cert, cert + key}) {
    Result<CaMaterial> parsed = ParseCaPem(pem, "--ca-fd 5");
    ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
    EXPECT_EQ(X509_cmp(parsed->cert.get(), ca->cert.get()), 0);
  }
  auto error_of = [](std::string pem) {
    Result<CaMaterial> r = ParseCaPem(std::move(pem), "--ca-fd 5");
    return r.has_value() ? std::string("parsed") : r.error().message();
  };
  EXPECT_EQ(error_of(cert),
            "--ca-fd 5: no PEM private key in it (an encrypted key is not supported)");
  EXPECT_EQ(error_of(key), "--ca-fd 5: no PEM CERTIFICATE block in it");
  EXPECT_EQ(error_of("not pem at all"),
            "--ca-fd 5: no PEM private key in it (an encrypted key is not supported)");
  Result<CaMaterial> other = MakeEphemeralCa();
  const std::string other_key = KeyPem(other->key.get());
  EXPECT_EQ(error_of(other_key + cert),
            "--ca-fd 5: the private key does not belong to the certificate");
  EXPECT_EQ(error_of(std::string(kMaxCaFileBytes + 1, 'a')),
            "--ca-fd 5: larger than 1048576 bytes");
  // A leaf and its key: not a CA.
  Result<PkeyPtr> leaf_key = NewEcKey();
  Result<X509Ptr> leaf = MintLeaf(*ca, leaf_key->get(), "x.test", false, std::chrono::hours(1));
  EXPECT_EQ(error_of(KeyPem(leaf_key->get()) + CertificatePem(leaf->get())),
            "--ca-fd 5: not a CA certificate (basicConstraints CA:TRUE is needed)");
  // An encrypted key is refused, not prompted for (OpenSSL's default callback reads a tty).
  BioPtr bio(BIO_new(BIO_s_mem()));
  char pass[] = "secret";
  PEM_write_bio_PKCS8PrivateKey(bio.get(), ca->key.get(), EVP_aes_128_cbc(), pass, 6, nullptr,
                                nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  EXPECT_EQ(error_of(std::string(data, static_cast<size_t>(n)) + cert),
            "--ca-fd 5: no PEM private key in it (an encrypted key is not supported)");
}

TEST(TlsEngineTest, AnEngineTakesItsCaFromPemText) {
  Result<CaMaterial> ca = MakeEphemeralCa();
  TlsEngine::Options options;
  options.ca_pem = KeyPem(ca->key.get()) + CertificatePem(ca->cert.get());
  options.ca_pem_source = "--ca-fd 7";
  Result<std::unique_ptr<TlsEngine>> engine = TlsEngine::Create(options);
  ASSERT_TRUE(engine.has_value()) << engine.error().message();
  EXPECT_EQ((*engine)->ca_pem(), CertificatePem(ca->cert.get()));
  options.ca_pem = "junk";
  engine = TlsEngine::Create(options);
  ASSERT_FALSE(engine.has_value());
  EXPECT_EQ(engine.error().message(),
            "--ca-fd 7: no PEM private key in it (an encrypted key is not supported)");
}

}  // namespace
}  // namespace srt::proxy::mitm
