// SPDX-License-Identifier: Apache-2.0
// Component tests of HTTP CONNECT through a real ProxyServer on loopback: tunnels, credentials,
// refusals with upstream srt's exact bytes (upstream-srt.md §4.9), canonical hosts, and the
// decision records of each.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "proxy_fixture.h"

namespace srt::proxy::testing {
namespace {

using ConnectTest = ProxyComponentTest;

TEST_F(ConnectTest, TunnelRelaysBothWaysIncludingBytesPipelinedAfterTheHead) {
  Stream client = ConnectProxy();
  const std::string authority = "echo.test:" + Port(echo_.port());
  // "early" is sent in the same write as the CONNECT head.
  ASSERT_TRUE(OpenTunnel(client, authority, "early"));
  EXPECT_EQ(client.ReadExactly(5), "early");
  ASSERT_TRUE(client.SendAll("ping"));
  EXPECT_EQ(client.ReadExactly(4), "ping");
  client.ShutdownWrite();
  EXPECT_EQ(client.ReadToEnd(), "");
  EXPECT_EQ(client.status(), Stream::Status::kEof);

  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kConnect,
                            .host = "echo.test",
                            .port = echo_.port(),
                            .allowed = true,
                            .address = "127.0.0.1:" + Port(echo_.port()),
                            .end = "closed",
                            .bytes_up = 9,
                            .bytes_down = kConnectEstablished.size() + 9,
                            .via_parent = false});
  EXPECT_EQ(records[0].matched_entry, "echo.test");
}

TEST_F(ConnectTest, MissingCredentialsGet407AndTheConnectionStaysUsable) {
  Stream client = ConnectProxy();
  const std::string authority = "echo.test:" + Port(echo_.port());
  ASSERT_TRUE(
      client.SendAll("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"));
  EXPECT_EQ(client.ReadExactly(kProxyAuthRequired.size()), kProxyAuthRequired);
  // Wrong password, then a user name that is not srt[.x], on the same connection.
  ASSERT_TRUE(client.SendAll("CONNECT " + authority +
                             " HTTP/1.1\r\nProxy-Authorization: Basic c3J0Ondyb25n\r\n\r\n"));
  EXPECT_EQ(client.ReadExactly(kProxyAuthRequired.size()), kProxyAuthRequired);
  ASSERT_TRUE(client.SendAll("CONNECT " + authority +
                             " HTTP/1.1\r\nProxy-Authorization: Basic Ym9iOnRvaw==\r\n\r\n"));
  EXPECT_EQ(client.ReadExactly(kProxyAuthRequired.size()), kProxyAuthRequired);
  // "srt.attribution:tok" is accepted.
  ASSERT_TRUE(client.SendAll("CONNECT " + authority +
                             " HTTP/1.1\r\nProxy-Authorization: Basic "
                             "c3J0LmF0dHJpYnV0aW9uOnRvaw==\r\n\r\nabc"));
  EXPECT_EQ(client.ReadExactly(kConnectEstablished.size()), kConnectEstablished);
  EXPECT_EQ(client.ReadExactly(3), "abc");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());

  std::vector<ConnectionRecord> records = records_.WaitFor(4);
  ASSERT_EQ(records.size(), 4u);
  const WantRecord refused = {.protocol = Protocol::kConnect,
                              .host = "echo.test",
                              .port = echo_.port(),
                              .allowed = false,
                              .reason = "missing proxy credentials"};
  ExpectRecord(records[0], refused);
  WantRecord wrong = refused;
  wrong.reason = "wrong proxy credentials";
  ExpectRecord(records[1], wrong);
  ExpectRecord(records[2], wrong);
  ExpectRecord(records[3], {.protocol = Protocol::kConnect,
                            .host = "echo.test",
                            .port = echo_.port(),
                            .allowed = true,
                            .end = "closed",
                            .bytes_up = 3,
                            .bytes_down = kConnectEstablished.size() + 3});
}

struct DeniedCase {
  std::string host;
  std::string reason;
};

class ConnectDeniedTest : public ProxyComponentTest,
                          public ::testing::WithParamInterface<DeniedCase> {};

TEST_P(ConnectDeniedTest, RefusedWithTheReasonAsStatusPhraseThenClosed) {
  const DeniedCase& c = GetParam();
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("CONNECT " + c.host + ":443 HTTP/1.1\r\n" + std::string(kAuthHeader) +
                             "\r\n"));
  const std::string body = "Connection blocked by network allowlist";
  EXPECT_EQ(client.ReadToEnd(), "HTTP/1.1 403 " + c.reason +
                                    "\r\nContent-Type: text/plain\r\nX-Proxy-Error: "
                                    "blocked-by-allowlist\r\nContent-Length: " +
                                    std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  std::string host = c.host;
  for (char& ch : host) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  ExpectRecord(records[0], {.protocol = Protocol::kConnect,
                            .host = c.reason == "malformed host" ? c.host : host,
                            .port = 443,
                            .allowed = false,
                            .reason = c.reason,
                            .address = ""});
}

