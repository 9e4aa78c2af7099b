// SPDX-License-Identifier: Apache-2.0
// Component tests of absolute-form (plain) HTTP through a real ProxyServer: what the origin
// receives, keep-alive on both sides, the body framings, interim and upgrade responses, and the
// proxy's own refusals (upstream-srt.md §4.9), each with its decision record.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <string>
#include <thread>

#include "proxy_fixture.h"

namespace srt::proxy::testing {
namespace {

constexpr std::string_view kPlainBlocked =
    "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: "
    "blocked-by-allowlist\r\nContent-Length: 40\r\n\r\nConnection blocked by network allowlist\n";
constexpr std::string_view kPlainBadGateway =
    "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nBad Gateway";
constexpr std::string_view kPlain400 =
    "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

std::string Hex(size_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%zx", n);
  return buf;
}

// What the origin's /big/<n> route sends.
std::string BigBody(size_t n) {
  std::string body(n, '\0');
  for (size_t i = 0; i < n; ++i) body[i] = static_cast<char>('a' + i % 26);
  return body;
}

class HttpComponentTest : public ProxyComponentTest {
 protected:
  // "GET <url> HTTP/1.1" with credentials and `headers`.
  static std::string Get(const std::string& url, std::string_view headers = "",
                         std::string_view method = "GET") {
    return std::string(method) + " " + url + " HTTP/1.1\r\nHost: ignored.example\r\n" +
           std::string(kAuthHeader) + std::string(headers) + "\r\n";
  }
  // `first_path` answers on a kept-alive connection and then the origin ends that connection
  // (/then-close, /then-reset); the next request must get a new one.
  void ExpectKeptAliveConnectionReplaced(std::string_view first_path) {
    Stream client = ConnectProxy();
    ASSERT_TRUE(client.SendAll(Get(OriginUrl(first_path))));
    std::optional<HttpMessage> first = ReadHttpResponse(client);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->body, "ok");
    ASSERT_TRUE(origin_.WaitFinished(1));  // the origin has ended the kept-alive connection
    ASSERT_TRUE(client.SendAll(Get(OriginUrl("/after"))));
    std::optional<HttpMessage> second = ReadHttpResponse(client);
    ASSERT_TRUE(second.has_value()) << StatusName(client.status());
    EXPECT_EQ(second->body, "hello /after");
    EXPECT_EQ(second->Header("X-Connection"), "2");
    std::vector<ConnectionRecord> records = records_.WaitFor(2);
    ASSERT_EQ(records.size(), 2u);
    ExpectRecord(records[0], OriginRecord(origin_.port()));
    ExpectRecord(records[1], OriginRecord(origin_.port()));
  }
  WantRecord OriginRecord(uint16_t port, std::string host = "origin.test") const {
    return {.protocol = Protocol::kHttp,
            .host = std::move(host),
            .port = port,
            .allowed = true,
            .address = "127.0.0.1:" + Port(port),
            .end = "closed",
            .via_parent = false};
  }
};

// RFC 9110 §7.6.1: the fields a client's Connection names stay on its hop, and the origin's
// Connection names none (so no hop after srt drops a field srt or its decider added).
TEST_F(HttpComponentTest, FieldsTheClientsConnectionNamesAreNotForwarded) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("GET " + OriginUrl("/c") + " HTTP/1.1\r\nHost: origin.test\r\n" +
                             std::string(kAuthHeader) +
                             "Connection: keep-alive, X-Tag\r\nX-Tag: client\r\nX-Custom: yes\r\n"
                             "Connection: X-Agent\r\n\r\n"));
  std::optional<HttpMessage> response = ReadHttpResponse(client);
  ASSERT_TRUE(response.has_value()) << StatusName(client.status());
  EXPECT_EQ(response->status(), 200);
  std::vector<OriginServer::Request> seen = origin_.requests();
  ASSERT_EQ(seen.size(), 1u);
  const HttpMessage& request = seen[0].message;
  EXPECT_FALSE(request.HasHeader("X-Tag"));
  EXPECT_EQ(request.Header("X-Custom"), "yes");
  std::vector<std::string> connection;
  for (const auto& header : request.headers) {
    if (header.first == "Connection") connection.push_back(header.second);
  }
  EXPECT_EQ(connection, std::vector<std::string>{"keep-alive"});
}

