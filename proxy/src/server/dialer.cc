// SPDX-License-Identifier: Apache-2.0
#include "server/dialer.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/strings.h"
#include "base/system_text.h"
#include "http/head_parser.h"

namespace srt::proxy {

class Dialer::Attempt final : public Handler {
 public:
  Attempt(Dialer& dialer, Id id, DialRequest request, Done done)
      : dialer_(dialer), id_(id), request_(std::move(request)), done_(std::move(done)) {
    const NetworkRules* rules = request_.rules.get();
    if (rules != nullptr && rules->mitm &&
        rules->mitm->domains.Evaluate(request_.host, request_.port).allowed) {
      // network.mitmProxy: a parent proxy on a unix socket, asked no credentials.
      mitm_ = &*rules->mitm;
      mitm_parent_.display = "unix:" + mitm_->socket_path;
      parent_ = &mitm_parent_;
    } else if (dialer_.options_.parents != nullptr) {
      parent_ = dialer_.options_.parents->For(request_.tunnel, request_.host, request_.port);
    }
  }

  ~Attempt() override {
    if (query_ != 0) dialer_.resolver_.Cancel(query_);
    dialer_.loop_.CancelTimer(timer_);
    if (fd_) dialer_.loop_.Remove(fd_.get());
  }

  Done TakeDone() { return std::move(done_); }

  // Begin() runs from a zero-delay timer, never inside Dial(), so `done` cannot run inside it
  // either; the destructor cancels the timer.
  void Schedule() {
    timer_ = dialer_.loop_.AddTimer(std::chrono::milliseconds(0), [this] {
      timer_ = EventLoop::kNoTimer;
      Begin();
    });
  }

  void Begin() {
    if (mitm_ != nullptr) return ConnectUnix();
    const Host& target = parent_ != nullptr ? parent_->host : request_.host;
    const uint16_t port = parent_ != nullptr ? parent_->port : request_.port;
    if (target.is_ip()) {
      targets_.push_back(Endpoint{target.address, port});
      ConnectNext();
      return;
    }
    query_ = dialer_.resolver_.Resolve(
        target.text, [this](ResolveResult result) { Resolved(std::move(result)); });
  }

  void OnEvents(uint32_t events) override {
    if (phase_ == Phase::kConnecting) {
      int err = 0;
      socklen_t len = sizeof err;
      if (getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err == 0 && (events & EPOLLOUT) == 0) return;  // spurious: wait for the outcome
      if (err != 0 && mitm_ != nullptr)
        return FailParent(std::string("connect: ") + ErrnoText(err));
      if (err != 0) {
        last_error_ = "connect " + FormatEndpoint(current_) + ": " + ErrnoText(err);
        DropSocket();
        ConnectNext();
        return;
      }
      Connected();
      return;
    }
    // Phase::kParentHandshake.
    if ((events & EPOLLOUT) != 0 && sent_ < out_.size()) {
      const ssize_t n = send(fd_.get(), out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return FailParent(std::string("sending CONNECT: ") + ErrnoText(errno));
      }
      if (n > 0) sent_ += static_cast<size_t>(n);
      if (sent_ == out_.size()) (void)dialer_.loop_.Modify(fd_.get(), EPOLLIN | EPOLLRDHUP);
    }
    if ((events & EPOLLIN) == 0) return;
    char buf[4096];
    const size_t room = http::Limits{}.max_head_bytes - in_.size();
    const ssize_t n = recv(fd_.get(), buf, std::min(sizeof buf, room), 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      return FailParent(std::string("reading its answer: ") + ErrnoText(errno));
    }
    if (n == 0) return FailParent("closed the connection before answering the CONNECT");
    in_.append(buf, static_cast<size_t>(n));
    http::ResponseHeadResult head = http::ParseResponseHead(in_, {}, resume_);
    if (head.status == ParseStatus::kNeedMore) {
      resume_ = head.resume;
      if (in_.size() >= http::Limits{}.max_head_bytes) {
        return FailParent("sent a response head larger than the limit");
      }
      return;
    }
    if (head.status == ParseStatus::kError) return FailParent("sent a bad response: " + head.error);
    if (head.response.status < 200 || head.response.status > 299) {
      return FailParent("answered " + std::to_string(head.response.status) + " " +
                        head.response.reason);
    }
    leftover_ = in_.substr(head.consumed);
    Succeed();
  }

