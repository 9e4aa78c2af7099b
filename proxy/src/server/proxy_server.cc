// SPDX-License-Identifier: Apache-2.0
#include "server/proxy_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "dns/stub.h"
#include "filter/domain_matcher.h"
#include "server/dialer.h"
#include "server/session.h"
#include "wire/ascii.h"

namespace srt::proxy {
namespace {

Result<void> MakeNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return SysError("fcntl O_NONBLOCK");
  }
  return Ok();
}

// Constant-time comparison: the time a wrong token takes to refuse says nothing about it.
bool SecretEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

class ProxyServer::Listener final : public Handler {
 public:
  Listener(ProxyServer& server, UniqueFd fd, ListenerRole role)
      : server_(server), fd_(std::move(fd)), role_(role) {}
  ~Listener() override { server_.loop_.Remove(fd_.get()); }

  void OnEvents(uint32_t) override { server_.Accept(*this); }

  int fd() const { return fd_.get(); }
  ListenerRole role() const { return role_; }

 private:
  ProxyServer& server_;
  UniqueFd fd_;
  ListenerRole role_;
};

ProxyServer::ProxyServer(EventLoop& loop, ProxyOptions options, std::unique_ptr<Resolver> resolver,
                         std::shared_ptr<const NetworkRules> rules)
    : loop_(loop),
      options_(std::move(options)),
      resolver_(std::move(resolver)),
      rules_(std::move(rules)) {
  options_.tunnel.pipes = &pipes_;
  dialer_ = std::make_unique<Dialer>(loop_, *resolver_,
                                     Dialer::Options{options_.connect_timeout, &options_.parents});
}

Result<std::unique_ptr<ProxyServer>> ProxyServer::Create(
    EventLoop& loop, ProxyOptions options, std::unique_ptr<Resolver> resolver,
    std::shared_ptr<const NetworkRules> rules) {
  loop.AssertInLoopThread();
  if (!resolver || !rules) {
    return MakeError(Errc::kInvalidArgument, "proxy server: a resolver and rules are required");
  }
  return std::unique_ptr<ProxyServer>(
      new ProxyServer(loop, std::move(options), std::move(resolver), std::move(rules)));
}

ProxyServer::~ProxyServer() {
  loop_.AssertInLoopThread();
  shutting_down_ = true;
  listeners_.clear();
  dns_.reset();
  for (auto& [raw, session] : sessions_) session->OnServerShutdown();
  sessions_.clear();
  dialer_.reset();
}

Result<void> ProxyServer::AddListener(UniqueFd socket, ListenerRole role) {
  loop_.AssertInLoopThread();
  SRT_RETURN_IF_ERROR(MakeNonBlocking(socket.get()));
  auto listener = std::make_unique<Listener>(*this, std::move(socket), role);
  SRT_RETURN_IF_ERROR(loop_.Add(listener->fd(), EPOLLIN, listener.get()));
  listeners_.push_back(std::move(listener));
  return Ok();
}

Result<void> ProxyServer::AddDnsSocket(UniqueFd socket, bool tcp) {
  loop_.AssertInLoopThread();
  if (!dns_) {
    DnsStub::Options options;
    options.ttl = options_.dns_ttl;
    options.refusal_reason = [this](std::string_view name) -> std::string {
      if (rules_->matcher.NameMayResolve(name)) return "";
      // The reason a CONNECT to the name would get (on 443, the port a name is most often
      // looked up for).
      Decision d = rules_->matcher.Evaluate(name, 443);
      return d.reason.empty() ? std::string(kNotAllowedReason) : d.reason;
    };
    // A real address is shown only if the guard's address classes let a name reach it (port-
    // specific carve-outs are for loopback and this host's own addresses, which a client inside
    // would dial on its own loopback instead: those names keep a synthetic address), and no
    // IP entry of deniedDomains names it on any port (the stub knows no port).
    options.may_show = [this](const IpAddress& address) {
      return !rules_->guard.Classify(address).has_value() &&
             !rules_->matcher.AddressDenyListedOnSomePort(address);
    };
    options.on_denied = [this](std::string_view name, std::string_view reason) {
      ConnectionRecord record;
      record.time = std::chrono::system_clock::now();
      record.protocol = Protocol::kDns;
      record.host = std::string(name);
      record.port = 53;
      record.reason = std::string(reason);
      Record(record);
    };
    dns_ = std::make_unique<DnsStub>(loop_, *resolver_, answers_, std::move(options));
  }
  return tcp ? dns_->AddTcpListener(std::move(socket)) : dns_->AddUdpSocket(std::move(socket));
}

