// SPDX-License-Identifier: Apache-2.0
// http/chunked_decoder.h: finds where a chunked body (RFC 9112 §7.1) ends in a byte stream fed in
// pieces. The proxy forwards body bytes verbatim; it only needs the end, to know where the next
// message on a kept-alive connection starts. Pure; constant memory.
//
// Usage: construct one per body, Feed() every piece as it arrives (after the head's bytes), and
// forward the `consumed` bytes of each piece (or, to re-frame the body, what Feed appended to
// `data`: the decoded content). kNeedMore: all of the piece was body. kDone: the
// body ended after `consumed` bytes of this piece; the rest belongs to the next message. kError:
// not a valid chunked body (error() says why); the connection can only be closed.
//
// Strict: chunk-size lines and trailer lines end in CRLF (a bare LF or CR is an error), the size is
// 1*HEXDIG (no sign, no 0x, at most 16 digits), chunk extensions are skipped but must be printable
// and fit in the line limit, trailer lines must not start with whitespace (obs-fold).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy_limits.h"
#include "wire/parse_status.h"

namespace srt::proxy::http {

struct ChunkedLimits {
  size_t max_chunk_line_bytes = kMaxHttpChunkLineBytes;  // one chunk-size line, CRLF included
  size_t max_trailer_bytes = kMaxHttpTrailerBytes;       // the trailer section, final CRLF included
};

// `data` as one chunk of a chunked body (RFC 9112 §7.1), appended to `out`; nothing for "".
void AppendChunk(std::string& out, std::string_view data);

class ChunkedDecoder {
 public:
  struct Step {
    ParseStatus status = ParseStatus::kNeedMore;
    size_t consumed = 0;  // bytes of this piece that belong to the body (0 after kError)
  };

  explicit ChunkedDecoder(const ChunkedLimits& limits = {}) : limits_(limits) {}

  // Feeds the next piece of the stream. After kDone or kError, further calls return the same
  // status with consumed 0. With `data`, appends the [begin, end) offsets in `in` of the
  // chunk-data bytes of this piece (the payload, without framing), in order.
  Step Feed(std::span<const char> in, std::vector<std::pair<size_t, size_t>>* data = nullptr);
  // The same, appending the chunk-data bytes themselves (at most `consumed` bytes).
  Step Feed(std::span<const char> in, std::string* data);

  bool done() const { return state_ == State::kDone; }
  // Why the body was refused (after kError), for debug logs.
  const std::string& error() const { return error_; }
  // Body bytes accepted so far, framing included.
  uint64_t total() const { return total_; }

 private:
  enum class State {
    kSizeFirst,  // the first hex digit of a chunk-size
    kSize,       // more hex digits
    kSizeSpace,  // BWS after the size, before ';' or CRLF
    kExtension,  // chunk-ext, skipped
    kSizeLf,     // the LF of the chunk-size line
    kData,       // chunk-data
    kDataCr,     // the CRLF after chunk-data
    kDataLf,
    kTrailerStart,  // the start of a trailer line, or the final CRLF
    kTrailerLine,
    kTrailerLf,
    kFinalLf,
    kDone,
    kError,
  };

  Step Fail(std::string why);

  ChunkedLimits limits_;
  State state_ = State::kSizeFirst;
  uint64_t chunk_size_ = 0;  // during kSize*; then the data bytes still to skip
  size_t size_digits_ = 0;
  size_t line_bytes_ = 0;     // of the current chunk-size line
  size_t trailer_bytes_ = 0;  // of the trailer section so far
  uint64_t total_ = 0;
  std::string error_;
};

}  // namespace srt::proxy::http
