// SPDX-License-Identifier: Apache-2.0
// runner/runner.cc: SessionRunner: stream + history reconcile, serial dispatch, result posting,
// idle exit and stop (see runner.h).
#include "runner/runner.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <utility>

#include "api/retry.h"

namespace srt::poller {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

json TextBlock(std::string text) { return json{{"type", "text"}, {"text", std::move(text)}}; }

// Keeps the blocks the session API accepts in a tool result; anything else becomes a text block
// holding its JSON, like the Go SDK's round-trip fallback.
json NormalizeContent(const std::string& content_json) {
  json blocks = json::parse(content_json, /*cb=*/nullptr, /*allow_exceptions=*/false);
  json out = json::array();
  if (blocks.is_discarded() || !blocks.is_array()) {
    if (!content_json.empty()) {
      out.push_back(TextBlock(content_json));
    }
  } else {
    for (json& b : blocks) {
      bool keep = false;
      if (b.is_object() && b.contains("type") && b["type"].is_string()) {
        const std::string type = b["type"].get<std::string>();
        if (type == "text") {
          keep = b.contains("text") && b["text"].is_string();
        } else if (type == "image" || type == "document") {
          keep = b.contains("source") && b["source"].is_object();
        } else if (type == "search_result") {
          keep = b.contains("source") && b["source"].is_string() &&
                 !b["source"].get<std::string>().empty() && b.contains("title") &&
                 b["title"].is_string() && !b["title"].get<std::string>().empty();
        }
      }
      if (keep) {
        out.push_back(std::move(b));
      } else if (!b.is_null()) {
        out.push_back(TextBlock(b.dump(-1, ' ', false, json::error_handler_t::replace)));
      }
    }
  }
  if (out.empty()) {
    out.push_back(TextBlock("(no output)"));
  }
  return out;
}

}  // namespace

std::string_view RunOutcomeName(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::kTerminated:
      return "terminated";
    case RunOutcome::kIdleTimeout:
      return "idle-timeout";
    case RunOutcome::kStopped:
      return "stopped";
    case RunOutcome::kLeaseLost:
      return "lease-lost";
    case RunOutcome::kFatal:
      return "fatal";
  }
  return "unknown";
}

std::string FormatGoDuration(milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) {
    return "0s";
  }
  std::string sign;
  if (ms < 0) {
    sign = "-";
    ms = -ms;
  }
  if (ms < 1000) {
    return sign + std::to_string(ms) + "ms";
  }
  int64_t hours = ms / 3600000;
  int64_t minutes = (ms / 60000) % 60;
  int64_t seconds = (ms / 1000) % 60;
  int64_t frac = ms % 1000;
  std::string out = sign;
  if (hours > 0) {
    out += std::to_string(hours) + "h";
  }
  if (hours > 0 || minutes > 0) {
    out += std::to_string(minutes) + "m";
  }
  out += std::to_string(seconds);
  if (frac != 0) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), ".%03d", static_cast<int>(frac));
    std::string f(buf);
    while (f.back() == '0') {
      f.pop_back();
    }
    out += f;
  }
  return out + "s";
}

std::string BuildResultEvents(const ToolCall& call, const ToolResult& result) {
  json ev;
  if (call.custom) {
    ev["type"] = "user.custom_tool_result";
    ev["custom_tool_use_id"] = call.id;
  } else {
    ev["type"] = "user.tool_result";
    ev["tool_use_id"] = call.id;
  }
  ev["is_error"] = result.is_error;
  ev["content"] = NormalizeContent(result.content_json);
  return json::array({ev}).dump(-1, ' ', false, json::error_handler_t::replace);
}

SessionRunner::SessionRunner(SessionApi& api, ToolExecutor& executor, SessionRunnerOptions options)
    : api_(api),
      executor_(executor),
      options_(std::move(options)),
      state_(SessionStateOptions{options_.max_idle, options_.owned_custom_tools,
                                 options_.served_tools, options_.max_remembered_ids}),
      dispatch_released_(!options_.hold_dispatch),
      rng_(std::random_device{}()) {}

SessionRunner::~SessionRunner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    stream_cancel_ = true;
  }
  cv_.notify_all();
  if (stream_thread_.joinable()) {
    stream_thread_.join();
  }
  if (dispatch_thread_.joinable()) {
    dispatch_thread_.join();
  }
}

