// SPDX-License-Identifier: Apache-2.0
#include "base/strings.h"

#include <gtest/gtest.h>

namespace srt::strings {
namespace {

TEST(StringsTest, ShellQuote) {
  EXPECT_EQ(ShellQuote("abc/d.e"), "abc/d.e");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\"'\"'s'");
  EXPECT_EQ(ShellJoin({"echo", "a b", ""}), "echo 'a b' ''");
}

TEST(StringsTest, QuoteEscapesControlCharacters) {
  EXPECT_EQ(Quote("a\nb"), "'a\\x0ab'");
  EXPECT_EQ(Quote("it's"), "'it\\'s'");
}

TEST(JsonNestingTest, BracketsInStringsDoNotCount) {
  EXPECT_TRUE(strings::JsonNestingWithin(R"({"a":[[1]]})", 3));
  EXPECT_FALSE(strings::JsonNestingWithin(R"({"a":[[1]]})", 2));
  EXPECT_TRUE(strings::JsonNestingWithin(R"({"a":"[[[[\"[[["})", 1));
  EXPECT_TRUE(strings::JsonNestingWithin(R"({"a":"\\"})", 1));
}

TEST(EditDistanceTest, SwapsAndCaseCountAsTypos) {
  EXPECT_EQ(EditDistance("denyReed", "denyRead"), 1u);
  EXPECT_EQ(EditDistance("denyRaed", "denyRead"), 1u);  // a swap
  EXPECT_EQ(EditDistance("DENYREAD", "denyRead"), 0u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(Utf8Test, WellFormedSequencesOnly) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("ascii \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  for (const char* bad :
       {"\xc0\x80", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "\xe2\x82", "\x80"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
  }
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82\xac", 0), 3u);
  EXPECT_EQ(Utf8SequenceLength("a", 0), 1u);
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82", 0), 0u);
}

}  // namespace
}  // namespace srt::strings
