// SPDX-License-Identifier: Apache-2.0
// Component tests of SOCKS5 (RFC 1928/1929) through a real ProxyServer, byte for byte from a raw
// socket: authentication, the three address types, refusals and their REP codes
// (upstream-srt.md §4.9), and the listener's protocol mux.
#include <gtest/gtest.h>

#include <string>

#include "proxy_fixture.h"

namespace srt::proxy::testing {
namespace {

using Socks5Test = ProxyComponentTest;
using MuxTest = ProxyComponentTest;

std::string B(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

std::string PortBytes(uint16_t port) { return B({port >> 8, port & 0xff}); }

const std::string kGreetUserPass = B({5, 1, 2});
const std::string kChoseUserPass = B({5, 2});
const std::string kAuthOk = B({1, 0});
const std::string kAuthFailed = B({1, 1});
// VER REP RSV ATYP=1 0.0.0.0:0
std::string Reply(int rep) { return B({5, rep, 0, 1, 0, 0, 0, 0, 0, 0}); }

std::string UserPass(const std::string& user, const std::string& password) {
  return B({1, static_cast<int>(user.size())}) + user + B({static_cast<int>(password.size())}) +
         password;
}

std::string ConnectName(const std::string& name, uint16_t port, int command = 1) {
  return B({5, command, 0, 3, static_cast<int>(name.size())}) + name + PortBytes(port);
}

std::string ConnectIpv4(uint16_t port) { return B({5, 1, 0, 1, 127, 0, 0, 1}) + PortBytes(port); }

std::string ConnectIpv6Loopback(uint16_t port) {
  return B({5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}) + PortBytes(port);
}

// Greeting and authentication as srt:tok, step by step as clients do.
void Authenticate(Stream& client) {
  ASSERT_TRUE(client.SendAll(kGreetUserPass));
  ASSERT_EQ(client.ReadExactly(2), kChoseUserPass);
  ASSERT_TRUE(client.SendAll(UserPass("srt", "tok")));
  ASSERT_EQ(client.ReadExactly(2), kAuthOk);
}

TEST_F(Socks5Test, UserPassAndADomainTarget) {
  Stream client = ConnectProxy();
  Authenticate(client);
  ASSERT_TRUE(client.SendAll(ConnectName("Echo.Test", echo_.port())));
  EXPECT_EQ(client.ReadExactly(10), Reply(0));
  ASSERT_TRUE(client.SendAll("socks"));
  EXPECT_EQ(client.ReadExactly(5), "socks");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  ExpectOnlyRecord({.protocol = Protocol::kSocks5,
                    .host = "echo.test",
                    .port = echo_.port(),
                    .allowed = true,
                    .address = "127.0.0.1:" + Port(echo_.port()),
                    .end = "closed",
                    .bytes_up = 5,
                    .bytes_down = 10 + 5});
}

TEST_F(Socks5Test, WholeHandshakeAndDataInOneWrite) {
  Stream client = ConnectProxy();
  // srt.<attribution> is a valid user name too.
  ASSERT_TRUE(client.SendAll(kGreetUserPass + UserPass("srt.job-7", "tok") +
                             ConnectIpv4(echo_.port()) + "eager"));
  EXPECT_EQ(client.ReadExactly(2 + 2 + 10 + 5), kChoseUserPass + kAuthOk + Reply(0) + "eager");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  ExpectOnlyRecord({.protocol = Protocol::kSocks5,
                    .host = "127.0.0.1",
                    .port = echo_.port(),
                    .allowed = true,
                    .address = "127.0.0.1:" + Port(echo_.port()),
                    .end = "closed",
                    .bytes_up = 5,
                    .bytes_down = 10 + 5});
}

TEST_F(Socks5Test, Ipv6Target) {
  EchoServer echo6;
  if (!echo6.Start("::1")) GTEST_SKIP() << "no IPv6 loopback";
  NetworkSettings network = DefaultNetwork();
  network.allowed_domains.push_back("[::1]:" + Port(echo6.port()));
  StartProxy(network, DefaultOptions());
  Stream client = ConnectProxy();
  Authenticate(client);
  ASSERT_TRUE(client.SendAll(ConnectIpv6Loopback(echo6.port())));
  EXPECT_EQ(client.ReadExactly(10), Reply(0));
  ASSERT_TRUE(client.SendAll("v6"));
  EXPECT_EQ(client.ReadExactly(2), "v6");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kSocks5,
                            .host = "::1",
                            .port = echo6.port(),
                            .allowed = true,
                            .address = "[::1]:" + Port(echo6.port()),
                            .end = "closed",
                            .bytes_up = 2,
                            .bytes_down = 12});
  StopProxy();
  echo6.Stop();
}

TEST_F(Socks5Test, WrongPasswordGetsStatus1ThenClose) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(kGreetUserPass));
  ASSERT_EQ(client.ReadExactly(2), kChoseUserPass);
  ASSERT_TRUE(client.SendAll(UserPass("srt", "nope")));
  EXPECT_EQ(client.ReadToEnd(), kAuthFailed);
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kSocks5,
                            .host = "",
                            .port = 0,
                            .allowed = false,
                            .reason = "wrong proxy credentials"});
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(Socks5Test, WrongUserNameGetsStatus1) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(kGreetUserPass));
  ASSERT_EQ(client.ReadExactly(2), kChoseUserPass);
  ASSERT_TRUE(client.SendAll(UserPass("srtx", "tok")));
  EXPECT_EQ(client.ReadToEnd(), kAuthFailed);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].reason, "wrong proxy credentials");
}

