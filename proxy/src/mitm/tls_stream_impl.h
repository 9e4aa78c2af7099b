// SPDX-License-Identifier: Apache-2.0
// mitm/tls_stream_impl.h: TlsStream's state, for tls_engine.cc, which creates streams. Internal.
#pragma once

#include <memory>
#include <string>

#include "mitm/ossl.h"
#include "mitm/tls_stream.h"

namespace srt::proxy::mitm {

struct TlsStream::Impl {
  SslPtr ssl;
  BIO* in = nullptr;   // owned by ssl: reads take from `input` (NewInputBio)
  BIO* out = nullptr;  // owned by ssl: writes append to `output` (NewOutputBio)
  // Ciphertext for the peer: output[output_sent..]. The owner sends straight from it
  // (TlsStream::output/Consume), so records are copied once, by OpenSSL, on their way out.
  std::string output;
  // Ciphertext from the peer: input[input_begin..input_end) of input_cap bytes. The owner may
  // receive into it in place (TlsStream::InputSpace/CommitInput), so records are copied once,
  // by OpenSSL, into its record buffer (a memory BIO would zero, copy and compact them again).
  std::unique_ptr<char[]> input;
  size_t input_cap = 0;
  size_t input_begin = 0;
  size_t input_end = 0;
  size_t output_sent = 0;
  bool client = false;
  bool eof = false;
  std::string error;
};

// A BIO whose writes append to impl.output: a memory BIO the owner can send from in place.
[[nodiscard]] BIO* NewOutputBio(TlsStream::Impl& impl);
// A BIO whose reads take from impl.input: empty means "more to come" (a retry) until impl.eof,
// then EOF.
[[nodiscard]] BIO* NewInputBio(TlsStream::Impl& impl);

}  // namespace srt::proxy::mitm
