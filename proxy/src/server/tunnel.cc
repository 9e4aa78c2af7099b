// SPDX-License-Identifier: Apache-2.0
// server/tunnel.cc: the splice(2) relay: socket -> pipe -> socket per direction through a pipe
// borrowed from a PipePool while bytes are in flight (recv/send through a small buffer when none
// can be had), interest masks derived from that state, half-close forwarding and a lazily re-armed
// idle timer.
#include "server/tunnel.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "base/system_text.h"

namespace srt::proxy {
namespace {

// Bytes one readiness event may pull into a direction's carrier before the loop moves on to other
// fds, so one bulk transfer cannot starve the other tunnels on the loop.
constexpr size_t kBudgetPerEvent = size_t{1} << 20;
constexpr unsigned kSpliceFlags = SPLICE_F_MOVE | SPLICE_F_NONBLOCK;
// Spares of a tunnel's private pool (Options::pipes == nullptr): one per direction, so a bulk
// transfer does not make a pipe per readiness event.
constexpr size_t kPrivatePoolSpares = 2;

// Indexes ends_ and dirs_.
using Side = size_t;
constexpr Side kClient = 0;
constexpr Side kUpstream = 1;

Side Other(Side side) { return side == kClient ? kUpstream : kClient; }
const char* SideName(Side side) { return side == kClient ? "client" : "upstream"; }

// The socket's pending error (and clears it), or errno if getsockopt itself fails.
int PendingSocketError(int fd) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
    return errno;
  }
  return err;
}

}  // namespace

std::string_view TunnelEndName(TunnelEnd end) {
  switch (end) {
    case TunnelEnd::kClosed:
      return "closed";
    case TunnelEnd::kIdle:
      return "idle";
    case TunnelEnd::kError:
      return "error";
  }
  return "unknown";
}

