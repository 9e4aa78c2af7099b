// SPDX-License-Identifier: Apache-2.0
// Tests of SessionRunner (runner/runner.h) against a scripted fake sessions API and executor.
#include "runner/runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

namespace srt::poller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

Event ToolUse(std::string id, std::string name = "bash", std::string permission = "allow") {
  Event e;
  e.id = std::move(id);
  e.type = std::string(kAgentToolUse);
  e.name = std::move(name);
  e.input_json = R"({"command":"true"})";
  e.evaluated_permission = std::move(permission);
  return e;
}
Event Typed(std::string id, std::string type) {
  Event e;
  e.id = std::move(id);
  e.type = std::move(type);
  return e;
}
Event ResultFor(std::string id, std::string tool_use_id) {
  Event e = Typed(std::move(id), std::string(kUserToolResult));
  e.tool_use_id = std::move(tool_use_id);
  return e;
}
Event Confirm(std::string id, std::string tool_use_id, std::string result) {
  Event e = Typed(std::move(id), std::string(kUserToolConfirmation));
  e.tool_use_id = std::move(tool_use_id);
  e.result = std::move(result);
  return e;
}
Event EndTurn(std::string id) {
  Event e = Typed(std::move(id), std::string(kSessionStatusIdle));
  e.stop_reason = "end_turn";
  return e;
}

// Polls `pred` for up to 5 s.
bool WaitFor(const std::function<bool()>& pred, milliseconds limit = seconds(5)) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  return pred();
}

// A sessions API whose live stream the test drives: Push() delivers events on the current
// connection, Drop() ends it. Connections open at once unless `open_errors` says otherwise.
class FakeSessionApi : public SessionApi {
 public:
  Result<std::vector<Event>> ListHistory() override {
    std::lock_guard<std::mutex> g(mu_);
    ++history_calls_;
    if (history_error_) {
      return *history_error_;
    }
    return history_;
  }

  Result<void> Stream(const std::function<void()>& on_open,
                      const std::function<bool(const Event&)>& on_event,
                      const std::atomic<bool>& cancel) override {
    {
      std::lock_guard<std::mutex> g(mu_);
      ++stream_calls_;
      if (!open_errors_.empty()) {
        Error e = open_errors_.front();
        open_errors_.pop_front();
        return e;
      }
      connected_ = true;
    }
    on_open();
    for (;;) {
      std::optional<Event> ev;
      {
        std::lock_guard<std::mutex> g(mu_);
        if (cancel || drop_) {
          drop_ = false;
          connected_ = false;
          return Ok();
        }
        if (!live_.empty()) {
          ev = live_.front();
          live_.pop_front();
        }
      }
      if (ev) {
        if (!on_event(*ev)) {
          std::lock_guard<std::mutex> g(mu_);
          connected_ = false;
          return Ok();
        }
      } else {
        std::this_thread::sleep_for(milliseconds(1));
      }
    }
  }

  Result<void> PostEvents(std::string events_json_array) override {
    std::function<Result<void>(int)> behaviour;
    int attempt;
    {
      std::lock_guard<std::mutex> g(mu_);
      posts_.push_back(events_json_array);
      attempt = static_cast<int>(posts_.size());
      behaviour = post_behaviour_;
    }
    return behaviour ? behaviour(attempt) : Ok();
  }

  void Push(Event e) {
    std::lock_guard<std::mutex> g(mu_);
    live_.push_back(std::move(e));
  }
  void Drop() {
    std::lock_guard<std::mutex> g(mu_);
    drop_ = true;
  }
  void SetHistory(std::vector<Event> h) {
    std::lock_guard<std::mutex> g(mu_);
    history_ = std::move(h);
  }
  void SetHistoryError(std::optional<Error> e) {
    std::lock_guard<std::mutex> g(mu_);
    history_error_ = std::move(e);
  }
  void AddOpenError(Error e) {
    std::lock_guard<std::mutex> g(mu_);
    open_errors_.push_back(std::move(e));
  }
  void SetPostBehaviour(std::function<Result<void>(int)> f) {
    std::lock_guard<std::mutex> g(mu_);
    post_behaviour_ = std::move(f);
  }
  std::vector<std::string> posts() {
    std::lock_guard<std::mutex> g(mu_);
    return posts_;
  }
  int stream_calls() {
    std::lock_guard<std::mutex> g(mu_);
    return stream_calls_;
  }
  int history_calls() {
    std::lock_guard<std::mutex> g(mu_);
    return history_calls_;
  }
  bool connected() {
    std::lock_guard<std::mutex> g(mu_);
    return connected_;
  }
  size_t live_pending() {
    std::lock_guard<std::mutex> g(mu_);
    return live_.size();
  }

