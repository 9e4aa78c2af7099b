// SPDX-License-Identifier: Apache-2.0
// api/client.h: the work-queue, session and skills endpoints (work-queue-protocol.md §2.1-§2.6).
//
// Usage:
//   auto wq = WorkQueueClient::Create({.base_url = url, .environment_id = env,
//                                      .environment_key = key, .worker_id = id});
//   auto item = wq->Poll();                 // ApiResult<std::optional<Work>>
//   wq->Ack(item->id); ... wq->Heartbeat(item->id, "NO_HEARTBEAT"); ... wq->Stop(id, true);
//   auto sc = SessionClient::Create({.base_url = url, .bearer = sessions_token});
//   sc->StreamEvents(session_id, {.on_open = ..., .on_event = ...}, &cancel);
//
// Every request carries `?beta=true`, `anthropic-version: 2023-06-01`, `anthropic-beta:
// managed-agents-2026-04-01` (skills calls: `skills-2025-10-02`, as the Go SDK sends),
// `Authorization: Bearer <key or token>` and a `User-Agent: srt-poller/<version>`; never
// `x-api-key` (the server rejects dual auth). Poll adds `Anthropic-Worker-ID`.
//
// Retries: a call whose answer ShouldRetry() accepts (connection errors, 408, 409 unless final,
// 429, 5xx, x-should-retry) is retried automatically up to ClientOptions::max_retries times,
// sleeping the server's Retry-After(-Ms) or SdkRetryDelay(). The caller's own loops (poll backoff,
// heartbeat tolerance, reconnects) sit on top, as in the Go SDK. Sleeps end early on cancel.
//
// Clients are cheap to copy and safe to use from several threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "api/http.h"
#include "api/retry.h"
#include "api/work.h"
#include "srt/result.h"

namespace srt::poller {

inline constexpr std::string_view kAnthropicVersion = "2023-06-01";
inline constexpr std::string_view kManagedAgentsBeta = "managed-agents-2026-04-01";
inline constexpr std::string_view kSkillsBeta = "skills-2025-10-02";
inline constexpr std::string_view kMemoryBeta = "agent-memory-2026-07-22";
inline constexpr std::string_view kNoHeartbeat = "NO_HEARTBEAT";

enum class ApiErrorKind {
  kTransport,        // no HTTP response: DNS, connect, TLS, reset, timeout
  kRetryable,        // 408, 429, 5xx (or other non-fatal status) after the automatic retries
  kFatal,            // a 4xx that will not succeed on retry (IsFatal4xx), except 409 and 412
  kLeaseLost,        // 412: on heartbeat, expected_last_heartbeat no longer matches
  kConflict,         // 409 where it is final (ack, heartbeat); Stop turns it into success
  kProtocol,         // a response we cannot use: bad JSON, unsafe id, unexpected status
  kInvalidArgument,  // the caller passed an unusable id or value
  kCancelled,        // ClientOptions::cancel or the call's CancelToken fired
};
std::string_view ApiErrorKindName(ApiErrorKind kind);

class ApiError {
 public:
  ApiError(ApiErrorKind kind, std::string message, int status = 0,
           std::optional<Millis> retry_after = std::nullopt)
      : kind_(kind), status_(status), message_(std::move(message)), retry_after_(retry_after) {}

  ApiErrorKind kind() const { return kind_; }
  int status() const { return status_; }  // HTTP status, 0 when there was no response
  // "POST '/v1/.../heartbeat': 412 invalid_request_error: heartbeat mismatch" (the server's API
  // error message when the body is one). Never contains a credential.
  const std::string& message() const { return message_; }
  // The server's Retry-After, if it sent one (clamped to kMaxRetryAfter).
  std::optional<Millis> retry_after() const { return retry_after_; }
  bool fatal() const { return kind_ == ApiErrorKind::kFatal; }

  // The same failure as a plain srt::Error (kFatal/kLeaseLost/kConflict -> kDenied, kTransport ->
  // kSystem, kProtocol/kRetryable -> kProtocol, kInvalidArgument, kCancelled -> kSystem ECANCELED).
  srt::Error ToError() const;

