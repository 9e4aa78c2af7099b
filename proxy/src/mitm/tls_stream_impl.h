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
  BIO* out = nullptr;  // owned by ssl: ciphertext for the peer
  bool client = false;
  bool eof = false;
  std::string error;
};

}  // namespace srt::proxy::mitm
