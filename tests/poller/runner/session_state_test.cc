// SPDX-License-Identifier: Apache-2.0
// Tests of the session runner's pure state machine (runner/session_state.h).
#include "runner/session_state.h"

#include <gtest/gtest.h>

#include "runner/session_events.h"

namespace srt::poller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const TimePoint kT0 = TimePoint() + seconds(1000);

Event ToolUse(std::string id, std::string name = "bash", std::string permission = "allow") {
  Event e;
  e.id = std::move(id);
  e.type = std::string(kAgentToolUse);
  e.name = std::move(name);
  e.input_json = R"({"command":"ls"})";
  e.evaluated_permission = std::move(permission);
  return e;
}
Event CustomToolUse(std::string id, std::string name) {
  Event e = ToolUse(std::move(id), std::move(name), "");
  e.type = std::string(kAgentCustomToolUse);
  return e;
}
Event Confirm(std::string id, std::string tool_use_id, std::string result) {
  Event e;
  e.id = std::move(id);
  e.type = std::string(kUserToolConfirmation);
  e.tool_use_id = std::move(tool_use_id);
  e.result = std::move(result);
  return e;
}
Event ToolResultEv(std::string id, std::string tool_use_id) {
  Event e;
  e.id = std::move(id);
  e.type = std::string(kUserToolResult);
  e.tool_use_id = std::move(tool_use_id);
  return e;
}
Event CustomResultEv(std::string id, std::string custom_id) {
  Event e;
  e.id = std::move(id);
  e.type = std::string(kUserCustomToolResult);
  e.custom_tool_use_id = std::move(custom_id);
  return e;
}
Event Idle(std::string id, std::string reason = "end_turn") {
  Event e;
  e.id = std::move(id);
  e.type = std::string(kSessionStatusIdle);
  e.stop_reason = std::move(reason);
  return e;
}
Event Simple(std::string id, std::string type) {
  Event e;
  e.id = std::move(id);
  e.type = std::move(type);
  return e;
}

std::vector<ActionKind> Kinds(const std::vector<Action>& actions) {
  std::vector<ActionKind> out;
  for (const Action& a : actions) {
    out.push_back(a.kind);
  }
  return out;
}

using K = ActionKind;

SessionState MakeState(milliseconds max_idle = seconds(60)) {
  SessionStateOptions o;
  o.max_idle = max_idle;
  return SessionState(o);
}

TEST(SessionStateTest, AllowedToolUseRunsWithItsInput) {
  SessionState s = MakeState();
  auto a = s.OnStreamEvent(ToolUse("tu1"), kT0);
  ASSERT_EQ(Kinds(a), std::vector<K>{K::kRun});
  EXPECT_EQ(a[0].call.id, "tu1");
  EXPECT_EQ(a[0].call.name, "bash");
  EXPECT_EQ(a[0].call.input_json, R"({"command":"ls"})");
  EXPECT_FALSE(a[0].call.custom);
  EXPECT_TRUE(s.IsInFlight("tu1"));
  EXPECT_TRUE(s.ShouldRun("tu1"));
}

TEST(SessionStateTest, AbsentPermissionRunsLikeTheGoSdk) {
  SessionState s = MakeState();
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu1", "bash", ""), kT0)), std::vector<K>{K::kRun});
}

TEST(SessionStateTest, DuplicateLiveEventIsIgnored) {
  SessionState s = MakeState();
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu1"), kT0)), std::vector<K>{K::kRun});
  EXPECT_TRUE(s.OnStreamEvent(ToolUse("tu1"), kT0).empty());
}

TEST(SessionStateTest, HistoryAndStreamOverlapRunOnce) {
  SessionState s = MakeState();
  EXPECT_EQ(Kinds(s.OnHistory({Simple("m1", "agent.message"), ToolUse("tu1")}, kT0)),
            std::vector<K>{K::kRun});
  // The same tool use arrives again on the stream opened before the history read.
  EXPECT_TRUE(s.OnStreamEvent(ToolUse("tu1"), kT0).empty());
  // And a second history pass while it still runs (the stream dropped mid-tool).
  EXPECT_TRUE(s.OnHistory({ToolUse("tu1")}, kT0).empty());
}

TEST(SessionStateTest, StreamThenHistoryWhileRunningDoesNotRunTwice) {
  SessionState s = MakeState();
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu1"), kT0)), std::vector<K>{K::kRun});
  EXPECT_TRUE(s.OnHistory({ToolUse("tu1")}, kT0).empty());
}

