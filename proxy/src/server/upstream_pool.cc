// SPDX-License-Identifier: Apache-2.0
#include "server/upstream_pool.h"

#include <sys/epoll.h>

namespace srt::proxy {

UpstreamConn::UpstreamConn(EventLoop& loop, UniqueFd fd, UpstreamIdentity identity)
    : loop_(loop), fd_(std::move(fd)), identity_(std::move(identity)) {}

UpstreamConn::~UpstreamConn() {
  loop_.CancelTimer(idle_timer_);
  if (registered_) loop_.Remove(fd_.get());
}

bool UpstreamConn::SetInterest(uint32_t events) {
  if (events == 0) {
    if (registered_) loop_.Remove(fd_.get());
    registered_ = false;
    return true;
  }
  if (!registered_) {
    if (!loop_.Add(fd_.get(), events, this)) return false;
    registered_ = true;
  } else if (events != interest_ && !loop_.Modify(fd_.get(), events)) {
    return false;
  }
  interest_ = events;
  return true;
}

UniqueFd UpstreamConn::Release() {
  if (registered_) loop_.Remove(fd_.get());
  registered_ = false;
  return std::move(fd_);
}

void UpstreamConn::OnEvents(uint32_t events) {
  if (owner_ != nullptr) return owner_->OnEvents(events);
  // Idle: bytes nobody asked for, a close or an error. Either way it cannot carry the next
  // request's answer safely. Destroys *this.
  if (pool_ != nullptr) pool_->Drop(this);
}

UpstreamPool::UpstreamPool(EventLoop& loop, size_t& total, Limits limits)
    : loop_(loop), total_(total), limits_(limits) {}

UpstreamPool::~UpstreamPool() { Clear(); }

void UpstreamPool::Clear() {
  total_ -= idle_.size();
  idle_.clear();
}

void UpstreamPool::Put(std::unique_ptr<UpstreamConn> conn) {
  if (!conn || limits_.per_client == 0 || total_ >= limits_.max_total) return;
  conn->owner_ = nullptr;
  if (!conn->SetInterest(EPOLLIN | EPOLLRDHUP)) return;
  while (idle_.size() >= limits_.per_client) {
    idle_.pop_back();
    --total_;
  }
  UpstreamConn* raw = conn.get();
  raw->pool_ = this;
  raw->idle_timer_ = loop_.AddTimer(limits_.idle_timeout, [this, raw] {
    raw->idle_timer_ = EventLoop::kNoTimer;
    Drop(raw);
  });
  idle_.push_front(std::move(conn));
  ++total_;
}

std::unique_ptr<UpstreamConn> UpstreamPool::Take(const UpstreamIdentity& want) {
  for (auto it = idle_.begin(); it != idle_.end();) {
    if ((*it)->identity().rules != want.rules) {
      it = idle_.erase(it);
      --total_;
      continue;
    }
    if (!(*it)->identity().SameDestination(want)) {
      ++it;
      continue;
    }
    std::unique_ptr<UpstreamConn> conn = std::move(*it);
    idle_.erase(it);
    --total_;
    loop_.CancelTimer(conn->idle_timer_);
    conn->idle_timer_ = EventLoop::kNoTimer;
    conn->pool_ = nullptr;
    return conn;
  }
  return nullptr;
}

void UpstreamPool::Drop(UpstreamConn* conn) {
  for (auto it = idle_.begin(); it != idle_.end(); ++it) {
    if (it->get() != conn) continue;
    idle_.erase(it);  // destroys it: unregistered, timer cancelled, closed
    --total_;
    return;
  }
}

}  // namespace srt::proxy
