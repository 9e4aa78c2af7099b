// SPDX-License-Identifier: Apache-2.0
#include "net/proxy_env.h"

#include <algorithm>

#include "base/strings.h"

namespace srt::net {

std::string PercentEncode(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string JavaToolOptions(const ProxyEnvSpec& spec) {
  std::vector<std::string> parts;
  if (!spec.java_agent.empty()) {
    const bool space = std::any_of(spec.java_agent.begin(), spec.java_agent.end(),
                                   [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); });
    const std::string flag = "-javaagent:" + spec.java_agent;
    parts.push_back(space ? "\"" + flag + "\"" : flag);
  }
  // The JVM ignores the proxy variables; these properties are what java.net and most Java HTTP
  // clients read. With capture the JVM needs none: it connects directly, and srt's proxy gets
  // the connection anyway, with no credentials to ask for. An external httpProxyPort asks for
  // none either, so the properties work there for every client.
  if (!spec.capture || spec.http_external) {
    const std::string port = std::to_string(spec.http_port);
    std::string props = "-Dhttp.proxyHost=localhost -Dhttp.proxyPort=" + port +
                        " -Dhttps.proxyHost=localhost -Dhttps.proxyPort=" + port +
                        " -Dhttp.nonProxyHosts=localhost|127.*|[::1]";
    if (!spec.http_external && !spec.token.empty()) {
      // Read by clients that take proxy credentials from properties (Gradle, Apache
      // HttpClient); Java's own clients need an Authenticator and get 407.
      props += " -Dhttp.proxyUser=" + spec.user + " -Dhttp.proxyPassword=" + spec.token +
               " -Dhttps.proxyUser=" + spec.user + " -Dhttps.proxyPassword=" + spec.token +
               " -Djdk.http.auth.tunneling.disabledSchemes= "
               "-Djdk.http.auth.proxying.disabledSchemes=";
    }
    parts.push_back(std::move(props));
  }
  if (!spec.java_tool_options.empty()) parts.push_back(spec.java_tool_options);
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += ' ';
    out += part;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ProxyEnvironment(const ProxyEnvSpec& spec) {
  const std::string credentials =
      spec.token.empty() ? "" : PercentEncode(spec.user) + ":" + PercentEncode(spec.token) + "@";
  const std::string userinfo = spec.http_external ? "" : credentials;
  const std::string http = "http://" + userinfo + "localhost:" + std::to_string(spec.http_port);
  const std::string socks = "socks5h://" + (spec.socks_external ? "" : credentials) +
                            "localhost:" + std::to_string(spec.socks_port);
  std::vector<std::pair<std::string, std::string>> env;
  for (const char* name :
       {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy",
        "GRPC_PROXY", "grpc_proxy", "DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY"}) {
    env.emplace_back(name, http);
  }
  env.emplace_back("FTP_PROXY", socks);
  env.emplace_back("ftp_proxy", socks);
  // rsync speaks HTTP CONNECT to RSYNC_PROXY ("[user:pass@]host:port").
  env.emplace_back("RSYNC_PROXY", userinfo + "localhost:" + std::to_string(spec.http_port));
  env.emplace_back("NO_PROXY", kNoProxyList);
  env.emplace_back("no_proxy", kNoProxyList);
  // Node 24+ reads the proxy variables for fetch/http only when asked to.
  env.emplace_back("NODE_USE_ENV_PROXY", "1");

  const std::string java = JavaToolOptions(spec);
  if (!java.empty()) env.emplace_back("JAVA_TOOL_OPTIONS", java);

  if (!userinfo.empty()) {
    // git sends Basic credentials to the proxy up front instead of waiting for a 407.
    std::string git = "'http.proxyAuthMethod=basic'";
    if (!spec.git_config_parameters.empty()) git = spec.git_config_parameters + " " + git;
    env.emplace_back("GIT_CONFIG_PARAMETERS", git);
    env.emplace_back("CLOUDSDK_PROXY_TYPE", "http");
    env.emplace_back("CLOUDSDK_PROXY_ADDRESS", "localhost");
    env.emplace_back("CLOUDSDK_PROXY_PORT", std::to_string(spec.http_port));
    env.emplace_back("CLOUDSDK_PROXY_USERNAME", spec.user);
    env.emplace_back("CLOUDSDK_PROXY_PASSWORD", spec.token);
  }
  // ssh (git over ssh) through an authenticated CONNECT, by srt's own helper.
  env.emplace_back(
      "GIT_SSH_COMMAND",
      "ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand=" +
          strings::ShellQuote(strings::ShellQuote(spec.connect_helper) + " connect %h %p"));
  if (!spec.ca_bundle.empty()) {
    for (const char* name : kCaBundleVariables) env.emplace_back(name, spec.ca_bundle);
  }
  return env;
}

}  // namespace srt::net
