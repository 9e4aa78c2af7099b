// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a terminated tunnel's client side (mitm/tls_stream.h) fed arbitrary bytes as
// the client's ciphertext, in pieces the input chooses, then EOF. Properties: no crash, no leak,
// no read past what was fed; the stream never claims a finished handshake it did not have, and
// once in kError it stays there. (OpenSSL parses; this covers srt's state handling around it.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "mitm/tls_engine.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

srt::proxy::mitm::TlsEngine& Engine() {
  static std::unique_ptr<srt::proxy::mitm::TlsEngine> engine = [] {
    srt::proxy::mitm::TlsEngine::Options options;
    options.system_bundle_path = "/nonexistent";
    return std::move(*srt::proxy::mitm::TlsEngine::Create(options));
  }();
  return *engine;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using Status = srt::proxy::mitm::TlsStream::Status;
  auto stream = Engine().NewServerStream("origin.test", false);
  Require(stream.has_value());
  srt::proxy::mitm::TlsStream& s = **stream;
  std::string out;
  std::string plain;
  bool failed = false;
  size_t at = 0;
  while (at < size) {
    // The first byte of each piece is its length (1..256), then the piece.
    const size_t n = std::min<size_t>(size - at - 1, size_t{data[at]} + 1);
    s.Feed({reinterpret_cast<const char*>(data + at + 1), n});
    at += 1 + n;
    const Status hs = s.Handshake();
    if (failed) Require(hs == Status::kError);
    if (hs == Status::kError) failed = true;
    if (hs == Status::kOk) {
      Require(s.handshake_done());
      (void)s.Read(plain, 4096);
      Require(plain.size() <= size);
    }
    (void)s.Drain(out);
  }
  s.FeedEof();
  (void)s.Handshake();
  (void)s.Read(plain, 4096);
  s.Close();
  (void)s.Drain(out);
  return 0;
}
