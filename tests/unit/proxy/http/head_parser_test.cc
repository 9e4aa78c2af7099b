// SPDX-License-Identifier: Apache-2.0
#include "http/head_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "base/host.h"
#include "http/base64.h"
#include "wire/parser_test_util.h"

namespace srt::proxy::http {
namespace {

using testing::CheckEveryPrefix;

bool SameRequest(const RequestHeadResult& a, const RequestHeadResult& b) {
  if (a.status != b.status) {
    return false;
  }
  if (a.status == ParseStatus::kNeedMore) {
    return true;
  }
  return a.consumed == b.consumed && a.http_error == b.http_error && a.error_code == b.error_code &&
         a.error == b.error && a.request == b.request;
}
bool SameResponse(const ResponseHeadResult& a, const ResponseHeadResult& b) {
  if (a.status != b.status) {
    return false;
  }
  if (a.status == ParseStatus::kNeedMore) {
    return true;
  }
  return a.consumed == b.consumed && a.http_error == b.http_error && a.error_code == b.error_code &&
         a.error == b.error && a.response == b.response;
}

// Parses `input` whole, on every prefix (also against a guard page), and byte by byte with the
// `resume` hint carried from call to call; all must agree. Returns the whole-input result.
RequestHeadResult ParseRequestEveryWay(std::string_view input, const Limits& limits = {}) {
  RequestHeadResult whole = CheckEveryPrefix(
      input, [&](std::string_view in) { return ParseRequestHead(in, limits); }, SameRequest);
  // Byte by byte with the resume hint (the session's loop), and split in two at every offset
  // with the hint from the first piece.
  size_t resume = 0;
  for (size_t k = 0; k <= input.size(); ++k) {
    std::span<const char> prefix(input.data(), k);
    RequestHeadResult hinted = ParseRequestHead(prefix, limits, resume);
    RequestHeadResult fresh = ParseRequestHead(prefix, limits);
    EXPECT_TRUE(SameRequest(hinted, fresh)) << "prefix " << k;
    EXPECT_EQ(hinted.resume, fresh.resume) << "prefix " << k;
    if (hinted.status != ParseStatus::kNeedMore) {
      break;
    }
    resume = hinted.resume;
    RequestHeadResult split = ParseRequestHead(testing::AsChars(input), limits, hinted.resume);
    EXPECT_TRUE(SameRequest(split, whole)) << "split at " << k;
  }
  return whole;
}

ResponseHeadResult ParseResponseEveryWay(std::string_view input, const Limits& limits = {}) {
  ResponseHeadResult whole = CheckEveryPrefix(
      input, [&](std::string_view in) { return ParseResponseHead(in, limits); }, SameResponse);
  size_t resume = 0;
  for (size_t k = 0; k <= input.size(); ++k) {
    ResponseHeadResult hinted =
        ParseResponseHead(std::span<const char>(input.data(), k), limits, resume);
    if (hinted.status != ParseStatus::kNeedMore) {
      EXPECT_TRUE(
          SameResponse(hinted, ParseResponseHead(std::span<const char>(input.data(), k), limits)));
      break;
    }
    resume = hinted.resume;
    EXPECT_TRUE(SameResponse(ParseResponseHead(testing::AsChars(input), limits, resume), whole))
        << "split at " << k;
  }
  return whole;
}

// --- Real clients (captured on this build host with curl 7.88.1 and Python 3.11) ---------------

TEST(RequestHeadTest, CurlConnect) {
  const std::string in =
      "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nUser-Agent: curl/7.88.1\r\n"
      "Proxy-Connection: Keep-Alive\r\n\r\n";
  RequestHeadResult r = ParseRequestEveryWay(in);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.consumed, in.size());
  const Request& q = r.request;
  EXPECT_EQ(q.method, "CONNECT");
  EXPECT_EQ(q.target, "example.com:443");
  EXPECT_EQ(q.version, Version::kHttp11);
  EXPECT_EQ(q.form, TargetForm::kAuthority);
  EXPECT_EQ(q.host, "example.com");
  EXPECT_EQ(q.port, 443);
  EXPECT_EQ(q.path, "");
  ASSERT_EQ(q.headers.size(), 3u);
  EXPECT_EQ(q.headers[1], (Header{"User-Agent", "curl/7.88.1"}));
  ASSERT_NE(q.Find("proxy-connection"), nullptr);
  EXPECT_EQ(q.Find("PROXY-CONNECTION")->value, "Keep-Alive");
  EXPECT_EQ(q.Find("Proxy-Authorization"), nullptr);
  EXPECT_FALSE(q.ProxyAuthorization());
  EXPECT_FALSE(q.ConnectionClose());
  EXPECT_EQ(BodyFraming(q), (Framing{Framing::Kind::kNone, 0}));
}

TEST(RequestHeadTest, CurlConnectIpv6WithCredentials) {
  const std::string in =
      "CONNECT [2001:db8::1]:8443 HTTP/1.1\r\nHost: [2001:db8::1]:8443\r\n"
      "Proxy-Authorization: Basic YWxpY2U6czNjcjpldA==\r\nUser-Agent: curl/7.88.1\r\n"
      "Proxy-Connection: Keep-Alive\r\n\r\n";
  RequestHeadResult r = ParseRequestEveryWay(in);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.request.host, "2001:db8::1");  // without the brackets
  EXPECT_EQ(r.request.port, 8443);
  std::optional<BasicCredentials> creds = r.request.ProxyAuthorization();
  ASSERT_TRUE(creds);
  EXPECT_EQ(creds->user, "alice");
  EXPECT_EQ(creds->password, "s3cr:et");  // only the first colon separates
}

TEST(RequestHeadTest, CurlAbsoluteFormGet) {
  const std::string in =
      "GET http://example.com/path?q=1 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: "
      "curl/7.88.1\r\nAccept: */*\r\nProxy-Connection: Keep-Alive\r\n\r\n";
  RequestHeadResult r = ParseRequestEveryWay(in);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.request.form, TargetForm::kAbsolute);
  EXPECT_EQ(r.request.host, "example.com");
  EXPECT_EQ(r.request.port, 80);
  EXPECT_EQ(r.request.path, "/path?q=1");
  EXPECT_EQ(BodyFraming(r.request), (Framing{Framing::Kind::kNone, 0}));
}

