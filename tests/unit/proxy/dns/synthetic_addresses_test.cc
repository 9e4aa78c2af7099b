// SPDX-License-Identifier: Apache-2.0
#include "dns/synthetic_addresses.h"

#include <gtest/gtest.h>

#include <string>

#include "base/address.h"

namespace srt::proxy {
namespace {

IpAddress Ip(const std::string& text) {
  std::optional<IpAddress> ip = ParseIpAddress(text);
  EXPECT_TRUE(ip.has_value()) << text;
  return ip.value_or(IpAddress{});
}

std::string Text(const std::optional<IpAddress>& ip) {
  return ip ? FormatIpAddress(*ip) : "(none)";
}

TEST(SyntheticAddressesTest, PoolIsRfc2544BenchmarkingSpace) {
  const IpNetwork pool = SyntheticPool();
  EXPECT_EQ(FormatIpAddress(pool.address), "198.18.0.0");
  EXPECT_EQ(pool.prefix_length, 15);
}

TEST(SyntheticAddressesTest, HandsOutAddressesInOrderFromDotOne) {
  SyntheticAddresses table;
  EXPECT_EQ(Text(table.AddressFor("a.example.com")), "198.18.0.1");
  EXPECT_EQ(Text(table.AddressFor("b.example.com")), "198.18.0.2");
  EXPECT_EQ(Text(table.AddressFor("c.example.com")), "198.18.0.3");
  EXPECT_EQ(table.size(), 3u);
}

TEST(SyntheticAddressesTest, ANameKeepsItsAddress) {
  SyntheticAddresses table;
  const auto first = table.AddressFor("example.com");
  (void)table.AddressFor("other.example");
  EXPECT_EQ(table.AddressFor("example.com"), first);
  EXPECT_EQ(table.size(), 2u);
}

TEST(SyntheticAddressesTest, NamesAreTakenByteForByte) {
  // The stub passes canonical names; the table does not canonicalise again.
  SyntheticAddresses table;
  EXPECT_NE(table.AddressFor("example.com"), table.AddressFor("example.com."));
}

TEST(SyntheticAddressesTest, NameForHandedOutAddresses) {
  SyntheticAddresses table;
  const auto a = table.AddressFor("a.test");
  const auto b = table.AddressFor("b.test");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(table.NameFor(*a), "a.test");
  EXPECT_EQ(table.NameFor(*b), "b.test");
}

TEST(SyntheticAddressesTest, NameForAnythingElseIsNothing) {
  SyntheticAddresses table;
  (void)table.AddressFor("a.test");
  EXPECT_EQ(table.NameFor(Ip("198.18.0.0")), std::nullopt);  // never handed out
  EXPECT_EQ(table.NameFor(Ip("198.18.0.2")), std::nullopt);  // not yet handed out
  EXPECT_EQ(table.NameFor(Ip("198.19.255.255")), std::nullopt);
  EXPECT_EQ(table.NameFor(Ip("10.0.0.1")), std::nullopt);           // outside the pool
  EXPECT_EQ(table.NameFor(Ip("::ffff:198.18.0.1")), std::nullopt);  // the caller unmaps
  EXPECT_EQ(table.NameFor(Ip("2001:db8::1")), std::nullopt);
}

TEST(SyntheticAddressesTest, InPoolCoversTheWholeSlash15) {
  EXPECT_TRUE(SyntheticAddresses::InPool(Ip("198.18.0.0")));
  EXPECT_TRUE(SyntheticAddresses::InPool(Ip("198.18.0.1")));
  EXPECT_TRUE(SyntheticAddresses::InPool(Ip("198.19.255.255")));
  EXPECT_FALSE(SyntheticAddresses::InPool(Ip("198.17.255.255")));
  EXPECT_FALSE(SyntheticAddresses::InPool(Ip("198.20.0.0")));
  EXPECT_FALSE(SyntheticAddresses::InPool(Ip("::ffff:198.18.0.1")));
  EXPECT_FALSE(SyntheticAddresses::InPool(Ip("::")));
}

TEST(SyntheticAddressesTest, FullTableGivesNoNewAddressButKeepsOldOnes) {
  SyntheticAddresses table(2);
  EXPECT_EQ(Text(table.AddressFor("a.test")), "198.18.0.1");
  EXPECT_EQ(Text(table.AddressFor("b.test")), "198.18.0.2");
  EXPECT_EQ(table.AddressFor("c.test"), std::nullopt);
  EXPECT_EQ(Text(table.AddressFor("a.test")), "198.18.0.1");
  EXPECT_EQ(table.NameFor(Ip("198.18.0.3")), std::nullopt);
  EXPECT_EQ(table.size(), 2u);
}

TEST(SyntheticAddressesTest, ZeroCapacityHandsOutNothing) {
  SyntheticAddresses table(0);
  EXPECT_EQ(table.AddressFor("a.test"), std::nullopt);
}

TEST(SyntheticAddressesTest, CapacityIsCappedByThePool) {
  SyntheticAddresses table(SIZE_MAX);
  std::optional<IpAddress> last;
  for (size_t i = 0; i < SyntheticAddresses::kMaxCapacity; ++i) {
    last = table.AddressFor("n" + std::to_string(i) + ".test");
    ASSERT_TRUE(last) << i;
  }
  EXPECT_EQ(Text(last), "198.19.255.254");
  EXPECT_EQ(table.NameFor(*last),
            "n" + std::to_string(SyntheticAddresses::kMaxCapacity - 1) + ".test");
  EXPECT_EQ(table.AddressFor("one-too-many.test"), std::nullopt);
  EXPECT_TRUE(SyntheticAddresses::InPool(*last));
}

}  // namespace
}  // namespace srt::proxy
