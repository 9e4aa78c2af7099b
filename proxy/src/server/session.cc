// SPDX-License-Identifier: Apache-2.0
#include "server/session.h"

#include <sys/socket.h>

#include <cerrno>

#include "server/terminated_session.h"
#include "socks5/socks5_parser.h"

namespace srt::proxy {

Session::Session(ProxyServer& server, UniqueFd client, std::string initial)
    : server_(server), loop_(server.loop()), client_(std::move(client)), in_(std::move(initial)) {}

Session::~Session() {
  loop_.CancelTimer(timer_);
  if (dial_ != 0) server_.dialer().Cancel(dial_);
  // The tunnel, if any, owns the client socket now and unregisters it itself.
  tunnel_.reset();
  if (registered_ && client_) loop_.Remove(client_.get());
}

void Session::OnServerShutdown() {
  if (tunnel_ && tunnel_record_) {
    // A client that had finished (its EOF forwarded, nothing owed to it any more) closed the
    // tunnel; srt only did not wait for the origin's EOF. Otherwise srt cut it.
    const TunnelStats& stats = tunnel_->stats();
    Record(TakeTunnelRecord(stats,
                            stats.client_ended && !tunnel_->owes_client() ? "closed" : "shutdown"));
    return;
  }
  if (!tunnel_) LogInFlight();
}

Session::ReadStatus Session::ReadClient(size_t limit) {
  if (in_.size() >= limit) return ReadStatus::kFull;
  char buf[16 * 1024];
  const size_t want = std::min(sizeof buf, limit - in_.size());
  const ssize_t n = recv(client_.get(), buf, want, 0);
  if (n > 0) {
    in_.append(buf, static_cast<size_t>(n));
    return ReadStatus::kData;
  }
  if (n == 0) return ReadStatus::kEof;
  if (errno == EAGAIN || errno == EINTR) return ReadStatus::kAgain;
  return ReadStatus::kError;
}

bool Session::FlushClient() {
  while (out_sent_ < out_.size()) {
    const ssize_t n =
        send(client_.get(), out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) break;
      return false;
    }
    out_sent_ += static_cast<size_t>(n);
  }
  if (out_sent_ == out_.size()) {
    out_.clear();
    out_sent_ = 0;
  } else if (out_sent_ > size_t{64} * 1024) {
    out_.erase(0, out_sent_);
    out_sent_ = 0;
  }
  return true;
}

void Session::SendAndClose(std::string_view bytes) {
  QueueClient(bytes);
  close_after_flush_ = true;
  ArmTimeout(server_.options().handshake_timeout);  // for the write; the drain gets less
  ContinueClose();
}