TEST(RequestHeadTest, CurlChunkedPostLeavesTheBodyUnconsumed) {
  const std::string head =
      "POST http://example.com/upload HTTP/1.1\r\nHost: example.com\r\nUser-Agent: "
      "curl/7.88.1\r\nAccept: */*\r\nProxy-Connection: Keep-Alive\r\nTransfer-Encoding: "
      "chunked\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n";
  const std::string in = head + "b\r\nhello world\r\n0\r\n\r\n";
  RequestHeadResult r = ParseRequestEveryWay(in);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.consumed, head.size());
  EXPECT_TRUE(r.request.chunked);
  EXPECT_EQ(BodyFraming(r.request), (Framing{Framing::Kind::kChunked, 0}));
}

TEST(RequestHeadTest, PythonUrllibGet) {
  const std::string in =
      "GET http://example.org:8080/a/b?x=y&z HTTP/1.1\r\nAccept-Encoding: identity\r\nHost: "
      "example.org:8080\r\nUser-Agent: Python-urllib/3.11\r\nConnection: close\r\n\r\n";
  RequestHeadResult r = ParseRequestEveryWay(in);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.request.host, "example.org");
  EXPECT_EQ(r.request.port, 8080);
  EXPECT_EQ(r.request.path, "/a/b?x=y&z");
  EXPECT_TRUE(r.request.ConnectionClose());
}

TEST(RequestHeadTest, PythonHttpClientTunnelIsHttp10WithoutHost) {
  const std::string in = "CONNECT example.net:443 HTTP/1.0\r\n\r\n";
  RequestHeadResult r = ParseRequestEveryWay(in);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.request.version, Version::kHttp10);
  EXPECT_TRUE(r.request.headers.empty());
  EXPECT_EQ(r.request.host, "example.net");
  EXPECT_TRUE(r.request.ConnectionClose());  // HTTP/1.0 without keep-alive
}

// --- Request targets ----------------------------------------------------------------------------

TEST(RequestHeadTest, TargetForms) {
  struct Case {
    std::string method;
    std::string target;
    TargetForm form;
    std::string host;  // as sent: case kept, IPv6 without brackets
    uint16_t port;
    std::string path;
  };
  for (const Case& c : {
           Case{"GET", "http://a.example", TargetForm::kAbsolute, "a.example", 80, "/"},
           Case{"GET", "http://a.example?x", TargetForm::kAbsolute, "a.example", 80, "/?x"},
           Case{"GET", "HTTP://A.Example:8080/P?Q", TargetForm::kAbsolute, "A.Example", 8080,
                "/P?Q"},
           Case{"GET", "http://10.0.0.1:80/", TargetForm::kAbsolute, "10.0.0.1", 80, "/"},
           Case{"GET", "http://[2001:DB8::A]/", TargetForm::kAbsolute, "2001:DB8::A", 80, "/"},
           Case{"GET", "http://[0:0:0:0:0:0:0:1]:81/x", TargetForm::kAbsolute, "0:0:0:0:0:0:0:1",
                81, "/x"},
           Case{"GET", "http://example.com./", TargetForm::kAbsolute, "example.com.", 80, "/"},
           Case{"GET", "http://under_score.example:08080/", TargetForm::kAbsolute,
                "under_score.example", 8080, "/"},
           Case{"POST", "http://x.example/%2e%2e/?a=%20", TargetForm::kAbsolute, "x.example", 80,
                "/%2e%2e/?a=%20"},
           Case{"CONNECT", "EXAMPLE.com:443", TargetForm::kAuthority, "EXAMPLE.com", 443, ""},
           Case{"CONNECT", "127.0.0.1:22", TargetForm::kAuthority, "127.0.0.1", 22, ""},
           Case{"CONNECT", "[::1]:443", TargetForm::kAuthority, "::1", 443, ""},
           Case{"GET", "/index.html", TargetForm::kOrigin, "", 0, "/index.html"},
           Case{"OPTIONS", "*", TargetForm::kAsterisk, "", 0, ""},
       }) {
    const std::string in = c.method + " " + c.target + " HTTP/1.1\r\nHost: ignored.example\r\n\r\n";
    RequestHeadResult r = ParseRequestEveryWay(in);
    ASSERT_EQ(r.status, ParseStatus::kDone) << c.target << ": " << r.error;
    EXPECT_EQ(r.request.target, c.target);
    EXPECT_EQ(r.request.form, c.form) << c.target;
    EXPECT_EQ(r.request.host, c.host) << c.target;
    EXPECT_EQ(r.request.port, c.port) << c.target;
    EXPECT_EQ(r.request.path, c.path) << c.target;
  }
}

