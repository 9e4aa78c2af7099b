// SPDX-License-Identifier: Apache-2.0
// net/proxy_env.h: the environment variables that point a sandboxed command at srt's proxy
// (upstream-srt.md §4.4, with srt's connect helper instead of socat). Pure.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace srt::net {

struct ProxyEnvSpec {
  std::string user;   // "srt.<sandbox id>"
  std::string token;  // the per-sandbox secret ("" : no credentials anywhere)
  // The port is the user's own proxy (httpProxyPort / socksProxyPort): no credentials in its URLs.
  bool http_external = false;
  bool socks_external = false;
  int http_port = 3128;
  int socks_port = 1080;
  // srt-init as the command sees it: `<path> connect %h %p` is ssh's ProxyCommand.
  std::string connect_helper;
  // The values the command would otherwise get (appended to, not replaced); "" if unset.
  std::string java_tool_options;
  std::string git_config_parameters;
  // network.tlsTerminate: the trust bundle's path as the command sees it ("" : no termination).
  std::string ca_bundle;
  // Transparent capture is on: a JVM connects directly and is captured, so JAVA_TOOL_OPTIONS
  // carries no proxy properties (Java's own clients cannot answer the proxy's 407 without an
  // Authenticator; see docs/network.md).
  bool capture = false;
  // javaAgentJarPath: JAVA_TOOL_OPTIONS loads it with -javaagent: ("" : none).
  std::string java_agent;
};

// The JAVA_TOOL_OPTIONS value for `spec` ("" : leave the variable as it is): -javaagent:<jar>
// (in double quotes when the path has white space, which the JVM splits on), the proxy
// properties when the JVM cannot rely on capture, then the inherited value, so that the user's
// own -D options win.
[[nodiscard]] std::string JavaToolOptions(const ProxyEnvSpec& spec);

// The variables that name a CA bundle for the common TLS clients (OpenSSL and Go read
// SSL_CERT_FILE; Node NODE_EXTRA_CA_CERTS; Python requests/pip, curl, git, AWS, cargo, deno,
// gcloud, nix their own), as upstream sets them.
inline constexpr const char* kCaBundleVariables[] = {"NODE_EXTRA_CA_CERTS",
                                                     "SSL_CERT_FILE",
                                                     "CURL_CA_BUNDLE",
                                                     "REQUESTS_CA_BUNDLE",
                                                     "PIP_CERT",
                                                     "GIT_SSL_CAINFO",
                                                     "AWS_CA_BUNDLE",
                                                     "CARGO_HTTP_CAINFO",
                                                     "DENO_CERT",
                                                     "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
                                                     "NIX_SSL_CERT_FILE"};

// NO_PROXY as upstream sets it: loopback and the private ranges go direct (and, inside the
// sandbox, are then captured and judged by the policy like everything else).
inline constexpr const char* kNoProxyList =
    "localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16";

// NAME -> value, in a stable order.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> ProxyEnvironment(
    const ProxyEnvSpec& spec);

// `text` with every byte outside RFC 3986 unreserved percent-encoded (for URL userinfo).
[[nodiscard]] std::string PercentEncode(std::string_view text);

}  // namespace srt::net