 private:
  std::mutex mu_;
  std::vector<Event> history_;
  std::optional<Error> history_error_;
  std::deque<Error> open_errors_;
  std::deque<Event> live_;
  bool drop_ = false;
  bool connected_ = false;
  std::vector<std::string> posts_;
  std::function<Result<void>(int)> post_behaviour_;
  int stream_calls_ = 0;
  int history_calls_ = 0;
};

// An executor that either answers at once or blocks until Release() or Cancel().
class FakeExecutor : public ToolExecutor {
 public:
  ToolResult Run(const ToolCall& call, milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    calls_.push_back(call);
    timeouts_.push_back(timeout);
    running_ = true;
    cancelled_ = false;
    released_ = false;
    cv_.wait(lock, [&] { return !block_ || released_ || cancelled_; });
    running_ = false;
    if (cancelled_) {
      return ToolResult{true, R"([{"type":"text","text":"tool cancelled"}])", false};
    }
    return ToolResult{false, R"([{"type":"text","text":"ran )" + call.name + R"("}])", false};
  }
  void Cancel() override {
    std::lock_guard<std::mutex> g(mu_);
    ++cancel_calls_;
    if (running_) {
      cancelled_ = true;
      cv_.notify_all();
    }
  }

  void set_block(bool b) {
    std::lock_guard<std::mutex> g(mu_);
    block_ = b;
  }
  void Release() {
    std::lock_guard<std::mutex> g(mu_);
    released_ = true;
    cv_.notify_all();
  }
  int runs() {
    std::lock_guard<std::mutex> g(mu_);
    return static_cast<int>(calls_.size());
  }
  bool running() {
    std::lock_guard<std::mutex> g(mu_);
    return running_;
  }
  int cancel_calls() {
    std::lock_guard<std::mutex> g(mu_);
    return cancel_calls_;
  }
  std::vector<ToolCall> calls() {
    std::lock_guard<std::mutex> g(mu_);
    return calls_;
  }
  std::vector<milliseconds> timeouts() {
    std::lock_guard<std::mutex> g(mu_);
    return timeouts_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool block_ = false;
  bool running_ = false;
  bool cancelled_ = false;
  bool released_ = false;
  int cancel_calls_ = 0;
  std::vector<ToolCall> calls_;
  std::vector<milliseconds> timeouts_;
};

// A manual clock plus recorded sleeps.
struct TestTime {
  std::atomic<int64_t> ms{1'000'000};
  std::mutex mu;
  std::vector<milliseconds> sleeps;

  TimePoint Now() const { return TimePoint() + milliseconds(ms.load()); }
  void Advance(milliseconds d) { ms += d.count(); }
  std::vector<milliseconds> Sleeps() {
    std::lock_guard<std::mutex> g(mu);
    return sleeps;
  }
};

SessionRunnerOptions TestOptions(TestTime& t) {
  SessionRunnerOptions o;
  o.now = [&t] { return t.Now(); };
  o.sleep = [&t](milliseconds d) {
    {
      std::lock_guard<std::mutex> g(t.mu);
      t.sleeps.push_back(d);
    }
    std::this_thread::sleep_for(milliseconds(1));
  };
  o.random = [] { return 0.0; };
  o.tick = milliseconds(5);
  o.drain_timeout = seconds(5);
  return o;
}

// Runs the runner on a thread; Get() joins and returns the outcome.
class RunnerThread {
 public:
  explicit RunnerThread(SessionRunner& r) : thread_([this, &r] { result_ = r.Run(); }) {}
  ~RunnerThread() {
    if (thread_.joinable()) {
      thread_.join();
    }
  }
  RunResult Get() {
    thread_.join();
    return result_;
  }

