// SPDX-License-Identifier: Apache-2.0
#include "server/parent_proxy.h"

#include <gtest/gtest.h>

namespace srt::proxy {
namespace {

TEST(ParentProxyTest, ParsesUrlsWithCredentialsAndDefaults) {
  Result<ProxyUrl> url = ParseProxyUrl("http://us%40er:p%3Ass@Proxy.Corp:3128/");
  ASSERT_TRUE(url.has_value()) << url.error().message();
  ParentProxy p = ParentProxyFor(*url);
  EXPECT_EQ(p.host.text, "proxy.corp");
  EXPECT_EQ(p.port, 3128);
  EXPECT_EQ(p.authorization, "Basic dXNAZXI6cDpzcw==");  // base64("us@er:p:ss")
  EXPECT_EQ(p.display, "http://proxy.corp:3128");

  Result<ProxyUrl> bare = ParseProxyUrl("10.0.0.1");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->port, 80);
  EXPECT_EQ(ParentProxyFor(*bare).authorization, "");

  Result<ProxyUrl> v6 = ParseProxyUrl("HTTP://[::1]:8080");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->display, "http://[::1]:8080");
}

TEST(ParentProxyTest, ErrorsHideThePassword) {
  Result<ProxyUrl> p = ParseProxyUrl("https://u:secret@p:1");
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().message(),
            "'https://u:***@p:1' is not an http:// proxy URL (srt talks plain HTTP to a parent "
            "proxy)");
  for (const char* bad : {"http://p:0", "http://p:65536", "http://p:", "http://p/x", "http://[::1",
                          "http://bad host", "http://u:%zz@p", "socks5://p:1080"}) {
    EXPECT_FALSE(ParseProxyUrl(bad).has_value()) << bad;
  }
}

TEST(ParentProxyTest, RoutesTunnelsToHttpsAndHonoursNoProxy) {
  ParentProxies parents;
  parents.http = ParentProxyFor(*ParseProxyUrl("http://h:1"));
  parents.https = ParentProxyFor(*ParseProxyUrl("http://s:2"));
  parents.no_proxy = NoProxy::Parse(".internal");
  const Host name = *CanonicalizeHost("example.com");
  EXPECT_EQ(parents.For(true, name, 443)->port, 2);
  EXPECT_EQ(parents.For(false, name, 80)->port, 1);
  EXPECT_EQ(parents.For(true, *CanonicalizeHost("a.internal"), 443), nullptr);
  EXPECT_EQ(parents.For(true, *CanonicalizeHost("127.0.0.1"), 443), nullptr);  // loopback
  parents.https.reset();
  EXPECT_EQ(parents.For(true, name, 443)->port, 1);  // HTTPS falls back to HTTP
}

}  // namespace
}  // namespace srt::proxy
