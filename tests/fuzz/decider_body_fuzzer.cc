// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: need_body's reader (server/decider_step.h DeciderBody) over a chunked body.
// The first byte picks max (1-64) and where the input is split in two pieces; the rest is the
// body as a client sends it. Properties: no crash; the decider is shown at most max bytes; for a
// whole, valid body, they are the start of the content the proxy's ChunkedDecoder reads from it,
// `cut` exactly when that content is longer than max, and what is forwarded (ForwardPrefix, then
// the rest through the decoder it hands on, re-chunked) decodes to that same content.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "http/chunked_decoder.h"
#include "server/decider_step.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

// The content of a chunked body, and whether it ended without error.
bool Decode(std::string_view in, std::string& content) {
  srt::proxy::http::ChunkedDecoder decoder;
  srt::proxy::http::ChunkedDecoder::Step step = decoder.Feed(in, &content);
  return step.status == srt::proxy::ParseStatus::kDone;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using srt::proxy::ParseStatus;
  if (size == 0) return 0;
  const uint32_t max = 1 + (data[0] & 0x3f);
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t split = static_cast<size_t>(data[0] >> 6) * body.size() / 3;

  srt::proxy::DeciderBody reader({srt::proxy::http::Framing::Kind::kChunked, 0}, max);
  std::string in = body.substr(0, split);
  ParseStatus status = reader.Feed(in);
  if (status == ParseStatus::kNeedMore) {
    in += body.substr(split);
    status = reader.Feed(in);
  } else {
    in += body.substr(split);
  }
  Require(reader.shown().size() <= max);
  std::string whole;
  if (!Decode(body, whole)) return 0;  // cut short or malformed: only the bound above holds
  // A whole, valid body: read until more than max or its end, never an error.
  Require(status == ParseStatus::kDone);
  Require(whole.compare(0, reader.shown().size(), reader.shown()) == 0);
  Require(reader.cut() == (whole.size() > max));
  if (!reader.cut()) Require(reader.ended() && reader.shown() == whole);

  // Forwarded: the prefix, then the rest decoded and re-chunked, decodes to the same content.
  std::string forwarded = reader.ForwardPrefix();
  if (!reader.ended()) {
    srt::proxy::http::ChunkedDecoder rest = reader.TakeDecoder();
    std::string piece;
    const srt::proxy::http::ChunkedDecoder::Step step = rest.Feed(in, &piece);
    Require(step.status == ParseStatus::kDone);
    srt::proxy::http::AppendChunk(forwarded, piece);
    forwarded += "0\r\n\r\n";
  }
  std::string again;
  Require(Decode(forwarded, again));
  Require(again == whole);
  return 0;
}