 private:
  RunResult result_{RunOutcome::kFatal, "not run"};
  std::thread thread_;
};

nlohmann::json PostedEvent(const std::string& body) {
  auto arr = nlohmann::json::parse(body);
  EXPECT_TRUE(arr.is_array());
  EXPECT_EQ(arr.size(), 1u);
  return arr.at(0);
}

TEST(SessionRunnerTest, RunsAToolPostsItsResultAndEndsOnTermination) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1"));
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 1; }));
  auto ev = PostedEvent(api.posts()[0]);
  EXPECT_EQ(ev["type"], "user.tool_result");
  EXPECT_EQ(ev["tool_use_id"], "tu1");
  EXPECT_EQ(ev["is_error"], false);
  EXPECT_EQ(ev["content"][0]["text"], "ran bash");
  EXPECT_EQ(exec.timeouts().at(0), seconds(120));
  api.Push(Typed("t1", "session.status_terminated"));
  RunResult r = rt.Get();
  EXPECT_EQ(r.outcome, RunOutcome::kTerminated);
  EXPECT_EQ(r.message, "session.status_terminated");
}

TEST(SessionRunnerTest, OpensTheStreamBeforeReadingHistoryAndDispatchesUnanswered) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  api.SetHistory({ToolUse("old"), ResultFor("r_old", "old"), ToolUse("tu1")});
  // The same call also arrives on the stream, which was open during the history read.
  api.Push(ToolUse("tu1"));
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 1; }));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(exec.runs(), 1);
  EXPECT_EQ(exec.calls().at(0).id, "tu1");
  EXPECT_EQ(api.stream_calls(), 1);
  runner.Stop(StopReason::kShutdown, "test over");
  EXPECT_EQ(rt.Get().outcome, RunOutcome::kStopped);
}

TEST(SessionRunnerTest, HeldDispatchReadsTheHistoryButRunsNothingUntilReleased) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  api.SetHistory({ToolUse("tu1")});
  SessionRunnerOptions o = TestOptions(t);
  o.hold_dispatch = true;
  SessionRunner runner(api, exec, o);
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu2"));
  ASSERT_TRUE(WaitFor([&] { return api.live_pending() == 0; }));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(exec.runs(), 0);
  EXPECT_TRUE(api.posts().empty());
  runner.ReleaseDispatch();
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 2; }));
  EXPECT_EQ(exec.calls().at(0).id, "tu1");
  EXPECT_EQ(exec.calls().at(1).id, "tu2");
  runner.Stop(StopReason::kShutdown, "done");
  EXPECT_EQ(rt.Get().outcome, RunOutcome::kStopped);
}

TEST(SessionRunnerTest, StopWhileDispatchIsHeldLeavesTheCallsUnrunAndUnanswered) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  api.SetHistory({ToolUse("tu1")});
  SessionRunnerOptions o = TestOptions(t);
  o.hold_dispatch = true;
  SessionRunner runner(api, exec, o);
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  runner.Stop(StopReason::kShutdown, "the sandbox did not start");
  RunResult r = rt.Get();
  EXPECT_EQ(r.outcome, RunOutcome::kStopped);
  // Left for the next work item's history pass, as if this runner had never started.
  runner.ReleaseDispatch();
  EXPECT_EQ(exec.runs(), 0);
  EXPECT_TRUE(api.posts().empty());
}