// The parser checks URI syntax only; whether a host names something is CanonicalizeHost's call
// (filter/host.h), made by the session, which answers a rejected host with 403 "malformed host"
// (upstream srt's behaviour), not 400. So shorthand IPv4 forms parse, keep their raw text, and
// canonicalise to the address they mean.
TEST(RequestHeadTest, HostsAreJudgedByCanonicalizeHostNotByTheParser) {
  struct Case {
    std::string method;
    std::string target;
    std::string host;  // Request::host, as sent
    uint16_t port;
    std::string canonical;  // CanonicalizeHost(host)->text; empty: "malformed host"
  };
  for (const Case& c : {
           Case{"CONNECT", "127.1:443", "127.1", 443, "127.0.0.1"},
           Case{"GET", "http://2130706433/", "2130706433", 80, "127.0.0.1"},
           Case{"GET", "http://0x7F.1:8080/x", "0x7F.1", 8080, "127.0.0.1"},
           Case{"GET", "http://0177.0.0.1/", "0177.0.0.1", 80, "127.0.0.1"},
           Case{"CONNECT", "[::ffff:127.0.0.1]:80", "::ffff:127.0.0.1", 80, "127.0.0.1"},
           Case{"CONNECT", "[::FFFF:7F00:1]:80", "::FFFF:7F00:1", 80, "127.0.0.1"},
           Case{"CONNECT", "[0:0:0:0:0:0:0:1]:443", "0:0:0:0:0:0:0:1", 443, "::1"},
           Case{"CONNECT", "Example.COM.:443", "Example.COM.", 443, "example.com"},
           Case{"GET", "http://a.example/", "a.example", 80, "a.example"},
           // Valid URI syntax, but not a host: 403 "malformed host" from the session.
           Case{"GET", "http://1.2.3.4.5/", "1.2.3.4.5", 80, ""},
           Case{"GET", "http://256.1.1.1/", "256.1.1.1", 80, ""},
           Case{"GET", "http://4294967296/", "4294967296", 80, ""},
           Case{"GET", "http://a.123/", "a.123", 80, ""},
           Case{"GET", "http://a..example/", "a..example", 80, ""},
           Case{"GET", "http://.example/", ".example", 80, ""},
           Case{"GET", "http://exa%6dple.com/", "exa%6dple.com", 80, ""},
           Case{"GET", "http://a*.example/", "a*.example", 80, ""},
           Case{"CONNECT", "a~b!$&'()+,;=.example:443", "a~b!$&'()+,;=.example", 443, ""},
           Case{"CONNECT", "[1:2]:443", "1:2", 443, ""},
           Case{"CONNECT", "[::1.2.3.4.5]:443", "::1.2.3.4.5", 443, ""},
       }) {
    const std::string in = c.method + " " + c.target + " HTTP/1.1\r\n\r\n";
    RequestHeadResult r = ParseRequestEveryWay(in);
    ASSERT_EQ(r.status, ParseStatus::kDone) << c.target << ": " << r.error;
    EXPECT_EQ(r.request.host, c.host) << c.target;
    EXPECT_EQ(r.request.port, c.port) << c.target;
    Result<Host> host = CanonicalizeHost(r.request.host);
    if (c.canonical.empty()) {
      ASSERT_FALSE(host.has_value()) << c.target << " -> " << host->text;
      EXPECT_TRUE(host.error().message().starts_with(kMalformedHost)) << host.error().message();
    } else {
      ASSERT_TRUE(host.has_value()) << c.target << ": " << host.error().message();
      EXPECT_EQ(host->text, c.canonical) << c.target;
    }
  }
}

TEST(RequestHeadTest, BadTargets) {
  struct Case {
    std::string method;
    std::string target;
    HeadError error;
  };
  for (const Case& c : {
           Case{"GET", "https://example.com/", HeadError::kHttpsAbsoluteForm},
           Case{"GET", "HTTPS://example.com:443", HeadError::kHttpsAbsoluteForm},
           Case{"GET", "ftp://example.com/", HeadError::kUnsupportedScheme},
           Case{"GET", "ws://example.com/", HeadError::kUnsupportedScheme},
           Case{"GET", "example.com:80", HeadError::kBadTarget},
           Case{"GET", "http:/example.com", HeadError::kBadTarget},
           Case{"GET", "1http://example.com", HeadError::kBadTarget},
           Case{"GET", "http://example.com/#frag", HeadError::kBadTarget},
           Case{"GET", "http://exa\x7fmple.com/", HeadError::kBadTarget},
           Case{"GET", "http://ex\xc3\xa4mple.com/", HeadError::kBadTarget},
           Case{"GET", "http://a\x01.example/", HeadError::kBadTarget},
           Case{"GET", "*", HeadError::kBadTarget},
           Case{"GET", "http:///path", HeadError::kBadAuthority},
           Case{"GET", "http://:80/", HeadError::kBadAuthority},
           Case{"GET", "http://user:pw@example.com/", HeadError::kBadAuthority},
           Case{"GET", "http://allowed.example@evil.example/", HeadError::kBadAuthority},
           Case{"GET", "http://example.com:/", HeadError::kBadAuthority},
           Case{"GET", "http://example.com:0/", HeadError::kBadAuthority},
           Case{"GET", "http://example.com:65536/", HeadError::kBadAuthority},
           Case{"GET", "http://example.com:123456/", HeadError::kBadAuthority},
           Case{"GET", "http://example.com:+80/", HeadError::kBadAuthority},
           Case{"GET", "http://example.com:80:80/", HeadError::kBadAuthority},
           // Not reg-name syntax (RFC 3986 §3.2.2).
           Case{"GET", "http://exa%6/", HeadError::kBadAuthority},
           Case{"GET", "http://exa%zzmple/", HeadError::kBadAuthority},
           Case{"GET", "http://a\"b.example/", HeadError::kBadAuthority},
           Case{"GET", "http://a<b>.example/", HeadError::kBadAuthority},
           Case{"GET", "http://a\\b.example/", HeadError::kBadAuthority},
           Case{"GET", "http://a^b|c.example/", HeadError::kBadAuthority},
           Case{"GET", "http://a{b}.example/", HeadError::kBadAuthority},
           Case{"GET", "http://a`b.example/", HeadError::kBadAuthority},
           Case{"GET", "http://a[b].example/", HeadError::kBadAuthority},
           Case{"GET", "http://a]b/", HeadError::kBadAuthority},
           // IP literals: an IPv6address's characters, with a ':', in brackets.
           Case{"GET", "http://::1/", HeadError::kBadAuthority},
           Case{"GET", "http://[::1/", HeadError::kBadAuthority},
           Case{"GET", "http://[]/", HeadError::kBadAuthority},
           Case{"GET", "http://[10.0.0.1]/", HeadError::kBadAuthority},
           Case{"GET", "http://[example.com]/", HeadError::kBadAuthority},
           Case{"GET", "http://[v1.fe80::1]/", HeadError::kBadAuthority},
           Case{"GET", "http://[fe80::1%25eth0]/", HeadError::kBadAuthority},
           Case{"GET", "http://[::1]x/", HeadError::kBadAuthority},
           Case{"GET", "http://[::1]]/", HeadError::kBadAuthority},
           Case{"CONNECT", "example.com", HeadError::kBadAuthority},
           Case{"CONNECT", "example.com:", HeadError::kBadAuthority},
           Case{"CONNECT", ":443", HeadError::kBadAuthority},
           Case{"CONNECT", "[::1]", HeadError::kBadAuthority},
           Case{"CONNECT", "127.1", HeadError::kBadAuthority},
           Case{"CONNECT", "/", HeadError::kBadTarget},
           Case{"CONNECT", "http://example.com:443", HeadError::kBadTarget},
           Case{"CONNECT", "user@example.com:443", HeadError::kBadAuthority},
       }) {
    const std::string in = c.method + " " + c.target + " HTTP/1.1\r\n\r\n";
    RequestHeadResult r = ParseRequestEveryWay(in);
    ASSERT_EQ(r.status, ParseStatus::kError) << c.target;
    EXPECT_EQ(r.error_code, c.error) << c.target << ": " << r.error;
    EXPECT_EQ(r.http_error, 400) << c.target;
  }
}

