// SPDX-License-Identifier: Apache-2.0
#include "net/proxy_env.h"

#include <gtest/gtest.h>

#include <map>

#include "net/socket_plan.h"

namespace srt::net {
namespace {

std::map<std::string, std::string> AsMap(
    const std::vector<std::pair<std::string, std::string>>& v) {
  return {v.begin(), v.end()};
}

TEST(ProxyEnvTest, EveryVariablePointsAtTheAuthenticatedProxy) {
  auto env = AsMap(ProxyEnvironment(
      {.user = "srt.abc", .token = "0123abcd", .connect_helper = "/usr/libexec/srt/srt-init"}));
  const std::string http = "http://srt.abc:0123abcd@localhost:3128";
  for (const char* name :
       {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy",
        "GRPC_PROXY", "grpc_proxy", "DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY"}) {
    EXPECT_EQ(env[name], http) << name;
  }
  EXPECT_EQ(env["FTP_PROXY"], "socks5h://srt.abc:0123abcd@localhost:1080");
  EXPECT_EQ(env["ftp_proxy"], env["FTP_PROXY"]);
  EXPECT_EQ(env["RSYNC_PROXY"], "srt.abc:0123abcd@localhost:3128");
  EXPECT_EQ(env["NO_PROXY"], kNoProxyList);
  EXPECT_EQ(env["no_proxy"], kNoProxyList);
  EXPECT_EQ(env["NODE_USE_ENV_PROXY"], "1");
  EXPECT_EQ(env["GIT_CONFIG_PARAMETERS"], "'http.proxyAuthMethod=basic'");
  EXPECT_EQ(env["CLOUDSDK_PROXY_USERNAME"], "srt.abc");
  EXPECT_EQ(env["CLOUDSDK_PROXY_PASSWORD"], "0123abcd");
  EXPECT_EQ(env["GIT_SSH_COMMAND"],
            "ssh -o ControlMaster=no -o ControlPath=none -o "
            "ProxyCommand='/usr/libexec/srt/srt-init connect %h %p'");
  EXPECT_NE(env["JAVA_TOOL_OPTIONS"].find("-Dhttps.proxyHost=localhost -Dhttps.proxyPort=3128"),
            std::string::npos);
  EXPECT_NE(env["JAVA_TOOL_OPTIONS"].find("-Dhttp.proxyPassword=0123abcd"), std::string::npos);
}

TEST(ProxyEnvTest, TlsTerminationPointsEveryTrustVariableAtTheBundle) {
  const std::string bundle = "/tmp/srt-ca-x/trust-bundle.crt";
  auto env = AsMap(ProxyEnvironment({.user = "srt.abc", .token = "t", .ca_bundle = bundle}));
  for (const char* name :
       {"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "GIT_SSL_CAINFO", "PIP_CERT", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "DENO_CERT",
        "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "NIX_SSL_CERT_FILE"}) {
    EXPECT_EQ(env[name], bundle) << name;
  }
  // Without termination the sandbox's trust is left alone.
  auto plain = AsMap(ProxyEnvironment({.user = "srt.abc", .token = "t"}));
  EXPECT_EQ(plain.count("SSL_CERT_FILE"), 0u);
  EXPECT_EQ(plain.count("NODE_EXTRA_CA_CERTS"), 0u);
}

TEST(ProxyEnvTest, InheritedValuesAreExtendedNotReplaced) {
  auto env = AsMap(ProxyEnvironment({.user = "srt.x",
                                     .token = "t",
                                     .connect_helper = "/x/srt-init",
                                     .java_tool_options = "-Xmx1g",
                                     .git_config_parameters = "'core.pager=cat'"}));
  EXPECT_TRUE(env["JAVA_TOOL_OPTIONS"].ends_with(" -Xmx1g"));
  EXPECT_EQ(env["GIT_CONFIG_PARAMETERS"], "'core.pager=cat' 'http.proxyAuthMethod=basic'");
}

TEST(ProxyEnvTest, WithCaptureJavaGetsNoProxyPropertiesItCouldNotAuthenticateTo) {
  // Java's own clients answer no 407 without an Authenticator; captured, they need no proxy.
  auto env = AsMap(ProxyEnvironment({.user = "srt.x", .token = "t", .capture = true}));
  EXPECT_EQ(env.count("JAVA_TOOL_OPTIONS"), 0u);
  EXPECT_EQ(JavaToolOptions(
                {.user = "srt.x", .token = "t", .java_tool_options = "-Xmx1g", .capture = true}),
            "-Xmx1g");
  // The user's own proxy asks for no credentials: the properties work for every Java client.
  EXPECT_EQ(JavaToolOptions({.user = "srt.x",
                             .token = "t",
                             .http_external = true,
                             .http_port = 8080,
                             .capture = true}),
            "-Dhttp.proxyHost=localhost -Dhttp.proxyPort=8080 -Dhttps.proxyHost=localhost "
            "-Dhttps.proxyPort=8080 -Dhttp.nonProxyHosts=localhost|127.*|[::1]");
}

TEST(ProxyEnvTest, TheJavaAgentComesFirstAndIsQuotedWhenItsPathHasWhiteSpace) {
  EXPECT_EQ(JavaToolOptions({.user = "srt.x",
                             .token = "t",
                             .java_tool_options = "-Xmx1g",
                             .capture = true,
                             .java_agent = "/opt/srt/agent.jar"}),
            "-javaagent:/opt/srt/agent.jar -Xmx1g");
  EXPECT_EQ(JavaToolOptions({.user = "srt.x",
                             .token = "t",
                             .capture = true,
                             .java_agent = "/opt/my tools/agent.jar"}),
            "\"-javaagent:/opt/my tools/agent.jar\"");
  EXPECT_TRUE(
      JavaToolOptions(
          {.user = "srt.x", .token = "t", .java_tool_options = "-Xmx1g", .java_agent = "/a.jar"})
          .starts_with("-javaagent:/a.jar -Dhttp.proxyHost=localhost "));
}

TEST(ProxyEnvTest, HelperPathsWithSpacesSurviveTwoShells) {
  auto env =
      AsMap(ProxyEnvironment({.user = "srt", .token = "t", .connect_helper = "/a b/srt-init"}));
  // GIT_SSH_COMMAND is run by a shell, and ssh runs ProxyCommand with another one.
  EXPECT_EQ(env["GIT_SSH_COMMAND"],
            "ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand=''\"'\"'/a "
            "b/srt-init'\"'\"' connect %h %p'");
}

TEST(ProxyEnvTest, WithoutATokenNoCredentialsAppear) {
  auto env = AsMap(ProxyEnvironment({.user = "srt.x", .token = "", .connect_helper = "/h"}));
  EXPECT_EQ(env["HTTP_PROXY"], "http://localhost:3128");
  EXPECT_EQ(env["RSYNC_PROXY"], "localhost:3128");
  EXPECT_EQ(env.count("GIT_CONFIG_PARAMETERS"), 0u);
  EXPECT_EQ(env.count("CLOUDSDK_PROXY_PASSWORD"), 0u);
  EXPECT_EQ(env["JAVA_TOOL_OPTIONS"].find("proxyPassword"), std::string::npos);
}

TEST(ProxyEnvTest, PercentEncodesUserinfo) {
  EXPECT_EQ(PercentEncode("srt.a-b_c~9"), "srt.a-b_c~9");
  EXPECT_EQ(PercentEncode("a:b@c/d%"), "a%3Ab%40c%2Fd%25");
  EXPECT_EQ(PercentEncode(std::string("\xff\x00", 2)), "%FF%00");
}

TEST(SocketPlanTest, WithoutCaptureOnlyLoopbackProxyListeners) {
  std::vector<PlannedSocket> plan =
      PlanSockets({.capture = false, .ipv6 = true, .capture_ports = {80, 443}});
  ASSERT_EQ(plan.size(), 4u);
  for (const PlannedSocket& p : plan) {
    EXPECT_EQ(p.use, PlannedSocket::Use::kProxy);
    EXPECT_EQ(p.socket.kind, wire::kNetTcpListen);
    EXPECT_TRUE(p.socket.port == 1080 || p.socket.port == 3128);
    if (p.socket.family == 2) {
      EXPECT_EQ(p.socket.address[0], 127);
      EXPECT_EQ(p.socket.address[3], 1);
    } else {
      EXPECT_EQ(p.socket.address[15], 1);
    }
  }
}

TEST(SocketPlanTest, CaptureListensOnWildcardsAndAddsDnsAndRoutes) {
  std::vector<PlannedSocket> plan =
      PlanSockets({.capture = true, .ipv6 = false, .capture_ports = {80, 443, 3128}});
  std::vector<uint32_t> ports;
  size_t dns_udp = 0, dns_tcp = 0, routes = 0;
  for (const PlannedSocket& p : plan) {
    switch (p.use) {
      case PlannedSocket::Use::kAuto:
        EXPECT_EQ(p.socket.family, 2u);
        EXPECT_EQ(p.socket.address[0], 0);  // 0.0.0.0
        ports.push_back(p.socket.port);
        break;
      case PlannedSocket::Use::kDnsUdp:
        ++dns_udp;
        EXPECT_EQ(p.socket.port, 53u);
        EXPECT_EQ(p.socket.address[0], 127);
        break;
      case PlannedSocket::Use::kDnsTcp:
        ++dns_tcp;
        break;
      case PlannedSocket::Use::kRoutes:
        ++routes;
        EXPECT_EQ(p.socket.kind, wire::kNetRoute);
        break;
      case PlannedSocket::Use::kProxy:
        ADD_FAILURE() << "no loopback-only listener with capture";
    }
  }
  EXPECT_EQ(ports, (std::vector<uint32_t>{80, 443, 1080, 3128}));  // sorted, 3128 once
  EXPECT_EQ(dns_udp, 1u);
  EXPECT_EQ(dns_tcp, 1u);
  EXPECT_EQ(routes, 1u);
}

TEST(SocketPlanTest, APolicyPort53LeavesDnsOverTcpToCapture) {
  std::vector<PlannedSocket> plan =
      PlanSockets({.capture = true, .ipv6 = true, .capture_ports = {53, 80, 443}});
  for (const PlannedSocket& p : plan) EXPECT_NE(p.use, PlannedSocket::Use::kDnsTcp);
}

}  // namespace
}  // namespace srt::net
