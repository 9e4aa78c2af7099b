// SPDX-License-Identifier: Apache-2.0
#include "socks5/socks5_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/host.h"
#include "proxy_limits.h"
#include "wire/parser_test_util.h"

namespace srt::proxy::socks5 {
namespace {

using testing::CheckEveryPrefix;

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

template <typename R>
bool Same(const R& a, const R& b) {
  return a.status == b.status &&
         (a.status == ParseStatus::kNeedMore || (a.consumed == b.consumed && a.error == b.error));
}

GreetingResult Greet(std::string_view in) {
  return CheckEveryPrefix(
      in, [](std::string_view p) { return ParseGreeting(testing::AsBytes(p)); },
      [](const GreetingResult& a, const GreetingResult& b) {
        return Same(a, b) && a.greeting == b.greeting;
      });
}
UserPassResult Auth(std::string_view in) {
  return CheckEveryPrefix(
      in, [](std::string_view p) { return ParseUserPass(testing::AsBytes(p)); },
      [](const UserPassResult& a, const UserPassResult& b) {
        return Same(a, b) && a.credentials == b.credentials;
      });
}
RequestResult Req(std::string_view in) {
  return CheckEveryPrefix(
      in, [](std::string_view p) { return ParseRequest(testing::AsBytes(p)); },
      [](const RequestResult& a, const RequestResult& b) {
        return Same(a, b) && a.reply == b.reply && a.request == b.request;
      });
}

// --- Real clients (captured from curl 7.88.1 on this build host) --------------------------------

TEST(Socks5Test, CurlSocks5hWithoutCredentials) {
  GreetingResult g = Greet(Hex("05020001"));
  ASSERT_EQ(g.status, ParseStatus::kDone);
  EXPECT_EQ(g.consumed, 4u);
  EXPECT_EQ(g.greeting.methods, (std::vector<uint8_t>{kMethodNoAuth, kMethodGssapi}));
  EXPECT_TRUE(g.greeting.Offers(kMethodNoAuth));
  EXPECT_FALSE(g.greeting.Offers(kMethodUserPass));

  RequestResult r = Req(Hex("050100030b6578616d706c652e636f6d01bb"));
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.consumed, 18u);
  EXPECT_EQ(r.request.command, kCommandConnect);
  EXPECT_EQ(r.request.address_type, kAddressDomain);
  EXPECT_EQ(r.request.host, "example.com");
  EXPECT_FALSE(r.request.address);
  EXPECT_EQ(r.request.port, 443);
}

TEST(Socks5Test, CurlSocks5hWithCredentials) {
  GreetingResult g = Greet(Hex("0503000102"));
  ASSERT_EQ(g.status, ParseStatus::kDone);
  EXPECT_TRUE(g.greeting.Offers(kMethodUserPass));
  UserPassResult a = Auth(Hex("0105616c69636506733363726574"));
  ASSERT_EQ(a.status, ParseStatus::kDone) << a.error;
  EXPECT_EQ(a.consumed, 14u);
  EXPECT_EQ(a.credentials, (UserPass{"alice", "s3cret"}));
  RequestResult r = Req(Hex("050100030f7777772e6578616d706c652e6f72671f90"));
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.request.host, "www.example.org");
  EXPECT_EQ(r.request.port, 8080);
}

TEST(Socks5Test, CurlSocks5WithAddresses) {
  RequestResult r = Req(Hex("050100010a0102030050"));
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.request.host, "10.1.2.3");
  EXPECT_EQ(r.request.address, ParseIpv4("10.1.2.3"));
  EXPECT_EQ(r.request.port, 80);
  r = Req(Hex("0501000420010db800000000000000000000000701bb"));
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.request.host, "2001:db8::7");
  EXPECT_EQ(r.request.address, ParseIpv6("2001:db8::7"));
  EXPECT_EQ(r.request.port, 443);
}

// --- Edge cases ---------------------------------------------------------------------------------

TEST(Socks5Test, Greeting) {
  GreetingResult g = Greet(Hex("0500"));  // NMETHODS = 0: parses; the answer is 0xFF
  ASSERT_EQ(g.status, ParseStatus::kDone);
  EXPECT_TRUE(g.greeting.methods.empty());
  std::string all = Hex("05ff");
  for (int i = 0; i < 255; ++i) {
    all += static_cast<char>(i);
  }
  g = Greet(all + "trailing");
  ASSERT_EQ(g.status, ParseStatus::kDone);
  EXPECT_EQ(g.consumed, 257u);
  EXPECT_EQ(g.greeting.methods.size(), 255u);

  g = Greet(Hex("04010050"));
  ASSERT_EQ(g.status, ParseStatus::kError);
  EXPECT_EQ(g.error,
            "unsupported version 4 (expected 5): SOCKS4 is not supported, it cannot "
            "authenticate");
  EXPECT_EQ(Greet("GET / HTTP/1.1\r\n").status, ParseStatus::kError);
  EXPECT_EQ(Greet("").status, ParseStatus::kNeedMore);
  EXPECT_TRUE(LooksLikeSocks4(0x04));
  EXPECT_FALSE(LooksLikeSocks4(0x05));
  EXPECT_TRUE(LooksLikeSocks5(0x05));
  EXPECT_FALSE(LooksLikeSocks5('C'));
}

