// SPDX-License-Identifier: Apache-2.0
#include "mitm/certs.h"

#include <fcntl.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/strings.h"
#include "base/unique_fd.h"

namespace srt::proxy::mitm {
namespace {

struct ExtFree {
  void operator()(X509_EXTENSION* e) const { X509_EXTENSION_free(e); }
};

// Adds one v3 extension given in OpenSSL's config syntax ("critical,CA:TRUE").
Result<void> AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, ExtFree> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpensslError(std::string("add certificate extension ") + OBJ_nid2sn(nid));
  }
  return Ok();
}

// A random positive 127-bit serial (RFC 5280 §4.1.2.2: at most 20 octets, positive).
Result<void> SetRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return OpensslError("random serial");
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;  // never zero, never negative
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn(BN_bin2bn(bytes, sizeof bytes, nullptr), BN_free);
  if (!bn || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) == nullptr) {
    return OpensslError("set serial");
  }
  return Ok();
}

Result<void> SetValidity(X509* cert, std::chrono::seconds from_now_back,
                         std::chrono::seconds lifetime) {
  if (X509_gmtime_adj(X509_getm_notBefore(cert), -static_cast<long>(from_now_back.count())) ==
          nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert), static_cast<long>(lifetime.count())) == nullptr) {
    return OpensslError("set validity");
  }
  return Ok();
}

Result<void> AddName(X509_NAME* name, const char* field, std::string_view value) {
  if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(value.data()),
                                 static_cast<int>(value.size()), -1, 0) != 1) {
    return OpensslError("certificate name");
  }
  return Ok();
}

// A host that can go into a subjectAltName config string as it is: the characters a canonical
// host has (filter/host.h), so no ',' or ':' could add a name of the client's choosing.
bool SafeDnsName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool SafeIp(std::string_view host) {
  if (host.empty() || host.size() > 45) return false;
  for (char c : host) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
                    c == '.' || c == ':';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

Result<PkeyPtr> NewEcKey() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpensslError("generate an EC P-256 key");
  return key;
}

Result<CaMaterial> MakeEphemeralCa() {
  SRT_ASSIGN_OR_RETURN(PkeyPtr key, NewEcKey());
  X509Ptr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1) return OpensslError("new CA certificate");
  SRT_RETURN_IF_ERROR(SetRandomSerial(cert.get()));
  SRT_RETURN_IF_ERROR(
      SetValidity(cert.get(), std::chrono::hours(1),
                  std::chrono::duration_cast<std::chrono::seconds>(kEphemeralCaLifetime)));
  X509_NAME* name = X509_get_subject_name(cert.get());
  SRT_RETURN_IF_ERROR(AddName(name, "O", kEphemeralCaOrganization));
  SRT_RETURN_IF_ERROR(AddName(name, "CN", kEphemeralCaCommonName));
  if (X509_set_issuer_name(cert.get(), name) != 1 || X509_set_pubkey(cert.get(), key.get()) != 1) {
    return OpensslError("CA certificate");
  }
  X509* c = cert.get();
  SRT_RETURN_IF_ERROR(AddExtension(c, c, NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  SRT_RETURN_IF_ERROR(AddExtension(c, c, NID_key_usage, "critical,keyCertSign,cRLSign"));
  SRT_RETURN_IF_ERROR(AddExtension(c, c, NID_subject_key_identifier, "hash"));
  SRT_RETURN_IF_ERROR(AddExtension(c, c, NID_authority_key_identifier, "keyid:always"));
  if (X509_sign(c, key.get(), EVP_sha256()) == 0) return OpensslError("sign the CA certificate");
  return CaMaterial{std::move(cert), std::move(key)};
}

namespace {

// What `fd` (opened from `path`) holds, at most `limit` bytes; it must be a regular file.
Result<std::string> ReadOpenFile(int fd, const std::string& path, size_t limit) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return SysError("stat " + strings::Quote(path));
  if (!S_ISREG(st.st_mode)) {
    return MakeError(Errc::kInvalidArgument, strings::Quote(path) + " is not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > limit) {
    return MakeError(Errc::kInvalidArgument,
                     strings::Quote(path) + " is larger than " + std::to_string(limit) + " bytes");
  }
  std::string out;
  char buf[16 * 1024];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return SysError("read " + strings::Quote(path));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > limit) {
      return MakeError(Errc::kInvalidArgument, strings::Quote(path) + " is larger than " +
                                                   std::to_string(limit) + " bytes");
    }
  }
  return out;
}

}  // namespace