TEST_F(HttpComponentTest, GetIsForwardedInOriginFormWithHostRewrittenAndProxyHeadersStripped) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("GET " + OriginUrl("/hello?x=1") +
                             " HTTP/1.1\r\nHost: evil.example\r\n" + std::string(kAuthHeader) +
                             "Proxy-Connection: keep-alive\r\nX-Custom: yes\r\n\r\n"));
  std::optional<HttpMessage> response = ReadHttpResponse(client);
  ASSERT_TRUE(response.has_value()) << StatusName(client.status());
  EXPECT_EQ(response->status(), 200);
  EXPECT_EQ(response->body, "hello /hello");
  EXPECT_EQ(response->Header("X-Host"), "origin.test:" + Port(origin_.port()));

  std::vector<OriginServer::Request> seen = origin_.requests();
  ASSERT_EQ(seen.size(), 1u);
  const HttpMessage& request = seen[0].message;
  EXPECT_EQ(request.start_line, "GET /hello?x=1 HTTP/1.1");
  EXPECT_EQ(request.Header("Host"), "origin.test:" + Port(origin_.port()));
  EXPECT_FALSE(request.HasHeader("Proxy-Authorization"));
  EXPECT_FALSE(request.HasHeader("Proxy-Connection"));
  EXPECT_EQ(request.Header("X-Custom"), "yes");
  size_t hosts = 0;
  for (const auto& header : request.headers) hosts += header.first == "Host" ? 1u : 0u;
  EXPECT_EQ(hosts, 1u);

  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  WantRecord want = OriginRecord(origin_.port());
  want.bytes_up = request.raw.size();
  want.bytes_down = response->raw.size();
  ExpectRecord(records[0], want);
}

TEST_F(HttpComponentTest, PostBodiesWithContentLengthAndChunked) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(
      client.SendAll(Get(OriginUrl("/echo"), "Content-Length: 11\r\n", "POST") + "hello world"));
  std::optional<HttpMessage> r1 = ReadHttpResponse(client);
  ASSERT_TRUE(r1.has_value());
  EXPECT_EQ(r1->body, "hello world");
  const std::string chunked =
      "5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: t\r\n\r\n";
  ASSERT_TRUE(
      client.SendAll(Get(OriginUrl("/echo"), "Transfer-Encoding: chunked\r\n", "POST") + chunked));
  std::optional<HttpMessage> r2 = ReadHttpResponse(client);
  ASSERT_TRUE(r2.has_value());
  EXPECT_EQ(r2->body, "hello world");
  EXPECT_EQ(r2->Header("X-Connection"), "1");

  std::vector<OriginServer::Request> seen = origin_.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].message.Header("Content-Length"), "11");
  // The chunked body is forwarded as it came, extensions and trailers included.
  EXPECT_TRUE(seen[1].message.raw.ends_with(chunked)) << seen[1].message.raw;
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  WantRecord want = OriginRecord(origin_.port());
  want.bytes_up = seen[0].message.raw.size();
  want.bytes_down = r1->raw.size();
  ExpectRecord(records[0], want);
  want.bytes_up = seen[1].message.raw.size();
  want.bytes_down = r2->raw.size();
  ExpectRecord(records[1], want);
}

TEST_F(HttpComponentTest, KeepAliveReusesOneUpstreamConnection) {
  Stream client = ConnectProxy();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(client.SendAll(Get(OriginUrl("/n" + std::to_string(i)))));
    std::optional<HttpMessage> r = ReadHttpResponse(client);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->body, "hello /n" + std::to_string(i));
    EXPECT_EQ(r->Header("X-Connection"), "1");
  }
  // Pipelined: two requests in one write, answered in order.
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/p1")) + Get(OriginUrl("/p2"))));
  std::optional<HttpMessage> p1 = ReadHttpResponse(client);
  std::optional<HttpMessage> p2 = ReadHttpResponse(client);
  ASSERT_TRUE(p1.has_value() && p2.has_value());
  EXPECT_EQ(p1->body, "hello /p1");
  EXPECT_EQ(p2->body, "hello /p2");
  EXPECT_EQ(origin_.accepted(), 1);
  std::vector<ConnectionRecord> records = records_.WaitFor(4);
  ASSERT_EQ(records.size(), 4u);
  for (const ConnectionRecord& r : records) ExpectRecord(r, OriginRecord(origin_.port()));
}

TEST_F(HttpComponentTest, RequestsToTwoHostsOnOneClientConnection) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/a"))));
  std::optional<HttpMessage> a = ReadHttpResponse(client);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, "hello /a");
  ASSERT_TRUE(client.SendAll(Get("http://other.test:" + Port(origin2_.port()) + "/b")));
  std::optional<HttpMessage> b = ReadHttpResponse(client);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->body, "hello /b");
  EXPECT_EQ(b->Header("X-Host"), "other.test:" + Port(origin2_.port()));
  // Back to the first: the client connection's pool kept the connection to it.
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/c"))));
  std::optional<HttpMessage> c = ReadHttpResponse(client);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->Header("X-Connection"), "1");
  EXPECT_EQ(origin_.accepted(), 1);
  EXPECT_EQ(origin2_.accepted(), 1);
  std::vector<ConnectionRecord> records = records_.WaitFor(3);
  ASSERT_EQ(records.size(), 3u);
  ExpectRecord(records[0], OriginRecord(origin_.port()));
  ExpectRecord(records[1], OriginRecord(origin2_.port(), "other.test"));
  ExpectRecord(records[2], OriginRecord(origin_.port()));
}