TEST(SessionStateTest, ToolUseWithResultInHistoryIsAnswered) {
  SessionState s = MakeState();
  auto a = s.OnHistory({ToolUse("tu1"), ToolResultEv("r1", "tu1"), ToolUse("tu2")}, kT0);
  ASSERT_EQ(Kinds(a), std::vector<K>{K::kRun});
  EXPECT_EQ(a[0].call.id, "tu2");
  EXPECT_TRUE(s.IsAnswered("tu1"));
  EXPECT_FALSE(s.ShouldRun("tu1"));
}

TEST(SessionStateTest, ResultOnTheStreamAnswersAQueuedCall) {
  SessionState s = MakeState();
  ASSERT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu1"), kT0)), std::vector<K>{K::kRun});
  (void)s.OnStreamEvent(ToolResultEv("r1", "tu1"), kT0);
  EXPECT_FALSE(s.ShouldRun("tu1"));
}

TEST(SessionStateTest, FailedPostIsDispatchedAgainAtTheNextReconcile) {
  SessionState s = MakeState();
  ASSERT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu1"), kT0)), std::vector<K>{K::kRun});
  s.OnDispatchDone("tu1", /*posted=*/false, kT0);
  EXPECT_FALSE(s.IsAnswered("tu1"));
  // The stream alone does not re-run it ...
  EXPECT_TRUE(s.OnStreamEvent(ToolUse("tu1"), kT0).empty());
  // ... the next history pass does.
  auto a = s.OnHistory({ToolUse("tu1")}, kT0);
  ASSERT_EQ(Kinds(a), std::vector<K>{K::kRun});
  s.OnDispatchDone("tu1", /*posted=*/true, kT0);
  EXPECT_TRUE(s.IsAnswered("tu1"));
  EXPECT_TRUE(s.OnHistory({ToolUse("tu1")}, kT0).empty());
}

TEST(SessionStateTest, ServerDenyPostsNothingAndIsAnswered) {
  SessionState s = MakeState();
  auto a = s.OnStreamEvent(ToolUse("tu1", "bash", "deny"), kT0);
  EXPECT_EQ(Kinds(a), std::vector<K>{K::kDeny});
  EXPECT_TRUE(s.IsAnswered("tu1"));
  EXPECT_TRUE(s.OnHistory({ToolUse("tu1", "bash", "deny")}, kT0).empty());
}

TEST(SessionStateTest, AskIsHeldUntilAllow) {
  SessionState s = MakeState();
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu1", "bash", "ask"), kT0)), std::vector<K>{K::kHold});
  EXPECT_TRUE(s.IsHeld("tu1"));
  EXPECT_FALSE(s.IsInFlight("tu1"));
  auto a = s.OnStreamEvent(Confirm("c1", "tu1", "allow"), kT0);
  ASSERT_EQ(Kinds(a), std::vector<K>{K::kRun});
  EXPECT_EQ(a[0].call.confirmation, "allow");
  EXPECT_FALSE(s.IsHeld("tu1"));
}

TEST(SessionStateTest, AskThenDenyPostsNothing) {
  SessionState s = MakeState();
  (void)s.OnStreamEvent(ToolUse("tu1", "bash", "ask"), kT0);
  EXPECT_EQ(Kinds(s.OnStreamEvent(Confirm("c1", "tu1", "deny"), kT0)), std::vector<K>{K::kDeny});
  EXPECT_TRUE(s.IsAnswered("tu1"));
  EXPECT_EQ(s.held_count(), 0u);
}

TEST(SessionStateTest, UnknownPermissionIsHeld) {
  SessionState s = MakeState();
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu1", "bash", "something_new"), kT0)),
            std::vector<K>{K::kHold});
}

TEST(SessionStateTest, UnknownVerdictFailsClosed) {
  SessionState s = MakeState();
  (void)s.OnStreamEvent(ToolUse("tu1", "bash", "ask"), kT0);
  EXPECT_EQ(Kinds(s.OnStreamEvent(Confirm("c1", "tu1", "maybe"), kT0)), std::vector<K>{K::kDeny});
}

TEST(SessionStateTest, StrayVerdictsFailClosed) {
  SessionState s = MakeState();
  // Verdicts recorded before their calls arrive.
  EXPECT_TRUE(s.OnStreamEvent(Confirm("c1", "stray_deny", "deny"), kT0).empty());
  EXPECT_TRUE(s.OnStreamEvent(Confirm("c2", "stray_empty", ""), kT0).empty());
  EXPECT_TRUE(s.OnStreamEvent(Confirm("c3", "pre_denied", "allow"), kT0).empty());
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("stray_deny", "bash", ""), kT0)),
            std::vector<K>{K::kDeny});
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("stray_empty", "bash", ""), kT0)),
            std::vector<K>{K::kDeny});
  // A server-side deny beats a recorded allow.
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("pre_denied", "bash", "deny"), kT0)),
            std::vector<K>{K::kDeny});
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("ok", "bash", "allow"), kT0)), std::vector<K>{K::kRun});
}