TEST(SessionRunnerTest, StreamDroppedMidToolIsReconciledWithoutRunningTwice) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  exec.set_block(true);
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1"));
  ASSERT_TRUE(WaitFor([&] { return exec.running(); }));
  // While tu1 runs the stream drops; meanwhile the agent also emitted tu2 (only in history).
  api.SetHistory({ToolUse("tu1"), ToolUse("tu2")});
  api.Drop();
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 2; }));
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_EQ(exec.runs(), 1) << "tu1 is still running; the reconcile must not queue it again";
  exec.set_block(false);
  exec.Release();
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 2; }));
  EXPECT_EQ(PostedEvent(api.posts()[0])["tool_use_id"], "tu1");
  EXPECT_EQ(PostedEvent(api.posts()[1])["tool_use_id"], "tu2");
  // Another drop: both now have results in history, nothing runs again.
  api.SetHistory({ToolUse("tu1"), ToolUse("tu2"), ResultFor("r1", "tu1"), ResultFor("r2", "tu2")});
  api.Drop();
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 3; }));
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_EQ(exec.runs(), 2);
  runner.Stop(StopReason::kShutdown, "done");
  EXPECT_EQ(rt.Get().outcome, RunOutcome::kStopped);
  // The backoff after the drops: random() == 0 gives the lower edge, b/2.
  auto sleeps = t.Sleeps();
  ASSERT_GE(sleeps.size(), 2u);
  EXPECT_EQ(sleeps[0], milliseconds(250));
  EXPECT_EQ(sleeps[1], milliseconds(500));
}

TEST(SessionRunnerTest, StreamCallbackNeverWaitsForARunningTool) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  exec.set_block(true);
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1"));
  ASSERT_TRUE(WaitFor([&] { return exec.running(); }));
  for (int i = 0; i < 200; ++i) {
    api.Push(Typed("m" + std::to_string(i), "agent.message"));
  }
  api.Push(ToolUse("tu2"));
  EXPECT_TRUE(WaitFor([&] { return api.live_pending() == 0; }, seconds(2)));
  EXPECT_TRUE(exec.running());
  EXPECT_EQ(exec.runs(), 1);
  exec.set_block(false);
  exec.Release();
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 2; }));
  EXPECT_EQ(exec.calls().at(1).id, "tu2");
  runner.Stop(StopReason::kShutdown, "done");
  (void)rt.Get();
}

TEST(SessionRunnerTest, StopDuringAToolCancelsItAndPostsItsErrorResult) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  exec.set_block(true);
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1"));
  ASSERT_TRUE(WaitFor([&] { return exec.running(); }));
  auto start = std::chrono::steady_clock::now();
  runner.Stop(StopReason::kShutdown, "SIGTERM");
  RunResult r = rt.Get();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(2));
  EXPECT_EQ(r.outcome, RunOutcome::kStopped);
  EXPECT_EQ(r.message, "SIGTERM");
  EXPECT_EQ(exec.cancel_calls(), 1);
  ASSERT_EQ(api.posts().size(), 1u);
  auto ev = PostedEvent(api.posts()[0]);
  EXPECT_EQ(ev["tool_use_id"], "tu1");
  EXPECT_EQ(ev["is_error"], true);
  EXPECT_EQ(ev["content"][0]["text"], "tool cancelled");
}

TEST(SessionRunnerTest, StopPostsOnceEvenWhenThePostFails) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  exec.set_block(true);
  api.SetPostBehaviour([](int) { return Result<void>(MakeError(Errc::kSystem, "reset")); });
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1"));
  ASSERT_TRUE(WaitFor([&] { return exec.running(); }));
  runner.Stop(StopReason::kLeaseLost, "412 on heartbeat");
  RunResult r = rt.Get();
  EXPECT_EQ(r.outcome, RunOutcome::kLeaseLost);
  EXPECT_EQ(api.posts().size(), 1u);
  EXPECT_TRUE(t.Sleeps().empty());
}

TEST(SessionRunnerTest, StopBeforeRunReturnsAtOnce) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  SessionRunner runner(api, exec, TestOptions(t));
  runner.Stop(StopReason::kShutdown, "early");
  RunResult r = runner.Run();
  EXPECT_EQ(r.outcome, RunOutcome::kStopped);
  EXPECT_EQ(api.stream_calls(), 0);
}

TEST(SessionRunnerTest, ToolTimeoutPostsTheGoSdkText) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  exec.set_block(true);  // only Cancel ends it
  SessionRunnerOptions o = TestOptions(t);
  o.tool_timeout = seconds(120);
  SessionRunner runner(api, exec, o);
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1", "bash"));
  ASSERT_TRUE(WaitFor([&] { return exec.running(); }));
  t.Advance(seconds(119));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_TRUE(exec.running());
  t.Advance(seconds(1));
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 1; }));
  auto ev = PostedEvent(api.posts()[0]);
  EXPECT_EQ(ev["is_error"], true);
  EXPECT_EQ(ev["content"][0]["text"], "tool \"bash\" timed out after 2m0s");
  EXPECT_EQ(exec.cancel_calls(), 1);
  runner.Stop(StopReason::kShutdown, "done");
  (void)rt.Get();
}