void ProxyServer::UpdateRules(std::shared_ptr<const NetworkRules> rules) {
  loop_.AssertInLoopThread();
  if (rules) rules_ = std::move(rules);
}

bool ProxyOptions::StripsResponseHeader(std::string_view name) const {
  if (strip_response_headers.empty()) return false;
  const std::string folded = ascii::FoldHeaderName(name);
  return std::find(strip_response_headers.begin(), strip_response_headers.end(), folded) !=
         strip_response_headers.end();
}

bool ProxyServer::Authorized(std::string_view user, std::string_view password) const {
  if (options_.token.empty()) return true;
  const bool user_ok = user == "srt" || user.starts_with("srt.");
  return SecretEquals(password, options_.token) && user_ok;
}

void ProxyServer::Record(const ConnectionRecord& record) const {
  if (!options_.on_record) return;
  if (!options_.injector) return options_.on_record(record);
  // Reasons and errors may quote what an origin sent (a malformed head), which may carry a
  // masked credential's real value: the log (which the sandbox may be able to read) gets the
  // sentinel instead.
  ConnectionRecord scrubbed = record;
  scrubbed.reason = Scrub(record.reason);
  scrubbed.error = Scrub(record.error);
  options_.on_record(scrubbed);
}

std::string ProxyServer::Scrub(std::string_view text) const {
  if (!options_.injector || text.empty()) return std::string(text);
  return options_.injector->ForResponse(/*fixed_length=*/false)->Rewrite(text);
}

Session& ProxyServer::Adopt(std::unique_ptr<Session> session) {
  Session* raw = session.get();
  sessions_.emplace(raw, std::move(session));
  return *raw;
}

void ProxyServer::EndSession(Session* session) {
  if (shutting_down_) return;  // the destructor is clearing them
  sessions_.erase(session);
}

bool ProxyServer::Terminates(const NetworkRules& rules, const Host& host, uint16_t port) const {
  return options_.tls && options_.tls->engine && !rules.tls.exclude.Evaluate(host, port).allowed;
}

std::unique_ptr<TlsTunnelSlot> ProxyServer::TakeTlsSlot(const NetworkRules& rules) {
  if (!options_.tls || tls_tunnels_ >= rules.tls.max_tunnels) return nullptr;
  return std::make_unique<TlsTunnelSlot>(tls_tunnels_);
}

void ProxyServer::Accept(Listener& listener) {
  // A bounded batch per readiness event: one busy listener must not starve the others.
  for (int i = 0; i < 64; ++i) {
    UniqueFd client(accept4(listener.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client) {
      // EAGAIN: drained. ECONNABORTED and friends: that client is gone, the next may not be.
      // EMFILE/ENFILE: leave the rest in the backlog until sessions close (level-triggered
      // epoll calls again; the backlog bounds the retries).
      return;
    }
    if (sessions_.size() >= options_.max_connections) {
      const linger reset{1, 0};
      (void)setsockopt(client.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
      continue;  // closed with a reset: over the connection limit
    }
    const int one = 1;
    (void)setsockopt(client.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

    sockaddr_storage local;
    socklen_t local_length = sizeof local;
    std::optional<Endpoint> destination;
    if (getsockname(client.get(), reinterpret_cast<sockaddr*>(&local), &local_length) == 0) {
      destination = FromSockaddr(reinterpret_cast<sockaddr*>(&local), local_length);
    }
    ListenerRole role = listener.role();
    if (role == ListenerRole::kAuto) {
      const bool proxy_port = destination && IsLoopbackAddress(UnmapIpv4(destination->address)) &&
                              std::find(options_.proxy_ports.begin(), options_.proxy_ports.end(),
                                        destination->port) != options_.proxy_ports.end();
      role = proxy_port ? ListenerRole::kProxy : ListenerRole::kCapture;
    }
    std::unique_ptr<Session> session;
    const auto external =
        destination
            ? std::find_if(options_.external_proxies.begin(), options_.external_proxies.end(),
                           [&](const auto& e) { return e.first == destination->port; })
            : options_.external_proxies.end();
    if (role == ListenerRole::kProxy && external != options_.external_proxies.end()) {
      session = MakeForwardSession(*this, std::move(client), external->second);
    } else if (role == ListenerRole::kProxy) {
      session = MakeMuxSession(*this, std::move(client));
    } else if (destination) {
      session = MakeCaptureSession(*this, std::move(client), *destination);
    } else {
      continue;  // no destination to decide on
    }
    Adopt(std::move(session)).Start();
  }
}

}  // namespace srt::proxy