void Session::ContinueClose() {
  if (!write_shut_) {
    if (!FlushClient()) return End();
    if (client_backlog() > 0) {
      if (!SetClientInterest(EPOLLOUT)) return End();
      return;
    }
    (void)shutdown(client_.get(), SHUT_WR);
    write_shut_ = true;
    ArmTimeout(kLingerTimeout);
    if (!SetClientInterest(EPOLLIN | EPOLLRDHUP)) return End();
  }
  char scratch[16 * 1024];
  for (;;) {
    const ssize_t n = recv(client_.get(), scratch, sizeof scratch, 0);
    if (n > 0) {
      drained_ += static_cast<size_t>(n);
      if (drained_ > kLingerDrainBytes) return End();
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    return End();  // EOF or an error: the client has everything or is gone
  }
}

std::string Session::TakeClientBacklog() {
  std::string pending = out_.substr(out_sent_);
  out_.clear();
  out_sent_ = 0;
  return pending;
}

UniqueFd Session::ReleaseClient() {
  if (registered_) loop_.Remove(client_.get());
  registered_ = false;
  return std::move(client_);
}

bool Session::SetClientInterest(uint32_t events) {
  // A mask of 0 unregisters: epoll reports EPOLLHUP and EPOLLERR whatever the mask, and a
  // level-triggered hang-up nobody reads would spin the loop.
  if (events == 0) {
    if (registered_) loop_.Remove(client_.get());
    registered_ = false;
    return true;
  }
  if (!registered_) {
    if (!loop_.Add(client_.get(), events, this)) return false;
    registered_ = true;
    interest_ = events;
    return true;
  }
  if (events == interest_) return true;
  if (!loop_.Modify(client_.get(), events)) return false;
  interest_ = events;
  return true;
}

void Session::ArmTimeout(std::chrono::milliseconds after) {
  timeout_at_ = std::chrono::steady_clock::now() + after;
  // Sessions re-arm on every read and write (several times per request): a timer due no later
  // than the new deadline stays and, when it fires early, starts another for what is left,
  // instead of a cancel and an add (a hash-map node and a heap entry) per call.
  if (timer_ != EventLoop::kNoTimer && timer_due_ <= timeout_at_) return;
  loop_.CancelTimer(timer_);
  StartTimer();
}

void Session::StartTimer() {
  timer_due_ = timeout_at_;
  const auto wait =
      std::chrono::ceil<std::chrono::milliseconds>(timeout_at_ - std::chrono::steady_clock::now());
  timer_ = loop_.AddTimer(wait, [this] {
    timer_ = EventLoop::kNoTimer;
    if (std::chrono::steady_clock::now() < timeout_at_) return StartTimer();  // re-armed since
    if (close_after_flush_) return End();
    OnTimeout();
  });
}

void Session::CancelTimeout() {
  loop_.CancelTimer(timer_);
  timer_ = EventLoop::kNoTimer;
}

ConnectionRecord Session::NewRecord(Protocol protocol, std::string host, uint16_t port) const {
  ConnectionRecord record;
  record.time = std::chrono::system_clock::now();
  record.protocol = protocol;
  record.host = std::move(host);
  record.port = port;
  return record;
}

void Session::NoteDial(ConnectionRecord& record, const DialOutcome& outcome) {
  if (outcome.ok() || outcome.failure == DialFailure::kConnect) {
    record.address =
        outcome.route_address.empty() ? FormatEndpoint(outcome.endpoint) : outcome.route_address;
  }
  record.via_parent = outcome.via_parent;
  if (outcome.failure == DialFailure::kBlocked) {
    // Every resolved address was refused: a denial, not a failed dial.
    record.allowed = false;
    record.reason = outcome.error;
  } else if (!outcome.ok()) {
    record.end = "dial-failed";
    record.error = outcome.error;
  }
}

void Session::Dial(DialRequest request, std::function<void(DialOutcome)> done) {
  dial_ = server_.dialer().Dial(std::move(request),
                                [this, done = std::move(done)](DialOutcome outcome) {
                                  dial_ = 0;
                                  done(std::move(outcome));
                                });
}

void Session::HandOverToTermination(DialOutcome outcome, std::string_view to_client,
                                    ConnectionRecord record, const Host& host, uint16_t port,
                                    std::shared_ptr<const NetworkRules> rules,
                                    std::unique_ptr<TlsTunnelSlot> slot) {
  std::string out = TakeClientBacklog() + std::string(to_client);  // before the client leaves
  TerminatedTunnel tunnel{server_,
                          ReleaseClient(),
                          std::move(outcome.fd),
                          std::move(in_),
                          std::move(out),
                          std::move(outcome.leftover),
                          std::move(record),
                          host,
                          port,
                          std::move(rules),
                          std::move(slot)};
  Session& next = server_.Adopt(MakeTerminatedSession(std::move(tunnel)));
  End();  // destroys *this: nothing of it is used below
  next.Start();
}

void Session::StartOpaqueTunnel(UniqueFd upstream, const std::string& to_client,
                                ConnectionRecord record, const Host& host, uint16_t port) {
  if (!server_.options().require_host_match) {
    return StartTunnel(std::move(upstream), std::move(in_), to_client, std::move(record));
  }
  std::string out = TakeClientBacklog() + to_client;  // before the client leaves
  PeekedTunnel tunnel{ReleaseClient(),
                      std::move(in_),
                      std::move(out),
                      std::move(upstream),
                      std::move(record),
                      host,
                      port};
  Session& next = server_.Adopt(MakePeekSession(server_, std::move(tunnel)));
  End();  // destroys *this: nothing of it is used below
  next.Start();
}

void Session::StartTunnel(UniqueFd upstream, std::string to_upstream, const std::string& to_client,
                          ConnectionRecord record) {
  CancelTimeout();
  if (registered_) loop_.Remove(client_.get());
  registered_ = false;
  // Bytes queued for the client and not written yet go first.
  std::string pending = out_.substr(out_sent_) + to_client;
  out_.clear();
  out_sent_ = 0;
  tunnel_record_ = std::move(record);
  tunnel_start_ = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Tunnel>> tunnel = Tunnel::Start(
      loop_, std::move(client_), std::move(upstream), std::move(to_upstream), std::move(pending),
      server_.options().tunnel, [this](TunnelEnd end, const TunnelStats& stats, std::string error) {
        ConnectionRecord done = TakeTunnelRecord(stats, TunnelEndName(end));
        done.error = std::move(error);
        Record(done);
        End();
      });
  if (!tunnel) {
    ConnectionRecord failed = std::move(*tunnel_record_);
    tunnel_record_.reset();
    failed.end = "error";
    failed.error = tunnel.error().message();
    Record(failed);
    return End();
  }
  tunnel_ = std::move(*tunnel);
}

ConnectionRecord Session::TakeTunnelRecord(const TunnelStats& stats, std::string_view end) {
  ConnectionRecord record = std::move(*tunnel_record_);
  tunnel_record_.reset();
  record.bytes_up = stats.bytes_up;
  record.bytes_down = stats.bytes_down;
  record.duration = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - tunnel_start_);
  record.end = std::string(end);
  return record;
}