TEST(SessionStateTest, ConfirmationLaterInTheSameHistoryReleasesTheCall) {
  SessionState s = MakeState();
  auto a = s.OnHistory({ToolUse("tu1", "bash", "ask"), Confirm("c1", "tu1", "allow")}, kT0);
  ASSERT_EQ(Kinds(a), std::vector<K>{K::kRun});
  EXPECT_EQ(a[0].call.confirmation, "allow");
}

TEST(SessionStateTest, DenyInHistoryResolvesAndStaysResolved) {
  SessionState s = MakeState();
  EXPECT_EQ(Kinds(s.OnHistory({ToolUse("tu1", "bash", "ask"), Confirm("c1", "tu1", "deny")}, kT0)),
            std::vector<K>{K::kDeny});
  EXPECT_TRUE(
      s.OnHistory({ToolUse("tu1", "bash", "ask"), Confirm("c1", "tu1", "deny")}, kT0).empty());
}

TEST(SessionStateTest, HeldCallReleasedByAVerdictWhoseToolUseLeftTheHistoryWindow) {
  SessionState s = MakeState();
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu1", "bash", "ask"), kT0)), std::vector<K>{K::kHold});
  auto a = s.OnHistory({Confirm("c1", "tu1", "allow")}, kT0);
  ASSERT_EQ(Kinds(a), std::vector<K>{K::kRun});
  EXPECT_EQ(a[0].call.id, "tu1");
}

TEST(SessionStateTest, HeldCallStaysHeldAcrossReconcile) {
  SessionState s = MakeState();
  EXPECT_EQ(Kinds(s.OnHistory({ToolUse("tu1", "bash", "ask")}, kT0)), std::vector<K>{K::kHold});
  EXPECT_TRUE(s.OnHistory({ToolUse("tu1", "bash", "ask")}, kT0).empty());
  EXPECT_TRUE(s.IsHeld("tu1"));
}

TEST(SessionStateTest, CustomToolsAreNotOursByDefault) {
  SessionState s = MakeState();
  auto a = s.OnStreamEvent(CustomToolUse("cu1", "app_tool"), kT0);
  ASSERT_EQ(Kinds(a), std::vector<K>{K::kSkipUnowned});
  EXPECT_TRUE(a[0].call.custom);
  EXPECT_FALSE(s.IsAnswered("cu1"));
  EXPECT_FALSE(s.IsInFlight("cu1"));
  // Re-surfaced (not run) by a reconcile, and answered once its owner posts.
  EXPECT_EQ(Kinds(s.OnHistory({CustomToolUse("cu1", "app_tool")}, kT0)),
            std::vector<K>{K::kSkipUnowned});
  EXPECT_TRUE(
      s.OnHistory({CustomToolUse("cu1", "app_tool"), CustomResultEv("r", "cu1")}, kT0).empty());
}

TEST(SessionStateTest, OwnedCustomToolRuns) {
  SessionStateOptions o;
  o.owned_custom_tools = {"app_tool"};
  SessionState s(o);
  auto a = s.OnStreamEvent(CustomToolUse("cu1", "app_tool"), kT0);
  ASSERT_EQ(Kinds(a), std::vector<K>{K::kRun});
  EXPECT_TRUE(a[0].call.custom);
  EXPECT_EQ(Kinds(s.OnStreamEvent(CustomToolUse("cu2", "other"), kT0)),
            std::vector<K>{K::kSkipUnowned});
}

TEST(SessionStateTest, ServedToolsLimitsBuiltins) {
  SessionStateOptions o;
  o.served_tools = std::set<std::string>{"bash", "read"};
  SessionState s(o);
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu1", "bash"), kT0)), std::vector<K>{K::kRun});
  EXPECT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu2", "repl"), kT0)), std::vector<K>{K::kSkipUnowned});
}

TEST(SessionStateTest, McpToolUseIsIgnored) {
  SessionState s = MakeState();
  Event e = ToolUse("m1", "github_search");
  e.type = std::string(kAgentMcpToolUse);
  EXPECT_TRUE(s.OnStreamEvent(e, kT0).empty());
  EXPECT_TRUE(s.OnHistory({e}, kT0).empty());
}

