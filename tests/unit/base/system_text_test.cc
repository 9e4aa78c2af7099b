// SPDX-License-Identifier: Apache-2.0
// The errno and signal texts every module formats its errors with, from many threads at once.
#include "base/system_text.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <string>
#include <thread>
#include <vector>

namespace srt {
namespace {

TEST(SystemTextTest, ErrnoValuesReadAsLibcWritesThem) {
  EXPECT_STREQ(ErrnoText(ENOENT), "No such file or directory");
  EXPECT_STREQ(ErrnoText(EACCES), "Permission denied");
  EXPECT_STREQ(ErrnoText(ENAMETOOLONG), "File name too long");
}

TEST(SystemTextTest, AValueLibcDoesNotKnowHasAFixedText) {
  EXPECT_STREQ(ErrnoText(4242), "unknown error");
  EXPECT_STREQ(ErrnoText(-1), "unknown error");
}

TEST(SystemTextTest, SignalsReadAsLibcWritesThem) {
  EXPECT_STREQ(SignalText(SIGKILL), "Killed");
  EXPECT_STREQ(SignalText(SIGSEGV), "Segmentation fault");
  EXPECT_STREQ(SignalText(999), "unknown signal");
}

// strerror formats an unknown value into a buffer that its next call overwrites (glibc: one per
// thread): a text taken earlier changes under its holder. These texts are constants, so one
// taken first is the same after other values were asked for, on this thread and on others.
TEST(SystemTextTest, ATextStaysTheSameWhileOthersAreAskedFor) {
  const char* mine = ErrnoText(4242);
  const std::string before = mine;
  (void)ErrnoText(4243);
  std::vector<std::thread> others;
  for (int t = 0; t < 4; ++t) {
    others.emplace_back([t] {
      for (int i = 0; i < 1000; ++i) (void)ErrnoText(5000 + t * 1000 + i);
    });
  }
  for (std::thread& t : others) t.join();
  EXPECT_EQ(std::string(mine), before);
}

}  // namespace
}  // namespace srt
