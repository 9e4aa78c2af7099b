#include "net/sandbox_network.h"

#include <unistd.h>

#include <cstdlib>

#include "dns/resolver.h"
#include "loop/loop_thread.h"
#include "net/proxy_env.h"
#include "net/routes.h"
#include "server/decision_log.h"
#include "server/proxy_server.h"
#include "server/rules.h"
#include "sys/random_hex.h"

namespace srt::net {
namespace {

const char* Env(const char* upper, const char* lower) {
  const char* v = getenv(upper);
  if (v == nullptr || *v == '\0') v = getenv(lower);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// network.parentProxy, or srt's own HTTP(S)_PROXY / NO_PROXY when the settings name none
// (upstream-srt.md §1.3). HTTPS falls back to HTTP.
Result<proxy::ParentProxies> ParentProxiesFor(const NetworkSettings& network) {
  proxy::ParentProxies parents;
  std::optional<std::string> http, https, no_proxy;
  std::string origin;
  if (network.parent_proxy) {
    http = network.parent_proxy->http;
    https = network.parent_proxy->https;
    no_proxy = network.parent_proxy->no_proxy;
    origin = "network.parentProxy.";
  } else {
    if (const char* v = Env("HTTP_PROXY", "http_proxy")) http = v;
    if (const char* v = Env("HTTPS_PROXY", "https_proxy")) https = v;
    if (const char* v = Env("NO_PROXY", "no_proxy")) no_proxy = v;
    origin = "srt's environment: ";
  }
  if (http) {
    SRT_ASSIGN_OR_RETURN(parents.http, proxy::ParseParentProxyUrl(*http, origin + "http"));
  }
  if (https) {
    SRT_ASSIGN_OR_RETURN(parents.https, proxy::ParseParentProxyUrl(*https, origin + "https"));
  }
  if (no_proxy) parents.no_proxy = proxy::NoProxy::Parse(*no_proxy);
  return parents;
}

Result<std::shared_ptr<const proxy::NetworkRules>> RulesFor(const NetworkSettings& network) {
  SRT_ASSIGN_OR_RETURN(std::vector<IpAddress> own, proxy::HostInterfaceAddresses());
  return proxy::BuildNetworkRules(network, std::move(own));
}

bool HostHasIpv6() { return access("/proc/net/if_inet6", F_OK) == 0; }

}  // namespace

Result<std::unique_ptr<SandboxNetwork>> SandboxNetwork::Start(const NetworkSettings& network,
                                                              NetworkOptions options) {
  std::unique_ptr<SandboxNetwork> self(new SandboxNetwork());
  SRT_ASSIGN_OR_RETURN(std::shared_ptr<const proxy::NetworkRules> rules, RulesFor(network));
  SRT_ASSIGN_OR_RETURN(proxy::ParentProxies parents, ParentProxiesFor(network));
  SRT_ASSIGN_OR_RETURN(self->token_, sys::RandomHex(16));
  self->options_ = std::move(options);
  self->capture_ = network.transparent_capture;
  self->ipv6_ = HostHasIpv6();
  self->plan_ = PlanSockets({self->capture_, self->ipv6_, rules->matcher.CapturePorts()});

  proxy::ProxyOptions proxy_options;
  proxy_options.sandbox_id = self->options_.sandbox_id;
  proxy_options.token = self->token_;
  proxy_options.parents = std::move(parents);
  if (network.http_proxy_port) {
    proxy_options.external_proxies.emplace_back(kHttpProxyPort, *network.http_proxy_port);
  }
  if (network.socks_proxy_port) {
    proxy_options.external_proxies.emplace_back(kSocksProxyPort, *network.socks_proxy_port);
  }
  self->http_external_ = network.http_proxy_port.has_value();
  self->socks_external_ = network.socks_proxy_port.has_value();
  if (self->options_.on_connection) {
    proxy_options.on_record = [sink = self->options_.on_connection,
                               id = self->options_.sandbox_id](const proxy::ConnectionRecord& r) {
      sink(ConnectionEvent{proxy::FormatRecordJson(r, id), proxy::FormatRecordText(r), r.allowed});
    };
  }
  proxy::ResolverOptions resolver_options;
  resolver_options.servers = network.dns_servers;

  self->thread_ = std::make_unique<proxy::LoopThread>("srt-proxy");
  SRT_RETURN_IF_ERROR(self->thread_->Start());
  // The proxy is made on its loop thread while bubblewrap starts; Attach() waits for it.
  auto made = std::make_shared<std::promise<Result<void>>>();
  self->ready_ = made->get_future();
  SandboxNetwork* raw = self.get();
  raw->thread_->loop().RunInLoop(
      [raw, made, rules, resolver_options, proxy_options = std::move(proxy_options)]() mutable {
        proxy::EventLoop& loop = raw->thread_->loop();
        Result<std::unique_ptr<proxy::Resolver>> resolver =
            proxy::CreateAresResolver(loop, resolver_options);
        if (!resolver) {
          made->set_value(std::move(resolver).error().Wrap("start the proxy's resolver"));
          return;
        }
        Result<std::unique_ptr<proxy::ProxyServer>> server =
            proxy::ProxyServer::Create(loop, std::move(proxy_options), std::move(*resolver), rules);
        if (!server) {
          made->set_value(std::move(server).error());
          return;
        }
        raw->server_ = std::move(*server);
        made->set_value(Ok());
      });
  if (self->options_.debug) {
    std::string capture = "no transparent capture";
    if (self->capture_) {
      capture = "transparent capture of ports";
      for (uint16_t port : rules->matcher.CapturePorts()) capture += " " + std::to_string(port);
      capture += ", DNS stub on 127.0.0.1:53";
    }
    self->options_.debug("network: proxy on localhost:" + std::to_string(kHttpProxyPort) +
                         " and :" + std::to_string(kSocksProxyPort) +
                         " (HTTP and SOCKS5 on both), " + capture + "; " +
                         std::to_string(self->plan_.size()) + " sockets made in the sandbox");
  }
  return self;
}

SandboxNetwork::~SandboxNetwork() {
  if (!thread_) return;
  if (thread_->running()) {
    // The server lives on the loop thread: it is destroyed there, then the thread stops (Stop()
    // runs the functors still queued before it returns).
    thread_->loop().RunInLoop([this] { server_.reset(); });
    thread_->Stop();
  }
  server_.reset();  // the thread is gone: nobody else touches the loop now
}

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
  SRT_RETURN_IF_ERROR(ready_.get());
  std::promise<Result<void>> attached;
  std::future<Result<void>> done = attached.get_future();
  thread_->loop().RunInLoop([&] {
    for (size_t i = 0; i < plan_.size(); ++i) {
      Result<void> r = Ok();
      switch (plan_[i].use) {
        case PlannedSocket::Use::kProxy:
          r = server_->AddListener(std::move(sockets[i]), proxy::ListenerRole::kProxy);
          break;
        case PlannedSocket::Use::kAuto:
          r = server_->AddListener(std::move(sockets[i]), proxy::ListenerRole::kAuto);
          break;
        case PlannedSocket::Use::kDnsUdp:
          r = server_->AddDnsSocket(std::move(sockets[i]), /*tcp=*/false);
          break;
        case PlannedSocket::Use::kDnsTcp:
          r = server_->AddDnsSocket(std::move(sockets[i]), /*tcp=*/true);
          break;
        case PlannedSocket::Use::kRoutes:
          break;
      }
      if (!r) {
        attached.set_value(std::move(r).error().Wrap("serve the sandbox's proxy sockets"));
        return;
      }
    }
    attached.set_value(Ok());
  });
  return done.get();
}

Result<void> SandboxNetwork::Update(const NetworkSettings& network) {
  SRT_ASSIGN_OR_RETURN(std::shared_ptr<const proxy::NetworkRules> rules, RulesFor(network));
  thread_->loop().RunInLoop([this, rules = std::move(rules)]() mutable {
    if (server_) server_->UpdateRules(std::move(rules));
  });
  return Ok();
}

}  // namespace srt::net
