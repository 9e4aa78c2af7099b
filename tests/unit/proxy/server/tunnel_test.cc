// SPDX-License-Identifier: Apache-2.0
// Tests of the splice relay (server/tunnel.h) over real loopback TCP connections, with the loop on
// the test thread: both carriers (pooled pipes, the copy fallback), half-close, errors, timeouts,
// and that idle tunnels hold no pipes.
#include "server/tunnel.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/unique_fd.h"
#include "loop/event_loop.h"
#include "server/pipe_pool.h"

namespace srt::proxy {
namespace {

using std::chrono::milliseconds;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// One loopback TCP connection: `peer` is the test's end, `tunnel` the end handed to the Tunnel.
// Both non-blocking and CLOEXEC.
struct TcpPair {
  UniqueFd peer;
  UniqueFd tunnel;
};

TcpPair MakeTcpPair() {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if (!listener || ::bind(listener.get(), sa, len) != 0 || ::listen(listener.get(), 1) != 0 ||
      ::getsockname(listener.get(), sa, &len) != 0) {
    ADD_FAILURE() << "listen on 127.0.0.1:0: " << std::strerror(errno);
    return {};
  }
  UniqueFd peer(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!peer || ::connect(peer.get(), sa, len) != 0) {
    ADD_FAILURE() << "connect: " << std::strerror(errno);
    return {};
  }
  UniqueFd accepted(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!accepted || ::fcntl(peer.get(), F_SETFL, O_NONBLOCK) != 0) {
    ADD_FAILURE() << "accept4: " << std::strerror(errno);
    return {};
  }
  return TcpPair{std::move(peer), std::move(accepted)};
}

// `count` loopback TCP connections to one listener (one port, so a thousand pairs do not use up
// the ephemeral ports when the suite is repeated).
std::vector<TcpPair> MakeTcpPairs(size_t count) {
  std::vector<TcpPair> pairs;
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if (!listener || ::bind(listener.get(), sa, len) != 0 || ::listen(listener.get(), 16) != 0 ||
      ::getsockname(listener.get(), sa, &len) != 0) {
    ADD_FAILURE() << "listen on 127.0.0.1:0: " << std::strerror(errno);
    return pairs;
  }
  for (size_t i = 0; i < count; ++i) {
    UniqueFd peer(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!peer || ::connect(peer.get(), sa, len) != 0) {
      ADD_FAILURE() << "connect: " << std::strerror(errno);
      return pairs;
    }
    UniqueFd accepted(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!accepted || ::fcntl(peer.get(), F_SETFL, O_NONBLOCK) != 0) {
      ADD_FAILURE() << "accept4: " << std::strerror(errno);
      return pairs;
    }
    pairs.push_back(TcpPair{std::move(peer), std::move(accepted)});
  }
  return pairs;
}

void SetIntOption(int fd, int level, int name, int value) {
  ASSERT_EQ(::setsockopt(fd, level, name, &value, sizeof(value)), 0) << std::strerror(errno);
}

void ResetOnClose(int fd) {
  linger lg{.l_onoff = 1, .l_linger = 0};
  ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
}

void SendAll(int fd, std::string_view bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()))
      << std::strerror(errno);
}

// What the test's end of a connection has read so far, without blocking.
struct Received {
  std::string bytes;
  bool eof = false;
  int error = 0;  // errno of a failed recv, e.g. ECONNRESET

  bool ended() const { return eof || error != 0; }
  void Poll(int fd) {
    char buf[64 * 1024];
    while (!ended()) {
      ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) {
        bytes.append(buf, static_cast<size_t>(n));
      } else if (n == 0) {
        eof = true;
      } else if (errno != EAGAIN && errno != EINTR) {
        error = errno;
      } else {
        return;
      }
    }
  }
};

// A byte stream that repeats every 251 bytes (a prime, so it never lines up with buffer sizes),
// different per seed; any window of up to kChunk bytes is one memcmp against the table.
class Pattern {
 public:
  static constexpr size_t kPeriod = 251;
  static constexpr size_t kChunk = 64 * 1024;

  explicit Pattern(uint8_t seed) : table_(kPeriod + kChunk) {
    for (size_t i = 0; i < table_.size(); ++i) {
      table_[i] = static_cast<char>((i % kPeriod) * 7 + seed);
    }
  }
  // The `size` (<= kChunk) bytes of the stream at `offset`.
  const char* At(uint64_t offset) const { return table_.data() + offset % kPeriod; }
  std::string Prefix(size_t size) const { return std::string(At(0), size); }

 private:
  std::vector<char> table_;
};

// `bytes` is the start of `pattern`'s stream.
bool MatchesPattern(std::string_view bytes, const Pattern& pattern) {
  for (size_t off = 0; off < bytes.size(); off += Pattern::kChunk) {
    size_t size = std::min(Pattern::kChunk, bytes.size() - off);
    if (std::memcmp(bytes.data() + off, pattern.At(off), size) != 0) {
      ADD_FAILURE() << "content mismatch in the chunk at offset " << off;
      return false;
    }
  }
  return true;
}

// The test's end of one connection, driven by the loop: sends `total` bytes of `out` starting at
// stream offset `first`, then shuts down its write side; reads and checks `in` until EOF. A failed
// send or recv ends both and is kept in error().
class StreamPeer final : public Handler {
 public:
  StreamPeer(EventLoop& loop, UniqueFd fd, const Pattern& out, uint64_t first, uint64_t total,
             const Pattern& in)
      : loop_(loop), fd_(std::move(fd)), out_(out), sent_(first), total_(total), in_(in) {
    EXPECT_TRUE(loop_.Add(fd_.get(), EPOLLIN | EPOLLOUT, this).has_value());
  }
  ~StreamPeer() override { loop_.Remove(fd_.get()); }

  void OnEvents(uint32_t events) override {
    if (events & EPOLLIN) {
      Read();
    }
    if ((events & EPOLLOUT) && !shut_) {
      Write();
    }
    uint32_t mask = (eof_ ? 0u : uint32_t{EPOLLIN}) | (shut_ ? 0u : uint32_t{EPOLLOUT});
    if (mask == 0) {
      loop_.Remove(fd_.get());
    } else {
      EXPECT_TRUE(loop_.Modify(fd_.get(), mask).has_value());
    }
  }

  bool finished() const { return eof_ && shut_; }
  uint64_t received() const { return received_; }
  int error() const { return error_; }
  bool mismatch() const { return mismatch_; }