TimePoint SessionRunner::Now() const { return options_.now ? options_.now() : RunnerClock::now(); }

void SessionRunner::Log(const std::string& message) {
  if (options_.log) {
    options_.log(message);
  }
}

void SessionRunner::Emit(const std::vector<DispatchReport>& reports) {
  if (!options_.on_dispatch) {
    return;
  }
  for (const DispatchReport& r : reports) {
    options_.on_dispatch(r);
  }
}

void SessionRunner::SleepFor(milliseconds d) {
  if (options_.sleep) {
    options_.sleep(d);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, d, [this] { return stopping_; });
}

void SessionRunner::CancelToolLocked(CancelCause cause) {
  if (tool_running_ && cancel_cause_ == CancelCause::kNone) {
    cancel_cause_ = cause;
    // Under mu_: the dispatch thread cannot start another call before it retakes mu_, so this
    // Cancel can only reach the call it is meant for (or arrive after it and be a no-op).
    executor_.Cancel();
  }
}

void SessionRunner::Stop(StopReason reason, std::string message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_reason_) {
      return;
    }
    stop_reason_ = reason;
    stop_message_ = std::move(message);
    stopping_ = true;
    stream_cancel_ = true;
    CancelToolLocked(CancelCause::kStop);
  }
  cv_.notify_all();
}

void SessionRunner::ReleaseDispatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dispatch_released_ = true;
  }
  cv_.notify_all();
}

std::vector<DispatchReport> SessionRunner::ApplyLocked(const std::vector<Action>& actions) {
  std::vector<DispatchReport> reports;
  for (const Action& a : actions) {
    switch (a.kind) {
      case ActionKind::kRun:
        queue_.push_back(a.call);
        break;
      case ActionKind::kHold:
      case ActionKind::kDeny:
      case ActionKind::kSkipUnowned: {
        DispatchReport r;
        r.call = a.call;
        r.decision = a.kind;
        reports.push_back(std::move(r));
        break;
      }
      case ActionKind::kSessionOver:
        Log("session over: " + a.detail);
        break;
    }
  }
  cv_.notify_all();
  return reports;
}

RunResult SessionRunner::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  if (started_) {
    return {RunOutcome::kFatal, "SessionRunner::Run called twice"};
  }
  started_ = true;
  if (!stop_reason_) {
    stream_thread_ = std::thread([this] {
      RunLoop(&SessionRunner::StreamLoop, &SessionRunner::stream_done_, "event stream");
    });
    dispatch_thread_ = std::thread([this] {
      RunLoop(&SessionRunner::DispatchLoop, &SessionRunner::dispatch_done_, "tool dispatch");
    });
  } else {
    stream_done_ = dispatch_done_ = true;
  }

  RunResult result{RunOutcome::kStopped, ""};
  for (;;) {
    TimePoint now = Now();
    if (stop_reason_) {
      result = {
          *stop_reason_ == StopReason::kLeaseLost ? RunOutcome::kLeaseLost : RunOutcome::kStopped,
          stop_message_};
      break;
    }
    if (fatal_) {
      result = {RunOutcome::kFatal, fatal_->message()};
      break;
    }
    if (state_.over()) {
      result = {RunOutcome::kTerminated, state_.over_reason()};
      break;
    }
    std::optional<TimePoint> idle = state_.IdleDeadline();
    if (idle && now >= *idle) {
      result = {RunOutcome::kIdleTimeout,
                "session idle after end_turn for " + FormatGoDuration(options_.max_idle)};
      break;
    }
    if (tool_running_ && cancel_cause_ == CancelCause::kNone && now >= tool_deadline_) {
      Log("tool '" + running_id_ + "' exceeded " + FormatGoDuration(options_.tool_timeout) +
          "; cancelling it");
      CancelToolLocked(CancelCause::kTimeout);
    }
    if (reconcile_requested_) {
      try {
        Reconcile(lock);
      } catch (const std::exception& e) {
        // Reconcile may have thrown with the lock released.
        if (!lock.owns_lock()) lock.lock();
        FailLocked("history pass", e.what());
      }
      continue;
    }
    milliseconds wait = options_.tick;
    auto until = [&](TimePoint t) {
      wait = std::min(wait, std::chrono::duration_cast<milliseconds>(t - now) + milliseconds(1));
    };
    if (idle) {
      until(*idle);
    }
    if (tool_running_ && cancel_cause_ == CancelCause::kNone) {
      until(tool_deadline_);
    }
    wait = std::max(wait, milliseconds(1));
    cv_.wait_for(lock, wait);
  }

  // Shut down: stop the stream, cancel a running tool (its result is still posted once, except
  // on a terminated session), drop queued calls, and wait for both threads up to the drain
  // limit.
  stopping_ = true;
  stream_cancel_ = true;
  CancelToolLocked(CancelCause::kStop);
  queue_.clear();
  cv_.notify_all();
  if (!cv_.wait_for(lock, options_.drain_timeout,
                    [this] { return stream_done_ && dispatch_done_; })) {
    Log("drain timeout (" + FormatGoDuration(options_.drain_timeout) +
        ") exceeded; a tool or the stream is still running");
  }
  bool join_stream = stream_done_;
  bool join_dispatch = dispatch_done_;
  lock.unlock();
  if (join_stream && stream_thread_.joinable()) {
    stream_thread_.join();
  }
  if (join_dispatch && dispatch_thread_.joinable()) {
    dispatch_thread_.join();
  }
  return result;
}

