// SPDX-License-Identifier: Apache-2.0
// AddressGuard: every refusal class in IPv4, IPv6 and each embedded-IPv4 form, this host's
// addresses, deniedResolvedAddresses, carve-outs, deny-listed literals, the localhost rule and
// the refusal text.
#include "filter/address_guard.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "support/network_policy_for.h"

namespace srt::proxy {
namespace {

using Strings = std::vector<std::string>;

IpAddress Ip(const std::string& text) {
  std::optional<IpAddress> a = ParseIpAddress(text);
  EXPECT_TRUE(a.has_value()) << text;
  return a.value_or(IpAddress{});
}

std::vector<IpAddress> Ips(const Strings& texts) {
  std::vector<IpAddress> out;
  for (const std::string& t : texts) {
    out.push_back(Ip(t));
  }
  return out;
}

std::vector<IpNetwork> Nets(const Strings& texts) {
  std::vector<IpNetwork> out;
  for (const std::string& t : texts) {
    Result<IpNetwork> n = ParseIpNetwork(t);
    EXPECT_TRUE(n.has_value()) << t;
    out.push_back(n.has_value() ? *n : IpNetwork{});
  }
  return out;
}

// This host's interface addresses as the guard sees them in these tests.
const Strings kOwn = {"192.168.7.23", "2001:db8:7::23", "127.0.0.1", "::1"};

const std::string kLoop(kLoopbackClass);
const std::string kUnspec(kUnspecifiedClass);
const std::string kLink(kLinkLocalClass);
const std::string kMulti(kMulticastClass);
const std::string kBcast(kBroadcastClass);
const std::string kMeta(kCloudMetadataClass);
const std::string kOwnCls(kOwnAddressClass);
const std::string kListed(kListedClass);
const std::string kDenyListed(kDenyListedClass);
const std::string kNonLoop(kNonLoopbackClass);

TEST(AddressGuardTest, ClassifiesEveryClassInEveryForm) {
  AddressGuard guard(Ips(kOwn), Nets({"10.0.0.0/8", "fc00::/7"}));
  // {address, class} with "" for "may be dialed".
  const std::vector<std::pair<std::string, std::string>> cases = {
      // IPv4.
      {"127.0.0.1", kLoop},
      {"127.255.255.254", kLoop},
      {"0.0.0.0", kUnspec},
      {"0.1.2.3", kUnspec},
      {"169.254.1.1", kLink},
      {"169.254.169.254", kLink},  // the metadata endpoint is link-local first
      {"224.0.0.1", kMulti},
      {"239.255.255.250", kMulti},
      {"255.255.255.255", kBcast},
      {"100.100.100.200", kMeta},
      {"168.63.129.16", kMeta},
      {"192.0.0.192", kMeta},
      {"192.168.7.23", kOwnCls},
      {"10.1.2.3", kListed},
      {"192.0.2.10", ""},
      {"198.51.100.1", ""},
      {"172.16.0.1", ""},
      {"192.168.1.1", ""},
      {"100.64.0.1", ""},
      {"192.0.0.8", ""},
      {"255.255.255.254", ""},
      {"192.168.7.24", ""},
      // IPv6.
      {"::1", kLoop},
      {"::", kUnspec},
      {"fe80::1", kLink},
      {"febf::1", kLink},
      {"fec0::1", ""},
      {"ff02::1", kMulti},
      {"ff05::2", kMulti},
      {"fd00:ec2::254", kMeta},
      {"fd00:ec2::23", kMeta},
      {"fd20:ce::254", kMeta},
      {"fd00:c1::a9fe:a9fe", kMeta},
      {"fd00:42::42", kMeta},
      {"fd00:a9fe:a9fe::1", kMeta},
      {"fd00:100::100:200", kMeta},
      {"2001:db8:7::23", kOwnCls},
      {"fd12:3456::1", kListed},
      {"2001:db8::1", ""},
      // IPv4-mapped: judged as the IPv4 address.
      {"::ffff:127.0.0.1", kLoop},
      {"::ffff:0.0.0.0", kUnspec},
      {"::ffff:169.254.169.254", kLink},
      {"::ffff:224.0.0.1", kMulti},
      {"::ffff:255.255.255.255", kBcast},
      {"::ffff:100.100.100.200", kMeta},
      {"::ffff:192.168.7.23", kOwnCls},
      {"::ffff:10.1.2.3", kListed},
      {"::ffff:192.0.2.10", ""},
      // IPv4-compatible ::a.b.c.d.
      {"::7f00:1", kLoop},
      {"::0.0.0.2", kUnspec},
      {"::a9fe:a9fe", kLink},
      {"::e000:1", kMulti},
      {"::ffff:ffff", kBcast},
      {"::a83f:8110", kMeta},
      {"::c0a8:717", kOwnCls},
      {"::a00:5", kListed},
      {"::c000:20a", ""},
      // IPv4-translated ::ffff:0:a.b.c.d.
      {"::ffff:0:7f00:1", kLoop},
      {"::ffff:0:a9fe:a9fe", kLink},
      {"::ffff:0:c000:20a", ""},
      // NAT64 64:ff9b::/96.
      {"64:ff9b::7f00:1", kLoop},
      {"64:ff9b::1", kUnspec},
      {"64:ff9b::a9fe:a9fe", kLink},
      {"64:ff9b::e000:1", kMulti},
      {"64:ff9b::ffff:ffff", kBcast},
      {"64:ff9b::6464:64c8", kMeta},
      {"64:ff9b::c0a8:717", kOwnCls},
      {"64:ff9b::a00:5", kListed},
      {"64:ff9b::c000:20a", ""},
      // 6to4 2002:V4ADDR::/48.
      {"2002:7f00:1::1", kLoop},
      {"2002::", kUnspec},
      {"2002:a9fe:a9fe::1", kLink},
      {"2002:e000:1::", kMulti},
      {"2002:ffff:ffff::", kBcast},
      {"2002:a83f:8110::", kMeta},
      {"2002:c0a8:717:1::2", kOwnCls},
      {"2002:a00:5::1", kListed},
      {"2002:c000:20a::1", ""},
      // Not an embedding form: judged as IPv6 only.
      {"64:ff9b:1::7f00:1", ""},  // NAT64 local-use prefix: not decoded
      {"64:ff9b:0:1::7f00:1", ""},
      {"2001:db8::7f00:1", ""},
      {"fe80::7f00:1", kLink},
  };
  for (const auto& [text, expected] : cases) {
    std::optional<std::string_view> got = guard.Classify(Ip(text));
    EXPECT_EQ(std::string(got.value_or("")), expected) << text;
  }
}

TEST(AddressGuardTest, ExtractsEmbeddedIpv4) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"::7f00:1", "127.0.0.1"},
      {"::169.254.169.254", "169.254.169.254"},
      {"::0.0.0.2", "0.0.0.2"},
      {"::ffff:0:a9fe:a9fe", "169.254.169.254"},
      {"64:ff9b::7f00:1", "127.0.0.1"},
      {"64:ff9b::8.8.8.8", "8.8.8.8"},
      {"2002:c0a8:717::1", "192.168.7.23"},
      {"2002:7f00:1:5::9", "127.0.0.1"},
      {"::", ""},
      {"::1", ""},
      {"::ffff:127.0.0.1", ""},  // mapped: UnmapIpv4's business
      {"64:ff9b:1::a00:5", ""},
      {"64:ff9b:1:0:5d:b8d8:7f00:0", ""},
      {"64:ff9b:0:1::7f00:1", ""},
      {"2001:db8::7f00:1", ""},
      {"fe80::7f00:1", ""},
      {"127.0.0.1", ""},
  };
  for (const auto& [text, expected] : cases) {
    std::optional<IpAddress> v4 = EmbeddedIpv4(Ip(text));
    EXPECT_EQ(v4 ? FormatIpAddress(*v4) : "", expected) << text;
  }
}

