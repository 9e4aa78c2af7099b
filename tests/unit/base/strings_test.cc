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

}  // namespace
}  // namespace srt::strings
