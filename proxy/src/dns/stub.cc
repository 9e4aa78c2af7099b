// SPDX-License-Identifier: Apache-2.0
// dns/stub.cc: srt's DNS stub: UDP and TCP (RFC 7766) front ends on the proxy's EventLoop, the
// policy check, and real resolution shared by every query for the same name.
//
// Shape: the handlers (UdpSocket, TcpListener, TcpConnection) are thin shims that forward events
// to the Impl. A query that must wait for the resolver becomes a Waiter (the parsed query and where
// its answer goes); waiters for one name hang off one Lookup, i.e. one Resolver::Resolve() call.
// A TCP connection refers to its waiter by id and a waiter to its connection by id, so either side
// can go away first: the other only finds an id that no longer resolves.
#include "dns/stub.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "base/host.h"
#include "dns/message.h"

namespace srt::proxy {
namespace {

// Datagrams read, and connections accepted, per readiness event: one busy socket must not starve
// the rest of the loop (level-triggered epoll calls again while more is queued).
constexpr int kUdpBatch = 64;
constexpr int kAcceptBatch = 64;
// Bigger than any UDP payload (65507 bytes over IPv4), so a datagram is never cut short; also the
// read buffer for TCP.
constexpr size_t kScratchBytes = 65536;
// A TCP connection buffers at most one whole frame: the two-octet length and the message.
constexpr size_t kTcpMaxBuffered = 2 + kDnsTcpMessageBytes;
// The reason given when no policy was configured (Options::refusal_reason is empty).
constexpr std::string_view kNoPolicyReason = "no DNS policy";

// Checks the socket type and makes `fd` non-blocking and CLOEXEC.
Result<void> PrepareSocket(int fd, int type, std::string_view what) {
  int actual = 0;
  socklen_t length = sizeof actual;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &actual, &length) != 0) {
    return SysError(std::string(what) + ": getsockopt(SO_TYPE)");
  }
  if (actual != type) {
    return MakeError(Errc::kInvalidArgument,
                     std::string(what) + ": fd " + std::to_string(fd) + " is not a " +
                         (type == SOCK_DGRAM ? "SOCK_DGRAM" : "SOCK_STREAM") + " socket");
  }
  const int fd_flags = fcntl(fd, F_GETFD);
  if (fd_flags < 0 || fcntl(fd, F_SETFD, fd_flags | FD_CLOEXEC) != 0) {
    return SysError(std::string(what) + ": fcntl(FD_CLOEXEC)");
  }
  const int fl_flags = fcntl(fd, F_GETFL);
  if (fl_flags < 0 || fcntl(fd, F_SETFL, fl_flags | O_NONBLOCK) != 0) {
    return SysError(std::string(what) + ": fcntl(O_NONBLOCK)");
  }
  return Ok();
}

}  // namespace

class DnsStub::Impl {
 public:
  Impl(EventLoop& loop, Resolver& resolver, DnsAnswers& table, Options options)
      : loop_(loop),
        resolver_(resolver),
        table_(table),
        options_(std::move(options)),
        scratch_(kScratchBytes) {}
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  Result<void> AddUdpSocket(UniqueFd socket);
  Result<void> AddTcpListener(UniqueFd socket);
  const Stats& stats() const { return stats_; }

 private:
  class UdpSocket;
  class TcpListener;
  class TcpConnection;

  // Where an answer goes.
  struct UdpPeer {
    UdpSocket* socket = nullptr;  // owned by udp_, lives as long as the stub
    sockaddr_storage address{};
    socklen_t length = 0;
  };
  struct TcpPeer {
    uint64_t connection = 0;  // a key of connections_, if the connection is still open
  };
  using Peer = std::variant<UdpPeer, TcpPeer>;

  // A query waiting for the resolver.
  struct Waiter {
    dns::Query query;  // kAnswer: has a question
    Peer peer;
  };
  // One Resolve() in flight, for every waiter asking about its name.
  struct Lookup {
    Resolver::QueryId id = 0;
    std::vector<uint64_t> waiters;  // keys of waiters_, in arrival order
  };

  // What became of one message.
  struct Outcome {
    enum class Kind { kNothing, kRespond, kWait };
    Kind kind = Kind::kNothing;
    std::vector<uint8_t> response;  // kRespond: unframed
    uint64_t waiter = 0;            // kWait
  };