TEST(AddressGuardTest, ListedNetworksCoverMappedSpellings) {
  AddressGuard guard({}, Nets({"::ffff:10.0.0.0/104", "::ffff:192.0.2.1"}));
  EXPECT_EQ(guard.Classify(Ip("10.9.9.9")), kListedClass);
  EXPECT_EQ(guard.Classify(Ip("::ffff:10.9.9.9")), kListedClass);
  EXPECT_EQ(guard.Classify(Ip("192.0.2.1")), kListedClass);
  EXPECT_EQ(guard.Classify(Ip("192.0.2.2")), std::nullopt);
  EXPECT_EQ(guard.Classify(Ip("11.0.0.1")), std::nullopt);

  // An IPv6 network over the mapped range also binds a mapped answer spelled as IPv6.
  AddressGuard all_v6({}, Nets({"::/0"}));
  EXPECT_EQ(all_v6.Classify(Ip("::ffff:192.0.2.1")), kListedClass);
  EXPECT_EQ(all_v6.Classify(Ip("2001:db8::1")), kListedClass);
  EXPECT_EQ(all_v6.Classify(Ip("192.0.2.1")), std::nullopt);

  // Own addresses given in mapped form bind the IPv4 address.
  AddressGuard own(Ips({"::ffff:10.9.8.7"}), {});
  EXPECT_EQ(own.Classify(Ip("10.9.8.7")), kOwnAddressClass);
  EXPECT_EQ(own.Classify(Ip("64:ff9b::a09:807")), kOwnAddressClass);
}