TEST(SessionRunnerTest, ExecutorReportedTimeoutAlsoGetsTheGoText) {
  TestTime t;
  FakeSessionApi api;
  class TimingOut : public ToolExecutor {
   public:
    ToolResult Run(const ToolCall&, milliseconds) override { return {true, "[]", true}; }
    void Cancel() override {}
  } exec;
  SessionRunnerOptions o = TestOptions(t);
  o.tool_timeout = milliseconds(1500);
  SessionRunner runner(api, exec, o);
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1", "grep"));
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 1; }));
  EXPECT_EQ(PostedEvent(api.posts()[0])["content"][0]["text"],
            "tool \"grep\" timed out after 1.5s");
  runner.Stop(StopReason::kShutdown, "done");
  (void)rt.Get();
}

TEST(SessionRunnerTest, PostRetriesThreeTimesThenGivesUpAndReconcileRetries) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  std::vector<DispatchReport> reports;
  std::mutex reports_mu;
  api.SetPostBehaviour([](int attempt) {
    return attempt <= 3 ? Result<void>(MakeError(Errc::kSystem, "HTTP 503")) : Ok();
  });
  SessionRunnerOptions o = TestOptions(t);
  o.on_dispatch = [&](const DispatchReport& r) {
    std::lock_guard<std::mutex> g(reports_mu);
    reports.push_back(r);
  };
  SessionRunner runner(api, exec, o);
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1"));
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> g(reports_mu);
    return reports.size() == 1;
  }));
  {
    std::lock_guard<std::mutex> g(reports_mu);
    EXPECT_FALSE(reports[0].posted);
    EXPECT_EQ(reports[0].post_attempts, 3);
    EXPECT_EQ(reports[0].post_error, "HTTP 503");
  }
  EXPECT_EQ(api.posts().size(), 3u);
  EXPECT_EQ(t.Sleeps(), (std::vector<milliseconds>{seconds(1), seconds(2)}));
  // Not answered: the next reconnect's history pass runs it again, and that post succeeds.
  api.SetHistory({ToolUse("tu1")});
  api.Drop();
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 4; }));
  EXPECT_EQ(exec.runs(), 2);
  runner.Stop(StopReason::kShutdown, "done");
  (void)rt.Get();
}

TEST(SessionRunnerTest, FatalPostErrorIsNotRetried) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  api.SetPostBehaviour(
      [](int) { return Result<void>(MakeError(Errc::kInvalidArgument, "HTTP 400")); });
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1"));
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 1; }));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(api.posts().size(), 1u);
  EXPECT_TRUE(t.Sleeps().empty());
  runner.Stop(StopReason::kShutdown, "done");
  EXPECT_EQ(rt.Get().outcome, RunOutcome::kStopped);
}

TEST(SessionRunnerTest, IdleExitAfterMaxIdleOnTheInjectedClock) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  SessionRunnerOptions o = TestOptions(t);
  o.max_idle = seconds(60);
  SessionRunner runner(api, exec, o);
  std::atomic<bool> done{false};
  RunResult result{RunOutcome::kFatal, ""};
  std::thread th([&] {
    result = runner.Run();
    done = true;
  });
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(EndTurn("i1"));
  ASSERT_TRUE(WaitFor([&] { return api.live_pending() == 0; }));
  t.Advance(seconds(30));
  // Any other event resets the countdown.
  api.Push(Typed("m1", "user.message"));
  api.Push(EndTurn("i2"));
  ASSERT_TRUE(WaitFor([&] { return api.live_pending() == 0; }));
  std::this_thread::sleep_for(milliseconds(30));
  t.Advance(seconds(59));
  std::this_thread::sleep_for(milliseconds(60));
  EXPECT_FALSE(done) << "stopped before max_idle elapsed since the last end_turn";
  t.Advance(seconds(1));
  EXPECT_TRUE(WaitFor([&] { return done.load(); }, seconds(2)));
  th.join();
  EXPECT_EQ(result.outcome, RunOutcome::kIdleTimeout);
  EXPECT_THAT(result.message, HasSubstr("1m0s"));
}