  // The transport-independent part: parse, policy, limits, start or join a lookup.
  Outcome HandleMessage(std::span<const uint8_t> message, dns::Transport transport,
                        const Peer& peer);
  // Starts (or joins) the lookup of `name` for a new waiter; returns the waiter's id.
  uint64_t Wait(dns::Query query, const Peer& peer);
  void OnResolved(const std::string& name, const ResolveResult& result);
  void Deliver(Waiter waiter, const ResolveResult& result);
  // The real addresses of `name` to answer with (see stub.h), recorded in the table.
  std::vector<IpAddress> Shown(const std::string& name, const std::vector<IpAddress>& resolved);
  // Drops a waiter whose client went away; cancels the lookup when nobody else waits for it.
  void ForgetWaiter(uint64_t id);

  void ReadUdp(UdpSocket& socket);
  void SendUdp(const UdpPeer& peer, std::span<const uint8_t> response);

  void Accept(TcpListener& listener);
  void OnTcpEvents(TcpConnection& connection, uint32_t events);
  // Runs the connection's state machine as far as it gets without waiting for the client or the
  // resolver. May close (destroy) `connection`.
  void Drive(TcpConnection& connection);
  // Queues `response` (unframed) and runs the connection. May close it.
  void RespondTcp(TcpConnection& connection, std::span<const uint8_t> response);
  // (Re)starts the per-query deadline.
  void ArmTimer(TcpConnection& connection);
  // Unregisters and closes `connection` and forgets its waiter. Destroys `connection`.
  void Close(TcpConnection& connection);

  EventLoop& loop_;
  Resolver& resolver_;
  DnsAnswers& table_;
  const Options options_;
  Stats stats_;

  std::vector<std::unique_ptr<UdpSocket>> udp_;
  std::vector<std::unique_ptr<TcpListener>> listeners_;
  std::unordered_map<uint64_t, std::unique_ptr<TcpConnection>> connections_;
  uint64_t next_connection_ = 1;

  std::unordered_map<uint64_t, Waiter> waiters_;  // its size is what max_inflight bounds
  std::unordered_map<std::string, Lookup> lookups_;
  uint64_t next_waiter_ = 1;

  // Receive buffer for datagrams and TCP reads (the loop is single-threaded, so one suffices).
  std::vector<uint8_t> scratch_;
};

// --- Handlers (they own their fd; the loop owns nothing) -----------------------------------------

class DnsStub::Impl::UdpSocket final : public Handler {
 public:
  UdpSocket(Impl& impl, UniqueFd fd) : impl_(impl), fd_(std::move(fd)) {}
  ~UdpSocket() override {
    if (registered_) {
      impl_.loop_.Remove(fd_.get());
    }
  }
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  Result<void> Register() {
    SRT_RETURN_IF_ERROR(impl_.loop_.Add(fd_.get(), EPOLLIN, this));
    registered_ = true;
    return Ok();
  }
  void OnEvents(uint32_t /*epoll_events*/) override { impl_.ReadUdp(*this); }
  int fd() const { return fd_.get(); }

 private:
  Impl& impl_;
  UniqueFd fd_;
  bool registered_ = false;
};

class DnsStub::Impl::TcpListener final : public Handler {
 public:
  TcpListener(Impl& impl, UniqueFd fd) : impl_(impl), fd_(std::move(fd)) {}
  ~TcpListener() override {
    if (registered_) {
      impl_.loop_.Remove(fd_.get());
    }
  }
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  Result<void> Register() {
    SRT_RETURN_IF_ERROR(impl_.loop_.Add(fd_.get(), EPOLLIN, this));
    registered_ = true;
    return Ok();
  }
  void OnEvents(uint32_t /*epoll_events*/) override { impl_.Accept(*this); }
  int fd() const { return fd_.get(); }

 private:
  Impl& impl_;
  UniqueFd fd_;
  bool registered_ = false;
};

// One DNS-over-TCP client. Its state is driven by Impl::Drive(); the fields are the Impl's to use.
class DnsStub::Impl::TcpConnection final : public Handler {
 public:
  enum class State {
    kReading,    // waiting for (the rest of) a query: EPOLLIN
    kResolving,  // a query waits for the resolver: no interest (errors still arrive)
    kWriting,    // a response is being written: EPOLLOUT
  };