TEST_F(Socks5Test, NoAuthClientIsAcceptedThenRefusedWithRep2) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(B({5, 1, 0})));
  ASSERT_EQ(client.ReadExactly(2), B({5, 0}));
  ASSERT_TRUE(client.SendAll(ConnectName("echo.test", echo_.port())));
  EXPECT_EQ(client.ReadToEnd(), Reply(2));
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kSocks5,
                            .host = "echo.test",
                            .port = echo_.port(),
                            .allowed = false,
                            .reason = "missing proxy credentials"});
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(Socks5Test, NoAuthClientOnPort22GetsAnSshRefusal) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(B({5, 1, 0})));
  ASSERT_EQ(client.ReadExactly(2), B({5, 0}));
  ASSERT_TRUE(client.SendAll(ConnectName("github.com", 22)));
  const std::string all = client.ReadToEnd();
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  const std::string banner = "SSH-2.0-policy_refusal\r\n";
  ASSERT_TRUE(all.starts_with(Reply(0) + banner)) << all;
  // One SSH binary packet: uint32 length, padding length, SSH_MSG_DISCONNECT (1), reason 1.
  const std::string packet = all.substr(10 + banner.size());
  ASSERT_GE(packet.size(), 10u);
  const uint32_t length = (static_cast<uint32_t>(static_cast<uint8_t>(packet[0])) << 24) |
                          (static_cast<uint32_t>(static_cast<uint8_t>(packet[1])) << 16) |
                          (static_cast<uint32_t>(static_cast<uint8_t>(packet[2])) << 8) |
                          static_cast<uint32_t>(static_cast<uint8_t>(packet[3]));
  EXPECT_EQ(length + 4, packet.size());
  EXPECT_EQ(packet[5], 1);
  EXPECT_EQ(packet.substr(6, 4), B({0, 0, 0, 1}));
  EXPECT_NE(packet.find("proxy credentials"), std::string::npos);
  ExpectOnlyRecord({.protocol = Protocol::kSocks5,
                    .host = "github.com",
                    .port = 22,
                    .allowed = false,
                    .reason = "missing proxy credentials"});
}

// A refusal on port 22 is what ssh can print: a SOCKS "succeeded", then an SSH banner and a
// disconnect message that says why (ssh shows "Received disconnect ...: <message>"), where a
// bare REP 2 only gets "Connection closed by remote host".
TEST_F(Socks5Test, ADeniedSshDestinationGetsAnSshRefusalThatSaysWhy) {
  for (const char* host : {"denied.test", "loopy.test"}) {  // the policy, then the guard
    Stream client = ConnectProxy();
    Authenticate(client);
    ASSERT_TRUE(client.SendAll(ConnectName(host, 22)));
    const std::string all = client.ReadToEnd();
    const std::string banner = "SSH-2.0-policy_refusal\r\n";
    ASSERT_TRUE(all.starts_with(Reply(0) + banner)) << host << ": " << all;
    const std::string packet = all.substr(10 + banner.size());
    ASSERT_GE(packet.size(), 10u);
    EXPECT_EQ(packet[5], 1);                          // SSH_MSG_DISCONNECT
    EXPECT_EQ(packet.substr(6, 4), B({0, 0, 0, 1}));  // HOST_NOT_ALLOWED_TO_CONNECT
    EXPECT_NE(packet.find("ssh to this destination is blocked by sandbox policy; use an https "
                          "remote"),
              std::string::npos)
        << host;
  }
}

