// SPDX-License-Identifier: Apache-2.0
#include "base/address.h"

#include <gtest/gtest.h>

#include <string>

namespace srt {
namespace {

const std::string kUpstream =
    ". Invalid IP address or CIDR range. Use an IPv4/IPv6 literal or CIDR, e.g. \"10.0.0.0/8\", "
    "\"192.168.1.10\", \"fc00::/7\" (IPv6 unbracketed).";

TEST(AddressTest, ParsesStrictLiterals) {
  std::optional<IpAddress> v4 = ParseIpv4("192.168.1.10");
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->family, IpAddress::Family::kIpv4);
  EXPECT_EQ(v4->bytes[0], 192);
  EXPECT_EQ(v4->bytes[3], 10);
  EXPECT_EQ(FormatIpAddress(*v4), "192.168.1.10");

  std::optional<IpAddress> v6 = ParseIpv6("2001:DB8:0:0:0:0:0:1");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->family, IpAddress::Family::kIpv6);
  EXPECT_EQ(FormatIpAddress(*v6), "2001:db8::1");
  EXPECT_TRUE(ParseIpv6("::ffff:10.0.0.1"));

  for (const char* bad : {"", "10.1", "0x7f.0.0.1", "010.0.0.1", "1.2.3.4.5", "256.0.0.1",
                          "1.2.3.4 ", "[::1]", "fe80::1%eth0", "::g", "1.2.3.4/8"}) {
    EXPECT_FALSE(ParseIpAddress(bad)) << bad;
  }
  EXPECT_FALSE(ParseIpAddress(std::string_view("1.2.3.4\0junk", 12)));
  EXPECT_FALSE(ParseIpv4("::1"));
  EXPECT_FALSE(ParseIpv6("10.0.0.1"));
}

TEST(AddressTest, ParsesNetworks) {
  struct Case {
    std::string text;
    IpAddress::Family family;
    int prefix;
  };
  for (const Case& c : {
           Case{"192.168.1.10", IpAddress::Family::kIpv4, 32},
           Case{"10.0.0.0/8", IpAddress::Family::kIpv4, 8},
           Case{"0.0.0.0/0", IpAddress::Family::kIpv4, 0},
           Case{"10.1.2.3/32", IpAddress::Family::kIpv4, 32},
           Case{"10.1.2.3/8", IpAddress::Family::kIpv4, 8},  // host bits are allowed
           Case{"::1", IpAddress::Family::kIpv6, 128},
           Case{"fc00::/7", IpAddress::Family::kIpv6, 7},
           Case{"::/0", IpAddress::Family::kIpv6, 0},
           Case{"2001:db8::/128", IpAddress::Family::kIpv6, 128},
       }) {
    Result<IpNetwork> n = ParseIpNetwork(c.text);
    ASSERT_TRUE(n.has_value()) << c.text << ": " << n.error().message();
    EXPECT_EQ(n->address.family, c.family) << c.text;
    EXPECT_EQ(n->prefix_length, c.prefix) << c.text;
  }
}

TEST(AddressTest, RejectsBadNetworksWithUpstreamText) {
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c : {
           Case{"", "'' is not a valid address" + kUpstream},
           Case{"example.com", "'example.com' is not a valid address" + kUpstream},
           Case{"[::1]", "'[::1]' is not a valid address" + kUpstream},
           Case{"[fc00::]/7", "'[fc00::]/7' is not a valid address" + kUpstream},
           Case{"10.0.0.0/33",
                "'10.0.0.0/33' has a prefix length out of range (0..32)" + kUpstream},
           Case{"::/129", "'::/129' has a prefix length out of range (0..128)" + kUpstream},
           Case{"10.0.0.0/", "'10.0.0.0/' has an invalid prefix length" + kUpstream},
           Case{"10.0.0.0/-1", "'10.0.0.0/-1' has an invalid prefix length" + kUpstream},
           Case{"10.0.0.0/08", "'10.0.0.0/08' has an invalid prefix length" + kUpstream},
           Case{"10.0.0.0/8/8", "'10.0.0.0/8/8' has an invalid prefix length" + kUpstream},
           Case{"10.0.0.0/1000", "'10.0.0.0/1000' has an invalid prefix length" + kUpstream},
           Case{"/8", "'/8' is not a valid address" + kUpstream},
       }) {
    Result<IpNetwork> n = ParseIpNetwork(c.text);
    ASSERT_FALSE(n.has_value()) << c.text;
    EXPECT_EQ(n.error().code(), Errc::kInvalidArgument);
    EXPECT_EQ(n.error().message(), c.message);
  }
}

