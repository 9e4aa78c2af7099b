// SPDX-License-Identifier: Apache-2.0
// Component tests of a ProxyServer's limits and lifecycle: the connection cap, the handshake
// timeout, the head size limit, live rule updates, shutdown with open tunnels, and chaining to a
// parent proxy (network.parentProxy with NO_PROXY).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "proxy_fixture.h"
#include "server/dialer.h"
#include "server/parent_proxy.h"

namespace srt::proxy::testing {
namespace {

using LimitsTest = ProxyComponentTest;
using LifecycleTest = ProxyComponentTest;

// Polls `done` until it holds or `deadline` passes (for state only the loop thread sees).
bool Eventually(const std::function<bool()>& done, Clock::time_point deadline = Deadline()) {
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// The default cap is no longer 1,024 (issue 12: ten thousand tunnels at once): more clients than
// that are all served. Each is a session waiting for its head.
TEST_F(LimitsTest, TheDefaultCapServesMoreThanAThousandClients) {
  constexpr size_t kClients = 1100;
  rlimit nofile{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &nofile), 0);
  // Both ends are in this process, with room for the fixture's own.
  const rlim_t needed = 2 * kClients + 256;
  if (nofile.rlim_cur < needed) {
    if (nofile.rlim_max < needed) GTEST_SKIP() << "RLIMIT_NOFILE hard limit below " << needed;
    nofile.rlim_cur = needed;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &nofile), 0);
  }
  StartProxy(DefaultNetwork(), DefaultOptions());
  std::vector<Stream> clients;
  clients.reserve(kClients);
  for (size_t i = 0; i < kClients; ++i) {
    clients.push_back(ConnectProxy());
    ASSERT_TRUE(clients.back().SendAll("CONNECT echo.test:1 HTTP/1.1\r\n"));  // no end of head
    // In steps the fixture's listen backlog (128) can take, so no SYN waits for a retry.
    if (i % 64 == 63) {
      ASSERT_TRUE(Eventually([&] { return ServerConnections() == i + 1; })) << i;
    }
  }
  ASSERT_TRUE(Eventually([&] { return ServerConnections() == kClients; }))
      << ServerConnections() << " sessions";
  // The last one is served like the first.
  ASSERT_TRUE(clients.back().SendAll("\r\n"));
  EXPECT_EQ(clients.back().ReadExactly(kProxyAuthRequired.size()), kProxyAuthRequired);
}

TEST_F(LimitsTest, ConnectionsOverTheLimitAreReset) {
  ProxyOptions options = DefaultOptions();
  options.max_connections = 1;
  StartProxy(DefaultNetwork(), std::move(options));
  // The first connection holds the only slot: it got an answer, so its session exists.
  Stream first = ConnectProxy();
  ASSERT_TRUE(first.SendAll("CONNECT echo.test:1 HTTP/1.1\r\n\r\n"));
  ASSERT_EQ(first.ReadExactly(kProxyAuthRequired.size()), kProxyAuthRequired);
  Stream second = ConnectProxy();
  EXPECT_EQ(second.ReadToEnd(), "");
  EXPECT_EQ(second.status(), Stream::Status::kReset) << StatusName(second.status());
  // Once the first is gone, a new connection is served again.
  first = Stream(UniqueFd());
  ASSERT_TRUE(Eventually([&] { return ServerConnections() == 0; }));
  Stream third = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(third, "echo.test:" + Port(echo_.port())));
  third.ShutdownWrite();
  EXPECT_TRUE(third.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].reason, "missing proxy credentials");
  EXPECT_EQ(records[1].end, "closed");
}

