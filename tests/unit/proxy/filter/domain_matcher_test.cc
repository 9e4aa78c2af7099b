// SPDX-License-Identifier: Apache-2.0
// DomainMatcher: upstream srt's decision table (deny first, then allow, else deny), port scoping,
// wildcards vs apex, IP entries, reasons and their sanitisation, and a 10,000-entry list.
#include "filter/domain_matcher.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "support/network_policy_for.h"

namespace srt::proxy {
namespace {

using Strings = std::vector<std::string>;
using Reasons = std::map<std::string, std::string>;

const std::string kDeny(kDenyListReason);
const std::string kNotAllowed(kNotAllowedReason);
const std::string kMalformed(kMalformedHost);

struct Case {
  Strings allow;
  Strings deny;
  Reasons reasons;
  std::string host;
  uint16_t port;
  bool allowed;
  std::string reason;   // "" when allowed
  std::string matched;  // the entry that decided, as written
};

DomainMatcher MustBuild(const Strings& allow, const Strings& deny, const Reasons& reasons = {}) {
  Result<DomainMatcher> m = srt::testing::DomainMatcherFor(allow, deny, reasons);
  EXPECT_TRUE(m.has_value()) << m.error().message();
  return std::move(m).value();
}

std::string Describe(const Case& c) {
  std::string out = c.host + ":" + std::to_string(c.port) + " allow={";
  for (const std::string& a : c.allow) out += a + ",";
  out += "} deny={";
  for (const std::string& d : c.deny) out += d + ",";
  return out + "}";
}

TEST(DomainMatcherTest, DecisionTable) {
  const std::vector<Case> cases = {
      // Exact names, case and the trailing dot.
      {{"example.com"}, {}, {}, "example.com", 443, true, "", "example.com"},
      {{"example.com"}, {}, {}, "EXAMPLE.COM.", 443, true, "", "example.com"},
      {{"Example.COM"}, {}, {}, "example.com", 443, true, "", "Example.COM"},
      {{"example.com"}, {}, {}, "www.example.com", 443, false, kNotAllowed, ""},
      {{"example.com"}, {}, {}, "example.co", 443, false, kNotAllowed, ""},
      {{"example.com"}, {}, {}, "notexample.com", 443, false, kNotAllowed, ""},
      {{}, {}, {}, "example.com", 443, false, kNotAllowed, ""},
      {{"localhost"}, {}, {}, "LOCALHOST.", 80, true, "", "localhost"},
      {{"xn--bcher-kva.example"},
       {},
       {},
       "XN--BCHER-KVA.EXAMPLE",
       443,
       true,
       "",
       "xn--bcher-kva.example"},
      // Wildcards: strict subdomains, never the apex, never a look-alike.
      {{"*.example.com"}, {}, {}, "www.example.com", 443, true, "", "*.example.com"},
      {{"*.example.com"}, {}, {}, "a.b.example.com", 443, true, "", "*.example.com"},
      {{"*.example.com"}, {}, {}, "WWW.Example.Com.", 443, true, "", "*.example.com"},
      {{"*.example.com"}, {}, {}, "example.com", 443, false, kNotAllowed, ""},
      {{"*.example.com"}, {}, {}, "wwwexample.com", 443, false, kNotAllowed, ""},
      {{"*.example.com"}, {}, {}, "www.example.com.evil.net", 443, false, kNotAllowed, ""},
      {{"*.example.com"}, {}, {}, "com", 443, false, kNotAllowed, ""},
      {{"*.co.uk"}, {}, {}, "bbc.co.uk", 443, true, "", "*.co.uk"},
      {{"*.co.uk"}, {}, {}, "co.uk", 443, false, kNotAllowed, ""},
      {{"example.com", "*.example.com"}, {}, {}, "example.com", 443, true, "", "example.com"},
      {{"example.com", "*.example.com"}, {}, {}, "x.example.com", 443, true, "", "*.example.com"},
      // A wildcard never matches an IP literal, even one that "ends" in its base (and one
      // whose base is numeric is refused: see ThePolicySideRejects... below).
      {{"*.0.1.example"}, {}, {}, "127.0.1.example", 443, true, "", "*.0.1.example"},
      {{"*.1.example"}, {}, {}, "127.0.0.1", 443, false, kNotAllowed, ""},
      // Port scoping: an entry with a port matches that port only; without, every port.
      {{"example.com:443"}, {}, {}, "example.com", 443, true, "", "example.com:443"},
      {{"example.com:443"}, {}, {}, "example.com", 80, false, kNotAllowed, ""},
      {{"example.com:443"}, {}, {}, "example.com", 22, false, kNotAllowed, ""},
      {{"example.com"}, {}, {}, "example.com", 22, true, "", "example.com"},
      {{"example.com:8443", "example.com"}, {}, {}, "example.com", 1, true, "", "example.com"},
      {{"example.com:8443", "example.com"},
       {},
       {},
       "example.com",
       8443,
       true,
       "",
       "example.com:8443"},
      {{"*.example.com:443"}, {}, {}, "a.example.com", 443, true, "", "*.example.com:443"},
      {{"*.example.com:443"}, {}, {}, "a.example.com", 22, false, kNotAllowed, ""},
      // Deny first.
      {{"*.example.com"},
       {"evil.example.com"},
       {},
       "evil.example.com",
       443,
       false,
       kDeny,
       "evil.example.com"},
      {{"*.example.com"},
       {"evil.example.com"},
       {},
       "good.example.com",
       443,
       true,
       "",
       "*.example.com"},
      {{"*.example.com"},
       {"evil.example.com"},
       {},
       "a.evil.example.com",
       443,
       true,
       "",
       "*.example.com"},
      {{"example.com"}, {"example.com"}, {}, "example.com", 443, false, kDeny, "example.com"},
      {{"example.com"}, {"*.example.com"}, {}, "example.com", 443, true, "", "example.com"},
      {{"example.com"},
       {"*.example.com"},
       {},
       "www.example.com",
       443,
       false,
       kDeny,
       "*.example.com"},
      // `*` and `*:port` (deniedDomains only).
      {{"example.com"}, {"*"}, {}, "example.com", 443, false, kDeny, "*"},
      {{"127.0.0.1"}, {"*"}, {}, "127.0.0.1", 443, false, kDeny, "*"},
      {{"example.com"}, {"*:22"}, {}, "example.com", 22, false, kDeny, "*:22"},
      {{"example.com"}, {"*:22"}, {}, "example.com", 443, true, "", "example.com"},
      {{"[::1]"}, {"*:22"}, {}, "::1", 22, false, kDeny, "*:22"},
      {{"example.com"}, {"example.com:22"}, {}, "example.com", 22, false, kDeny, "example.com:22"},
      {{"example.com"}, {"example.com:22"}, {}, "example.com", 443, true, "", "example.com"},
      {{"*.example.com"},
       {"*.example.com:25"},
       {},
       "smtp.example.com",
       25,
       false,
       kDeny,
       "*.example.com:25"},
      // IPv4 entries match the canonical address of any spelling.
      {{"127.0.0.1"}, {}, {}, "127.0.0.1", 80, true, "", "127.0.0.1"},
      {{"127.0.0.1"}, {}, {}, "127.1", 80, true, "", "127.0.0.1"},
      {{"127.0.0.1"}, {}, {}, "2130706433", 80, true, "", "127.0.0.1"},
      {{"127.0.0.1"}, {}, {}, "0x7f.1", 80, true, "", "127.0.0.1"},
      {{"127.0.0.1"}, {}, {}, "0177.0.0.1", 80, true, "", "127.0.0.1"},
      {{"127.0.0.1"}, {}, {}, "[::ffff:127.0.0.1]", 80, true, "", "127.0.0.1"},
      {{"127.0.0.1"}, {}, {}, "[::7f00:1]", 80, false, kNotAllowed, ""},  // compatible != v4
      {{"127.0.0.1"}, {}, {}, "127.0.0.2", 80, false, kNotAllowed, ""},
      {{"127.0.0.1:3000"}, {}, {}, "127.1", 3000, true, "", "127.0.0.1:3000"},
      {{"127.0.0.1:3000"}, {}, {}, "127.1", 3001, false, kNotAllowed, ""},
      // IPv6 entries.
      {{"[::1]"}, {}, {}, "[::1]", 443, true, "", "[::1]"},
      {{"[::1]"}, {}, {}, "::1", 443, true, "", "[::1]"},
      {{"[::1]"}, {}, {}, "[0:0:0:0:0:0:0:1]", 443, true, "", "[::1]"},
      {{"[::1]:8080"}, {}, {}, "[::1]", 8080, true, "", "[::1]:8080"},
      {{"[::1]:8080"}, {}, {}, "[::1]", 80, false, kNotAllowed, ""},
      {{"[2001:DB8::1]:443"}, {}, {}, "[2001:db8:0::1]", 443, true, "", "[2001:DB8::1]:443"},
      {{"[::ffff:10.0.0.1]"}, {}, {}, "10.0.0.1", 443, true, "", "[::ffff:10.0.0.1]"},
      {{"[::ffff:10.0.0.1]"}, {}, {}, "[::ffff:a00:1]", 443, true, "", "[::ffff:10.0.0.1]"},
      {{"[::7f00:1]"}, {}, {}, "[::127.0.0.1]", 443, true, "", "[::7f00:1]"},
      {{"[::7f00:1]"}, {}, {}, "127.0.0.1", 443, false, kNotAllowed, ""},
      {{}, {"[::ffff:10.0.0.2]"}, {}, "10.0.0.2", 443, false, kDeny, "[::ffff:10.0.0.2]"},
      // IP vs name: an address entry never stands for a name; localhost's entry covers its own
      // two addresses (LocalhostCoversTheAddressesItResolvesTo), where upstream's does not.
      {{"127.0.0.1"}, {}, {}, "localhost", 80, false, kNotAllowed, ""},
      {{"localhost"}, {}, {}, "127.0.0.1", 80, true, "", "localhost"},
      {{"localhost"}, {}, {}, "127.0.0.2", 80, false, kNotAllowed, ""},
      {{"example.com"}, {"93.184.216.34"}, {}, "example.com", 443, true, "", "example.com"},
      // A deny-listed address beats an allow-listed one; a bare deny beats a scoped allow.
      {{"10.0.0.5"}, {"10.0.0.5"}, {}, "10.0.0.5", 443, false, kDeny, "10.0.0.5"},
      {{"127.0.0.1:3000"}, {"127.0.0.1"}, {}, "127.0.0.1", 3000, false, kDeny, "127.0.0.1"},
      // Malformed hosts are refused before any list is consulted.
      {{"example.com"}, {}, {}, "exa mple.com", 443, false, kMalformed, ""},
      {{"example.com"}, {}, {}, "example.com%2f", 443, false, kMalformed, ""},
      {{"example.com"}, {}, {}, "", 443, false, kMalformed, ""},
      {{"example.com"}, {}, {}, "foo.1", 443, false, kMalformed, ""},
      // deniedDomainReasons, keyed by the exact entry; the first matching deny entry decides.
      {{"*.evil.com"},
       {"x.evil.com"},
       {{"x.evil.com", "blocked by policy"}},
       "X.EVIL.COM",
       443,
       false,
       "blocked by policy",
       "x.evil.com"},
      {{},
       {"*.example.com", "evil.example.com"},
       {{"evil.example.com", "named"}},
       "evil.example.com",
       443,
       false,
       kDeny,
       "*.example.com"},
      {{},
       {"evil.example.com", "*.example.com"},
       {{"evil.example.com", "named"}},
       "evil.example.com",
       443,
       false,
       "named",
       "evil.example.com"},
      {{},
       {"*:22", "git.example.com"},
       {{"*:22", "no ssh"}, {"git.example.com", "no git"}},
       "git.example.com",
       22,
       false,
       "no ssh",
       "*:22"},
      {{},
       {"*:22", "git.example.com"},
       {{"*:22", "no ssh"}, {"git.example.com", "no git"}},
       "git.example.com",
       443,
       false,
       "no git",
       "git.example.com"},
      {{},
       {"evil.com"},
       {{"evil.com", "<b>evil</b> caf\xc3\xa9"}},
       "evil.com",
       443,
       false,
       "bevil/b caf?",
       "evil.com"},
      {{}, {"evil.com"}, {{"evil.com", "<>"}}, "evil.com", 443, false, kDeny, "evil.com"},
  };
  for (const Case& c : cases) {
    Result<DomainMatcher> m = srt::testing::DomainMatcherFor(c.allow, c.deny, c.reasons);
    ASSERT_TRUE(m.has_value()) << Describe(c) << ": " << m.error().message();
    Decision d = m->Evaluate(std::string_view(c.host), c.port);
    EXPECT_EQ(d.allowed, c.allowed) << Describe(c);
    EXPECT_EQ(d.reason, c.reason) << Describe(c);
    EXPECT_EQ(d.matched_entry, c.matched) << Describe(c);
  }
}

TEST(DomainMatcherTest, EvaluateOnACanonicalHostAgreesWithTheRawOverload) {
  DomainMatcher m = MustBuild({"*.example.com", "10.0.0.1:443"}, {"bad.example.com"});
  for (const char* raw : {"a.example.com", "bad.example.com", "10.0.0.1", "167772161", "x.org"}) {
    for (uint16_t port : {uint16_t{80}, uint16_t{443}}) {
      Decision a = m.Evaluate(std::string_view(raw), port);
      Decision b = m.Evaluate(CanonicalizeHost(raw).value(), port);
      EXPECT_EQ(a.allowed, b.allowed) << raw;
      EXPECT_EQ(a.reason, b.reason) << raw;
      EXPECT_EQ(a.matched_entry, b.matched_entry) << raw;
    }
  }
}

TEST(DomainMatcherTest, SanitizesReasonsAsUpstream) {
  EXPECT_EQ(SanitizeDenyReason("plain reason"), "plain reason");
  EXPECT_EQ(SanitizeDenyReason("a\r\nb\tc"), "a  b c");
  EXPECT_EQ(SanitizeDenyReason(std::string("a\0b", 3)), "a b");
  EXPECT_EQ(SanitizeDenyReason("del\x7f"), "del ");
  EXPECT_EQ(SanitizeDenyReason("<script>alert(1)</script>"), "scriptalert(1)/script");
  EXPECT_EQ(SanitizeDenyReason("caf\xc3\xa9"), "caf?");              // U+00E9
  EXPECT_EQ(SanitizeDenyReason("\xe2\x80\x94 dash"), "? dash");      // U+2014
  EXPECT_EQ(SanitizeDenyReason("\xf0\x9f\x98\x80."), "??.");         // U+1F600: a JS pair
  EXPECT_EQ(SanitizeDenyReason("\xff\xfe"), "??");                   // not UTF-8
  EXPECT_EQ(SanitizeDenyReason("\xc3"), "?");                        // truncated
  EXPECT_EQ(SanitizeDenyReason("\xe0\x80\x80"), "???");              // overlong
  EXPECT_EQ(SanitizeDenyReason("\xed\xa0\x80"), "???");              // a surrogate
  EXPECT_EQ(SanitizeDenyReason("\xc2\x85next line"), "?next line");  // C1 control: non-ASCII
}

TEST(DomainMatcherTest, ThePolicySideRejectsWhatSettingsValidationRejects) {
  Result<DomainMatcher> broad = srt::testing::DomainMatcherFor({"*.com"}, {}, {});
  ASSERT_FALSE(broad.has_value());
  EXPECT_EQ(broad.error().code(), Errc::kInvalidArgument);
  EXPECT_TRUE(broad.error().message().starts_with(
      "network.allowedDomains: '*.com' is too broad: a wildcard needs at least two labels"))
      << broad.error().message();

  Result<DomainMatcher> star = srt::testing::DomainMatcherFor({"*"}, {}, {});
  ASSERT_FALSE(star.has_value());
  EXPECT_TRUE(star.error().message().starts_with("network.allowedDomains: '*' is too broad"))
      << star.error().message();

  Result<DomainMatcher> bad_deny = srt::testing::DomainMatcherFor({}, {"http://x.com"}, {});
  ASSERT_FALSE(bad_deny.has_value());
  EXPECT_TRUE(bad_deny.error().message().starts_with("network.deniedDomains: 'http://x.com'"))
      << bad_deny.error().message();

  Result<DomainMatcher> reason = srt::testing::DomainMatcherFor({}, {"a.com"}, {{"b.com", "why"}});
  ASSERT_FALSE(reason.has_value());
  EXPECT_EQ(reason.error().message(),
            "network.deniedDomainReasons: 'b.com' is not an entry of deniedDomains (a reason is "
            "keyed by the exact entry)");

  // An entry that no request can match would read as a rule and do nothing (upstream accepts
  // it): a space, a numeric last label, a name not in punycode, a wildcard over an address.
  for (const auto& [entry, why] : std::vector<std::pair<std::string, std::string>>{
           {"ex ample.com", "contains ' ', which no host name has"},
           {"foo.1", "is neither an IPv4 address"},
           {"1.2.3", "is neither an IPv4 address"},
           // inet_aton spellings: an address is written as four numbers in an entry.
           {"127.1", "is neither an IPv4 address"},
           {"0x7f.1", "is neither an IPv4 address"},
           {"*.0.0.1", "is neither an IPv4 address"},
           {"b\xc3\xbc"
            "cher.de",
            "is not ASCII"},
           {"a..b.com", "has an empty label"},
           {"-a.com", "starts or ends with '-'"}}) {
    Result<DomainMatcher> inert = srt::testing::DomainMatcherFor({}, {entry}, {});
    ASSERT_FALSE(inert.has_value()) << entry;
    EXPECT_NE(inert.error().message().find(why), std::string::npos) << inert.error().message();
  }
}

TEST(DomainMatcherTest, AddressCarveOutsAndDenyListedLiterals) {
  DomainMatcher m = MustBuild({"127.0.0.1:3000", "[::1]", "192.168.7.23", "*.example.com"},
                              {"127.0.0.1:6379", "10.0.0.5", "[fd00::7]:22", "*:25"});
  auto ip = [](const char* text) { return ParseIpAddress(text).value(); };
  EXPECT_TRUE(m.AddressAllowlisted(ip("127.0.0.1"), 3000));
  EXPECT_FALSE(m.AddressAllowlisted(ip("127.0.0.1"), 3001));
  EXPECT_TRUE(m.AddressAllowlisted(ip("::ffff:127.0.0.1"), 3000));
  EXPECT_FALSE(m.AddressAllowlisted(ip("127.0.0.2"), 3000));
  EXPECT_TRUE(m.AddressAllowlisted(ip("::1"), 443));
  EXPECT_FALSE(m.AddressAllowlisted(ip("::1"), 25));  // `*:25` denies every host on 25
  EXPECT_TRUE(m.AddressAllowlisted(ip("192.168.7.23"), 443));
  EXPECT_FALSE(m.AddressAllowlisted(ip("10.0.0.5"), 443));

  EXPECT_TRUE(m.AddressDenyListed(ip("127.0.0.1"), 6379));
  EXPECT_FALSE(m.AddressDenyListed(ip("127.0.0.1"), 3000));
  EXPECT_TRUE(m.AddressDenyListed(ip("10.0.0.5"), 1));
  EXPECT_TRUE(m.AddressDenyListed(ip("::ffff:10.0.0.5"), 1));
  EXPECT_TRUE(m.AddressDenyListed(ip("fd00::7"), 22));
  EXPECT_FALSE(m.AddressDenyListed(ip("fd00::7"), 443));
  EXPECT_FALSE(m.AddressDenyListed(ip("192.0.2.1"), 25));  // `*` entries are not literals

  // On some port (the DNS stub, which knows no port, shows no deny-listed address).
  EXPECT_TRUE(m.AddressDenyListedOnSomePort(ip("127.0.0.1")));
  EXPECT_TRUE(m.AddressDenyListedOnSomePort(ip("::ffff:10.0.0.5")));
  EXPECT_TRUE(m.AddressDenyListedOnSomePort(ip("fd00::7")));
  EXPECT_FALSE(m.AddressDenyListedOnSomePort(ip("192.168.7.23")));
  EXPECT_FALSE(m.AddressDenyListedOnSomePort(ip("192.0.2.1")));
}

// Clients dial `localhost` by its addresses (curl and Node connect to 127.0.0.1 or ::1 and
// say so; capture sees only the address): an entry for localhost covers exactly those two, on
// its ports, on both sides of the list. Other loopback addresses are not localhost's.
TEST(DomainMatcherTest, LocalhostCoversTheAddressesItResolvesTo) {
  DomainMatcher m = MustBuild({"localhost:8765"}, {});
  EXPECT_TRUE(m.Evaluate("127.0.0.1", 8765).allowed);
  EXPECT_EQ(m.Evaluate("127.0.0.1", 8765).matched_entry, "localhost:8765");
  EXPECT_TRUE(m.Evaluate("[::1]", 8765).allowed);
  EXPECT_TRUE(m.Evaluate("[::ffff:127.0.0.1]", 8765).allowed);
  EXPECT_FALSE(m.Evaluate("127.0.0.1", 8766).allowed);
  EXPECT_FALSE(m.Evaluate("127.0.0.2", 8765).allowed);
  EXPECT_FALSE(m.Evaluate("10.0.0.1", 8765).allowed);
  DomainMatcher d = MustBuild({"127.0.0.1", "[::1]"}, {"localhost:6379"});
  EXPECT_FALSE(d.Evaluate("127.0.0.1", 6379).allowed);
  EXPECT_EQ(d.Evaluate("127.0.0.1", 6379).reason, kDenyListReason);
  EXPECT_FALSE(d.Evaluate("[::1]", 6379).allowed);
  EXPECT_TRUE(d.Evaluate("127.0.0.1", 8080).allowed);
}

TEST(DomainMatcherTest, CapturePortsAre80And443PlusEveryAllowedPort) {
  EXPECT_EQ(MustBuild({}, {}).CapturePorts(), (std::vector<uint16_t>{80, 443}));
  EXPECT_EQ(
      MustBuild({"a.com:8443", "b.com:22", "c.com", "[::1]:8443", "*.d.com:80", "10.0.0.1:5432"},
                {"*:9999", "e.com:7000"})
          .CapturePorts(),
      (std::vector<uint16_t>{22, 80, 443, 5432, 8443}));
}

TEST(DomainMatcherTest, NameMayResolve) {
  DomainMatcher m = MustBuild({"example.com:22", "*.example.org", "10.0.0.1", "localhost"},
                              {"bad.example.org", "*.evil.example.org:443", "*.worse.example.org"});
  EXPECT_TRUE(m.NameMayResolve("example.com"));  // on port 22 only, but that is some port
  EXPECT_TRUE(m.NameMayResolve("EXAMPLE.COM."));
  EXPECT_FALSE(m.NameMayResolve("www.example.com"));
  EXPECT_TRUE(m.NameMayResolve("a.example.org"));
  EXPECT_TRUE(m.NameMayResolve("a.b.example.org"));
  EXPECT_FALSE(m.NameMayResolve("example.org"));
  EXPECT_FALSE(m.NameMayResolve("bad.example.org"));
  EXPECT_TRUE(m.NameMayResolve("x.bad.example.org"));
  EXPECT_TRUE(m.NameMayResolve("x.evil.example.org"));  // denied on 443 only
  EXPECT_FALSE(m.NameMayResolve("x.worse.example.org"));
  EXPECT_TRUE(m.NameMayResolve("localhost"));
  EXPECT_FALSE(m.NameMayResolve("10.0.0.1"));  // an address is not a name
  EXPECT_FALSE(m.NameMayResolve(""));
  EXPECT_FALSE(m.NameMayResolve("a b.example.org"));

  EXPECT_FALSE(MustBuild({"example.com"}, {"*"}).NameMayResolve("example.com"));
  EXPECT_TRUE(MustBuild({"example.com"}, {"*:443"}).NameMayResolve("example.com"));
}

// 10,000 entries of each kind: every entry still matches, and a decision takes the same number
// of hash probes as with a one-entry list (a constant per label of the host, not per entry).
TEST(DomainMatcherTest, LargeListsAreHashLookups) {
  constexpr int kN = 10000;
  Strings allow;
  Strings deny;
  for (int i = 0; i < kN; ++i) {
    const std::string n = std::to_string(i);
    allow.push_back("host" + n + ".example" + std::to_string(i % 100) + ".com");
    allow.push_back("*.w" + n + ".example.net");
    allow.push_back("10." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ".1:443");
    deny.push_back("d" + n + ".example.net");
  }
  DomainMatcher big = MustBuild(allow, deny);
  DomainMatcher tiny = MustBuild({"host1.example1.com"}, {"d1.example.net"});

  for (int i = 0; i < kN; i += 97) {
    const std::string n = std::to_string(i);
    const std::string exact = "host" + n + ".example" + std::to_string(i % 100) + ".com";
    EXPECT_TRUE(big.Evaluate(std::string_view(exact), 443).allowed) << exact;
    const std::string sub = "a.b.w" + n + ".example.net";
    EXPECT_TRUE(big.Evaluate(std::string_view(sub), 443).allowed) << sub;
    EXPECT_FALSE(big.Evaluate(std::string_view("w" + n + ".example.net"), 443).allowed);
    const std::string ip = "10." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ".1";
    EXPECT_TRUE(big.Evaluate(std::string_view(ip), 443).allowed) << ip;
    EXPECT_FALSE(big.Evaluate(std::string_view(ip), 80).allowed) << ip;
    Decision d = big.Evaluate(std::string_view("d" + n + ".example.net"), 443);
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.reason, kDeny);
  }
  EXPECT_FALSE(big.Evaluate(std::string_view("host1.example2.com"), 443).allowed);

  for (const char* host : {"host1.example1.com", "a.b.c.d.e.f.g.example.net", "nowhere.org",
                           "10.0.0.1", "d1.example.net"}) {
    const Decision b = big.Evaluate(std::string_view(host), 443);
    const Decision t = tiny.Evaluate(std::string_view(host), 443);
    EXPECT_EQ(b.probes, t.probes) << host;
  }
  // Probes: per list, one for the exact name and one per proper suffix (one per dot); an IP
  // literal is one probe per list. Denied hosts stop after the deny list.
  EXPECT_EQ(big.Evaluate(std::string_view("nowhere.org"), 443).probes, 2u * (1 + 1));
  EXPECT_EQ(big.Evaluate(std::string_view("a.b.c.d.e.f.g.example.net"), 443).probes, 2u * (1 + 8));
  EXPECT_EQ(big.Evaluate(std::string_view("10.0.0.1"), 443).probes, 2u);
  EXPECT_EQ(big.Evaluate(std::string_view("d1.example.net"), 443).probes, 1u + 2);
  EXPECT_TRUE(big.NameMayResolve("x.w9999.example.net"));
  EXPECT_FALSE(big.NameMayResolve("d9999.example.net"));
}

}  // namespace
}  // namespace srt::proxy