TEST(RequestHeadTest, HostLengthIsNotTheParsersBusiness) {
  // DNS limits (63-byte labels, 253-character names) are not checked here; CanonicalizeHost
  // refuses hosts longer than 255 characters (upstream srt's rule), so 403, not 400. The request
  // line limit (414) bounds the host like the rest of the target.
  const std::string label64(64, 'a');
  const std::string host255 = label64 + "." + label64 + "." + label64 + "." + std::string(60, 'b');
  ASSERT_EQ(host255.size(), 255u);
  auto parse = [](const std::string& host) {
    return ParseRequestHead(testing::AsChars("CONNECT " + host + ":443 HTTP/1.1\r\n\r\n"));
  };
  for (const std::string& host : {label64 + ".example", host255, host255 + "b"}) {
    RequestHeadResult r = parse(host);
    ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
    EXPECT_EQ(r.request.host, host);
  }
  EXPECT_TRUE(CanonicalizeHost(host255).has_value());
  EXPECT_FALSE(CanonicalizeHost(host255 + "b").has_value());
  Limits limits;
  limits.max_request_line_bytes = 64;
  RequestHeadResult r = ParseRequestHead(
      testing::AsChars("CONNECT " + std::string(60, 'a') + ":443 HTTP/1.1\r\n\r\n"), limits);
  EXPECT_EQ(r.error_code, HeadError::kStartLineTooLong);
  EXPECT_EQ(r.http_error, 414);
}

// --- Request line and fields ---------------------------------------------------------------------

TEST(RequestHeadTest, ExactErrors) {
  struct Case {
    std::string in;
    HeadError error;
    int status;
  };
  const std::string ok_line = "GET http://a.example/ HTTP/1.1\r\n";
  for (const Case& c : {
           // Start line.
           Case{"GET http://a.example/\r\n\r\n", HeadError::kBadStartLine, 400},  // HTTP/0.9
           Case{"GET  http://a.example/ HTTP/1.1\r\n\r\n", HeadError::kBadStartLine, 400},
           Case{"GET http://a.example/  HTTP/1.1\r\n\r\n", HeadError::kBadStartLine, 400},
           Case{"GET http://a.example/ HTTP/1.1 \r\n\r\n", HeadError::kBadStartLine, 400},
           Case{"GET\thttp://a.example/ HTTP/1.1\r\n\r\n", HeadError::kBadMethod, 400},
           Case{" GET http://a.example/ HTTP/1.1\r\n\r\n", HeadError::kBadMethod, 400},
           Case{"G(T http://a.example/ HTTP/1.1\r\n\r\n", HeadError::kBadMethod, 400},
           Case{"GET http://a.example/ http/1.1\r\n\r\n", HeadError::kBadStartLine, 400},
           Case{"GET http://a.example/ HTTP/1.10\r\n\r\n", HeadError::kBadStartLine, 400},
           Case{"GET http://a.example/ HTTP/11\r\n\r\n", HeadError::kBadStartLine, 400},
           Case{"GET http://a.example/ HTTP/2.0\r\n\r\n", HeadError::kUnsupportedVersion, 505},
           Case{"GET http://a.example/ HTTP/0.9\r\n\r\n", HeadError::kUnsupportedVersion, 505},
           Case{"\x16\x03\x01\x02\x05\x01\x01\x01\xfc\x03\x03\r\n", HeadError::kBadStartLine, 400},
           // Line endings (RFC 9112 §2.2): requests need CRLF.
           Case{"GET http://a.example/ HTTP/1.1\n\n", HeadError::kBareLineEnding, 400},
           Case{ok_line + "Host: a\n\r\n", HeadError::kBareLineEnding, 400},
           Case{ok_line + "Host: a\r\n\n", HeadError::kBareLineEnding, 400},
           Case{ok_line + "X: a\rb\r\n\r\n", HeadError::kBareLineEnding, 400},
           Case{ok_line + "X: a\r\r\n\r\n", HeadError::kBareLineEnding, 400},
           Case{"GET http://a.example/\r HTTP/1.1\r\n\r\n", HeadError::kBareLineEnding, 400},
           Case{"\n" + ok_line + "\r\n", HeadError::kBareLineEnding, 400},
           Case{"\rGET http://a.example/ HTTP/1.1\r\n\r\n", HeadError::kBareLineEnding, 400},
           // Field lines (RFC 9112 §5).
           Case{ok_line + "Host : a\r\n\r\n", HeadError::kBadHeader, 400},
           Case{ok_line + "Host\t: a\r\n\r\n", HeadError::kBadHeader, 400},
           Case{ok_line + " Host: a\r\n\r\n", HeadError::kBadHeader, 400},
           Case{ok_line + "Host: a\r\n X: b\r\n\r\n", HeadError::kObsFold, 400},
           Case{ok_line + "Host: a\r\n\tb\r\n\r\n", HeadError::kObsFold, 400},
           Case{ok_line + "NoColon\r\n\r\n", HeadError::kBadHeader, 400},
           Case{ok_line + ": empty name\r\n\r\n", HeadError::kBadHeader, 400},
           Case{ok_line + "X(y): z\r\n\r\n", HeadError::kBadHeader, 400},
           Case{ok_line + "X: a\x01"
                          "b\r\n\r\n",
                HeadError::kBadHeader, 400},
           Case{ok_line + std::string("X: a\0b\r\n\r\n", 10), HeadError::kBadHeader, 400},
           Case{ok_line + "X: a\x7f\r\n\r\n", HeadError::kBadHeader, 400},
           Case{ok_line + "Host: a\r\nhost: b\r\n\r\n", HeadError::kBadHeader, 400},
           // Framing (RFC 9112 §6).
           Case{ok_line + "Content-Length: 1\r\nContent-Length: 2\r\n\r\n", HeadError::kBadFraming,
                400},
           Case{ok_line + "Content-Length: 1, 2\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Content-Length: -1\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Content-Length: +1\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Content-Length: 0x10\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Content-Length: 1 2\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Content-Length:\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Content-Length: 1,\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Content-Length: 99999999999999999999\r\n\r\n", HeadError::kBadFraming,
                400},
           Case{ok_line + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
                HeadError::kBadFraming, 400},
           Case{ok_line + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
                HeadError::kBadFraming, 400},
           Case{ok_line + "Transfer-Encoding: chunked, gzip\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Transfer-Encoding: gzip\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
                HeadError::kBadFraming, 400},
           Case{ok_line + "Transfer-Encoding:\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Transfer-Encoding: chunked;q=1\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Transfer-Encoding: \"chunked\"\r\n\r\n", HeadError::kBadFraming, 400},
           Case{ok_line + "Transfer-Encoding: foo, chunked\r\n\r\n", HeadError::kUnknownCoding,
                501},
           Case{"POST http://a.example/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
                HeadError::kBadFraming, 400},
       }) {
    RequestHeadResult r = ParseRequestEveryWay(c.in);
    ASSERT_EQ(r.status, ParseStatus::kError) << c.in;
    EXPECT_EQ(r.error_code, c.error) << c.in << " -> " << r.error;
    EXPECT_EQ(r.http_error, c.status) << c.in;
    EXPECT_FALSE(r.error.empty());
    EXPECT_EQ(r.consumed, 0u);
  }
}

