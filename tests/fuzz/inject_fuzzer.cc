// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: credential injection (inject/injector.h). The input is split into secrets
// and a stream: byte 0 = number of secrets (0..7), then per secret a length byte and that many
// bytes of sentinel, a length byte and the real value; the rest is the stream, fed in chunks
// whose sizes come from the stream itself. Properties: the chunked output equals the one-shot
// output; a fixed-length rewriter never changes the length; the hold-back stays below the
// longest pattern; the stream as a chunked body, its data rewritten in place by FramedRewriter
// with ChunkedDecoder's data spans, de-chunks to the unframed fixed-length rewrite.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/host.h"
#include "http/chunked_decoder.h"
#include "inject/injector.h"

namespace {

using srt::CredentialSecret;
using srt::Host;
using srt::proxy::http::ChunkedDecoder;
using srt::proxy::inject::FramedRewriter;
using srt::proxy::inject::Injector;
using srt::proxy::inject::Rewriter;

void Require(bool condition) {
  if (!condition) std::abort();
}

std::string Chunked(Rewriter& r, std::string_view in, std::string_view sizes) {
  std::string out;
  size_t i = 0;
  size_t k = 0;
  while (i < in.size()) {
    const size_t n =
        sizes.empty() ? 1 : 1 + static_cast<unsigned char>(sizes[k++ % sizes.size()]) % 64;
    r.Feed(in.substr(i, std::min(n, in.size() - i)), out);
    i += n;
  }
  r.Finish(out);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (in.empty()) return 0;
  const size_t count = static_cast<unsigned char>(in[0]) % 8;
  in.remove_prefix(1);
  std::vector<CredentialSecret> secrets;
  Host host;
  host.text = "api.example.com";
  auto pattern = srt::ParseDomainPattern("api.example.com", srt::PatternList::kAllow);
  Require(pattern.has_value());
  for (size_t i = 0; i < count; ++i) {
    std::string parts[2];
    for (std::string& part : parts) {
      if (in.empty()) return 0;
      const size_t n = 1 + static_cast<unsigned char>(in[0]) % 48;
      in.remove_prefix(1);
      if (in.size() < n) return 0;
      part = std::string(in.substr(0, n));
      in.remove_prefix(n);
    }
    secrets.push_back({"s" + std::to_string(i), parts[0], parts[1], {*pattern}});
  }
  auto injector = Injector::Build(secrets);
  const std::string_view sizes = in.substr(0, std::min<size_t>(in.size(), 8));

  for (bool fixed : {false, true}) {
    auto whole = injector->ForRequest(host, {.fixed_length = fixed});
    const std::string one = whole->Rewrite(in);
    auto chunked = injector->ForRequest(host, {.fixed_length = fixed});
    Require(Chunked(*chunked, in, sizes) == one);
    if (fixed) Require(one.size() == in.size());
    auto back = injector->ForResponse(fixed);
    const std::string two = back->Rewrite(in);
    auto back_chunked = injector->ForResponse(fixed);
    Require(Chunked(*back_chunked, in, sizes) == two);
    if (fixed) Require(two.size() == in.size());
  }
  // Framed: the stream as a chunked body (chunk sizes from `sizes`), fed in pieces, the data
  // spans from ChunkedDecoder; de-chunked, the output is the unframed fixed-length rewrite.
  {
    std::string framed;
    size_t i = 0;
    size_t k = 0;
    while (i < in.size()) {
      const size_t n =
          std::min(in.size() - i,
                   sizes.empty() ? size_t{3}
                                 : 1 + static_cast<unsigned char>(sizes[k++ % sizes.size()]) % 9);
      char hex[32];
      std::snprintf(hex, sizeof hex, "%zx", n);
      framed += std::string(hex) + "\r\n" + std::string(in.substr(i, n)) + "\r\n";
      i += n;
    }
    framed += "0\r\n\r\n";
    ChunkedDecoder decoder;
    FramedRewriter r(injector->ForResponse(/*fixed_length=*/true));
    std::string out;
    for (size_t at = 0; at < framed.size(); at += 7) {
      const std::string_view piece = std::string_view(framed).substr(at, 7);
      std::vector<std::pair<size_t, size_t>> spans;
      ChunkedDecoder::Step step = decoder.Feed(piece, &spans);
      Require(step.status != srt::proxy::ParseStatus::kError);
      Require(step.consumed == piece.size());
      for (const auto& [b, e] : spans) Require(b < e && e <= piece.size());
      r.Feed(piece, spans, out);
    }
    r.Finish(out);
    Require(out.size() == framed.size());
    // De-chunk the output with the same framing.
    std::string payload;
    ChunkedDecoder again;
    std::vector<std::pair<size_t, size_t>> spans;
    Require(again.Feed(out, &spans).status == srt::proxy::ParseStatus::kDone);
    for (const auto& [b, e] : spans) payload += out.substr(b, e - b);
    Require(payload == injector->ForResponse(/*fixed_length=*/true)->Rewrite(in));
  }
  // Byte by byte, the hold-back stays below the longest pattern.
  auto r = injector->ForRequest(host);
  std::string out;
  for (char c : in) {
    r->Feed(std::string_view(&c, 1), out);
    Require(r->held() < std::max<size_t>(1, injector->max_pattern_length()));
  }
  return 0;
}