 private:
  enum class Phase { kResolving, kConnecting, kParentHandshake };

  void Resolved(ResolveResult result) {
    query_ = 0;
    if (!result.ok()) {
      const DialFailure failure =
          result.error == ResolveError::kNotFound ? DialFailure::kNotFound : DialFailure::kResolve;
      std::string text = std::move(result.error_text);
      if (parent_ != nullptr) text = "parent proxy " + parent_->display + ": " + text;
      return Fail(parent_ != nullptr ? DialFailure::kParent : failure, std::move(text));
    }
    if (parent_ != nullptr) {
      // The parent resolves the destination; its own address is not the sandbox's to pick, so
      // the guard does not judge it (upstream-srt.md §1.3: not applied on this route).
      for (const IpAddress& a : result.addresses) {
        targets_.push_back(Endpoint{a, parent_->port});
      }
    } else {
      AddressGuard::Vetted vetted = request_.rules->guard.Vet(
          result.addresses, request_.rules->matcher, request_.port, IsLocalhostName(request_.host));
      if (vetted.dialable.empty()) return Fail(DialFailure::kBlocked, std::move(vetted.refusal));
      for (const IpAddress& a : vetted.dialable) {
        targets_.push_back(Endpoint{a, request_.port});
      }
    }
    ConnectNext();
  }

