// SPDX-License-Identifier: Apache-2.0
// Pure text helpers: Go's %q and Duration.String, terminal output cleanup, errno wording.
#include "toolbox/text.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace srt::poller::toolbox {
namespace {

TEST(TextTest, GoQuote) {
  EXPECT_EQ(GoQuote("a.txt"), "\"a.txt\"");
  EXPECT_EQ(GoQuote("a\"b\\c\n\t\x01"), "\"a\\\"b\\\\c\\n\\t\\x01\"");
  EXPECT_EQ(GoQuote("é"), "\"é\"");
}

TEST(TextTest, GoDuration) {
  using std::chrono::milliseconds;
  EXPECT_EQ(GoDuration(milliseconds(120000)), "2m0s");
  EXPECT_EQ(GoDuration(milliseconds(300)), "300ms");
  EXPECT_EQ(GoDuration(milliseconds(1500)), "1.5s");
  EXPECT_EQ(GoDuration(milliseconds(3600000)), "1h0m0s");
  EXPECT_EQ(GoDuration(milliseconds(90061001)), "25h1m1.001s");
  EXPECT_EQ(GoDuration(milliseconds(0)), "0s");
}

TEST(TextTest, CleanTerminalOutput) {
  EXPECT_EQ(CleanTerminalOutput("\n\nhi\r\nthere\r"), "hi\nthere");
  EXPECT_EQ(CleanTerminalOutput("\x1b[?2004ha\x1b[1;31mb\x1b[0m"), "ab");
  EXPECT_EQ(CleanTerminalOutput("\x1b[1"), "\x1b[1");  // incomplete: kept
  EXPECT_EQ(CleanTerminalOutput(""), "");
}

TEST(TextTest, FsErrorMessage) {
  EXPECT_EQ(FsErrorMessage(ENOENT), "no such file or directory");
  EXPECT_EQ(FsErrorMessage(EACCES), "permission denied");
  EXPECT_EQ(FsErrorMessage(EPERM), "permission denied");
  EXPECT_EQ(FsErrorMessage(ENOTDIR), "not a directory");
  EXPECT_EQ(FsErrorMessage(ENOSPC),
            "no space left on device: the workspace is full (remove files to make room)");
  EXPECT_EQ(FsErrorMessage(EISDIR), "is a directory");
  EXPECT_EQ(FsErrorMessage(ELOOP), "too many levels of symbolic links");
}

}  // namespace
}  // namespace srt::poller::toolbox
