// SPDX-License-Identifier: Apache-2.0
// proxy/proxy.h: what a live update (--control-fd) may change. TLS termination stays as started,
// so an update that adds network.mitmProxy to a proxy that terminates is the pair the settings
// refuse, and is refused too; without termination it applies.
#include <gtest/gtest.h>

#include "base/domain_pattern.h"
#include "proxy/proxy.h"

namespace srt::proxy {
namespace {

MitmProxyPolicy Mitm() {
  MitmProxyPolicy mitm;
  mitm.socket_path = "/run/srt-test-mitm.sock";
  mitm.domains.push_back(
      {*ParseDomainPattern("api.example.com", PatternList::kAllow), "api.example.com", ""});
  return mitm;
}

TEST(ProxyUpdateTest, MitmProxyCannotBeAddedWhileTlsIsTerminated) {
  NetworkPolicy start;
  start.tls_terminate = TlsTerminatePolicy{};
  Result<std::unique_ptr<Proxy>> proxy = Proxy::Create(start, ProxyConfig{});
  ASSERT_TRUE(proxy.has_value()) << proxy.error().message();
  ASSERT_TRUE((*proxy)->Run().has_value());
  NetworkPolicy update;
  update.mitm_proxy = Mitm();
  Result<void> r = (*proxy)->Update(update);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(r.error().message(),
            "network.tlsTerminate and network.mitmProxy are mutually exclusive: this sandbox "
            "terminates TLS (network.tlsTerminate at its start), so an update cannot add "
            "network.mitmProxy");
  EXPECT_TRUE((*proxy)->Update(NetworkPolicy{}).has_value());
}

TEST(ProxyUpdateTest, MitmProxyCanBeAddedWithoutTermination) {
  Result<std::unique_ptr<Proxy>> proxy = Proxy::Create(NetworkPolicy{}, ProxyConfig{});
  ASSERT_TRUE(proxy.has_value()) << proxy.error().message();
  ASSERT_TRUE((*proxy)->Run().has_value());
  NetworkPolicy update;
  update.mitm_proxy = Mitm();
  update.tls_terminate = TlsTerminatePolicy{};  // termination does not start by an update
  EXPECT_TRUE((*proxy)->Update(update).has_value());
}

}  // namespace
}  // namespace srt::proxy
