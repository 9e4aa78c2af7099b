// SPDX-License-Identifier: Apache-2.0
// Component tests with real clients against a ProxyServer on loopback: curl (HTTP proxy, CONNECT
// tunnel, SOCKS5 with local and remote resolution), python3's urllib and a python3 raw-socket
// CONNECT; and the c-ares resolver against a real dnsmasq. Each client runs as a child process
// (posix_spawn) with no proxy variables in its environment.
#include <gtest/gtest.h>

#include <string>

#include "proxy_fixture.h"
#include "support/dnsmasq.h"

namespace srt::proxy::testing {
namespace {

constexpr const char* kCurl = "/usr/bin/curl";
constexpr const char* kPython = "/usr/bin/python3";

class ClientsTest : public ProxyComponentTest {
 protected:
  void SetUp() override {
    ProxyComponentTest::SetUp();
    if (!Executable(kCurl) && !srt::testing::MustWork()) GTEST_SKIP() << kCurl << " missing";
    ASSERT_TRUE(Executable(kCurl));
  }
  std::string ProxyUrl(std::string_view scheme = "http", std::string_view userinfo = "srt:tok@") {
    return std::string(scheme) + "://" + std::string(userinfo) + "127.0.0.1:" + Port(proxy_port_);
  }
  // curl -q -sS --noproxy '' <args...>
  ProcessResult Curl(std::vector<std::string> args) {
    std::vector<std::string> argv = {kCurl, "-q", "-sS", "--noproxy", "", "--max-time", "30"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  }
};

TEST_F(ClientsTest, CurlPlainHttpWithKeepAlive) {
  // Two URLs in one invocation share curl's proxy connection, and so the proxy's upstream one.
  ProcessResult r = Curl({"-x", ProxyUrl(), OriginUrl("/one"), OriginUrl("/two")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "hello /onehello /two");
  EXPECT_EQ(origin_.accepted(), 1);
  std::vector<OriginServer::Request> seen = origin_.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].message.start_line, "GET /one HTTP/1.1");
  EXPECT_FALSE(seen[0].message.HasHeader("Proxy-Authorization"));
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  for (const ConnectionRecord& rec : records) {
    ExpectRecord(rec, {.protocol = Protocol::kHttp,
                       .host = "origin.test",
                       .port = origin_.port(),
                       .allowed = true,
                       .address = "127.0.0.1:" + Port(origin_.port()),
                       .end = "closed"});
  }
}

TEST_F(ClientsTest, CurlPostAndDeniedAndUnauthenticated) {
  ProcessResult post =
      Curl({"-x", ProxyUrl(), "--data-binary", "posted by curl", OriginUrl("/echo")});
  ASSERT_EQ(post.exit_code, 0) << post.Describe();
  EXPECT_EQ(post.out, "posted by curl");
  ProcessResult denied = Curl({"-x", ProxyUrl(), "-w", "|%{http_code}", "http://denied.test/"});
  ASSERT_EQ(denied.exit_code, 0) << denied.Describe();
  EXPECT_EQ(denied.out, "Connection blocked by network allowlist\n|403");
  ProcessResult anonymous =
      Curl({"-x", ProxyUrl("http", ""), "-w", "%{http_code}", OriginUrl("/x")});
  ASSERT_EQ(anonymous.exit_code, 0) << anonymous.Describe();
  EXPECT_EQ(anonymous.out, "407");
  std::vector<ConnectionRecord> records = records_.WaitFor(3);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_TRUE(records[0].allowed);
  ExpectRecord(records[1], {.protocol = Protocol::kHttp,
                            .host = "denied.test",
                            .port = 80,
                            .allowed = false,
                            .reason = "host is on the deny list"});
  ExpectRecord(records[2], {.protocol = Protocol::kHttp,
                            .host = "origin.test",
                            .port = origin_.port(),
                            .allowed = false,
                            .reason = "missing proxy credentials"});
}

TEST_F(ClientsTest, CurlThroughAConnectTunnel) {
  ProcessResult r = Curl({"-p", "-x", ProxyUrl(), OriginUrl("/tunnelled")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "hello /tunnelled");
  ProcessResult denied = Curl({"-p", "-x", ProxyUrl(), "http://reason.test/"});
  EXPECT_EQ(denied.exit_code, 56) << denied.Describe();
  EXPECT_NE(denied.err.find("403"), std::string::npos) << denied.err;
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  // The refusal is logged at once; the tunnel when it closes.
  const ConnectionRecord& tunnel = records[0].allowed ? records[0] : records[1];
  const ConnectionRecord& refusal = records[0].allowed ? records[1] : records[0];
  ExpectRecord(tunnel, {.protocol = Protocol::kConnect,
                        .host = "origin.test",
                        .port = origin_.port(),
                        .allowed = true,
                        .address = "127.0.0.1:" + Port(origin_.port()),
                        .end = "closed"});
  EXPECT_GT(tunnel.bytes_up, 0u);
  EXPECT_GT(tunnel.bytes_down, kConnectEstablished.size());
  ExpectRecord(refusal, {.protocol = Protocol::kConnect,
                         .host = "reason.test",
                         .port = 80,
                         .allowed = false,
                         .reason = "no exfiltration here"});
}

TEST_F(ClientsTest, CurlSocks5RemoteAndLocalResolution) {
  // socks5h: the proxy resolves the name; credentials from -U.
  ProcessResult remote = Curl({"--socks5-hostname", "127.0.0.1:" + Port(proxy_port_), "-U",
                               "srt:tok", OriginUrl("/remote")});
  ASSERT_EQ(remote.exit_code, 0) << remote.Describe();
  EXPECT_EQ(remote.out, "hello /remote");
  // socks5: curl resolves (an IP here), credentials in the proxy URL.
  ProcessResult local =
      Curl({"-x", ProxyUrl("socks5"), "http://127.0.0.1:" + Port(origin_.port()) + "/local"});
  ASSERT_EQ(local.exit_code, 0) << local.Describe();
  EXPECT_EQ(local.out, "hello /local");
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  ExpectRecord(records[0], {.protocol = Protocol::kSocks5,
                            .host = "origin.test",
                            .port = origin_.port(),
                            .allowed = true,
                            .address = "127.0.0.1:" + Port(origin_.port()),
                            .end = "closed"});
  ExpectRecord(records[1], {.protocol = Protocol::kSocks5,
                            .host = "127.0.0.1",
                            .port = origin_.port(),
                            .allowed = true,
                            .address = "127.0.0.1:" + Port(origin_.port()),
                            .end = "closed"});
}

TEST_F(ClientsTest, CurlSocks5Refusals) {
  ProcessResult wrong = Curl({"-x", ProxyUrl("socks5h", "srt:bad@"), OriginUrl("/")});
  EXPECT_EQ(wrong.exit_code, 97) << wrong.Describe();
  EXPECT_NE(wrong.err.find("User was rejected by the SOCKS5 server (1 1)"), std::string::npos)
      << wrong.err;
  ProcessResult denied = Curl({"-x", ProxyUrl("socks5h"), "http://denied.test/"});
  EXPECT_EQ(denied.exit_code, 97) << denied.Describe();
  EXPECT_NE(denied.err.find("(2)"), std::string::npos) << denied.err;
  ProcessResult anonymous = Curl({"-x", ProxyUrl("socks5h", ""), OriginUrl("/")});
  EXPECT_EQ(anonymous.exit_code, 97) << anonymous.Describe();
  std::vector<ConnectionRecord> records = records_.WaitFor(3);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].reason, "wrong proxy credentials");
  EXPECT_EQ(records[1].reason, "host is on the deny list");
  EXPECT_EQ(records[2].reason, "missing proxy credentials");
  EXPECT_EQ(origin_.accepted(), 0);
}

TEST_F(ClientsTest, PythonUrllibThroughTheProxy) {
  if (!Executable(kPython)) GTEST_SKIP() << kPython << " missing";
  const std::string script =
      "import sys, urllib.request\n"
      "opener = urllib.request.build_opener(urllib.request.ProxyHandler({'http': sys.argv[1]}))\n"
      "with opener.open(sys.argv[2], data=b'from python', timeout=30) as r:\n"
      "    sys.stdout.write(str(r.status) + ' ' + r.read().decode())\n";
  ProcessResult r = RunProcess({kPython, "-c", script, ProxyUrl(), OriginUrl("/echo")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "200 from python");
  std::vector<OriginServer::Request> seen = origin_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].message.start_line, "POST /echo HTTP/1.1");
  EXPECT_EQ(seen[0].message.Header("Host"), "origin.test:" + Port(origin_.port()));
  ExpectOnlyRecord({.protocol = Protocol::kHttp,
                    .host = "origin.test",
                    .port = origin_.port(),
                    .allowed = true,
                    .end = "closed"});
}