  // network.mitmProxy's socket (vetted by the facade: a host path the sandbox cannot replace).
  void ConnectUnix() {
    phase_ = Phase::kConnecting;
    const std::string& path = mitm_->socket_path;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) {
      return FailParent("is longer than a unix socket address can hold");
    }
    std::memcpy(address.sun_path, path.data(), path.size());
    UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) return FailParent(std::string("socket: ") + ErrnoText(errno));
    // A non-blocking unix connect completes at once or fails (EAGAIN: its backlog is full).
    if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      return FailParent(std::string("connect: ") + ErrnoText(errno));
    }
    if (Result<void> added = dialer_.loop_.Add(fd.get(), EPOLLOUT, this); !added) {
      return FailParent(added.error().message());
    }
    fd_ = std::move(fd);
    timer_ = dialer_.loop_.AddTimer(dialer_.options_.connect_timeout, [this] {
      timer_ = EventLoop::kNoTimer;
      FailParent(phase_ == Phase::kParentHandshake ? "did not answer the CONNECT in time"
                                                   : "connect: timed out");
    });
  }

  void ConnectNext() {
    phase_ = Phase::kConnecting;
    while (next_ < targets_.size()) {
      current_ = targets_[next_++];
      sockaddr_storage storage;
      const socklen_t length = ToSockaddr(current_, storage);
      UniqueFd fd(socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      if (!fd) {
        last_error_ = std::string("socket: ") + ErrnoText(errno);
        continue;
      }
      const int one = 1;
      (void)setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&storage), length) != 0 &&
          errno != EINPROGRESS) {
        last_error_ = "connect " + FormatEndpoint(current_) + ": " + ErrnoText(errno);
        continue;
      }
      if (Result<void> added = dialer_.loop_.Add(fd.get(), EPOLLOUT, this); !added) {
        last_error_ = added.error().message();
        continue;
      }
      fd_ = std::move(fd);
      const auto timeout = next_ < targets_.size()
                               ? std::min(dialer_.options_.connect_timeout, kFallbackAttemptTimeout)
                               : dialer_.options_.connect_timeout;
      timer_ = dialer_.loop_.AddTimer(timeout, [this] {
        timer_ = EventLoop::kNoTimer;
        if (phase_ == Phase::kParentHandshake) {
          return FailParent("did not answer the CONNECT in time");
        }
        last_error_ = "connect " + FormatEndpoint(current_) + ": timed out";
        DropSocket();
        ConnectNext();
      });
      return;
    }
    std::string error = last_error_.empty() ? "no address to connect to" : last_error_;
    if (parent_ != nullptr) {
      return Fail(DialFailure::kParent, "parent proxy " + parent_->display + ": " + error);
    }
    Fail(DialFailure::kConnect, std::move(error));
  }

  void Connected() {
    if (parent_ == nullptr || !request_.tunnel) return Succeed();
    phase_ = Phase::kParentHandshake;
    const std::string authority = FormatAuthority(request_.host, request_.port);
    out_ = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
    if (!parent_->authorization.empty()) {
      out_ += "Proxy-Authorization: " + parent_->authorization + "\r\n";
    }
    out_ += "\r\n";
    (void)dialer_.loop_.Modify(fd_.get(), EPOLLOUT | EPOLLIN | EPOLLRDHUP);
    // The connect timer keeps running: it now bounds the CONNECT exchange as well.
  }

  void DropSocket() {
    dialer_.loop_.CancelTimer(timer_);
    timer_ = EventLoop::kNoTimer;
    if (fd_) dialer_.loop_.Remove(fd_.get());
    fd_.reset();
  }

  void Succeed() {
    DialOutcome outcome;
    dialer_.loop_.CancelTimer(timer_);
    timer_ = EventLoop::kNoTimer;
    dialer_.loop_.Remove(fd_.get());
    outcome.fd = std::move(fd_);
    outcome.endpoint = current_;
    if (parent_ != nullptr) {
      outcome.via_parent = true;
      outcome.parent_display = parent_->display;
      if (!request_.tunnel) outcome.parent_authorization = parent_->authorization;
      outcome.leftover = std::move(leftover_);
      if (mitm_ != nullptr) outcome.route_address = parent_->display;
    }
    dialer_.Finish(id_, std::move(outcome));  // destroys *this
  }

  void FailParent(const std::string& why) { Fail(DialFailure::kParent, RouteName() + " " + why); }

  std::string RouteName() const {
    return mitm_ != nullptr ? "mitmProxy " + strings::Quote(mitm_->socket_path)
                            : "parent proxy " + parent_->display;
  }

  void Fail(DialFailure failure, std::string error) {
    DialOutcome outcome;
    outcome.failure = failure;
    outcome.error = std::move(error);
    outcome.endpoint = current_;
    dialer_.Finish(id_, std::move(outcome));  // destroys *this
  }

  Dialer& dialer_;
  const Id id_;
  DialRequest request_;
  Done done_;
  const ParentProxy* parent_ = nullptr;
  const MitmRoute* mitm_ = nullptr;  // in request_.rules, which this attempt holds
  ParentProxy mitm_parent_;          // parent_ when mitm_ is set
  Phase phase_ = Phase::kResolving;
  Resolver::QueryId query_ = 0;
  std::vector<Endpoint> targets_;
  size_t next_ = 0;
  Endpoint current_;
  std::string last_error_;
  UniqueFd fd_;
  EventLoop::TimerId timer_ = EventLoop::kNoTimer;
  std::string out_;
  size_t sent_ = 0;
  std::string in_;
  size_t resume_ = 0;
  std::string leftover_;
};

Dialer::Dialer(EventLoop& loop, Resolver& resolver, Options options)
    : loop_(loop), resolver_(resolver), options_(options) {}

Dialer::~Dialer() { attempts_.clear(); }

Dialer::Id Dialer::Dial(DialRequest request, Done done) {
  const Id id = next_id_++;
  attempts_.emplace(id, std::make_unique<Attempt>(*this, id, std::move(request), std::move(done)));
  attempts_[id]->Schedule();
  return id;
}

void Dialer::Cancel(Id id) { attempts_.erase(id); }

void Dialer::Finish(Id id, DialOutcome outcome) {
  auto it = attempts_.find(id);
  if (it == attempts_.end()) return;
  Done done = it->second->TakeDone();
  attempts_.erase(it);
  done(std::move(outcome));
}

}  // namespace srt::proxy