  TcpConnection(Impl& impl, uint64_t id, UniqueFd fd) : impl_(impl), id_(id), fd_(std::move(fd)) {}
  ~TcpConnection() override {
    if (registered_) {
      impl_.loop_.Remove(fd_.get());
    }
    impl_.loop_.CancelTimer(timer);
  }
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  Result<void> Register() {
    SRT_RETURN_IF_ERROR(impl_.loop_.Add(fd_.get(), EPOLLIN, this));
    registered_ = true;
    interest_ = EPOLLIN;
    return Ok();
  }
  // Changes the epoll mask if it differs; false if epoll refused.
  [[nodiscard]] bool SetInterest(uint32_t events) {
    if (events == interest_) {
      return true;
    }
    if (!impl_.loop_.Modify(fd_.get(), events)) {
      return false;
    }
    interest_ = events;
    return true;
  }
  void OnEvents(uint32_t epoll_events) override { impl_.OnTcpEvents(*this, epoll_events); }
  uint64_t id() const { return id_; }
  int fd() const { return fd_.get(); }

  State state = State::kReading;
  std::vector<uint8_t> in;   // at most kTcpMaxBuffered bytes: never more than one frame
  std::vector<uint8_t> out;  // kWriting: the framed response
  size_t out_sent = 0;
  bool peer_closed = false;  // read() saw the end of the client's stream
  uint64_t waiter = 0;       // kResolving: the key in waiters_
  EventLoop::TimerId timer = EventLoop::kNoTimer;

 private:
  Impl& impl_;
  const uint64_t id_;
  UniqueFd fd_;
  bool registered_ = false;
  uint32_t interest_ = 0;
};

// --- Setup and teardown --------------------------------------------------------------------------

DnsStub::Impl::~Impl() {
  loop_.AssertInLoopThread();
  // Cancel first: after this no resolver callback can reach the stub (Resolver::Cancel destroys
  // the callback before it returns).
  std::unordered_map<std::string, Lookup> lookups = std::move(lookups_);
  lookups_.clear();
  for (const auto& [name, lookup] : lookups) {
    resolver_.Cancel(lookup.id);
  }
  waiters_.clear();
  // Each handler unregisters its fd (and a connection its timer) before closing the fd.
  connections_.clear();
  listeners_.clear();
  udp_.clear();
}

Result<void> DnsStub::Impl::AddUdpSocket(UniqueFd socket) {
  loop_.AssertInLoopThread();
  SRT_RETURN_IF_ERROR(PrepareSocket(socket.get(), SOCK_DGRAM, "DNS stub UDP socket"));
  auto handler = std::make_unique<UdpSocket>(*this, std::move(socket));
  SRT_RETURN_IF_ERROR(handler->Register());
  udp_.push_back(std::move(handler));
  return Ok();
}