TEST(SessionStateTest, EndTurnArmsTheIdleClockAndOtherEventsReset) {
  SessionState s = MakeState(seconds(60));
  EXPECT_FALSE(s.IdleDeadline());
  (void)s.OnStreamEvent(Idle("i1"), kT0);
  ASSERT_TRUE(s.IdleDeadline());
  EXPECT_EQ(*s.IdleDeadline(), kT0 + seconds(60));
  (void)s.OnStreamEvent(Simple("m1", "agent.message"), kT0 + seconds(10));
  EXPECT_FALSE(s.IdleDeadline());
  (void)s.OnStreamEvent(Idle("i2"), kT0 + seconds(20));
  EXPECT_EQ(*s.IdleDeadline(), kT0 + seconds(80));
  (void)s.OnStreamEvent(Simple("u1", "user.message"), kT0 + seconds(21));
  EXPECT_FALSE(s.IdleDeadline());
}

TEST(SessionStateTest, RequiresActionIdleDoesNotArm) {
  SessionState s = MakeState();
  (void)s.OnStreamEvent(Idle("i1", "requires_action"), kT0);
  EXPECT_FALSE(s.IdleDeadline());
}

TEST(SessionStateTest, ZeroMaxIdleNeverArms) {
  SessionState s = MakeState(milliseconds(0));
  (void)s.OnStreamEvent(Idle("i1"), kT0);
  EXPECT_FALSE(s.IdleDeadline());
  (void)s.OnHistory({Idle("i2")}, kT0);
  EXPECT_FALSE(s.IdleDeadline());
}

TEST(SessionStateTest, DuplicateEventsDoNotTouchTheIdleClock) {
  SessionState s = MakeState();
  (void)s.OnStreamEvent(Simple("m1", "agent.message"), kT0);
  (void)s.OnStreamEvent(Idle("i1"), kT0 + seconds(1));
  // The stream replays an older event: it must not cancel the countdown.
  (void)s.OnStreamEvent(Simple("m1", "agent.message"), kT0 + seconds(2));
  ASSERT_TRUE(s.IdleDeadline());
  EXPECT_EQ(*s.IdleDeadline(), kT0 + seconds(61));
}

TEST(SessionStateTest, ConfirmationIsNeutralForTheIdleClock) {
  SessionState s = MakeState();
  (void)s.OnStreamEvent(Idle("i1"), kT0);
  (void)s.OnStreamEvent(Confirm("c1", "nobody", "allow"), kT0 + seconds(1));
  EXPECT_EQ(*s.IdleDeadline(), kT0 + seconds(60));
}

TEST(SessionStateTest, HeldCallPausesTheIdleClockAndDenyResumesAFreshWindow) {
  SessionState s = MakeState(seconds(60));
  (void)s.OnStreamEvent(ToolUse("tu1", "bash", "ask"), kT0);
  (void)s.OnStreamEvent(Idle("i1"), kT0 + seconds(1));
  EXPECT_FALSE(s.IdleDeadline()) << "a held call defers the countdown";
  (void)s.OnStreamEvent(Confirm("c1", "tu1", "deny"), kT0 + seconds(500));
  ASSERT_TRUE(s.IdleDeadline());
  EXPECT_EQ(*s.IdleDeadline(), kT0 + seconds(560));
}

TEST(SessionStateTest, ApprovedCallDefersTheClockUntilItsDispatchIsDone) {
  SessionState s = MakeState(seconds(60));
  (void)s.OnStreamEvent(ToolUse("tu1", "bash", "ask"), kT0);
  (void)s.OnStreamEvent(Idle("i1"), kT0 + seconds(1));
  auto a = s.OnStreamEvent(Confirm("c1", "tu1", "allow"), kT0 + seconds(2));
  ASSERT_EQ(Kinds(a), std::vector<K>{K::kRun});
  EXPECT_FALSE(s.IdleDeadline());
  s.OnDispatchDone("tu1", /*posted=*/true, kT0 + seconds(100));
  ASSERT_TRUE(s.IdleDeadline());
  EXPECT_EQ(*s.IdleDeadline(), kT0 + seconds(160));
}

TEST(SessionStateTest, HoldTakenWhileArmedConvertsToPending) {
  SessionState s = MakeState(seconds(60));
  (void)s.OnStreamEvent(Idle("i1"), kT0);
  ASSERT_TRUE(s.IdleDeadline());
  // A history pass (after a reconnect) finds a held call and an end_turn behind it.
  (void)s.OnHistory({ToolUse("tu1", "bash", "ask"), Idle("i2")}, kT0 + seconds(30));
  EXPECT_FALSE(s.IdleDeadline()) << "the stale pre-disconnect countdown must be cancelled";
  (void)s.OnStreamEvent(Confirm("c1", "tu1", "deny"), kT0 + seconds(300));
  EXPECT_EQ(*s.IdleDeadline(), kT0 + seconds(360));
}