// --- The pool of kept origin connections (server/upstream_pool.h) -----------------------------

// The next request on `client` to origin_ `path`; returns its response's X-Connection.
std::string NextConnection(Stream& client, const std::string& url) {
  if (!client.SendAll("GET " + url + " HTTP/1.1\r\nHost: x\r\n" + std::string(kAuthHeader) +
                      "\r\n")) {
    return "send failed";
  }
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  if (!r) return "no response: " + std::string(StatusName(client.status()));
  return r->Header("X-Connection").value_or("none") + " " + std::to_string(r->status());
}

TEST_F(HttpComponentTest, AKeptConnectionIsNeverUsedForAnotherClient) {
  Stream first = ConnectProxy();
  EXPECT_EQ(NextConnection(first, OriginUrl("/a")), "1 200");
  Stream second = ConnectProxy();
  EXPECT_EQ(NextConnection(second, OriginUrl("/b")), "2 200");
  EXPECT_EQ(NextConnection(first, OriginUrl("/c")), "1 200");
  EXPECT_EQ(NextConnection(second, OriginUrl("/d")), "2 200");
  EXPECT_EQ(origin_.accepted(), 2);
}

TEST_F(HttpComponentTest, AResponseSayingConnectionCloseIsNotReused) {
  Stream client = ConnectProxy();
  EXPECT_EQ(NextConnection(client, OriginUrl("/close-header")), "1 200");
  EXPECT_TRUE(origin_.WaitFinished(1));  // the proxy closed it although the origin did not
  EXPECT_EQ(NextConnection(client, OriginUrl("/after")), "2 200");
}

TEST_F(HttpComponentTest, BytesPastTheResponseFramingAreNeverTakenForTheNextResponse) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/extra"))));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "ok");
  EXPECT_TRUE(origin_.WaitFinished(1));
  EXPECT_EQ(NextConnection(client, OriginUrl("/after")), "2 200");
}

TEST_F(HttpComponentTest, AnIdleOriginThatSpeaksUnaskedIsDropped) {
  Stream client = ConnectProxy();
  EXPECT_EQ(NextConnection(client, OriginUrl("/then-stray")), "1 200");
  // The 408 it sends while idle closes the kept connection; it never reaches the client.
  EXPECT_TRUE(origin_.WaitFinished(1));
  EXPECT_EQ(NextConnection(client, OriginUrl("/after")), "2 200");
}

TEST_F(HttpComponentTest, ARulesUpdateRetiresKeptConnections) {
  Stream client = ConnectProxy();
  EXPECT_EQ(NextConnection(client, OriginUrl("/a")), "1 200");
  // origin.test stays allowed, but its address (127.0.0.1) is no longer carved out: the kept
  // connection, vetted under the old rules, must not carry the next request.
  NetworkSettings narrower = DefaultNetwork();
  std::erase(narrower.allowed_domains, "127.0.0.1:" + Port(origin_.port()));
  UpdateRules(narrower);
  EXPECT_EQ(NextConnection(client, OriginUrl("/b")), "none 403");
  EXPECT_EQ(origin_.accepted(), 1);
  EXPECT_TRUE(origin_.WaitFinished(1));  // closed, not kept for rules that will not return
}

// The decision is kept for a kept-alive client's next request only while the host, its port and
// the rules are those it was made for.
TEST_F(HttpComponentTest, EachRequestOnAKeptClientIsDecidedForItsOwnHost) {
  Stream client = ConnectProxy();
  EXPECT_EQ(NextConnection(client, OriginUrl("/a")), "1 200");
  EXPECT_EQ(NextConnection(client, "http://denied.test:" + Port(origin_.port()) + "/b"),
            "none 403");
  EXPECT_EQ(NextConnection(client, "http://ORIGIN.test:" + Port(origin_.port()) + "/c"), "1 200");
  EXPECT_EQ(NextConnection(client, "http://other.test:" + Port(origin2_.port()) + "/d"), "1 200");
  EXPECT_EQ(NextConnection(client, OriginUrl("/e")), "1 200");
  EXPECT_EQ(origin_.accepted(), 1);
}

TEST_F(HttpComponentTest, KeptConnectionsAreClosedWhenIdle) {
  ProxyOptions options = DefaultOptions();
  options.upstream_pool.idle_timeout = std::chrono::milliseconds(50);
  StartProxy(DefaultNetwork(), std::move(options));
  Stream client = ConnectProxy();
  EXPECT_EQ(NextConnection(client, OriginUrl("/a")), "1 200");
  EXPECT_TRUE(origin_.WaitFinished(1));  // while the client connection stays open
  EXPECT_EQ(NextConnection(client, OriginUrl("/b")), "2 200");
  EXPECT_EQ(ServerConnections(), 1u);
}