 private:
  void Read() {
    char buf[Pattern::kChunk];
    for (;;) {
      ssize_t n = ::recv(fd_.get(), buf, sizeof(buf), 0);
      if (n > 0) {
        if (!mismatch_ && std::memcmp(buf, in_.At(received_), static_cast<size_t>(n)) != 0) {
          ADD_FAILURE() << "content mismatch in the chunk at offset " << received_;
          mismatch_ = true;
        }
        received_ += static_cast<uint64_t>(n);
        continue;
      }
      if (n == 0) {
        eof_ = true;
      } else if (errno != EAGAIN) {
        error_ = errno;
        eof_ = true;
        shut_ = true;
      }
      return;
    }
  }
  void Write() {
    while (sent_ < total_) {
      size_t size = static_cast<size_t>(std::min<uint64_t>(total_ - sent_, Pattern::kChunk));
      ssize_t n = ::send(fd_.get(), out_.At(sent_), size, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno != EAGAIN) {
          error_ = errno;
          eof_ = true;
          shut_ = true;
        }
        return;
      }
      sent_ += static_cast<uint64_t>(n);
    }
    EXPECT_EQ(::shutdown(fd_.get(), SHUT_WR), 0);
    shut_ = true;
  }

  EventLoop& loop_;
  UniqueFd fd_;
  const Pattern& out_;
  uint64_t sent_;
  uint64_t total_;
  const Pattern& in_;
  uint64_t received_ = 0;
  bool eof_ = false;
  bool shut_ = false;
  bool mismatch_ = false;
  int error_ = 0;
};

struct DoneRecord {
  int calls = 0;
  TunnelEnd end = TunnelEnd::kClosed;
  TunnelStats stats;
  std::string error;
  Clock::time_point when;
};

std::vector<int> OpenFds() {
  std::vector<int> fds;
  for (int fd = 0; fd < 4096; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0) {
      fds.push_back(fd);
    }
  }
  return fds;
}

// All open fds, however many (OpenFds() stops at 4096).
size_t CountOpenFds() {
  size_t count = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) {
    ADD_FAILURE() << "opendir /proc/self/fd: " << std::strerror(errno);
    return 0;
  }
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') {
      ++count;
    }
  }
  ::closedir(dir);
  return count - 1;  // the directory's own fd
}

// VmRSS from /proc/self/status, in KiB.
size_t RssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stoul(line.substr(6));
    }
  }
  return 0;
}

// Restores RLIMIT_NOFILE when it goes out of scope, so a failed assertion cannot leave the rest
// of the suite without fds.
class ScopedFdLimit {
 public:
  // Lowers the soft limit so that exactly `free_fds` more fds can be opened.
  explicit ScopedFdLimit(int free_fds) {
    EXPECT_EQ(::getrlimit(RLIMIT_NOFILE, &saved_), 0);
    // New fds take the lowest free numbers, so a limit just past the `free_fds`-th free number
    // leaves exactly that many (0: none at all).
    int limit = 0;
    for (int free = 0; free < free_fds; ++limit) {
      if (::fcntl(limit, F_GETFD) < 0) {
        ++free;
      }
    }
    rlimit tight = saved_;
    tight.rlim_cur = static_cast<rlim_t>(limit);
    EXPECT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0) << std::strerror(errno);
  }
  ~ScopedFdLimit() { EXPECT_EQ(::setrlimit(RLIMIT_NOFILE, &saved_), 0); }
  ScopedFdLimit(const ScopedFdLimit&) = delete;
  ScopedFdLimit& operator=(const ScopedFdLimit&) = delete;

 private:
  rlimit saved_{};
};

std::chrono::microseconds ThreadCpuTime() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  auto us = [](const timeval& tv) {
    return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
  };
  return us(usage.ru_utime) + us(usage.ru_stime);
}

