// SPDX-License-Identifier: Apache-2.0
// Component tests of request filtering through a real ProxyServer: network.requireHostMatch on
// opaque CONNECT and SOCKS5 tunnels (the first bytes peeked), the Host check on plain HTTP,
// network.refuseOpaqueTunnels and network.stripResponseHeaders on plain HTTP.
#include <gtest/gtest.h>

#include <string>

#include "proxy_fixture.h"
#include "server/responses.h"

namespace srt::proxy::testing {
namespace {

std::string B(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

std::string Be16(size_t v) {
  return B({static_cast<int>((v >> 8) & 0xff), static_cast<int>(v & 0xff)});
}

// A minimal TLS 1.2-shaped ClientHello record (one cipher suite, no compression) with an SNI
// extension naming `sni` (none for "").
std::string ClientHello(const std::string& sni) {
  std::string extensions;
  if (!sni.empty()) {
    const std::string entry = B({0}) + Be16(sni.size()) + sni;
    const std::string list = Be16(entry.size()) + entry;
    extensions = B({0, 0}) + Be16(list.size()) + list;
  }
  std::string body = B({3, 3}) + std::string(32, '\x11') + B({0}) + Be16(2) + B({0x13, 0x01}) +
                     B({1, 0}) + Be16(extensions.size()) + extensions;
  std::string handshake = B({1, 0}) + Be16(body.size()) + body;
  return B({0x16, 3, 1}) + Be16(handshake.size()) + handshake;
}

class FilteringTest : public ProxyComponentTest {
 protected:
  void StartWith(bool require_host_match, bool refuse_opaque_tunnels = false,
                 std::chrono::milliseconds peek_timeout = std::chrono::seconds(30)) {
    ProxyOptions options = DefaultOptions();
    options.require_host_match = require_host_match;
    options.refuse_opaque_tunnels = refuse_opaque_tunnels;
    options.handshake_timeout = peek_timeout;
    StartProxy(DefaultNetwork(), std::move(options));
  }
  std::string EchoAuthority() const { return "echo.test:" + Port(echo_.port()); }
  WantRecord Refused(std::string reason) const {
    return {.protocol = Protocol::kConnect,
            .host = "echo.test",
            .port = echo_.port(),
            .allowed = false,
            .reason = std::move(reason)};
  }
};

TEST_F(FilteringTest, ATlsServerNameForAnotherHostClosesAnOpaqueTunnel) {
  StartWith(true);
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, EchoAuthority()));
  ASSERT_TRUE(client.SendAll(ClientHello("other.test")));
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_EQ(client.buffer(), "");  // nothing reached the destination to be echoed
  ExpectOnlyRecord(Refused("TLS server name does not match the request target (requireHostMatch)"));
}

TEST_F(FilteringTest, MatchingOrMissingServerNamesAndNonTlsBytesAreRelayed) {
  StartWith(true);
  for (const std::string& first :
       {ClientHello("ECHO.test."), ClientHello(""), std::string("SSH-2.0-OpenSSH_9.2p1\r\n")}) {
    Stream client = ConnectProxy();
    ASSERT_TRUE(OpenTunnel(client, EchoAuthority()));
    ASSERT_TRUE(client.SendAll(first));
    EXPECT_EQ(client.ReadExactly(first.size()), first);
    ASSERT_TRUE(client.SendAll("more"));
    EXPECT_EQ(client.ReadExactly(4), "more");
  }
}

TEST_F(FilteringTest, AnHttpHostForAnotherHostClosesAnOpaqueTunnel) {
  StartWith(true);
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, EchoAuthority()));
  ASSERT_TRUE(client.SendAll("GET / HTTP/1.1\r\nHost: other.test\r\n\r\n"));
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_EQ(client.buffer(), "");
  ExpectOnlyRecord(Refused("Host header does not match the request target (requireHostMatch)"));

  // The same request with the tunnel's host goes through, sent in pieces.
  Stream ok = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(ok, EchoAuthority()));
  const std::string head = "GET / HTTP/1.1\r\nHost: " + EchoAuthority() + "\r\n\r\n";
  ASSERT_TRUE(ok.SendAll(head.substr(0, 10)));
  ASSERT_TRUE(ok.SendAll(head.substr(10)));
  EXPECT_EQ(ok.ReadExactly(head.size()), head);
}

TEST_F(FilteringTest, ATunnelWhoseClientStaysSilentIsClosedAfterThePeekTimeout) {
  StartWith(true, false, std::chrono::milliseconds(300));
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, EchoAuthority()));
  EXPECT_TRUE(client.WaitClosed());
  ExpectOnlyRecord(
      Refused("no bytes from the client in time (requireHostMatch reads the first ones)"));
}