Result<std::string> ReadSmallFile(const std::string& path, size_t limit) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
  if (!fd) {
    if (errno == ELOOP) {
      return MakeError(Errc::kPermissionDenied, "open " + strings::Quote(path) +
                                                    ": a symbolic link (refused; name the file)");
    }
    const Errc code = errno == ENOENT ? Errc::kNotFound : Errc::kSystem;
    Error e = SysError("open " + strings::Quote(path));
    return MakeError(code, e.message());
  }
  return ReadOpenFile(fd.get(), path, limit);
}

Result<CaMaterial> LoadCa(const std::string& cert_path, const std::string& key_path) {
  // The key first: its mode is checked on the descriptor that is read (no race with a chmod).
  UniqueFd fd(open(key_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
  if (!fd) {
    if (errno == ELOOP) {
      return MakeError(Errc::kPermissionDenied, "tlsTerminate.caKeyPath " +
                                                    strings::Quote(key_path) +
                                                    " is a symbolic link (refused; name the file)");
    }
    return SysError("open tlsTerminate.caKeyPath " + strings::Quote(key_path));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return SysError("stat " + strings::Quote(key_path));
  if (!S_ISREG(st.st_mode)) {
    return MakeError(Errc::kInvalidArgument, "tlsTerminate.caKeyPath " + strings::Quote(key_path) +
                                                 " is not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return MakeError(Errc::kPermissionDenied,
                     "tlsTerminate.caKeyPath " + strings::Quote(key_path) + " has mode " + mode +
                         ": a CA key must not be accessible to group or others (chmod 600 it)");
  }
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    return MakeError(Errc::kPermissionDenied, "tlsTerminate.caKeyPath " + strings::Quote(key_path) +
                                                  " belongs to another user (uid " +
                                                  std::to_string(st.st_uid) + ")");
  }
  // Read through the descriptor whose mode and owner were just checked.
  SRT_ASSIGN_OR_RETURN(std::string key_pem, ReadOpenFile(fd.get(), key_path, kMaxCaFileBytes));
  fd.reset();
  SRT_ASSIGN_OR_RETURN(std::string cert_pem, ReadSmallFile(cert_path, kMaxCaFileBytes));

  return CaFromPem(key_pem, cert_pem,
                   {"tlsTerminate.caKeyPath " + strings::Quote(key_path),
                    "tlsTerminate.caCertPath " + strings::Quote(cert_path),
                    "tlsTerminate: the key in " + strings::Quote(key_path) +
                        " does not belong to the certificate in " + strings::Quote(cert_path)});
}

Result<CaMaterial> CaFromPem(std::string& key_pem, std::string_view cert_pem,
                             const CaPemNames& names) {
  // The certificates first: `cert_pem` may be `key_pem` itself (ParseCaPem), wiped below.
  std::vector<X509Ptr> certs = ReadPemCertificates(cert_pem);
  BioPtr key_bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  // No passphrase prompt: OpenSSL's default callback would read one from the terminal.
  auto no_passphrase = [](char*, int, int, void*) { return 0; };
  PkeyPtr key(key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, no_passphrase, nullptr)
                      : nullptr);
  key_bio.reset();
  OPENSSL_cleanse(key_pem.data(), key_pem.size());
  if (!key) {
    // OpenSSL's reasons name no key material; they are dropped all the same (a key's bytes
    // never go into a message).
    ERR_clear_error();
    return MakeError(Errc::kInvalidArgument,
                     names.key + ": no PEM private key in it (an encrypted key is not supported)");
  }
  if (certs.empty()) {
    ERR_clear_error();
    return MakeError(Errc::kInvalidArgument, names.cert + ": no PEM CERTIFICATE block in it");
  }
  X509Ptr cert = std::move(certs.front());
  if (X509_check_ca(cert.get()) == 0) {
    return MakeError(Errc::kInvalidArgument,
                     names.cert + ": not a CA certificate (basicConstraints CA:TRUE is needed)");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return MakeError(Errc::kInvalidArgument, names.mismatch);
  }
  return CaMaterial{std::move(cert), std::move(key)};
}

Result<CaMaterial> ParseCaPem(std::string pem, std::string_view source) {
  const std::string what(source);
  if (pem.size() > kMaxCaFileBytes) {
    OPENSSL_cleanse(pem.data(), pem.size());
    return MakeError(Errc::kInvalidArgument,
                     what + ": larger than " + std::to_string(kMaxCaFileBytes) + " bytes");
  }
  return CaFromPem(pem, pem,
                   {what, what, what + ": the private key does not belong to the certificate"});
}

Result<X509Ptr> MintLeaf(const CaMaterial& ca, EVP_PKEY* leaf_key, std::string_view host,
                         bool is_ip, std::chrono::seconds lifetime) {
  if (is_ip ? !SafeIp(host) : !SafeDnsName(host)) {
    return MakeError(Errc::kInvalidArgument,
                     "mint a certificate: " + strings::Quote(host) + " is not a host name");
  }
  X509Ptr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1) return OpensslError("new leaf certificate");
  SRT_RETURN_IF_ERROR(SetRandomSerial(cert.get()));
  SRT_RETURN_IF_ERROR(SetValidity(cert.get(), std::chrono::hours(1), lifetime));
  // Never past the CA: a verifier would refuse the chain anyway, with a less clear error.
  if (ASN1_TIME_compare(X509_get0_notAfter(ca.cert.get()), X509_get0_notAfter(cert.get())) < 0 &&
      X509_set1_notAfter(cert.get(), X509_get0_notAfter(ca.cert.get())) != 1) {
    return OpensslError("leaf validity");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  // A CN is at most 64 characters (RFC 5280 ub-common-name); the SAN is what clients check.
  SRT_RETURN_IF_ERROR(AddName(name, "CN", host.substr(0, 64)));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.cert.get())) != 1 ||
      X509_set_pubkey(cert.get(), leaf_key) != 1) {
    return OpensslError("leaf certificate");
  }
  X509* c = cert.get();
  X509* issuer = ca.cert.get();
  const std::string san = (is_ip ? "IP:" : "DNS:") + std::string(host);
  SRT_RETURN_IF_ERROR(AddExtension(c, issuer, NID_basic_constraints, "critical,CA:FALSE"));
  SRT_RETURN_IF_ERROR(AddExtension(c, issuer, NID_key_usage, "critical,digitalSignature"));
  SRT_RETURN_IF_ERROR(AddExtension(c, issuer, NID_ext_key_usage, "serverAuth"));
  SRT_RETURN_IF_ERROR(AddExtension(c, issuer, NID_subject_alt_name, san.c_str()));
  SRT_RETURN_IF_ERROR(AddExtension(c, issuer, NID_subject_key_identifier, "hash"));
  SRT_RETURN_IF_ERROR(AddExtension(c, issuer, NID_authority_key_identifier, "keyid:always"));
  if (X509_sign(c, ca.key.get(), EVP_sha256()) == 0) return OpensslError("sign a leaf");
  return cert;
}

std::string CertificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return "";
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

std::vector<X509Ptr> ReadPemCertificates(std::string_view text) {
  std::vector<X509Ptr> out;
  BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) return out;
  for (;;) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) break;
    out.push_back(std::move(cert));
  }
  ERR_clear_error();  // the end of the input is reported as an error
  return out;
}

}  // namespace srt::proxy::mitm