TEST_F(HttpComponentTest, ThePoolIsBoundedPerClient) {
  ProxyOptions options = DefaultOptions();
  options.upstream_pool.per_client = 1;
  StartProxy(DefaultNetwork(), std::move(options));
  Stream client = ConnectProxy();
  const std::string other = "http://other.test:" + Port(origin2_.port());
  EXPECT_EQ(NextConnection(client, OriginUrl("/a")), "1 200");
  EXPECT_EQ(NextConnection(client, other + "/b"), "1 200");
  // Keeping origin 2's connection pushed origin 1's out.
  EXPECT_TRUE(origin_.WaitFinished(1));
  EXPECT_EQ(NextConnection(client, OriginUrl("/c")), "2 200");
  EXPECT_EQ(NextConnection(client, OriginUrl("/d")), "2 200");
}

TEST_F(HttpComponentTest, ThePoolIsBoundedInTotal) {
  ProxyOptions options = DefaultOptions();
  options.upstream_pool.max_total = 1;
  StartProxy(DefaultNetwork(), std::move(options));
  Stream first = ConnectProxy();
  Stream second = ConnectProxy();
  EXPECT_EQ(NextConnection(first, OriginUrl("/a")), "1 200");
  EXPECT_EQ(NextConnection(second, OriginUrl("/b")), "2 200");
  // The server already keeps one idle connection (the first client's): the second's is closed.
  EXPECT_TRUE(origin_.WaitFinished(1));
  EXPECT_EQ(NextConnection(second, OriginUrl("/c")), "3 200");
  EXPECT_EQ(NextConnection(first, OriginUrl("/d")), "1 200");
}

TEST_F(HttpComponentTest, HeadAnd204And304HaveNoBodies) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/x"), "", "HEAD")));
  std::optional<HttpMessage> head = ReadHttpResponse(client, /*head_request=*/true);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status(), 200);
  EXPECT_EQ(head->Header("Content-Length"), "5");
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/204"))));
  std::optional<HttpMessage> r204 = ReadHttpResponse(client);
  ASSERT_TRUE(r204.has_value());
  EXPECT_EQ(r204->status(), 204);
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/304"))));
  std::optional<HttpMessage> r304 = ReadHttpResponse(client);
  ASSERT_TRUE(r304.has_value());
  EXPECT_EQ(r304->status(), 304);
  // Nothing extra was forwarded: the next response starts right where the last one ended.
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/after"))));
  std::optional<HttpMessage> after = ReadHttpResponse(client);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->body, "hello /after");
  EXPECT_EQ(after->Header("X-Connection"), "1");
  std::vector<ConnectionRecord> records = records_.WaitFor(4);
  ASSERT_EQ(records.size(), 4u);
  WantRecord want = OriginRecord(origin_.port());
  want.bytes_down = head->raw.size();
  ExpectRecord(records[0], want);
  want.bytes_down = r204->raw.size();
  ExpectRecord(records[1], want);
  want.bytes_down = r304->raw.size();
  ExpectRecord(records[2], want);
}

TEST_F(HttpComponentTest, ChunkedResponse) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/chunked"))));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "chunked-body");
  // Still usable afterwards.
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/again"))));
  std::optional<HttpMessage> again = ReadHttpResponse(client);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->body, "hello /again");
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  WantRecord want = OriginRecord(origin_.port());
  want.bytes_down = r->raw.size();
  ExpectRecord(records[0], want);
}

TEST_F(HttpComponentTest, ResponseUntilCloseEndsTheClientConnection) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/close"))));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value()) << StatusName(client.status());
  EXPECT_EQ(r->body, "until close");
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  WantRecord want = OriginRecord(origin_.port());
  want.bytes_down = r->raw.size();
  ExpectRecord(records[0], want);
}

TEST_F(HttpComponentTest, ExpectContinueIsRelayedBeforeTheBody) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(
      Get(OriginUrl("/echo"), "Content-Length: 4\r\nExpect: 100-continue\r\n", "POST")));
  EXPECT_EQ(client.ReadExactly(25), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(client.SendAll("body"));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status(), 200);
  EXPECT_EQ(r->body, "body");
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  WantRecord want = OriginRecord(origin_.port());
  want.bytes_down = 25 + r->raw.size();
  ExpectRecord(records[0], want);
}

