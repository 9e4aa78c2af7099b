// SPDX-License-Identifier: Apache-2.0
// Host canonicalisation: every inet_aton form, IPv6 forms, mapped addresses, brackets, trailing
// dot, case, length limits, '%' and the other rejections, with exact results.
#include "base/host.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace srt {
namespace {

using Kind = Host::Kind;

struct Good {
  std::string raw;
  Kind kind;
  std::string text;
};

TEST(HostTest, CanonicalizesNames) {
  for (const Good& c : std::vector<Good>{
           {"example.com", Kind::kName, "example.com"},
           {"EXAMPLE.COM", Kind::kName, "example.com"},
           {"Example.Com.", Kind::kName, "example.com"},
           {"LOCALHOST.", Kind::kName, "localhost"},
           {"localhost", Kind::kName, "localhost"},
           {"intranet", Kind::kName, "intranet"},
           {"xn--bcher-kva.example", Kind::kName, "xn--bcher-kva.example"},
           {"XN--BCHER-KVA.EXAMPLE", Kind::kName, "xn--bcher-kva.example"},
           {"a_b-c.example", Kind::kName, "a_b-c.example"},
           {"_dmarc.example.com", Kind::kName, "_dmarc.example.com"},
           {"-.example", Kind::kName, "-.example"},
           {"1.2.example", Kind::kName, "1.2.example"},  // only the last label decides
           {"foo.0xg", Kind::kName, "foo.0xg"},          // not a number: a name
           {"0x.example", Kind::kName, "0x.example"},
           {"a.b.c.d.e.f", Kind::kName, "a.b.c.d.e.f"},
       }) {
    Result<Host> h = CanonicalizeHost(c.raw);
    ASSERT_TRUE(h.has_value()) << c.raw << ": " << h.error().message();
    EXPECT_EQ(h->kind, c.kind) << c.raw;
    EXPECT_EQ(h->text, c.text) << c.raw;
    EXPECT_FALSE(h->is_ip()) << c.raw;
  }
}

TEST(HostTest, CanonicalizesEveryInetAtonForm) {
  for (const Good& c : std::vector<Good>{
           {"1.2.3.4", Kind::kIpv4, "1.2.3.4"},
           {"1.2.3.4.", Kind::kIpv4, "1.2.3.4"},
           {"0.0.0.0", Kind::kIpv4, "0.0.0.0"},
           {"0", Kind::kIpv4, "0.0.0.0"},
           {"0x", Kind::kIpv4, "0.0.0.0"},  // WHATWG: "0x" alone is zero
           {"127.1", Kind::kIpv4, "127.0.0.1"},
           {"127.0.1", Kind::kIpv4, "127.0.0.1"},
           {"127.1.", Kind::kIpv4, "127.0.0.1"},
           {"2130706433", Kind::kIpv4, "127.0.0.1"},
           {"0x7f000001", Kind::kIpv4, "127.0.0.1"},
           {"0X7F000001", Kind::kIpv4, "127.0.0.1"},
           {"017700000001", Kind::kIpv4, "127.0.0.1"},
           {"0x7f.1", Kind::kIpv4, "127.0.0.1"},
           {"0x7F.0X0.0x0.0x1", Kind::kIpv4, "127.0.0.1"},
           {"0177.0.0.1", Kind::kIpv4, "127.0.0.1"},
           {"0177.1", Kind::kIpv4, "127.0.0.1"},
           {"00000000000000000000177.0.0.01", Kind::kIpv4, "127.0.0.1"},
           {"127.000.000.001", Kind::kIpv4, "127.0.0.1"},
           {"4294967295", Kind::kIpv4, "255.255.255.255"},
           {"0xffffffff", Kind::kIpv4, "255.255.255.255"},
           {"037777777777", Kind::kIpv4, "255.255.255.255"},
           {"192.168.257", Kind::kIpv4, "192.168.1.1"},   // last part fills two bytes
           {"192.11010049", Kind::kIpv4, "192.168.0.1"},  // ... or three
           {"1.0x10.0", Kind::kIpv4, "1.16.0.0"},
           {"169.254.43518", Kind::kIpv4, "169.254.169.254"},
           {"0xa9fea9fe", Kind::kIpv4, "169.254.169.254"},
           {"255.255.255.255", Kind::kIpv4, "255.255.255.255"},
       }) {
    Result<Host> h = CanonicalizeHost(c.raw);
    ASSERT_TRUE(h.has_value()) << c.raw << ": " << h.error().message();
    EXPECT_EQ(h->kind, c.kind) << c.raw;
    EXPECT_EQ(h->text, c.text) << c.raw;
    EXPECT_EQ(h->address, ParseIpv4(c.text).value()) << c.raw;
  }
}

TEST(HostTest, CanonicalizesIpv6) {
  for (const Good& c : std::vector<Good>{
           {"[::1]", Kind::kIpv6, "::1"},
           {"::1", Kind::kIpv6, "::1"},
           {"[0:0:0:0:0:0:0:1]", Kind::kIpv6, "::1"},
           {"[::]", Kind::kIpv6, "::"},
           {"::", Kind::kIpv6, "::"},
           {"[2001:DB8::1]", Kind::kIpv6, "2001:db8::1"},
           {"[2001:0db8:0000:0000:0000:0000:0000:0001]", Kind::kIpv6, "2001:db8::1"},
           {"[2001:db8:0:0:1:0:0:1]", Kind::kIpv6, "2001:db8::1:0:0:1"},  // first run on a tie
           {"[2001:0:0:1:0:0:0:1]", Kind::kIpv6, "2001:0:0:1::1"},        // longest run
           {"[1:0:2:3:4:5:6:7]", Kind::kIpv6, "1:0:2:3:4:5:6:7"},         // one zero stays
           {"[1:0:0:0:0:0:0:0]", Kind::kIpv6, "1::"},
           {"[1:2:3:4:5:6:7:8]", Kind::kIpv6, "1:2:3:4:5:6:7:8"},
           {"[FE80::ABCD]", Kind::kIpv6, "fe80::abcd"},
           // IPv4-compatible, translated, NAT64 and 6to4 stay IPv6, without mixed notation.
           {"[::7f00:1]", Kind::kIpv6, "::7f00:1"},
           {"[::127.0.0.1]", Kind::kIpv6, "::7f00:1"},
           {"[::ffff:0:7f00:1]", Kind::kIpv6, "::ffff:0:7f00:1"},
           {"[64:ff9b::127.0.0.1]", Kind::kIpv6, "64:ff9b::7f00:1"},
           {"[2002:7f00:1::1]", Kind::kIpv6, "2002:7f00:1::1"},
           // IPv4-mapped becomes the IPv4 address.
           {"[::ffff:127.0.0.1]", Kind::kIpv4, "127.0.0.1"},
           {"::ffff:127.0.0.1", Kind::kIpv4, "127.0.0.1"},
           {"[::FFFF:7F00:1]", Kind::kIpv4, "127.0.0.1"},
           {"[0:0:0:0:0:ffff:169.254.169.254]", Kind::kIpv4, "169.254.169.254"},
           {"[::ffff:0.0.0.0]", Kind::kIpv4, "0.0.0.0"},
       }) {
    Result<Host> h = CanonicalizeHost(c.raw);
    ASSERT_TRUE(h.has_value()) << c.raw << ": " << h.error().message();
    EXPECT_EQ(h->kind, c.kind) << c.raw;
    EXPECT_EQ(h->text, c.text) << c.raw;
    EXPECT_EQ(FormatHostAddress(h->address), c.text) << c.raw;
  }
}

TEST(HostTest, AcceptsUpTo255Characters) {
  std::string name;
  while (name.size() < 251) {
    name += "abcdefghi.";
  }
  name.resize(251);
  name += ".com";  // 255
  ASSERT_EQ(name.size(), 255u);
  Result<Host> h = CanonicalizeHost(name);
  // 251 characters of "abcdefghi." end in "a" and the next is ".": no empty label.
  ASSERT_TRUE(h.has_value()) << h.error().message();
  EXPECT_EQ(h->text, name);
}

struct Bad {
  std::string raw;
  std::string why;  // the message after "malformed host: '<raw>' "
};

TEST(HostTest, RejectsMalformedHostsWithExactMessages) {
  const std::string long_name = std::string(252, 'a') + ".com";  // 256
  for (const Bad& c : std::vector<Bad>{
           {"", "is empty"},
           {"%65xample.com", "contains '%' (no zone ids or percent-encoding)"},
           {"example.com%00", "contains '%' (no zone ids or percent-encoding)"},
           {"[fe80::1%25eth0]", "contains '%' (no zone ids or percent-encoding)"},
           {"fe80::1%eth0", "contains '%' (no zone ids or percent-encoding)"},
           {"exa mple.com", "contains a control character or space"},
           {" example.com", "contains a control character or space"},
           {"example.com\r\nX-Injected: 1", "contains a control character or space"},
           {"\texample.com", "contains a control character or space"},
           {std::string("a\0b.com", 7), "contains a control character or space"},
           {"example.com\x7f", "contains a control character or space"},
           {"b\xc3\xbc"
            "cher.example",
            "contains a non-ASCII character (use the xn-- form)"},
           {"exa!mple.com", "contains a character outside [A-Za-z0-9._-]"},
           {"example.com/", "contains a character outside [A-Za-z0-9._-]"},
           {"user@example.com", "contains a character outside [A-Za-z0-9._-]"},
           {"*.example.com", "contains a character outside [A-Za-z0-9._-]"},
           {"a]b", "contains a character outside [A-Za-z0-9._-]"},
           {".example.com", "has an empty label"},
           {"example..com", "has an empty label"},
           {".", "has an empty label"},
           {"..", "has an empty label"},
           {"example.com..", "has an empty label"},
           {"1..2", "has an empty label"},
           {"256.0.0.1", "is an IPv4 address out of range"},
           {"1.2.3.256", "is an IPv4 address out of range"},
           {"4294967296", "is an IPv4 address out of range"},
           {"0x100000000", "is an IPv4 address out of range"},
           {"040000000000", "is an IPv4 address out of range"},
           {"1.2.65536", "is an IPv4 address out of range"},
           {"1.16777216", "is an IPv4 address out of range"},
           {"99999999999999999999999999999", "is an IPv4 address out of range"},
           {"0x7f.0x100.0.1", "is an IPv4 address out of range"},
           {"1.2.3.4.5", "ends in a number but is not an IPv4 address"},
           {"foo.1", "ends in a number but is not an IPv4 address"},
           {"foo.0x10", "ends in a number but is not an IPv4 address"},
           {"example.123", "ends in a number but is not an IPv4 address"},
           {"1.2.3.09", "ends in a number but is not an IPv4 address"},  // 9 is not octal
           {"0x7g.1", "ends in a number but is not an IPv4 address"},
           {"[::1", "is not a valid bracketed IPv6 address"},
           {"[]", "is not a valid bracketed IPv6 address"},
           {"[", "is not a valid bracketed IPv6 address"},
           {"[::1]:80", "is not a valid bracketed IPv6 address"},
           {"[example.com]", "is not a valid IPv6 address"},
           {"[1.2.3.4]", "is not a valid IPv6 address"},
           {":::", "is not a valid IPv6 address"},
           {"1:2", "is not a valid IPv6 address"},
           {"example.com:443", "is not a valid IPv6 address"},
           {"::1.", "is not a valid IPv6 address"},
           {"[::1.2.3.4.5]", "is not a valid IPv6 address"},
           {"[12345::1]", "is not a valid IPv6 address"},
       }) {
    Result<Host> h = CanonicalizeHost(c.raw);
    ASSERT_FALSE(h.has_value()) << c.raw << " -> " << h->text;
    EXPECT_EQ(h.error().code(), Errc::kDenied) << c.raw;
    EXPECT_EQ(h.error().message().rfind("malformed host: '", 0), 0u) << h.error().message();
    EXPECT_TRUE(h.error().message().ends_with("' " + c.why)) << h.error().message();
  }
  Result<Host> too_long = CanonicalizeHost(long_name);
  ASSERT_FALSE(too_long.has_value());
  EXPECT_EQ(too_long.error().message(),
            "malformed host: '" + long_name.substr(0, 64) + "'... is longer than 255 characters");
}

TEST(HostTest, ErrorMessagesEscapeControlCharacters) {
  Result<Host> h = CanonicalizeHost("a\r\nb");
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error().message(),
            "malformed host: 'a\\x0d\\x0ab' contains a control character or space");
}

