// SPDX-License-Identifier: Apache-2.0
// loop/event_loop.h: the proxy's reactor: one epoll loop per thread, an eventfd wakeup, timers.
//
// Usage protocol (muduo's EventLoop/Channel shape, house style §2.6):
//   1. EventLoop::Create() on any thread (or LoopThread::Start(), loop/loop_thread.h).
//   2. Register fds with Add(fd, EPOLLIN | ..., handler). The loop owns neither the fd nor the
//      handler: the owner (a session holding a UniqueFd) calls Remove(fd) BEFORE it closes the fd
//      and before the handler dies. Removing is safe from any callback, including the handler's
//      own OnEvents(): an event already fetched for a removed fd is never delivered, even if the
//      fd number is reused by a new registration in the same batch.
//   3. Run() on the thread that is to own the loop; it returns after Stop().
//   4. Other threads talk to the loop only through RunInLoop() and Stop(); everything else is
//      loop-thread-only and checked by AssertInLoopThread().
//
// Thread ownership: while a thread is inside Run(), only that thread may call Add/Modify/Remove/
// AddTimer/CancelTimer. While no thread runs the loop (setup before Run(), teardown after it
// returned), any thread may call them: the caller provides the exclusion, e.g. LoopThread joins
// its thread before it hands the loop back. A call from a wrong thread is a programming error that
// would corrupt memory, so AssertInLoopThread() aborts in every build type (it is one atomic load
// and a pthread_equal, cheap enough to keep on in release builds).
//
// One iteration: epoll_wait (timeout = the earliest timer) -> handlers of ready fds -> expired
// timers (in deadline order, ties in creation order) -> functors queued by RunInLoop (FIFO).
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/unique_fd.h"
#include "loop/thread_annotations.h"
#include "srt/result.h"

namespace srt::proxy {

// Something that wants to hear about readiness of one fd (muduo's Channel, minus the fd).
class Handler {
 public:
  virtual ~Handler() = default;
  // `epoll_events` is the epoll mask as reported by the kernel, with EPOLLIN added whenever
  // EPOLLRDHUP, EPOLLHUP or EPOLLERR is set, so that closes and errors surface on the read path
  // (a read(2) then returns 0 or the error). The handler may Remove() itself or any other fd,
  // delete itself, Add() new fds, or queue work; it must not destroy the loop.
  virtual void OnEvents(uint32_t epoll_events) = 0;
};

class EventLoop {
 public:
  using TimerId = uint64_t;
  // Never returned by AddTimer(); CancelTimer(kNoTimer) does nothing.
  static constexpr TimerId kNoTimer = 0;