TEST_F(HttpComponentTest, UpgradeBecomesARelay) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(
      client.SendAll(Get(OriginUrl("/upgrade"), "Connection: Upgrade\r\nUpgrade: echo\r\n")));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status(), 101);
  ASSERT_TRUE(client.SendAll("over the upgraded connection"));
  EXPECT_EQ(client.ReadExactly(28), "over the upgraded connection");
  client.ShutdownWrite();
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  WantRecord want = OriginRecord(origin_.port());
  want.bytes_up = 28;
  want.bytes_down = r->raw.size() + 28;
  ExpectRecord(records[0], want);
}

TEST_F(HttpComponentTest, DeniedHostGets403AndTheConnectionStaysUsable) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get("http://denied.test/")));
  EXPECT_EQ(client.ReadExactly(kPlainBlocked.size()), kPlainBlocked);
  ASSERT_TRUE(client.SendAll(Get("http://nowhere.test:8080/")));
  EXPECT_EQ(client.ReadExactly(kPlainBlocked.size()), kPlainBlocked);
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/ok"))));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "hello /ok");
  std::vector<ConnectionRecord> records = records_.WaitFor(3);
  ASSERT_EQ(records.size(), 3u);
  ExpectRecord(records[0], {.protocol = Protocol::kHttp,
                            .host = "denied.test",
                            .port = 80,
                            .allowed = false,
                            .reason = "host is on the deny list",
                            .address = ""});
  ExpectRecord(records[1], {.protocol = Protocol::kHttp,
                            .host = "nowhere.test",
                            .port = 8080,
                            .allowed = false,
                            .reason = "host is not on the allow list"});
  ExpectRecord(records[2], OriginRecord(origin_.port()));
}

TEST_F(HttpComponentTest, DeniedRequestWithABodyIsAnsweredAndClosed) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get("http://denied.test/", "Content-Length: 3\r\n", "POST") + "abc"));
  EXPECT_EQ(client.ReadToEnd(), kPlainBlocked);
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  ExpectOnlyRecord({.protocol = Protocol::kHttp,
                    .host = "denied.test",
                    .port = 80,
                    .allowed = false,
                    .reason = "host is on the deny list"});
}

TEST_F(HttpComponentTest, MissingCredentialsGet407AndTheConnectionStaysUsable) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("GET " + OriginUrl("/x") + " HTTP/1.1\r\nHost: o\r\n\r\n"));
  EXPECT_EQ(client.ReadExactly(kProxyAuthRequired.size()), kProxyAuthRequired);
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/y"))));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "hello /y");
  EXPECT_EQ(origin_.requests().size(), 1u);
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  ExpectRecord(records[0], {.protocol = Protocol::kHttp,
                            .host = "origin.test",
                            .port = origin_.port(),
                            .allowed = false,
                            .reason = "missing proxy credentials"});
  ExpectRecord(records[1], OriginRecord(origin_.port()));
}

TEST_F(HttpComponentTest, NameResolvingToLoopbackIsRefusedUnlessCarvedOut) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get("http://loopy.test:" + Port(origin_.port()) + "/")));
  const std::string body = "Connection to loopy.test blocked: resolved to a loopback address\n";
  EXPECT_EQ(client.ReadToEnd(),
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
            "X-Proxy-Error: blocked-by-sandbox-runtime\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body);
  ExpectOnlyRecord({.protocol = Protocol::kHttp,
                    .host = "loopy.test",
                    .port = origin_.port(),
                    .allowed = false,
                    .reason = "resolved to a loopback address",
                    .address = ""});
}

TEST_F(HttpComponentTest, UpstreamClosingBeforeAnsweringIs502) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/hangup"))));
  EXPECT_EQ(client.ReadToEnd(), kPlainBadGateway);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  WantRecord want = OriginRecord(origin_.port());
  want.end = "error";
  want.error_contains = "closed the connection before answering";
  ExpectRecord(records[0], want);
}

TEST_F(HttpComponentTest, DialFailureIs502) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get("http://127.0.0.1:" + Port(dead_->port) + "/")));
  EXPECT_EQ(client.ReadToEnd(), kPlainBadGateway);
  ExpectOnlyRecord({.protocol = Protocol::kHttp,
                    .host = "127.0.0.1",
                    .port = dead_->port,
                    .allowed = true,
                    .address = "127.0.0.1:" + Port(dead_->port),
                    .end = "dial-failed",
                    .error_contains = "Connection refused"});
}

TEST_F(HttpComponentTest, HttpsAbsoluteFormIs400) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get("https://origin.test/")));
  EXPECT_EQ(client.ReadToEnd(), kPlain400);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].protocol, Protocol::kHttp);
  EXPECT_FALSE(records[0].allowed);
  EXPECT_TRUE(records[0].reason.starts_with("bad request: ")) << records[0].reason;
  EXPECT_EQ(origin_.accepted(), 0);
}