TEST_F(FilteringTest, WithoutRequireHostMatchAnOpaqueTunnelIsNotPeeked) {
  StartWith(false);
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, EchoAuthority()));
  const std::string hello = ClientHello("other.test");
  ASSERT_TRUE(client.SendAll(hello));
  EXPECT_EQ(client.ReadExactly(hello.size()), hello);
}

TEST_F(FilteringTest, Socks5TunnelsArePeekedToo) {
  StartWith(true);
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(B({5, 1, 2})));
  ASSERT_EQ(client.ReadExactly(2), B({5, 2}));
  ASSERT_TRUE(client.SendAll(B({1, 3}) + "srt" + B({3}) + "tok"));
  ASSERT_EQ(client.ReadExactly(2), B({1, 0}));
  ASSERT_TRUE(client.SendAll(B({5, 1, 0, 3, 9}) + "echo.test" + Be16(echo_.port())));
  ASSERT_EQ(client.ReadExactly(10), B({5, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  ASSERT_TRUE(client.SendAll(ClientHello("other.test")));
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_EQ(client.buffer(), "");
  WantRecord want = Refused("TLS server name does not match the request target (requireHostMatch)");
  want.protocol = Protocol::kSocks5;
  ExpectOnlyRecord(want);
}

TEST_F(FilteringTest, RefuseOpaqueTunnelsRefusesConnectWithUpstreamsBytes) {
  StartWith(false, true);
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("CONNECT " + EchoAuthority() + " HTTP/1.1\r\n" +
                             std::string(kAuthHeader) + "\r\n"));
  const std::string body = "this proxy does not tunnel CONNECTs it cannot inspect";
  EXPECT_EQ(client.ReadToEnd(),
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: "
            "blocked-by-sandbox-runtime\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body);
  ExpectOnlyRecord(
      Refused("this proxy does not tunnel CONNECTs it cannot inspect (refuseOpaqueTunnels)"));
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(FilteringTest, RefuseOpaqueTunnelsRefusesEverySocks5TunnelWithRep1) {
  StartWith(false, true);
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(B({5, 1, 2})));
  ASSERT_EQ(client.ReadExactly(2), B({5, 2}));
  ASSERT_TRUE(client.SendAll(B({1, 3}) + "srt" + B({3}) + "tok"));
  ASSERT_EQ(client.ReadExactly(2), B({1, 0}));
  ASSERT_TRUE(client.SendAll(B({5, 1, 0, 3, 9}) + "echo.test" + Be16(echo_.port())));
  EXPECT_EQ(client.ReadToEnd(), B({5, 1, 0, 1, 0, 0, 0, 0, 0, 0}));
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(FormatRecordText(records[0]),
            "deny socks-tunnel echo.test:" + Port(echo_.port()) + " (refuseOpaqueTunnels)");
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(FilteringTest, PlainHttpWithAHostForAnotherHostIs421AndTheConnectionStays) {
  StartWith(true);
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("GET " + OriginUrl("/a") + " HTTP/1.1\r\nHost: other.test\r\n" +
                             std::string(kAuthHeader) + "\r\n"));
  std::optional<HttpMessage> refused = ReadHttpResponse(client);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status(), 421);
  EXPECT_EQ(refused->body, "Host header does not match the request target\n");
  EXPECT_EQ(origin_.accepted(), 0);
  // The Host naming the target (its port spelled out) is served on the same connection.
  ASSERT_TRUE(client.SendAll("GET " + OriginUrl("/b") + " HTTP/1.1\r\nHost: ORIGIN.test:" +
                             Port(origin_.port()) + "\r\n" + std::string(kAuthHeader) + "\r\n"));
  std::optional<HttpMessage> served = ReadHttpResponse(client);
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->status(), 200);
  EXPECT_EQ(served->body, "hello /b");
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_GE(records.size(), 1u);
  EXPECT_FALSE(records[0].allowed);
  EXPECT_EQ(records[0].reason, "Host header does not match the request target");
}

TEST_F(FilteringTest, StripResponseHeadersOnPlainHttp) {
  ProxyOptions options = DefaultOptions();
  options.strip_response_headers = {"x-host"};
  StartProxy(DefaultNetwork(), std::move(options));
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("GET " + OriginUrl("/s") + " HTTP/1.1\r\n" + std::string(kAuthHeader) +
                             "\r\n"));
  std::optional<HttpMessage> response = ReadHttpResponse(client);
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status(), 200);
  EXPECT_FALSE(response->HasHeader("X-Host")) << response->head;
  EXPECT_TRUE(response->HasHeader("X-Connection")) << response->head;
  EXPECT_EQ(response->body, "hello /s");
}

}  // namespace
}  // namespace srt::proxy::testing
