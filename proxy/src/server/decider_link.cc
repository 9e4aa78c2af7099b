// SPDX-License-Identifier: Apache-2.0
#include "server/decider_link.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "base/system_text.h"

namespace srt::proxy {
namespace {

// Bytes written to the decider and not taken yet before it counts as gone: room for the largest
// body frame (32 MiB as base64) and request frames besides.
constexpr size_t kMaxQueuedBytes = size_t{80} << 20;
constexpr uint64_t kIdWindow = 4096;

}  // namespace

struct DeciderLink::IoHandler final : Handler {
  std::function<void()> fn;
  void OnEvents(uint32_t) override { fn(); }
};

DeciderLink::DeciderLink(EventLoop& loop, Options options)
    : loop_(loop), options_(std::move(options)) {}

Result<std::unique_ptr<DeciderLink>> DeciderLink::Start(EventLoop& loop, Options options) {
  for (int fd : {options.input.get(), options.output.get()}) {
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      return SysError("decider fd " + std::to_string(fd));
    }
  }
  std::unique_ptr<DeciderLink> link(new DeciderLink(loop, std::move(options)));
  DeciderLink* raw = link.get();
  link->in_handler_ = std::make_unique<IoHandler>();
  link->in_handler_->fn = [raw] { raw->OnInput(); };
  link->out_handler_ = std::make_unique<IoHandler>();
  link->out_handler_->fn = [raw] { raw->OnOutput(); };
  SRT_RETURN_IF_ERROR(
      loop.Add(link->options_.input.get(), EPOLLIN | EPOLLRDHUP, link->in_handler_.get()));
  link->Send(decider::EncodeProxyHello());
  return link;
}

DeciderLink::~DeciderLink() {
  *alive_ = false;
  for (auto& [id, waiter] : waiters_) loop_.CancelTimer(waiter.timer);
  if (options_.input) loop_.Remove(options_.input.get());
  if (options_.output) loop_.Remove(options_.output.get());
}

void DeciderLink::OnInput() {
  char buf[64 * 1024];
  for (int rounds = 0; rounds < 16 && !dead(); ++rounds) {
    const ssize_t n = read(options_.input.get(), buf, sizeof buf);
    if (n == 0) return Die("decider closed the stream");
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      return Die(std::string("read error: ") + ErrnoText(errno));
    }
    reader_.Append({buf, static_cast<size_t>(n)});
    std::string frame;
    for (;;) {
      switch (reader_.Next(frame)) {
        case decider::FrameReader::Status::kNeedMore:
          break;
        case decider::FrameReader::Status::kOversized:
          return Die("oversized frame");
        case decider::FrameReader::Status::kFrame:
          OnFrame(frame);
          if (dead()) return;
          continue;
      }
      break;
    }
  }
}

void DeciderLink::OnFrame(const std::string& frame) {
  if (!got_hello_) {
    Result<decider::DeciderHello> hello = decider::ParseDeciderHello(frame);
    if (!hello) return Die("bad hello: " + hello.error().message());
    got_hello_ = true;
    if (options_.on_hello) options_.on_hello(*hello);
    return;
  }
  Result<decider::Verdict> verdict = decider::ParseVerdict(frame);
  if (!verdict) return Die("bad verdict frame: " + verdict.error().message());
  const uint64_t id = verdict->id;
  const decider::Action action = verdict->action;
  auto it = waiters_.find(id);
  if (it != waiters_.end()) {
    Waiter& w = it->second;
    if (w.reading_body && action != decider::Action::kDeny) {
      return Die("a verdict other than deny while the body was read");
    }
    if (action == decider::Action::kNeedBody) {
      if (w.need_body_seen) return Die("a second need_body");
      w.need_body_seen = true;
      w.reading_body = true;
      loop_.CancelTimer(w.timer);
      w.timer = EventLoop::kNoTimer;
      Done done = w.done;  // the waiter stays: SendBody() re-arms it, a deny may still end it
      Outcome outcome;
      outcome.kind = Outcome::Kind::kVerdict;
      outcome.verdict = std::move(*verdict);
      done(std::move(outcome));
      return;
    }
    Outcome outcome;
    outcome.kind = Outcome::Kind::kVerdict;
    outcome.verdict = std::move(*verdict);
    return Deliver(id, std::move(outcome));
  }
  auto late = late_.find(id);
  if (late != late_.end()) {
    if (action == decider::Action::kNeedBody && late->second != Late::kVerdict) {
      return Die("need_body where none may come");
    }
    if (action != decider::Action::kNeedBody) late_.erase(late);
    return;
  }
  if (id < last_id_ && last_id_ - id >= kIdWindow) return;
  Die("verdict for id " + std::to_string(id) + ", which nothing waits on");
}

void DeciderLink::Deliver(uint64_t id, Outcome outcome) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  loop_.CancelTimer(it->second.timer);
  Done done = std::move(it->second.done);
  waiters_.erase(it);
  done(std::move(outcome));
}

