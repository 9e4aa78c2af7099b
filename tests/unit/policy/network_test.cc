// SPDX-License-Identifier: Apache-2.0
// policy/network.h: `network.*` and srt's own proxy variables -> the typed NetworkPolicy.
#include "policy/network.h"

#include <gtest/gtest.h>

namespace srt::policy {
namespace {

TEST(NetworkPolicyTest, EveryEntryIsParsedOnce) {
  NetworkSettings n;
  n.allowed_domains = {"example.com", "*.example.org:443"};
  n.denied_domains = {"evil.example.com", "*:25"};
  n.denied_domain_reasons = {{"evil.example.com", "no"}};
  n.denied_resolved_addresses = {"10.0.0.0/8", "::1"};
  n.dns_servers = {"127.0.0.1", "[::1]:5353"};
  n.transparent_capture = false;
  n.http_proxy_port = 8080;
  Result<NetworkPolicy> p = ResolveNetworkPolicy(n, {});
  ASSERT_TRUE(p.has_value()) << p.error().message();
  ASSERT_EQ(p->allowed.size(), 2u);
  EXPECT_EQ(p->allowed[1].pattern.kind, DomainPattern::Kind::kWildcard);
  EXPECT_EQ(p->allowed[1].pattern.host, "example.org");
  EXPECT_EQ(p->allowed[1].pattern.port, 443);
  EXPECT_EQ(p->allowed[1].entry, "*.example.org:443");
  ASSERT_EQ(p->denied.size(), 2u);
  EXPECT_EQ(p->denied[0].reason, "no");
  EXPECT_EQ(p->denied[1].pattern.kind, DomainPattern::Kind::kAny);
  EXPECT_EQ(p->denied[1].reason, "");
  ASSERT_EQ(p->denied_resolved_addresses.size(), 2u);
  EXPECT_EQ(p->denied_resolved_addresses[0].prefix_length, 8);
  ASSERT_EQ(p->dns_servers.size(), 2u);
  EXPECT_EQ(FormatEndpoint(p->dns_servers[0]), "127.0.0.1:53");
  EXPECT_EQ(FormatEndpoint(p->dns_servers[1]), "[::1]:5353");
  EXPECT_FALSE(p->transparent_capture);
  EXPECT_EQ(p->http_proxy_port, 8080);
  EXPECT_FALSE(p->parents.http.has_value());
}

TEST(NetworkPolicyTest, TlsTerminate) {
  NetworkSettings n;
  EXPECT_FALSE(ResolveNetworkPolicy(n, {})->tls_terminate.has_value());
  TlsTerminateSettings tls;
  tls.exclude_domains = {"pinned.example", "*.mtls.example:8443"};
  tls.extra_ca_cert_paths = {"/etc/corp.pem"};
  tls.max_tunnels = 3;
  tls.handshake_timeout_ms = 500;
  n.tls_terminate = tls;
  Result<NetworkPolicy> p = ResolveNetworkPolicy(n, {});
  ASSERT_TRUE(p.has_value()) << p.error().message();
  ASSERT_TRUE(p->tls_terminate.has_value());
  EXPECT_EQ(p->tls_terminate->ca_cert_path, "");
  ASSERT_EQ(p->tls_terminate->exclude.size(), 2u);
  EXPECT_EQ(p->tls_terminate->exclude[1].pattern.kind, DomainPattern::Kind::kWildcard);
  EXPECT_EQ(p->tls_terminate->exclude[1].pattern.port, 8443);
  EXPECT_EQ(p->tls_terminate->extra_ca_cert_paths, std::vector<std::string>{"/etc/corp.pem"});
  EXPECT_EQ(p->tls_terminate->max_tunnels, 3u);
  EXPECT_EQ(p->tls_terminate->handshake_timeout_ms, 500u);

  n.tls_terminate->ca_cert_path = "/ca.pem";
  EXPECT_EQ(ResolveNetworkPolicy(n, {}).error().message(),
            "network.tlsTerminate: caCertPath and caKeyPath must be provided together");
  n.tls_terminate->ca_key_path = "/ca.key";
  EXPECT_EQ(ResolveNetworkPolicy(n, {})->tls_terminate->ca_key_path, "/ca.key");
  n.tls_terminate->exclude_domains = {"*.com"};
  EXPECT_TRUE(ResolveNetworkPolicy(n, {}).error().message().starts_with(
      "network.tlsTerminate.excludeDomains: "));
}

TEST(NetworkPolicyTest, ParentProxiesComeFromTheSettingsElseFromSrtsVariables) {
  const ProxyVariables variables{"http://env:1", "env:2", "corp"};
  NetworkSettings none;
  Result<NetworkPolicy> from_env = ResolveNetworkPolicy(none, variables);
  ASSERT_TRUE(from_env.has_value()) << from_env.error().message();
  EXPECT_EQ(from_env->parents.http->display, "http://env:1");
  EXPECT_EQ(from_env->parents.https->display, "http://env:2");  // a bare host:port is http://
  EXPECT_EQ(from_env->parents.no_proxy, "corp");

  NetworkSettings settings;
  settings.parent_proxy = ParentProxySettings{"http://u:p@Settings:3128", std::nullopt, ".x"};
  Result<NetworkPolicy> from_settings = ResolveNetworkPolicy(settings, variables);
  ASSERT_TRUE(from_settings.has_value()) << from_settings.error().message();
  EXPECT_EQ(from_settings->parents.http->display, "http://settings:3128");
  EXPECT_EQ(from_settings->parents.http->user, "u");
  EXPECT_EQ(from_settings->parents.http->password, "p");
  EXPECT_FALSE(from_settings->parents.https.has_value());  // the environment's is not mixed in
  EXPECT_EQ(from_settings->parents.no_proxy, ".x");
}

TEST(NetworkPolicyTest, ErrorsNameTheKeyAndHideThePassword) {
  NetworkSettings settings;
  settings.parent_proxy = ParentProxySettings{std::nullopt, "https://u:secret@p:1", std::nullopt};
  Result<NetworkPolicy> bad = ResolveNetworkPolicy(settings, {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(bad.error().message(),
            "network.parentProxy.https: 'https://u:***@p:1' is not an http:// proxy URL (srt "
            "talks plain HTTP to a parent proxy)");

  Result<NetworkPolicy> env = ResolveNetworkPolicy({}, {"http://p:0", std::nullopt, std::nullopt});
  ASSERT_FALSE(env.has_value());
  EXPECT_EQ(env.error().message(), "srt's environment: http: 'http://p:0' has a bad port");

  NetworkSettings dns;
  dns.dns_servers = {"127.0.0.1", "dns.example"};
  Result<NetworkPolicy> bad_dns = ResolveNetworkPolicy(dns, {});
  ASSERT_FALSE(bad_dns.has_value());
  EXPECT_EQ(bad_dns.error().message(),
            "network.dnsServers[1]: 'dns.example' is not a DNS server address; expected an IP "
            "literal with an optional port");

  NetworkSettings addresses;
  addresses.denied_resolved_addresses = {"10.0.0.0/8", "10.0.0.0/33"};
  Result<NetworkPolicy> bad_address = ResolveNetworkPolicy(addresses, {});
  ASSERT_FALSE(bad_address.has_value());
  EXPECT_TRUE(bad_address.error().message().starts_with("network.deniedResolvedAddresses[1]: "))
      << bad_address.error().message();
}

}  // namespace
}  // namespace srt::policy