class Tunnel::Impl {
 public:
  Impl(EventLoop& loop, UniqueFd client, UniqueFd upstream, std::string to_upstream,
       std::string to_client, const Options& options, Done done, TunnelStats& stats)
      : loop_(loop), options_(options), done_(std::move(done)), stats_(stats) {
    pipes_ = options_.pipes;
    if (pipes_ == nullptr) {
      PipePool::Options pool;
      pool.pipe_bytes = options_.pipe_bytes;
      pool.max_spare = kPrivatePoolSpares;
      own_pipes_ = std::make_unique<PipePool>(pool);
      pipes_ = own_pipes_.get();
    }
    ends_[kClient].Init(this, kClient, std::move(client));
    ends_[kUpstream].Init(this, kUpstream, std::move(upstream));
    // dirs_ is indexed by the side the bytes come from: [kClient] is "up", [kUpstream] "down".
    dirs_[kClient].Init(kClient, std::move(to_upstream), &stats_.bytes_up);
    dirs_[kUpstream].Init(kUpstream, std::move(to_client), &stats_.bytes_down);
  }
  // Unregisters before the fds close (event_loop.h); never calls done_.
  ~Impl() { CloseAll(/*reset=*/false); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  [[nodiscard]] Result<void> Start();
  [[nodiscard]] bool OwesClient() const { return dirs_[kUpstream].HasOutput(); }

 private:
  // One socket and its registration. The loop's Handler, so events say which socket is ready.
  struct Endpoint final : Handler {
    void Init(Impl* owner, Side which, UniqueFd socket) {
      impl = owner;
      side = which;
      fd = std::move(socket);
    }
    void OnEvents(uint32_t events) override { impl->OnEvents(side, events); }

    Impl* impl = nullptr;
    Side side = kClient;
    UniqueFd fd;
    uint32_t mask = 0;  // what the loop has for fd, valid while registered
    bool registered = false;
    // EPOLLHUP seen: the kernel reports it whatever the mask says, level-triggered, so from then
    // on the socket stays registered only while it has something to wait for (UpdateInterest).
    bool hup = false;
  };

  // The bytes from socket `src` to the other one: first `initial`, then what is read from `src`,
  // through a carrier: a pipe borrowed from pipes_ (spliced in and out), or, when none can be
  // had, the copy buffer (recv and send). The carrier is taken when `src` is readable and given
  // back once nothing is in flight, so an idle direction holds neither.
  struct Direction {
    void Init(Side from, std::string bytes, uint64_t* counter) {
      src = from;
      initial = std::move(bytes);
      written = counter;
    }
    [[nodiscard]] bool HasInitial() const { return initial_sent < initial.size(); }
    [[nodiscard]] size_t buffered() const { return copy_end - copy_begin; }
    // Read from `src`, not yet written to the other socket.
    [[nodiscard]] size_t InFlight() const { return in_pipe + buffered(); }
    [[nodiscard]] bool HasOutput() const { return HasInitial() || InFlight() > 0; }
    [[nodiscard]] bool HasCarrier() const { return static_cast<bool>(pipe) || copy != nullptr; }

    Side src = kClient;
    std::string initial;  // freed once written
    size_t initial_sent = 0;
    Pipe pipe;
    size_t in_pipe = 0;  // spliced in, not yet out
    // kCopyBufferBytes while the direction copies; bytes [copy_begin, copy_end) are in flight.
    std::unique_ptr<char[]> copy;
    size_t copy_begin = 0;
    size_t copy_end = 0;
    // The last read into the carrier said EAGAIN while the carrier held bytes: a pipe may be full
    // (its slots fill per skb fragment, so a byte count cannot tell), the copy buffer is, so
    // EPOLLIN on `src` would spin. Cleared by the next write out of the carrier.
    bool maybe_full = false;
    bool eof = false;    // `src` read 0
    bool ended = false;  // EOF forwarded: everything written and the receiver shut for writing
    uint64_t* written = nullptr;
  };

  struct Failure {
    Side side;
    int err;
  };

  void OnEvents(Side side, uint32_t events);
  // Moves bytes until both ends would block, the budget is spent or the direction ended; sets
  // `moved` if anything happened. `readable`: `d.src` reported EPOLLIN. Returns the first hard
  // error.
  std::optional<Failure> Pump(Direction& d, bool readable, bool& moved);
  // Socket -> carrier, and carrier -> socket: what the syscall returned, errno set if negative.
  static ssize_t FillCarrier(Direction& d, int src, size_t max);
  static ssize_t DrainCarrier(Direction& d, int dst);
  // A pipe from pipes_, or the copy buffer if the pool has none to give.
  void TakeCarrier(Direction& d);
  // Returns the pipe (Discard()ed if it may hold bytes) and frees the copy buffer.
  void ReturnCarrier(Direction& d);
  // Registers, modifies or unregisters `side` to match what its two directions wait for.
  [[nodiscard]] Result<void> UpdateInterest(Side side);
  void ArmIdleTimer(std::chrono::milliseconds delay);
  void OnIdleTimer();
  // The tunnel's last act: closes everything, then runs done_ (which may destroy *this).
  void Finish(TunnelEnd end, std::string error);
  void Fail(const Failure& failure);
  void CloseAll(bool reset);

  EventLoop& loop_;
  Options options_;
  Done done_;
  TunnelStats& stats_;
  // Only if options_.pipes is nullptr. Declared before dirs_ so that it dies after them (by then
  // ~Impl has given every pipe back).
  std::unique_ptr<PipePool> own_pipes_;
  PipePool* pipes_ = nullptr;
  std::array<Endpoint, 2> ends_;
  std::array<Direction, 2> dirs_;
  EventLoop::TimerId idle_timer_ = EventLoop::kNoTimer;
  std::chrono::steady_clock::time_point last_activity_;
};

Result<void> Tunnel::Impl::Start() {
  for (Side side : {kClient, kUpstream}) {
    SRT_RETURN_IF_ERROR(UpdateInterest(side));
  }
  last_activity_ = std::chrono::steady_clock::now();
  ArmIdleTimer(options_.idle_timeout);
  return Ok();
}

void Tunnel::Impl::OnEvents(Side side, uint32_t events) {
  Endpoint& end = ends_[side];
  if (events & EPOLLERR) {
    // The kernel reports a pending error (an RST, a timeout) regardless of the mask; report it
    // rather than trying the data path, which may not even reach the socket when a pipe is full.
    if (int err = PendingSocketError(end.fd.get()); err != 0) {
      Fail({side, err});
      return;
    }
  }
  if (events & EPOLLHUP) {
    end.hup = true;
  }
  bool moved = false;
  std::optional<Failure> failure;
  // The loop turns EPOLLRDHUP/EPOLLHUP/EPOLLERR into EPOLLIN, so EOF surfaces here too.
  if ((events & EPOLLIN) && !dirs_[side].ended) {
    failure = Pump(dirs_[side], /*readable=*/true, moved);
  }
  if (!failure && (events & EPOLLOUT) && !dirs_[Other(side)].ended) {
    failure = Pump(dirs_[Other(side)], /*readable=*/false, moved);
  }
  if (failure) {
    Fail(*failure);
    return;
  }
  if (moved) {
    last_activity_ = std::chrono::steady_clock::now();
  }
  if (dirs_[kClient].ended && dirs_[kUpstream].ended) {
    Finish(TunnelEnd::kClosed, {});
    return;
  }
  for (Side s : {kClient, kUpstream}) {
    if (Result<void> r = UpdateInterest(s); !r) {
      Fail({s, r.error().sys_errno() != 0 ? r.error().sys_errno() : EIO});
      return;
    }
  }
}

std::optional<Tunnel::Impl::Failure> Tunnel::Impl::Pump(Direction& d, bool readable, bool& moved) {
  const int src = ends_[d.src].fd.get();
  const Side dst_side = Other(d.src);
  const int dst = ends_[dst_side].fd.get();
  size_t budget = kBudgetPerEvent;
  bool progress = true;
  while (progress && !d.ended) {
    progress = false;
    // Socket -> carrier. Without a carrier only if `src` said it is readable: a carrier taken on
    // speculation would be given back unused (and `src` is level-triggered, it reports again).
    if (!d.eof && !d.maybe_full && budget > 0 && (readable || d.HasCarrier())) {
      if (!d.HasCarrier()) {
        TakeCarrier(d);
      }
      ssize_t n = FillCarrier(d, src, budget);
      if (n > 0) {
        budget -= std::min(budget, static_cast<size_t>(n));
        progress = true;
      } else if (n == 0) {
        d.eof = true;
        progress = true;
      } else if (errno == EINTR) {
        progress = true;
      } else if (errno != EAGAIN) {
        return Failure{d.src, errno};
      }
    }
    // Initial bytes, then carrier -> socket.
    if (d.HasInitial()) {
      ssize_t n = ::send(dst, d.initial.data() + d.initial_sent, d.initial.size() - d.initial_sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        d.initial_sent += static_cast<size_t>(n);
        *d.written += static_cast<uint64_t>(n);
        progress = true;
        if (!d.HasInitial()) {
          std::string().swap(d.initial);
          d.initial_sent = 0;
        }
      } else if (n < 0 && errno == EINTR) {
        progress = true;
      } else if (n < 0 && errno != EAGAIN) {
        return Failure{dst_side, errno};
      }
    }
    if (!d.HasInitial() && d.InFlight() > 0) {
      ssize_t n = DrainCarrier(d, dst);
      if (n > 0) {
        *d.written += static_cast<uint64_t>(n);
        progress = true;
      } else if (n < 0 && errno == EINTR) {
        progress = true;
      } else if (n < 0 && errno != EAGAIN) {
        return Failure{dst_side, errno};
      }
    }
    // Everything the sender sent is out: forward its EOF, keep the other direction going.
    if (d.eof && !d.HasOutput()) {
      if (::shutdown(dst, SHUT_WR) != 0) {
        int err = errno;
        int pending = PendingSocketError(dst);
        return Failure{dst_side, pending != 0 ? pending : err};
      }
      d.ended = true;
      if (d.src == kClient) stats_.client_ended = true;
    }
    moved = moved || progress;
  }
  // Drained: the pipe goes back to the pool (or the buffer is freed) until bytes come again. Not
  // inside the loop, so a bulk transfer keeps its pipe for the whole event.
  if (d.InFlight() == 0 && d.HasCarrier()) {
    ReturnCarrier(d);
  }
  return std::nullopt;
}

ssize_t Tunnel::Impl::FillCarrier(Direction& d, int src, size_t max) {
  if (d.pipe) {
    ssize_t n = ::splice(src, nullptr, d.pipe.write.get(), nullptr, max, kSpliceFlags);
    if (n > 0) {
      d.in_pipe += static_cast<size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      // Either the socket is empty or the pipe is full; with an empty pipe it is the socket.
      d.maybe_full = d.in_pipe > 0;
    }
    return n;
  }
  if (d.copy_end == kCopyBufferBytes && d.copy_begin > 0) {
    std::memmove(d.copy.get(), d.copy.get() + d.copy_begin, d.buffered());
    d.copy_end -= d.copy_begin;
    d.copy_begin = 0;
  }
  const size_t room = kCopyBufferBytes - d.copy_end;
  if (room == 0) {
    d.maybe_full = true;
    errno = EAGAIN;
    return -1;
  }
  ssize_t n = ::recv(src, d.copy.get() + d.copy_end, std::min(room, max), MSG_DONTWAIT);
  if (n > 0) {
    d.copy_end += static_cast<size_t>(n);
  }
  return n;
}

ssize_t Tunnel::Impl::DrainCarrier(Direction& d, int dst) {
  ssize_t n = 0;
  if (d.pipe) {
    n = ::splice(d.pipe.read.get(), nullptr, dst, nullptr, d.in_pipe, kSpliceFlags);
    if (n > 0) {
      d.in_pipe -= static_cast<size_t>(n);
    }
  } else {
    n = ::send(dst, d.copy.get() + d.copy_begin, d.buffered(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      d.copy_begin += static_cast<size_t>(n);
      if (d.copy_begin == d.copy_end) {
        d.copy_begin = 0;
        d.copy_end = 0;
      }
    }
  }
  if (n > 0) {
    d.maybe_full = false;
  }
  return n;
}

void Tunnel::Impl::TakeCarrier(Direction& d) {
  if (Result<Pipe> pipe = pipes_->Acquire(); pipe.has_value()) {
    d.pipe = std::move(pipe).value();
    return;
  }
  // No pipe (EMFILE, ENFILE, max_pipes): copy. Tried again once this buffer is drained.
  d.copy = std::make_unique_for_overwrite<char[]>(kCopyBufferBytes);
}

void Tunnel::Impl::ReturnCarrier(Direction& d) {
  if (d.pipe) {
    if (d.in_pipe == 0) {
      pipes_->Release(std::move(d.pipe));
    } else {
      pipes_->Discard(std::move(d.pipe));
    }
    d.pipe = Pipe{};
  }
  d.in_pipe = 0;
  d.copy.reset();
  d.copy_begin = 0;
  d.copy_end = 0;
  d.maybe_full = false;
}

Result<void> Tunnel::Impl::UpdateInterest(Side side) {
  Endpoint& end = ends_[side];
  const Direction& from = dirs_[side];
  const Direction& to = dirs_[Other(side)];
  uint32_t mask = 0;
  // EPOLLRDHUP only together with EPOLLIN: it stays reported after the peer's FIN.
  if (!from.eof && !from.maybe_full) {
    mask |= EPOLLIN | EPOLLRDHUP;
  }
  if (!to.ended && to.HasOutput()) {
    mask |= EPOLLOUT;
  }
  if (end.hup && mask == 0) {
    // Nothing to wait for, and registered with any mask the hangup would be reported on every
    // iteration. Re-registered as soon as a pipe has room or bytes again.
    if (end.registered) {
      loop_.Remove(end.fd.get());
      end.registered = false;
    }
    return Ok();
  }
  if (!end.registered) {
    if (Result<void> r = loop_.Add(end.fd.get(), mask, &end); !r) {
      return std::move(r).error().Wrap(std::string("tunnel: register ") + SideName(side) +
                                       " socket");
    }
    end.registered = true;
    end.mask = mask;
  } else if (end.mask != mask) {
    SRT_RETURN_IF_ERROR(loop_.Modify(end.fd.get(), mask));
    end.mask = mask;
  }
  return Ok();
}

// One timer for the tunnel's life. Traffic only stamps last_activity_; when the timer fires early
// it re-arms for the remainder, so a busy tunnel costs one timer per idle_timeout, not per splice.
void Tunnel::Impl::ArmIdleTimer(std::chrono::milliseconds delay) {
  if (options_.idle_timeout <= std::chrono::milliseconds::zero()) {
    return;
  }
  idle_timer_ = loop_.AddTimer(delay, [this] { OnIdleTimer(); });
}

void Tunnel::Impl::OnIdleTimer() {
  idle_timer_ = EventLoop::kNoTimer;
  auto idle_for = std::chrono::steady_clock::now() - last_activity_;
  if (idle_for >= options_.idle_timeout) {
    Finish(TunnelEnd::kIdle, {});
    return;
  }
  ArmIdleTimer(std::chrono::ceil<std::chrono::milliseconds>(options_.idle_timeout - idle_for));
}

void Tunnel::Impl::Fail(const Failure& failure) {
  std::string error = SideName(failure.side);
  error += ": ";
  error += ErrnoText(failure.err);
  Finish(TunnelEnd::kError, std::move(error));
}

void Tunnel::Impl::Finish(TunnelEnd end, std::string error) {
  CloseAll(/*reset=*/end == TunnelEnd::kError);
  // Copies on the stack: the owner may destroy the Tunnel (and with it done_ and stats_) inside
  // the callback.
  Done done = std::move(done_);
  done_ = nullptr;
  TunnelStats stats = stats_;
  if (done) {
    done(end, stats, std::move(error));
  }
}

void Tunnel::Impl::CloseAll(bool reset) {
  loop_.CancelTimer(idle_timer_);
  idle_timer_ = EventLoop::kNoTimer;
  for (Endpoint& end : ends_) {
    if (!end.fd) {
      continue;
    }
    if (reset) {
      // close(2) then sends an RST instead of a FIN: a peer must not take a cut stream for a
      // complete one.
      linger lg{.l_onoff = 1, .l_linger = 0};
      (void)::setsockopt(end.fd.get(), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    if (end.registered) {
      loop_.Remove(end.fd.get());
      end.registered = false;
    }
    end.fd.reset();
  }
  for (Direction& d : dirs_) {
    ReturnCarrier(d);
  }
}

Tunnel::Tunnel() = default;
Tunnel::~Tunnel() = default;

Result<std::unique_ptr<Tunnel>> Tunnel::Start(EventLoop& loop, UniqueFd client, UniqueFd upstream,
                                              std::string to_upstream, std::string to_client,
                                              const Options& options, Done done) {
  loop.AssertInLoopThread();
  std::unique_ptr<Tunnel> tunnel(new Tunnel());
  tunnel->impl_ =
      std::make_unique<Impl>(loop, std::move(client), std::move(upstream), std::move(to_upstream),
                             std::move(to_client), options, std::move(done), tunnel->stats_);
  // On failure the Tunnel dies here: ~Impl unregisters and closes what was set up.
  SRT_RETURN_IF_ERROR(tunnel->impl_->Start());
  return tunnel;
}

bool Tunnel::owes_client() const { return impl_ && impl_->OwesClient(); }

}  // namespace srt::proxy
