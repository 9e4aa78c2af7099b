// SPDX-License-Identifier: Apache-2.0
// runner/runner.h: SessionRunner serves one session's tool calls until the session ends.
//
// Usage protocol:
//   SessionRunner runner(api, executor, options);   // api/executor outlive the runner
//   std::thread lease([&] { ...; runner.Stop(StopReason::kLeaseLost, "412 on heartbeat"); });
//   RunResult r = runner.Run();                       // blocks; call once
//   // then force-stop the work item, clean up skills, etc.
//
// What Run does (work-queue-protocol §2.5, Go SDK SessionToolRunner):
//   - Connect order: open the SSE stream first; once it is open, read the whole history and
//     dispatch every tool use that has no result yet; only then apply the live events (events
//     that arrive meanwhile are buffered). Duplicates are dropped by event id.
//   - Reconnect after a drop with jittered backoff (uniform in [b/2, b)), b = 0.5 s doubling to
//     10 s, reset after 5 s of healthy stream. A fatal 4xx on the stream or history ends Run.
//   - Serial execution: one dispatch thread runs one tool at a time, fed by a queue; the stream
//     callback only queues and never waits for a tool.
//   - Per-tool timeout (120 s): the call is cancelled and answered with the Go SDK's text
//     `tool "<name>" timed out after 2m0s` (is_error).
//   - Result post: up to 3 attempts, sleeping 1 s then 2 s; a fatal 4xx ends it at once. A call
//     counts as answered only after a successful post, so a failed one is dispatched again at
//     the next reconnect's history pass.
//   - Ends on: session terminated/deleted (kTerminated), max_idle after an end_turn idle
//     (kIdleTimeout), Stop() (kStopped / kLeaseLost), a fatal API error (kFatal). On every end
//     except kTerminated a running tool is cancelled and its result posted once; queued calls
//     are dropped (the next work item's history pass picks them up). Run returns within
//     drain_timeout of the end; a tool that ignores Cancel is then joined by the destructor.
//   - An exception out of a tool, the stream or the history pass (a bug of ours, memory
//     running out) ends Run as kFatal with its text: the session fails, the worker goes on.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "runner/session_api.h"
#include "runner/session_state.h"
#include "runner/tool_executor.h"

namespace srt::poller {

enum class RunOutcome {
  kTerminated,   // session.status_terminated or session.deleted (live or in history)
  kIdleTimeout,  // idle for max_idle after an end_turn (a normal end)
  kStopped,      // Stop(StopReason::kShutdown, ...): operator stop, SIGTERM, work item stopping
  kLeaseLost,    // Stop(StopReason::kLeaseLost, ...): the caller must not force-stop the item
  kFatal,        // the API refused us for good (fatal 4xx on stream or history)
};
std::string_view RunOutcomeName(RunOutcome outcome);

struct RunResult {
  RunOutcome outcome;
  std::string message;
};

enum class StopReason { kShutdown, kLeaseLost };

// What happened to one tool call, for the caller's logs (Go's DispatchedToolCall).
struct DispatchReport {
  ToolCall call;
  ActionKind decision;  // kRun, kHold, kDeny or kSkipUnowned
  bool ran = false;
  bool is_error = false;
  bool timed_out = false;
  bool cancelled = false;  // by Stop() or the end of the run
  bool posted = false;     // a result reached the session
  int post_attempts = 0;
  std::string post_error;  // the last post error, if any
};

struct SessionRunnerOptions {
  std::chrono::milliseconds max_idle{std::chrono::seconds(60)};  // <= 0: no idle exit
  std::chrono::milliseconds tool_timeout{std::chrono::seconds(120)};
  std::chrono::milliseconds drain_timeout{std::chrono::seconds(30)};
  std::set<std::string> owned_custom_tools;           // see SessionStateOptions
  std::optional<std::set<std::string>> served_tools;  // see SessionStateOptions
  size_t max_remembered_ids = 65536;                  // see SessionStateOptions
  size_t max_buffered_events = 4096;  // live events held during a history pass; more: reconnect

  std::chrono::milliseconds reconnect_backoff_start{500};
  std::chrono::milliseconds reconnect_backoff_cap{std::chrono::seconds(10)};
  std::chrono::milliseconds stream_healthy_after{std::chrono::seconds(5)};
  // Dispatch nothing until ReleaseDispatch(): the stream opens and the history is read at
  // once, and the calls they bring wait in the queue (a Stop before the release drops them
  // unrun and unanswered, for the next work item). The caller starts the runner while what
  // the tools need (their sandbox, the skills) is still being set up.
  bool hold_dispatch = false;
  int post_attempts = 3;
  std::chrono::milliseconds post_retry_base{std::chrono::seconds(1)};  // sleeps 1x, 2x, ...

