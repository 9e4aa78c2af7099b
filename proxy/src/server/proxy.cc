// SPDX-License-Identifier: Apache-2.0
// The proxy's public face (proxy/proxy.h) over the ProxyServer, its loop thread and resolver.
#include "proxy/proxy.h"

#include <sys/resource.h>

#include <atomic>
#include <future>

#include "dns/resolver.h"
#include "filter/domain_matcher.h"
#include "loop/loop_thread.h"
#include "mitm/tls_engine.h"
#include "server/credential_rewriter.h"
#include "server/decision_log.h"
#include "server/parent_proxy.h"
#include "server/proxy_server.h"
#include "server/rules.h"

namespace srt::proxy {
namespace {

Result<std::shared_ptr<const NetworkRules>> RulesFor(const NetworkPolicy& policy) {
  SRT_ASSIGN_OR_RETURN(std::vector<IpAddress> own, HostInterfaceAddresses());
  return BuildNetworkRules(policy, own);
}

// network.tlsTerminate: the CA is made (or read) here, in srt's process, before the sandbox
// starts; its key never leaves this process's memory.
Result<std::optional<TlsTermination>> TlsFor(const NetworkPolicy& policy) {
  if (!policy.tls_terminate) return std::optional<TlsTermination>();
  const TlsTerminatePolicy& tls = *policy.tls_terminate;
  mitm::TlsEngine::Options engine_options;
  engine_options.ca_cert_path = tls.ca_cert_path;
  engine_options.ca_key_path = tls.ca_key_path;
  engine_options.extra_ca_cert_paths = tls.extra_ca_cert_paths;
  Result<std::unique_ptr<mitm::TlsEngine>> engine = mitm::TlsEngine::Create(engine_options);
  if (!engine) return std::move(engine).error().Wrap("network.tlsTerminate");
  TlsTermination out;
  out.engine = std::move(*engine);
  return std::optional<TlsTermination>(std::move(out));
}

ProxyOptions OptionsFor(const NetworkPolicy& policy, ProxyConfig& config) {
  ProxyOptions options;
  // As many connections as srt's descriptors allow (libsrt raises its soft limit first).
  if (rlimit nofile{}; getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    options.max_connections = MaxConnectionsForNofile(nofile.rlim_cur);
  }
  options.rewriter = std::move(config.rewriter);
  options.sandbox_id = config.sandbox_id;
  options.token = std::move(config.token);
  if (policy.parents.http) options.parents.http = ParentProxyFor(*policy.parents.http);
  if (policy.parents.https) options.parents.https = ParentProxyFor(*policy.parents.https);
  options.parents.no_proxy = NoProxy::Parse(policy.parents.no_proxy);
  if (policy.http_proxy_port) {
    options.external_proxies.emplace_back(kHttpProxyPort, *policy.http_proxy_port);
  }
  if (policy.socks_proxy_port) {
    options.external_proxies.emplace_back(kSocksProxyPort, *policy.socks_proxy_port);
  }
  if (!config.credentials.empty()) {
    options.injector = inject::Injector::Build(config.credentials);
    options.inject_plaintext = config.inject_plaintext;
    // Terminated TLS tunnels inject through the rewriter seam, unless the embedder brought a
    // rewriter of its own.
    if (!options.rewriter) {
      options.rewriter = CredentialRewriterFactory(
          options.injector, std::make_shared<const SigV4Resigner>(
                                SigV4Resigner{std::move(config.aws_pairs), config.sigv4}));
    }
  }
  options.require_host_match = policy.require_host_match;
  options.refuse_opaque_tunnels = policy.refuse_opaque_tunnels;
  options.strip_response_headers = policy.strip_response_headers;
  if (config.on_event) {
    options.on_record = [sink = std::move(config.on_event),
                         id = config.sandbox_id](const ConnectionRecord& r) {
      sink(ProxyEvent{FormatRecordJson(r, id), FormatRecordText(r), r.allowed, FormatDestination(r),
                      r.allowed ? std::string() : LogSafe(r.reason)});
    };
  }
  return options;
}

}  // namespace

struct Proxy::State {
  std::vector<uint16_t> capture_ports;
  bool terminates_tls = false;  // started with network.tlsTerminate (an update cannot change it)
  std::string trust_bundle;
  std::vector<std::string> tls_notes;
  // Made by Create(), taken by Run()'s loop thread: the rules but for this host's addresses
  // (their guard is made there, with the denied networks), and the server's options.
  struct Unstarted {
    NetworkRules rules;
    std::vector<IpNetwork> denied_resolved_addresses;
    ProxyOptions options;
    ResolverOptions resolver_options;
  };
  std::unique_ptr<Unstarted> unstarted;
  std::unique_ptr<LoopThread> thread;
  // Lives on the loop thread; created there by Run() (`ready` says how that went).
  std::unique_ptr<ProxyServer> server;
  std::future<Result<void>> ready;
  // StopServing() was called: the loop may have ended, and a functor queued now may never run.
  std::atomic<bool> stopping{false};
};

Proxy::Proxy(std::unique_ptr<State> state) : state_(std::move(state)) {}

Result<std::unique_ptr<Proxy>> Proxy::Create(const NetworkPolicy& policy, ProxyConfig config) {
  auto state = std::make_unique<State>();
  // This host's addresses are read on the loop thread (Run); the guard made here is replaced
  // there before any connection is decided.
  state->unstarted = std::make_unique<State::Unstarted>(State::Unstarted{
      MakeNetworkRules(policy, {}), policy.denied_resolved_addresses, ProxyOptions{}, {}});
  State::Unstarted& u = *state->unstarted;
  state->capture_ports = u.rules.matcher.CapturePorts();
  u.options = OptionsFor(policy, config);
  SRT_ASSIGN_OR_RETURN(u.options.tls, TlsFor(policy));
  if (u.options.tls) {
    state->terminates_tls = true;
    state->trust_bundle = u.options.tls->engine->trust_bundle();
    state->tls_notes = u.options.tls->engine->notes();
  }
  u.resolver_options.servers = policy.dns_servers;
  return std::unique_ptr<Proxy>(new Proxy(std::move(state)));
}

Result<void> Proxy::Run() {
  if (!state_->unstarted) return MakeError(Errc::kInvalidArgument, "the proxy was already run");
  // Before the thread exists: a second Run() finds nothing to run.
  std::shared_ptr<State::Unstarted> u(std::move(state_->unstarted));
  state_->thread = std::make_unique<LoopThread>("srt-proxy");
  SRT_RETURN_IF_ERROR(state_->thread->Start());
  auto made = std::make_shared<std::promise<Result<void>>>();
  state_->ready = made->get_future();
  State* raw = state_.get();
  // `u` shared: the functor must be copyable (std::function).
  raw->thread->loop().RunInLoop([raw, made, u] {
    Result<std::vector<IpAddress>> own = HostInterfaceAddresses();
    if (!own) {
      made->set_value(std::move(own).error());
      return;
    }
    u->rules.guard = AddressGuard(*own, u->denied_resolved_addresses);
    auto rules = std::make_shared<const NetworkRules>(std::move(u->rules));
    EventLoop& loop = raw->thread->loop();
    Result<std::unique_ptr<Resolver>> resolver = CreateAresResolver(loop, u->resolver_options);
    if (!resolver) {
      made->set_value(std::move(resolver).error().Wrap("start the proxy's resolver"));
      return;
    }
    Result<std::unique_ptr<ProxyServer>> server =
        ProxyServer::Create(loop, std::move(u->options), std::move(*resolver), rules);
    if (!server) {
      made->set_value(std::move(server).error());
      return;
    }
    raw->server = std::move(*server);
    made->set_value(Ok());
  });
  return Ok();
}

void Proxy::StopServing() {
  if (!state_->thread || state_->stopping.exchange(true)) return;
  // Queued before Stop(), so the loop's shutdown drain runs it (loop/event_loop.h).
  state_->thread->loop().RunInLoop([state = state_.get()] { state->server.reset(); });
  state_->thread->loop().Stop();
}

Proxy::~Proxy() {
  if (!state_->thread) return;
  if (state_->thread->running()) {
    // The server lives on the loop thread: it is destroyed there, then the thread stops (Stop()
    // runs the functors still queued before it returns).
    state_->thread->loop().RunInLoop([state = state_.get()] { state->server.reset(); });
    state_->thread->Stop();
  }
  state_->server.reset();  // the thread is gone: nobody else touches the loop now
}

const std::vector<uint16_t>& Proxy::capture_ports() const { return state_->capture_ports; }
const std::string& Proxy::trust_bundle() const { return state_->trust_bundle; }
const std::vector<std::string>& Proxy::tls_notes() const { return state_->tls_notes; }

Result<void> Proxy::Serve(std::vector<std::pair<UniqueFd, SocketUse>> sockets) {
  if (!state_->ready.valid()) {
    return MakeError(Errc::kInvalidArgument, "the proxy is not running (Run) or already serves");
  }
  if (state_->stopping.load()) return MakeError(Errc::kInvalidArgument, "the proxy has stopped");
  SRT_RETURN_IF_ERROR(state_->ready.get());
  std::promise<Result<void>> served;
  std::future<Result<void>> done = served.get_future();
  state_->thread->loop().RunInLoop([&] {
    ProxyServer& server = *state_->server;
    for (auto& [fd, use] : sockets) {
      Result<void> r = Ok();
      switch (use) {
        case SocketUse::kProxy:
          r = server.AddListener(std::move(fd), ListenerRole::kProxy);
          break;
        case SocketUse::kAuto:
          r = server.AddListener(std::move(fd), ListenerRole::kAuto);
          break;
        case SocketUse::kDnsUdp:
          r = server.AddDnsSocket(std::move(fd), /*tcp=*/false);
          break;
        case SocketUse::kDnsTcp:
          r = server.AddDnsSocket(std::move(fd), /*tcp=*/true);
          break;
      }
      if (!r) {
        served.set_value(std::move(r).error().Wrap("serve the sandbox's proxy sockets"));
        return;
      }
    }
    served.set_value(Ok());
  });
  return done.get();
}

Result<void> Proxy::Update(const NetworkPolicy& policy) {
  // The settings file refuses the two together; a sandbox that terminates TLS keeps doing so
  // whatever an update says, so an update that adds mitmProxy would be the same combination.
  if (state_->terminates_tls && policy.mitm_proxy) {
    return MakeError(Errc::kInvalidArgument,
                     "network.tlsTerminate and network.mitmProxy are mutually exclusive: this "
                     "sandbox terminates TLS (network.tlsTerminate at its start), so an update "
                     "cannot add network.mitmProxy");
  }
  if (!state_->thread) return MakeError(Errc::kInvalidArgument, "the proxy is not running (Run)");
  SRT_ASSIGN_OR_RETURN(std::shared_ptr<const NetworkRules> rules, RulesFor(policy));
  state_->thread->loop().RunInLoop([state = state_.get(), rules = std::move(rules)]() mutable {
    if (state->server) state->server->UpdateRules(std::move(rules));
  });
  return Ok();
}

}  // namespace srt::proxy