TEST(HostTest, CanonicalFormIsAFixedPoint) {
  for (const char* raw : {"EXAMPLE.com.", "0x7f.1", "[::FFFF:7F00:1]", "[2001:DB8::1]",
                          "[::7f00:1]", "2130706433", "LOCALHOST."}) {
    Result<Host> h = CanonicalizeHost(raw);
    ASSERT_TRUE(h.has_value()) << raw;
    const std::string again = h->kind == Kind::kIpv6 ? "[" + h->text + "]" : h->text;
    Result<Host> h2 = CanonicalizeHost(again);
    ASSERT_TRUE(h2.has_value()) << again;
    EXPECT_EQ(*h2, *h) << raw;
  }
}

TEST(HostTest, HostFromAddressUnmaps) {
  Host h = HostFromAddress(ParseIpv6("::ffff:10.0.0.1").value());
  EXPECT_EQ(h.kind, Kind::kIpv4);
  EXPECT_EQ(h.text, "10.0.0.1");
  Host h6 = HostFromAddress(ParseIpv6("2001:db8::1").value());
  EXPECT_EQ(h6.kind, Kind::kIpv6);
  EXPECT_EQ(h6.text, "2001:db8::1");
  EXPECT_EQ(UnmapIpv4(ParseIpv6("::7f00:1").value()), ParseIpv6("::7f00:1").value());
}

TEST(HostTest, FormatsAuthorities) {
  EXPECT_EQ(FormatAuthority(CanonicalizeHost("Example.com.").value(), 443), "example.com:443");
  EXPECT_EQ(FormatAuthority(CanonicalizeHost("127.1").value(), 80), "127.0.0.1:80");
  EXPECT_EQ(FormatAuthority(CanonicalizeHost("::1").value(), 8080), "[::1]:8080");
}

TEST(HostTest, RecognisesLocalhostNames) {
  for (const char* yes : {"localhost", "LOCALHOST.", "app.localhost", "a.b.localhost"}) {
    EXPECT_TRUE(IsLocalhostName(CanonicalizeHost(yes).value())) << yes;
  }
  for (const char* no :
       {"notlocalhost", "localhost.example.com", "127.0.0.1", "::1", "localhost-x", "xlocalhost"}) {
    EXPECT_FALSE(IsLocalhostName(CanonicalizeHost(no).value())) << no;
  }
}

}  // namespace
}  // namespace srt