TEST(AddressTest, EveryPrefixLengthInRangeIsAccepted) {
  for (int i = 0; i <= 32; ++i) {
    EXPECT_TRUE(ParseIpNetwork("10.0.0.0/" + std::to_string(i)).has_value()) << i;
  }
  for (int i = 0; i <= 128; ++i) {
    EXPECT_TRUE(ParseIpNetwork("fc00::/" + std::to_string(i)).has_value()) << i;
  }
}

TEST(AddressTest, Contains) {
  auto net = [](const char* s) { return *ParseIpNetwork(s); };
  auto ip = [](const char* s) { return *ParseIpAddress(s); };
  EXPECT_TRUE(Contains(net("10.0.0.0/8"), ip("10.255.1.2")));
  EXPECT_FALSE(Contains(net("10.0.0.0/8"), ip("11.0.0.1")));
  EXPECT_TRUE(Contains(net("10.1.2.3/8"), ip("10.9.9.9")));
  EXPECT_TRUE(Contains(net("0.0.0.0/0"), ip("8.8.8.8")));
  EXPECT_TRUE(Contains(net("192.168.1.10"), ip("192.168.1.10")));
  EXPECT_FALSE(Contains(net("192.168.1.10"), ip("192.168.1.11")));
  EXPECT_TRUE(Contains(net("172.16.0.0/12"), ip("172.31.255.255")));
  EXPECT_FALSE(Contains(net("172.16.0.0/12"), ip("172.32.0.0")));
  EXPECT_TRUE(Contains(net("fc00::/7"), ip("fdff::1")));
  EXPECT_FALSE(Contains(net("fc00::/7"), ip("fe00::1")));
  EXPECT_FALSE(Contains(net("::/0"), ip("10.0.0.1")));  // families never mix
  EXPECT_FALSE(Contains(net("0.0.0.0/0"), ip("::1")));
}

// The one grammar of "ip[:port]" (network.dnsServers and the resolver's servers).
TEST(AddressTest, ParseEndpoint) {
  auto text = [](const char* s) {
    std::optional<Endpoint> e = ParseEndpoint(s, 53);
    return e ? FormatEndpoint(*e) : std::string("none");
  };
  EXPECT_EQ(text("127.0.0.1"), "127.0.0.1:53");
  EXPECT_EQ(text("127.0.0.1:5353"), "127.0.0.1:5353");
  EXPECT_EQ(text("127.0.0.1:053"), "127.0.0.1:53");
  EXPECT_EQ(text("::1"), "[::1]:53");
  EXPECT_EQ(text("[::1]"), "[::1]:53");
  EXPECT_EQ(text("[::1]:5353"), "[::1]:5353");
  EXPECT_EQ(text("2001:db8::1"), "[2001:db8::1]:53");
  EXPECT_EQ(ParseEndpoint("10.0.0.1", 7)->port, 7);
  for (const char* bad : {"", "example.com", "1.2.3.4:0", "1.2.3.4:65536", "1.2.3.4:53x",
                          "1.2.3:53", "127.0.0.1:", "[::1", "[::1]x", "[::1]53",
                          "[::1]:", "[1.2.3.4]:53", "::1:53:", "[]", ":53"}) {
    EXPECT_FALSE(ParseEndpoint(bad, 53).has_value()) << bad;
  }
}

}  // namespace
}  // namespace srt