class TunnelTest : public ::testing::Test {
 protected:
  // splice(2) into a socket whose peer is gone raises SIGPIPE (tunnel.h); srt's loop thread
  // blocks it, the test thread ignores it.
  static void SetUpTestSuite() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &saved_sigpipe_), 0);
  }
  static void TearDownTestSuite() { ::sigaction(SIGPIPE, &saved_sigpipe_, nullptr); }

  void SetUp() override {
    auto loop = EventLoop::Create();
    ASSERT_TRUE(loop.has_value()) << loop.error().message();
    loop_ = std::move(loop).value();
    client_ = MakeTcpPair();
    upstream_ = MakeTcpPair();
    ASSERT_TRUE(client_.peer && upstream_.peer);
  }

  void TearDown() override {
    tunnel_.reset();
    EXPECT_EQ(loop_->handler_count(), 0u);
    if (pool_) {
      EXPECT_EQ(pool_->outstanding(), 0u) << "a tunnel kept a pipe";
    }
  }

  // Starts the tunnel on client_.tunnel and upstream_.tunnel; done is recorded in done_ and
  // stops the loop.
  void StartTunnel(std::string to_upstream = {}, std::string to_client = {},
                   milliseconds idle_timeout = 10s) {
    Tunnel::Options options;
    options.idle_timeout = idle_timeout;
    StartTunnelWith(options, std::move(to_upstream), std::move(to_client));
  }

  void StartTunnelWith(const Tunnel::Options& options, std::string to_upstream = {},
                       std::string to_client = {}) {
    auto tunnel = Tunnel::Start(*loop_, std::move(client_.tunnel), std::move(upstream_.tunnel),
                                std::move(to_upstream), std::move(to_client), options,
                                [this](TunnelEnd end, const TunnelStats& stats, std::string error) {
                                  ++done_.calls;
                                  done_.end = end;
                                  done_.stats = stats;
                                  done_.error = std::move(error);
                                  done_.when = Clock::now();
                                  loop_->Stop();
                                });
    ASSERT_TRUE(tunnel.has_value()) << tunnel.error().message();
    tunnel_ = std::move(tunnel).value();
  }

  // Runs the loop until `cond` holds (checked every millisecond) or `limit` passes; returns cond().
  bool RunUntil(const std::function<bool()>& cond, milliseconds limit = 20s) {
    auto deadline = Clock::now() + limit;
    EventLoop::TimerId timer = EventLoop::kNoTimer;
    std::function<void()> poll = [&] {
      timer = EventLoop::kNoTimer;
      if (cond() || Clock::now() >= deadline) {
        loop_->Stop();
        return;
      }
      timer = loop_->AddTimer(1ms, poll);
    };
    while (!cond() && Clock::now() < deadline) {
      timer = loop_->AddTimer(0ms, poll);
      loop_->Run();  // also returns when done stops the loop
      loop_->CancelTimer(timer);
    }
    return cond();
  }

  void RunFor(milliseconds how_long) {
    auto until = Clock::now() + how_long;
    RunUntil([&] { return Clock::now() >= until; }, how_long + 1s);
  }

  // Runs until done ran and both test ends have seen their connection end.
  bool RunUntilDoneAndDrained(Received& at_client, Received& at_upstream) {
    return RunUntil([&] {
      at_client.Poll(client_.peer.get());
      at_upstream.Poll(upstream_.peer.get());
      return done_.calls > 0 && at_client.ended() && at_upstream.ended();
    });
  }

  // A pool for Options::pipes; it outlives tunnel_ (declared before it).
  PipePool& MakePool(const PipePool::Options& options = {}) {
    pool_ = std::make_unique<PipePool>(options);
    return *pool_;
  }

  // Relays `bytes` each way through a tunnel started with `options` (the streams' first
  // `initial` bytes as the initial bytes) and checks content, byte counts and a clean end.
  void RelayBothWays(const Tunnel::Options& options, uint64_t bytes, size_t initial) {
    Pattern up(11);
    Pattern down(12);
    StartTunnelWith(options, up.Prefix(initial), down.Prefix(initial));
    StreamPeer client(*loop_, std::move(client_.peer), up, initial, bytes, down);
    StreamPeer upstream(*loop_, std::move(upstream_.peer), down, initial, bytes, up);
    ASSERT_TRUE(RunUntil(
        [&] { return done_.calls > 0 && client.finished() && upstream.finished(); }, 120s));
    EXPECT_EQ(done_.end, TunnelEnd::kClosed) << done_.error;
    EXPECT_EQ(done_.stats.bytes_up, bytes);
    EXPECT_EQ(done_.stats.bytes_down, bytes);
    EXPECT_EQ(upstream.received(), bytes);
    EXPECT_EQ(client.received(), bytes);
    EXPECT_FALSE(upstream.mismatch());
    EXPECT_FALSE(client.mismatch());
    EXPECT_EQ(upstream.error(), 0) << std::strerror(upstream.error());
    EXPECT_EQ(client.error(), 0) << std::strerror(client.error());
  }

  // Sends `up` from the client peer and `down` from the upstream peer (as fast as the sockets
  // take them) and runs the loop until the other ends got them.
  void Exchange(std::string_view up, std::string_view down) {
    Received at_upstream;
    Received at_client;
    size_t up_sent = 0;
    size_t down_sent = 0;
    auto push = [](int fd, std::string_view bytes, size_t& sent) {
      if (sent < bytes.size()) {
        ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n > 0) {
          sent += static_cast<size_t>(n);
        }
      }
    };
    ASSERT_TRUE(RunUntil([&] {
      push(client_.peer.get(), up, up_sent);
      push(upstream_.peer.get(), down, down_sent);
      at_upstream.Poll(upstream_.peer.get());
      at_client.Poll(client_.peer.get());
      return at_upstream.bytes.size() >= up.size() && at_client.bytes.size() >= down.size();
    }));
    EXPECT_TRUE(at_upstream.bytes == up);
    EXPECT_TRUE(at_client.bytes == down);
  }

  // The upstream stops reading while the client keeps sending, then the client half-closes too:
  // the loop must sleep, not spin, until the upstream reads again; then everything arrives.
  void ExpectAStalledTunnelNotToSpin(const Tunnel::Options& options) {
    // Small buffers on the upstream path, so the pipe (or copy buffer) fills quickly while the
    // upstream does not read.
    SetIntOption(upstream_.tunnel.get(), SOL_SOCKET, SO_SNDBUF, 32 * 1024);
    SetIntOption(upstream_.peer.get(), SOL_SOCKET, SO_RCVBUF, 32 * 1024);
    // Big buffers on the client path, so the backlog below fits there.
    SetIntOption(client_.peer.get(), SOL_SOCKET, SO_SNDBUF, 1 << 20);
    SetIntOption(client_.tunnel.get(), SOL_SOCKET, SO_RCVBUF, 1 << 20);
    // A second descriptor for the tunnel's client socket, to see what the tunnel leaves unread.
    UniqueFd probe(::fcntl(client_.tunnel.get(), F_DUPFD_CLOEXEC, 0));
    ASSERT_TRUE(probe);
    StartTunnelWith(options);
    Pattern up(5);

    // The upstream says goodbye first: the tunnel shuts the client socket's write side.
    ASSERT_EQ(::shutdown(upstream_.peer.get(), SHUT_WR), 0);
    Received at_client;
    ASSERT_TRUE(RunUntil([&] {
      at_client.Poll(client_.peer.get());
      return at_client.eof;
    }));

    // Upload in small steps until the tunnel stops moving bytes and leaves a backlog unread: its
    // pipe (or buffer) is full and the upstream path too. A backlog, not just a pause: a receiver
    // that does not read still takes a segment now and then (after collapsing its queue it answers
    // a zero-window probe with a small window), which must not let everything through.
    constexpr int kBacklog = 256 * 1024;
    uint64_t sent = 0;
    uint64_t last_up = ~uint64_t{0};
    int stalled_steps = 0;
    int unread = 0;
    while (stalled_steps < 3 || unread < kBacklog) {
      ASSERT_LT(sent, uint64_t{64} << 20) << "the tunnel never stalled";
      ssize_t n = ::send(client_.peer.get(), up.At(sent), 16 * 1024, MSG_NOSIGNAL);
      ASSERT_GT(n, 0) << std::strerror(errno);
      sent += static_cast<uint64_t>(n);
      RunFor(5ms);
      ASSERT_EQ(::ioctl(probe.get(), FIONREAD, &unread), 0);
      stalled_steps = (tunnel_->stats().bytes_up == last_up && unread > 0) ? stalled_steps + 1 : 0;
      last_up = tunnel_->stats().bytes_up;
    }
    auto cpu_before = ThreadCpuTime();
    RunFor(200ms);
    auto stalled_cpu = ThreadCpuTime() - cpu_before;
    EXPECT_LT(stalled_cpu, 50ms) << "the loop spins while the upstream does not read";
    EXPECT_LT(tunnel_->stats().bytes_up, sent);

    // Now the client's FIN arrives too. Both directions of the client socket are shut, so it
    // reports EPOLLHUP whatever its mask says.
    ASSERT_EQ(::shutdown(client_.peer.get(), SHUT_WR), 0);
    ASSERT_TRUE(RunUntil([&] {
      int unacked = 0;
      return ::ioctl(client_.peer.get(), SIOCOUTQ, &unacked) == 0 && unacked == 0;
    }));
    RunFor(20ms);
    cpu_before = ThreadCpuTime();
    RunFor(200ms);
    stalled_cpu = ThreadCpuTime() - cpu_before;
    EXPECT_LT(stalled_cpu, 50ms) << "the loop spins on the client's hangup";
    EXPECT_EQ(done_.calls, 0);
    probe.reset();

    // The upstream reads at last: everything arrives and the tunnel ends cleanly.
    Received at_upstream;
    ASSERT_TRUE(RunUntilDoneAndDrained(at_client, at_upstream));
    EXPECT_EQ(done_.end, TunnelEnd::kClosed);
    EXPECT_EQ(done_.stats.bytes_up, sent);
    ASSERT_EQ(at_upstream.bytes.size(), sent);
    for (uint64_t off = 0; off < sent; off += 16 * 1024) {
      ASSERT_EQ(std::memcmp(at_upstream.bytes.data() + off, up.At(off), 16 * 1024), 0)
          << "at " << off;
    }
  }

  static struct sigaction saved_sigpipe_;
  std::unique_ptr<EventLoop> loop_;
  TcpPair client_;
  TcpPair upstream_;
  std::unique_ptr<PipePool> pool_;
  std::unique_ptr<Tunnel> tunnel_;
  DoneRecord done_;
};

