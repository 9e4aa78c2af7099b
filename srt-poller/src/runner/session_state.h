// SPDX-License-Identifier: Apache-2.0
// runner/session_state.h: the session runner's pure state machine (no threads, no clock reads,
// no I/O). Events go in (from the history listing or the live stream), actions come out.
//
// Usage protocol (the SessionRunner does exactly this, under one mutex):
//   1. On every (re)connect, after the stream is open: OnHistory(all events, now).
//   2. For every live event: OnStreamEvent(event, now). Apply the returned actions in order.
//   3. For a kRun action: queue the call; before running it check ShouldRun(id); after the
//      result post (or the decision not to run) call OnDispatchDone(id, posted, now).
//   4. Poll IdleDeadline() and over().
//
// Rules (work-queue-protocol §2.5, Go SDK betasessiontoolrunner.go):
//   - Every event id is remembered (bounded, oldest forgotten first); a live event whose id was
//     already seen (in history or the stream) is ignored entirely.
//   - A tool use is answered once a user.tool_result / user.custom_tool_result names it, once
//     our own post succeeded, or once it was denied. Answered calls never run again; a call whose
//     post failed stays unanswered and is dispatched again by the next OnHistory.
//   - agent.tool_use: evaluated_permission "allow" or absent runs; "deny" is denied; "ask" or any
//     other value is held until a user.tool_confirmation: "allow" runs it, anything else denies.
//     A verdict that arrives before its call is remembered. A server-side "deny" beats a verdict.
//   - agent.custom_tool_use runs only if its name is in owned_custom_tools (empty by default);
//     otherwise nothing is posted and the call is left pending for its owner. Same for a
//     built-in tool name outside served_tools, when that set is given.
//   - agent.mcp_tool_use is ignored (MCP runs on Anthropic's side).
//   - session.status_idle with stop_reason end_turn arms the idle clock (max_idle; <= 0 never);
//     any other event disarms it, except user.tool_confirmation, which is neutral. A held call,
//     or an approved call still dispatching, defers an arm until it is resolved; the clock then
//     starts a full fresh window.
//   - session.status_terminated / session.deleted, live or in history: the session is over.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runner/session_events.h"
#include "runner/tool_executor.h"

namespace srt::poller {

using RunnerClock = std::chrono::steady_clock;
using TimePoint = RunnerClock::time_point;

struct SessionStateOptions {
  // Idle exit after an end_turn idle; <= 0 disables it (the CLI's --max-idle 0).
  std::chrono::milliseconds max_idle{std::chrono::seconds(60)};
  // agent.custom_tool_use names this worker answers. None by default: custom tools belong to the
  // customer's application.
  std::set<std::string> owned_custom_tools;
  // agent.tool_use names this worker serves; nullopt means all of them (the executor answers
  // unknown names with an error result).
  std::optional<std::set<std::string>> served_tools;
  // Memory bound of each id set (seen events, answered calls, verdicts).
  size_t max_remembered_ids = 65536;
};

enum class ActionKind {
  kRun,          // queue `call` for the executor, then post its result
  kHold,         // `call` waits for a user.tool_confirmation
  kDeny,         // `call` was denied (by the server or the user): nothing runs or is posted
  kSkipUnowned,  // `call` names a tool this worker does not own: nothing posted, left pending
  kSessionOver,  // the session was terminated or deleted; `detail` says which
};

struct Action {
  ActionKind kind;
  ToolCall call;       // empty for kSessionOver
  std::string detail;  // human-readable reason, for logs
};

// A set of strings that forgets its oldest members beyond `capacity`.
class BoundedIdSet {
 public:
  explicit BoundedIdSet(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
  // True if `id` was not yet a member.
  bool Insert(const std::string& id);
  bool Contains(const std::string& id) const { return set_.count(id) != 0; }
  size_t size() const { return set_.size(); }

 private:
  size_t capacity_;
  std::unordered_set<std::string> set_;
  std::deque<std::string> order_;
};

// The idle countdown (Go's idleClock, with time passed in).
class IdleClock {
 public:
  explicit IdleClock(std::chrono::milliseconds max_idle) : max_idle_(max_idle) {}
  void Arm(TimePoint now);
  void Disarm();
  void Block(const std::string& id);
  void Unblock(const std::string& id, TimePoint now);
  // When the runner should stop for idleness, or nullopt while disarmed.
  std::optional<TimePoint> Deadline() const;
  bool arm_pending() const { return arm_pending_; }
  size_t blockers() const { return blockers_.size(); }

 private:
  std::chrono::milliseconds max_idle_;
  std::optional<TimePoint> armed_at_;
  bool arm_pending_ = false;
  std::set<std::string> blockers_;
};

class SessionState {
 public:
  explicit SessionState(SessionStateOptions options = {});

  // A full history listing, oldest first (one reconcile pass).
  [[nodiscard]] std::vector<Action> OnHistory(const std::vector<Event>& events, TimePoint now);
  // One live event.
  [[nodiscard]] std::vector<Action> OnStreamEvent(const Event& event, TimePoint now);

  // False if the call was answered meanwhile (or the session is over): skip it, but still call
  // OnDispatchDone(id, false, now).
  [[nodiscard]] bool ShouldRun(const std::string& id) const;
  // The dispatch of a kRun call is finished; `posted` says whether its result reached the server.
  void OnDispatchDone(const std::string& id, bool posted, TimePoint now);

  bool over() const { return over_; }
  const std::string& over_reason() const { return over_reason_; }
  std::optional<TimePoint> IdleDeadline() const { return idle_.Deadline(); }
  bool IsAnswered(const std::string& id) const { return answered_.Contains(id); }
  bool IsHeld(const std::string& id) const { return held_.count(id) != 0; }
  bool IsInFlight(const std::string& id) const { return in_flight_.count(id) != 0; }
  size_t held_count() const { return held_.size(); }

 private:
  void Route(const ToolCall& call, const std::string& permission, TimePoint now,
             std::vector<Action>& out);
  void ApplyVerdict(ToolCall call, const std::string& verdict, TimePoint now,
                    std::vector<Action>& out);
  void Dispatch(const ToolCall& call, TimePoint now, std::vector<Action>& out);
  void RecordVerdict(const std::string& id, const std::string& verdict);
  void MarkOver(const std::string& type, std::vector<Action>& out);

  SessionStateOptions options_;
  BoundedIdSet seen_;      // every event id observed
  BoundedIdSet answered_;  // tool-use ids that need nothing more from us
  std::unordered_map<std::string, std::string> verdicts_;  // tool_use_id -> allow|deny|...
  std::deque<std::string> verdict_order_;
  std::unordered_map<std::string, ToolCall> held_;  // awaiting a confirmation
  std::unordered_set<std::string> in_flight_;       // queued or running
  IdleClock idle_;
  bool over_ = false;
  std::string over_reason_;
};

// A tool-use event as the call the executor runs.
ToolCall ToolCallFromEvent(const Event& event);

}  // namespace srt::poller
