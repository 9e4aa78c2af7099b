// SPDX-License-Identifier: Apache-2.0
// loop/event_loop.cc: epoll dispatch with generation-guarded registrations, a lazy-deletion timer
// heap and an eventfd-woken functor queue.
#include "loop/event_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>

namespace srt::proxy {
namespace {

constexpr size_t kInitialReadyEvents = 64;
constexpr size_t kMaxReadyEvents = 4096;
constexpr uint32_t kCloseEvents = EPOLLRDHUP | EPOLLHUP | EPOLLERR;

// epoll_event.data carries the fd in the low half and the registration's generation in the high
// half; generation 0 is the wakeup eventfd.
uint64_t PackData(int fd, uint32_t generation) {
  return (uint64_t{generation} << 32) | uint64_t{static_cast<uint32_t>(fd)};
}

// An invariant of the caller broke (wrong thread, nested Run, epoll on a bad fd). Memory would be
// corrupted if we went on, and library code has nobody to return an error to here.
[[noreturn]] void Die(std::string_view what) {
  std::string msg = "srt proxy EventLoop: ";
  msg += what;
  msg += '\n';
  // Best effort; we are about to abort anyway.
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, msg.data(), msg.size());
  std::abort();
}

}  // namespace

// std::*_heap build a max-heap; "later" as the order puts the earliest deadline (then the oldest
// id) on top.
bool EventLoop::Later(const TimerEntry& a, const TimerEntry& b) {
  if (a.when != b.when) {
    return a.when > b.when;
  }
  return a.id > b.id;
}

Result<std::unique_ptr<EventLoop>> EventLoop::Create() {
  UniqueFd epoll_fd(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_fd) {
    return SysError("epoll_create1");
  }
  UniqueFd wakeup_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wakeup_fd) {
    return SysError("eventfd");
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = PackData(wakeup_fd.get(), 0);
  if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, wakeup_fd.get(), &ev) != 0) {
    return SysError("epoll_ctl(ADD, eventfd)");
  }
  return std::unique_ptr<EventLoop>(new EventLoop(std::move(epoll_fd), std::move(wakeup_fd)));
}

EventLoop::EventLoop(UniqueFd epoll_fd, UniqueFd wakeup_fd)
    : epoll_fd_(std::move(epoll_fd)),
      wakeup_fd_(std::move(wakeup_fd)),
      ready_(kInitialReadyEvents) {}

EventLoop::~EventLoop() {
  if (owner_.load(std::memory_order_acquire) != std::thread::id{}) {
    Die("destroyed while Run() is active");
  }
}

bool EventLoop::InLoopThread() const {
  std::thread::id owner = owner_.load(std::memory_order_acquire);
  return owner == std::thread::id{} || owner == std::this_thread::get_id();
}

void EventLoop::AssertInLoopThread() const {
  if (!InLoopThread()) {
    Die("used from a thread other than the one inside Run() (use RunInLoop)");
  }
}

Result<void> EventLoop::Add(int fd, uint32_t events, Handler* handler) {
  AssertInLoopThread();
  if (fd < 0 || handler == nullptr) {
    return MakeError(Errc::kInvalidArgument, "EventLoop::Add: invalid fd or null handler");
  }
  if (handlers_.contains(fd)) {
    return MakeError(Errc::kInvalidArgument,
                     "EventLoop::Add: fd " + std::to_string(fd) + " is already registered");
  }
  uint32_t generation = next_generation_++;
  if (next_generation_ == 0) {
    next_generation_ = 1;
  }
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = PackData(fd, generation);
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    return SysError("epoll_ctl(ADD, fd " + std::to_string(fd) + ")");
  }
  handlers_.emplace(fd, Registration{handler, events, generation});
  return Ok();
}

Result<void> EventLoop::Modify(int fd, uint32_t events) {
  AssertInLoopThread();
  auto it = handlers_.find(fd);
  if (it == handlers_.end()) {
    return MakeError(Errc::kNotFound,
                     "EventLoop::Modify: fd " + std::to_string(fd) + " is not registered");
  }
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = PackData(fd, it->second.generation);
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, fd, &ev) != 0) {
    return SysError("epoll_ctl(MOD, fd " + std::to_string(fd) + ")");
  }
  it->second.events = events;
  return Ok();
}