struct sigaction TunnelTest::saved_sigpipe_ {};

TEST(TunnelEndNameTest, StableNames) {
  EXPECT_EQ(TunnelEndName(TunnelEnd::kClosed), "closed");
  EXPECT_EQ(TunnelEndName(TunnelEnd::kIdle), "idle");
  EXPECT_EQ(TunnelEndName(TunnelEnd::kError), "error");
}

TEST_F(TunnelTest, InitialBytesGoFirstAndAreCounted) {
  // Already waiting in the sockets when the tunnel starts: it must still write the initial bytes
  // first.
  SendAll(client_.peer.get(), "body");
  SendAll(upstream_.peer.get(), "payload");
  StartTunnel("CONNECT-rest;", "HTTP/1.1 200 OK\r\n\r\n");
  ASSERT_EQ(::shutdown(client_.peer.get(), SHUT_WR), 0);
  ASSERT_EQ(::shutdown(upstream_.peer.get(), SHUT_WR), 0);

  Received at_client;
  Received at_upstream;
  ASSERT_TRUE(RunUntilDoneAndDrained(at_client, at_upstream));
  EXPECT_EQ(at_upstream.bytes, "CONNECT-rest;body");
  EXPECT_EQ(at_client.bytes, "HTTP/1.1 200 OK\r\n\r\npayload");
  EXPECT_TRUE(at_client.eof);
  EXPECT_TRUE(at_upstream.eof);
  EXPECT_EQ(done_.calls, 1);
  EXPECT_EQ(done_.end, TunnelEnd::kClosed);
  EXPECT_EQ(done_.error, "");
  EXPECT_EQ(done_.stats.bytes_up, 17u);
  EXPECT_EQ(done_.stats.bytes_down, 26u);
  EXPECT_EQ(tunnel_->stats().bytes_up, 17u);
  EXPECT_EQ(tunnel_->stats().bytes_down, 26u);
}

TEST_F(TunnelTest, LargeTransferBothWaysAtOnce) {
  constexpr uint64_t kBytes = 64ull << 20;
  constexpr size_t kInitial = 1000;
  Pattern up(1);
  Pattern down(2);
  // The initial bytes are the streams' first kInitial bytes; the peers send the rest.
  StartTunnel(up.Prefix(kInitial), down.Prefix(kInitial));
  StreamPeer client(*loop_, std::move(client_.peer), up, kInitial, kBytes, down);
  StreamPeer upstream(*loop_, std::move(upstream_.peer), down, kInitial, kBytes, up);

  uint64_t samples = 0;
  uint64_t last_up = 0;
  ASSERT_TRUE(RunUntil(
      [&] {
        // stats() is valid at any time and only grows.
        EXPECT_GE(tunnel_->stats().bytes_up, last_up);
        last_up = tunnel_->stats().bytes_up;
        ++samples;
        return done_.calls > 0 && client.finished() && upstream.finished();
      },
      120s));
  EXPECT_GT(samples, 0u);
  EXPECT_EQ(done_.end, TunnelEnd::kClosed);
  EXPECT_EQ(done_.stats.bytes_up, kBytes);
  EXPECT_EQ(done_.stats.bytes_down, kBytes);
  EXPECT_EQ(upstream.received(), kBytes);
  EXPECT_EQ(client.received(), kBytes);
  EXPECT_FALSE(upstream.mismatch());
  EXPECT_FALSE(client.mismatch());
  EXPECT_EQ(upstream.error(), 0) << std::strerror(upstream.error());
  EXPECT_EQ(client.error(), 0) << std::strerror(client.error());
}

TEST_F(TunnelTest, ClientHalfCloseStillReceivesTheResponse) {
  StartTunnel();
  SendAll(client_.peer.get(), "request");
  ASSERT_EQ(::shutdown(client_.peer.get(), SHUT_WR), 0);

  Received at_upstream;
  ASSERT_TRUE(RunUntil([&] {
    at_upstream.Poll(upstream_.peer.get());
    return at_upstream.ended();
  }));
  EXPECT_EQ(at_upstream.bytes, "request");
  EXPECT_TRUE(at_upstream.eof);  // the client's FIN was forwarded
  EXPECT_EQ(done_.calls, 0);     // the other direction is still open

  // Some time later the upstream answers, in two writes, and closes.
  SendAll(upstream_.peer.get(), "response part 1, ");
  Received at_client;
  ASSERT_TRUE(RunUntil([&] {
    at_client.Poll(client_.peer.get());
    return at_client.bytes.size() == 17;
  }));
  SendAll(upstream_.peer.get(), "part 2");
  ASSERT_EQ(::shutdown(upstream_.peer.get(), SHUT_WR), 0);
  ASSERT_TRUE(RunUntilDoneAndDrained(at_client, at_upstream));
  EXPECT_EQ(at_client.bytes, "response part 1, part 2");
  EXPECT_TRUE(at_client.eof);
  EXPECT_EQ(done_.calls, 1);
  EXPECT_EQ(done_.end, TunnelEnd::kClosed);
  EXPECT_EQ(done_.stats.bytes_up, 7u);
  EXPECT_EQ(done_.stats.bytes_down, 23u);
}

