// SPDX-License-Identifier: Apache-2.0
// mitm/tls_stream_impl.h: TlsStream's state, for tls_engine.cc, which creates streams. Internal.
#pragma once

#include <string>

#include "mitm/ossl.h"
#include "mitm/tls_stream.h"

namespace srt::proxy::mitm {

struct TlsStream::Impl {
  SslPtr ssl;
  BIO* in = nullptr;   // owned by ssl: ciphertext from the peer
  BIO* out = nullptr;  // owned by ssl: writes append to `output` (NewOutputBio)
  // Ciphertext for the peer: output[output_sent..]. The owner sends straight from it
  // (TlsStream::output/Consume), so records are copied once, by OpenSSL, on their way out.
  std::string output;
  size_t output_sent = 0;
  bool client = false;
  bool eof = false;
  std::string error;
};

// A BIO whose writes append to impl.output: a memory BIO the owner can send from in place.
[[nodiscard]] BIO* NewOutputBio(TlsStream::Impl& impl);

}  // namespace srt::proxy::mitm