Result<void> DnsStub::Impl::AddTcpListener(UniqueFd socket) {
  loop_.AssertInLoopThread();
  constexpr std::string_view kWhat = "DNS stub TCP listener";
  SRT_RETURN_IF_ERROR(PrepareSocket(socket.get(), SOCK_STREAM, kWhat));
  int listening = 0;
  socklen_t length = sizeof listening;
  if (getsockopt(socket.get(), SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0) {
    return SysError(std::string(kWhat) + ": getsockopt(SO_ACCEPTCONN)");
  }
  if (listening == 0) {
    return MakeError(Errc::kInvalidArgument, std::string(kWhat) + ": fd " +
                                                 std::to_string(socket.get()) +
                                                 " is not listening (call listen() first)");
  }
  auto handler = std::make_unique<TcpListener>(*this, std::move(socket));
  SRT_RETURN_IF_ERROR(handler->Register());
  listeners_.push_back(std::move(handler));
  return Ok();
}

// --- Queries, whatever the transport -------------------------------------------------------------

DnsStub::Impl::Outcome DnsStub::Impl::HandleMessage(std::span<const uint8_t> message,
                                                    dns::Transport transport, const Peer& peer) {
  Outcome out;
  dns::QueryParse parsed = dns::ParseQuery(message);
  switch (parsed.action) {
    case dns::QueryParse::Action::kDrop:
      return out;  // a response, or too short to answer: silence (no reflection)
    case dns::QueryParse::Action::kReply:
      ++stats_.queries;
      out.kind = Outcome::Kind::kRespond;
      out.response = dns::BuildResponse(parsed.query, parsed.rcode, {}, 0, transport);
      return out;
    case dns::QueryParse::Action::kAnswer:
      break;
  }
  ++stats_.queries;
  const std::string& name = parsed.query.question->name;

  // The policy first, for every query: a name refused never reaches the resolver, so not even
  // its existence leaks out of the sandbox (and a policy update applies to the next query).
  const std::string reason =
      options_.refusal_reason ? options_.refusal_reason(name) : std::string(kNoPolicyReason);
  if (!reason.empty()) {
    ++stats_.refused;
    if (options_.on_denied) {
      options_.on_denied(name, reason);
    }
    out.kind = Outcome::Kind::kRespond;
    out.response =
        dns::BuildResponse(parsed.query, dns::Rcode::kNxDomain, {}, options_.ttl, transport);
    return out;
  }
  if (waiters_.size() >= options_.max_inflight) {
    ++stats_.failed;
    out.kind = Outcome::Kind::kRespond;
    out.response = dns::BuildResponse(parsed.query, dns::Rcode::kServFail, {}, 0, transport);
    return out;
  }
  out.kind = Outcome::Kind::kWait;
  out.waiter = Wait(std::move(parsed.query), peer);
  return out;
}

uint64_t DnsStub::Impl::Wait(dns::Query query, const Peer& peer) {
  const uint64_t id = next_waiter_++;
  std::string name = query.question->name;
  waiters_.emplace(id, Waiter{std::move(query), peer});
  auto [it, fresh] = lookups_.try_emplace(name);
  it->second.waiters.push_back(id);
  if (fresh) {
    // Resolve() never calls back from inside itself, so the lookup is complete before any
    // answer can arrive.
    it->second.id = resolver_.Resolve(
        name, [this, name](const ResolveResult& result) { OnResolved(name, result); });
  }
  return id;
}

void DnsStub::Impl::OnResolved(const std::string& name, const ResolveResult& result) {
  auto it = lookups_.find(name);
  if (it == lookups_.end()) {
    return;  // cannot happen: a lookup leaves lookups_ only here or when it is cancelled
  }
  // Detach the lookup before answering anyone: answering a TCP client may read its next
  // (pipelined) query, which must start a new lookup rather than join this finished one.
  const std::vector<uint64_t> ids = std::move(it->second.waiters);
  lookups_.erase(it);
  for (uint64_t id : ids) {
    auto w = waiters_.find(id);
    if (w == waiters_.end()) {
      continue;
    }
    Waiter waiter = std::move(w->second);
    waiters_.erase(w);
    Deliver(std::move(waiter), result);
  }
}

void DnsStub::Impl::Deliver(Waiter waiter, const ResolveResult& result) {
  const dns::Query& query = waiter.query;
  const dns::Question& question = *query.question;
  dns::Rcode rcode = dns::Rcode::kNoError;
  std::vector<IpAddress> answers;
  if (!result.ok()) {
    // kNotFound: the name does not exist outside either. Everything else (timeout, server
    // failure, overload, a name the resolver calls bad) is a failure to know: SERVFAIL, which
    // clients retry, rather than a cached NXDOMAIN.
    rcode = result.error == ResolveError::kNotFound ? dns::Rcode::kNxDomain : dns::Rcode::kServFail;
    ++stats_.failed;
  } else if (question.qtype == dns::kTypeA && question.qclass == dns::kClassIn) {
    answers = Shown(question.name, result.addresses);
    if (answers.empty()) {
      if (std::optional<IpAddress> synthetic = table_.SyntheticFor(question.name)) {
        answers.push_back(*synthetic);
      }
    }
    if (!answers.empty()) {
      ++stats_.answered;
    } else {
      rcode = dns::Rcode::kServFail;  // the table is full: never an address of another name
      ++stats_.failed;
    }
  }
  // Otherwise (AAAA, other types, other classes) NOERROR without answers: NODATA, so clients
  // fall back to A, whose addresses transparent capture maps back to the name.

  if (const auto* udp = std::get_if<UdpPeer>(&waiter.peer)) {
    SendUdp(*udp, dns::BuildResponse(query, rcode, answers, options_.ttl, dns::Transport::kUdp));
    return;
  }
  const auto& tcp = std::get<TcpPeer>(waiter.peer);
  auto it = connections_.find(tcp.connection);
  if (it == connections_.end()) {
    return;  // cannot happen: Close() forgets the connection's waiter
  }
  TcpConnection& connection = *it->second;
  connection.waiter = 0;
  RespondTcp(connection,
             dns::BuildResponse(query, rcode, answers, options_.ttl, dns::Transport::kTcp));
}

std::vector<IpAddress> DnsStub::Impl::Shown(const std::string& name,
                                            const std::vector<IpAddress>& resolved) {
  std::vector<IpAddress> shown;
  if (!options_.may_show) return shown;
  for (const IpAddress& raw : resolved) {
    if (shown.size() >= kMaxShownAddresses) break;
    const IpAddress address = UnmapIpv4(raw);
    if (address.family != IpAddress::Family::kIpv4 ||
        std::find(shown.begin(), shown.end(), address) != shown.end()) {
      continue;
    }
    // Vetted first, recorded second: the table must hold only addresses the sandbox was shown.
    if (options_.may_show(address) && table_.RecordReal(name, address)) shown.push_back(address);
  }
  return shown;
}

void DnsStub::Impl::ForgetWaiter(uint64_t id) {
  auto w = waiters_.find(id);
  if (w == waiters_.end()) {
    return;
  }
  auto l = lookups_.find(w->second.query.question->name);
  waiters_.erase(w);
  if (l == lookups_.end()) {
    return;
  }
  std::vector<uint64_t>& ids = l->second.waiters;
  ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
  if (ids.empty()) {
    const Resolver::QueryId lookup = l->second.id;
    lookups_.erase(l);
    resolver_.Cancel(lookup);
  }
}

// --- UDP -----------------------------------------------------------------------------------------

void DnsStub::Impl::ReadUdp(UdpSocket& socket) {
  for (int i = 0; i < kUdpBatch; ++i) {
    UdpPeer peer;
    peer.socket = &socket;
    iovec iov{scratch_.data(), scratch_.size()};
    msghdr msg{};
    msg.msg_name = &peer.address;
    msg.msg_namelen = sizeof peer.address;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    const ssize_t n = recvmsg(socket.fd(), &msg, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN) {
        return;  // drained
      }
      continue;  // EINTR, or an error report that this call consumed: the next one may be data
    }
    if ((msg.msg_flags & MSG_TRUNC) != 0) {
      continue;  // cannot happen with a 64 KiB buffer; a cut message is not answered
    }
    peer.length = msg.msg_namelen;
    const Outcome outcome =
        HandleMessage(std::span<const uint8_t>(scratch_.data(), static_cast<size_t>(n)),
                      dns::Transport::kUdp, peer);
    if (outcome.kind == Outcome::Kind::kRespond) {
      SendUdp(peer, outcome.response);
    }
  }
}

