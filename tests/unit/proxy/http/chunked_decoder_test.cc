// SPDX-License-Identifier: Apache-2.0
#include "http/chunked_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "wire/parser_test_util.h"

namespace srt::proxy::http {
namespace {

struct Outcome {
  ParseStatus status = ParseStatus::kNeedMore;
  size_t body = 0;  // bytes of the input that belonged to the body
  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "{status " << static_cast<int>(o.status) << ", body " << o.body << "}";
}

// Feeds the pieces in order (stopping at the first non-kNeedMore) and sums the consumed bytes.
Outcome FeedPieces(const std::vector<std::string_view>& pieces, const ChunkedLimits& limits) {
  ChunkedDecoder d(limits);
  Outcome o;
  for (std::string_view piece : pieces) {
    // Each piece against a guard page: the decoder must not look past it.
    testing::GuardedBuffer guarded(piece);
    ChunkedDecoder::Step s = d.Feed(guarded.chars());
    o.body += s.consumed;
    o.status = s.status;
    if (s.status == ParseStatus::kError) {
      o.body = 0;  // where it failed does not matter: the connection is closed
    }
    if (s.status != ParseStatus::kNeedMore) {
      EXPECT_EQ(d.Feed(testing::AsChars("more")).consumed, 0u);
      EXPECT_EQ(d.Feed(testing::AsChars("more")).status, s.status);
      break;
    }
    EXPECT_EQ(s.consumed, piece.size());
  }
  EXPECT_EQ(o.status == ParseStatus::kDone, d.done());
  return o;
}

// Whole, byte by byte, and split in two at every offset: the same outcome every time.
Outcome DecodeEveryWay(std::string_view in, const ChunkedLimits& limits = {}) {
  Outcome whole = FeedPieces({in}, limits);
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < in.size(); ++i) {
    bytes.push_back(in.substr(i, 1));
  }
  EXPECT_EQ(FeedPieces(bytes, limits), whole) << "byte by byte";
  for (const auto& [first, second] : testing::AllSplits(in)) {
    EXPECT_EQ(FeedPieces({first, second}, limits), whole) << "split at " << first.size();
  }
  return whole;
}

TEST(ChunkedDecoderTest, FindsTheEnd) {
  struct Case {
    std::string body;
    std::string after;
  };
  for (const Case& c : {
           Case{"0\r\n\r\n", ""},
           Case{"b\r\nhello world\r\n0\r\n\r\n", ""},  // curl --data-binary, chunked
           Case{"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "GET http://next.example/ HTTP/1.1"},
           Case{"A\r\n0123456789\r\n00000\r\n\r\n", "x"},
           Case{"1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n", ""},
           Case{"1A;name=value;quoted=\"a b;c\"\r\nabcdefghijklmnopqrstuvwxyz\r\n0;last\r\n\r\n",
                ""},
           Case{"5 ;ext\r\nhello\r\n0\t\r\n\r\n", ""},
           Case{"4\r\n\r\n\r\n\r\n0\r\n\r\n", ""},  // data that looks like CRLFs
           Case{"0\r\nExpires: never\r\nX-Checksum: abc\r\n\r\n", "HTTP/1.1 200 OK\r\n"},
           Case{"0000000000000003\r\nabc\r\n0\r\n\r\n", ""},
       }) {
    Outcome o = DecodeEveryWay(c.body + c.after);
    EXPECT_EQ(o, (Outcome{ParseStatus::kDone, c.body.size()})) << c.body;
    // Every proper prefix of the body is "more, please".
    for (size_t k = 0; k < c.body.size(); ++k) {
      EXPECT_EQ(FeedPieces({std::string_view(c.body).substr(0, k)}, {}),
                (Outcome{ParseStatus::kNeedMore, k}));
    }
  }
}

TEST(ChunkedDecoderTest, LargeChunksAreSkippedInBulk) {
  const std::string data(100000, 'd');
  const std::string in = "186a0\r\n" + data + "\r\n0\r\n\r\n";
  EXPECT_EQ(FeedPieces({in}, {}), (Outcome{ParseStatus::kDone, in.size()}));
  ChunkedDecoder d;
  EXPECT_EQ(d.Feed(testing::AsChars("ffffffffffffffff\r\n")).status, ParseStatus::kNeedMore);
  EXPECT_EQ(d.Feed(testing::AsChars(data)).consumed, data.size());
  EXPECT_EQ(d.total(), 18u + data.size());
}

TEST(ChunkedDecoderTest, DecodedDataIsTheBodyWithoutItsFraming) {
  const std::string in = "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
  std::string whole;
  ChunkedDecoder d;
  ChunkedDecoder::Step step = d.Feed(testing::AsChars(in), &whole);
  EXPECT_EQ(step.status, ParseStatus::kDone);
  EXPECT_EQ(step.consumed, in.size() - 4);
  EXPECT_EQ(whole, "hello world");
  // The same in every split, and never more than was consumed.
  for (size_t k = 0; k <= in.size(); ++k) {
    ChunkedDecoder split;
    std::string data;
    const ChunkedDecoder::Step a = split.Feed(testing::AsChars(in.substr(0, k)), &data);
    EXPECT_LE(data.size(), a.consumed);
    (void)split.Feed(testing::AsChars(in.substr(a.consumed)), &data);
    EXPECT_EQ(data, "hello world") << k;
  }
}

TEST(ChunkedDecoderTest, Errors) {
  for (const std::string& bad : std::vector<std::string>{
           std::string("\r\n"),
           "x\r\n",
           "-1\r\n",
           "+1\r\n",
           "0x1\r\n",
           " 1\r\n",
           "1\n",                      // bare LF after the size
           "1\rx",                     // bare CR
           "1 x\r\n",                  // junk after BWS
           "1;a\nb\r\n",               // LF inside an extension
           "1;a\x01\r\n",              // control in an extension
           "1\r\nab\r\n",              // more data than announced
           "1\r\na\n0\r\n\r\n",        // data not followed by CRLF
           "1\r\na\rx",                //
           "0\r\n\n",                  // bare LF ends the body
           "0\r\n\rx",                 //
           "0\r\nX: a\n\r\n",          // bare LF in a trailer
           "0\r\nX: a\rb\r\n\r\n",     // bare CR in a trailer
           "0\r\n X: folded\r\n\r\n",  // obs-fold
           "0\r\nX: a\x7f\r\n\r\n",    //
           "10000000000000000\r\n",    // 17 hex digits
       }) {
    EXPECT_EQ(DecodeEveryWay(bad).status, ParseStatus::kError) << bad;
  }
  ChunkedDecoder d;
  d.Feed(testing::AsChars("zz"));
  EXPECT_EQ(d.error(), "chunk-size line does not start with a hex digit");
}

TEST(ChunkedDecoderTest, Limits) {
  ChunkedLimits limits;
  limits.max_chunk_line_bytes = 8;
  EXPECT_EQ(DecodeEveryWay("1;abcd\r\nx\r\n0\r\n\r\n", limits).status, ParseStatus::kDone);
  EXPECT_EQ(DecodeEveryWay("1;abcde\r\nx\r\n0\r\n\r\n", limits).status, ParseStatus::kError);
  EXPECT_EQ(DecodeEveryWay("000000001\r\nx\r\n0\r\n\r\n", limits).status, ParseStatus::kError);
  limits = {};
  limits.max_trailer_bytes = 10;
  EXPECT_EQ(DecodeEveryWay("0\r\nX: abc\r\n\r\n", limits).status, ParseStatus::kDone);
  EXPECT_EQ(DecodeEveryWay("0\r\nX: abcd\r\n\r\n", limits).status, ParseStatus::kError);

  // The defaults.
  ChunkedDecoder d;
  std::string line = "1;" + std::string(kMaxHttpChunkLineBytes, 'e');
  EXPECT_EQ(d.Feed(testing::AsChars(line)).status, ParseStatus::kError);
  EXPECT_EQ(d.error(), "chunk-size line longer than 4096 bytes");
  ChunkedDecoder t;
  std::string trailer = "0\r\n";
  while (trailer.size() < kMaxHttpTrailerBytes + 3) {
    trailer += "X-T: " + std::string(100, 't') + "\r\n";
  }
  EXPECT_EQ(t.Feed(testing::AsChars(trailer)).status, ParseStatus::kError);
  EXPECT_EQ(t.error(), "trailer section longer than 16384 bytes");
}

}  // namespace
}  // namespace srt::proxy::http
