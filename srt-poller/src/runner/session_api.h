// SPDX-License-Identifier: Apache-2.0
// runner/session_api.h: what the session runner needs from the sessions API (one session).
//
// The API layer (srt-poller/src/api) implements this over libcurl for one session id and one
// bearer credential; tests implement it with fakes. All three methods may be called from different
// runner threads at the same time (Stream on one, ListHistory and PostEvents on others), so an
// implementation must not share one curl handle between them without its own locking, and must
// never call back into the runner.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "runner/session_events.h"
#include "srt/result.h"

namespace srt::poller {

// How the runner classifies an API error. The API layer maps HTTP outcomes onto Errc like this:
//   400, 413, 422 -> kInvalidArgument   401, 403 -> kPermissionDenied   404, 410 -> kNotFound
//   any other 4xx except 408 and 429 -> kDenied
//   408, 429, 5xx, connection/TLS/timeout errors, malformed responses -> kSystem or kProtocol
// The first four are "fatal": the same request will never succeed, so the runner does not retry
// it (Go SDK isFatal4xxStatus). Everything else is retried.
[[nodiscard]] inline bool IsFatalApiError(const Error& e) {
  switch (e.code()) {
    case Errc::kInvalidArgument:
    case Errc::kPermissionDenied:
    case Errc::kNotFound:
    case Errc::kDenied:
      return true;
    default:
      return false;
  }
}

class SessionApi {
 public:
  virtual ~SessionApi() = default;

  // The whole event history, oldest first: GET /v1/sessions/{id}/events?limit=1000&order=asc,
  // following every page. One attempt (retries inside the HTTP layer are fine); errors as above.
  [[nodiscard]] virtual Result<std::vector<Event>> ListHistory() = 0;

  // GET /v1/sessions/{id}/events/stream. Blocks until the stream ends, fails, `cancel` becomes
  // true, or `on_event` returns false; returns Ok for a clean end or a cancel, an Error otherwise.
  // `on_open` is called exactly once, after the response headers say 200 and before the first
  // event; it must be called (or Stream must fail) before any on_event. SSE `ping` and comments
  // are not delivered. `cancel` must be honoured within about a second (curl progress callback).
  // The callbacks run on the calling thread and never block for long.
  [[nodiscard]] virtual Result<void> Stream(const std::function<void()>& on_open,
                                            const std::function<bool(const Event&)>& on_event,
                                            const std::atomic<bool>& cancel) = 0;

  // POST /v1/sessions/{id}/events with body {"events": <events_json_array>}. Exactly one
  // attempt with the implementation's per-attempt timeout (15 s in the Go SDK); the runner does
  // its own retries and reads IsFatalApiError() on the error.
  [[nodiscard]] virtual Result<void> PostEvents(std::string events_json_array) = 0;
};

}  // namespace srt::poller
