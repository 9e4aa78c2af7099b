// SPDX-License-Identifier: Apache-2.0
#include "server/responses.h"

#include <gtest/gtest.h>

namespace srt::proxy {
namespace {

TEST(ResponsesTest, ConnectRefusalCarriesTheReasonAsStatusPhrase) {
  EXPECT_EQ(HttpBlocked(true, "host is not on the allow list"),
            "HTTP/1.1 403 host is not on the allow list\r\nContent-Type: text/plain\r\n"
            "X-Proxy-Error: blocked-by-allowlist\r\nContent-Length: 39\r\n\r\n"
            "Connection blocked by network allowlist");
}

TEST(ResponsesTest, PlainRefusalIsForbiddenWithANewline) {
  EXPECT_EQ(HttpBlocked(false, "host is on the deny list"),
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
            "X-Proxy-Error: blocked-by-allowlist\r\nContent-Length: 40\r\n\r\n"
            "Connection blocked by network allowlist\n");
}

TEST(ResponsesTest, ResolvedRefusal) {
  EXPECT_EQ(HttpResolvedBlocked(true, "evil.test", "resolved to a loopback address"),
            "HTTP/1.1 403 resolved to a loopback address\r\nContent-Type: text/plain\r\n"
            "X-Proxy-Error: blocked-by-sandbox-runtime\r\nContent-Length: 64\r\n\r\n"
            "Connection to evil.test blocked: resolved to a loopback address\n");
  EXPECT_TRUE(
      HttpResolvedBlocked(false, "h", "resolved to x").starts_with("HTTP/1.1 403 Forbidden\r\n"));
}

TEST(ResponsesTest, ExactUpstreamBytes) {
  EXPECT_EQ(HttpBadGateway(true), "HTTP/1.1 502 Bad Gateway\r\n\r\n");
  EXPECT_EQ(HttpError(400, true), "HTTP/1.1 400 Bad Request\r\n\r\n");
  EXPECT_EQ(HttpBadGateway(false),
            "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\n"
            "Bad Gateway");
  EXPECT_EQ(HttpProxyAuthRequired(),
            "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic "
            "realm=\"srt\"\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(HttpError(431, false),
            "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n"
            "Content-Length: 0\r\n\r\n");
}

TEST(ResponsesTest, ADenyReasonCannotSplitTheResponse) {
  const std::string r = HttpBlocked(true, "bad\r\nX-Injected: 1");
  EXPECT_EQ(r.find("\r\nX-Injected"), std::string::npos);
}

TEST(ResponsesTest, SshRefusalIsAWellFormedPacket) {
  const std::string bytes = SshPolicyRefusal("no");
  const std::string banner = "SSH-2.0-policy_refusal\r\n";
  ASSERT_TRUE(bytes.starts_with(banner));
  const std::string packet = bytes.substr(banner.size());
  ASSERT_GE(packet.size(), 5u);
  uint32_t length = 0;
  for (size_t i = 0; i < 4; ++i) length = (length << 8) | static_cast<uint8_t>(packet[i]);
  EXPECT_EQ(length + 4, packet.size());
  EXPECT_EQ(packet.size() % 8, 0u);  // RFC 4253 §6: a multiple of the cipher block size (8)
  const auto padding = static_cast<uint8_t>(packet[4]);
  EXPECT_GE(padding, 4);
  EXPECT_EQ(packet[5], 1);                                     // SSH_MSG_DISCONNECT
  EXPECT_EQ(packet.substr(6, 4), std::string("\0\0\0\1", 4));  // reason 1
  EXPECT_EQ(packet.substr(10, 6), std::string("\0\0\0\2no", 6));
}

}  // namespace
}  // namespace srt::proxy