TEST_F(TunnelTest, UpstreamHalfCloseStillTakesClientBytes) {
  StartTunnel();
  SendAll(upstream_.peer.get(), "banner");
  ASSERT_EQ(::shutdown(upstream_.peer.get(), SHUT_WR), 0);

  Received at_client;
  ASSERT_TRUE(RunUntil([&] {
    at_client.Poll(client_.peer.get());
    return at_client.ended();
  }));
  EXPECT_EQ(at_client.bytes, "banner");
  EXPECT_TRUE(at_client.eof);
  EXPECT_EQ(done_.calls, 0);

  SendAll(client_.peer.get(), "late upload");
  ASSERT_EQ(::shutdown(client_.peer.get(), SHUT_WR), 0);
  Received at_upstream;
  ASSERT_TRUE(RunUntilDoneAndDrained(at_client, at_upstream));
  EXPECT_EQ(at_upstream.bytes, "late upload");
  EXPECT_TRUE(at_upstream.eof);
  EXPECT_EQ(done_.end, TunnelEnd::kClosed);
  EXPECT_EQ(done_.stats.bytes_up, 11u);
  EXPECT_EQ(done_.stats.bytes_down, 6u);
}

TEST_F(TunnelTest, BothSidesClosingWithoutDataIsClosed) {
  StartTunnel();
  ASSERT_EQ(::shutdown(client_.peer.get(), SHUT_WR), 0);
  ASSERT_EQ(::shutdown(upstream_.peer.get(), SHUT_WR), 0);
  Received at_client;
  Received at_upstream;
  ASSERT_TRUE(RunUntilDoneAndDrained(at_client, at_upstream));
  EXPECT_EQ(done_.calls, 1);
  EXPECT_EQ(done_.end, TunnelEnd::kClosed);
  EXPECT_EQ(done_.stats.bytes_up, 0u);
  EXPECT_EQ(done_.stats.bytes_down, 0u);
  EXPECT_TRUE(at_client.eof);
  EXPECT_TRUE(at_upstream.eof);
  EXPECT_EQ(loop_->handler_count(), 0u);
}

TEST_F(TunnelTest, ClientResetIsAnErrorAndResetsTheUpstream) {
  StartTunnel();
  SendAll(client_.peer.get(), "hello");
  Received at_upstream;
  ASSERT_TRUE(RunUntil([&] {
    at_upstream.Poll(upstream_.peer.get());
    return at_upstream.bytes == "hello";
  }));
  ResetOnClose(client_.peer.get());
  client_.peer.reset();

  ASSERT_TRUE(RunUntil([&] {
    at_upstream.Poll(upstream_.peer.get());
    return done_.calls > 0 && at_upstream.ended();
  }));
  EXPECT_EQ(done_.calls, 1);
  EXPECT_EQ(done_.end, TunnelEnd::kError);
  EXPECT_EQ(done_.error, "client: Connection reset by peer");
  EXPECT_EQ(done_.stats.bytes_up, 5u);
  EXPECT_EQ(at_upstream.error, ECONNRESET);  // a reset, not a FIN
  EXPECT_EQ(loop_->handler_count(), 0u);
}

TEST_F(TunnelTest, UpstreamResetIsAnErrorAndResetsTheClient) {
  StartTunnel();
  ResetOnClose(upstream_.peer.get());
  upstream_.peer.reset();

  Received at_client;
  ASSERT_TRUE(RunUntil([&] {
    at_client.Poll(client_.peer.get());
    return done_.calls > 0 && at_client.ended();
  }));
  EXPECT_EQ(done_.end, TunnelEnd::kError);
  EXPECT_EQ(done_.error, "upstream: Connection reset by peer");
  EXPECT_EQ(at_client.error, ECONNRESET);
}

TEST_F(TunnelTest, WritingToAClosedUpstreamIsAnError) {
  // The upstream closes completely (FIN, then RST for anything that still arrives): the client's
  // next bytes make the write fail with EPIPE or ECONNRESET, never SIGPIPE death.
  StartTunnel();
  upstream_.peer.reset();
  Received at_client;
  ASSERT_TRUE(RunUntil([&] {
    at_client.Poll(client_.peer.get());
    return at_client.eof;
  }));
  EXPECT_EQ(done_.calls, 0);
  ASSERT_TRUE(RunUntil([&] {
    if (done_.calls == 0) {
      (void)::send(client_.peer.get(), "x", 1, MSG_NOSIGNAL);
    }
    return done_.calls > 0;
  }));
  EXPECT_EQ(done_.end, TunnelEnd::kError);
  EXPECT_TRUE(done_.error == "upstream: Broken pipe" ||
              done_.error == "upstream: Connection reset by peer")
      << done_.error;
}

TEST_F(TunnelTest, IdleTimeoutEndsAQuietTunnel) {
  auto start = Clock::now();
  StartTunnel({}, {}, /*idle_timeout=*/50ms);
  Received at_client;
  Received at_upstream;
  ASSERT_TRUE(RunUntilDoneAndDrained(at_client, at_upstream));
  EXPECT_EQ(done_.end, TunnelEnd::kIdle);
  EXPECT_EQ(done_.error, "");
  EXPECT_GE(done_.when - start, 50ms);
  EXPECT_LT(done_.when - start, 5s);
  EXPECT_TRUE(at_client.eof);  // an ordinary close
  EXPECT_TRUE(at_upstream.eof);
}

TEST_F(TunnelTest, TrafficKeepsTheTunnelAlive) {
  StartTunnel({}, {}, /*idle_timeout=*/100ms);
  // One byte every 20 ms for 400 ms: four idle timeouts' worth of time, never 100 ms quiet.
  Received at_upstream;
  auto start = Clock::now();
  auto last_send = start;
  int sent = 0;
  RunUntil([&] {
    at_upstream.Poll(upstream_.peer.get());
    if (Clock::now() - last_send >= 20ms) {
      SendAll(client_.peer.get(), "x");
      last_send = Clock::now();
      ++sent;
    }
    return done_.calls > 0 || Clock::now() - start >= 400ms;
  });
  EXPECT_EQ(done_.calls, 0);
  ASSERT_TRUE(RunUntil([&] { return done_.calls > 0; }));
  EXPECT_EQ(done_.end, TunnelEnd::kIdle);
  EXPECT_GE(done_.when - last_send, 100ms);
  EXPECT_EQ(done_.stats.bytes_up, static_cast<uint64_t>(sent));
}

