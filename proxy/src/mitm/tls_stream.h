// SPDX-License-Identifier: Apache-2.0
// mitm/tls_stream.h: one TLS connection (server side towards a sandboxed client, or client side
// towards an origin) as a pure byte transformer over OpenSSL memory BIOs: the owner feeds it the
// ciphertext its socket read and sends the ciphertext it drains; no socket, no blocking, no
// callbacks, so it runs on the proxy's event loop as the session's state machine dictates.
//
// Usage protocol (server/terminated_session.cc):
//   stream = engine.NewServerStream(host) / NewClientStream(host)   (mitm/tls_engine.h)
//   on socket input:  stream->Feed(bytes)   (EOF: FeedEof())
//   then Handshake() until kOk, then Read(plain, max) / Write(plain)
//   after each call:  stream->Drain(out) and send `out` to the socket (or send output() and
//                     Consume() what went)
// kError is final: error() says why (OpenSSL's reason, and for a client stream the certificate
// verification result, e.g. "certificate verify failed: unable to get local issuer certificate").
// Memory: Feed() buffers what it is given (the owner bounds what it reads); Write() grows the
// output by about the plaintext's size (the owner bounds it with pending_output()).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace srt::proxy::mitm {

class TlsStream {
 public:
  enum class Status {
    kOk,         // done (Handshake), or progress (Read: bytes appended, possibly zero)
    kWantInput,  // needs more ciphertext from the peer
    kClosed,     // the peer closed the TLS connection (close_notify or EOF)
    kError,      // fatal; see error()
  };

  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  // Ciphertext the peer sent.
  void Feed(std::string_view ciphertext);
  // The same without a copy: room for n bytes of ciphertext at the end of the input, valid
  // until the next call on the stream; CommitInput(m) once m <= n bytes of it are written.
  [[nodiscard]] std::span<char> InputSpace(size_t n);
  void CommitInput(size_t n);
  // The peer's socket reached EOF after everything fed so far.
  void FeedEof();
  // Appends the ciphertext to send to the peer to `out`; returns how many bytes.
  size_t Drain(std::string& out);
  // The same without a copy: the ciphertext waiting for the peer, valid until the next call on
  // the stream; Consume(n) once n bytes of it are sent.
  [[nodiscard]] std::string_view output() const;
  void Consume(size_t n);
  // Frees the input and output buffers when they are empty (an idle stream holds no burst's
  // worth of them).
  void Trim();
  [[nodiscard]] size_t pending_output() const;
  // Ciphertext fed and not consumed by the TLS engine yet.
  [[nodiscard]] size_t pending_input() const;

  Status Handshake();
  [[nodiscard]] bool handshake_done() const;
  // Decrypts into `out`, appending at most `max` bytes. kOk even when nothing was available
  // but the stream is healthy and more input will tell (then `out` is unchanged and the
  // owner waits for the socket); kWantInput only before the handshake is done.
  Status Read(std::string& out, size_t max);
  // Encrypts all of `plaintext` into the output.
  Status Write(std::string_view plaintext);
  // Queues a close_notify alert.
  void Close();

  [[nodiscard]] const std::string& error() const;
  // The TLS version negotiated ("TLSv1.3"), for debug logs.
  [[nodiscard]] std::string version() const;
  // The cipher suite negotiated ("TLS_AES_128_GCM_SHA256"), for debug logs and tests.
  [[nodiscard]] std::string cipher() const;

  struct Impl;
  explicit TlsStream(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace srt::proxy::mitm