struct VetCase {
  std::string name;  // for the failure message
  Strings allow;
  Strings deny;
  Strings listed;  // deniedResolvedAddresses
  Strings resolved;
  uint16_t port;
  bool localhost;
  Strings dialable;
  std::string refusal;
};

TEST(AddressGuardTest, VetsResolvedAddresses) {
  const std::vector<VetCase> cases = {
      {"rebind", {"*.example.com"}, {}, {}, {"127.0.0.1"}, 443, false, {}, "resolved to " + kLoop},
      {"both loopbacks", {}, {}, {}, {"127.0.0.1", "::1"}, 443, false, {}, "resolved to " + kLoop},
      {"metadata",
       {},
       {},
       {},
       {"169.254.169.254", "fd20:ce::254"},
       443,
       false,
       {},
       "resolved to " + kLink + " / " + kMeta},
      {"mixed keeps survivors in order",
       {},
       {},
       {},
       {"169.254.169.254", "2001:db8::5", "192.0.2.10"},
       443,
       false,
       {"2001:db8::5", "192.0.2.10"},
       ""},
      {"duplicates and mapped twins",
       {},
       {},
       {},
       {"192.0.2.10", "::ffff:192.0.2.10", "192.0.2.10"},
       443,
       false,
       {"192.0.2.10"},
       ""},
      {"lan", {}, {}, {}, {"192.168.7.23"}, 443, false, {}, "resolved to " + kOwnCls},
      {"listed", {}, {}, {"10.0.0.0/8"}, {"10.1.2.3"}, 443, false, {}, "resolved to " + kListed},
      {"private passes by default",
       {},
       {},
       {},
       {"10.1.2.3", "fd00::1"},
       443,
       false,
       {"10.1.2.3", "fd00::1"},
       ""},
      {"deny-listed literal on its port",
       {},
       {"192.0.2.5:22"},
       {"10.0.0.0/8"},
       {"192.0.2.5"},
       22,
       false,
       {},
       "resolved to " + kDenyListed},
      {"deny-listed literal, other port",
       {},
       {"192.0.2.5:22"},
       {},
       {"192.0.2.5"},
       443,
       false,
       {"192.0.2.5"},
       ""},
      {"deny-listed carried form",
       {},
       {"10.0.0.5"},
       {},
       {"64:ff9b::a00:5"},
       443,
       false,
       {},
       "resolved to " + kDenyListed},
      {"deny-listed mapped entry",
       {},
       {"[::ffff:10.0.0.2]"},
       {},
       {"::ffff:10.0.0.2"},
       443,
       false,
       {},
       "resolved to " + kDenyListed},
      {"empty answer is not a refusal", {}, {}, {}, {}, 443, false, {}, ""},
      // Carve-outs: an allow-listed literal wins over the built-in, own and listed sets.
      {"carve-out",
       {"127.0.0.1", "[::1]:3000"},
       {},
       {},
       {"127.0.0.1"},
       443,
       false,
       {"127.0.0.1"},
       ""},
      {"carve-out is exact",
       {"127.0.0.1"},
       {},
       {},
       {"127.0.0.2"},
       443,
       false,
       {},
       "resolved to " + kLoop},
      {"carve-out on its port", {"[::1]:3000"}, {}, {}, {"::1"}, 3000, false, {"::1"}, ""},
      {"carve-out not on other ports",
       {"[::1]:3000"},
       {},
       {},
       {"::1"},
       443,
       false,
       {},
       "resolved to " + kLoop},
      {"mapped carve-out",
       {"[::ffff:127.0.0.1]:3000"},
       {},
       {},
       {"::ffff:127.0.0.1"},
       3000,
       false,
       {"127.0.0.1"},
       ""},
      {"mapped carve-out other port",
       {"[::ffff:127.0.0.1]:3000"},
       {},
       {},
       {"127.0.0.1"},
       3001,
       false,
       {},
       "resolved to " + kLoop},
      {"carve-out beats listed",
       {"10.0.0.9"},
       {},
       {"10.0.0.0/8"},
       {"10.0.0.9"},
       443,
       false,
       {"10.0.0.9"},
       ""},
      {"carve-out beats own",
       {"192.168.7.23"},
       {},
       {},
       {"192.168.7.23"},
       443,
       false,
       {"192.168.7.23"},
       ""},
      {"carried form inherits no carve-out",
       {"10.0.0.9"},
       {},
       {"10.0.0.0/8"},
       {"64:ff9b::a00:9"},
       443,
       false,
       {},
       "resolved to " + kListed},
      {"::1 does not ride a 0.0.0.1 carve-out",
       {"0.0.0.1:3000", "127.0.0.1:3000"},
       {},
       {},
       {"::1"},
       3000,
       false,
       {},
       "resolved to " + kLoop},
      {"0.0.0.1 carve-out", {"0.0.0.1:3000"}, {}, {}, {"0.0.0.1"}, 3000, false, {"0.0.0.1"}, ""},
      {"deny-listed beats carve-out",
       {"127.0.0.1:3000"},
       {"127.0.0.1"},
       {},
       {"127.0.0.1"},
       3000,
       false,
       {},
       "resolved to " + kDenyListed},
      {"`*:port` voids a carve-out",
       {"127.0.0.1"},
       {"*:25"},
       {},
       {"127.0.0.1"},
       25,
       false,
       {},
       "resolved to " + kLoop},
      // Localhost names: loopback only, then deny-listed literals, then listed networks.
      {"localhost v4", {"localhost"}, {}, {}, {"127.0.0.1"}, 443, true, {"127.0.0.1"}, ""},
      {"localhost v6", {"localhost"}, {}, {}, {"::1"}, 443, true, {"::1"}, ""},
      {"localhost mapped",
       {"localhost"},
       {},
       {},
       {"::ffff:127.0.0.1"},
       443,
       true,
       {"127.0.0.1"},
       ""},
      {"localhost 127/8", {}, {}, {}, {"127.0.0.53"}, 443, true, {"127.0.0.53"}, ""},
      {"localhost to metadata",
       {},
       {},
       {},
       {"169.254.169.254"},
       443,
       true,
       {},
       "resolved to " + kNonLoop},
      {"app.localhost to public",
       {},
       {},
       {},
       {"192.0.2.9"},
       443,
       true,
       {},
       "resolved to " + kNonLoop},
      {"localhost to NAT64 loopback",
       {},
       {},
       {},
       {"64:ff9b::7f00:1"},
       443,
       true,
       {},
       "resolved to " + kNonLoop},
      {"localhost to a carved-out public address",
       {"192.0.2.9"},
       {},
       {},
       {"192.0.2.9"},
       443,
       true,
       {},
       "resolved to " + kNonLoop},
      {"localhost mixed", {}, {}, {}, {"10.0.0.5", "127.0.0.1"}, 443, true, {"127.0.0.1"}, ""},
      {"localhost deny-listed port",
       {"localhost"},
       {"127.0.0.1:6379", "[::1]:6379"},
       {},
       {"127.0.0.1", "::1"},
       6379,
       true,
       {},
       "resolved to " + kDenyListed},
      {"localhost other port",
       {"localhost"},
       {"127.0.0.1:6379"},
       {},
       {"127.0.0.1"},
       8080,
       true,
       {"127.0.0.1"},
       ""},
      {"localhost listed",
       {},
       {},
       {"127.0.0.0/8"},
       {"127.0.0.1"},
       443,
       true,
       {},
       "resolved to " + kListed},
      {"localhost listed but carved out",
       {"127.0.0.1"},
       {},
       {"127.0.0.0/8"},
       {"127.0.0.1"},
       443,
       true,
       {"127.0.0.1"},
       ""},
      // Every class at once, distinct, in first-seen order.
      {"every class",
       {},
       {"192.0.2.5"},
       {"10.0.0.0/8"},
       {"127.0.0.1", "169.254.169.254", "224.0.0.1", "::1", "255.255.255.255", "0.0.0.0",
        "100.100.100.200", "192.168.7.23", "10.1.2.3", "192.0.2.5", "fe80::1"},
       443,
       false,
       {},
       "resolved to " + kLoop + " / " + kLink + " / " + kMulti + " / " + kBcast + " / " + kUnspec +
           " / " + kMeta + " / " + kOwnCls + " / " + kListed + " / " + kDenyListed},
  };
  for (const VetCase& c : cases) {
    Result<DomainMatcher> m = srt::testing::DomainMatcherFor(c.allow, c.deny, {});
    ASSERT_TRUE(m.has_value()) << c.name << ": " << m.error().message();
    AddressGuard guard(Ips(kOwn), Nets(c.listed));
    AddressGuard::Vetted v = guard.Vet(Ips(c.resolved), *m, c.port, c.localhost);
    Strings dialable;
    for (const IpAddress& a : v.dialable) {
      dialable.push_back(FormatIpAddress(a));
    }
    EXPECT_EQ(dialable, c.dialable) << c.name;
    EXPECT_EQ(v.refusal, c.refusal) << c.name;
  }
}

}  // namespace
}  // namespace srt::proxy