TEST_F(ClientsTest, PythonRawSocketConnect) {
  if (!Executable(kPython)) GTEST_SKIP() << kPython << " missing";
  const std::string script =
      "import socket, sys\n"
      "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=30)\n"
      "target = 'echo.test:' + sys.argv[2]\n"
      "s.sendall(('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n'\n"
      "           'Proxy-Authorization: Basic c3J0OnRvaw==\\r\\n\\r\\n' % (target, "
      "target)).encode())\n"
      "head = b''\n"
      "while not head.endswith(b'\\r\\n\\r\\n'):\n"
      "    b = s.recv(1)\n"
      "    if not b: sys.exit('closed during the CONNECT answer: %r' % head)\n"
      "    head += b\n"
      "sys.stdout.write(head.decode().split('\\r\\n')[0] + '|')\n"
      "s.sendall(b'raw python')\n"
      "got = b''\n"
      "while len(got) < 10:\n"
      "    b = s.recv(100)\n"
      "    if not b: break\n"
      "    got += b\n"
      "sys.stdout.write(got.decode())\n"
      "s.shutdown(socket.SHUT_WR)\n"
      "sys.exit(0 if s.recv(1) == b'' else 'more bytes than sent')\n";
  ProcessResult r = RunProcess({kPython, "-c", script, Port(proxy_port_), Port(echo_.port())});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "HTTP/1.1 200 Connection Established|raw python");
  ExpectOnlyRecord({.protocol = Protocol::kConnect,
                    .host = "echo.test",
                    .port = echo_.port(),
                    .allowed = true,
                    .end = "closed",
                    .bytes_up = 10,
                    .bytes_down = kConnectEstablished.size() + 10});
}