TEST(SessionRunnerTest, HeldConfirmationPausesIdleAndAllowRunsIt) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  SessionRunnerOptions o = TestOptions(t);
  o.max_idle = seconds(10);
  SessionRunner runner(api, exec, o);
  std::atomic<bool> done{false};
  RunResult result{RunOutcome::kFatal, ""};
  std::thread th([&] {
    result = runner.Run();
    done = true;
  });
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1", "bash", "ask"));
  api.Push(EndTurn("i1"));
  ASSERT_TRUE(WaitFor([&] { return api.live_pending() == 0; }));
  t.Advance(seconds(100));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(done);
  EXPECT_EQ(exec.runs(), 0);
  api.Push(Confirm("c1", "tu1", "allow"));
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 1; }));
  EXPECT_EQ(exec.calls().at(0).confirmation, "allow");
  // The end_turn seen during the hold now applies: a fresh window from the dispatch's end.
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_FALSE(done);
  t.Advance(seconds(10));
  EXPECT_TRUE(WaitFor([&] { return done.load(); }, seconds(2)));
  th.join();
  EXPECT_EQ(result.outcome, RunOutcome::kIdleTimeout);
}

TEST(SessionRunnerTest, DeniedAndUnownedCallsPostNothing) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  std::vector<DispatchReport> reports;
  std::mutex mu;
  SessionRunnerOptions o = TestOptions(t);
  o.on_dispatch = [&](const DispatchReport& r) {
    std::lock_guard<std::mutex> g(mu);
    reports.push_back(r);
  };
  SessionRunner runner(api, exec, o);
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1", "bash", "deny"));
  api.Push(ToolUse("tu2", "bash", "ask"));
  api.Push(Confirm("c2", "tu2", "deny"));
  Event custom = ToolUse("cu1", "app_tool", "");
  custom.type = std::string(kAgentCustomToolUse);
  api.Push(custom);
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> g(mu);
    return reports.size() == 4;
  }));
  runner.Stop(StopReason::kShutdown, "done");
  (void)rt.Get();
  EXPECT_EQ(exec.runs(), 0);
  EXPECT_TRUE(api.posts().empty());
  std::lock_guard<std::mutex> g(mu);
  EXPECT_EQ(reports[0].decision, ActionKind::kDeny);
  EXPECT_EQ(reports[1].decision, ActionKind::kHold);
  EXPECT_EQ(reports[2].decision, ActionKind::kDeny);
  EXPECT_EQ(reports[3].decision, ActionKind::kSkipUnowned);
}

TEST(SessionRunnerTest, OwnedCustomToolIsAnsweredWithACustomResult) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  SessionRunnerOptions o = TestOptions(t);
  o.owned_custom_tools = {"app_tool"};
  SessionRunner runner(api, exec, o);
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  Event custom = ToolUse("cu1", "app_tool", "");
  custom.type = std::string(kAgentCustomToolUse);
  api.Push(custom);
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 1; }));
  auto ev = PostedEvent(api.posts()[0]);
  EXPECT_EQ(ev["type"], "user.custom_tool_result");
  EXPECT_EQ(ev["custom_tool_use_id"], "cu1");
  EXPECT_FALSE(ev.contains("tool_use_id"));
  runner.Stop(StopReason::kShutdown, "done");
  (void)rt.Get();
}

TEST(SessionRunnerTest, TerminationInHistoryEndsWithoutRunning) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  api.SetHistory({ToolUse("tu1"), Typed("d1", "session.deleted")});
  SessionRunner runner(api, exec, TestOptions(t));
  RunResult r = runner.Run();
  EXPECT_EQ(r.outcome, RunOutcome::kTerminated);
  EXPECT_EQ(r.message, "session.deleted");
  EXPECT_EQ(exec.runs(), 0);
  EXPECT_TRUE(api.posts().empty());
}