void SessionRunner::Reconcile(std::unique_lock<std::mutex>& lock) {
  reconcile_requested_ = false;
  uint64_t generation = reconcile_for_;
  lock.unlock();
  Result<std::vector<Event>> history = api_.ListHistory();
  lock.lock();
  if (stopping_) {
    return;
  }
  if (!history) {
    const Error& e = history.error();
    if (IsFatalApiError(e)) {
      fatal_ = Error(e).Wrap("list session events");
      return;
    }
    Log("list session events: " + e.message() + "; reconnecting");
    // Never consume a stream whose gap was not reconciled: drop this connection; the stream
    // thread reconnects with backoff and asks again. Buffered events stay for the next pass.
    if (stream_connected_ && connection_ == generation) {
      stream_cancel_ = true;
    }
    return;
  }
  std::vector<DispatchReport> reports = ApplyLocked(state_.OnHistory(*history, Now()));
  if (!reconcile_requested_) {
    // The buffered live events overlap the history; the state machine drops the ids it has seen.
    while (!buffered_.empty() && !state_.over()) {
      Event ev = std::move(buffered_.front());
      buffered_.pop_front();
      std::vector<DispatchReport> more = ApplyLocked(state_.OnStreamEvent(ev, Now()));
      reports.insert(reports.end(), more.begin(), more.end());
    }
    buffered_.clear();
    reconciled_ = true;
  }
  lock.unlock();
  Emit(reports);
  lock.lock();
}

// An exception that escapes a loop would std::terminate the whole worker. It ends the session
// instead, and `done` is set as the loop would have set it, so that Run's drain does not wait
// for a thread that is gone.
void SessionRunner::RunLoop(void (SessionRunner::*loop)(), bool SessionRunner::*done,
                            std::string_view what) {
  std::string failure;
  try {
    (this->*loop)();
    return;
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "an exception that is not a std::exception";
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    FailLocked(what, failure);
    this->*done = true;
  }
  cv_.notify_all();
}

void SessionRunner::FailLocked(std::string_view what, std::string_view text) {
  if (!fatal_) fatal_ = Error(Errc::kInternal, std::string(what) + " failed: " + std::string(text));
  cv_.notify_all();
}