INSTANTIATE_TEST_SUITE_P(
    Reasons, ConnectDeniedTest,
    ::testing::Values(DeniedCase{"nowhere.test", "host is not on the allow list"},
                      DeniedCase{"DENIED.test", "host is on the deny list"},
                      DeniedCase{"reason.test", "no exfiltration here"},
                      // '%' is URI syntax (a well-formed escape) but never a host: 403.
                      DeniedCase{"bad%41host", "malformed host"},
                      DeniedCase{"a..b", "malformed host"},
                      // An IP literal is judged as itself: port 443 is not carved out.
                      DeniedCase{"127.0.0.1", "host is not on the allow list"}));

TEST_F(ConnectTest, NameResolvingToLoopbackIsRefusedUnlessCarvedOut) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("CONNECT loopy.test:" + Port(echo_.port()) + " HTTP/1.1\r\n" +
                             std::string(kAuthHeader) + "\r\n"));
  const std::string body = "Connection to loopy.test blocked: resolved to a loopback address\n";
  EXPECT_EQ(client.ReadToEnd(),
            "HTTP/1.1 403 resolved to a loopback address\r\nContent-Type: text/plain\r\n"
            "X-Proxy-Error: blocked-by-sandbox-runtime\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kConnect,
                            .host = "loopy.test",
                            .port = echo_.port(),
                            .allowed = false,
                            .reason = "resolved to a loopback address",
                            .address = ""});
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(ConnectTest, MissingPortIsExactly400) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("CONNECT echo.test HTTP/1.1\r\n" + std::string(kAuthHeader) + "\r\n"));
  EXPECT_EQ(client.ReadToEnd(), kConnectBadRequest);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].protocol, Protocol::kConnect);
  EXPECT_FALSE(records[0].allowed);
  EXPECT_TRUE(records[0].reason.starts_with("bad request: ")) << records[0].reason;
}

TEST_F(ConnectTest, DialFailureIsExactly502) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("CONNECT dead.test:" + Port(dead_->port) + " HTTP/1.1\r\n" +
                             std::string(kAuthHeader) + "\r\n"));
  EXPECT_EQ(client.ReadToEnd(), kConnectBadGateway);
  ExpectOnlyRecord({.protocol = Protocol::kConnect,
                    .host = "dead.test",
                    .port = dead_->port,
                    .allowed = true,
                    .address = "127.0.0.1:" + Port(dead_->port),
                    .end = "dial-failed",
                    .error_contains = "Connection refused"});
}

TEST_F(ConnectTest, InetAtonFormIsCanonicalisedAndAllowedByTheDottedEntry) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, "127.1:" + Port(echo_.port())));
  ASSERT_TRUE(client.SendAll("x"));
  EXPECT_EQ(client.ReadExactly(1), "x");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kConnect,
                            .host = "127.0.0.1",
                            .port = echo_.port(),
                            .allowed = true,
                            .address = "127.0.0.1:" + Port(echo_.port()),
                            .end = "closed",
                            .bytes_up = 1,
                            .bytes_down = kConnectEstablished.size() + 1});
  EXPECT_EQ(records[0].matched_entry, "127.0.0.1:" + Port(echo_.port()));
}

TEST_F(ConnectTest, Ipv6Literal) {
  EchoServer echo6;
  if (!echo6.Start("::1")) GTEST_SKIP() << "no IPv6 loopback";
  NetworkSettings network = DefaultNetwork();
  network.allowed_domains.push_back("[::1]:" + Port(echo6.port()));
  StartProxy(network, DefaultOptions());
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, "[0:0::1]:" + Port(echo6.port())));
  ASSERT_TRUE(client.SendAll("six"));
  EXPECT_EQ(client.ReadExactly(3), "six");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kConnect,
                            .host = "::1",
                            .port = echo6.port(),
                            .allowed = true,
                            .address = "[::1]:" + Port(echo6.port()),
                            .end = "closed",
                            .bytes_up = 3,
                            .bytes_down = kConnectEstablished.size() + 3});
  // Another port of ::1 is not carved out.
  Stream other = ConnectProxy();
  ASSERT_TRUE(other.SendAll("CONNECT [::1]:" + Port(echo_.port()) + " HTTP/1.1\r\n" +
                            std::string(kAuthHeader) + "\r\n"));
  EXPECT_TRUE(other.ReadToEnd().starts_with("HTTP/1.1 403 host is not on the allow list\r\n"));
  StopProxy();
  echo6.Stop();
}

