// SPDX-License-Identifier: Apache-2.0
// server/pipe_pool.h: the pipes the splice(2) relays of one EventLoop borrow while they have bytes
// in flight, kept on a small free list so that idle tunnels hold none and busy ones reuse them.
//
// Why a pool: a pipe costs two fds and is charged to the user's pipe pages
// (/proc/sys/fs/pipe-user-pages-soft, 16384 pages by default: past it an unprivileged user's new
// pipes get two pages and cannot grow). A tunnel that owned two pipes for its whole life would
// spend four fds and up to 2 * pipe_bytes of that budget while idle, which is what most tunnels
// are most of the time.
//
// Usage protocol (one pool per EventLoop, loop thread only, no locking):
//   1. A relay direction that has bytes to move calls Acquire(). On failure (EMFILE, ENFILE, the
//      pool's max_pipes) it copies through a user-space buffer instead (server/tunnel.h).
//   2. Once the pipe is empty again, Release() returns it; a pipe that may still hold bytes (the
//      relay failed or was destroyed mid-transfer) goes to Discard(), which closes it, because
//      stale bytes would leak into the next borrower's stream.
//   3. Every acquired pipe comes back through Release() or Discard(); the pool must outlive
//      everything that borrowed from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::proxy {

// Capacity the pool asks for with F_SETPIPE_SZ (see PipePool::Options::pipe_bytes): 1 MiB, the
// default /proc/sys/fs/pipe-max-size, so unprivileged users get it too. Measured with 1 GiB over
// loopback on 2 vCPUs (a shared box, medians of 20 interleaved runs), the relay's own CPU per GiB
// was 0.41 s with 256 KiB pipes, 0.34 s with 512 KiB and 0.30 s with 1 MiB (fewer splice calls
// and loop turns), and throughput relative to a direct connection 0.46, 0.44 and 0.47 (noise is
// about +-0.05). The price: each pipe, busy or spare, charges 256 pages to the user's
// pipe-user-pages-soft (16384), so about 64 busy directions get full-size pipes before new ones
// shrink to two pages; a deployment short of pipe pages passes a smaller size.
inline constexpr size_t kDefaultPipeBytes = size_t{1024} * 1024;
// Empty pipes a pool keeps for reuse; the rest are closed on Release(). Eight 1 MiB spares charge
// 2048 pages, an eighth of the default soft limit, and save a pipe2() + F_SETPIPE_SZ + close per
// burst, which is cheap: more spares would buy little.
inline constexpr size_t kDefaultMaxSparePipes = 8;

// Both ends of one pipe, O_NONBLOCK | O_CLOEXEC.
struct Pipe {
  UniqueFd read;
  UniqueFd write;

  explicit operator bool() const { return static_cast<bool>(read); }
};

class PipePool {
 public:
  struct Options {
    // F_SETPIPE_SZ for new pipes. The kernel rounds up to a power-of-two number of pages and
    // refuses more than /proc/sys/fs/pipe-max-size (or any growth past the user's soft page
    // limit); a refused pipe keeps the size it got (64 KiB, or 8 KiB past the soft limit) and is
    // used anyway.
    size_t pipe_bytes = kDefaultPipeBytes;
    // Empty pipes kept on the free list; Release() closes the ones beyond it.
    size_t max_spare = kDefaultMaxSparePipes;
    // Pipes handed out at once. Beyond it Acquire() fails as if the process were out of fds, so
    // the relays fall back to copying: a bound on the kernel memory pipes pin for one loop.
    size_t max_pipes = std::numeric_limits<size_t>::max();
  };

  // Counters for tests and for the proxy's status output.
  struct Stats {
    uint64_t created = 0;           // pipe2() calls that succeeded
    uint64_t reused = 0;            // Acquire() served from the free list
    uint64_t acquire_failures = 0;  // Acquire() failed (pipe2 error or max_pipes)
    uint64_t resize_failures = 0;   // F_SETPIPE_SZ refused; the pipe was used at its size
    uint64_t discarded = 0;         // Discard() calls
  };

  PipePool() : PipePool(Options{}) {}
  explicit PipePool(const Options& options);
  // Closes the spare pipes. Pipes still out are their holders' to close (see the protocol).
  ~PipePool() = default;
  PipePool(const PipePool&) = delete;
  PipePool& operator=(const PipePool&) = delete;

  // The most recently released spare pipe (warm in the caches), else a new one sized to
  // options.pipe_bytes. Fails with kSystem: EMFILE or ENFILE from pipe2(2), or EMFILE when
  // max_pipes are out.
  [[nodiscard]] Result<Pipe> Acquire();
  // Takes back a pipe from Acquire() that holds no bytes: kept as a spare, or closed if
  // max_spare are kept already. An empty (moved-from) Pipe is ignored.
  void Release(Pipe pipe);
  // Takes back a pipe from Acquire() that may hold bytes, and closes it.
  void Discard(Pipe pipe);

  // Pipes acquired and not yet released or discarded.
  [[nodiscard]] size_t outstanding() const { return outstanding_; }
  // Pipes on the free list.
  [[nodiscard]] size_t spare() const { return spare_.size(); }
  [[nodiscard]] const Stats& stats() const { return stats_; }
  [[nodiscard]] const Options& options() const { return options_; }

 private:
  Options options_;
  std::vector<Pipe> spare_;  // a stack: the last released is handed out first
  size_t outstanding_ = 0;
  Stats stats_;
};

}  // namespace srt::proxy