TEST(SessionRunnerTest, TerminationDuringAToolCancelsItAndPostsNothing) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  exec.set_block(true);
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1"));
  ASSERT_TRUE(WaitFor([&] { return exec.running(); }));
  api.Push(Typed("t1", "session.status_terminated"));
  EXPECT_EQ(rt.Get().outcome, RunOutcome::kTerminated);
  EXPECT_EQ(exec.cancel_calls(), 1);
  EXPECT_TRUE(api.posts().empty());
}

TEST(SessionRunnerTest, FatalStreamErrorEndsTheRun) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  api.AddOpenError(MakeError(Errc::kPermissionDenied, "HTTP 401: invalid bearer"));
  SessionRunner runner(api, exec, TestOptions(t));
  RunResult r = runner.Run();
  EXPECT_EQ(r.outcome, RunOutcome::kFatal);
  EXPECT_EQ(r.message, "session event stream: HTTP 401: invalid bearer");
}

TEST(SessionRunnerTest, FatalHistoryErrorEndsTheRun) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  api.SetHistoryError(MakeError(Errc::kNotFound, "HTTP 404"));
  SessionRunner runner(api, exec, TestOptions(t));
  RunResult r = runner.Run();
  EXPECT_EQ(r.outcome, RunOutcome::kFatal);
  EXPECT_EQ(r.message, "list session events: HTTP 404");
}

TEST(SessionRunnerTest, TransientHistoryErrorReconnectsAndBuffersLiveEvents) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  api.SetHistoryError(MakeError(Errc::kSystem, "HTTP 502"));
  api.Push(ToolUse("tu1"));  // arrives before any history pass succeeded
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.stream_calls() >= 2; }));
  EXPECT_EQ(exec.runs(), 0) << "live events wait for a successful history pass";
  api.SetHistoryError(std::nullopt);
  ASSERT_TRUE(WaitFor([&] { return api.posts().size() == 1; }));
  EXPECT_EQ(exec.runs(), 1);
  runner.Stop(StopReason::kShutdown, "done");
  (void)rt.Get();
}

TEST(SessionRunnerTest, ReconnectBackoffDoublesToTheCapAndResetsWhenHealthy) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  for (int i = 0; i < 7; ++i) {
    api.AddOpenError(MakeError(Errc::kSystem, "connection refused"));
  }
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.connected() && api.history_calls() == 1; }));
  t.Advance(seconds(6));  // healthy for more than 5 s
  api.Drop();
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 2; }));
  runner.Stop(StopReason::kShutdown, "done");
  (void)rt.Get();
  auto s = t.Sleeps();
  ASSERT_GE(s.size(), 8u);
  std::vector<milliseconds> want = {milliseconds(250),  milliseconds(500),  milliseconds(1000),
                                    milliseconds(2000), milliseconds(4000), milliseconds(5000),
                                    milliseconds(5000), milliseconds(250)};
  EXPECT_EQ(std::vector<milliseconds>(s.begin(), s.begin() + 8), want);
}

TEST(SessionRunnerTest, JitterStaysInTheUpperHalfOpenInterval) {
  TestTime t;
  FakeSessionApi api;
  FakeExecutor exec;
  api.AddOpenError(MakeError(Errc::kSystem, "refused"));
  SessionRunnerOptions o = TestOptions(t);
  o.random = [] { return 0.999; };
  SessionRunner runner(api, exec, o);
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  runner.Stop(StopReason::kShutdown, "done");
  (void)rt.Get();
  ASSERT_FALSE(t.Sleeps().empty());
  EXPECT_EQ(t.Sleeps()[0], milliseconds(499));
}

TEST(SessionRunnerTest, DrainLimitBoundsRunWhenAToolIgnoresCancel) {
  TestTime t;
  FakeSessionApi api;
  class Stubborn : public ToolExecutor {
   public:
    ToolResult Run(const ToolCall&, milliseconds) override {
      started = true;
      while (!release) {
        std::this_thread::sleep_for(milliseconds(1));
      }
      return {};
    }
    void Cancel() override {}
    std::atomic<bool> started{false};
    std::atomic<bool> release{false};
  } exec;
  SessionRunnerOptions o = TestOptions(t);
  o.drain_timeout = milliseconds(100);
  auto runner = std::make_unique<SessionRunner>(api, exec, o);
  RunnerThread rt(*runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1"));
  ASSERT_TRUE(WaitFor([&] { return exec.started.load(); }));
  auto start = std::chrono::steady_clock::now();
  runner->Stop(StopReason::kShutdown, "bye");
  EXPECT_EQ(rt.Get().outcome, RunOutcome::kStopped);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(2));
  exec.release = true;
  runner.reset();  // joins the dispatch thread
}

