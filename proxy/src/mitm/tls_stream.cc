// SPDX-License-Identifier: Apache-2.0
#include "mitm/tls_stream.h"

#include <algorithm>
#include <cstring>

#include "mitm/tls_stream_impl.h"

namespace srt::proxy::mitm {
namespace {

int OutputWrite(BIO* bio, const char* data, int len) {
  if (len <= 0) return 0;
  static_cast<TlsStream::Impl*>(BIO_get_data(bio))->output.append(data, static_cast<size_t>(len));
  return len;
}

long OutputCtrl(BIO* bio, int cmd, long, void*) {  // NOLINT(google-runtime-int): OpenSSL's type
  const auto* impl = static_cast<const TlsStream::Impl*>(BIO_get_data(bio));
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_CTRL_PENDING:
    case BIO_CTRL_WPENDING:
      return static_cast<long>(impl->output.size() -
                               impl->output_sent);  // NOLINT(google-runtime-int)
    default:
      return 0;
  }
}

int InputRead(BIO* bio, char* data, int len) {
  BIO_clear_retry_flags(bio);
  auto* impl = static_cast<TlsStream::Impl*>(BIO_get_data(bio));
  const size_t held = impl->input_end - impl->input_begin;
  if (held == 0 || len <= 0) {
    if (impl->eof || len <= 0) return 0;
    BIO_set_retry_read(bio);
    return -1;
  }
  const size_t n = std::min(held, static_cast<size_t>(len));
  std::memcpy(data, impl->input.get() + impl->input_begin, n);
  impl->input_begin += n;
  if (impl->input_begin == impl->input_end) impl->input_begin = impl->input_end = 0;
  return static_cast<int>(n);
}

long InputCtrl(BIO* bio, int cmd, long, void*) {  // NOLINT(google-runtime-int): OpenSSL's type
  const auto* impl = static_cast<const TlsStream::Impl*>(BIO_get_data(bio));
  const size_t held = impl->input_end - impl->input_begin;
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_CTRL_PENDING:
      return static_cast<long>(held);  // NOLINT(google-runtime-int)
    case BIO_CTRL_EOF:
      return impl->eof && held == 0 ? 1 : 0;
    default:
      return 0;
  }
}

const BIO_METHOD* InputMethod() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "srt tls input");
    if (m != nullptr) {
      BIO_meth_set_read(m, InputRead);
      BIO_meth_set_ctrl(m, InputCtrl);
    }
    return m;
  }();
  return method;
}

const BIO_METHOD* OutputMethod() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "srt tls output");
    if (m != nullptr) {
      BIO_meth_set_write(m, OutputWrite);
      BIO_meth_set_ctrl(m, OutputCtrl);
    }
    return m;
  }();
  return method;
}

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

BIO* NewOutputBio(TlsStream::Impl& impl) {
  const BIO_METHOD* method = OutputMethod();
  BIO* bio = method != nullptr ? BIO_new(method) : nullptr;
  if (bio == nullptr) return nullptr;
  BIO_set_data(bio, &impl);
  BIO_set_init(bio, 1);
  return bio;
}

BIO* NewInputBio(TlsStream::Impl& impl) {
  const BIO_METHOD* method = InputMethod();
  BIO* bio = method != nullptr ? BIO_new(method) : nullptr;
  if (bio == nullptr) return nullptr;
  BIO_set_data(bio, &impl);
  BIO_set_init(bio, 1);
  return bio;
}

TlsStream::TlsStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TlsStream::~TlsStream() = default;

void TlsStream::Feed(std::string_view ciphertext) {
  if (ciphertext.empty()) return;
  const std::span<char> space = InputSpace(ciphertext.size());
  std::memcpy(space.data(), ciphertext.data(), ciphertext.size());
  CommitInput(ciphertext.size());
}

std::span<char> TlsStream::InputSpace(size_t n) {
  Impl& s = *impl_;
  if (s.input_cap - s.input_end < n) {
    const size_t held = s.input_end - s.input_begin;
    if (s.input_cap - held >= n && s.input_begin > 0) {
      // The unread tail (a part of a record, typically) moves to the front.
      std::memmove(s.input.get(), s.input.get() + s.input_begin, held);
    } else {
      const size_t cap = std::max(held + n, s.input_cap * 2);
      auto grown = std::make_unique_for_overwrite<char[]>(cap);
      if (held > 0) std::memcpy(grown.get(), s.input.get() + s.input_begin, held);
      s.input = std::move(grown);
      s.input_cap = cap;
    }
    s.input_begin = 0;
    s.input_end = held;
  }
  return {s.input.get() + s.input_end, n};
}

void TlsStream::CommitInput(size_t n) {
  impl_->input_end += std::min(n, impl_->input_cap - impl_->input_end);
}

void TlsStream::FeedEof() { impl_->eof = true; }

size_t TlsStream::Drain(std::string& out) {
  const std::string_view pending = output();
  out.append(pending);
  Consume(pending.size());
  return pending.size();
}

std::string_view TlsStream::output() const {
  return std::string_view(impl_->output).substr(impl_->output_sent);
}

void TlsStream::Consume(size_t n) {
  impl_->output_sent += std::min(n, impl_->output.size() - impl_->output_sent);
  if (impl_->output_sent < impl_->output.size()) return;
  // Emptied: the capacity stays for the next records (a busy stream would otherwise grow it
  // again, copy by copy, for every burst); Trim() frees it once the stream is idle.
  impl_->output_sent = 0;
  impl_->output.clear();
}

void TlsStream::Trim() {
  if (impl_->output_sent == 0 && impl_->output.empty()) std::string().swap(impl_->output);
  if (impl_->input_begin == impl_->input_end) {
    impl_->input.reset();
    impl_->input_cap = impl_->input_begin = impl_->input_end = 0;
  }
}

size_t TlsStream::pending_output() const { return impl_->output.size() - impl_->output_sent; }
size_t TlsStream::pending_input() const { return impl_->input_end - impl_->input_begin; }

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

std::string TlsStream::cipher() const { return SSL_get_cipher_name(impl_->ssl.get()); }

}  // namespace srt::proxy::mitm