TEST_F(TunnelTest, DestroyingMidTransferClosesBothSocketsWithoutDone) {
  std::vector<int> before = OpenFds();
  Pattern up(3);
  Pattern down(4);
  StartTunnel();
  // A tunnel takes no fds of its own until bytes flow (the sockets were open before).
  EXPECT_EQ(OpenFds(), before);

  // The client uploads without end; the upstream does not read.
  StreamPeer client(*loop_, std::move(client_.peer), up, 0, uint64_t{1} << 40, down);
  ASSERT_TRUE(RunUntil([&] { return tunnel_->stats().bytes_up >= (1u << 20); }));
  // Now it has a pipe (and its private pool may keep a spare): CLOEXEC from birth.
  std::vector<int> added;
  for (int fd : OpenFds()) {
    if (std::find(before.begin(), before.end(), fd) == before.end()) {
      added.push_back(fd);
      EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC) << "fd " << fd;
    }
  }
  EXPECT_GE(added.size(), 2u);
  uint64_t delivered = 0;
  // Destroyed from inside another handler (a timer).
  loop_->AddTimer(0ms, [&] {
    delivered = tunnel_->stats().bytes_up;
    tunnel_.reset();
  });
  RunUntil([&] { return tunnel_ == nullptr; });
  EXPECT_EQ(done_.calls, 0);
  EXPECT_LE(loop_->handler_count(), 1u);  // at most the test's client peer

  // The upstream gets exactly what the tunnel counted, then EOF.
  Received at_upstream;
  ASSERT_TRUE(RunUntil([&] {
    at_upstream.Poll(upstream_.peer.get());
    return at_upstream.ended();
  }));
  EXPECT_TRUE(at_upstream.eof);
  EXPECT_EQ(at_upstream.bytes.size(), delivered);
  EXPECT_EQ(std::memcmp(at_upstream.bytes.data(), up.At(0), std::min<size_t>(delivered, 1000)), 0);
  for (int fd : added) {
    EXPECT_LT(::fcntl(fd, F_GETFD), 0) << "fd " << fd << " still open";
  }
  RunFor(20ms);
  EXPECT_EQ(done_.calls, 0);
}

TEST_F(TunnelTest, DeletingTheTunnelInsideDoneIsSafe) {
  Tunnel::Options options;
  int calls = 0;
  TunnelStats seen;
  auto tunnel = Tunnel::Start(*loop_, std::move(client_.tunnel), std::move(upstream_.tunnel), "abc",
                              "de", options, [&](TunnelEnd, const TunnelStats& stats, std::string) {
                                ++calls;
                                tunnel_.reset();
                                seen = stats;  // must not point into the deleted tunnel
                                loop_->Stop();
                              });
  ASSERT_TRUE(tunnel.has_value());
  tunnel_ = std::move(tunnel).value();
  ASSERT_EQ(::shutdown(client_.peer.get(), SHUT_WR), 0);
  ASSERT_EQ(::shutdown(upstream_.peer.get(), SHUT_WR), 0);
  ASSERT_TRUE(RunUntil([&] { return calls > 0; }));
  EXPECT_EQ(tunnel_, nullptr);
  EXPECT_EQ(seen.bytes_up, 3u);
  EXPECT_EQ(seen.bytes_down, 2u);
  RunFor(20ms);
  EXPECT_EQ(calls, 1);
}

TEST_F(TunnelTest, DeletingTheTunnelInsideDoneOnErrorIsSafe) {
  int calls = 0;
  auto tunnel =
      Tunnel::Start(*loop_, std::move(client_.tunnel), std::move(upstream_.tunnel), {}, {},
                    Tunnel::Options{}, [&](TunnelEnd end, const TunnelStats&, std::string) {
                      ++calls;
                      EXPECT_EQ(end, TunnelEnd::kError);
                      tunnel_.reset();
                    });
  ASSERT_TRUE(tunnel.has_value());
  tunnel_ = std::move(tunnel).value();
  // Both peers reset at once: the second socket's event may already be fetched in the same batch.
  ResetOnClose(client_.peer.get());
  ResetOnClose(upstream_.peer.get());
  client_.peer.reset();
  upstream_.peer.reset();
  ASSERT_TRUE(RunUntil([&] { return calls > 0; }));
  RunFor(20ms);
  EXPECT_EQ(calls, 1);
}

TEST_F(TunnelTest, AStalledTunnelDoesNotSpin) {
  Tunnel::Options options;
  options.pipe_bytes = 64 * 1024;
  ExpectAStalledTunnelNotToSpin(options);
}

TEST_F(TunnelTest, AStalledTunnelDoesNotSpinWhileCopying) {
  PipePool::Options no_pipes;
  no_pipes.max_pipes = 0;
  Tunnel::Options options;
  options.pipes = &MakePool(no_pipes);
  ExpectAStalledTunnelNotToSpin(options);
  EXPECT_EQ(pool_->stats().created, 0u);
  EXPECT_GT(pool_->stats().acquire_failures, 0u);
}