TEST_F(HttpComponentTest, OriginFormRequestToTheProxyIs400) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("GET /hello HTTP/1.1\r\nHost: origin.test:" + Port(origin_.port()) +
                             "\r\n" + std::string(kAuthHeader) + "\r\n"));
  EXPECT_EQ(client.ReadToEnd(), kPlain400);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kHttp,
                            .host = "",
                            .port = 0,
                            .allowed = false,
                            .reason = "bad request: not a proxy request target"});
  EXPECT_EQ(origin_.accepted(), 0);
}

TEST_F(HttpComponentTest, HalfClosedClientGetsTheWholeResponse) {
  // Small socket buffers on both sides of the client connection, so most of the response is
  // still in the proxy's own buffer when the exchange completes and the client's EOF is read.
  listener_send_buffer_ = 4096;
  StartProxy();
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(fd);
  const int small = 4096;
  ASSERT_EQ(setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
  sockaddr_in proxy{};
  proxy.sin_family = AF_INET;
  proxy.sin_port = htons(proxy_port_);
  proxy.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&proxy), sizeof proxy), 0);
  Stream client(std::move(fd));
  const size_t n = 128 * 1024;  // more than the socket buffers hold, less than the proxy's
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/big/" + std::to_string(n)))));
  client.ShutdownWrite();
  // The exchange completes (and is logged) before the client reads a byte.
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value()) << StatusName(client.status());
  EXPECT_EQ(r->body.size(), n);
  EXPECT_TRUE(r->body == BigBody(n));
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  WantRecord want = OriginRecord(origin_.port());
  want.bytes_down = r->raw.size();
  ExpectRecord(records[0], want);
}

TEST_F(HttpComponentTest, AKeptAliveConnectionTheOriginClosedIsReplacedForTheNextRequest) {
  ExpectKeptAliveConnectionReplaced("/then-close");
}

TEST_F(HttpComponentTest, AKeptAliveConnectionTheOriginResetIsReplacedForTheNextRequest) {
  ExpectKeptAliveConnectionReplaced("/then-reset");
}

TEST_F(HttpComponentTest, Http10ClientIsClosedAfterTheResponse) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll("GET " + OriginUrl("/ten") + " HTTP/1.0\r\n" +
                             std::string(kAuthHeader) + "\r\n"));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "hello /ten");
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_EQ(client.status(), Stream::Status::kEof);
  std::vector<OriginServer::Request> seen = origin_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].message.start_line, "GET /ten HTTP/1.0");
  ExpectOnlyRecord(OriginRecord(origin_.port()));
}

TEST_F(HttpComponentTest, LargeBodiesBothWays) {
  const std::string body = BigBody(4 * 1024 * 1024 + 3);
  Stream client = ConnectProxy();
  std::thread writer([&] {
    Stream w(UniqueFd(fcntl(client.fd(), F_DUPFD_CLOEXEC, 0)));
    EXPECT_TRUE(w.SendAll(
        Get(OriginUrl("/echo"), "Content-Length: " + std::to_string(body.size()) + "\r\n", "POST") +
        body));
    // The same body again, chunked in 64 KiB pieces.
    std::string chunked;
    for (size_t at = 0; at < body.size(); at += 65536) {
      const size_t n = std::min<size_t>(65536, body.size() - at);
      char size[32];
      std::snprintf(size, sizeof size, "%zx\r\n", n);
      chunked += size + body.substr(at, n) + "\r\n";
    }
    chunked += "0\r\n\r\n";
    EXPECT_TRUE(
        w.SendAll(Get(OriginUrl("/echo"), "Transfer-Encoding: chunked\r\n", "POST") + chunked));
  });
  const Clock::time_point deadline = Deadline(std::chrono::seconds(60));
  std::optional<HttpMessage> r1 = ReadHttpResponse(client, false, deadline);
  std::optional<HttpMessage> r2 = ReadHttpResponse(client, false, deadline);
  writer.join();
  ASSERT_TRUE(r1.has_value() && r2.has_value()) << StatusName(client.status());
  EXPECT_TRUE(r1->body == body);
  EXPECT_TRUE(r2->body == body);
  ASSERT_TRUE(client.SendAll(Get(OriginUrl("/big/5000000"))));
  std::optional<HttpMessage> r3 = ReadHttpResponse(client, false, deadline);
  ASSERT_TRUE(r3.has_value());
  EXPECT_TRUE(r3->body == BigBody(5000000));
  EXPECT_EQ(origin_.accepted(), 1);
  std::vector<ConnectionRecord> records = records_.WaitFor(3);
  ASSERT_EQ(records.size(), 3u);
  WantRecord want = OriginRecord(origin_.port());
  want.bytes_down = r3->raw.size();
  ExpectRecord(records[2], want);
  EXPECT_EQ(records[0].bytes_down, r1->raw.size());
  EXPECT_GT(records[0].bytes_up, body.size());
}

