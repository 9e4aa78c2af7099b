// SPDX-License-Identifier: Apache-2.0
// OutputLines (poller/sandbox_output.h): what a session's sandbox writes, cut into bounded log
// lines whatever the sandbox sends.
#include "poller/sandbox_output.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace srt::poller {
namespace {

struct Collected {
  std::vector<std::pair<std::string, bool>> lines;
  OutputLines::Emit emit() {
    return [this](std::string_view l, bool cut) { lines.emplace_back(std::string(l), cut); };
  }
};

TEST(OutputLinesTest, LinesSplitAcrossChunksComeOutWhole) {
  OutputLines o(16, 1000, 0);
  Collected c;
  o.Feed("one\ntw", c.emit());
  o.Feed("o\n\nthr", c.emit());
  o.Finish(c.emit());
  EXPECT_EQ(c.lines, (std::vector<std::pair<std::string, bool>>{
                         {"one", false}, {"two", false}, {"", false}, {"thr", false}}));
  EXPECT_EQ(o.dropped(), 0u);
}

TEST(OutputLinesTest, ALongLineIsCutAndItsRestCounted) {
  OutputLines o(4, 1000, 0);
  Collected c;
  o.Feed("abcdefg", c.emit());
  o.Feed("hij\nok\n", c.emit());
  EXPECT_EQ(c.lines, (std::vector<std::pair<std::string, bool>>{{"abcd", true}, {"ok", false}}));
  EXPECT_EQ(o.dropped(), 6u);
}

TEST(OutputLinesTest, PastTheTotalNothingIsKeptOnlyCounted) {
  OutputLines o(100, 6, 0);
  Collected c;
  o.Feed("abc\ndef\nghi\njk", c.emit());
  EXPECT_TRUE(o.full());
  o.Finish(c.emit());
  EXPECT_EQ(c.lines, (std::vector<std::pair<std::string, bool>>{{"abc", false}, {"def", false}}));
  EXPECT_EQ(o.dropped(), 6u);  // "ghi\n" and "jk"
}

// Each line becomes a log record of its own, whose fields cost far more than an empty line's
// one byte: counting only the text, a stream of newlines was logged without end (a million
// empty records from 1 MB). A line costs its text, its newline and its record.
TEST(OutputLinesTest, EveryLineCostsItsRecordSoNewlinesRunOutToo) {
  OutputLines o(100, 1000, 99);
  Collected c;
  o.Feed(std::string(100, '\n'), c.emit());
  EXPECT_TRUE(o.full());
  EXPECT_EQ(c.lines.size(), 10u);  // 1000 / (0 + 1 + 99)
  EXPECT_EQ(o.dropped(), 90u);     // the newlines of the 90 lines not logged
  const std::string big(1 << 20, '\n');
  for (int i = 0; i < 4; ++i) o.Feed(big, c.emit());
  EXPECT_EQ(c.lines.size(), 10u);
}

TEST(OutputLinesTest, AnEndlessLineHoldsNoMoreThanItsLimit) {
  OutputLines o(8, 1000, 0);
  Collected c;
  const std::string chunk(1 << 16, 'z');
  for (int i = 0; i < 64; ++i) o.Feed(chunk, c.emit());
  EXPECT_TRUE(c.lines.empty());
  o.Finish(c.emit());
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(c.lines[0], std::make_pair(std::string(8, 'z'), true));
  EXPECT_EQ(o.dropped(), 64u * (1 << 16) - 8);
}

}  // namespace
}  // namespace srt::poller