void DnsStub::Impl::SendUdp(const UdpPeer& peer, std::span<const uint8_t> response) {
  // EAGAIN (a full send buffer) and every other error drop the answer: the client retries, and a
  // UDP server must never wait for one client.
  (void)sendto(peer.socket->fd(), response.data(), response.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
               reinterpret_cast<const sockaddr*>(&peer.address), peer.length);
}

// --- TCP (RFC 7766) ------------------------------------------------------------------------------

void DnsStub::Impl::Accept(TcpListener& listener) {
  for (int i = 0; i < kAcceptBatch; ++i) {
    UniqueFd client(accept4(listener.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client) {
      if (errno == ECONNABORTED || errno == EINTR) {
        continue;  // that client is gone; the next may not be
      }
      // EAGAIN: drained. EMFILE/ENFILE: the rest wait in the backlog until a connection closes.
      return;
    }
    if (connections_.size() >= options_.max_tcp_connections) {
      // Over the limit: close with a reset (no TIME_WAIT left behind on our side).
      const linger reset{1, 0};
      (void)setsockopt(client.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
      continue;
    }
    const uint64_t id = next_connection_++;
    auto connection = std::make_unique<TcpConnection>(*this, id, std::move(client));
    if (!connection->Register()) {
      continue;  // epoll is full: drop this client
    }
    TcpConnection& ref = *connection;
    connections_.emplace(id, std::move(connection));
    ArmTimer(ref);
  }
}

void DnsStub::Impl::OnTcpEvents(TcpConnection& connection, uint32_t events) {
  switch (connection.state) {
    case TcpConnection::State::kReading: {
      const size_t room = kTcpMaxBuffered - connection.in.size();
      if (room == 0) {
        Close(connection);  // cannot happen: a full buffer holds a complete frame, Drive() took it
        return;
      }
      const ssize_t n =
          recv(connection.fd(), scratch_.data(), std::min(room, scratch_.size()), MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) {
          return;
        }
        Close(connection);  // ECONNRESET and friends
        return;
      }
      if (n == 0) {
        connection.peer_closed = true;  // answer what is complete, then close
      }
      connection.in.insert(connection.in.end(), scratch_.begin(), scratch_.begin() + n);
      Drive(connection);
      return;
    }
    case TcpConnection::State::kWriting:
      Drive(connection);
      return;
    case TcpConnection::State::kResolving:
      // Nothing was asked for, so this is EPOLLERR or EPOLLHUP: the client is gone.
      if ((events & (EPOLLERR | EPOLLHUP)) != 0) {
        Close(connection);
      }
      return;
  }
}

void DnsStub::Impl::Drive(TcpConnection& connection) {
  using State = TcpConnection::State;
  while (true) {
    if (connection.state == State::kWriting) {
      while (connection.out_sent < connection.out.size()) {
        const ssize_t n =
            send(connection.fd(), connection.out.data() + connection.out_sent,
                 connection.out.size() - connection.out_sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EINTR) {
            continue;
          }
          if (errno == EAGAIN) {
            if (!connection.SetInterest(EPOLLOUT)) {
              Close(connection);
            }
            return;
          }
          Close(connection);  // EPIPE, ECONNRESET: the client is gone
          return;
        }
        connection.out_sent += static_cast<size_t>(n);
      }
      connection.out.clear();
      connection.out_sent = 0;
      connection.state = State::kReading;
      ArmTimer(connection);  // the next query's deadline starts now
    }
    if (connection.state == State::kResolving) {
      // Read nothing more while the resolver works: the input stays bounded by one frame.
      if (!connection.SetInterest(0)) {
        Close(connection);
      }
      return;
    }
    // kReading: answer the next complete frame if one is buffered (RFC 7766 §6.2.1.1 pipelining).
    const dns::TcpFrame frame = dns::ReadTcpFrame(connection.in);
    if (frame.status == ParseStatus::kError) {
      Close(connection);  // a zero length: nothing sensible follows
      return;
    }
    if (frame.status == ParseStatus::kNeedMore) {
      if (connection.peer_closed || connection.in.size() >= kTcpMaxBuffered) {
        Close(connection);  // a query cut short by the client's close
        return;
      }
      if (!connection.SetInterest(EPOLLIN)) {
        Close(connection);
      }
      return;
    }
    Outcome outcome = HandleMessage(frame.message, dns::Transport::kTcp, TcpPeer{connection.id()});
    // `frame.message` is a view into `in`: consume it only now.
    connection.in.erase(connection.in.begin(),
                        connection.in.begin() + static_cast<ptrdiff_t>(frame.consumed));
    switch (outcome.kind) {
      case Outcome::Kind::kNothing:
        break;  // dropped (a response sent to us): on to the next frame
      case Outcome::Kind::kRespond:
        connection.out = dns::FrameForTcp(outcome.response);
        if (connection.out.empty()) {
          Close(connection);  // cannot happen: kTcp responses fit a frame
          return;
        }
        connection.state = State::kWriting;
        break;
      case Outcome::Kind::kWait:
        connection.waiter = outcome.waiter;
        connection.state = State::kResolving;
        break;
    }
  }
}