TEST_F(HttpComponentTest, BadChunkedRequestBodyResetsTheClient) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(
      client.SendAll(Get(OriginUrl("/echo"), "Transfer-Encoding: chunked\r\n", "POST") + "zz\r\n"));
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_EQ(client.buffer(), "");
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  WantRecord want = OriginRecord(origin_.port());
  want.end = "error";
  want.error_contains = "bad chunked request body";
  ExpectRecord(records[0], want);
}

// credentials.allowPlaintextInject: the sentinel becomes the real value in the header and the
// body (sent in pieces that split it) for the credential's host only; the echoed real value
// comes back as the sentinel; the record names the credential, never the value.
// An origin's malformed head quoting a real value: srt's own error text (the decision log, which
// the sandbox may read) carries the sentinel, never the value (found by a hostile review).
TEST_F(HttpComponentTest, ErrorsQuotingTheOriginNeverCarryARealValue) {
  const std::string sentinel = "fake_value_0123456789abcdefghijklmnopqrstu";
  const std::string real = "ghp_REALrealREALrealREALrealREALrealREALre";
  std::optional<Listening> bad = ListenTcp("127.0.0.1");
  ASSERT_TRUE(bad.has_value());
  std::thread origin([&] {
    UniqueFd c(accept4(bad->fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
    char buf[4096];
    (void)!read(c.get(), buf, sizeof buf);
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + real + "\r\n\r\n";
    (void)!write(c.get(), head.data(), head.size());
  });
  ProxyOptions options = DefaultOptions();
  options.injector =
      inject::Injector::Build({{"env GITHUB_TOKEN",
                                sentinel,
                                real,
                                {*ParseDomainPattern("origin.test", PatternList::kAllow)}}});
  options.inject_plaintext = true;
  NetworkSettings network = DefaultNetwork();
  const std::string authority = "127.0.0.1:" + Port(bad->port);
  network.allowed_domains.push_back(authority);
  StartProxy(network, std::move(options));
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get("http://" + authority + "/")));
  const std::string answer = client.ReadToEnd();
  origin.join();
  EXPECT_EQ(answer.find(real), std::string::npos) << answer;
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].error.find(real), std::string::npos) << records[0].error;
  EXPECT_NE(records[0].error.find(sentinel), std::string::npos) << records[0].error;
}

// A chunked response's chunk extensions and trailer fields are framing the injector does not
// read: an origin echoing a real value there must not get it to the sandbox (hostile review
// finding #4, docs/credentials.md). The plain-HTTP path re-frames the body, as the terminated
// TLS path does, and drops both.
TEST_F(HttpComponentTest, PlaintextInjectionDropsChunkExtensionsAndTrailers) {
  const std::string sentinel = "fake_value_0123456789abcdefghijklmnopqrstu";
  const std::string real = "ghp_REALrealREALrealREALrealREALrealREALre";
  std::optional<Listening> echo = ListenTcp("127.0.0.1");
  ASSERT_TRUE(echo.has_value());
  std::thread origin([&] {
    UniqueFd c(accept4(echo->fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
    char buf[4096];
    (void)!read(c.get(), buf, sizeof buf);
    const std::string response =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;echo=" + real +
        "\r\nhello\r\n6\r\n world\r\n0\r\nX-Echo: " + real + "\r\n\r\n";
    (void)!write(c.get(), response.data(), response.size());
  });
  ProxyOptions options = DefaultOptions();
  options.injector =
      inject::Injector::Build({{"env GITHUB_TOKEN",
                                sentinel,
                                real,
                                {*ParseDomainPattern("127.0.0.1", PatternList::kAllow)}}});
  options.inject_plaintext = true;
  NetworkSettings network = DefaultNetwork();
  const std::string authority = "127.0.0.1:" + Port(echo->port);
  network.allowed_domains.push_back(authority);
  StartProxy(network, std::move(options));
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get("http://" + authority + "/", "Connection: close\r\n")));
  const std::string answer = client.ReadToEnd();
  origin.join();
  EXPECT_EQ(answer.find(real), std::string::npos) << answer;
  EXPECT_EQ(answer.find("X-Echo"), std::string::npos) << answer;
  const size_t body = answer.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos) << answer;
  // Re-framed: however the payload was cut, no extension, no trailer.
  const std::string framed = answer.substr(body + 4);
  EXPECT_TRUE(framed == "b\r\nhello world\r\n0\r\n\r\n" ||
              framed == "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
      << framed;
}

