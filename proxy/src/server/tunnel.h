// SPDX-License-Identifier: Apache-2.0
// server/tunnel.h: relays bytes between a client and an upstream socket until both directions
// have ended: splice(2) through a pipe borrowed per direction while it has bytes in flight (no
// user-space copy), half-close forwarded with shutdown(SHUT_WR), idle timeout, byte counts for the
// decision log.
//
// Usage protocol (the sessions in server/):
//   1. Both sockets are connected, non-blocking and CLOEXEC. Bytes a session already read past
//      a handshake (a pipelined request after CONNECT, a peeked TLS ClientHello, data a parent
//      proxy sent after its 200) go in `to_upstream` / `to_client`; the tunnel writes them
//      before it relays anything else in that direction.
//   2. Tunnel::Start() registers both sockets with the loop (loop thread only).
//   3. `done` runs exactly once, on the loop thread, when both directions have ended (EOF read
//      and forwarded as a shutdown), on the first hard error (then both sockets are closed with
//      a reset, so neither peer mistakes a truncated stream for a complete one), or when
//      `idle_timeout` passes with no byte moved either way. `done` is the tunnel's last act:
//      the owner may destroy the Tunnel inside it.
//   4. Destroying the Tunnel earlier unregisters and closes everything without calling `done`.
//
// Pipes: a direction borrows a pipe from Options::pipes (server/pipe_pool.h) when its socket
// becomes readable and gives it back as soon as the pipe is drained, so an idle tunnel holds two
// sockets and nothing else. If no pipe can be had (EMFILE, ENFILE, the pool's max_pipes), the
// direction copies through a bounded user-space buffer (recv/send, kCopyBufferBytes, allocated
// only while bytes are in it) and tries for a pipe again once that buffer is drained. Running
// out of pipes makes a tunnel slower, never makes it fail.
//
// Before `done` runs, the tunnel has unregistered and closed both sockets and returned its pipes
// (a pipe that may still hold bytes is closed, not pooled): after a clean end or an idle timeout
// with an ordinary close, after an error with SO_LINGER {1, 0} (RST).
//
// SIGPIPE: splice(2) into a socket whose peer is gone raises SIGPIPE (splice has no
// MSG_NOSIGNAL). The loop thread must block or ignore it; LoopThread blocks every signal
// (loop/loop_thread.h), and the tunnel then sees the EPIPE as an error like any other.
//
// Direction names: "up" is client -> upstream, "down" is upstream -> client.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/unique_fd.h"
#include "loop/event_loop.h"
#include "proxy_limits.h"
#include "server/pipe_pool.h"
#include "srt/result.h"

namespace srt::proxy {

// Bytes written to the receiving socket (so bytes still in a pipe or copy buffer when a tunnel
// fails are not counted).
struct TunnelStats {
  uint64_t bytes_up = 0;    // client -> upstream, `to_upstream` included
  uint64_t bytes_down = 0;  // upstream -> client, `to_client` included
  // The client's EOF was forwarded (it is done sending; the other direction may still flow).
  bool client_ended = false;
};

enum class TunnelEnd {
  kClosed,  // both directions reached EOF and were forwarded
  kIdle,    // idle_timeout passed without traffic
  kError,   // a read, write or splice failed (ECONNRESET, EPIPE, ...)
};

// "closed", "idle", "error": stable names for the decision log.
[[nodiscard]] std::string_view TunnelEndName(TunnelEnd end);

class Tunnel {
 public:
  // `error` is empty unless end == kError, then e.g. "upstream: Connection reset by peer".
  using Done = std::function<void(TunnelEnd end, const TunnelStats& stats, std::string error)>;

  struct Options {
    // Zero or negative: no idle timeout.
    std::chrono::milliseconds idle_timeout = kIdleTimeout;
    // Where the directions borrow their pipes; loop thread only, and it must outlive the tunnel.
    // A server passes its loop's pool. nullptr: the tunnel makes a private pool of `pipe_bytes`
    // pipes that keeps up to two spares, so such a tunnel holds up to two pipes (four fds) from
    // its first transfer until it ends, as before pools existed; for tests and one-off tunnels.
    PipePool* pipes = nullptr;
    // Pipe capacity of the private pool (pipes == nullptr only; a shared pool has its own).
    size_t pipe_bytes = kDefaultPipeBytes;
  };

  // The user-space buffer a direction copies through while it has no pipe.
  static constexpr size_t kCopyBufferBytes = size_t{16} * 1024;

  // Fails only if a socket cannot be registered with the loop (EventLoop::Add: kSystem, e.g.
  // ENOSPC from epoll_ctl; kInvalidArgument if it already is); the sockets are then closed. Pipes
  // are not needed to start (see the file comment).
  [[nodiscard]] static Result<std::unique_ptr<Tunnel>> Start(EventLoop& loop, UniqueFd client,
                                                             UniqueFd upstream,
                                                             std::string to_upstream,
                                                             std::string to_client,
                                                             const Options& options, Done done);
  ~Tunnel();
  Tunnel(const Tunnel&) = delete;
  Tunnel& operator=(const Tunnel&) = delete;

  [[nodiscard]] const TunnelStats& stats() const { return stats_; }
  // Whether bytes read from the upstream are still waiting to be written to the client.
  [[nodiscard]] bool owes_client() const;

 private:
  class Impl;
  Tunnel();
  // Written by impl_ (so it is declared first and outlives it).
  TunnelStats stats_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace srt::proxy