TEST(SessionStateTest, ReconcileArmsWhenHistoryEndsOnEndTurn) {
  SessionState s = MakeState(seconds(60));
  (void)s.OnHistory({ToolUse("tu1"), ToolResultEv("r1", "tu1"), Idle("i1")}, kT0);
  ASSERT_TRUE(s.IdleDeadline());
  EXPECT_EQ(*s.IdleDeadline(), kT0 + seconds(60));
}

TEST(SessionStateTest, ReconcileDoesNotArmWhenTheLastEventIsNotEndTurn) {
  SessionState s = MakeState();
  (void)s.OnHistory({Idle("i1"), Simple("u1", "user.message")}, kT0);
  EXPECT_FALSE(s.IdleDeadline());
}

TEST(SessionStateTest, ReconcileDoesNotArmOverOutstandingWork) {
  SessionState s = MakeState();
  // An unowned custom call is still owed by its owner.
  (void)s.OnHistory({CustomToolUse("cu1", "app_tool"), Idle("i1")}, kT0);
  EXPECT_FALSE(s.IdleDeadline());
  // A call we are running.
  SessionState s2 = MakeState();
  (void)s2.OnHistory({ToolUse("tu1"), Idle("i1")}, kT0);
  EXPECT_FALSE(s2.IdleDeadline());
}

TEST(SessionStateTest, ReconcileDisarmsAStaleCountdown) {
  SessionState s = MakeState();
  (void)s.OnStreamEvent(Idle("i1"), kT0);
  ASSERT_TRUE(s.IdleDeadline());
  (void)s.OnHistory({Idle("i1"), Simple("u1", "user.message")}, kT0 + seconds(5));
  EXPECT_FALSE(s.IdleDeadline());
}

TEST(SessionStateTest, TerminationInHistoryEndsWithoutDispatching) {
  SessionState s = MakeState();
  auto a = s.OnHistory({ToolUse("tu1"), Simple("t1", "session.status_terminated")}, kT0);
  ASSERT_EQ(Kinds(a), std::vector<K>{K::kSessionOver});
  EXPECT_EQ(a[0].detail, "session.status_terminated");
  EXPECT_TRUE(s.over());
  EXPECT_FALSE(s.ShouldRun("tu1"));
  EXPECT_TRUE(s.OnStreamEvent(ToolUse("tu2"), kT0).empty());
}

TEST(SessionStateTest, TerminationAndDeletionOnTheStream) {
  for (const char* type : {"session.status_terminated", "session.deleted"}) {
    SessionState s = MakeState();
    ASSERT_EQ(Kinds(s.OnStreamEvent(ToolUse("tu1"), kT0)), std::vector<K>{K::kRun});
    EXPECT_EQ(Kinds(s.OnStreamEvent(Simple("t1", type), kT0)), std::vector<K>{K::kSessionOver});
    EXPECT_TRUE(s.over());
    EXPECT_EQ(s.over_reason(), type);
    EXPECT_FALSE(s.ShouldRun("tu1"));
    EXPECT_TRUE(s.OnHistory({ToolUse("tu3")}, kT0).empty());
  }
}

TEST(SessionStateTest, RememberedIdsAreBounded) {
  BoundedIdSet set(3);
  EXPECT_TRUE(set.Insert("a"));
  EXPECT_FALSE(set.Insert("a"));
  EXPECT_TRUE(set.Insert("b"));
  EXPECT_TRUE(set.Insert("c"));
  EXPECT_TRUE(set.Insert("d"));
  EXPECT_EQ(set.size(), 3u);
  EXPECT_FALSE(set.Contains("a"));
  EXPECT_TRUE(set.Contains("d"));

  SessionStateOptions o;
  o.max_remembered_ids = 4;
  SessionState s(o);
  for (int i = 0; i < 100; ++i) {
    (void)s.OnStreamEvent(Simple("m" + std::to_string(i), "agent.message"), kT0);
  }
  // An evicted id is treated as new, which is harmless for non-tool events.
  EXPECT_TRUE(s.OnStreamEvent(Simple("m0", "agent.message"), kT0).empty());
}

TEST(SessionEventsTest, BadPermissionTypeIsRefusedNotRun) {
  // The API layer refuses an event whose permission has the wrong type, so it never runs.
  auto e = ParseSessionEvent(
      R"({"id":"x","type":"agent.tool_use","name":"bash","evaluated_permission":1})");
  EXPECT_FALSE(e.has_value());
}

}  // namespace
}  // namespace srt::poller