void EventLoop::Remove(int fd) {
  AssertInLoopThread();
  auto it = handlers_.find(fd);
  if (it == handlers_.end()) {
    return;
  }
  handlers_.erase(it);
  // EBADF/ENOENT mean the owner closed the fd first; the kernel already dropped it then (unless
  // it was dup'ed, which our owners never do), and the map entry above is what guards dispatch.
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

bool EventLoop::IsRegistered(int fd) const {
  AssertInLoopThread();
  return handlers_.contains(fd);
}

EventLoop::TimerId EventLoop::AddTimer(std::chrono::milliseconds delay, std::function<void()> fn) {
  AssertInLoopThread();
  if (delay.count() < 0) {
    delay = std::chrono::milliseconds(0);
  }
  TimerId id = next_timer_id_++;
  timers_.emplace(id, std::move(fn));
  timer_heap_.push_back(TimerEntry{Clock::now() + delay, id});
  std::push_heap(timer_heap_.begin(), timer_heap_.end(), Later);
  return id;
}

void EventLoop::CancelTimer(TimerId id) {
  AssertInLoopThread();
  if (timers_.erase(id) != 0) {
    MaybeCompactTimers();
  }
}

// Cancelled timers stay in the heap until they reach the top. Sessions re-arm idle timers on
// every read, so rebuild the heap once dead entries outnumber live ones, keeping memory
// proportional to the armed timers rather than to the cancellation rate.
void EventLoop::MaybeCompactTimers() {
  if (timer_heap_.size() <= 2 * timers_.size() + 64) {
    return;
  }
  std::erase_if(timer_heap_, [this](const TimerEntry& e) { return !timers_.contains(e.id); });
  std::make_heap(timer_heap_.begin(), timer_heap_.end(), Later);
}

void EventLoop::RunInLoop(std::function<void()> fn) {
  bool was_empty;
  {
    MutexLock lock(pending_mu_);
    was_empty = pending_.empty();
    pending_.push_back(std::move(fn));
  }
  // A non-empty queue already has a wakeup on its way: the loop reads the eventfd during
  // dispatch, before it takes the queue, so no functor can be left behind without a wakeup.
  if (was_empty) {
    Wakeup();
  }
}

void EventLoop::Stop() {
  quit_.store(true, std::memory_order_release);
  Wakeup();
}

void EventLoop::Wakeup() {
  uint64_t one = 1;
  // EAGAIN only if the counter is about to overflow, and then a wakeup is pending anyway.
  [[maybe_unused]] ssize_t n = ::write(wakeup_fd_.get(), &one, sizeof(one));
}

void EventLoop::DrainWakeup() {
  uint64_t count;
  [[maybe_unused]] ssize_t n = ::read(wakeup_fd_.get(), &count, sizeof(count));
}

void EventLoop::BindTo(std::thread::id thread) {
  std::thread::id seen{};
  if (!owner_.compare_exchange_strong(seen, thread, std::memory_order_acq_rel) && seen != thread) {
    Die("BindTo() while another thread owns the loop");
  }
}

void EventLoop::Run() {
  if (in_run_.exchange(true, std::memory_order_acq_rel)) {
    Die("Run() while the loop is already running (nested or on another thread)");
  }
  // Unowned, or bound to this thread (BindTo) before it got here.
  const std::thread::id self = std::this_thread::get_id();
  std::thread::id seen{};
  if (!owner_.compare_exchange_strong(seen, self, std::memory_order_acq_rel) && seen != self) {
    Die("Run() on a thread other than the one the loop is bound to");
  }
  while (!quit_.load(std::memory_order_acquire)) {
    int timeout_ms = NextTimeoutMs();
    int ready =
        ::epoll_wait(epoll_fd_.get(), ready_.data(), static_cast<int>(ready_.size()), timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) {
        continue;
      }
      Die("epoll_wait: " + std::error_code(errno, std::generic_category()).message());
    }
    Dispatch(ready);
    RunExpiredTimers(Clock::now());
    RunPending();
    if (static_cast<size_t>(ready) == ready_.size() && ready_.size() < kMaxReadyEvents) {
      ready_.resize(ready_.size() * 2);
    }
  }
  // Shutdown drain: whoever queued work before Stop() (typically "close every session") gets it
  // run. Bounded, so a functor that keeps re-queueing itself cannot hold shutdown hostage.
  for (int round = 0; round < kShutdownDrainRounds && RunPending(); ++round) {
  }
  quit_.store(false, std::memory_order_release);
  owner_.store(std::thread::id{}, std::memory_order_release);
  in_run_.store(false, std::memory_order_release);
}

void EventLoop::Dispatch(int ready) {
  for (int i = 0; i < ready; ++i) {
    const uint64_t data = ready_[static_cast<size_t>(i)].data.u64;
    const int fd = static_cast<int>(static_cast<uint32_t>(data));
    const auto generation = static_cast<uint32_t>(data >> 32);
    if (generation == 0) {
      DrainWakeup();
      continue;
    }
    // The guard: an earlier handler of this batch may have removed this fd (and maybe deleted
    // its handler, closed it and registered a new fd under the same number).
    auto it = handlers_.find(fd);
    if (it == handlers_.end() || it->second.generation != generation) {
      continue;
    }
    uint32_t events = ready_[static_cast<size_t>(i)].events;
    if ((events & kCloseEvents) != 0) {
      events |= EPOLLIN;
    }
    // Nothing of `it` is used after the call: the handler may invalidate it.
    it->second.handler->OnEvents(events);
  }
}

int EventLoop::NextTimeoutMs() {
  while (!timer_heap_.empty() && !timers_.contains(timer_heap_.front().id)) {
    std::pop_heap(timer_heap_.begin(), timer_heap_.end(), Later);
    timer_heap_.pop_back();
  }
  if (timer_heap_.empty()) {
    return -1;
  }
  auto wait = timer_heap_.front().when - Clock::now();
  if (wait <= Clock::duration::zero()) {
    return 0;
  }
  // Round up: waking a little late is fine, waking early would spin until the deadline.
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
  return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

void EventLoop::RunExpiredTimers(Clock::time_point now) {
  // Take every due entry first: timers added by the callbacks below go to the heap and wait for
  // the next iteration, and a cancellation by an earlier callback is seen by the lookup.
  std::vector<TimerId> due;
  while (!timer_heap_.empty() && timer_heap_.front().when <= now) {
    std::pop_heap(timer_heap_.begin(), timer_heap_.end(), Later);
    due.push_back(timer_heap_.back().id);
    timer_heap_.pop_back();
  }
  for (TimerId id : due) {
    auto it = timers_.find(id);
    if (it == timers_.end()) {
      continue;  // cancelled, possibly by a callback that ran just before
    }
    std::function<void()> fn = std::move(it->second);
    timers_.erase(it);
    fn();
  }
}

bool EventLoop::RunPending() {
  std::vector<std::function<void()>> batch;
  {
    MutexLock lock(pending_mu_);
    batch.swap(pending_);
  }
  for (auto& fn : batch) {
    fn();
  }
  return !batch.empty();
}

}  // namespace srt::proxy