  // Test seams. `now` is the clock for the idle and tool deadlines (default steady_clock).
  // `sleep` replaces the backoff/retry sleeps (default: wait, ending early on stop). `random`
  // returns uniform [0, 1) for the reconnect jitter. `tick` bounds how long the supervisor
  // waits between looks at `now`, so an injected clock is noticed.
  std::function<TimePoint()> now;
  std::function<void(std::chrono::milliseconds)> sleep;
  std::function<double()> random;
  std::chrono::milliseconds tick{std::chrono::seconds(1)};

  // Observers, called from runner threads without locks held; must be thread-safe and quick.
  std::function<void(const DispatchReport&)> on_dispatch;
  std::function<void(std::string_view)> log;
};

class SessionRunner {
 public:
  SessionRunner(SessionApi& api, ToolExecutor& executor, SessionRunnerOptions options = {});
  ~SessionRunner();  // joins the runner threads (waits for a tool that ignores Cancel)
  SessionRunner(const SessionRunner&) = delete;
  SessionRunner& operator=(const SessionRunner&) = delete;

  // Serves the session until one of the ends above. Call once.
  RunResult Run();

  // Ends Run from any thread (also before Run): cancels the running tool at once. The first
  // call wins; later ones are ignored.
  void Stop(StopReason reason, std::string message);
  // Lets the dispatch thread run the queued calls (see hold_dispatch). Any thread; idempotent.
  void ReleaseDispatch();

 private:
  enum class CancelCause { kNone, kTimeout, kStop };

  void StreamLoop();
  void DispatchLoop();
  // Runs `loop` (StreamLoop or DispatchLoop) on its thread; see runner.cc.
  void RunLoop(void (SessionRunner::*loop)(), bool SessionRunner::*done, std::string_view what);
  // Ends Run as kFatal with "<what> failed: <text>" (the first failure wins). Under mu_.
  void FailLocked(std::string_view what, std::string_view text);
  void Reconcile(std::unique_lock<std::mutex>& lock);
  // Applies state-machine actions (under mu_); returns the reports to emit after unlocking.
  std::vector<DispatchReport> ApplyLocked(const std::vector<Action>& actions);
  void Emit(const std::vector<DispatchReport>& reports);
  struct PostOutcome {
    bool posted = false;
    int attempts = 0;
    std::string last_error;
  };
  PostOutcome PostResult(const std::string& tool_use_id, const std::string& body);
  void SleepFor(std::chrono::milliseconds d);
  void CancelToolLocked(CancelCause cause);
  void Log(const std::string& message);
  TimePoint Now() const;

  SessionApi& api_;
  ToolExecutor& executor_;
  SessionRunnerOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  SessionState state_;
  std::deque<ToolCall> queue_;
  bool stopping_ = false;
  std::optional<StopReason> stop_reason_;
  std::string stop_message_;
  std::optional<Error> fatal_;
  std::atomic<bool> stream_cancel_{false};
  bool stream_connected_ = false;
  uint64_t connection_ = 0;     // generation of the current stream connection
  uint64_t reconcile_for_ = 0;  // generation a pending history pass belongs to
  bool reconcile_requested_ = false;
  bool reconciled_ = false;  // live events apply directly (else they are buffered)
  std::deque<Event> buffered_;
  bool dispatch_released_;  // false while hold_dispatch holds the queue
  bool tool_running_ = false;
  std::string running_id_;
  TimePoint tool_deadline_{};
  CancelCause cancel_cause_ = CancelCause::kNone;
  bool stream_done_ = false;
  bool dispatch_done_ = false;
  bool started_ = false;
  std::mt19937_64 rng_;

  std::thread stream_thread_;
  std::thread dispatch_thread_;
};

// Go's time.Duration.String() for whole milliseconds: 120 s -> "2m0s", 1.5 s -> "1.5s",
// 250 ms -> "250ms", 0 -> "0s".
std::string FormatGoDuration(std::chrono::milliseconds d);

// The events array (JSON text) that answers `call` with `result`: one user.tool_result, or a
// user.custom_tool_result for a custom call. Content blocks are normalised as documented on
// ToolResult::content_json.
std::string BuildResultEvents(const ToolCall& call, const ToolResult& result);

}  // namespace srt::poller
