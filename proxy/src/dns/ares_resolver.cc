// SPDX-License-Identifier: Apache-2.0
// dns/ares_resolver.cc: the c-ares resolver on the proxy's EventLoop.
//
// How c-ares is driven (its documented event-loop contract, c-ares 1.18):
//   - ARES_OPT_SOCK_STATE_CB tells us when c-ares opens, re-arms or closes a socket; we mirror
//     that into EventLoop::Add/Modify/Remove, with one small SocketWatcher handler per socket.
//   - A readiness event becomes ares_process_fd(channel, read_fd, write_fd).
//   - One loop timer, re-armed from ares_timeout() after every call into c-ares, becomes
//     ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD), which handles retries and
//     timeouts.
//   - ares_set_socket_functions gives c-ares sockets that are CLOEXEC and non-blocking from
//     birth (house style §2.4); c-ares itself would only set FD_CLOEXEC after socket(2).
// User callbacks never run inside c-ares: a finished lookup is queued and delivered from a
// zero-delay loop timer. That keeps Resolve() from ever calling back synchronously (c-ares does
// for IP literals, /etc/hosts hits and early errors), keeps user code (which may Resolve, Cancel
// or destroy us) off c-ares' stack, and gives Cancel() one place to take effect.
#include <ares.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "dns/resolver.h"

