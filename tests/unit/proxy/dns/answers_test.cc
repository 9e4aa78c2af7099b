// SPDX-License-Identifier: Apache-2.0
#include "dns/answers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/address.h"

namespace srt::proxy {
namespace {

IpAddress Ip(const std::string& text) {
  std::optional<IpAddress> ip = ParseIpAddress(text);
  EXPECT_TRUE(ip.has_value()) << text;
  return ip.value_or(IpAddress{});
}

using Names = std::vector<std::string>;

std::string Text(const std::optional<IpAddress>& ip) {
  return ip ? FormatIpAddress(*ip) : "(none)";
}

TEST(DnsAnswersTest, PoolIsRfc2544BenchmarkingSpace) {
  const IpNetwork pool = SyntheticPool();
  EXPECT_EQ(FormatIpAddress(pool.address), "198.18.0.0");
  EXPECT_EQ(pool.prefix_length, 15);
}

TEST(DnsAnswersTest, HandsOutAddressesInOrderFromDotOne) {
  DnsAnswers table;
  EXPECT_EQ(Text(table.SyntheticFor("a.example.com")), "198.18.0.1");
  EXPECT_EQ(Text(table.SyntheticFor("b.example.com")), "198.18.0.2");
  EXPECT_EQ(Text(table.SyntheticFor("c.example.com")), "198.18.0.3");
  EXPECT_EQ(table.size(), 3u);
}

TEST(DnsAnswersTest, ANameKeepsItsAddress) {
  DnsAnswers table;
  const auto first = table.SyntheticFor("example.com");
  (void)table.SyntheticFor("other.example");
  EXPECT_EQ(table.SyntheticFor("example.com"), first);
  EXPECT_EQ(table.size(), 2u);
}

TEST(DnsAnswersTest, NamesAreTakenByteForByte) {
  // The stub passes canonical names; the table does not canonicalise again.
  DnsAnswers table;
  EXPECT_NE(table.SyntheticFor("example.com"), table.SyntheticFor("example.com."));
}

TEST(DnsAnswersTest, NameForHandedOutAddresses) {
  DnsAnswers table;
  const auto a = table.SyntheticFor("a.test");
  const auto b = table.SyntheticFor("b.test");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(table.NamesFor(*a), Names{"a.test"});
  EXPECT_EQ(table.NamesFor(*b), Names{"b.test"});
}

TEST(DnsAnswersTest, NameForAnythingElseIsNothing) {
  DnsAnswers table;
  (void)table.SyntheticFor("a.test");
  EXPECT_EQ(table.NamesFor(Ip("198.18.0.0")), Names{});  // never handed out
  EXPECT_EQ(table.NamesFor(Ip("198.18.0.2")), Names{});  // not yet handed out
  EXPECT_EQ(table.NamesFor(Ip("198.19.255.255")), Names{});
  EXPECT_EQ(table.NamesFor(Ip("10.0.0.1")), Names{});           // outside the pool
  EXPECT_EQ(table.NamesFor(Ip("::ffff:198.18.0.1")), Names{});  // the caller unmaps
  EXPECT_EQ(table.NamesFor(Ip("2001:db8::1")), Names{});
}

TEST(DnsAnswersTest, InPoolCoversTheWholeSlash15) {
  EXPECT_TRUE(DnsAnswers::InPool(Ip("198.18.0.0")));
  EXPECT_TRUE(DnsAnswers::InPool(Ip("198.18.0.1")));
  EXPECT_TRUE(DnsAnswers::InPool(Ip("198.19.255.255")));
  EXPECT_FALSE(DnsAnswers::InPool(Ip("198.17.255.255")));
  EXPECT_FALSE(DnsAnswers::InPool(Ip("198.20.0.0")));
  EXPECT_FALSE(DnsAnswers::InPool(Ip("::ffff:198.18.0.1")));
  EXPECT_FALSE(DnsAnswers::InPool(Ip("::")));
}

TEST(DnsAnswersTest, FullTableGivesNoNewAddressButKeepsOldOnes) {
  DnsAnswers table(2);
  EXPECT_EQ(Text(table.SyntheticFor("a.test")), "198.18.0.1");
  EXPECT_EQ(Text(table.SyntheticFor("b.test")), "198.18.0.2");
  EXPECT_EQ(table.SyntheticFor("c.test"), std::nullopt);
  EXPECT_EQ(Text(table.SyntheticFor("a.test")), "198.18.0.1");
  EXPECT_EQ(table.NamesFor(Ip("198.18.0.3")), Names{});
  EXPECT_EQ(table.size(), 2u);
}

TEST(DnsAnswersTest, ZeroCapacityHandsOutNothing) {
  DnsAnswers table(0);
  EXPECT_EQ(table.SyntheticFor("a.test"), std::nullopt);
}

TEST(DnsAnswersTest, CapacityIsCappedByThePool) {
  DnsAnswers table(SIZE_MAX);
  std::optional<IpAddress> last;
  for (size_t i = 0; i < DnsAnswers::kMaxCapacity; ++i) {
    last = table.SyntheticFor("n" + std::to_string(i) + ".test");
    ASSERT_TRUE(last) << i;
  }
  EXPECT_EQ(Text(last), "198.19.255.254");
  EXPECT_EQ(table.NamesFor(*last),
            Names{"n" + std::to_string(DnsAnswers::kMaxCapacity - 1) + ".test"});
  EXPECT_EQ(table.SyntheticFor("one-too-many.test"), std::nullopt);
  EXPECT_TRUE(DnsAnswers::InPool(*last));
}

TEST(DnsAnswersTest, ARealAddressStandsForEveryNameItWasShownFor) {
  DnsAnswers table;
  EXPECT_TRUE(table.RecordReal("a.cdn.test", Ip("93.184.216.34")));
  EXPECT_TRUE(table.RecordReal("b.cdn.test", Ip("93.184.216.34")));
  EXPECT_TRUE(table.RecordReal("a.cdn.test", Ip("93.184.216.35")));
  EXPECT_TRUE(table.RecordReal("a.cdn.test", Ip("93.184.216.34")));  // again: nothing new
  EXPECT_EQ(table.NamesFor(Ip("93.184.216.34")), (Names{"a.cdn.test", "b.cdn.test"}));
  EXPECT_EQ(table.NamesFor(Ip("93.184.216.35")), Names{"a.cdn.test"});
  EXPECT_EQ(table.NamesFor(Ip("93.184.216.36")), Names{});
  EXPECT_EQ(table.NamesFor(Ip("::ffff:93.184.216.34")), Names{});  // the caller unmaps
  EXPECT_EQ(table.size(), 2u);
  // A name with real answers may still get a synthetic one (no address to show, later), and
  // keeps both.
  const auto synthetic = table.SyntheticFor("a.cdn.test");
  ASSERT_TRUE(synthetic);
  EXPECT_EQ(table.NamesFor(*synthetic), Names{"a.cdn.test"});
  EXPECT_EQ(table.NamesFor(Ip("93.184.216.35")), Names{"a.cdn.test"});
  EXPECT_EQ(table.size(), 2u);
}

TEST(DnsAnswersTest, NoRealAnswerInThePoolOrOutsideIpv4) {
  DnsAnswers table;
  EXPECT_FALSE(table.RecordReal("a.test", Ip("198.18.0.1")));
  EXPECT_FALSE(table.RecordReal("a.test", Ip("198.19.3.4")));
  EXPECT_FALSE(table.RecordReal("a.test", Ip("2001:db8::1")));
  EXPECT_EQ(table.NamesFor(Ip("198.18.0.1")), Names{});
  EXPECT_EQ(table.size(), 0u);
}

TEST(DnsAnswersTest, RealAnswersStopAtEachLimitWithoutChangingTheTable) {
  DnsAnswers table(3);
  EXPECT_TRUE(table.RecordReal("a.test", Ip("203.0.113.1")));
  EXPECT_TRUE(table.RecordReal("b.test", Ip("203.0.113.1")));
  EXPECT_TRUE(table.SyntheticFor("c.test"));
  // Three names: a fourth gets nothing, neither real nor synthetic.
  EXPECT_FALSE(table.RecordReal("d.test", Ip("203.0.113.1")));
  EXPECT_FALSE(table.SyntheticFor("d.test"));
  EXPECT_EQ(table.NamesFor(Ip("203.0.113.1")), (Names{"a.test", "b.test"}));
  EXPECT_EQ(table.size(), 3u);

  DnsAnswers per_name;
  for (size_t i = 0; i < DnsAnswers::kMaxAddressesPerName; ++i) {
    IpAddress ip = Ip("10.0.0.0");
    ip.bytes[2] = static_cast<uint8_t>(i >> 8);
    ip.bytes[3] = static_cast<uint8_t>(i);
    ASSERT_TRUE(per_name.RecordReal("round-robin.test", ip)) << i;
  }
  EXPECT_FALSE(per_name.RecordReal("round-robin.test", Ip("10.1.0.0")));
  EXPECT_EQ(per_name.NamesFor(Ip("10.1.0.0")), Names{});

  DnsAnswers per_address;
  for (size_t i = 0; i < DnsAnswers::kMaxNamesPerAddress; ++i) {
    ASSERT_TRUE(per_address.RecordReal("n" + std::to_string(i) + ".test", Ip("10.0.0.1"))) << i;
  }
  EXPECT_FALSE(per_address.RecordReal("one-more.test", Ip("10.0.0.1")));
  EXPECT_EQ(per_address.NamesFor(Ip("10.0.0.1")).size(), DnsAnswers::kMaxNamesPerAddress);
  EXPECT_EQ(per_address.size(), DnsAnswers::kMaxNamesPerAddress);  // the refused name not added
}

}  // namespace
}  // namespace srt::proxy