TEST(RequestHeadTest, ErrorsQuoteTheInputSanitised) {
  RequestHeadResult r = ParseRequestHead(testing::AsChars("G\x01T / HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(r.error, "invalid method 'G\\x01T'");
  r = ParseRequestHead(testing::AsChars("GET https://example.com/ HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(r.error,
            "https:// request-target 'https://example.com/': use CONNECT for TLS to the origin");
  std::string host;
  while (host.size() < 99) {
    host += "ab.";
  }
  host += "c";
  r = ParseRequestHead(testing::AsChars("CONNECT " + host + " HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(r.error, "invalid authority '" + host.substr(0, 64) + "'...: a port is required");
}

TEST(RequestHeadTest, TolerantWhereTheRfcAllows) {
  // Leading empty lines (RFC 9112 §2.2), OWS around values, empty list elements, duplicate equal
  // Content-Length, HTTP/1.2 read as 1.1, obs-text in values, known codings before chunked.
  const std::string in =
      "\r\n\r\nPOST http://a.example/ HTTP/1.2\r\nX-Empty:\r\nX-Ows: \t v a l \t \r\n"
      "X-Latin1: caf\xe9\r\nContent-Length: 3\r\ncontent-length: 3, 3\r\n\r\nabc";
  RequestHeadResult r = ParseRequestEveryWay(in);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.consumed, in.size() - 3);
  EXPECT_EQ(r.request.version, Version::kHttp11);
  EXPECT_EQ(r.request.Find("x-empty")->value, "");
  EXPECT_EQ(r.request.Find("x-ows")->value, "v a l");
  EXPECT_EQ(r.request.Find("x-latin1")->value, "caf\xe9");
  EXPECT_EQ(BodyFraming(r.request), (Framing{Framing::Kind::kContentLength, 3}));

  r = ParseRequestEveryWay(
      "POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: gzip,, CHUNKED\r\n\r\n");
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(BodyFraming(r.request), (Framing{Framing::Kind::kChunked, 0}));
  r = ParseRequestEveryWay(
      "POST http://a.example/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: "
      "chunked\r\n\r\n");
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_TRUE(r.request.chunked);
  r = ParseRequestEveryWay("POST http://a.example/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(BodyFraming(r.request), (Framing{Framing::Kind::kNone, 0}));
  r = ParseRequestEveryWay(
      "POST http://a.example/ HTTP/1.1\r\nContent-Length: 9999999999999999999\r\n\r\n");
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(*r.request.content_length, 9999999999999999999ull);
  // A CONNECT's bytes after the head belong to the tunnel, whatever its fields say.
  r = ParseRequestEveryWay("CONNECT a.example:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n");
  EXPECT_EQ(BodyFraming(r.request), (Framing{Framing::Kind::kNone, 0}));
}

TEST(RequestHeadTest, PipelinedRequestsParseOneAtATime) {
  const std::string first = "GET http://a.example/1 HTTP/1.1\r\nHost: a.example\r\n\r\n";
  const std::string second = "GET http://b.example/2 HTTP/1.1\r\nHost: b.example\r\n\r\n";
  const std::string in = first + second;
  RequestHeadResult r = ParseRequestHead(testing::AsChars(in));
  ASSERT_EQ(r.status, ParseStatus::kDone);
  EXPECT_EQ(r.consumed, first.size());
  EXPECT_EQ(r.request.host, "a.example");
  r = ParseRequestHead(testing::AsChars(in).subspan(first.size()));
  ASSERT_EQ(r.status, ParseStatus::kDone);
  EXPECT_EQ(r.request.host, "b.example");
}

// --- Limits (every one, at and beyond it) -------------------------------------------------------

TEST(RequestHeadLimitsTest, RequestLine) {
  Limits limits;
  limits.max_request_line_bytes = 64;
  const std::string prefix = "GET http://a.example/";
  const std::string suffix = " HTTP/1.1";
  const std::string at = prefix + std::string(64 - prefix.size() - suffix.size(), 'x') + suffix;
  ASSERT_EQ(at.size(), 64u);
  EXPECT_EQ(ParseRequestEveryWay(at + "\r\n\r\n", limits).status, ParseStatus::kDone);
  RequestHeadResult r =
      ParseRequestEveryWay(prefix + "y" + at.substr(prefix.size()) + "\r\n\r\n", limits);
  EXPECT_EQ(r.error_code, HeadError::kStartLineTooLong);
  EXPECT_EQ(r.http_error, 414);
  // Refused before the line ends: 66 bytes of it, with no CRLF in sight.
  r = ParseRequestHead(testing::AsChars(prefix + std::string(45, 'x')), limits);
  EXPECT_EQ(r.http_error, 414);
  // The default: 8 KiB.
  std::string long_target = "http://a.example/" + std::string(kMaxHttpRequestLineBytes, 'p');
  r = ParseRequestHead(testing::AsChars("GET " + long_target + " HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(r.http_error, 414);
}

TEST(RequestHeadLimitsTest, HeadBytes) {
  Limits limits;
  limits.max_head_bytes = 128;
  std::string in = "GET http://a.example/ HTTP/1.1\r\nX: ";
  in += std::string(128 - in.size() - 4, 'v') + "\r\n\r\n";
  ASSERT_EQ(in.size(), 128u);
  RequestHeadResult r = ParseRequestEveryWay(in, limits);
  EXPECT_EQ(r.status, ParseStatus::kDone);
  EXPECT_EQ(r.consumed, 128u);
  in.insert(40, "v");
  r = ParseRequestEveryWay(in, limits);
  EXPECT_EQ(r.error_code, HeadError::kHeadTooLarge);
  EXPECT_EQ(r.http_error, 431);
  // The default: 64 KiB, reached without an end of head; refused as soon as it is exceeded.
  std::string big = "GET http://a.example/ HTTP/1.1\r\n";
  while (big.size() <= kMaxHttpHeadBytes) {
    big += "X-Filler: " + std::string(1000, 'f') + "\r\n";
  }
  r = ParseRequestHead(testing::AsChars(big));
  EXPECT_EQ(r.error_code, HeadError::kHeadTooLarge);
  testing::GuardedBuffer guarded(big);
  EXPECT_EQ(ParseRequestHead(guarded.chars()).error_code, HeadError::kHeadTooLarge);
  // One byte short of the limit it is still "more, please".
  r = ParseRequestHead(testing::AsChars(big).first(kMaxHttpHeadBytes));
  EXPECT_EQ(r.status, ParseStatus::kNeedMore);
}

TEST(RequestHeadLimitsTest, HeaderCount) {
  std::string in = "GET http://a.example/ HTTP/1.1\r\n";
  for (size_t i = 0; i < kMaxHttpHeaderCount; ++i) {
    in += "X-" + std::to_string(i) + ": v\r\n";
  }
  RequestHeadResult r = ParseRequestHead(testing::AsChars(in + "\r\n"));
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.request.headers.size(), kMaxHttpHeaderCount);
  r = ParseRequestHead(testing::AsChars(in + "X-Last: v\r\n\r\n"));
  EXPECT_EQ(r.error_code, HeadError::kTooManyHeaders);
  EXPECT_EQ(r.http_error, 431);
  // Refused when the 101st line is complete, before the head ends.
  EXPECT_EQ(ParseRequestHead(testing::AsChars(in + "X-Last: v\r\n")).http_error, 431);
  Limits limits;
  limits.max_headers = 1;
  EXPECT_EQ(ParseRequestEveryWay("GET http://a.example/ HTTP/1.1\r\nA: 1\r\nB: 2\r\n\r\n", limits)
                .error_code,
            HeadError::kTooManyHeaders);
}

TEST(RequestHeadLimitsTest, HeaderName) {
  const std::string line = "GET http://a.example/ HTTP/1.1\r\n";
  const std::string at(kMaxHttpHeaderNameBytes, 'n');
  EXPECT_EQ(ParseRequestHead(testing::AsChars(line + at + ": v\r\n\r\n")).status,
            ParseStatus::kDone);
  RequestHeadResult r = ParseRequestHead(testing::AsChars(line + at + "n: v\r\n\r\n"));
  EXPECT_EQ(r.error_code, HeadError::kHeaderNameTooLong);
  EXPECT_EQ(r.http_error, 431);
  Limits limits;
  limits.max_header_name_bytes = 4;
  EXPECT_EQ(ParseRequestEveryWay(line + "Host: a\r\n\r\n", limits).status, ParseStatus::kDone);
  EXPECT_EQ(ParseRequestEveryWay(line + "Hosts: a\r\n\r\n", limits).error_code,
            HeadError::kHeaderNameTooLong);
}

TEST(RequestHeadLimitsTest, LeadingEmptyLines) {
  const std::string line = "GET http://a.example/ HTTP/1.1\r\n\r\n";
  std::string empties;
  for (size_t i = 0; i < kMaxHttpLeadingEmptyLines; ++i) {
    empties += "\r\n";
  }
  EXPECT_EQ(ParseRequestEveryWay(empties + line).status, ParseStatus::kDone);
  RequestHeadResult r = ParseRequestEveryWay(empties + "\r\n" + line);
  EXPECT_EQ(r.error_code, HeadError::kBadStartLine);
  EXPECT_EQ(r.http_error, 400);
}

TEST(RequestHeadLimitsTest, ResumeKeepsByteAtATimeLinear) {
  // A client dribbling a 60 KiB header one byte per read: with the resume hint each call only
  // looks at the new bytes until a line completes. (Correctness is checked above; this checks the
  // hint is honoured: a bogus hint that skips a line end is trusted.)
  const std::string in = "GET http://a.example/ HTTP/1.1\r\nX: v\r\n\r\n";
  RequestHeadResult r = ParseRequestHead(testing::AsChars(in), {}, in.size() - 1);
  EXPECT_EQ(r.status, ParseStatus::kDone);  // a line end after the hint: full parse
  r = ParseRequestHead(testing::AsChars(in), {}, in.size());
  EXPECT_EQ(r.status, ParseStatus::kNeedMore);  // none after it: trusted
  r = ParseRequestHead(testing::AsChars(in), {}, in.size() + 100);
  EXPECT_EQ(r.status, ParseStatus::kDone);  // a hint past the end is ignored
}

// --- Proxy-Authorization and Connection -------------------------------------------------------

TEST(RequestHeadTest, ProxyAuthorization) {
  auto creds = [](const std::string& fields) {
    RequestHeadResult r =
        ParseRequestHead(testing::AsChars("CONNECT a.example:443 HTTP/1.1\r\n" + fields + "\r\n"));
    EXPECT_EQ(r.status, ParseStatus::kDone) << r.error;
    return r.request.ProxyAuthorization();
  };
  const std::string alice = EncodeBase64("alice:pw");
  EXPECT_EQ(creds("Proxy-Authorization: Basic " + alice + "\r\n"),
            (BasicCredentials{"alice", "pw"}));
  EXPECT_EQ(creds("proxy-authorization: bAsIc   " + alice + "  \r\n"),
            (BasicCredentials{"alice", "pw"}));
  EXPECT_EQ(creds("Proxy-Authorization: Basic " + EncodeBase64(":") + "\r\n"),
            (BasicCredentials{"", ""}));
  EXPECT_EQ(creds("Proxy-Authorization: Basic " + EncodeBase64("u:p\xc3\xa4ss") + "\r\n"),
            (BasicCredentials{"u", "p\xc3\xa4ss"}));
  for (const std::string& bad : std::vector<std::string>{
           "", "Proxy-Authorization: Basic\r\n", "Proxy-Authorization: Basic \r\n",
           "Proxy-Authorization: Bearer " + alice + "\r\n",
           "Proxy-Authorization: Basic " + EncodeBase64("no colon") + "\r\n",
           "Proxy-Authorization: Basic " + EncodeBase64("a:b\nc") + "\r\n",
           "Proxy-Authorization: Basic " + EncodeBase64(std::string("a:\0", 3)) + "\r\n",
           "Proxy-Authorization: Basic YWxpY2U6cHc\r\n",     // padding missing
           "Proxy-Authorization: Basic YWxpY2U6cH=\r\n",     // non-zero unused bits
           "Proxy-Authorization: Basic YWxp Y2U6cHc=\r\n",   // space inside
           "Proxy-Authorization: Basic YWxpY2U6cHc=,x\r\n",  // trailing junk
           "Proxy-Authorization: Basic YWxpY2U6cHc-\r\n",    // base64url alphabet
           "Proxy-Authorization: Basic " + alice + "\r\nProxy-Authorization: Basic " + alice +
               "\r\n",  // two of them
       }) {
    EXPECT_FALSE(creds(bad)) << bad;
  }
}

TEST(RequestHeadTest, ConnectionClose) {
  auto close = [](const std::string& version, const std::string& fields) {
    RequestHeadResult r = ParseRequestHead(
        testing::AsChars("GET http://a.example/ " + version + "\r\n" + fields + "\r\n"));
    EXPECT_EQ(r.status, ParseStatus::kDone) << r.error;
    return r.request.ConnectionClose();
  };
  EXPECT_FALSE(close("HTTP/1.1", ""));
  EXPECT_TRUE(close("HTTP/1.1", "Connection: close\r\n"));
  EXPECT_TRUE(close("HTTP/1.1", "Connection: Upgrade, CLOSE\r\n"));
  EXPECT_TRUE(close("HTTP/1.1", "Connection: keep-alive\r\nConnection: close\r\n"));
  EXPECT_FALSE(close("HTTP/1.1", "Connection: closed\r\n"));
  EXPECT_TRUE(close("HTTP/1.0", ""));
  EXPECT_FALSE(close("HTTP/1.0", "Connection: Keep-Alive\r\n"));
  EXPECT_TRUE(close("HTTP/1.0", "Connection: keep-alive, close\r\n"));
}

// RFC 9110 §7.6.1: what a Connection field names is not forwarded, and the field itself keeps
// only close, keep-alive and upgrade, so that no next hop is told to drop a field srt added.
TEST(RequestHeadTest, ConnectionNamesFieldsThatStayOnThisHop) {
  RequestHeadResult r = ParseRequestHead(testing::AsChars(
      "GET http://a.example/ HTTP/1.1\r\nConnection: keep-alive, X-Agent\r\n"
      "connection: ,TE , upgrade\r\nX-Agent: 1\r\nTE: trailers\r\nUpgrade: websocket\r\n\r\n"));
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  const std::vector<std::string_view> named = NamedByConnection(r.request.headers);
  EXPECT_EQ(named, (std::vector<std::string_view>{"X-Agent", "TE"}));
  EXPECT_TRUE(IsNamed(named, "x-agent"));
  EXPECT_TRUE(IsNamed(named, "te"));
  EXPECT_FALSE(IsNamed(named, "Upgrade"));  // the upgrade option is forwarded, and its field
  EXPECT_FALSE(IsNamed(named, "X-Agent-Id"));
  EXPECT_TRUE(NamedByConnection({{"Connection", "close"}, {"Host", "a"}}).empty());
  EXPECT_EQ(ConnectionForNextHop("keep-alive, X-Agent"), "keep-alive");
  EXPECT_EQ(ConnectionForNextHop(" ,TE , Upgrade"), "Upgrade");
  EXPECT_EQ(ConnectionForNextHop("X-Agent, close ,Keep-Alive"), "close, Keep-Alive");
  EXPECT_EQ(ConnectionForNextHop("X-Agent"), "");
}

// --- Responses ----------------------------------------------------------------------------------

Request MakeRequest(const std::string& method) {
  const std::string target = method == "CONNECT" ? "a.example:443" : "http://a.example/";
  RequestHeadResult r =
      ParseRequestHead(testing::AsChars(method + " " + target + " HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(r.status, ParseStatus::kDone);
  return r.request;
}

TEST(ResponseHeadTest, RealServers) {
  // nginx, chunked.
  std::string in =
      "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sat, 29 Nov 2025 11:53:00 GMT\r\n"
      "Content-Type: text/html\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n";
  ResponseHeadResult r = ParseResponseEveryWay(in + "5\r\nhello\r\n0\r\n\r\n");
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.consumed, in.size());
  EXPECT_EQ(r.response.version, Version::kHttp11);
  EXPECT_EQ(r.response.status, 200);
  EXPECT_EQ(r.response.reason, "OK");
  EXPECT_EQ(r.response.headers.size(), 5u);
  EXPECT_FALSE(r.response.ConnectionClose());
  EXPECT_EQ(BodyFraming(MakeRequest("GET"), r.response), (Framing{Framing::Kind::kChunked, 0}));
  EXPECT_EQ(BodyFraming(MakeRequest("HEAD"), r.response), (Framing{Framing::Kind::kNone, 0}));

  // Python's http.server: HTTP/1.0, Content-Length.
  in = "HTTP/1.0 404 File not found\r\nServer: SimpleHTTP/0.6 Python/3.11.7\r\n"
       "Date: Sat, 29 Nov 2025 11:53:00 GMT\r\nConnection: close\r\n"
       "Content-Type: text/html;charset=utf-8\r\nContent-Length: 335\r\n\r\n";
  r = ParseResponseEveryWay(in);
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.response.version, Version::kHttp10);
  EXPECT_EQ(r.response.status, 404);
  EXPECT_EQ(r.response.reason, "File not found");
  EXPECT_TRUE(r.response.ConnectionClose());
  EXPECT_EQ(BodyFraming(MakeRequest("GET"), r.response),
            (Framing{Framing::Kind::kContentLength, 335}));

  // No reason phrase, with and without the SP; bare LF line endings are tolerated in responses.
  r = ParseResponseEveryWay("HTTP/1.1 204 \r\nX: y\r\n\r\n");
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.response.reason, "");
  r = ParseResponseEveryWay("HTTP/1.1 200\nContent-Length: 2\n\nok");
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.consumed, 32u);
  EXPECT_EQ(r.response.Find("content-length")->value, "2");
}

TEST(ResponseHeadTest, Framing) {
  struct Case {
    std::string method;
    std::string head;
    Framing framing;
  };
  const Framing none{Framing::Kind::kNone, 0};
  const Framing close{Framing::Kind::kUntilClose, 0};
  for (const Case& c : {
           Case{"GET", "HTTP/1.1 100 Continue\r\n\r\n", none},
           Case{"GET", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", none},
           Case{"GET", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", none},
           Case{"GET", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", none},
           Case{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", none},
           Case{"CONNECT", "HTTP/1.1 200 OK\r\n\r\n", none},
           Case{"CONNECT",
                "HTTP/1.1 407 Auth\r\nContent-Length: 4\r\n\r\n",
                {Framing::Kind::kContentLength, 4}},
           Case{"GET", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", none},
           Case{"GET",
                "HTTP/1.1 200 OK\r\nContent-Length: 7, 7\r\n\r\n",
                {Framing::Kind::kContentLength, 7}},
           Case{"GET", "HTTP/1.1 200 OK\r\n\r\n", close},
           Case{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", close},
           Case{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", close},
           Case{"GET",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: x-custom, chunked\r\n\r\n",
                {Framing::Kind::kChunked, 0}},
       }) {
    ResponseHeadResult r = ParseResponseEveryWay(c.head);
    ASSERT_EQ(r.status, ParseStatus::kDone) << c.head << r.error;
    EXPECT_EQ(BodyFraming(MakeRequest(c.method), r.response), c.framing)
        << c.method << " " << c.head;
  }
}

TEST(ResponseHeadTest, ErrorsAre502) {
  struct Case {
    std::string in;
    HeadError error;
  };
  for (const Case& c : {
           Case{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                HeadError::kBadFraming},
           Case{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                HeadError::kBadFraming},
           Case{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
                HeadError::kBadFraming},
           Case{"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", HeadError::kBadFraming},
           Case{"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", HeadError::kObsFold},
           Case{"HTTP/1.1 200 OK\r\nX : a\r\n\r\n", HeadError::kBadHeader},
           Case{"HTTP/1.1 200 OK\rX: a\r\n\r\n", HeadError::kBareLineEnding},
           Case{"HTTP/1.1 200 O\x01K\r\n\r\n", HeadError::kBadStartLine},
           Case{"HTTP/1.1 99 Low\r\n\r\n", HeadError::kBadStartLine},
           Case{"HTTP/1.1 099 Low\r\n\r\n", HeadError::kBadStatus},
           Case{"HTTP/1.1 600 High\r\n\r\n", HeadError::kBadStatus},
           Case{"HTTP/1.1 2000 OK\r\n\r\n", HeadError::kBadStartLine},
           Case{"HTTP/1.1  200 OK\r\n\r\n", HeadError::kBadStartLine},
           Case{"HTTP/2 200\r\n\r\n", HeadError::kBadStartLine},
           Case{"HTTP/2.0 200 OK\r\n\r\n", HeadError::kUnsupportedVersion},
           Case{"ICY 200 OK\r\n\r\n", HeadError::kBadStartLine},
           Case{"\r\nHTTP/1.1 200 OK\r\n\r\n", HeadError::kBadStartLine},
           Case{"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", HeadError::kBadStartLine},
       }) {
    ResponseHeadResult r = ParseResponseEveryWay(c.in);
    ASSERT_EQ(r.status, ParseStatus::kError) << c.in;
    EXPECT_EQ(r.error_code, c.error) << c.in << " -> " << r.error;
    EXPECT_EQ(r.http_error, 502) << c.in;
  }
}

TEST(ResponseHeadTest, Limits) {
  Limits limits;
  limits.max_request_line_bytes = 20;
  EXPECT_EQ(ParseResponseEveryWay("HTTP/1.1 200 OKOKOKO\r\n\r\n", limits).status,
            ParseStatus::kDone);
  ResponseHeadResult r = ParseResponseEveryWay("HTTP/1.1 200 OKOKOKOK\r\n\r\n", limits);
  EXPECT_EQ(r.error_code, HeadError::kStartLineTooLong);
  EXPECT_EQ(r.http_error, 502);
  limits = {};
  limits.max_head_bytes = 34;
  EXPECT_EQ(ParseResponseEveryWay("HTTP/1.1 200 OK\r\nX: 0123456789\r\n\r\n", limits).status,
            ParseStatus::kDone);
  EXPECT_EQ(ParseResponseEveryWay("HTTP/1.1 200 OK\r\nX: 01234567890\r\n\r\n", limits).error_code,
            HeadError::kHeadTooLarge);
  limits = {};
  limits.max_headers = 2;
  EXPECT_EQ(
      ParseResponseEveryWay("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits).error_code,
      HeadError::kTooManyHeaders);
  limits = {};
  limits.max_header_name_bytes = 1;
  EXPECT_EQ(ParseResponseEveryWay("HTTP/1.1 200 OK\r\nAB: 1\r\n\r\n", limits).error_code,
            HeadError::kHeaderNameTooLong);
}

}  // namespace
}  // namespace srt::proxy::http
