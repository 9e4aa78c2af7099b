// SPDX-License-Identifier: Apache-2.0
// runner/session_state.cc: the session runner's pure state machine (see session_state.h).
#include "runner/session_state.h"

#include <utility>

namespace srt::poller {

bool BoundedIdSet::Insert(const std::string& id) {
  if (!set_.insert(id).second) {
    return false;
  }
  order_.push_back(id);
  while (order_.size() > capacity_) {
    set_.erase(order_.front());
    order_.pop_front();
  }
  return true;
}

void IdleClock::Arm(TimePoint now) {
  if (max_idle_.count() <= 0) {
    return;
  }
  if (!blockers_.empty()) {
    // Gated work is outstanding, so the session is not idly waiting to stop: defer the arm
    // (and drop any running countdown, which is stale evidence now).
    arm_pending_ = true;
    armed_at_.reset();
    return;
  }
  arm_pending_ = false;
  armed_at_ = now;
}

void IdleClock::Disarm() {
  arm_pending_ = false;
  armed_at_.reset();
}

void IdleClock::Block(const std::string& id) {
  blockers_.insert(id);
  if (armed_at_) {
    arm_pending_ = true;
    armed_at_.reset();
  }
}

void IdleClock::Unblock(const std::string& id, TimePoint now) {
  blockers_.erase(id);
  if (blockers_.empty() && arm_pending_) {
    arm_pending_ = false;
    armed_at_ = now;
  }
}

std::optional<TimePoint> IdleClock::Deadline() const {
  if (!armed_at_) {
    return std::nullopt;
  }
  return *armed_at_ + max_idle_;
}

ToolCall ToolCallFromEvent(const Event& event) {
  ToolCall call;
  call.id = event.id;
  call.name = event.name;
  call.input_json = event.input_json.empty() ? "{}" : event.input_json;
  call.custom = event.type == kAgentCustomToolUse;
  call.session_thread_id = event.session_thread_id;
  return call;
}

SessionState::SessionState(SessionStateOptions options)
    : options_(std::move(options)),
      seen_(options_.max_remembered_ids),
      answered_(options_.max_remembered_ids),
      idle_(options_.max_idle) {}

void SessionState::RecordVerdict(const std::string& id, const std::string& verdict) {
  auto [it, inserted] = verdicts_.insert_or_assign(id, verdict);
  (void)it;
  if (inserted) {
    verdict_order_.push_back(id);
    while (verdict_order_.size() > options_.max_remembered_ids) {
      verdicts_.erase(verdict_order_.front());
      verdict_order_.pop_front();
    }
  }
}

void SessionState::MarkOver(const std::string& type, std::vector<Action>& out) {
  over_ = true;
  over_reason_ = type;
  idle_.Disarm();
  out.push_back(Action{ActionKind::kSessionOver, {}, type});
}

void SessionState::Dispatch(const ToolCall& call, TimePoint now, std::vector<Action>& out) {
  bool owned = call.custom ? options_.owned_custom_tools.count(call.name) != 0
                           : (!options_.served_tools || options_.served_tools->count(call.name));
  if (!owned) {
    // Split-client fulfilment: the tool belongs to another client of this session. Claiming it
    // would corrupt the conversation, so post nothing and leave it unanswered for its owner.
    idle_.Unblock(call.id, now);
    out.push_back(Action{ActionKind::kSkipUnowned, call, "tool not owned by this worker"});
    return;
  }
  in_flight_.insert(call.id);
  out.push_back(Action{ActionKind::kRun, call, call.confirmation.empty() ? "" : "confirmed"});
}

void SessionState::Route(const ToolCall& call, const std::string& permission, TimePoint now,
                         std::vector<Action>& out) {
  std::optional<std::string> verdict;
  if (auto it = verdicts_.find(call.id); it != verdicts_.end()) {
    verdict = it->second;
  }
  if (permission == "deny") {
    verdict = "deny";  // a server-side deny beats any (stray) recorded verdict
  }
  if (!verdict) {
    if (permission.empty() || permission == "allow") {
      Dispatch(call, now, out);
    } else if (held_.count(call.id) == 0) {
      // "ask", or a permission value we do not know: fail closed and wait for the user.
      held_.emplace(call.id, call);
      idle_.Block(call.id);
      out.push_back(Action{ActionKind::kHold, call, "evaluated_permission '" + permission + "'"});
    }
    return;
  }
  ApplyVerdict(call, *verdict, now, out);
}

void SessionState::ApplyVerdict(ToolCall call, const std::string& verdict, TimePoint now,
                                std::vector<Action>& out) {
  bool was_held = held_.erase(call.id) != 0;
  if (verdict == "allow") {
    // The clock stays blocked on an approved call until its dispatch is done: a countdown that
    // ran over it could stop the runner before its result drives the next turn.
    if (!was_held) {
      idle_.Block(call.id);
    }
    call.confirmation = "allow";
    Dispatch(call, now, out);
    return;
  }
  // "deny", or any verdict we do not know (fail closed).
  answered_.Insert(call.id);
  if (was_held) {
    idle_.Unblock(call.id, now);
  }
  out.push_back(Action{ActionKind::kDeny, call, "verdict '" + verdict + "'"});
}

std::vector<Action> SessionState::OnHistory(const std::vector<Event>& events, TimePoint now) {
  std::vector<Action> out;
  if (over_) {
    return out;
  }
  struct Pending {
    ToolCall call;
    std::string permission;
  };
  std::vector<Pending> pending;
  std::unordered_set<std::string> pending_ids;
  bool last_was_end_turn = false;
  for (const Event& ev : events) {
    if (!ev.id.empty()) {
      seen_.Insert(ev.id);
    }
    if (ev.type == kAgentToolUse || ev.type == kAgentCustomToolUse) {
      if (!ev.id.empty() && pending_ids.insert(ev.id).second) {
        pending.push_back(Pending{ToolCallFromEvent(ev),
                                  ev.type == kAgentToolUse ? ev.evaluated_permission : ""});
      }
    } else if (ev.type == kUserToolConfirmation) {
      // Record verdicts before routing, so a call whose confirmation comes later in the same
      // history is routed with its verdict known.
      if (!answered_.Contains(ev.tool_use_id)) {
        RecordVerdict(ev.tool_use_id, ev.result);
      }
    } else if (ev.type == kUserToolResult) {
      answered_.Insert(ev.tool_use_id);
    } else if (ev.type == kUserCustomToolResult) {
      answered_.Insert(ev.custom_tool_use_id);
    } else if (ev.type == kSessionStatusTerminated || ev.type == kSessionDeleted) {
      // The live stream never replays a termination that happened before we attached, and the
      // server accepts no results any more: stop without dispatching anything.
      MarkOver(ev.type, out);
      return out;
    }
    last_was_end_turn = ev.type == kSessionStatusIdle && ev.stop_reason == kStopReasonEndTurn;
  }

  // The history is newer evidence than any countdown armed before a reconnect.
  idle_.Disarm();
  bool outstanding = false;
  for (const Pending& p : pending) {
    if (answered_.Contains(p.call.id)) {
      continue;
    }
    if (in_flight_.count(p.call.id) != 0) {
      outstanding = true;  // already queued or running (e.g. the stream dropped mid-tool)
      continue;
    }
    Route(p.call, p.permission, now, out);
    if (!answered_.Contains(p.call.id) && held_.count(p.call.id) == 0) {
      outstanding = true;  // running now, or unowned and still owed by someone
    }
  }
  // A held call whose tool_use fell outside the listed window: apply its recorded verdict.
  std::vector<std::string> resolvable;
  for (const auto& [id, call] : held_) {
    if (verdicts_.count(id) != 0) {
      resolvable.push_back(id);
    }
  }
  for (const std::string& id : resolvable) {
    ToolCall call = held_.at(id);
    ApplyVerdict(call, verdicts_.at(id), now, out);
    if (!answered_.Contains(id)) {
      outstanding = true;
    }
  }
  // The turn ended (maybe while we were disconnected) and no tool work is owed: start the
  // countdown. A held call is not "owed" work; the clock defers on it by itself.
  if (last_was_end_turn && !outstanding) {
    idle_.Arm(now);
  }
  return out;
}

std::vector<Action> SessionState::OnStreamEvent(const Event& ev, TimePoint now) {
  std::vector<Action> out;
  if (over_) {
    return out;
  }
  if (!ev.id.empty() && !seen_.Insert(ev.id)) {
    return out;  // already seen in history or earlier on the stream
  }
  if (ev.type == kSessionStatusIdle && ev.stop_reason == kStopReasonEndTurn) {
    idle_.Arm(now);
  } else if (ev.type != kUserToolConfirmation && ev.type != "ping") {
    // A confirmation is neither agent activity nor an idle: its effect on the clock flows
    // through Block/Unblock.
    idle_.Disarm();
  }

  if (ev.type == kAgentToolUse || ev.type == kAgentCustomToolUse) {
    if (ev.id.empty() || answered_.Contains(ev.id) || in_flight_.count(ev.id) != 0) {
      return out;
    }
    Route(ToolCallFromEvent(ev), ev.type == kAgentToolUse ? ev.evaluated_permission : "", now, out);
  } else if (ev.type == kUserToolConfirmation) {
    RecordVerdict(ev.tool_use_id, ev.result);
    if (auto it = held_.find(ev.tool_use_id); it != held_.end()) {
      ToolCall call = it->second;
      ApplyVerdict(std::move(call), ev.result, now, out);
    }
  } else if (ev.type == kUserToolResult) {
    answered_.Insert(ev.tool_use_id);
  } else if (ev.type == kUserCustomToolResult) {
    answered_.Insert(ev.custom_tool_use_id);
  } else if (ev.type == kSessionStatusTerminated || ev.type == kSessionDeleted) {
    MarkOver(ev.type, out);
  }
  return out;
}

bool SessionState::ShouldRun(const std::string& id) const {
  return !over_ && !answered_.Contains(id);
}

void SessionState::OnDispatchDone(const std::string& id, bool posted, TimePoint now) {
  in_flight_.erase(id);
  if (posted) {
    answered_.Insert(id);
  }
  idle_.Unblock(id, now);
}

}  // namespace srt::poller
