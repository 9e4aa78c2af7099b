// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: HTTP response heads (http/head_parser.h), BodyFraming for GET, HEAD and
// CONNECT, and ChunkedDecoder on arbitrary streams. Properties: every error is a 502; a head
// re-parses identically from its own bytes and in two pieces; a chunked body ends at the same
// byte whether fed whole, byte by byte or split, and a decoder never accepts more than it is fed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "http/chunked_decoder.h"
#include "http/head_parser.h"

namespace {

using namespace srt::proxy;        // NOLINT(google-build-using-namespace)
using namespace srt::proxy::http;  // NOLINT(google-build-using-namespace)

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

struct Outcome {
  ParseStatus status;
  size_t body;
};

Outcome Decode(std::span<const char> in, size_t piece, const ChunkedLimits& limits) {
  ChunkedDecoder d(limits);
  size_t total = 0;
  for (size_t i = 0; i < in.size(); i += piece) {
    std::span<const char> p = in.subspan(i, std::min(piece, in.size() - i));
    ChunkedDecoder::Step s = d.Feed(p);
    Require(s.consumed <= p.size());
    total += s.consumed;
    if (s.status != ParseStatus::kNeedMore) {
      Require(d.Feed(p).consumed == 0);
      return {s.status, s.status == ParseStatus::kError ? 0 : total};
    }
    Require(s.consumed == p.size());
  }
  Require(d.total() == total);
  return {ParseStatus::kNeedMore, total};
}

void CheckChunked(std::span<const char> in) {
  ChunkedLimits limits;
  limits.max_chunk_line_bytes = 64;
  limits.max_trailer_bytes = 256;
  Outcome whole = Decode(in, in.size() == 0 ? 1 : in.size(), limits);
  Outcome bytes = Decode(in, 1, limits);
  Outcome sevens = Decode(in, 7, limits);
  Require(whole.status == bytes.status && whole.body == bytes.body);
  Require(whole.status == sevens.status && whole.body == sevens.body);
}

Request MakeRequest(const char* head) {
  std::string_view h(head);
  return ParseRequestHead(std::span<const char>(h.data(), h.size())).request;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const char> in(reinterpret_cast<const char*>(data), size);
  CheckChunked(in);

  Limits limits;
  ResponseHeadResult r = ParseResponseHead(in, limits);
  if (r.status == ParseStatus::kError) {
    Require(r.http_error == 502 && !r.error.empty());
    return 0;
  }
  if (r.status == ParseStatus::kNeedMore) {
    Require(r.resume <= size);
    return 0;
  }
  Require(r.consumed > 0 && r.consumed <= size);
  Require(r.response.status >= 100 && r.response.status <= 599);
  ResponseHeadResult again = ParseResponseHead(in.first(r.consumed), limits);
  Require(again.status == ParseStatus::kDone && again.consumed == r.consumed &&
          again.response == r.response);
  const size_t cut = size > 1 ? static_cast<uint8_t>(in[size - 1]) % r.consumed : 0;
  ResponseHeadResult first = ParseResponseHead(in.first(cut), limits);
  Require(first.status == ParseStatus::kNeedMore);
  ResponseHeadResult second = ParseResponseHead(in, limits, first.resume);
  Require(second.status == ParseStatus::kDone && second.response == r.response);

  static const Request get = MakeRequest("GET http://a.example/ HTTP/1.1\r\n\r\n");
  static const Request head = MakeRequest("HEAD http://a.example/ HTTP/1.1\r\n\r\n");
  static const Request connect = MakeRequest("CONNECT a.example:443 HTTP/1.1\r\n\r\n");
  Framing f = BodyFraming(get, r.response);
  Require(BodyFraming(head, r.response).kind == Framing::Kind::kNone);
  (void)BodyFraming(connect, r.response);
  if (f.kind == Framing::Kind::kContentLength) {
    Require(f.length > 0 && r.response.content_length == f.length);
  }
  if (f.kind == Framing::Kind::kChunked) {
    Require(r.response.chunked && !r.response.content_length);
    CheckChunked(in.subspan(r.consumed));
  }
  return 0;
}