namespace srt::proxy {
namespace {

// --- c-ares library state and RAII ----------------------------------------------------------

// ares_library_init is not thread-safe and must run once per process before any channel; there
// may be several proxies (tests), so guard it. It is never undone: ares_library_cleanup would
// race with other channels, and on Linux the library holds nothing worth freeing.
int AresLibraryInit() {
  static std::once_flag once;
  static int status = ARES_SUCCESS;
  std::call_once(once, [] { status = ares_library_init(ARES_LIB_INIT_ALL); });
  return status;
}

struct AddrinfoDeleter {
  void operator()(ares_addrinfo* ai) const { ares_freeaddrinfo(ai); }
};
using AddrinfoPtr = std::unique_ptr<ares_addrinfo, AddrinfoDeleter>;

// c-ares' socket hooks (ares.h "Virtual function set to have user-managed socket IO"). With them
// installed c-ares sets no socket option itself, so asocket must return a non-blocking socket.
ares_socket_t AresSocket(int domain, int type, int protocol, void* /*user*/) {
  return ::socket(domain, type | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);
}
int AresClose(ares_socket_t fd, void* /*user*/) { return ::close(fd); }
int AresConnect(ares_socket_t fd, const sockaddr* addr, ares_socklen_t len, void* /*user*/) {
  return ::connect(fd, addr, len);
}
ares_ssize_t AresRecvFrom(ares_socket_t fd, void* buf, size_t len, int flags, sockaddr* from,
                          ares_socklen_t* from_len, void* /*user*/) {
  return ::recvfrom(fd, buf, len, flags, from, from_len);
}
ares_ssize_t AresSendv(ares_socket_t fd, const iovec* iov, int iovcnt, void* /*user*/) {
  // sendmsg rather than writev: MSG_NOSIGNAL, so a TCP server that hung up cannot SIGPIPE us
  // (the loop thread blocks signals, but a pending SIGPIPE would still reach srt's signalfd).
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = static_cast<size_t>(iovcnt);
  return ::sendmsg(fd, &msg, MSG_NOSIGNAL);
}
const ares_socket_functions kSocketFunctions = {AresSocket, AresClose, AresConnect, AresRecvFrom,
                                                AresSendv};

// --- Options -------------------------------------------------------------------------------

Result<void> ValidateOptions(const ResolverOptions& o) {
  if (o.timeout.count() <= 0 || o.timeout.count() > INT_MAX) {
    return MakeError(Errc::kInvalidArgument, "resolver timeout must be between 1 ms and " +
                                                 std::to_string(INT_MAX) + " ms, got " +
                                                 std::to_string(o.timeout.count()));
  }
  if (o.tries < 1) {
    return MakeError(Errc::kInvalidArgument,
                     "resolver tries must be at least 1, got " + std::to_string(o.tries));
  }
  if (o.max_answers < 1) {
    return MakeError(Errc::kInvalidArgument, "resolver max_answers must be at least 1");
  }
  if (o.max_inflight < 1) {
    return MakeError(Errc::kInvalidArgument, "resolver max_inflight must be at least 1");
  }
  return Ok();
}

// --- Results -------------------------------------------------------------------------------

ResolveError MapStatus(int status) {
  switch (status) {
    case ARES_SUCCESS:
      return ResolveError::kOk;
    case ARES_ENOTFOUND:
    case ARES_ENODATA:
    case ARES_ENONAME:
      return ResolveError::kNotFound;
    case ARES_ETIMEOUT:
      return ResolveError::kTimeout;
    case ARES_ESERVFAIL:
    case ARES_EFORMERR:
    case ARES_ENOTIMP:
    case ARES_EBADRESP:
    case ARES_EOF:
    case ARES_EREFUSED:
    case ARES_ECONNREFUSED:
      return ResolveError::kServerFailure;
    case ARES_EBADNAME:
    case ARES_EBADSTR:
      return ResolveError::kBadName;
    default:
      return ResolveError::kInternal;
  }
}

// ares_strerror, except where c-ares 1.18's text misleads: ECONNREFUSED ("Could not contact DNS
// servers") is also what a SERVFAIL or REFUSED from every server ends in (see kServerFailure).
std::string Reason(int status) {
  if (status == ARES_ECONNREFUSED) {
    return "no DNS server gave a usable answer (server failure, refusal, or unreachable)";
  }
  return ares_strerror(status);
}

ResolveResult Failure(ResolveError error, std::string_view name, std::string_view why) {
  ResolveResult r;
  r.error = error;
  r.error_text = "resolve '" + std::string(name) + "': " + std::string(why);
  return r;
}

void AppendUnique(std::vector<IpAddress>& out, const IpAddress& ip) {
  if (std::find(out.begin(), out.end(), ip) == out.end()) {
    out.push_back(ip);
  }
}

ResolveResult FromAddrinfo(const ares_addrinfo* ai, std::string_view name, size_t max_answers) {
  ResolveResult r;
  for (const ares_addrinfo_node* n = ai != nullptr ? ai->nodes : nullptr;
       n != nullptr && r.addresses.size() < max_answers; n = n->ai_next) {
    IpAddress ip;
    if (n->ai_family == AF_INET && n->ai_addrlen >= sizeof(sockaddr_in)) {
      sockaddr_in sin;
      std::memcpy(&sin, n->ai_addr, sizeof(sin));
      ip.family = IpAddress::Family::kIpv4;
      std::memcpy(ip.bytes.data(), &sin.sin_addr, 4);
    } else if (n->ai_family == AF_INET6 && n->ai_addrlen >= sizeof(sockaddr_in6)) {
      sockaddr_in6 sin6;
      std::memcpy(&sin6, n->ai_addr, sizeof(sin6));
      ip.family = IpAddress::Family::kIpv6;
      std::memcpy(ip.bytes.data(), &sin6.sin6_addr, 16);
    } else {
      continue;
    }
    AppendUnique(r.addresses, ip);
  }
  if (r.addresses.empty()) {
    return Failure(ResolveError::kNotFound, name, "no A or AAAA records");
  }
  return r;
}

// Answers that need no DNS: IP literals (also bracketed IPv6) and, per RFC 6761 §6.3, localhost
// (c-ares 1.18 returns ECONNREFUSED for it when /etc/hosts is not consulted). Also rejects names
// c-ares would silently cut short (NUL bytes) or that cannot be a DNS name at all.
std::optional<ResolveResult> AnswerLocally(const std::string& name) {
  // RFC 1035 §2.3.4: 253 characters of dotted text, one more with the trailing dot.
  if (name.empty() || name.size() > kMaxDnsNameTextBytes + 1 ||
      (name.size() == kMaxDnsNameTextBytes + 1 && name.back() != '.')) {
    return Failure(ResolveError::kBadName, name, "not a valid host name (length)");
  }
  if (name.find('\0') != std::string::npos) {
    return Failure(ResolveError::kBadName, std::string_view(name.c_str()),
                   "not a valid host name (NUL byte)");
  }
  std::string_view literal = name;
  if (literal.size() > 2 && literal.front() == '[' && literal.back() == ']') {
    literal = literal.substr(1, literal.size() - 2);
    if (auto ip = ParseIpv6(literal)) {
      return ResolveResult{{*ip}, ResolveError::kOk, {}};
    }
  }
  if (auto ip = ParseIpAddress(literal)) {
    return ResolveResult{{*ip}, ResolveError::kOk, {}};
  }
  if (NameKey(name) == "localhost") {
    ResolveResult r;
    r.addresses.push_back(*ParseIpv4("127.0.0.1"));
    r.addresses.push_back(*ParseIpv6("::1"));
    return r;
  }
  return std::nullopt;
}

// --- The resolver ------------------------------------------------------------------------------

class AresResolver final : public Resolver {
 public:
  AresResolver(EventLoop& loop, const ResolverOptions& options)
      : loop_(loop), options_(options), alive_(std::make_shared<char>()) {}
  ~AresResolver() override;
  AresResolver(const AresResolver&) = delete;
  AresResolver& operator=(const AresResolver&) = delete;

