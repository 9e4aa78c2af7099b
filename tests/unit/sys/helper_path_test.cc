// SPDX-License-Identifier: Apache-2.0
// Where srt's helpers are looked for: next to the program, then in its installed helpers' folder,
// then at the configured install path (the relocated install itself is tests/install).
#include "sys/helper_path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>

#include <string>

namespace srt::sys {
namespace {

using ::testing::ElementsAre;

std::string SelfDir() {
  char self[PATH_MAX];
  EXPECT_NE(realpath("/proc/self/exe", self), nullptr);
  std::string s(self);
  return s.substr(0, s.rfind('/'));
}

std::string ParentOf(const std::string& dir) { return dir.substr(0, dir.rfind('/')); }

TEST(HelperPathTest, NextToTheProgramThenItsLibexecThenTheInstallPath) {
  const std::string dir = SelfDir();
  EXPECT_THAT(HelperCandidates("srt-init", "/opt/x/libexec/srt/srt-init"),
              ElementsAre(dir + "/srt-init", ParentOf(dir) + "/libexec/srt/srt-init",
                          "/opt/x/libexec/srt/srt-init"));
}

TEST(HelperPathTest, NothingExecutableIsNothingFound) {
  EXPECT_EQ(FindHelper("no-such-srt-helper", "/nonexistent/srt/no-such-srt-helper"), "");
  // The install path counts like the others when it is there.
  EXPECT_EQ(FindHelper("no-such-srt-helper", "/bin/sh"), "/bin/sh");
}

}  // namespace
}  // namespace srt::sys
