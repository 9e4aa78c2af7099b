// SPDX-License-Identifier: Apache-2.0
// NoProxy: Go httpproxy NO_PROXY semantics over canonical hosts; loopback always bypasses.
#include "filter/no_proxy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace srt::proxy {
namespace {

struct Case {
  std::string list;
  std::string host;  // raw, canonicalised by the test
  uint16_t port;
  bool bypass;
};

TEST(NoProxyTest, DecisionTable) {
  const std::vector<Case> cases = {
      // Loopback always bypasses, even with an empty list.
      {"", "example.com", 443, false},
      {"", "localhost", 443, true},
      {"", "LOCALHOST.", 443, true},
      {"", "app.localhost", 443, true},
      {"", "127.0.0.1", 443, true},
      {"", "127.5.5.5", 80, true},
      {"", "127.1", 80, true},
      {"", "::1", 443, true},
      {"", "[::ffff:127.0.0.1]", 443, true},
      {"", "localhost.example.com", 443, false},
      {"", "::7f00:1", 443, false},  // IPv4-compatible is not loopback
      // `*`.
      {"*", "example.com", 443, true},
      {"*", "10.0.0.1", 1, true},
      {"a.com,*", "b.com", 443, true},
      // A name matches itself and its subdomains.
      {"example.com", "example.com", 443, true},
      {"example.com", "www.example.com", 443, true},
      {"example.com", "a.b.example.com", 443, true},
      {"example.com", "notexample.com", 443, false},
      {"example.com", "example.org", 443, false},
      {"example.com", "com", 443, false},
      {"EXAMPLE.COM", "example.com", 443, true},
      {"example.com.", "www.example.com", 443, true},
      // A leading dot (or `*.`) means subdomains only.
      {".example.com", "example.com", 443, false},
      {".example.com", "www.example.com", 443, true},
      {"*.example.com", "example.com", 443, false},
      {"*.example.com", "www.example.com", 443, true},
      // host:port.
      {"example.com:8080", "example.com", 8080, true},
      {"example.com:8080", "example.com", 443, false},
      {"example.com:8080", "www.example.com", 8080, true},
      {".example.com:8080", "www.example.com", 8080, true},
      // IP literals and CIDRs match addresses, on any port unless one is given.
      {"192.168.1.10", "192.168.1.10", 443, true},
      {"192.168.1.10", "192.168.1.11", 443, false},
      {"192.168.1.10", "3232235786", 443, true},  // canonical host of the same address
      {"192.168.1.10:80", "192.168.1.10", 80, true},
      {"192.168.1.10:80", "192.168.1.10", 443, false},
      {"10.0.0.0/8", "10.1.2.3", 443, true},
      {"10.0.0.0/8", "11.0.0.1", 443, false},
      {"10.0.0.0/8", "10.example", 443, false},
      {"fc00::/7", "[fd00::1]", 443, true},
      {"fc00::/7", "[2001:db8::1]", 443, false},
      {"2001:db8::2", "[2001:db8::2]", 8080, true},
      {"[2001:db8::1]:443", "[2001:db8::1]", 443, true},
      {"[2001:db8::1]:443", "[2001:db8::1]", 80, false},
      {"::ffff:10.0.0.1", "10.0.0.1", 443, true},
      {"::ffff:10.0.0.0/104", "10.9.9.9", 443, true},
      // Names match names and addresses match addresses (Go would match "2.3" as a suffix of
      // the text "10.1.2.3").
      {"2.3", "10.1.2.3", 443, false},
      {"example.com", "93.184.216.34", 443, false},
      // Separators: commas and/or whitespace.
      {"a.com, b.com c.com\t.d.com\n,,", "b.com", 443, true},
      {"a.com, b.com c.com\t.d.com\n,,", "c.com", 443, true},
      {"a.com, b.com c.com\t.d.com\n,,", "x.d.com", 443, true},
      {"a.com, b.com c.com\t.d.com\n,,", "d.com", 443, false},
      // Entries that mean nothing are skipped, not fatal.
      {"example.com:abc,:80,[::1,10.0.0.0/33,example.com:0,example.com:,[]:1", "example.com", 443,
       false},
      {"example.com:abc,:80,[::1,10.0.0.0/33,good.com", "good.com", 443, true},
  };
  for (const Case& c : cases) {
    NoProxy np = NoProxy::Parse(c.list);
    Result<Host> host = CanonicalizeHost(c.host);
    ASSERT_TRUE(host.has_value()) << c.host;
    EXPECT_EQ(np.Bypass(*host, c.port), c.bypass)
        << "'" << c.list << "' " << c.host << ":" << c.port;
  }
}

}  // namespace
}  // namespace srt::proxy
