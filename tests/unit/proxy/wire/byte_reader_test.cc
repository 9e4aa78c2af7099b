// SPDX-License-Identifier: Apache-2.0
#include "wire/byte_reader.h"

#include <gtest/gtest.h>

#include "wire/ascii.h"
#include "wire/parser_test_util.h"

namespace srt::proxy {
namespace {

TEST(ByteReaderTest, ReadsBigEndianAndNeverPastTheEnd) {
  const uint8_t data[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a};
  testing::GuardedBuffer guarded(std::span<const uint8_t>(data, sizeof data));
  ByteReader r(guarded.bytes());
  EXPECT_EQ(r.PeekU8(), 0x01);
  EXPECT_EQ(r.ReadU8(), 0x01);
  EXPECT_EQ(r.ReadU16(), 0x0203);
  EXPECT_EQ(r.ReadU24(), 0x040506u);
  EXPECT_EQ(r.offset(), 6u);
  EXPECT_EQ(r.remaining(), 4u);
  EXPECT_FALSE(r.ReadBytes(5));  // fails without moving
  EXPECT_EQ(r.offset(), 6u);
  EXPECT_EQ(r.ReadU32(), 0x0708090au);
  EXPECT_TRUE(r.empty());
  EXPECT_FALSE(r.ReadU8());
  EXPECT_FALSE(r.PeekU8());
  EXPECT_FALSE(r.ReadU16());
  EXPECT_FALSE(r.Find(0x0a));
  EXPECT_TRUE(r.ReadBytes(0));
  EXPECT_EQ(r.Consumed().size(), sizeof data);
}

TEST(ByteReaderTest, TagRollbackAndSubReaders) {
  const std::string_view text =
      "\x03"
      "abc"
      "\x05"
      "de";
  ByteReader r(testing::AsChars(text));
  size_t tag = r.Tag();
  std::optional<ByteReader> first = r.ReadSub(*r.ReadU8());
  ASSERT_TRUE(first);
  EXPECT_EQ(first->ReadString(3), "abc");
  EXPECT_TRUE(first->empty());
  std::optional<uint8_t> len = r.ReadU8();
  EXPECT_FALSE(r.ReadSub(*len));  // only 2 of 5 bytes: nothing consumed
  EXPECT_EQ(r.offset(), 5u);
  r.Rollback(tag);
  EXPECT_EQ(r.offset(), 0u);
  r.Rollback(100);  // a tag from the future is ignored
  EXPECT_EQ(r.offset(), 0u);
  EXPECT_EQ(r.Find('c'), 3u);
  EXPECT_EQ(r.Find('c', 3), std::nullopt);
  EXPECT_EQ(r.Find('c', 4), 3u);
  EXPECT_TRUE(r.Skip(7));
  EXPECT_FALSE(r.Skip(1));
  EXPECT_EQ(r.Rest().size(), 0u);
}

TEST(AsciiTest, Classes) {
  EXPECT_TRUE(ascii::IsToken("Content-Length"));
  EXPECT_TRUE(ascii::IsToken("!#$%&'*+-.^_`|~09azAZ"));
  EXPECT_FALSE(ascii::IsToken(""));
  EXPECT_FALSE(ascii::IsToken("a b"));
  EXPECT_FALSE(ascii::IsToken("a:b"));
  EXPECT_FALSE(ascii::IsToken("caf\xe9"));
  EXPECT_EQ(ascii::ToLower("MiXeD-09"), "mixed-09");
  EXPECT_TRUE(ascii::EqualsIgnoreCase("Keep-Alive", "keep-alive"));
  EXPECT_FALSE(ascii::EqualsIgnoreCase("keep-alive", "keep-aliv"));
  EXPECT_EQ(ascii::HexValue('f'), 15);
  EXPECT_EQ(ascii::HexValue('G'), -1);
  EXPECT_EQ(ascii::QuoteForMessage("a'b\\\n\xff"), "'a\\x27b\\x5c\\x0a\\xff'");
  EXPECT_EQ(ascii::QuoteForMessage("abcdef", 3), "'abc'...");
}

TEST(AsciiTest, VisibleIsWhatAParserMayHandOutAsAHost) {
  EXPECT_TRUE(ascii::IsVisible("Example.COM"));
  EXPECT_TRUE(ascii::IsVisible("[::1]%25*!~"));
  EXPECT_TRUE(ascii::IsVisible(""));
  for (std::string_view bad :
       {std::string_view("a b"), std::string_view("a\tb"), std::string_view("a\0b", 3),
        std::string_view("a\x7f"), std::string_view("caf\xc3\xa9"), std::string_view("\x1b[31m")}) {
    EXPECT_FALSE(ascii::IsVisible(bad)) << ascii::QuoteForMessage(bad);
  }
  // The DNS stub's label characters.
  EXPECT_TRUE(ascii::IsHostNameChar('_'));
  EXPECT_FALSE(ascii::IsHostNameChar('*'));
  EXPECT_FALSE(ascii::IsHostNameChar('%'));
}

}  // namespace
}  // namespace srt::proxy