TEST_F(HttpComponentTest, PlaintextInjectionSwapsSentinelsForTheirHostAndBack) {
  const std::string sentinel = "fake_value_0123456789abcdefghijklmnopqrstu";
  const std::string real = "ghp_REALrealREALrealREALrealREALrealREALre";
  ASSERT_EQ(sentinel.size(), real.size());
  ProxyOptions options = DefaultOptions();
  options.injector =
      inject::Injector::Build({{"env GITHUB_TOKEN",
                                sentinel,
                                real,
                                {*ParseDomainPattern("origin.test", PatternList::kAllow)}}});
  options.inject_plaintext = true;
  StartProxy(DefaultNetwork(), std::move(options));
  Stream client = ConnectProxy();
  const std::string body = "token=" + sentinel + "&again=" + sentinel;
  const std::string request = Get(OriginUrl("/echo"),
                                  "Authorization: token " + sentinel +
                                      "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n",
                                  "POST") +
                              body;
  // In three pieces, the cuts inside the sentinels.
  const size_t cut1 = request.size() - body.size() + 10;
  const size_t cut2 = request.size() - 20;
  ASSERT_TRUE(client.SendAll(request.substr(0, cut1)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(client.SendAll(request.substr(cut1, cut2 - cut1)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(client.SendAll(request.substr(cut2)));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, body);  // the origin echoed the real values; the client gets sentinels
  std::vector<OriginServer::Request> seen = origin_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].message.Header("Authorization"), "token " + real);
  EXPECT_EQ(seen[0].message.body, "token=" + real + "&again=" + real);
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(records[0].credentials.size(), 1u);
  EXPECT_EQ(records[0].credentials[0].name, "env GITHUB_TOKEN");
  EXPECT_EQ(records[0].credentials[0].injected, 3u);
  EXPECT_EQ(records[0].credentials[0].masked, 2u);

  // Chunked both ways: the client splits the sentinel across chunks, the origin splits the real
  // value across its chunks; both are still swapped, the chunk sizes left as they are.
  Stream chunked = ConnectProxy();
  const std::string chunks = "7\r\ntoken=" + sentinel.substr(0, 1) + "\r\n" + "10\r\n" +
                             sentinel.substr(1, 16) + "\r\n" + Hex(sentinel.size() - 17) + "\r\n" +
                             sentinel.substr(17) + "\r\n0\r\n\r\n";
  ASSERT_TRUE(chunked.SendAll(
      Get(OriginUrl("/echo-chunked"), "Transfer-Encoding: chunked\r\n", "POST") + chunks));
  std::optional<HttpMessage> rc = ReadHttpResponse(chunked);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(rc->body, "token=" + sentinel);
  EXPECT_EQ(rc->raw.find(real.substr(0, 5)), std::string::npos) << rc->raw;
  seen = origin_.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].message.body, "token=" + real);
  records = records_.WaitFor(2);
  ASSERT_EQ(records.size(), 2u);
  ASSERT_EQ(records[1].credentials.size(), 1u);
  EXPECT_EQ(records[1].credentials[0].injected, 1u);
  EXPECT_EQ(records[1].credentials[0].masked, 1u);

  // Another allowed host: the sentinel arrives as it is.
  Stream other = ConnectProxy();
  ASSERT_TRUE(other.SendAll(Get("http://127.0.0.1:" + Port(origin_.port()) + "/x",
                                "Authorization: token " + sentinel + "\r\n")));
  ASSERT_TRUE(ReadHttpResponse(other).has_value());
  seen = origin_.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[2].message.Header("Authorization"), "token " + sentinel);
}

TEST_F(HttpComponentTest, Ipv6Origin) {
  OriginServer origin6;
  if (!origin6.Start("::1")) GTEST_SKIP() << "no IPv6 loopback";
  NetworkSettings network = DefaultNetwork();
  network.allowed_domains.push_back("[::1]:" + Port(origin6.port()));
  StartProxy(network, DefaultOptions());
  Stream client = ConnectProxy();
  ASSERT_TRUE(client.SendAll(Get("http://[::1]:" + Port(origin6.port()) + "/six")));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "hello /six");
  EXPECT_EQ(r->Header("X-Host"), "[::1]:" + Port(origin6.port()));
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  ExpectRecord(records[0], {.protocol = Protocol::kHttp,
                            .host = "::1",
                            .port = origin6.port(),
                            .allowed = true,
                            .address = "[::1]:" + Port(origin6.port()),
                            .end = "closed"});
  StopProxy();
  origin6.Stop();
}

TEST_F(HttpComponentTest, ConnectionCloseFromTheClientIsHonoured) {
  Stream client = ConnectProxy();
  ASSERT_TRUE(
      client.SendAll(Get(OriginUrl("/bye"), "Connection: close\r\n") + Get(OriginUrl("/never"))));
  std::optional<HttpMessage> r = ReadHttpResponse(client);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "hello /bye");
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_EQ(client.buffer(), "");
  EXPECT_EQ(origin_.requests().size(), 1u);
  ExpectOnlyRecord(OriginRecord(origin_.port()));
}

}  // namespace
}  // namespace srt::proxy::testing
