// SPDX-License-Identifier: Apache-2.0
#include "net/sandbox_network.h"

#include <unistd.h>

#include <optional>

#include "net/proxy_env.h"
#include "net/routes.h"
#include "sys/random_hex.h"

namespace srt::net {
namespace {

bool HostHasIpv6() { return access("/proc/net/if_inet6", F_OK) == 0; }

// What the proxy does with a planned socket; the routes socket is srt's own (Attach).
std::optional<proxy::SocketUse> ServedAs(PlannedSocket::Use use) {
  switch (use) {
    case PlannedSocket::Use::kProxy:
      return proxy::SocketUse::kProxy;
    case PlannedSocket::Use::kAuto:
      return proxy::SocketUse::kAuto;
    case PlannedSocket::Use::kDnsUdp:
      return proxy::SocketUse::kDnsUdp;
    case PlannedSocket::Use::kDnsTcp:
      return proxy::SocketUse::kDnsTcp;
    case PlannedSocket::Use::kRoutes:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<SandboxNetwork>> SandboxNetwork::Create(const NetworkPolicy& network,
                                                               NetworkOptions options) {
  std::unique_ptr<SandboxNetwork> self(new SandboxNetwork());
  SRT_ASSIGN_OR_RETURN(self->token_, sys::RandomHex(16));
  self->options_ = std::move(options);
  self->capture_ = network.transparent_capture;
  self->ipv6_ = HostHasIpv6();
  self->http_external_ = network.http_proxy_port.has_value();
  self->socks_external_ = network.socks_proxy_port.has_value();

  if (network.tls_terminate && !self->options_.trust_bundle) {
    return MakeError(Errc::kInvalidArgument,
                     "network.tlsTerminate: no file for the sandbox's trust bundle");
  }
  proxy::ProxyConfig config{self->options_.sandbox_id, self->token_, {}};
  config.rewriter = std::move(self->options_.rewriter);
  config.credentials = std::move(self->options_.credentials);
  config.inject_plaintext = self->options_.inject_plaintext;
  config.aws_pairs = std::move(self->options_.aws_pairs);
  config.sigv4 = self->options_.sigv4;
  if (self->options_.on_connection) {
    config.on_event = [sink = self->options_.on_connection](const proxy::ProxyEvent& e) {
      sink(ConnectionEvent{e.json, e.text, e.allowed, e.destination, e.reason});
    };
  }
  SRT_ASSIGN_OR_RETURN(self->proxy_, proxy::Proxy::Create(network, std::move(config)));
  if (network.tls_terminate) {
    SRT_RETURN_IF_ERROR(self->options_.trust_bundle->Write(self->proxy_->trust_bundle()));
    if (self->options_.debug) {
      for (const std::string& note : self->proxy_->tls_notes()) self->options_.debug(note);
      self->options_.debug("network: TLS termination, trust bundle " +
                           self->options_.trust_bundle->path());
    }
  } else {
    self->options_.trust_bundle.reset();
  }
  const std::vector<uint16_t>& capture_ports = self->proxy_->capture_ports();
  self->plan_ = PlanSockets({self->capture_, self->ipv6_, capture_ports});
  if (self->options_.debug) {
    std::string capture = "no transparent capture";
    if (self->capture_) {
      capture = "transparent capture of ports";
      for (uint16_t port : capture_ports) capture += " " + std::to_string(port);
      capture += ", DNS stub on 127.0.0.1:53";
    }
    self->options_.debug("network: proxy on localhost:" + std::to_string(proxy::kHttpProxyPort) +
                         " and :" + std::to_string(proxy::kSocksProxyPort) +
                         " (HTTP and SOCKS5 on both), " + capture + "; " +
                         std::to_string(self->plan_.size()) + " sockets made in the sandbox");
  }
  return self;
}

SandboxNetwork::~SandboxNetwork() = default;

Result<void> SandboxNetwork::Run() { return proxy_->Run(); }

std::vector<wire::NetSocket> SandboxNetwork::sockets() const {
  std::vector<wire::NetSocket> out;
  out.reserve(plan_.size());
  for (const PlannedSocket& p : plan_) out.push_back(p.socket);
  return out;
}

std::vector<std::pair<std::string, std::string>> SandboxNetwork::Environment(
    const std::vector<std::string>& inherited) const {
  ProxyEnvSpec spec;
  spec.user = "srt." + options_.sandbox_id;
  spec.token = token_;
  spec.connect_helper = options_.connect_helper;
  spec.http_external = http_external_;
  spec.socks_external = socks_external_;
  if (options_.trust_bundle) spec.ca_bundle = options_.trust_bundle->path();
  spec.capture = capture_;
  spec.java_agent = options_.java_agent;
  for (const std::string& e : inherited) {
    if (e.starts_with("JAVA_TOOL_OPTIONS=")) spec.java_tool_options = e.substr(18);
    if (e.starts_with("GIT_CONFIG_PARAMETERS=")) spec.git_config_parameters = e.substr(22);
  }
  return ProxyEnvironment(spec);
}

std::string SandboxNetwork::resolv_conf() const {
  if (!capture_) return "";
  return "# srt: names resolve through srt's DNS stub, which answers only what the policy "
         "allows\nnameserver 127.0.0.1\n";
}

Result<void> SandboxNetwork::Attach(std::vector<UniqueFd> sockets) {
  if (sockets.size() != plan_.size()) {
    return MakeError(Errc::kInternal, "the sandbox's sockets do not match the plan");
  }
  // Routes first: once the command runs, every connect() must already land on the proxy.
  for (size_t i = 0; i < plan_.size(); ++i) {
    if (plan_[i].use == PlannedSocket::Use::kRoutes) {
      SRT_RETURN_IF_ERROR(InstallCaptureRoutes(std::move(sockets[i]), ipv6_));
    }
  }
  std::vector<std::pair<UniqueFd, proxy::SocketUse>> served;
  for (size_t i = 0; i < plan_.size(); ++i) {
    if (std::optional<proxy::SocketUse> use = ServedAs(plan_[i].use)) {
      served.emplace_back(std::move(sockets[i]), *use);
    }
  }
  return proxy_->Serve(std::move(served));
}

Result<void> SandboxNetwork::Update(const NetworkPolicy& network) {
  return proxy_->Update(network);
}

void SandboxNetwork::StopServing() { proxy_->StopServing(); }

}  // namespace srt::net