void Session::End() { server_.EndSession(this); }

void Session::Abort() {
  if (client_) {
    const linger reset{1, 0};
    (void)setsockopt(client_.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  }
  End();
}

namespace {

// Reads the first byte and hands the connection to the session for its protocol.
class MuxSession final : public Session {
 public:
  using Session::Session;

  void Start() override {
    ArmTimeout(server_.options().handshake_timeout);
    if (!SetClientInterest(EPOLLIN)) return End();
  }

  void OnEvents(uint32_t) override {
    if (closing()) return ContinueClose();
    switch (ReadClient(1)) {
      case ReadStatus::kAgain:
        return;
      case ReadStatus::kEof:
      case ReadStatus::kError:
        return End();
      case ReadStatus::kData:
      case ReadStatus::kFull:
        break;
    }
    const auto first = static_cast<uint8_t>(in_[0]);
    if (socks5::LooksLikeSocks4(first)) return Abort();  // no credentials in SOCKS4
    std::unique_ptr<Session> next =
        socks5::LooksLikeSocks5(first) ? MakeSocks5Session(server_, ReleaseClient(), std::move(in_))
                                       : MakeHttpSession(server_, ReleaseClient(), std::move(in_));
    Session& adopted = server_.Adopt(std::move(next));
    End();
    adopted.Start();
  }
};

// Relays a client of the user's own proxy to it, unjudged (the user chose that proxy).
class ForwardSession final : public Session {
 public:
  ForwardSession(ProxyServer& server, UniqueFd client, uint16_t host_port)
      : Session(server, std::move(client), std::string()), host_port_(host_port) {}

  void Start() override {
    record_ = NewRecord(Protocol::kExternal, "127.0.0.1", host_port_);
    record_.allowed = true;
    IpAddress loopback;
    loopback.bytes[0] = 127;
    loopback.bytes[3] = 1;
    Dial({HostFromAddress(loopback), host_port_, server_.rules(), /*tunnel=*/true},
         [this](DialOutcome outcome) {
           NoteDial(record_, outcome);
           if (!outcome.ok()) {
             Record(record_);
             return Abort();
           }
           StartTunnel(std::move(outcome.fd), std::string(), outcome.leftover, std::move(record_));
         });
  }
  void OnEvents(uint32_t) override {}

 private:
  void LogInFlight() override {
    if (dial_ == 0) return;
    record_.end = "shutdown";
    Record(record_);
  }

  const uint16_t host_port_;
  ConnectionRecord record_;
};

}  // namespace

std::unique_ptr<Session> MakeMuxSession(ProxyServer& server, UniqueFd client) {
  return std::make_unique<MuxSession>(server, std::move(client), std::string());
}

std::unique_ptr<Session> MakeForwardSession(ProxyServer& server, UniqueFd client,
                                            uint16_t host_port) {
  return std::make_unique<ForwardSession>(server, std::move(client), host_port);
}

}  // namespace srt::proxy
