// SPDX-License-Identifier: Apache-2.0
// server/decider_link.h: the proxy's end of `srt proxy`'s decider protocol v1
// (decider/protocol.h) over inherited descriptors, on the server's EventLoop. Internal to server/.
//
// Usage protocol:
//   1. DeciderLink::Start(loop, options) sends the proxy's hello; options.on_hello runs once the
//      decider's hello arrived (the caller starts serving then).
//   2. Sessions Ask() about each request; `done` runs later on the loop, exactly once (unless
//      Cancel()led): an allow or deny verdict, need_body (then SendBody() and a second `done`),
//      or kUnavailable (timed out, or the link is dead) with the reason.
//   3. Any violation of the protocol by the decider, its stream ending, or a write error kills
//      the link: every waiting request gets kUnavailable, options.on_dead runs once, and every
//      later Ask() is answered kUnavailable.
// One timer per verdict awaited (options.timeout, 5 s); none while a need_body's body is read.
// A verdict that comes after its request timed out is dropped; one for an id nothing waited on is
// a violation (ids more than 4096 below the newest are forgotten, their late verdicts dropped).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/unique_fd.h"
#include "decider/protocol.h"
#include "loop/event_loop.h"
#include "srt/result.h"

namespace srt::proxy {

class DeciderLink {
 public:
  struct Options {
    UniqueFd input;   // decider -> proxy
    UniqueFd output;  // proxy -> decider (may be a dup of input: one socket)
    std::chrono::milliseconds timeout{5000};
    std::function<void(const decider::DeciderHello&)> on_hello;
    std::function<void(const std::string& why)> on_dead;
  };
  struct Outcome {
    enum class Kind { kVerdict, kUnavailable, kBadRequest };
    Kind kind = Kind::kUnavailable;
    decider::Verdict verdict;  // kVerdict
    std::string reason;        // kUnavailable, kBadRequest
  };
  using Done = std::function<void(Outcome)>;

  [[nodiscard]] static Result<std::unique_ptr<DeciderLink>> Start(EventLoop& loop, Options options);
  ~DeciderLink();
  DeciderLink(const DeciderLink&) = delete;
  DeciderLink& operator=(const DeciderLink&) = delete;

  // Asks about `request` (its id is assigned here); returns the id for SendBody/Cancel.
  uint64_t Ask(decider::Request request, Done done);
  // After a need_body verdict: the body (at most its max), `cut` if there was more.
  void SendBody(uint64_t id, std::string_view data, bool cut, Done done);
  // The asker is gone: nothing is called for `id` any more; a late verdict is dropped.
  void Cancel(uint64_t id);
  [[nodiscard]] bool dead() const { return !dead_reason_.empty(); }
  // Kills the link (shutdown): as a violation, without on_dead.
  void Close();

 private:
  struct IoHandler;
  struct Waiter {
    Done done;
    EventLoop::TimerId timer = EventLoop::kNoTimer;
    bool need_body_seen = false;
    bool reading_body = false;  // need_body answered, body not sent yet: no timer, deny only
  };
  enum class Late { kVerdict, kBodyShown };

  DeciderLink(EventLoop& loop, Options options);
  void OnInput();
  void OnOutput();
  void OnFrame(const std::string& frame);
  void Send(const std::string& payload);
  void Arm(uint64_t id);
  void Deliver(uint64_t id, Outcome outcome);
  void Die(const std::string& why, bool notify = true);
  void UpdateOutputInterest();

  EventLoop& loop_;
  Options options_;
  std::unique_ptr<IoHandler> in_handler_;
  std::unique_ptr<IoHandler> out_handler_;
  decider::FrameReader reader_;
  std::string out_;
  size_t out_sent_ = 0;
  bool got_hello_ = false;
  std::string dead_reason_;
  uint64_t last_id_ = 0;
  std::map<uint64_t, Waiter> waiters_;
  std::map<uint64_t, Late> late_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace srt::proxy
