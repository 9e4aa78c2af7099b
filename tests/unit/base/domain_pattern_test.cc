// SPDX-License-Identifier: Apache-2.0
#include "base/domain_pattern.h"

#include <gtest/gtest.h>

#include <string>

namespace srt {
namespace {

using Kind = DomainPattern::Kind;

// Upstream srt's message text, written out independently of the implementation.
const std::string kGrammar =
    "Invalid domain pattern. Must be a valid domain (e.g., \"example.com\"), a wildcard (e.g., "
    "\"*.example.com\"), or a bracketed IPv6 literal (e.g., \"[::1]\", \"[2001:db8::1]:443\"). "
    "Overly broad patterns like \"*.com\" or \"*\" are not allowed for security reasons.";
const std::string kAllowTail =
    " An optional \":port\" suffix (1-65535) restricts the entry to that port.";
const std::string kDenyTail =
    " In deniedDomains a bare \"*\" (deny-all) is also accepted, and an optional \":port\" "
    "suffix (1-65535) restricts the entry to that port.";

struct AcceptCase {
  std::string text;
  PatternList list;
  Kind kind;
  std::string host;
  std::optional<uint16_t> port;
};

class DomainPatternAcceptTest : public testing::TestWithParam<AcceptCase> {};

TEST_P(DomainPatternAcceptTest, Parses) {
  const AcceptCase& c = GetParam();
  Result<DomainPattern> p = ParseDomainPattern(c.text, c.list);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->kind, c.kind);
  EXPECT_EQ(p->host, c.host);
  EXPECT_EQ(p->port, c.port);
  // The canonical spelling parses back to the same pattern.
  Result<DomainPattern> again = ParseDomainPattern(FormatDomainPattern(*p), c.list);
  ASSERT_TRUE(again.has_value()) << again.error().message();
  EXPECT_EQ(*again, *p);
}

constexpr PatternList kAllow = PatternList::kAllow;
constexpr PatternList kDeny = PatternList::kDeny;

INSTANTIATE_TEST_SUITE_P(
    Grammar, DomainPatternAcceptTest,
    testing::Values(
        AcceptCase{"example.com", kAllow, Kind::kExact, "example.com", std::nullopt},
        AcceptCase{"Example.COM", kAllow, Kind::kExact, "example.com", std::nullopt},
        AcceptCase{"a.b.example.com", kAllow, Kind::kExact, "a.b.example.com", std::nullopt},
        AcceptCase{"example.com:443", kAllow, Kind::kExact, "example.com", 443},
        AcceptCase{"example.com:1", kAllow, Kind::kExact, "example.com", 1},
        AcceptCase{"example.com:65535", kAllow, Kind::kExact, "example.com", 65535},
        AcceptCase{"localhost", kAllow, Kind::kExact, "localhost", std::nullopt},
        AcceptCase{"LOCALHOST:8080", kAllow, Kind::kExact, "localhost", 8080},
        AcceptCase{"*.example.com", kAllow, Kind::kWildcard, "example.com", std::nullopt},
        AcceptCase{"*.co.uk", kAllow, Kind::kWildcard, "co.uk", std::nullopt},
        AcceptCase{"*.Example.Com:8443", kAllow, Kind::kWildcard, "example.com", 8443},
        AcceptCase{"10.0.0.1", kAllow, Kind::kIpv4, "10.0.0.1", std::nullopt},
        AcceptCase{"127.0.0.1:3000", kAllow, Kind::kIpv4, "127.0.0.1", 3000},
        AcceptCase{"[::1]", kAllow, Kind::kIpv6, "::1", std::nullopt},
        AcceptCase{"[2001:db8::1]:443", kAllow, Kind::kIpv6, "2001:db8::1", 443},
        AcceptCase{"[2001:DB8:0:0::1]", kAllow, Kind::kIpv6, "2001:db8::1", std::nullopt},
        AcceptCase{"*", kDeny, Kind::kAny, "", std::nullopt},
        AcceptCase{"*:22", kDeny, Kind::kAny, "", 22},
        AcceptCase{"*.example.com", kDeny, Kind::kWildcard, "example.com", std::nullopt},
        AcceptCase{"evil.example.com:80", kDeny, Kind::kExact, "evil.example.com", 80},
        // Underscores are in real names (_dmarc, CDN hosts), and requests may carry them.
        AcceptCase{"under_score.example", kAllow, Kind::kExact, "under_score.example",
                   std::nullopt},
        AcceptCase{"xn--bcher-kva.de", kAllow, Kind::kExact, "xn--bcher-kva.de", std::nullopt}));

struct RejectCase {
  std::string text;
  PatternList list;
  std::string reason;  // what follows the quoted value, before ". Invalid domain pattern..."
};

class DomainPatternRejectTest : public testing::TestWithParam<RejectCase> {};

TEST_P(DomainPatternRejectTest, FailsWithUpstreamText) {
  const RejectCase& c = GetParam();
  Result<DomainPattern> p = ParseDomainPattern(c.text, c.list);
  ASSERT_FALSE(p.has_value()) << FormatDomainPattern(*p);
  EXPECT_EQ(p.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(p.error().message(),
            c.reason + ". " + kGrammar + (c.list == PatternList::kAllow ? kAllowTail : kDenyTail));
}

const std::string kNotValid = "is not a valid domain pattern";
const std::string kTooBroad = "is too broad: a wildcard needs at least two labels after '*.'";
const std::string kBadPort = "has an invalid port (1-65535)";
const std::string kBadStar = "is not a valid domain pattern: '*' may only start a pattern, as '*.'";
const std::string kNumeric =
    "is neither an IPv4 address (four decimal numbers, a.b.c.d) nor a host name (whose last label "
    "is never a number)";

INSTANTIATE_TEST_SUITE_P(
    Grammar, DomainPatternRejectTest,
    testing::Values(
        RejectCase{"", kAllow, "'' " + kNotValid},
        RejectCase{"not-a-domain", kAllow, "'not-a-domain' " + kNotValid},
        RejectCase{".example.com", kAllow, "'.example.com' " + kNotValid},
        RejectCase{"example.com.", kAllow, "'example.com.' " + kNotValid},
        RejectCase{"*.com", kAllow, "'*.com' " + kTooBroad},
        RejectCase{"*.com", kDeny, "'*.com' " + kTooBroad},
        RejectCase{"*.", kAllow, "'*.' " + kTooBroad},
        RejectCase{"*..com", kAllow, "'*..com' " + kNotValid},
        RejectCase{"*.a..b", kAllow, "'*.a..b' " + kNotValid},
        RejectCase{"*.*.example.com", kAllow, "'*.*.example.com' " + kNotValid},
        RejectCase{"*example.com", kAllow, "'*example.com' " + kBadStar},
        RejectCase{"a.*.com", kAllow, "'a.*.com' " + kBadStar},
        RejectCase{"example.*", kAllow, "'example.*' " + kBadStar},
        RejectCase{"**", kDeny, "'**' " + kBadStar},
        RejectCase{"*", kAllow,
                   "'*' is too broad: '*' (every host) is accepted only in deniedDomains"},
        RejectCase{"*:443", kAllow,
                   "'*:443' is too broad: '*' (every host) is accepted only in deniedDomains"},
        RejectCase{"example.com:0", kAllow, "'example.com:0' " + kBadPort},
        RejectCase{"example.com:65536", kAllow, "'example.com:65536' " + kBadPort},
        RejectCase{"example.com:080", kAllow, "'example.com:080' " + kBadPort},
        RejectCase{"example.com:", kAllow, "'example.com:' " + kBadPort},
        RejectCase{"example.com:http", kAllow, "'example.com:http' " + kBadPort},
        RejectCase{"example.com:100000", kAllow, "'example.com:100000' " + kBadPort},
        RejectCase{"example.com:+80", kAllow, "'example.com:+80' " + kBadPort},
        RejectCase{"*:0", kDeny, "'*:0' " + kBadPort},
        RejectCase{"::1", kAllow, "'::1' is an IPv6 address without brackets: write it as '[::1]'"},
        RejectCase{"2001:db8::1", kDeny,
                   "'2001:db8::1' is an IPv6 address without brackets: write it as "
                   "'[2001:db8::1]'"},
        RejectCase{"a:b:c", kAllow, "'a:b:c' " + kNotValid},
        RejectCase{"[::1", kAllow, "'[::1' " + kNotValid},
        RejectCase{"[::1]x", kAllow, "'[::1]x' " + kNotValid},
        RejectCase{"[::1]:0", kAllow, "'[::1]:0' " + kBadPort},
        RejectCase{"[::1]:", kAllow, "'[::1]:' " + kBadPort},
        RejectCase{"[example.com]", kAllow,
                   "'[example.com]' is not a valid domain pattern: only an IPv6 address may be in "
                   "brackets"},
        RejectCase{"[10.0.0.1]", kAllow,
                   "'[10.0.0.1]' is not a valid domain pattern: only an IPv6 address may be in "
                   "brackets"},
        RejectCase{"https://example.com", kAllow,
                   "'https://example.com' is a URL, not a domain pattern: write only the host "
                   "name"},
        RejectCase{"example.com/path", kAllow,
                   "'example.com/path' contains a '/': write only the host name"},
        RejectCase{"bad\n", kAllow, "'bad\\x0a' " + kNotValid},
        // Stricter than upstream: what no request can match is refused, not kept as a rule.
        RejectCase{"bad\nname.com", kAllow,
                   "'bad\\x0aname.com' contains '\\x0a', which no host name has"},
        RejectCase{"exa mple.com", kAllow, "'exa mple.com' contains ' ', which no host name has"},
        RejectCase{"a..b.com", kDeny, "'a..b.com' has an empty label"},
        RejectCase{"-a.com", kAllow, "'-a.com' has a label that starts or ends with '-'"},
        RejectCase{"*.a-.com", kAllow, "'*.a-.com' has a label that starts or ends with '-'"},
        RejectCase{std::string(64, 'a') + ".com", kAllow,
                   "'" + std::string(64, 'a') + ".com' has a label longer than 63 characters"},
        RejectCase{"127.1", kAllow, "'127.1' " + kNumeric},
        RejectCase{"1.2.3", kDeny, "'1.2.3' " + kNumeric},
        RejectCase{"*.0.0.1", kAllow, "'*.0.0.1' " + kNumeric}));

// Upstream checks no charset: a name with a control character parses (and can never match).
// A name the way clients send it: IDNs in punycode.
TEST(DomainPatternTest, ANameNotInPunycodeIsRefusedWithTheHint) {
  Result<DomainPattern> p = ParseDomainPattern(
      "b\xc3\xbc"
      "cher.de",
      PatternList::kAllow);
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().message().find("is not ASCII: write an internationalised name as clients "
                                     "send it, in punycode (xn--...)"),
            std::string::npos)
      << p.error().message();
}

TEST(DomainPatternTest, FormatIsCanonical) {
  EXPECT_EQ(FormatDomainPattern({Kind::kAny, "", std::nullopt}), "*");
  EXPECT_EQ(FormatDomainPattern({Kind::kAny, "", 22}), "*:22");
  EXPECT_EQ(FormatDomainPattern({Kind::kWildcard, "example.com", 443}), "*.example.com:443");
  EXPECT_EQ(FormatDomainPattern({Kind::kIpv6, "::1", 8080}), "[::1]:8080");
  EXPECT_EQ(FormatDomainPattern({Kind::kIpv4, "10.0.0.1", std::nullopt}), "10.0.0.1");
}

}  // namespace
}  // namespace srt