TEST(Socks5Test, UserPass) {
  EXPECT_EQ(Auth(Hex("01000000")).credentials, (UserPass{"", ""}));
  EXPECT_EQ(Auth(Hex("01000000")).consumed, 3u);
  // The protocol's maxima: 255 bytes each (kMaxSocksUsernameBytes, kMaxSocksPasswordBytes), any
  // bytes at all, NUL included.
  const std::string user(kMaxSocksUsernameBytes, 'u');
  const std::string pass = std::string(kMaxSocksPasswordBytes - 1, 'p') + '\0';
  UserPassResult a = Auth(Hex("01ff") + user + Hex("ff") + pass);
  ASSERT_EQ(a.status, ParseStatus::kDone);
  EXPECT_EQ(a.consumed, 2u + 255 + 1 + 255);
  EXPECT_EQ(a.credentials, (UserPass{user, pass}));
  a = Auth(Hex("0505616c696365"));
  EXPECT_EQ(a.status, ParseStatus::kError);
  EXPECT_EQ(a.error, "username/password: unsupported version 5 (expected 1)");
}

TEST(Socks5Test, Requests) {
  // Unknown commands parse: the session answers REP 7.
  for (uint8_t cmd : {kCommandBind, kCommandUdpAssociate, uint8_t{0x00}, uint8_t{0x09}}) {
    RequestResult r = Req(Hex("05") + static_cast<char>(cmd) + Hex("00010a000001") + Hex("0000"));
    ASSERT_EQ(r.status, ParseStatus::kDone);
    EXPECT_EQ(r.request.command, cmd);
    EXPECT_EQ(r.request.port, 0);
  }
  // A non-zero RSV is ignored; names are kept as sent.
  RequestResult r = Req(Hex("0501ff03") + "\x0b" + "EXAMPLE.Com" + Hex("0050"));
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.request.host, "EXAMPLE.Com");
  EXPECT_FALSE(r.request.address);
  // The longest name the length octet allows: 255 bytes, longer than a DNS name may be (and still
  // a host CanonicalizeHost accepts; 63-byte labels are the resolver's business).
  std::string name;
  while (name.size() + 4 <= 255) {
    name += "abc.";
  }
  name += "xyz";
  ASSERT_EQ(name.size(), 255u);
  r = Req(Hex("05010003") + static_cast<char>(name.size()) + name + Hex("01bb"));
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.request.host, name);
  EXPECT_EQ(r.consumed, 4u + 1 + 255 + 2);
}

// A domain name (ATYP 3) is handed on as sent, also when it spells an IP literal; the session runs
// CanonicalizeHost (filter/host.h) on it and answers REP 2 for a host it rejects, as upstream srt
// does. `address` stays empty: it is for ATYP 1 and 4 only.
TEST(Socks5Test, DomainNamesAreJudgedByCanonicalizeHostNotByTheParser) {
  struct Case {
    std::string name;
    std::string canonical;  // CanonicalizeHost(host)->text; empty: "malformed host"
  };
  for (const Case& c : {
           Case{"127.1", "127.0.0.1"},
           Case{"2130706433", "127.0.0.1"},
           Case{"0x7f.0.0.1", "127.0.0.1"},
           Case{"127.0.0.1", "127.0.0.1"},
           Case{"::ffff:127.0.0.1", "127.0.0.1"},
           Case{"[::1]", "::1"},
           Case{"0:0:0::0:01", "::1"},
           Case{"Example.COM.", "example.com"},
           Case{"_srv.x-y.example", "_srv.x-y.example"},
           Case{"1.2.3.4.5", ""},
           Case{"a.123", ""},
           Case{"a..b", ""},
           Case{"exa%6dple.com", ""},
           Case{"fe80::1%eth0", ""},
           Case{"*.example", ""},
           Case{"a/b", ""},
           Case{"1:2", ""},
       }) {
    RequestResult r =
        Req(Hex("05010003") + static_cast<char>(c.name.size()) + c.name + Hex("0050"));
    ASSERT_EQ(r.status, ParseStatus::kDone) << c.name << ": " << r.error;
    EXPECT_EQ(r.request.address_type, kAddressDomain);
    EXPECT_EQ(r.request.host, c.name);
    EXPECT_FALSE(r.request.address) << c.name;
    EXPECT_EQ(r.request.port, 80);
    Result<Host> host = CanonicalizeHost(r.request.host);
    if (c.canonical.empty()) {
      ASSERT_FALSE(host.has_value()) << c.name << " -> " << host->text;
      EXPECT_TRUE(host.error().message().starts_with(kMalformedHost)) << host.error().message();
    } else {
      ASSERT_TRUE(host.has_value()) << c.name << ": " << host.error().message();
      EXPECT_EQ(host->text, c.canonical) << c.name;
    }
  }
  // ATYP 1/4 addresses: the session uses HostFromAddress, which unmaps IPv4-mapped IPv6 too.
  RequestResult r = Req(Hex("05010004") + Hex("00000000000000000000ffff7f000001") + Hex("0050"));
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  ASSERT_TRUE(r.request.address);
  EXPECT_EQ(HostFromAddress(*r.request.address).text, "127.0.0.1");
}

