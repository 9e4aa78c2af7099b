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

// ---- PeekTunnel (network.requireHostMatch on opaque tunnels) --------------------------------

namespace srt::proxy {
namespace {

Host Target() {
  Result<Host> h = CanonicalizeHost("api.example.com");
  return *h;
}

// A ClientHello record with an SNI extension naming `sni` (none for "").
std::string Hello(const std::string& sni) {
  auto be16 = [](size_t v) {
    return std::string{static_cast<char>((v >> 8) & 0xff), static_cast<char>(v & 0xff)};
  };
  std::string ext;
  if (!sni.empty()) {
    const std::string entry = std::string(1, '\0') + be16(sni.size()) + sni;
    const std::string list = be16(entry.size()) + entry;
    ext = std::string(2, '\0') + be16(list.size()) + list;
  }
  const std::string body = std::string("\x03\x03", 2) + std::string(32, 'r') +
                           std::string(1, '\0') + be16(2) + std::string("\x13\x01", 2) +
                           std::string("\x01\x00", 2) + be16(ext.size()) + ext;
  const std::string hs = std::string("\x01\x00", 2) + be16(body.size()) + body;
  return std::string("\x16\x03\x01", 3) + be16(hs.size()) + hs;
}

TEST(PeekTunnelTest, TlsServerNames) {
  EXPECT_EQ(PeekTunnel(Hello("api.example.com"), Target(), 443, false).verdict, PeekVerdict::kPass);
  EXPECT_EQ(PeekTunnel(Hello("API.Example.com."), Target(), 443, false).verdict,
            PeekVerdict::kPass);
  EXPECT_EQ(PeekTunnel(Hello(""), Target(), 443, false).verdict, PeekVerdict::kPass);
  const TunnelPeek other = PeekTunnel(Hello("evil.example.com"), Target(), 443, false);
  EXPECT_EQ(other.verdict, PeekVerdict::kRefuse);
  EXPECT_EQ(other.reason, "TLS server name does not match the request target (requireHostMatch)");
  // Every cut of a ClientHello needs more, and is refused at EOF.
  const std::string hello = Hello("api.example.com");
  for (size_t n = 1; n < hello.size(); ++n) {
    EXPECT_EQ(PeekTunnel(hello.substr(0, n), Target(), 443, false).verdict, PeekVerdict::kNeedMore)
        << n;
    EXPECT_EQ(PeekTunnel(hello.substr(0, n), Target(), 443, true).verdict, PeekVerdict::kRefuse)
        << n;
  }
}

TEST(PeekTunnelTest, HttpHosts) {
  EXPECT_EQ(
      PeekTunnel("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", Target(), 8080, false).verdict,
      PeekVerdict::kPass);
  EXPECT_EQ(
      PeekTunnel("GET / HTTP/1.1\r\nHost: api.example.com:8080\r\n\r\n", Target(), 8080, false)
          .verdict,
      PeekVerdict::kPass);
  EXPECT_EQ(PeekTunnel("GET / HTTP/1.0\r\n\r\n", Target(), 80, false).verdict, PeekVerdict::kPass);
  for (const auto& [head, reason] : std::vector<std::pair<std::string, std::string>>{
           {"GET / HTTP/1.1\r\nHost: other.example.com\r\n\r\n",
            "Host header does not match the request target (requireHostMatch)"},
           {"GET / HTTP/1.1\r\nHost: api.example.com:81\r\n\r\n",
            "Host header does not match the request target (requireHostMatch)"},
           {"GET / HTTP/1.1\r\nHost: api.example.com\r\nHost: api.example.com\r\n\r\n",
            "bad HTTP request: more than one Host field line"},
           {"GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 request without a Host header (requireHostMatch)"},
       }) {
    const TunnelPeek p = PeekTunnel(head, Target(), 8080, false);
    EXPECT_EQ(p.verdict, PeekVerdict::kRefuse) << head;
    EXPECT_EQ(p.reason, reason) << head;
  }
  EXPECT_EQ(PeekTunnel("GET / HTTP/1.1\r\nHost: api", Target(), 80, false).verdict,
            PeekVerdict::kNeedMore);
  EXPECT_EQ(PeekTunnel("GET / HTTP/1.1\r\nHost: api", Target(), 80, true).verdict,
            PeekVerdict::kRefuse);
  // A head that never ends is refused at the bound.
  EXPECT_EQ(PeekTunnel("GET / HTTP/1.1\r\nX: " + std::string(kMaxTunnelPeekBytes, 'a'), Target(),
                       80, false)
                .verdict,
            PeekVerdict::kRefuse);
}

TEST(PeekTunnelTest, OtherProtocolsPass) {
  for (const std::string bytes : {"SSH-2.0-OpenSSH_9.2p1 Debian\r\n", "\x04\xd2\x16\x2f",
                                  "PING\r\n", "EHLO x\r\n", "GET\tx"}) {
    EXPECT_EQ(PeekTunnel(bytes, Target(), 22, false).verdict, PeekVerdict::kPass) << bytes;
  }
  // Too short to tell: more, or (at EOF) let it through.
  EXPECT_EQ(PeekTunnel("SSH", Target(), 22, false).verdict, PeekVerdict::kNeedMore);
  EXPECT_EQ(PeekTunnel("SSH", Target(), 22, true).verdict, PeekVerdict::kPass);
  EXPECT_EQ(PeekTunnel("", Target(), 22, false).verdict, PeekVerdict::kNeedMore);
  EXPECT_EQ(PeekTunnel("", Target(), 22, true).verdict, PeekVerdict::kPass);
}

}  // namespace
}  // namespace srt::proxy