void SessionRunner::StreamLoop() {
  milliseconds backoff = options_.reconnect_backoff_start;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    std::optional<TimePoint> opened_at;
    stream_cancel_ = false;
    lock.unlock();

    auto on_open = [&] {
      std::lock_guard<std::mutex> g(mu_);
      ++connection_;
      stream_connected_ = true;
      reconcile_for_ = connection_;
      reconciled_ = false;
      reconcile_requested_ = true;
      opened_at = Now();
      cv_.notify_all();
    };
    auto on_event = [&](const Event& ev) {
      std::vector<DispatchReport> reports;
      {
        std::lock_guard<std::mutex> g(mu_);
        if (stopping_ || state_.over()) {
          return false;
        }
        if (!reconciled_) {
          if (buffered_.size() >= options_.max_buffered_events) {
            Log("too many live events during the history pass; reconnecting");
            return false;
          }
          buffered_.push_back(ev);
          return true;
        }
        reports = ApplyLocked(state_.OnStreamEvent(ev, Now()));
      }
      Emit(reports);
      return true;
    };
    Result<void> r = api_.Stream(on_open, on_event, stream_cancel_);

    lock.lock();
    stream_connected_ = false;
    if (stopping_ || state_.over()) {
      break;
    }
    if (!r && IsFatalApiError(r.error())) {
      fatal_ = Error(r.error()).Wrap("session event stream");
      cv_.notify_all();
      break;
    }
    if (opened_at && Now() - *opened_at >= options_.stream_healthy_after) {
      backoff = options_.reconnect_backoff_start;
    }
    // Jitter in [b/2, b) so a fleet of runners does not reconnect in lockstep.
    double u = options_.random ? options_.random()
                               : std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
    milliseconds delay = Jitter(backoff, u);
    Log(std::string("event stream ") + (r ? "ended" : "failed: " + r.error().message()) +
        "; reconnecting in " + FormatGoDuration(delay));
    lock.unlock();
    SleepFor(delay);
    backoff = std::min(backoff * 2, options_.reconnect_backoff_cap);
    lock.lock();
  }
  stream_done_ = true;
  cv_.notify_all();
}

SessionRunner::PostOutcome SessionRunner::PostResult(const std::string& tool_use_id,
                                                     const std::string& body) {
  PostOutcome out;
  for (int attempt = 1; attempt <= options_.post_attempts; ++attempt) {
    out.attempts = attempt;
    Result<void> r = api_.PostEvents(body);
    if (r) {
      out.posted = true;
      return out;
    }
    out.last_error = r.error().message();
    if (IsFatalApiError(r.error())) {
      Log("posting the result of '" + tool_use_id + "' hit a permanent error (" + out.last_error +
          "); not retrying");
      return out;
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      if (stopping_) {
        return out;  // shutting down: one attempt only
      }
    }
    Log("posting the result of '" + tool_use_id + "' failed (attempt " + std::to_string(attempt) +
        "): " + out.last_error);
    if (attempt < options_.post_attempts) {
      SleepFor(options_.post_retry_base * attempt);
    }
  }
  return out;
}

void SessionRunner::DispatchLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || (dispatch_released_ && !queue_.empty()); });
    if (stopping_) {
      break;
    }
    ToolCall call = std::move(queue_.front());
    queue_.pop_front();
    if (!state_.ShouldRun(call.id)) {
      state_.OnDispatchDone(call.id, /*posted=*/false, Now());
      continue;
    }
    tool_running_ = true;
    running_id_ = call.id;
    cancel_cause_ = CancelCause::kNone;
    tool_deadline_ = Now() + options_.tool_timeout;
    cv_.notify_all();  // the supervisor now watches the tool deadline
    lock.unlock();

    ToolResult result = executor_.Run(call, options_.tool_timeout);

    lock.lock();
    tool_running_ = false;
    CancelCause cause = cancel_cause_;
    bool over = state_.over();
    lock.unlock();

    DispatchReport report;
    report.call = call;
    report.decision = ActionKind::kRun;
    report.ran = true;
    if (cause == CancelCause::kTimeout || result.timed_out) {
      report.timed_out = true;
      result.is_error = true;
      result.content_json = json::array({TextBlock("tool \"" + call.name + "\" timed out after " +
                                                   FormatGoDuration(options_.tool_timeout))})
                                .dump();
    } else if (cause == CancelCause::kStop) {
      report.cancelled = true;
      if (result.content_json.empty() || result.content_json == "[]") {
        result.is_error = true;
        result.content_json = json::array({TextBlock("tool cancelled")}).dump();
      }
    }
    report.is_error = result.is_error;
    // A terminated session accepts no results; anything else gets its answer (once when
    // stopping, see PostResult).
    if (!over) {
      PostOutcome post = PostResult(call.id, BuildResultEvents(call, result));
      report.posted = post.posted;
      report.post_attempts = post.attempts;
      report.post_error = std::move(post.last_error);
    }
    Emit({report});

    lock.lock();
    state_.OnDispatchDone(call.id, report.posted, Now());
    cv_.notify_all();
  }
  queue_.clear();
  dispatch_done_ = true;
  cv_.notify_all();
}

}  // namespace srt::poller