// Whatever throws inside the runner (a tool, the event stream, the history pass) ends the
// session as fatal with the exception's text; the worker and its other sessions go on.
class ThrowingExecutor : public ToolExecutor {
 public:
  ToolResult Run(const ToolCall&, milliseconds) override {
    throw std::runtime_error("executor broke");
  }
  void Cancel() override {}
};

TEST(SessionRunnerTest, AToolThatThrowsFailsTheSession) {
  TestTime t;
  FakeSessionApi api;
  ThrowingExecutor exec;
  SessionRunner runner(api, exec, TestOptions(t));
  RunnerThread rt(runner);
  ASSERT_TRUE(WaitFor([&] { return api.history_calls() == 1; }));
  api.Push(ToolUse("tu1"));
  RunResult r = rt.Get();
  EXPECT_EQ(r.outcome, RunOutcome::kFatal);
  EXPECT_EQ(r.message, "tool dispatch failed: executor broke");
  EXPECT_TRUE(api.posts().empty());
}

class ThrowingStreamApi : public FakeSessionApi {
 public:
  Result<void> Stream(const std::function<void()>&, const std::function<bool(const Event&)>&,
                      const std::atomic<bool>&) override {
    throw std::runtime_error("stream broke");
  }
};

TEST(SessionRunnerTest, AStreamThatThrowsFailsTheSession) {
  TestTime t;
  ThrowingStreamApi api;
  FakeExecutor exec;
  SessionRunner runner(api, exec, TestOptions(t));
  RunResult r = runner.Run();
  EXPECT_EQ(r.outcome, RunOutcome::kFatal);
  EXPECT_EQ(r.message, "event stream failed: stream broke");
}

class ThrowingHistoryApi : public FakeSessionApi {
 public:
  Result<std::vector<Event>> ListHistory() override { throw std::runtime_error("history broke"); }
};

TEST(SessionRunnerTest, AHistoryPassThatThrowsFailsTheSession) {
  TestTime t;
  ThrowingHistoryApi api;
  FakeExecutor exec;
  SessionRunner runner(api, exec, TestOptions(t));
  RunResult r = runner.Run();
  EXPECT_EQ(r.outcome, RunOutcome::kFatal);
  EXPECT_EQ(r.message, "history pass failed: history broke");
}

TEST(ResultEventsTest, FormatGoDuration) {
  EXPECT_EQ(FormatGoDuration(seconds(120)), "2m0s");
  EXPECT_EQ(FormatGoDuration(milliseconds(1500)), "1.5s");
  EXPECT_EQ(FormatGoDuration(milliseconds(250)), "250ms");
  EXPECT_EQ(FormatGoDuration(milliseconds(0)), "0s");
  EXPECT_EQ(FormatGoDuration(seconds(3600 + 62)), "1h1m2s");
  EXPECT_EQ(FormatGoDuration(milliseconds(61010)), "1m1.01s");
}

TEST(ResultEventsTest, NormalisesContent) {
  ToolCall call;
  call.id = "tu";
  auto content = [&](const std::string& c) {
    return nlohmann::json::parse(
        BuildResultEvents(call, ToolResult{false, c, false}))[0]["content"];
  };
  EXPECT_EQ(content("[]")[0]["text"], "(no output)");
  EXPECT_EQ(content("not json")[0]["text"], "not json");
  EXPECT_EQ(content(R"([{"type":"text","text":"a"},{"type":"weird","x":1}])")[1]["text"],
            R"({"type":"weird","x":1})");
  EXPECT_EQ(content(R"([{"type":"image","source":{"type":"base64"}}])")[0]["type"], "image");
}

}  // namespace
}  // namespace srt::poller