// The proxy with c-ares against a real dnsmasq: names resolve to 127.0.0.x, an allowed name
// reaches the origin through its IP:port carve-out, other loopback answers are refused, and a
// name dnsmasq does not know is a 502.
class RealDnsTest : public ProxyComponentTest {
 protected:
  void SetUp() override {
    ProxyComponentTest::SetUp();
    srt::testing::Dnsmasq::Options options;
    options.args = {"--local=/dns.test/", "--address=/app.dns.test/127.0.0.1",
                    "--address=/rebind.dns.test/127.0.0.3"};
    auto dns = srt::testing::Dnsmasq::Start(options);
    if (!dns.has_value() && dns.error().code() == Errc::kNotFound && !srt::testing::MustWork()) {
      GTEST_SKIP() << dns.error().message() << " (set SRT_MUST_WORK=1 to fail instead)";
    }
    ASSERT_TRUE(dns.has_value()) << dns.error().message();
    dns_ = std::move(dns).value();
    NetworkSettings network = DefaultNetwork();
    for (const char* name : {"app.dns.test", "rebind.dns.test", "nope.dns.test"}) {
      network.allowed_domains.push_back(name);
    }
    const Endpoint server = dns_->endpoint();
    StartProxyWith(network, DefaultOptions(), [server](EventLoop& loop) {
      ResolverOptions ro;
      ro.servers = {server};
      ro.timeout = std::chrono::milliseconds(1000);
      Result<std::unique_ptr<Resolver>> resolver = CreateAresResolver(loop, ro);
      return resolver ? std::move(*resolver) : nullptr;
    });
  }
  void TearDown() override {
    ProxyComponentTest::TearDown();  // the resolver goes with the server, before dnsmasq
    dns_.reset();
  }

  std::unique_ptr<srt::testing::Dnsmasq> dns_;
};

TEST_F(RealDnsTest, AllowedNameReachesTheOriginThroughTheCarveOut) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("GET http://app.dns.test:" + Port(origin_.port()) +
                             "/dns HTTP/1.1\r\n" + std::string(kAuthHeader) + "\r\n"));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value()) << StatusName(client.status()) << "\n" << dns_->log();
  EXPECT_EQ(r->body, "hello /dns");
  Stream tunnel = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(tunnel, "app.dns.test:" + Port(echo_.port()), "dns"));
  EXPECT_EQ(tunnel.ReadExactly(3), "dns");
  tunnel.ShutdownWrite();
  EXPECT_TRUE(tunnel.WaitClosed());
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  ExpectRecord(records[0], {.protocol = Protocol::kHttp,
                            .host = "app.dns.test",
                            .port = origin_.port(),
                            .allowed = true,
                            .address = "127.0.0.1:" + Port(origin_.port()),
                            .end = "closed"});
  ExpectRecord(records[1], {.protocol = Protocol::kConnect,
                            .host = "app.dns.test",
                            .port = echo_.port(),
                            .allowed = true,
                            .address = "127.0.0.1:" + Port(echo_.port()),
                            .end = "closed",
                            .bytes_up = 3,
                            .bytes_down = kConnectEstablished.size() + 3});
}

TEST_F(RealDnsTest, LoopbackAnswerWithoutCarveOutIsRefused) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("CONNECT rebind.dns.test:" + Port(echo_.port()) + " HTTP/1.1\r\n" +
                             std::string(kAuthHeader) + "\r\n"));
  EXPECT_TRUE(client.ReadToEnd().starts_with("HTTP/1.1 403 resolved to a loopback address\r\n"));
  ExpectOnlyRecord({.protocol = Protocol::kConnect,
                    .host = "rebind.dns.test",
                    .port = echo_.port(),
                    .allowed = false,
                    .reason = "resolved to a loopback address"});
}

TEST_F(RealDnsTest, UnknownNameIs502WithTheFailureLogged) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(
      client.SendAll("CONNECT nope.dns.test:443 HTTP/1.1\r\n" + std::string(kAuthHeader) + "\r\n"));
  EXPECT_EQ(client.ReadToEnd(), kConnectBadGateway);
  ExpectOnlyRecord({.protocol = Protocol::kConnect,
                    .host = "nope.dns.test",
                    .port = 443,
                    .allowed = true,
                    .address = "",
                    .end = "dial-failed",
                    .error_contains = "'nope.dns.test'"});
}

}  // namespace
}  // namespace srt::proxy::testing