uint64_t DeciderLink::Ask(decider::Request request, Done done) {
  const uint64_t id = last_id_ + 1;
  auto later = [this, alive = alive_](Done fn, Outcome outcome) {
    loop_.RunInLoop([alive, fn = std::move(fn), outcome = std::move(outcome)]() mutable {
      if (*alive) fn(std::move(outcome));
    });
  };
  if (dead() || !got_hello_) {
    later(std::move(done), {Outcome::Kind::kUnavailable,
                            {},
                            dead() ? "request decider unavailable" : "request decider not ready"});
    return 0;
  }
  if (id > decider::kMaxId) {
    Die("request ids exhausted");
    later(std::move(done), {Outcome::Kind::kUnavailable, {}, "request decider unavailable"});
    return 0;
  }
  request.id = id;
  Result<std::string> frame = decider::EncodeRequest(request);
  if (!frame) {
    later(std::move(done), {Outcome::Kind::kBadRequest, {}, frame.error().message()});
    return 0;
  }
  last_id_ = id;
  waiters_[id].done = std::move(done);
  Arm(id);
  Send(*frame);
  return id;
}

void DeciderLink::SendBody(uint64_t id, std::string_view data, bool cut, Done done) {
  auto it = waiters_.find(id);
  if (it == waiters_.end() || dead()) {
    loop_.RunInLoop([alive = alive_, done = std::move(done)] {
      if (*alive) done({Outcome::Kind::kUnavailable, {}, "request decider unavailable"});
    });
    return;
  }
  it->second.done = std::move(done);
  it->second.reading_body = false;
  Arm(id);
  Send(decider::EncodeBody(id, data, cut));
}

void DeciderLink::Cancel(uint64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  loop_.CancelTimer(it->second.timer);
  late_[id] = it->second.need_body_seen ? Late::kBodyShown : Late::kVerdict;
  waiters_.erase(it);
}

void DeciderLink::Arm(uint64_t id) {
  Waiter& w = waiters_[id];
  loop_.CancelTimer(w.timer);
  w.timer = loop_.AddTimer(options_.timeout, [this, id] {
    auto it = waiters_.find(id);
    if (it == waiters_.end()) return;
    it->second.timer = EventLoop::kNoTimer;
    const bool shown = it->second.need_body_seen;
    Done done = std::move(it->second.done);
    waiters_.erase(it);
    late_[id] = shown ? Late::kBodyShown : Late::kVerdict;
    while (!late_.empty() && last_id_ - late_.begin()->first >= kIdWindow)
      late_.erase(late_.begin());
    done({Outcome::Kind::kUnavailable, {}, "request decider: decider timed out"});
  });
}

void DeciderLink::Send(const std::string& payload) {
  if (dead()) return;
  out_ += decider::EncodeFrame(payload);
  if (out_.size() - out_sent_ > kMaxQueuedBytes) {
    return Die("not reading: " + std::to_string(out_.size() - out_sent_) + " bytes queued");
  }
  OnOutput();
}

void DeciderLink::OnOutput() {
  while (!dead() && out_sent_ < out_.size()) {
    const ssize_t n =
        write(options_.output.get(), out_.data() + out_sent_, out_.size() - out_sent_);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) break;
      return Die(std::string("write error: ") + ErrnoText(errno));
    }
    out_sent_ += static_cast<size_t>(n);
  }
  if (out_sent_ == out_.size()) {
    out_.clear();
    out_sent_ = 0;
  } else if (out_sent_ > size_t{1} << 20) {
    out_.erase(0, out_sent_);
    out_sent_ = 0;
  }
  UpdateOutputInterest();
}

void DeciderLink::UpdateOutputInterest() {
  const bool want = !dead() && out_sent_ < out_.size();
  const bool registered = loop_.IsRegistered(options_.output.get());
  if (want && !registered) {
    (void)loop_.Add(options_.output.get(), EPOLLOUT, out_handler_.get());
  } else if (!want && registered) {
    loop_.Remove(options_.output.get());
  }
}

void DeciderLink::Close() { Die("closed", /*notify=*/false); }

void DeciderLink::Die(const std::string& why, bool notify) {
  if (dead()) return;
  dead_reason_ = why;
  loop_.Remove(options_.input.get());
  loop_.Remove(options_.output.get());
  std::map<uint64_t, Waiter> waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& [id, waiter] : waiters) {
    loop_.CancelTimer(waiter.timer);
    Done done = std::move(waiter.done);
    loop_.RunInLoop([alive = alive_, done = std::move(done), why] {
      if (*alive) done({Outcome::Kind::kUnavailable, {}, "request decider: " + why});
    });
  }
  if (notify && options_.on_dead) options_.on_dead(why);
}

}  // namespace srt::proxy
