// SPDX-License-Identifier: Apache-2.0
// What srt says of refused destinations without --debug: once each, and not without end.
#include "denial_notices.h"

#include <gtest/gtest.h>

#include <string>

namespace srt::cli {
namespace {

TEST(DenialNoticesTest, EachDestinationOnceWithItsReason) {
  DenialNotices n;
  EXPECT_EQ(n.Line("evil.test:443", "host is not on the allow list"),
            "srt: network: denied evil.test:443 (host is not on the allow list)");
  EXPECT_EQ(n.Line("evil.test:443", "host is not on the allow list"), "");
  EXPECT_EQ(n.Line("evil.test:80", "host is not on the allow list"),
            "srt: network: denied evil.test:80 (host is not on the allow list)");
  EXPECT_EQ(n.Line("evil.test", "host is not on the allow list"),
            "srt: network: denied evil.test (host is not on the allow list)");
}

TEST(DenialNoticesTest, AScanGetsItsLinesThenOneMoreSayingSo) {
  DenialNotices n;
  size_t said = 0;
  for (int port = 1; port <= 10'000; ++port) {
    if (!n.Line("10.0.0.1:" + std::to_string(port), "x").empty()) ++said;
  }
  EXPECT_EQ(said, DenialNotices::kMaxLines + 1);
  EXPECT_EQ(n.Line("10.0.0.1:1", "x"), "");  // named before the limit: still not repeated
}

}  // namespace
}  // namespace srt::cli