TEST_F(LimitsTest, HandshakeTimeoutClosesSilentAndSlowClients) {
  ProxyOptions options = DefaultOptions();
  options.handshake_timeout = std::chrono::milliseconds(200);
  StartProxy(DefaultNetwork(), std::move(options));
  Stream silent = ConnectProxy();
  Stream partial_http = ConnectProxy();
  ASSERT_TRUE(partial_http.SendAll("CONNECT echo.test:" + Port(echo_.port()) + " HTTP/1.1\r\n"));
  Stream partial_socks = ConnectProxy();
  ASSERT_TRUE(partial_socks.SendAll(std::string("\x05\x01", 2)));
  for (Stream* s : {&silent, &partial_http, &partial_socks}) {
    EXPECT_TRUE(s->WaitClosed()) << StatusName(s->status());
    EXPECT_EQ(s->buffer(), "");
  }
  EXPECT_TRUE(Eventually([&] { return ServerConnections() == 0; }));
  EXPECT_TRUE(records_.Snapshot().empty());
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(LimitsTest, HeadOverTheLimitIs431) {
  Stream client = ConnectProxy();
  std::string head = "GET http://origin.test:" + Port(origin_.port()) + "/ HTTP/1.1\r\n" +
                     std::string(kAuthHeader);
  while (head.size() < 70 * 1024) head += "X-Filler: " + std::string(1000, 'f') + "\r\n";
  head += "\r\n";
  ASSERT_TRUE(client.SendAll(head));
  EXPECT_EQ(client.ReadToEnd(),
            "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n"
            "Content-Length: 0\r\n\r\n");
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_FALSE(records[0].allowed);
  EXPECT_TRUE(records[0].reason.starts_with("bad request: ")) << records[0].reason;
  EXPECT_EQ(origin_.accepted(), 0);
}

TEST_F(LimitsTest, TooManyHeaderLinesIs431) {
  Stream client = ConnectProxy();
  std::string head =
      "CONNECT echo.test:" + Port(echo_.port()) + " HTTP/1.1\r\n" + std::string(kAuthHeader);
  for (int i = 0; i < 120; ++i) head += "X-H" + std::to_string(i) + ": v\r\n";
  head += "\r\n";
  ASSERT_TRUE(client.SendAll(head));
  EXPECT_TRUE(client.ReadToEnd().starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].protocol, Protocol::kConnect);
  EXPECT_FALSE(records[0].allowed);
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(LifecycleTest, UpdatedRulesApplyToNewRequestsOnly) {
  Stream tunnel = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(tunnel, "echo.test:" + Port(echo_.port())));
  NetworkSettings narrower = DefaultNetwork();
  std::erase(narrower.allowed_domains, std::string("echo.test"));
  UpdateRules(narrower);
  Stream refused = ConnectProxy();
  ASSERT_TRUE(refused.SendAll("CONNECT echo.test:" + Port(echo_.port()) + " HTTP/1.1\r\n" +
                              std::string(kAuthHeader) + "\r\n"));
  EXPECT_TRUE(refused.ReadToEnd().starts_with("HTTP/1.1 403 host is not on the allow list\r\n"));
  // The tunnel decided under the old rules keeps working.
  ASSERT_TRUE(tunnel.SendAll("still"));
  EXPECT_EQ(tunnel.ReadExactly(5), "still");
  tunnel.ShutdownWrite();
  EXPECT_TRUE(tunnel.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  ExpectRecord(records[0], {.protocol = Protocol::kConnect,
                            .host = "echo.test",
                            .port = echo_.port(),
                            .allowed = false,
                            .reason = "host is not on the allow list"});
  ExpectRecord(records[1], {.protocol = Protocol::kConnect,
                            .host = "echo.test",
                            .port = echo_.port(),
                            .allowed = true,
                            .end = "closed",
                            .bytes_up = 5,
                            .bytes_down = kConnectEstablished.size() + 5});
}

TEST_F(LifecycleTest, DestroyingTheServerClosesOpenTunnelsAndLogsShutdown) {
  Stream tunnel = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(tunnel, "echo.test:" + Port(echo_.port())));
  ASSERT_TRUE(tunnel.SendAll("abc"));
  ASSERT_EQ(tunnel.ReadExactly(3), "abc");
  // An idle keep-alive HTTP connection and a half-sent head are closed too.
  Stream idle = ConnectProxy();
  ASSERT_TRUE(
      idle.SendAll("GET " + OriginUrl("/") + " HTTP/1.1\r\n" + std::string(kAuthHeader) + "\r\n"));
  ASSERT_TRUE(ReadHttpResponse(idle).has_value());
  Stream partial = ConnectProxy();
  ASSERT_TRUE(partial.SendAll("CONNECT echo"));
  ASSERT_EQ(records_.WaitFor(1).size(), 1u);  // the HTTP exchange
  StopProxy();
  EXPECT_TRUE(tunnel.WaitClosed()) << StatusName(tunnel.status());
  EXPECT_TRUE(idle.WaitClosed());
  EXPECT_TRUE(partial.WaitClosed());
  EXPECT_TRUE(echo_.WaitFinished(1));    // the tunnel's upstream side
  EXPECT_TRUE(origin_.WaitFinished(1));  // the kept-alive upstream connection
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  ExpectRecord(records[1], {.protocol = Protocol::kConnect,
                            .host = "echo.test",
                            .port = echo_.port(),
                            .allowed = true,
                            .address = "127.0.0.1:" + Port(echo_.port()),
                            .end = "shutdown",
                            .bytes_up = 3,
                            .bytes_down = kConnectEstablished.size() + 3});
}