TEST_F(TunnelTest, StartFailsOnlyIfASocketCannotBeRegistered) {
  // A socket that is already registered with the loop cannot be added again.
  struct Nothing final : Handler {
    void OnEvents(uint32_t) override {}
  } nothing;
  ASSERT_TRUE(loop_->Add(upstream_.tunnel.get(), EPOLLIN, &nothing).has_value());
  const int upstream_fd = upstream_.tunnel.get();
  int calls = 0;
  auto tunnel = Tunnel::Start(*loop_, std::move(client_.tunnel), std::move(upstream_.tunnel), {},
                              {}, Tunnel::Options{},
                              [&](TunnelEnd, const TunnelStats&, std::string) { ++calls; });
  loop_->Remove(upstream_fd);
  ASSERT_FALSE(tunnel.has_value());
  EXPECT_EQ(tunnel.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(tunnel.error().message().find("tunnel: register upstream socket"), std::string::npos)
      << tunnel.error().message();
  EXPECT_EQ(loop_->handler_count(), 0u);
  // Both sockets are closed.
  Received at_client;
  Received at_upstream;
  ASSERT_TRUE(RunUntil([&] {
    at_client.Poll(client_.peer.get());
    at_upstream.Poll(upstream_.peer.get());
    return at_client.ended() && at_upstream.ended();
  }));
  EXPECT_TRUE(at_client.eof);
  EXPECT_TRUE(at_upstream.eof);
  EXPECT_EQ(calls, 0);
}

TEST_F(TunnelTest, PipesGoBackToThePoolWhenTheTunnelGoesQuiet) {
  PipePool& pool = MakePool();
  Tunnel::Options options;
  options.pipes = &pool;
  StartTunnelWith(options);
  EXPECT_EQ(pool.outstanding(), 0u);  // nothing to move yet

  Pattern up(21);
  Pattern down(22);
  const std::string up_bytes = up.Prefix(Pattern::kChunk);
  const std::string down_bytes = down.Prefix(Pattern::kChunk);
  for (int round = 0; round < 16; ++round) {  // 1 MiB each way
    Exchange(up_bytes, down_bytes);
  }
  // Quiet, still open: no pipe held, the ones used are spares now.
  RunFor(10ms);
  EXPECT_EQ(done_.calls, 0);
  EXPECT_EQ(pool.outstanding(), 0u);
  EXPECT_GE(pool.spare(), 1u);
  EXPECT_LE(pool.stats().created, 2u);
  const uint64_t created = pool.stats().created;
  const uint64_t reused = pool.stats().reused;

  // More traffic borrows the same pipes again.
  Exchange("again", "and again");
  RunFor(10ms);
  EXPECT_EQ(pool.outstanding(), 0u);
  EXPECT_EQ(pool.stats().created, created);
  EXPECT_GT(pool.stats().reused, reused);

  ASSERT_EQ(::shutdown(client_.peer.get(), SHUT_WR), 0);
  ASSERT_EQ(::shutdown(upstream_.peer.get(), SHUT_WR), 0);
  Received at_client;
  Received at_upstream;
  ASSERT_TRUE(RunUntilDoneAndDrained(at_client, at_upstream));
  EXPECT_EQ(done_.end, TunnelEnd::kClosed);
  EXPECT_EQ(done_.stats.bytes_up, 16 * Pattern::kChunk + 5);
  EXPECT_EQ(done_.stats.bytes_down, 16 * Pattern::kChunk + 9);
  EXPECT_EQ(pool.outstanding(), 0u);
  EXPECT_EQ(pool.stats().discarded, 0u);
}

TEST_F(TunnelTest, ASharedPoolRelaysEightMebibytesBothWays) {
  Tunnel::Options options;
  options.pipes = &MakePool();
  RelayBothWays(options, /*bytes=*/8 << 20, /*initial=*/1000);
  EXPECT_EQ(pool_->outstanding(), 0u);
  EXPECT_LE(pool_->stats().created, 2u);
  EXPECT_EQ(pool_->stats().acquire_failures, 0u);
}

TEST_F(TunnelTest, WithoutPipesItCopiesEightMebibytesBothWays) {
  PipePool::Options no_pipes;
  no_pipes.max_pipes = 0;
  Tunnel::Options options;
  options.pipes = &MakePool(no_pipes);
  RelayBothWays(options, /*bytes=*/8 << 20, /*initial=*/1000);
  EXPECT_EQ(pool_->stats().created, 0u);
  EXPECT_GT(pool_->stats().acquire_failures, 0u);
}

TEST_F(TunnelTest, WhileTheOnlyPipeIsStuckTheOtherDirectionCopies) {
  PipePool::Options one_pipe;
  one_pipe.max_pipes = 1;
  Tunnel::Options options;
  options.pipes = &MakePool(one_pipe);
  // Small buffers on the upstream path, so the upload's pipe fills while the upstream does not
  // read.
  SetIntOption(upstream_.tunnel.get(), SOL_SOCKET, SO_SNDBUF, 32 * 1024);
  SetIntOption(upstream_.peer.get(), SOL_SOCKET, SO_RCVBUF, 32 * 1024);
  StartTunnelWith(options);
  constexpr uint64_t kBytes = 4 << 20;
  Pattern up(41);
  Pattern down(42);
  uint64_t up_sent = 0;
  uint64_t down_sent = 0;
  auto push = [](int fd, const Pattern& pattern, uint64_t& sent) {
    if (sent < kBytes) {
      size_t size = static_cast<size_t>(std::min<uint64_t>(kBytes - sent, Pattern::kChunk));
      ssize_t n = ::send(fd, pattern.At(sent), size, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<uint64_t>(n);
      }
    }
  };

  // The upload stalls (20 ms without progress) with the pool's only pipe full of its bytes.
  uint64_t last = ~uint64_t{0};
  bool stalled = false;
  auto next_sample = Clock::now();
  ASSERT_TRUE(RunUntil([&] {
    push(client_.peer.get(), up, up_sent);
    if (!stalled && Clock::now() >= next_sample) {
      next_sample = Clock::now() + 20ms;
      stalled = tunnel_->stats().bytes_up == last;
      last = tunnel_->stats().bytes_up;
    }
    return stalled;
  }));
  EXPECT_EQ(pool_->outstanding(), 1u);

  // Meanwhile the download has to copy.
  Received at_client;
  ASSERT_TRUE(RunUntil([&] {
    push(upstream_.peer.get(), down, down_sent);
    at_client.Poll(client_.peer.get());
    return at_client.bytes.size() >= kBytes;
  }));
  EXPECT_GT(pool_->stats().acquire_failures, 0u);
  EXPECT_TRUE(MatchesPattern(at_client.bytes, down));

  // The upstream reads at last.
  Received at_upstream;
  ASSERT_TRUE(RunUntil([&] {
    push(client_.peer.get(), up, up_sent);
    at_upstream.Poll(upstream_.peer.get());
    return at_upstream.bytes.size() >= kBytes;
  }));
  EXPECT_TRUE(MatchesPattern(at_upstream.bytes, up));

  ASSERT_EQ(::shutdown(client_.peer.get(), SHUT_WR), 0);
  ASSERT_EQ(::shutdown(upstream_.peer.get(), SHUT_WR), 0);
  ASSERT_TRUE(RunUntilDoneAndDrained(at_client, at_upstream));
  EXPECT_EQ(done_.end, TunnelEnd::kClosed) << done_.error;
  EXPECT_EQ(done_.stats.bytes_up, kBytes);
  EXPECT_EQ(done_.stats.bytes_down, kBytes);
  EXPECT_EQ(at_upstream.bytes.size(), kBytes);
  EXPECT_EQ(at_client.bytes.size(), kBytes);
  EXPECT_EQ(pool_->stats().created, 1u);
}

TEST_F(TunnelTest, OutOfFdsItStillStartsAndRelaysByCopying) {
  // Warm-up with fds to spare, so the relay's code paths have run once. (UBSan's vptr check
  // probes memory through a pipe of its own the first time it sees a type; without fds that
  // probe fails and the check reports a false positive.)
  PipePool::Options no_spares;
  no_spares.max_spare = 0;
  Tunnel::Options options;
  options.pipes = &MakePool(no_spares);
  RelayBothWays(options, /*bytes=*/64 * 1024, /*initial=*/10);
  tunnel_.reset();
  done_ = DoneRecord{};
  client_ = MakeTcpPair();
  upstream_ = MakeTcpPair();
  ASSERT_TRUE(client_.peer && upstream_.peer);
  const uint64_t created = pool_->stats().created;

  {
    ScopedFdLimit no_fds(/*free_fds=*/0);
    RelayBothWays(options, /*bytes=*/8 << 20, /*initial=*/1000);
    EXPECT_EQ(pool_->stats().created, created);
    EXPECT_GT(pool_->stats().acquire_failures, 0u);
  }
  EXPECT_EQ(pool_->outstanding(), 0u);
}

TEST_F(TunnelTest, ADestroyedTunnelDoesNotPoolAPipeWithBytes) {
  Tunnel::Options options;
  options.pipes = &MakePool();
  // Small buffers on the upstream path, so the pipe fills while the upstream does not read.
  SetIntOption(upstream_.tunnel.get(), SOL_SOCKET, SO_SNDBUF, 32 * 1024);
  SetIntOption(upstream_.peer.get(), SOL_SOCKET, SO_RCVBUF, 32 * 1024);
  StartTunnelWith(options);
  Pattern up(31);
  Pattern down(32);
  {
    StreamPeer client(*loop_, std::move(client_.peer), up, 0, uint64_t{1} << 40, down);
    // Until the upload stalls (20 ms without progress) with bytes in the pipe.
    uint64_t last = ~uint64_t{0};
    bool stalled = false;
    auto next_sample = Clock::now();
    ASSERT_TRUE(RunUntil([&] {
      if (!stalled && Clock::now() >= next_sample) {
        next_sample = Clock::now() + 20ms;
        stalled = tunnel_->stats().bytes_up == last;
        last = tunnel_->stats().bytes_up;
      }
      return stalled;
    }));
    EXPECT_EQ(pool_->outstanding(), 1u);
    tunnel_.reset();
  }
  EXPECT_EQ(done_.calls, 0);
  EXPECT_EQ(pool_->outstanding(), 0u);
  EXPECT_EQ(pool_->spare(), 0u);
  EXPECT_EQ(pool_->stats().discarded, 1u);

  // The next tunnel on the same pool sees none of those bytes.
  done_ = DoneRecord{};
  client_ = MakeTcpPair();
  upstream_ = MakeTcpPair();
  ASSERT_TRUE(client_.peer && upstream_.peer);
  RelayBothWays(options, /*bytes=*/1 << 20, /*initial=*/0);
}

TEST_F(TunnelTest, AThousandQuietTunnelsHoldNoPipes) {
  constexpr size_t kTunnels = 1000;
  // Four sockets per tunnel (both test ends too), plus what the process has open.
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  const rlimit saved = limit;
  const rlim_t needed = 4 * kTunnels + CountOpenFds() + 64;
  if (limit.rlim_cur < needed) {
    if (limit.rlim_max < needed) {
      GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << limit.rlim_max << " < " << needed;
    }
    limit.rlim_cur = needed;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  PipePool& pool = MakePool();
  Tunnel::Options options;
  options.pipes = &pool;
  const size_t fds_before = CountOpenFds();
  const size_t rss_before = RssKib();

  struct Relay {
    TcpPair client;
    TcpPair upstream;
    std::unique_ptr<Tunnel> tunnel;
  };
  std::vector<TcpPair> pairs = MakeTcpPairs(2 * kTunnels);
  ASSERT_EQ(pairs.size(), 2 * kTunnels);
  std::vector<Relay> relays(kTunnels);
  int done_calls = 0;
  for (size_t i = 0; i < kTunnels; ++i) {
    Relay& relay = relays[i];
    relay.client = std::move(pairs[2 * i]);
    relay.upstream = std::move(pairs[2 * i + 1]);
    auto tunnel = Tunnel::Start(*loop_, std::move(relay.client.tunnel),
                                std::move(relay.upstream.tunnel), {}, {}, options,
                                [&](TunnelEnd, const TunnelStats&, std::string) { ++done_calls; });
    ASSERT_TRUE(tunnel.has_value()) << tunnel.error().message();
    relay.tunnel = std::move(tunnel).value();
  }
  // Each tunnel carries a request and a response, then all go quiet.
  for (Relay& relay : relays) {
    SendAll(relay.client.peer.get(), "request");
    SendAll(relay.upstream.peer.get(), "response");
  }
  std::vector<Received> at_clients(kTunnels);
  std::vector<Received> at_upstreams(kTunnels);
  ASSERT_TRUE(RunUntil([&] {
    bool all = true;
    for (size_t i = 0; i < kTunnels; ++i) {
      at_upstreams[i].Poll(relays[i].upstream.peer.get());
      at_clients[i].Poll(relays[i].client.peer.get());
      all = all && at_upstreams[i].bytes.size() == 7 && at_clients[i].bytes.size() == 8;
    }
    return all;
  }));
  RunFor(10ms);

  EXPECT_EQ(done_calls, 0);
  EXPECT_EQ(pool.outstanding(), 0u);
  EXPECT_LE(pool.spare(), kDefaultMaxSparePipes);
  EXPECT_LE(pool.stats().created, kDefaultMaxSparePipes);
  for (const Relay& relay : relays) {
    EXPECT_EQ(relay.tunnel->stats().bytes_up, 7u);
    EXPECT_EQ(relay.tunnel->stats().bytes_down, 8u);
  }
  // The only fds the quiet tunnels leave open are their sockets, plus the pool's spares.
  const size_t fds_now = CountOpenFds();
  EXPECT_EQ(fds_now, fds_before + 4 * kTunnels + 2 * pool.spare());
  const size_t rss_now = RssKib();
  std::printf("[   INFO   ] %zu quiet tunnels: %zu pipes made, %zu spare, RSS +%zu KiB\n", kTunnels,
              static_cast<size_t>(pool.stats().created), pool.spare(),
              rss_now > rss_before ? rss_now - rss_before : 0);

  relays.clear();
  EXPECT_EQ(loop_->handler_count(), 0u);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
}

}  // namespace
}  // namespace srt::proxy