  // epoll_create1(EPOLL_CLOEXEC) plus a non-blocking CLOEXEC eventfd for wakeups.
  [[nodiscard]] static Result<std::unique_ptr<EventLoop>> Create();
  // Must not run: destroy it after Run() returned (or without ever running it). Functors still
  // queued and timers still armed are destroyed without being called.
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Registers `fd` for `events` (EPOLLIN, EPOLLOUT, EPOLLRDHUP, EPOLLET, ...; EPOLLHUP and EPOLLERR
  // are always reported by the kernel). Fails with kInvalidArgument if `fd` is already
  // registered, kSystem if epoll_ctl fails (ENOSPC: max_user_watches; EPERM: a regular file).
  [[nodiscard]] Result<void> Add(int fd, uint32_t events, Handler* handler);
  // Changes the event mask of a registered fd; kNotFound if it is not registered.
  [[nodiscard]] Result<void> Modify(int fd, uint32_t events);
  // Unregisters `fd`; no-op if it is not registered. Call before close(fd).
  void Remove(int fd);
  // True if `fd` is registered.
  [[nodiscard]] bool IsRegistered(int fd) const;

  // Runs `fn` once on the loop thread after `delay` (monotonic clock; negative counts as zero).
  // A timer added from a timer callback fires in a later iteration, never in the current one,
  // so a zero-delay re-arm cannot starve the fds. Returns a fresh, never-reused id.
  TimerId AddTimer(std::chrono::milliseconds delay, std::function<void()> fn);
  // Disarms a timer: its callback never runs, also if it was due in this very iteration and an
  // earlier callback cancels it. Unknown, fired and already-cancelled ids are ignored.
  void CancelTimer(TimerId id);

  // Thread-safe. Queues `fn` to run on the loop thread, after the current iteration's handlers
  // and timers, and wakes the loop. Functors run in the order they were queued; a functor queued
  // from the loop thread never runs inline. Functors queued before Stop() are still run before
  // Run() returns (see Run()).
  void RunInLoop(std::function<void()> fn) SRT_EXCLUDES(pending_mu_);

  // Runs the loop on the calling thread until Stop(). Before returning it runs the functors that
  // are still queued (and the ones those queue, for up to kShutdownDrainRounds rounds), but no
  // further timers or fd events. Aborts if another thread is already running this loop or on
  // nested calls. The loop can be Run() again afterwards.
  void Run() SRT_EXCLUDES(pending_mu_);
  // Gives the loop to `thread` before that thread calls Run(), so that from now on no other
  // thread may use it directly (InLoopThread() is false for them) although Run() may not have
  // started yet. Aborts if another thread owns the loop. Run() on `thread` takes it over; once
  // Run() returns, nobody owns the loop again.
  void BindTo(std::thread::id thread);
  // Thread-safe and idempotent: makes Run() return after the current iteration. A Stop() before
  // Run() makes the next Run() return right after its shutdown drain.
  void Stop();

  // True on the thread inside Run() (or bound to, BindTo), and on any thread while nobody owns
  // the loop.
  [[nodiscard]] bool InLoopThread() const;
  // Aborts with a message on stderr unless InLoopThread(); always on, see the file comment.
  void AssertInLoopThread() const;

  // Introspection for tests and limits: registered fds and armed (not yet fired) timers.
  [[nodiscard]] size_t handler_count() const { return handlers_.size(); }
  [[nodiscard]] size_t timer_count() const { return timers_.size(); }

  static constexpr int kShutdownDrainRounds = 16;

 private:
  using Clock = std::chrono::steady_clock;
  struct Registration {
    Handler* handler;
    uint32_t events;
    uint32_t generation;  // distinguishes a reused fd number from the registration it replaced
  };
  struct TimerEntry {
    Clock::time_point when;
    TimerId id;
  };

  EventLoop(UniqueFd epoll_fd, UniqueFd wakeup_fd);
  static bool Later(const TimerEntry& a, const TimerEntry& b);
  void Wakeup();
  void DrainWakeup();
  void Dispatch(int ready);
  int NextTimeoutMs();
  void RunExpiredTimers(Clock::time_point now);
  void MaybeCompactTimers();
  // Runs the queued functors once; false if there were none.
  bool RunPending() SRT_EXCLUDES(pending_mu_);

  UniqueFd epoll_fd_;
  UniqueFd wakeup_fd_;
  // The thread inside Run() or bound to it, or a default id when nobody owns the loop.
  std::atomic<std::thread::id> owner_{};
  // Set while a thread is inside Run(): a nested or second Run() aborts.
  std::atomic<bool> in_run_{false};
  std::atomic<bool> quit_{false};

  // Loop-thread state.
  std::unordered_map<int, Registration> handlers_;
  uint32_t next_generation_ = 1;  // 0 marks the wakeup eventfd
  std::vector<epoll_event> ready_;
  std::unordered_map<TimerId, std::function<void()>> timers_;
  std::vector<TimerEntry> timer_heap_;  // min-heap on (when, id); may hold cancelled ids
  TimerId next_timer_id_ = 1;

  Mutex pending_mu_;
  std::vector<std::function<void()>> pending_ SRT_GUARDED_BY(pending_mu_);
};

}  // namespace srt::proxy
