// SPDX-License-Identifier: Apache-2.0
// server/host_match.h: which Host header values name a tunnel's destination.
#include "server/host_match.h"

#include <gtest/gtest.h>

namespace srt::proxy {
namespace {

Host H(std::string_view text) { return *CanonicalizeHost(text); }

TEST(HostMatchTest, TheSameHostAndPort) {
  const Host origin = H("origin.test");
  for (const char* yes :
       {"origin.test", "ORIGIN.test", "origin.test.", "origin.test:443", "origin.test:0443"}) {
    EXPECT_TRUE(HostHeaderNames(yes, origin, 443, 443)) << yes;
  }
  for (const char* no : {"other.test", "origin.test:8443", "origin.test:", "origin.test:+443",
                         "origin.test:443:443", "", "[origin.test]", "origin.test :443",
                         "evil.origin.test", "origin.test.evil", "origin.test:65979"}) {
    EXPECT_FALSE(HostHeaderNames(no, origin, 443, 443)) << no;
  }
  // Another port must be named.
  EXPECT_TRUE(HostHeaderNames("origin.test:8443", origin, 8443, 443));
  EXPECT_FALSE(HostHeaderNames("origin.test", origin, 8443, 443));
}

TEST(HostMatchTest, Addresses) {
  EXPECT_TRUE(HostHeaderNames("127.0.0.1:8443", H("127.0.0.1"), 8443, 443));
  EXPECT_TRUE(HostHeaderNames("127.1:8443", H("127.0.0.1"), 8443, 443));  // one address
  EXPECT_TRUE(HostHeaderNames("[::1]", H("[::1]"), 443, 443));
  EXPECT_TRUE(HostHeaderNames("[0:0::1]:443", H("[::1]"), 443, 443));
  EXPECT_FALSE(HostHeaderNames("::1", H("[::1]"), 443, 443));
  EXPECT_FALSE(HostHeaderNames("[::1", H("[::1]"), 443, 443));
  EXPECT_FALSE(HostHeaderNames("[::1]x", H("[::1]"), 443, 443));
  EXPECT_FALSE(HostHeaderNames("[::2]", H("[::1]"), 443, 443));
}

}  // namespace
}  // namespace srt::proxy