TEST_F(LifecycleTest, ShutdownLogsExchangesAndDialsInFlight) {
  NetworkSettings network = DefaultNetwork();
  network.allowed_domains.push_back("slow.test");
  StartProxy(network, DefaultOptions(), [](FakeResolver& resolver) {
    resolver.SetAddresses("slow.test", {"127.0.0.1"}, std::chrono::minutes(10));
  });
  Stream stalled = ConnectProxy();
  ASSERT_TRUE(stalled.SendAll("GET " + OriginUrl("/stall") + " HTTP/1.1\r\n" +
                              std::string(kAuthHeader) + "\r\n"));
  ASSERT_TRUE(Eventually([&] { return origin_.requests().size() == 1; }));
  Stream dialing = ConnectProxy();
  ASSERT_TRUE(
      dialing.SendAll("CONNECT slow.test:443 HTTP/1.1\r\n" + std::string(kAuthHeader) + "\r\n"));
  Stream socks = ConnectProxy();
  const std::string name = "slow.test";
  ASSERT_TRUE(socks.SendAll(std::string("\x05\x01\x02\x01\x03srt\x03tok\x05\x01\x00\x03", 16) +
                            static_cast<char>(name.size()) + name + std::string("\x01\xbb", 2)));
  ASSERT_EQ(socks.ReadExactly(4), std::string("\x05\x02\x01\x00", 4));
  ASSERT_TRUE(Eventually([&] {
    size_t n = 0;
    OnLoop([&] { n = server_->dialer().in_flight(); });
    return n == 2;
  }));
  StopProxy();
  EXPECT_TRUE(stalled.WaitClosed());
  EXPECT_TRUE(dialing.WaitClosed());
  EXPECT_TRUE(socks.WaitClosed());
  EXPECT_TRUE(origin_.WaitFinished(1));
  std::vector<ConnectionRecord> records = records_.WaitFor(3);
  ASSERT_EQ(records.size(), 3u);
  // Sessions are shut down in no particular order.
  std::sort(records.begin(), records.end(),
            [](const ConnectionRecord& a, const ConnectionRecord& b) {
              return static_cast<int>(a.protocol) < static_cast<int>(b.protocol);
            });
  ExpectRecord(records[0], {.protocol = Protocol::kHttp,
                            .host = "origin.test",
                            .port = origin_.port(),
                            .allowed = true,
                            .address = "127.0.0.1:" + Port(origin_.port()),
                            .end = "shutdown"});
  ExpectRecord(records[1], {.protocol = Protocol::kConnect,
                            .host = "slow.test",
                            .port = 443,
                            .allowed = true,
                            .address = "",
                            .end = "shutdown"});
  ExpectRecord(records[2], {.protocol = Protocol::kSocks5,
                            .host = "slow.test",
                            .port = 443,
                            .allowed = true,
                            .address = "",
                            .end = "shutdown"});
}

// A tunnel whose client had finished (sent its EOF, got everything) when srt stops is recorded
// as closed: srt only did not wait for the origin's own EOF. (It was "shutdown", which made a
// busy machine's log say srt had cut a connection its client had ended.)
TEST_F(LifecycleTest, ATunnelItsClientHadFinishedIsClosedNotCutAtShutdown) {
  std::optional<Listening> silent = ListenTcp("127.0.0.1");  // never closes on its own
  ASSERT_TRUE(silent.has_value());
  NetworkSettings network = DefaultNetwork();
  const std::string authority = "127.0.0.1:" + Port(silent->port);
  network.allowed_domains.push_back(authority);
  StartProxy(network, DefaultOptions());
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, authority, "bye"));
  client.ShutdownWrite();
  Stream origin(UniqueFd(accept4(silent->fd.get(), nullptr, nullptr, SOCK_CLOEXEC)));
  EXPECT_EQ(origin.ReadToEnd(), "bye");  // the client's EOF reached the origin
  StopProxy();
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].end, "closed");
}

class ParentProxyTest : public ProxyComponentTest {
 protected:
  void StartWithParent(std::string_view no_proxy = "") {
    ProxyOptions options = DefaultOptions();
    Result<ProxyUrl> parent = ParseProxyUrl("http://u:p@127.0.0.1:" + Port(parent_.port()));
    ASSERT_TRUE(parent.has_value()) << parent.error().message();
    options.parents.http = ParentProxyFor(*parent);
    options.parents.no_proxy = NoProxy::Parse(no_proxy);
    NetworkSettings network = DefaultNetwork();
    network.allowed_domains.push_back("remote.test");
    StartProxy(network, std::move(options));
  }