TEST(Socks5Test, RequestErrors) {
  struct Case {
    std::string in;
    uint8_t reply;
    std::string error;
  };
  for (const Case& c : {
           Case{Hex("040100500a000001"), kReplyGeneralFailure,
                "unsupported version 4 (expected 5): SOCKS4 is not supported, it cannot "
                "authenticate"},
           Case{Hex("050100020a0000010050"), kReplyAddressTypeNotSupported,
                "unsupported address type 2"},
           Case{Hex("05010000"), kReplyAddressTypeNotSupported, "unsupported address type 0"},
           // Names that cannot be a text host: REP 2, like any other malformed host.
           Case{Hex("05010003000050"), kReplyNotAllowed, "malformed host: empty domain name"},
           Case{Hex("0501000303610062") + Hex("0050"), kReplyNotAllowed,
                "malformed host: domain name 'a\\x00b' has a byte outside visible ASCII"},
           Case{Hex("05010003") + "\x07" + "a b.com" + Hex("0050"), kReplyNotAllowed,
                "malformed host: domain name 'a b.com' has a byte outside visible ASCII"},
           Case{Hex("05010003") + "\x06" + "a\r\nb.c" + Hex("0050"), kReplyNotAllowed,
                "malformed host: domain name 'a\\x0d\\x0ab.c' has a byte outside visible ASCII"},
           Case{Hex("05010003") + "\x03" +
                    "a\x7f"
                    "b" +
                    Hex("0050"),
                kReplyNotAllowed,
                "malformed host: domain name 'a\\x7fb' has a byte outside visible ASCII"},
           Case{Hex("05010003") + "\x08" + "caf\xc3\xa9.fr" + Hex("0050"), kReplyNotAllowed,
                "malformed host: domain name 'caf\\xc3\\xa9.fr' has a byte outside visible ASCII"},
       }) {
    RequestResult r = Req(c.in);
    ASSERT_EQ(r.status, ParseStatus::kError) << c.error;
    EXPECT_EQ(r.reply, c.reply);
    EXPECT_EQ(r.error, c.error);
  }
}

// --- Encoders -----------------------------------------------------------------------------------

TEST(Socks5Test, Encoders) {
  EXPECT_EQ(MethodSelection(kMethodUserPass), (std::array<uint8_t, 2>{0x05, 0x02}));
  EXPECT_EQ(MethodSelection(kMethodNoAcceptable), (std::array<uint8_t, 2>{0x05, 0xff}));
  EXPECT_EQ(UserPassStatus(true), (std::array<uint8_t, 2>{0x01, 0x00}));
  EXPECT_EQ(UserPassStatus(false), (std::array<uint8_t, 2>{0x01, 0x01}));
  EXPECT_EQ(Reply(kReplyNotAllowed),
            (std::vector<uint8_t>{0x05, 0x02, 0x00, 0x01, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Reply(kReplySucceeded, ParseIpv4("192.0.2.1"), 0x1f90),
            (std::vector<uint8_t>{0x05, 0x00, 0x00, 0x01, 192, 0, 2, 1, 0x1f, 0x90}));
  std::vector<uint8_t> v6 = Reply(kReplySucceeded, ParseIpv6("2001:db8::7"), 443);
  EXPECT_EQ(v6.size(), 22u);
  EXPECT_EQ(v6[3], kAddressIpv6);
  EXPECT_EQ(v6[4], 0x20);
  EXPECT_EQ(v6[19], 0x07);
  EXPECT_EQ(v6[20], 0x01);
  EXPECT_EQ(v6[21], 0xbb);
  // A reply parses as a request would (same layout): a round trip through our own parser.
  std::string bytes(v6.begin(), v6.end());
  bytes[1] = kCommandConnect;
  RequestResult r = ParseRequest(testing::AsBytes(bytes));
  ASSERT_EQ(r.status, ParseStatus::kDone);
  EXPECT_EQ(r.request.host, "2001:db8::7");
  EXPECT_EQ(r.request.port, 443);
}

}  // namespace
}  // namespace srt::proxy::socks5