 private:
  ApiErrorKind kind_;
  int status_;
  std::string message_;
  std::optional<Millis> retry_after_;
};

// srt::Result's shape with an ApiError: has_value, value, error, operator*, operator->.
template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T v) : v_(std::in_place_index<0>, std::move(v)) {}         // NOLINT
  ApiResult(ApiError e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT
  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const ApiError& error() const& { return std::get<1>(v_); }
  ApiError&& error() && { return std::get<1>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, ApiError> v_;
};

template <>
class [[nodiscard]] ApiResult<void> {
 public:
  ApiResult() = default;
  ApiResult(ApiError e) : e_(std::move(e)) {}  // NOLINT
  bool has_value() const { return !e_.has_value(); }
  explicit operator bool() const { return has_value(); }
  const ApiError& error() const& { return *e_; }
  ApiError&& error() && { return std::move(*e_); }

 private:
  std::optional<ApiError> e_;
};

struct ClientOptions {
  std::string ca_file;                         // PEM CA bundle for HTTPS; empty = the system's
  Millis timeout{60'000};                      // per attempt, unless a call sets its own
  int max_retries = 2;                         // automatic retries (the Go SDK default)
  std::shared_ptr<CancelToken> cancel;         // cancels every call and retry sleep of this client
  UniformSource uniform;                       // jitter source; DefaultUniform() when empty
  size_t max_body = kDefaultMaxBody;           // JSON responses
  size_t max_skill_bytes = size_t{256} << 20;  // DownloadSkillContent
  Millis stream_idle_timeout{0};  // StreamEvents: give up after this much silence; 0 = never
  std::string user_agent;         // default "srt-poller/<version>"
  bool allow_plain_http = true;
};

class ApiTransport;  // client.cc: request building, classification and retries

struct WorkQueueConfig {
  std::string base_url;         // e.g. "https://api.anthropic.com" (http:// allowed for tests)
  std::string environment_id;   // validated id
  std::string environment_key;  // the bearer; printable ASCII, no spaces
  std::string worker_id;        // Anthropic-Worker-ID, e.g. "<hostname>-<16 hex>"
  ClientOptions options;
};

struct PollOptions {
  std::optional<int> block_ms = 999;  // nullopt: non-blocking poll (the server rejects 0)
  std::optional<int64_t> reclaim_older_than_ms;
};

// Claims and leases work items with the environment key.
class WorkQueueClient {
 public:
  // Errors (kInvalidArgument) on an unusable base URL, environment id, key or worker id.
  [[nodiscard]] static srt::Result<WorkQueueClient> Create(WorkQueueConfig config);

  // GET .../work/poll. nullopt = queue empty (204, empty body or null).
  ApiResult<std::optional<Work>> Poll(const PollOptions& options = {}) const;
  // POST .../work/{id}/ack. 409 is kConflict (not retried).
  ApiResult<void> Ack(std::string_view work_id) const;
  // POST .../work/{id}/heartbeat?expected_last_heartbeat=...: pass kNoHeartbeat first, then the
  // previous response's last_heartbeat. 412 is kLeaseLost; 409 kConflict (neither retried).
  // `timeout` bounds the whole call, automatic retries included (the beat interval, §2.4).
  ApiResult<HeartbeatResponse> Heartbeat(std::string_view work_id,
                                         std::string_view expected_last_heartbeat,
                                         std::optional<int64_t> desired_ttl_seconds = std::nullopt,
                                         Millis timeout = Millis{30'000}) const;
  // POST .../work/{id}/stop with {"force":true} or {}. 204/2xx and 409 (already stopped) succeed.
  ApiResult<void> Stop(std::string_view work_id, bool force, Millis timeout = Millis{10'000}) const;
  // GET .../work/stats: changes nothing; an unusable key is kFatal (401/403), a missing
  // environment kFatal (404).
  ApiResult<QueueStats> Stats(Millis timeout = Millis{10'000}) const;

  const std::string& environment_id() const { return environment_id_; }
  const std::string& worker_id() const { return worker_id_; }

 private:
  WorkQueueClient(std::shared_ptr<const ApiTransport> t, std::string env, std::string worker);
  std::shared_ptr<const ApiTransport> t_;
  std::string environment_id_;
  std::string worker_id_;
};

struct SessionClientConfig {
  std::string base_url;  // the secret's api_base_url, else the poller's
  std::string bearer;    // the item's sessions token (or the environment key, e.g. for skills)
  ClientOptions options;
};

struct StreamHandlers {
  // Called once the server has answered 2xx, before any event: the stream is live, so the
  // caller may now read the history (connect order, §2.5).
  std::function<void()> on_open;
  // Called per event (`ping` is skipped); return false to end the stream (StreamEnd::kStopped).
  std::function<bool(SessionEvent&&)> on_event;
};

// The result-posting rule of §2.5, as SendToolResults applies it.
struct SendPolicy {
  int attempts = 3;
  Millis attempt_timeout{15'000};
  Millis first_sleep{1'000};  // attempt n (1-based) failing sleeps n * first_sleep: 1 s, then 2 s
};

class SessionClient {
 public:
  [[nodiscard]] static srt::Result<SessionClient> Create(SessionClientConfig config);

  // GET /v1/sessions/{id}.
  ApiResult<Session> GetSession(std::string_view session_id) const;
  // GET /v1/sessions/{id}/events?limit=1000&order=asc, following next_page to the end (at most
  // kMaxEventPages pages; a repeated page token is a kProtocol error).
  static constexpr int kMaxEventPages = 10'000;
  ApiResult<std::vector<SessionEvent>> ListEvents(std::string_view session_id) const;
  // GET /v1/sessions/{id}/events/stream (SSE). Blocks until the server ends the stream (kEnded;
  // reconnect), on_event returns false (kStopped) or `cancel` (else ClientOptions::cancel) fires
  // (kCancelled, within ~50 ms). Not retried automatically: the runner owns reconnects
  // (ReconnectBackoff). A non-2xx answer, an SSE `error` event (kRetryable) or an unparsable
  // event (kProtocol) is an error.
  ApiResult<StreamEnd> StreamEvents(std::string_view session_id, const StreamHandlers& handlers,
                                    const CancelToken* cancel = nullptr) const;
  // POST /v1/sessions/{id}/events with `body_json` ({"events":[...]}): one call, with the
  // client's automatic retries.
  ApiResult<void> PostEvents(std::string_view session_id, std::string body_json,
                             std::optional<Millis> timeout = std::nullopt) const;
  // Posts tool results under the §2.5 rule (SendPolicy): up to 3 attempts of 15 s each, sleeping
  // 1 s then 2 s in between, no automatic retries inside an attempt; a fatal 4xx (or 409/412,
  // kInvalidArgument, kCancelled) ends it at once. Returns the last attempt's error.
  ApiResult<void> SendToolResults(std::string_view session_id,
                                  const std::vector<PostedToolResult>& results,
                                  const SendPolicy& policy = {}) const;

  // Skills (anthropic-beta: skills-2025-10-02). All versions of a skill, every page.
  ApiResult<std::vector<SkillVersion>> ListSkillVersions(std::string_view skill_id) const;
  ApiResult<SkillVersion> GetSkillVersion(std::string_view skill_id,
                                          std::string_view version) const;
  // The archive bytes (Accept: application/binary), at most ClientOptions::max_skill_bytes.
  ApiResult<std::string> DownloadSkillContent(std::string_view skill_id,
                                              std::string_view version) const;

  // Memory stores (anthropic-beta: agent-memory-2026-07-22), with the item's sessions token:
  // the memory endpoints refuse the environment key. Every memory of a store with its content
  // (view=full, 20 a page: the server's cap for that view), refused past `max_memories`.
  ApiResult<std::vector<Memory>> ListMemories(std::string_view store_id, size_t max_memories) const;
  // POST .../memories {path, content}.
  ApiResult<Memory> CreateMemory(std::string_view store_id, std::string_view path,
                                 std::string_view content) const;
  // POST .../memories/{id} {content, precondition}: applies only while the server's content
  // still has `expected_sha256`; a 409 (changed meanwhile) is kConflict and not retried.
  ApiResult<Memory> UpdateMemory(std::string_view store_id, std::string_view memory_id,
                                 std::string_view content, std::string_view expected_sha256) const;
  // DELETE .../memories/{id}?expected_content_sha256=...; a 409 is kConflict, as above.
  ApiResult<void> DeleteMemory(std::string_view store_id, std::string_view memory_id,
                               std::string_view expected_sha256) const;

 private:
  explicit SessionClient(std::shared_ptr<const ApiTransport> t) : t_(std::move(t)) {}
  std::shared_ptr<const ApiTransport> t_;
};

}  // namespace srt::poller
