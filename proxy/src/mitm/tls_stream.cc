// SPDX-License-Identifier: Apache-2.0
#include "mitm/tls_stream.h"

#include "mitm/tls_stream_impl.h"

namespace srt::proxy::mitm {
namespace {

// What went wrong after an SSL_* call returned `rc`, as text.
std::string Describe(SSL* ssl, int err, bool client) {
  std::string text = TakeOpensslErrors();
  if (client) {
    const long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) {
      text = std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify);
    }
  }
  if (err == SSL_ERROR_SYSCALL && text == "unknown error") text = "connection closed mid-handshake";
  return text;
}

}  // namespace

TlsStream::TlsStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TlsStream::~TlsStream() = default;

void TlsStream::Feed(std::string_view ciphertext) {
  if (!ciphertext.empty()) {
    (void)BIO_write(impl_->in, ciphertext.data(), static_cast<int>(ciphertext.size()));
  }
}

void TlsStream::FeedEof() {
  impl_->eof = true;
  BIO_set_mem_eof_return(impl_->in, 0);  // reads past the buffered bytes now see EOF
}

size_t TlsStream::Drain(std::string& out) {
  const size_t pending = BIO_ctrl_pending(impl_->out);
  if (pending == 0) return 0;
  const size_t old = out.size();
  out.resize(old + pending);
  const int n = BIO_read(impl_->out, out.data() + old, static_cast<int>(pending));
  out.resize(old + static_cast<size_t>(n > 0 ? n : 0));
  return out.size() - old;
}

size_t TlsStream::pending_output() const { return BIO_ctrl_pending(impl_->out); }

TlsStream::Status TlsStream::Handshake() {
  if (!impl_->error.empty()) return Status::kError;
  if (SSL_is_init_finished(impl_->ssl.get())) return Status::kOk;
  ERR_clear_error();
  const int rc = SSL_do_handshake(impl_->ssl.get());
  if (rc == 1) return Status::kOk;
  const int err = SSL_get_error(impl_->ssl.get(), rc);
  if (err == SSL_ERROR_WANT_READ && !impl_->eof) return Status::kWantInput;
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_ZERO_RETURN) {
    impl_->error = "connection closed mid-handshake";
    return Status::kError;
  }
  impl_->error = Describe(impl_->ssl.get(), err, impl_->client);
  return Status::kError;
}

bool TlsStream::handshake_done() const { return SSL_is_init_finished(impl_->ssl.get()) == 1; }

TlsStream::Status TlsStream::Read(std::string& out, size_t max) {
  if (!impl_->error.empty()) return Status::kError;
  const size_t start = out.size();
  while (out.size() - start < max) {
    char buf[16 * 1024];
    const size_t want = std::min(sizeof buf, max - (out.size() - start));
    ERR_clear_error();
    size_t got = 0;
    const int rc = SSL_read_ex(impl_->ssl.get(), buf, want, &got);
    if (rc == 1) {
      out.append(buf, got);
      continue;
    }
    const int err = SSL_get_error(impl_->ssl.get(), rc);
    if (err == SSL_ERROR_WANT_READ) {
      if (impl_->eof) return out.size() > start ? Status::kOk : Status::kClosed;
      if (!handshake_done() && out.size() == start) return Status::kWantInput;
      return Status::kOk;
    }
    if (err == SSL_ERROR_ZERO_RETURN) return out.size() > start ? Status::kOk : Status::kClosed;
    impl_->error = Describe(impl_->ssl.get(), err, impl_->client);
    return out.size() > start ? Status::kOk : Status::kError;
  }
  return Status::kOk;
}

TlsStream::Status TlsStream::Write(std::string_view plaintext) {
  if (!impl_->error.empty()) return Status::kError;
  while (!plaintext.empty()) {
    ERR_clear_error();
    size_t written = 0;
    const int rc = SSL_write_ex(impl_->ssl.get(), plaintext.data(), plaintext.size(), &written);
    if (rc != 1) {
      // A memory BIO never fills, so anything but success is fatal.
      impl_->error = Describe(impl_->ssl.get(), SSL_get_error(impl_->ssl.get(), rc), false);
      return Status::kError;
    }
    plaintext.remove_prefix(written);
  }
  return Status::kOk;
}

void TlsStream::Close() {
  if (impl_->error.empty() && handshake_done()) (void)SSL_shutdown(impl_->ssl.get());
  ERR_clear_error();
}

const std::string& TlsStream::error() const { return impl_->error; }

std::string TlsStream::version() const { return SSL_get_version(impl_->ssl.get()); }

}  // namespace srt::proxy::mitm
