// SPDX-License-Identifier: Apache-2.0
// http/chunked_decoder.cc: the end of a chunked body (RFC 9112 §7.1).
#include "http/chunked_decoder.h"

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "wire/ascii.h"
#include "wire/byte_reader.h"

namespace srt::proxy::http {

void AppendChunk(std::string& out, std::string_view data) {
  if (data.empty()) return;
  char size[24];
  (void)std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  out += size;
  out += data;
  out += "\r\n";
}

ChunkedDecoder::Step ChunkedDecoder::Fail(std::string why) {
  state_ = State::kError;
  error_ = std::move(why);
  return Step{ParseStatus::kError, 0};
}

ChunkedDecoder::Step ChunkedDecoder::Feed(std::span<const char> in,
                                          std::vector<std::pair<size_t, size_t>>* data) {
  if (state_ == State::kDone) {
    return Step{ParseStatus::kDone, 0};
  }
  if (state_ == State::kError) {
    return Step{ParseStatus::kError, 0};
  }
  ByteReader reader(in);
  while (state_ != State::kDone) {
    if (state_ == State::kData) {
      // Bulk: the only state that can cover many bytes at once.
      const uint64_t take = chunk_size_ < reader.remaining() ? chunk_size_ : reader.remaining();
      if (data != nullptr && take > 0) {
        data->emplace_back(reader.offset(), reader.offset() + static_cast<size_t>(take));
      }
      reader.Skip(static_cast<size_t>(take));
      chunk_size_ -= take;
      if (chunk_size_ > 0) {
        break;
      }
      state_ = State::kDataCr;
      continue;
    }
    std::optional<uint8_t> next = reader.ReadU8();
    if (!next) {
      break;
    }
    const uint8_t c = *next;
    const bool size_line = state_ == State::kSizeFirst || state_ == State::kSize ||
                           state_ == State::kSizeSpace || state_ == State::kExtension ||
                           state_ == State::kSizeLf;
    if (size_line && ++line_bytes_ > limits_.max_chunk_line_bytes) {
      return Fail("chunk-size line longer than " + std::to_string(limits_.max_chunk_line_bytes) +
                  " bytes");
    }
    const bool trailer = state_ == State::kTrailerStart || state_ == State::kTrailerLine ||
                         state_ == State::kTrailerLf || state_ == State::kFinalLf;
    if (trailer && ++trailer_bytes_ > limits_.max_trailer_bytes) {
      return Fail("trailer section longer than " + std::to_string(limits_.max_trailer_bytes) +
                  " bytes");
    }
    switch (state_) {
      case State::kSizeFirst:
      case State::kSize:
        // chunk-size = 1*HEXDIG
        if (ascii::IsHexDigit(c)) {
          if (++size_digits_ > 16) {
            return Fail("chunk size with more than 16 hex digits");
          }
          chunk_size_ = (chunk_size_ << 4) | static_cast<uint64_t>(ascii::HexValue(c));
          state_ = State::kSize;
        } else if (state_ == State::kSizeFirst) {
          return Fail("chunk-size line does not start with a hex digit");
        } else if (c == ' ' || c == '\t') {
          state_ = State::kSizeSpace;  // BWS before a chunk-ext (RFC 9112 §7.1.1)
        } else if (c == ';') {
          state_ = State::kExtension;
        } else if (c == '\r') {
          state_ = State::kSizeLf;
        } else {
          return Fail("invalid character after the chunk size");
        }
        break;
      case State::kSizeSpace:
        if (c == ';') {
          state_ = State::kExtension;
        } else if (c == '\r') {
          state_ = State::kSizeLf;
        } else if (c != ' ' && c != '\t') {
          return Fail("invalid character after the chunk size");
        }
        break;
      case State::kExtension:
        // chunk-ext: tokens, quoted strings, BWS; forwarded, never interpreted. Only controls
        // (a bare LF above all) matter.
        if (c == '\r') {
          state_ = State::kSizeLf;
        } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
          return Fail("control character in a chunk extension");
        }
        break;
      case State::kSizeLf:
        if (c != '\n') {
          return Fail("bare CR in a chunk-size line");
        }
        line_bytes_ = 0;
        size_digits_ = 0;
        // last-chunk = 1*"0" [ chunk-ext ] CRLF, then the trailer section.
        state_ = chunk_size_ == 0 ? State::kTrailerStart : State::kData;
        break;
      case State::kDataCr:
        if (c != '\r') {
          return Fail("chunk data not followed by CRLF");
        }
        state_ = State::kDataLf;
        break;
      case State::kDataLf:
        if (c != '\n') {
          return Fail("chunk data not followed by CRLF");
        }
        state_ = State::kSizeFirst;
        break;
      case State::kTrailerStart:
        if (c == '\r') {
          state_ = State::kFinalLf;
        } else if (c == ' ' || c == '\t') {
          return Fail("obs-fold in the trailer section");
        } else if (c < 0x20 || c == 0x7f) {
          return Fail("control character in the trailer section");
        } else {
          state_ = State::kTrailerLine;
        }
        break;
      case State::kTrailerLine:
        if (c == '\r') {
          state_ = State::kTrailerLf;
        } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
          return Fail("control character in the trailer section");
        }
        break;
      case State::kTrailerLf:
        if (c != '\n') {
          return Fail("bare CR in the trailer section");
        }
        state_ = State::kTrailerStart;
        break;
      case State::kFinalLf:
        if (c != '\n') {
          return Fail("bare CR at the end of the chunked body");
        }
        state_ = State::kDone;
        break;
      case State::kData:
      case State::kDone:
      case State::kError:
        break;  // handled above
    }
  }
  total_ += reader.offset();
  return Step{state_ == State::kDone ? ParseStatus::kDone : ParseStatus::kNeedMore,
              reader.offset()};
}

ChunkedDecoder::Step ChunkedDecoder::Feed(std::span<const char> in, std::string* data) {
  if (data == nullptr)
    return Feed(in, static_cast<std::vector<std::pair<size_t, size_t>>*>(nullptr));
  std::vector<std::pair<size_t, size_t>> spans;
  const Step step = Feed(in, &spans);
  for (const auto& [begin, end] : spans) data->append(in.data() + begin, end - begin);
  return step;
}

}  // namespace srt::proxy::http
