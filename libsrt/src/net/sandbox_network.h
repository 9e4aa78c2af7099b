// SPDX-License-Identifier: Apache-2.0
// net/sandbox_network.h: one sandbox's network side in srt's process: the proxy on its own
// event-loop thread, the sockets srt-agent makes for it inside the sandbox, the routes for
// transparent capture, and the environment and resolv.conf that point the command at it.
//
// Usage protocol (the facade, sandbox.cc):
//   1. SandboxNetwork::Create(policy.network, options): plans the sockets and the proxy
//      (proxy/proxy.h); nothing runs yet.
//   2. Pass sockets() to the launch (LaunchSpec::net_sockets), apply Environment() to the
//      command's environment and put resolv_conf() over the sandbox's /etc/resolv.conf.
//   3. Run() from LaunchSpec::beside_bwrap: starts the proxy's thread, which makes its server
//      in the background while bubblewrap sets up.
//   4. Attach(fds) from LaunchSpec::on_network, before the command starts: installs the routes
//      and hands the sockets to the proxy; when it returns, the proxy serves them.
//   5. Update(network) any time after Run() (any thread) for live allow/deny changes.
//   6. StopServing() from LaunchSpec::on_sandbox_empty: the proxy shuts down while bubblewrap
//      and srt-agent exit. Destroying it waits for that (or stops the proxy if nobody did; open
//      connections are logged with end "shutdown").
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/unique_fd.h"
#include "init_protocol/wire.h"
#include "net/socket_plan.h"
#include "net/trust_bundle.h"
#include "network_policy/network_policy.h"
#include "proxy/proxy.h"
#include "srt/result.h"
#include "srt/sandbox.h"

namespace srt::net {

struct NetworkOptions {
  std::string sandbox_id;
  // srt-init's path as the sandbox sees it (GIT_SSH_COMMAND's ProxyCommand).
  std::string connect_helper;
  std::function<void(const ConnectionEvent&)> on_connection;
  std::function<void(std::string_view)> debug;
  // Masked credentials for the proxy to inject (proxy::ProxyConfig::credentials).
  std::vector<CredentialSecret> credentials;
  bool inject_plaintext = false;
  // Masked AWS key pairs and credentials.sigv4 (proxy::ProxyConfig::aws_pairs, ::sigv4).
  std::vector<AwsKeyPair> aws_pairs;
  SigV4Passthrough sigv4;
  // network.tlsTerminate: where the sandbox reads srt's CA (made by the facade, bound into the
  // sandbox); filled when the proxy has made the CA. Required with tls_terminate.
  std::unique_ptr<TrustBundleFile> trust_bundle;
  // Request rewriting on terminated tunnels (proxy/exchange_rewriter.h); empty: none.
  proxy::RewriterFactory rewriter;
  // javaAgentJarPath, when the file exists: JAVA_TOOL_OPTIONS loads it ("" : none).
  std::string java_agent;
};

class SandboxNetwork {
 public:
  [[nodiscard]] static Result<std::unique_ptr<SandboxNetwork>> Create(const NetworkPolicy& network,
                                                                      NetworkOptions options);
  ~SandboxNetwork();
  SandboxNetwork(const SandboxNetwork&) = delete;
  SandboxNetwork& operator=(const SandboxNetwork&) = delete;

  [[nodiscard]] std::vector<wire::NetSocket> sockets() const;
  // NAME -> value for the command; `inherited` is the environment it would otherwise get
  // (JAVA_TOOL_OPTIONS and GIT_CONFIG_PARAMETERS are extended, not replaced).
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> Environment(
      const std::vector<std::string>& inherited) const;
  // The sandbox's /etc/resolv.conf, or "" to leave it alone (no capture).
  [[nodiscard]] std::string resolv_conf() const;

  [[nodiscard]] Result<void> Run();
  [[nodiscard]] Result<void> Attach(std::vector<UniqueFd> sockets);
  [[nodiscard]] Result<void> Update(const NetworkPolicy& network);
  void StopServing();

 private:
  SandboxNetwork() = default;

  NetworkOptions options_;
  bool capture_ = true;
  bool ipv6_ = true;
  bool http_external_ = false;   // httpProxyPort: 3128 relays to the user's own proxy
  bool socks_external_ = false;  // socksProxyPort: 1080 does
  std::string token_;
  std::vector<PlannedSocket> plan_;
  std::unique_ptr<proxy::Proxy> proxy_;
};

}  // namespace srt::net