TEST_F(ConnectTest, LargeTransferBothWaysIsCountedExactly) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, "echo.test:" + Port(echo_.port())));
  std::string payload(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>((i * 131) % 251);
  // Write and read concurrently: the echo only drains as fast as we read.
  std::thread writer([&] {
    Stream w(UniqueFd(fcntl(client.fd(), F_DUPFD_CLOEXEC, 0)));
    EXPECT_TRUE(w.SendAll(payload));
    w.ShutdownWrite();
  });
  std::optional<std::string> back =
      client.ReadExactly(payload.size(), Deadline(std::chrono::seconds(60)));
  writer.join();
  ASSERT_TRUE(back.has_value()) << StatusName(client.status());
  EXPECT_TRUE(*back == payload);
  EXPECT_TRUE(client.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].end, "closed");
  EXPECT_EQ(records[0].bytes_up, payload.size());
  EXPECT_EQ(records[0].bytes_down, kConnectEstablished.size() + payload.size());
}

TEST_F(ConnectTest, HeadArrivingOneByteAtATime) {
  Stream client = ConnectProxy();
  const std::string authority = "echo.test:" + Port(echo_.port());
  const std::string head = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n" +
                           std::string(kAuthHeader) + "\r\n";
  for (char c : head) ASSERT_TRUE(client.SendAll(std::string(1, c)));
  EXPECT_EQ(client.ReadExactly(kConnectEstablished.size()), kConnectEstablished);
  ASSERT_TRUE(client.SendAll("1"));
  EXPECT_EQ(client.ReadExactly(1), "1");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].end, "closed");
}

TEST_F(ConnectTest, DialFallsBackToTheNextVettedAddress) {
  NetworkSettings network = DefaultNetwork();
  network.allowed_domains.push_back("multi.test");
  network.allowed_domains.push_back("127.0.0.2:" + Port(echo_.port()));
  StartProxy(network, DefaultOptions(), [](FakeResolver& resolver) {
    // ::1 is refused by the guard (not carved out); 127.0.0.2 is carved out but nothing
    // listens there; 127.0.0.1 answers.
    resolver.SetAddresses("multi.test", {"::1", "127.0.0.2", "127.0.0.1"});
  });
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, "multi.test:" + Port(echo_.port()), "m"));
  EXPECT_EQ(client.ReadExactly(1), "m");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  ExpectOnlyRecord({.protocol = Protocol::kConnect,
                    .host = "multi.test",
                    .port = echo_.port(),
                    .allowed = true,
                    .address = "127.0.0.1:" + Port(echo_.port()),
                    .end = "closed",
                    .bytes_up = 1,
                    .bytes_down = kConnectEstablished.size() + 1});
}

TEST_F(ConnectTest, IdleTunnelIsClosedAndLoggedAsIdle) {
  ProxyOptions options = DefaultOptions();
  options.tunnel.idle_timeout = std::chrono::milliseconds(200);
  StartProxy(DefaultNetwork(), std::move(options));
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, "echo.test:" + Port(echo_.port()), "z"));
  EXPECT_EQ(client.ReadExactly(1), "z");
  EXPECT_TRUE(client.WaitClosed());  // nothing more is sent either way
  EXPECT_TRUE(echo_.WaitFinished(1));
  ExpectOnlyRecord({.protocol = Protocol::kConnect,
                    .host = "echo.test",
                    .port = echo_.port(),
                    .allowed = true,
                    .end = "idle",
                    .bytes_up = 1,
                    .bytes_down = kConnectEstablished.size() + 1});
}

TEST_F(ConnectTest, ManyConcurrentTunnels) {
  constexpr int kClients = 64;
  std::vector<Stream> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(ConnectProxy());
    ASSERT_TRUE(clients.back().SendAll("CONNECT echo.test:" + Port(echo_.port()) + " HTTP/1.1\r\n" +
                                       std::string(kAuthHeader) + "\r\n"));
  }
  const std::string chunk(10000, 'c');
  for (int i = 0; i < kClients; ++i) {
    ASSERT_EQ(clients[static_cast<size_t>(i)].ReadExactly(kConnectEstablished.size()),
              kConnectEstablished);
    ASSERT_TRUE(clients[static_cast<size_t>(i)].SendAll(chunk + std::to_string(i)));
  }
  for (int i = 0; i < kClients; ++i) {
    Stream& c = clients[static_cast<size_t>(i)];
    const std::string want = chunk + std::to_string(i);
    EXPECT_EQ(c.ReadExactly(want.size()), want);
    c.ShutdownWrite();
  }
  for (Stream& c : clients) EXPECT_TRUE(c.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(kClients);
  ASSERT_EQ(records.size(), static_cast<size_t>(kClients));
  for (const ConnectionRecord& r : records) EXPECT_EQ(r.end, "closed");
}

}  // namespace
}  // namespace srt::proxy::testing
