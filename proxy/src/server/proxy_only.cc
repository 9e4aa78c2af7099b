// SPDX-License-Identifier: Apache-2.0
// server/proxy_only.cc: `srt proxy` (proxy/proxy_only.h). One EventLoop on the caller's thread:
// the decider link first; the server, with the lists from the decider's hello, once it came; the
// lifeline and the stop signals beside them.
#include "proxy/proxy_only.h"

#include <fcntl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

#include "base/ascii.h"
#include "base/domain_pattern.h"
#include "dns/resolver.h"
#include "mitm/tls_engine.h"
#include "network_policy/network_policy.h"
#include "server/decider_link.h"
#include "server/decision_log.h"
#include "server/proxy_server.h"
#include "server/rules.h"

namespace srt::proxy {
namespace {

// Private and shared address space a proxy-only dial never reaches by name (upstream's list).
constexpr std::string_view kPrivateRanges[] = {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                                               "100.64.0.0/10", "fc00::/7"};

// After the decider died: the 503s queued for requests in flight get this long to go out.
constexpr std::chrono::milliseconds kDeadGrace{250};

struct FdHandler final : Handler {
  std::function<void()> fn;
  void OnEvents(uint32_t) override { fn(); }
};

// The resident set size in bytes (/proc/self/statm's second field, in pages), 0 if unreadable.
uint64_t ResidentBytes() {
  UniqueFd fd(open("/proc/self/statm", O_RDONLY | O_CLOEXEC));
  if (!fd) return 0;
  char buf[128] = {};
  const ssize_t n = read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return 0;
  // "size resident shared ...": the second field.
  char* end = nullptr;
  (void)std::strtoull(buf, &end, 10);
  if (end == buf || *end != ' ') return 0;
  const char* second = end + 1;
  const unsigned long long resident = std::strtoull(second, &end, 10);
  if (end == second) return 0;
  const long page = sysconf(_SC_PAGESIZE);
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(page > 0 ? page : 4096);
}

Result<std::vector<DomainRule>> Rules(const std::vector<std::string>& entries, PatternList list) {
  std::vector<DomainRule> out;
  for (const std::string& entry : entries) {
    Result<DomainPattern> pattern = ParseDomainPattern(entry, list);
    if (!pattern) return std::move(pattern).error().Wrap("decider hello entry '" + entry + "'");
    out.push_back({*pattern, entry, ""});
  }
  return out;
}

}  // namespace

Result<std::string> RunProxyOnly(ProxyOnlyOptions o) {
  // The CA first: a bad one is the caller's error (exit 2), found before the decider is spoken to.
  std::optional<TlsTermination> tls;
  if (!o.ca_pem.empty()) {
    mitm::TlsEngine::Options engine_options;
    engine_options.ca_pem = std::move(o.ca_pem);
    engine_options.ca_pem_source = o.ca_source;
    engine_options.extra_ca_cert_paths = o.extra_ca_cert_paths;
    Result<std::unique_ptr<mitm::TlsEngine>> engine =
        mitm::TlsEngine::Create(std::move(engine_options));
    if (!engine) return MakeError(Errc::kInvalidArgument, engine.error().message());
    if (o.debug) {
      for (const std::string& note : (*engine)->notes()) o.log("srt proxy: " + note);
    }
    tls.emplace();
    tls->engine = std::move(*engine);
  }
  SRT_ASSIGN_OR_RETURN(std::unique_ptr<EventLoop> loop_owner, EventLoop::Create());
  EventLoop& loop = *loop_owner;
  SRT_ASSIGN_OR_RETURN(std::vector<IpAddress> own, HostInterfaceAddresses());
  SRT_ASSIGN_OR_RETURN(std::unique_ptr<Resolver> resolver, CreateAresResolver(loop, {}));

  std::string stopped;
  std::unique_ptr<ProxyServer> server;
  std::unique_ptr<DeciderLink> link;
  bool stopping = false;
  auto stop = [&](const std::string& why) {
    if (stopping) return;
    stopping = true;
    stopped = why;
    loop.RunInLoop([&] {
      server.reset();
      if (link) link->Close();
      loop.Stop();
    });
  };

  DeciderLink::Options link_options;
  link_options.input = std::move(o.decider_in);
  link_options.output = std::move(o.decider_out);
  link_options.timeout = o.verdict_timeout;
  link_options.on_dead = [&](const std::string& why) {
    if (stopping) return;
    // The requests in flight get their 503s first.
    loop.AddTimer(kDeadGrace, [&, why] { stop("decider: " + why); });
  };
  link_options.on_hello = [&](const decider::DeciderHello& hello) {
    NetworkPolicy policy;
    Result<std::vector<DomainRule>> allowed = Rules(hello.allowed_domains, PatternList::kAllow);
    Result<std::vector<DomainRule>> denied = Rules(hello.denied_domains, PatternList::kDeny);
    if (!allowed || !denied) {
      return stop("start failed: " + (allowed ? denied.error() : allowed.error()).message());
    }
    policy.allowed = std::move(*allowed);
    policy.denied = std::move(*denied);
    for (std::string_view range : kPrivateRanges) {
      policy.denied_resolved_addresses.push_back(*ParseIpNetwork(range));
    }
    ProxyOptions options;
    options.sandbox_id = "srt-proxy";
    options.require_host_match = true;
    options.refuse_opaque_tunnels = true;
    options.tls = tls;
    options.decider = link.get();
    options.plaintext_header_set = o.plaintext_header_set;
    for (const std::string& name : o.strip_response_headers) {
      options.strip_response_headers.push_back(srt::ascii::FoldHeaderName(name));
    }
    if (o.debug) {
      options.on_record = [log = o.log](const ConnectionRecord& r) {
        log("srt proxy: " + FormatRecordText(r));
      };
    }
    Result<std::unique_ptr<ProxyServer>> made = ProxyServer::Create(
        loop, std::move(options), std::move(resolver), BuildNetworkRules(policy, own));
    if (!made) return stop("start failed: " + made.error().message());
    server = std::move(*made);
    Result<void> added = server->AddListener(std::move(o.listener), ListenerRole::kProxy);
    if (!added) return stop("start failed: " + added.error().message());
    o.log("srt proxy: serving " + o.listening_on);
  };
  SRT_ASSIGN_OR_RETURN(link, DeciderLink::Start(loop, std::move(link_options)));

  FdHandler lifeline;
  if (o.lifeline) {
    lifeline.fn = [&] {
      char buf[4096];
      const ssize_t n = read(o.lifeline.get(), buf, sizeof buf);
      if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) return;
      loop.Remove(o.lifeline.get());
      stop(n == 0 ? "lifeline closed" : "lifeline error");
    };
    SRT_RETURN_IF_ERROR(loop.Add(o.lifeline.get(), EPOLLIN | EPOLLRDHUP, &lifeline));
  }
  // Upstream's setInterval(..., N).unref(): a line every N ms while the proxy runs.
  std::function<void()> report_rss = [&] {
    o.log("srt-proxy rss " + std::to_string(ResidentBytes()));
    loop.AddTimer(o.report_rss_every, report_rss);
  };
  if (o.report_rss_every.count() > 0) loop.AddTimer(o.report_rss_every, report_rss);
  FdHandler signals;
  if (o.stop_signals) {
    signals.fn = [&] {
      signalfd_siginfo info{};
      if (read(o.stop_signals.get(), &info, sizeof info) != sizeof info) return;
      stop(info.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
    };
    SRT_RETURN_IF_ERROR(loop.Add(o.stop_signals.get(), EPOLLIN, &signals));
  }
  loop.Run();
  server.reset();
  if (o.lifeline) loop.Remove(o.lifeline.get());
  if (o.stop_signals) loop.Remove(o.stop_signals.get());
  link.reset();
  return stopped;
}

}  // namespace srt::proxy
