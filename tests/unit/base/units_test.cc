// SPDX-License-Identifier: Apache-2.0
// The duration, size and CPU grammars of srt's command lines and configuration.
#include "base/units.h"

#include <gtest/gtest.h>

#include <chrono>

namespace srt {
namespace {

using std::chrono::milliseconds;

TEST(GoDuration, Grammar) {
  EXPECT_EQ(*ParseGoDuration("60s"), milliseconds(60'000));
  EXPECT_EQ(*ParseGoDuration("1m30s"), milliseconds(90'000));
  EXPECT_EQ(*ParseGoDuration("1.5h"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseGoDuration("250ms"), milliseconds(250));
  EXPECT_EQ(*ParseGoDuration("0"), milliseconds(0));
  EXPECT_EQ(*ParseGoDuration("0s"), milliseconds(0));
  EXPECT_EQ(*ParseGoDuration("1500us"), milliseconds(2));  // rounded up: never shorter
  EXPECT_FALSE(ParseGoDuration(""));
  EXPECT_FALSE(ParseGoDuration("60"));
  EXPECT_FALSE(ParseGoDuration("-1s"));
  EXPECT_FALSE(ParseGoDuration("1d"));
  EXPECT_FALSE(ParseGoDuration("1..2s"));
  EXPECT_FALSE(ParseGoDuration("200h"));
}

TEST(ByteSize, Units) {
  EXPECT_EQ(*ParseByteSize("3G"), uint64_t{3} << 30);
  EXPECT_EQ(*ParseByteSize("512MiB"), uint64_t{512} << 20);
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_FALSE(ParseByteSize("3GB"));
  EXPECT_FALSE(ParseByteSize("G"));
  EXPECT_FALSE(ParseByteSize("99999999999999999T"));
  EXPECT_EQ(*ParseCpus("2"), 2000u);
  EXPECT_EQ(*ParseCpus("0.25"), 250u);
  EXPECT_EQ(*ParseCpus("0.0625"), 63u);  // 62.5, exactly: halves round up
  EXPECT_EQ(*ParseCpus("0.0624"), 62u);
  EXPECT_EQ(*ParseCpus("4096"), 4096000u);
  EXPECT_FALSE(ParseCpus("0"));
  EXPECT_FALSE(ParseCpus("two"));
}

}  // namespace
}  // namespace srt