  Result<void> Init(const std::vector<Endpoint>& servers);
  QueryId Resolve(const std::string& name, Callback done) override;
  void Cancel(QueryId id) override;

 private:
  class SocketWatcher final : public Handler {
   public:
    SocketWatcher(AresResolver* resolver, int fd) : resolver_(resolver), fd_(fd) {}
    // c-ares may close this socket inside ares_process_fd and we then delete this watcher, so
    // forwarding must be the last thing it does.
    void OnEvents(uint32_t events) override { resolver_->OnSocketEvents(fd_, events); }

   private:
    AresResolver* resolver_;
    int fd_;
  };
  // What c-ares holds (as `arg`) for one ares_getaddrinfo until it calls back.
  struct AresCall {
    AresResolver* resolver;
    QueryId id;
    std::string name;
  };

  static void OnSocketState(void* data, ares_socket_t fd, int readable, int writable);
  static void OnAddrinfo(void* arg, int status, int timeouts, ares_addrinfo* result);
  void OnSocketEvents(int fd, uint32_t events);
  void ArmTimer();
  void Finish(QueryId id, ResolveResult result);
  void Deliver();

  EventLoop& loop_;
  const ResolverOptions options_;
  ares_channel channel_ = nullptr;
  std::unordered_map<int, std::unique_ptr<SocketWatcher>> sockets_;
  // Lookups whose `done` may still run; Cancel() erases here.
  std::unordered_map<QueryId, Callback> pending_;
  // Finished lookups waiting for Deliver().
  std::vector<std::pair<QueryId, ResolveResult>> finished_;
  EventLoop::TimerId ares_timer_ = EventLoop::kNoTimer;
  EventLoop::TimerId deliver_timer_ = EventLoop::kNoTimer;
  size_t in_ares_ = 0;  // ares_getaddrinfo calls c-ares has not called back yet
  QueryId next_id_ = 1;
  bool destroying_ = false;
  // Expires when we are destroyed; Deliver() checks it after every user callback.
  std::shared_ptr<char> alive_;
};

Result<void> AresResolver::Init(const std::vector<Endpoint>& servers) {
  if (int status = AresLibraryInit(); status != ARES_SUCCESS) {
    return MakeError(Errc::kSystem, std::string("ares_library_init: ") + ares_strerror(status));
  }
  ares_options opts{};
  int mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES;
  opts.sock_state_cb = &AresResolver::OnSocketState;
  opts.sock_state_cb_data = this;
  opts.timeout = static_cast<int>(options_.timeout.count());
  opts.tries = options_.tries;
  // Never a search list: the policy judged the name as given, and vault.example.test retried as
  // vault.example.test.corp.example (resolv.conf's `search`, tried first under a high `ndots`)
  // is a name nothing allowed, whose query would leave the host and whose address the sandbox
  // would be shown and sent to.
  mask |= ARES_OPT_DOMAINS;
  opts.domains = nullptr;
  opts.ndomains = 0;
  char lookups[] = "b";
  if (!servers.empty()) {
    // Explicit servers are the whole truth: DNS only, no /etc/hosts.
    mask |= ARES_OPT_LOOKUPS;
    opts.lookups = lookups;
  }
  if (int status = ares_init_options(&channel_, &opts, mask); status != ARES_SUCCESS) {
    channel_ = nullptr;
    return MakeError(Errc::kSystem, std::string("ares_init_options: ") + ares_strerror(status));
  }
  ares_set_socket_functions(channel_, &kSocketFunctions, nullptr);
  if (!servers.empty()) {
    std::vector<ares_addr_port_node> nodes(servers.size());
    for (size_t i = 0; i < servers.size(); ++i) {
      ares_addr_port_node& n = nodes[i];
      n.next = i + 1 < servers.size() ? &nodes[i + 1] : nullptr;
      if (servers[i].address.family == IpAddress::Family::kIpv4) {
        n.family = AF_INET;
        std::memcpy(&n.addr.addr4, servers[i].address.bytes.data(), 4);
      } else {
        n.family = AF_INET6;
        std::memcpy(&n.addr.addr6, servers[i].address.bytes.data(), 16);
      }
      n.udp_port = servers[i].port;
      n.tcp_port = servers[i].port;
    }
    if (int status = ares_set_servers_ports(channel_, nodes.data()); status != ARES_SUCCESS) {
      return MakeError(Errc::kSystem,
                       std::string("ares_set_servers_ports: ") + ares_strerror(status));
    }
  }
  return Ok();
}

AresResolver::~AresResolver() {
  loop_.AssertInLoopThread();
  destroying_ = true;
  alive_.reset();
  loop_.CancelTimer(ares_timer_);
  loop_.CancelTimer(deliver_timer_);
  // Taken out first: destroying a callback may run a session's destructor, which may Cancel().
  auto dropped = std::move(pending_);
  pending_.clear();
  finished_.clear();
  if (channel_ != nullptr) {
    // Calls OnAddrinfo(ARES_EDESTRUCTION or whatever half-finished lookups had; ignored while
    // destroying_) for every lookup and OnSocketState(fd, 0, 0) for every socket it closes.
    ares_destroy(channel_);
    channel_ = nullptr;
  }
  for (auto& [fd, watcher] : sockets_) {
    loop_.Remove(fd);  // not expected: c-ares reports every close
  }
  sockets_.clear();
  dropped.clear();
}

Resolver::QueryId AresResolver::Resolve(const std::string& name, Callback done) {
  loop_.AssertInLoopThread();
  QueryId id = next_id_++;
  pending_.emplace(id, std::move(done));
  if (auto local = AnswerLocally(name)) {
    Finish(id, std::move(*local));
    return id;
  }
  if (in_ares_ >= options_.max_inflight) {
    Finish(id,
           Failure(ResolveError::kOverloaded, name,
                   "too many lookups in flight (" + std::to_string(options_.max_inflight) + ")"));
    return id;
  }
  ares_addrinfo_hints hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;  // one node per address instead of one per socket type
  ++in_ares_;
  auto call = std::make_unique<AresCall>(AresCall{this, id, name});
  // c-ares owns `call` until it calls OnAddrinfo, which it does exactly once (also on
  // destruction); OnAddrinfo takes it back into a unique_ptr.
  ares_getaddrinfo(channel_, name.c_str(), nullptr, &hints, &AresResolver::OnAddrinfo,
                   call.release());
  ArmTimer();
  return id;
}

void AresResolver::Cancel(QueryId id) {
  loop_.AssertInLoopThread();
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    return;
  }
  // c-ares has no per-lookup cancel (ares_cancel ends all of them), so the lookup runs on and
  // its answer is dropped in Deliver(); in_ares_ keeps counting it until then.
  Callback doomed = std::move(it->second);
  pending_.erase(it);
}

void AresResolver::OnSocketState(void* data, ares_socket_t fd, int readable, int writable) {
  auto* self = static_cast<AresResolver*>(data);
  if (readable == 0 && writable == 0) {
    // c-ares closes the socket right after this returns.
    self->loop_.Remove(fd);
    self->sockets_.erase(fd);
    return;
  }
  uint32_t events = 0;
  if (readable != 0) {
    events |= EPOLLIN;
  }
  if (writable != 0) {
    events |= EPOLLOUT;
  }
  if (self->sockets_.contains(fd)) {
    // Cannot fail for a registered fd short of a broken epoll fd; a lost update only delays the
    // lookup until its c-ares timeout.
    (void)self->loop_.Modify(fd, events);
    return;
  }
  auto watcher = std::make_unique<SocketWatcher>(self, fd);
  // On failure (ENOSPC: fs.epoll.max_user_watches) the socket is never polled and its lookups
  // end through the c-ares timeout: degraded, not stuck.
  if (self->loop_.Add(fd, events, watcher.get()).has_value()) {
    self->sockets_.emplace(fd, std::move(watcher));
  }
}

void AresResolver::OnSocketEvents(int fd, uint32_t events) {
  // The loop reports hang-ups and errors as EPOLLIN: c-ares then reads, sees the error and moves
  // on to the next server.
  ares_socket_t read_fd = (events & EPOLLIN) != 0 ? fd : ARES_SOCKET_BAD;
  ares_socket_t write_fd = (events & EPOLLOUT) != 0 ? fd : ARES_SOCKET_BAD;
  ares_process_fd(channel_, read_fd, write_fd);
  ArmTimer();
}

void AresResolver::ArmTimer() {
  loop_.CancelTimer(ares_timer_);
  ares_timer_ = EventLoop::kNoTimer;
  if (destroying_ || in_ares_ == 0) {
    return;
  }
  timeval tv{};
  if (ares_timeout(channel_, nullptr, &tv) == nullptr) {
    return;  // nothing waits on a timeout
  }
  // Round up to whole milliseconds so that the timer never fires before c-ares' deadline.
  auto ms = std::chrono::milliseconds(tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000);
  ares_timer_ = loop_.AddTimer(ms, [this] {
    ares_timer_ = EventLoop::kNoTimer;
    ares_process_fd(channel_, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    ArmTimer();
  });
}

void AresResolver::OnAddrinfo(void* arg, int status, int /*timeouts*/, ares_addrinfo* result) {
  std::unique_ptr<AresCall> call(static_cast<AresCall*>(arg));
  AddrinfoPtr ai(result);
  AresResolver* self = call->resolver;
  --self->in_ares_;
  if (self->destroying_ || status == ARES_EDESTRUCTION || status == ARES_ECANCELLED) {
    return;  // nobody is to hear about it
  }
  if (!self->pending_.contains(call->id)) {
    return;  // cancelled while c-ares was working on it
  }
  if (status == ARES_SUCCESS) {
    self->Finish(call->id, FromAddrinfo(ai.get(), call->name, self->options_.max_answers));
  } else {
    self->Finish(call->id, Failure(MapStatus(status), call->name, Reason(status)));
  }
}

void AresResolver::Finish(QueryId id, ResolveResult result) {
  finished_.emplace_back(id, std::move(result));
  if (deliver_timer_ == EventLoop::kNoTimer) {
    deliver_timer_ = loop_.AddTimer(std::chrono::milliseconds(0), [this] { Deliver(); });
  }
}

void AresResolver::Deliver() {
  deliver_timer_ = EventLoop::kNoTimer;
  std::vector<std::pair<QueryId, ResolveResult>> batch;
  batch.swap(finished_);
  std::weak_ptr<char> alive = alive_;
  for (auto& [id, result] : batch) {
    if (alive.expired()) {
      return;  // an earlier callback destroyed this resolver
    }
    auto it = pending_.find(id);
    if (it == pending_.end()) {
      continue;  // cancelled after it finished
    }
    Callback done = std::move(it->second);
    pending_.erase(it);
    done(std::move(result));
  }
}

}  // namespace

std::string_view ResolveErrorName(ResolveError error) {
  switch (error) {
    case ResolveError::kOk:
      return "ok";
    case ResolveError::kNotFound:
      return "not-found";
    case ResolveError::kTimeout:
      return "timeout";
    case ResolveError::kServerFailure:
      return "server-failure";
    case ResolveError::kBadName:
      return "bad-name";
    case ResolveError::kOverloaded:
      return "overloaded";
    case ResolveError::kInternal:
      return "internal";
  }
  return "unknown";
}

Result<std::unique_ptr<Resolver>> CreateAresResolver(EventLoop& loop,
                                                     const ResolverOptions& options) {
  loop.AssertInLoopThread();
  SRT_RETURN_IF_ERROR(ValidateOptions(options));
  auto resolver = std::make_unique<AresResolver>(loop, options);
  SRT_RETURN_IF_ERROR(resolver->Init(options.servers));
  return std::unique_ptr<Resolver>(std::move(resolver));
}

}  // namespace srt::proxy