  FakeParentProxy parent_;
};

TEST_F(ParentProxyTest, ConnectGoesThroughTheParentWithItsCredentials) {
  ASSERT_TRUE(parent_.Start());
  StartWithParent();
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, "remote.test:443", "hi"));
  EXPECT_EQ(client.ReadExactly(2), "hi");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  std::vector<HttpMessage> heads = parent_.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0].start_line, "CONNECT remote.test:443 HTTP/1.1");
  EXPECT_EQ(heads[0].Header("Host"), "remote.test:443");
  EXPECT_EQ(heads[0].Header("Proxy-Authorization"), "Basic dTpw");
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kConnect,
                            .host = "remote.test",
                            .port = 443,
                            .allowed = true,
                            .address = "127.0.0.1:" + Port(parent_.port()),
                            .end = "closed",
                            .bytes_up = 2,
                            .bytes_down = kConnectEstablished.size() + 2,
                            .via_parent = true});
  StopProxy();
  parent_.Stop();
}

TEST_F(ParentProxyTest, PlainHttpGoesToTheParentInAbsoluteForm) {
  ASSERT_TRUE(parent_.Start());
  StartWithParent();
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("GET http://remote.test/path?q HTTP/1.1\r\nHost: remote.test\r\n" +
                             std::string(kAuthHeader) + "\r\n"));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "via parent http://remote.test/path?q");
  std::vector<HttpMessage> heads = parent_.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0].start_line, "GET http://remote.test/path?q HTTP/1.1");
  // The parent's credentials replace the sandbox's.
  EXPECT_EQ(heads[0].Header("Proxy-Authorization"), "Basic dTpw");
  EXPECT_EQ(heads[0].Header("Host"), "remote.test");
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kHttp,
                            .host = "remote.test",
                            .port = 80,
                            .allowed = true,
                            .address = "127.0.0.1:" + Port(parent_.port()),
                            .end = "closed",
                            .via_parent = true});
  StopProxy();
  parent_.Stop();
}

// The parent gets the authority srt decided on, not the client's spelling of it: a parent that
// reads "REMOTE.test.:80" or a userinfo part its own way must not reach anything else.
TEST_F(ParentProxyTest, PlainHttpToTheParentCarriesTheCanonicalAuthority) {
  ASSERT_TRUE(parent_.Start());
  StartWithParent();
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("GET http://REMOTE.Test.:80/path?q HTTP/1.1\r\nHost: x\r\n" +
                             std::string(kAuthHeader) + "\r\n"));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  std::vector<HttpMessage> heads = parent_.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0].start_line, "GET http://remote.test/path?q HTTP/1.1");
  EXPECT_EQ(heads[0].Header("Host"), "remote.test");
  StopProxy();
  parent_.Stop();
}

TEST_F(ParentProxyTest, ParentRefusalIs502) {
  ASSERT_TRUE(parent_.Start("403 Forbidden"));
  StartWithParent();
  Stream client = ConnectProxy();
  ASSERT_TRUE(
      client.SendAll("CONNECT remote.test:443 HTTP/1.1\r\n" + std::string(kAuthHeader) + "\r\n"));
  EXPECT_EQ(client.ReadToEnd(), kConnectBadGateway);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kConnect,
                            .host = "remote.test",
                            .port = 443,
                            .allowed = true,
                            .end = "dial-failed",
                            .error_contains = "answered 403"});
  StopProxy();
  parent_.Stop();
}

TEST_F(ParentProxyTest, NoProxyGoesDirect) {
  ASSERT_TRUE(parent_.Start());
  StartWithParent("echo.test");
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, "echo.test:" + Port(echo_.port()), "d"));
  EXPECT_EQ(client.ReadExactly(1), "d");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  // An IP-literal loopback destination always bypasses the parent.
  Stream literal = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(literal, "127.0.0.1:" + Port(echo_.port())));
  literal.ShutdownWrite();
  EXPECT_TRUE(literal.WaitClosed());
  EXPECT_EQ(parent_.accepted(), 0);
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  for (const ConnectionRecord& r : records) {
    EXPECT_FALSE(r.via_parent);
    EXPECT_EQ(r.address, "127.0.0.1:" + Port(echo_.port()));
    EXPECT_EQ(r.end, "closed");
  }
  StopProxy();
  parent_.Stop();
}

}  // namespace
}  // namespace srt::proxy::testing