TEST_F(Socks5Test, DeniedHostIsRep2) {
  Stream client = ConnectProxy();
  Authenticate(client);
  ASSERT_TRUE(client.SendAll(ConnectName("denied.test", 443)));
  EXPECT_EQ(client.ReadToEnd(), Reply(2));
  ExpectOnlyRecord({.protocol = Protocol::kSocks5,
                    .host = "denied.test",
                    .port = 443,
                    .allowed = false,
                    .reason = "host is on the deny list"});
}

TEST_F(Socks5Test, NameResolvingToLoopbackIsRep2) {
  Stream client = ConnectProxy();
  Authenticate(client);
  ASSERT_TRUE(client.SendAll(ConnectName("loopy.test", echo_.port())));
  EXPECT_EQ(client.ReadToEnd(), Reply(2));
  ExpectOnlyRecord({.protocol = Protocol::kSocks5,
                    .host = "loopy.test",
                    .port = echo_.port(),
                    .allowed = false,
                    .reason = "resolved to a loopback address",
                    .address = ""});
}

TEST_F(Socks5Test, DialFailureIsRep4) {
  Stream client = ConnectProxy();
  Authenticate(client);
  ASSERT_TRUE(client.SendAll(ConnectIpv4(dead_->port)));
  EXPECT_EQ(client.ReadToEnd(), Reply(4));
  ExpectOnlyRecord({.protocol = Protocol::kSocks5,
                    .host = "127.0.0.1",
                    .port = dead_->port,
                    .allowed = true,
                    .address = "127.0.0.1:" + Port(dead_->port),
                    .end = "dial-failed",
                    .error_contains = "Connection refused"});
}

TEST_F(Socks5Test, BindIsRep7) {
  Stream client = ConnectProxy();
  Authenticate(client);
  ASSERT_TRUE(client.SendAll(ConnectName("echo.test", echo_.port(), /*command=*/2)));
  EXPECT_EQ(client.ReadToEnd(), Reply(7));
  ExpectOnlyRecord({.protocol = Protocol::kSocks5,
                    .host = "echo.test",
                    .port = echo_.port(),
                    .allowed = false,
                    .reason = "unsupported SOCKS5 command 2"});
}

TEST_F(Socks5Test, NoAcceptableMethodIsFfThenClose) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(B({5, 1, 1})));  // GSSAPI only
  EXPECT_EQ(client.ReadToEnd(), B({5, 0xff}));
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  EXPECT_TRUE(records_.Snapshot().empty());
}

TEST_F(MuxTest, OneListenerServesHttpAndSocks5) {
  Stream http = ConnectProxy();
  Stream socks = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(http, "echo.test:" + Port(echo_.port())));
  Authenticate(socks);
  ASSERT_TRUE(socks.SendAll(ConnectName("echo.test", echo_.port())));
  EXPECT_EQ(socks.ReadExactly(10), Reply(0));
  ASSERT_TRUE(http.SendAll("h"));
  ASSERT_TRUE(socks.SendAll("s"));
  EXPECT_EQ(http.ReadExactly(1), "h");
  EXPECT_EQ(socks.ReadExactly(1), "s");
  http.ShutdownWrite();
  socks.ShutdownWrite();
  EXPECT_TRUE(http.WaitClosed());
  EXPECT_TRUE(socks.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  int connect = 0;
  int socks5 = 0;
  for (const ConnectionRecord& r : records) {
    connect += r.protocol == Protocol::kConnect ? 1 : 0;
    socks5 += r.protocol == Protocol::kSocks5 ? 1 : 0;
    EXPECT_EQ(r.end, "closed");
  }
  EXPECT_EQ(connect, 1);
  EXPECT_EQ(socks5, 1);
}

TEST_F(MuxTest, Socks4IsClosedWithoutAnAnswer) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(B({4, 1, 0, 80, 127, 0, 0, 1}) + "user" + B({0})));
  EXPECT_EQ(client.ReadToEnd(), "");
  EXPECT_TRUE(client.status() == Stream::Status::kEof || client.status() == Stream::Status::kReset)
      << StatusName(client.status());
  EXPECT_TRUE(records_.Snapshot().empty());
}

TEST_F(Socks5Test, HandshakeArrivingOneByteAtATime) {
  Stream client = ConnectProxy();
  const std::string all =
      kGreetUserPass + UserPass("srt", "tok") + ConnectName("echo.test", echo_.port());
  for (char c : all) ASSERT_TRUE(client.SendAll(std::string(1, c)));
  EXPECT_EQ(client.ReadExactly(2 + 2 + 10), kChoseUserPass + kAuthOk + Reply(0));
  ASSERT_TRUE(client.SendAll("b"));
  EXPECT_EQ(client.ReadExactly(1), "b");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].end, "closed");
}

}  // namespace
}  // namespace srt::proxy::testing
