// SPDX-License-Identifier: Apache-2.0
// launch/passing: which descriptors the command gets as they are, through srt, or not at all.
#include "launch/passing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

namespace srt::launch {
namespace {

DescriptorFacts Facts(uint32_t type, int flags, uint32_t major = 0, uint32_t minor = 0) {
  DescriptorFacts f;
  f.type = type;
  f.status_flags = flags;
  f.rdev_major = major;
  f.rdev_minor = minor;
  return f;
}

Passing Decided(const DescriptorFacts& f, bool standard = true) {
  Result<Passing> p = DecidePassing(f, standard, "standard input");
  EXPECT_TRUE(bool(p)) << (p ? "" : p.error().message());
  return bool(p) ? *p : Passing::kAsIs;
}

std::string Refusal(const DescriptorFacts& f, bool standard = true) {
  Result<Passing> p = DecidePassing(f, standard, "descriptor 7");
  EXPECT_FALSE(bool(p));
  return bool(p) ? "" : p.error().message();
}

TEST(PassingTest, WhatCanBeReopenedWithMoreGoesThroughSrt) {
  EXPECT_EQ(Decided(Facts(S_IFREG, O_RDONLY)), Passing::kInput);              // < file
  EXPECT_EQ(Decided(Facts(S_IFREG, O_WRONLY | O_APPEND)), Passing::kOutput);  // >> log
  EXPECT_EQ(Decided(Facts(S_IFREG, O_WRONLY)), Passing::kOutput);             // > file
  EXPECT_EQ(Decided(Facts(S_IFIFO, O_RDONLY)), Passing::kInput);              // a pipe
  EXPECT_EQ(Decided(Facts(S_IFIFO, O_WRONLY)), Passing::kOutput);
  EXPECT_EQ(Decided(Facts(S_IFBLK, O_RDONLY)), Passing::kInput);
  EXPECT_EQ(Decided(Facts(S_IFCHR, O_WRONLY, 4, 64)), Passing::kOutput);  // a serial line
}

TEST(PassingTest, OnlyWhatHasNoHostFileBehindItIsPassedAsItIs) {
  EXPECT_EQ(Decided(Facts(S_IFSOCK, O_RDWR)), Passing::kAsIs);
  EXPECT_EQ(Decided(Facts(0, O_RDWR)), Passing::kAsIs);  // eventfd, pidfd, ...
  DescriptorFacts memfd = Facts(S_IFREG, O_RDWR);
  memfd.links = 0;  // a memfd, an O_TMPFILE: no name a host program could open
  EXPECT_EQ(Decided(memfd), Passing::kAsIs);
  memfd.status_flags = O_RDONLY;
  EXPECT_EQ(Decided(memfd), Passing::kInput);
}

TEST(PassingTest, HarmlessDevicesAreOpenedAnewInTheSandbox) {
  const char* expected[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
  const uint32_t minors[] = {3, 5, 7, 8, 9};
  for (size_t i = 0; i < 5; ++i) {
    DescriptorFacts f = Facts(S_IFCHR, O_WRONLY, 1, minors[i]);
    EXPECT_EQ(Decided(f), Passing::kDevice) << minors[i];
    EXPECT_STREQ(SandboxDevice(f), expected[i]);
  }
  EXPECT_EQ(SandboxDevice(Facts(S_IFCHR, O_RDONLY, 1, 1)), nullptr);  // /dev/mem
  EXPECT_EQ(SandboxDevice(Facts(S_IFBLK, O_RDONLY, 1, 3)), nullptr);
  EXPECT_EQ(Decided(Facts(S_IFCHR, O_RDONLY, 1, 1)), Passing::kInput);
}

TEST(PassingTest, TerminalsAreReplacedOnTheStandardDescriptorsOnly) {
  DescriptorFacts tty = Facts(S_IFCHR, O_RDWR, 136, 3);
  tty.terminal = true;
  EXPECT_EQ(Decided(tty), Passing::kTerminal);
  EXPECT_NE(Refusal(tty, /*standard=*/false).find("descriptor 7 is a terminal"), std::string::npos);
}

TEST(PassingTest, ClosedStandardDescriptorsBecomeDevNull) {
  DescriptorFacts closed;
  closed.open = false;
  EXPECT_EQ(Decided(closed), Passing::kNull);
  EXPECT_NE(Refusal(closed, false).find("is not open"), std::string::npos);
}

TEST(PassingTest, WhatReachesBeyondItsAccessIsRefusedByName) {
  EXPECT_NE(Refusal(Facts(S_IFDIR, O_RDONLY)).find("descriptor 7 is a directory"),
            std::string::npos);
  EXPECT_NE(Refusal(Facts(S_IFREG, O_PATH)).find("descriptor 7 is an O_PATH descriptor"),
            std::string::npos);
  EXPECT_NE(Refusal(Facts(S_IFDIR, O_PATH | O_DIRECTORY)).find("O_PATH"), std::string::npos);
  for (uint32_t type : {uint32_t{S_IFREG}, uint32_t{S_IFIFO}, uint32_t{S_IFBLK}}) {
    EXPECT_NE(Refusal(Facts(type, O_RDWR)).find("descriptor 7 is open for reading and writing"),
              std::string::npos);
    EXPECT_NE(Refusal(Facts(type, O_RDWR | O_APPEND)).find("reading and writing"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace srt::launch