void DnsStub::Impl::RespondTcp(TcpConnection& connection, std::span<const uint8_t> response) {
  connection.out = dns::FrameForTcp(response);
  if (connection.out.empty()) {
    Close(connection);  // cannot happen: kTcp responses fit a frame
    return;
  }
  connection.out_sent = 0;
  connection.state = TcpConnection::State::kWriting;
  Drive(connection);
}

void DnsStub::Impl::ArmTimer(TcpConnection& connection) {
  loop_.CancelTimer(connection.timer);
  const uint64_t id = connection.id();
  connection.timer = loop_.AddTimer(options_.tcp_query_timeout, [this, id] {
    auto it = connections_.find(id);
    if (it != connections_.end()) {
      it->second->timer = EventLoop::kNoTimer;  // fired: nothing to cancel
      Close(*it->second);
    }
  });
}

void DnsStub::Impl::Close(TcpConnection& connection) {
  ForgetWaiter(connection.waiter);
  connections_.erase(connection.id());  // unregisters, cancels the timer, closes the fd
}

// --- DnsStub -------------------------------------------------------------------------------------

DnsStub::DnsStub(EventLoop& loop, Resolver& resolver, DnsAnswers& table, Options options)
    : impl_(std::make_unique<Impl>(loop, resolver, table, std::move(options))) {}

DnsStub::~DnsStub() = default;

Result<void> DnsStub::AddUdpSocket(UniqueFd socket) {
  return impl_->AddUdpSocket(std::move(socket));
}

Result<void> DnsStub::AddTcpListener(UniqueFd socket) {
  return impl_->AddTcpListener(std::move(socket));
}

const DnsStub::Stats& DnsStub::stats() const { return impl_->stats(); }

}  // namespace srt::proxy
