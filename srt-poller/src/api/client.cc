// SPDX-License-Identifier: Apache-2.0
// api/client.cc: request building, error classification, automatic retries, and the endpoints.
#include "api/client.h"

#include <cerrno>
#include <set>
#include <thread>

#include "api/sse.h"
#include "base/strings.h"

#ifndef SRT_POLLER_VERSION
#define SRT_POLLER_VERSION "0"
#endif

namespace srt::poller {

std::string_view ApiErrorKindName(ApiErrorKind kind) {
  switch (kind) {
    case ApiErrorKind::kTransport:
      return "transport";
    case ApiErrorKind::kRetryable:
      return "retryable";
    case ApiErrorKind::kFatal:
      return "fatal";
    case ApiErrorKind::kLeaseLost:
      return "lease lost";
    case ApiErrorKind::kConflict:
      return "conflict";
    case ApiErrorKind::kProtocol:
      return "protocol";
    case ApiErrorKind::kInvalidArgument:
      return "invalid argument";
    case ApiErrorKind::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

srt::Error ApiError::ToError() const {
  switch (kind_) {
    case ApiErrorKind::kFatal:
    case ApiErrorKind::kLeaseLost:
    case ApiErrorKind::kConflict:
      return Error(Errc::kDenied, message_);
    case ApiErrorKind::kTransport:
      return Error(Errc::kSystem, message_);
    case ApiErrorKind::kInvalidArgument:
      return Error(Errc::kInvalidArgument, message_);
    case ApiErrorKind::kCancelled:
      return Error(Errc::kSystem, message_, ECANCELED);
    case ApiErrorKind::kRetryable:
    case ApiErrorKind::kProtocol:
      break;
  }
  return Error(Errc::kProtocol, message_);
}

namespace {

bool PrintableNoSpace(std::string_view s) {
  for (char c : s) {
    if (c <= ' ' || c > '~') return false;
  }
  return !s.empty();
}

ApiError Invalid(std::string message) {
  return ApiError(ApiErrorKind::kInvalidArgument, std::move(message));
}

ApiError FromParse(std::string_view what, const srt::Error& e) {
  return ApiError(ApiErrorKind::kProtocol, std::string(what) + ": " + e.message());
}

}  // namespace

class ApiTransport {
 public:
  struct Call {
    std::string method = "GET";
    std::string path;                                        // "/v1/..." (ids already validated)
    std::vector<std::pair<std::string, std::string>> query;  // raw values; encoded here
    std::string body;
    bool json_body = false;
    std::string_view beta = kManagedAgentsBeta;
    Headers extra;
    ConflictPolicy conflict = ConflictPolicy::kRetry;
    std::optional<Millis> timeout;   // per attempt; default ClientOptions::timeout
    std::optional<Millis> deadline;  // the whole call, retries included
    std::optional<int> max_retries;  // default ClientOptions::max_retries
    size_t max_body = 0;             // default ClientOptions::max_body
    const CancelToken* cancel = nullptr;
  };

  ApiTransport(std::string base_url, std::string bearer, ClientOptions opts)
      : base_(std::move(base_url)),
        bearer_(std::move(bearer)),
        opts_(std::move(opts)),
        http_(HttpOptions{.ca_file = opts_.ca_file,
                          .user_agent = opts_.user_agent.empty()
                                            ? std::string("srt-poller/") + SRT_POLLER_VERSION
                                            : opts_.user_agent,
                          .allow_plain_http = opts_.allow_plain_http}) {
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
    if (!opts_.uniform) opts_.uniform = DefaultUniform();
  }

  static Result<void> ValidateBase(std::string_view base, bool allow_http) {
    const bool https = base.starts_with("https://");
    const bool http = base.starts_with("http://");
    if (!PrintableNoSpace(base) || !(https || (http && allow_http)) ||
        base.find_first_of("?#") != std::string_view::npos) {
      return MakeError(Errc::kInvalidArgument, "base URL " + strings::QuoteForMessage(base) +
                                                   " is not an http(s) URL without query");
    }
    return Ok();
  }

  const ClientOptions& options() const { return opts_; }
  const CancelToken* CancelFor(const Call& c) const {
    return c.cancel != nullptr ? c.cancel : opts_.cancel.get();
  }

  std::string Target(const Call& c) const {
    std::string t = c.path + "?beta=true";
    for (const auto& [k, v] : c.query) t += "&" + k + "=" + UrlEncode(v);
    return t;
  }

  Request Build(const Call& c) const {
    Request r;
    r.method = c.method;
    r.url = base_ + Target(c);
    r.headers.Add("Authorization", "Bearer " + bearer_);
    r.headers.Add("anthropic-version", kAnthropicVersion);
    r.headers.Add("anthropic-beta", c.beta);
    for (const auto& [k, v] : c.extra.fields()) r.headers.Set(k, v);
    if (!r.headers.Has("Accept")) r.headers.Add("Accept", "application/json");
    if (c.json_body) r.headers.Add("Content-Type", "application/json");
    r.body = c.body;
    r.timeout = c.timeout.value_or(opts_.timeout);
    r.max_body = c.max_body != 0 ? c.max_body : opts_.max_body;
    r.cancel = CancelFor(c);
    return r;
  }

  ApiError Classify(const Call& c, const Response& resp) const {
    const std::string what = c.method + " '" + Target(c) + "'";
    std::string msg = what + ": HTTP " + std::to_string(resp.status);
    if (auto api = ParseApiErrorMessage(resp.body)) msg += " " + *api;
    if (auto rid = resp.headers.Get("request-id"))
      msg += " (request-id " + strings::QuoteForMessage(*rid) + ")";
    const auto ra = RetryAfter(resp.headers, std::chrono::system_clock::now());
    const int s = resp.status;
    ApiErrorKind kind = ApiErrorKind::kProtocol;
    if (s == 412) {
      kind = ApiErrorKind::kLeaseLost;
    } else if (s == 409) {
      kind =
          c.conflict == ConflictPolicy::kFinal ? ApiErrorKind::kConflict : ApiErrorKind::kRetryable;
    } else if (IsFatal4xx(s)) {
      kind = ApiErrorKind::kFatal;
    } else if (s == 408 || s == 429 || s >= 500) {
      kind = ApiErrorKind::kRetryable;
    }
    return ApiError(kind, std::move(msg), s, ra);
  }

  static ApiError FromTransport(const srt::Error& e) {
    return ApiError(e.sys_errno() == ECANCELED           ? ApiErrorKind::kCancelled
                    : e.code() == Errc::kInvalidArgument ? ApiErrorKind::kInvalidArgument
                    : e.code() == Errc::kProtocol        ? ApiErrorKind::kProtocol
                                                         : ApiErrorKind::kTransport,
                    e.message());
  }

  // Performs the call with automatic retries; a 2xx response is the value.
  ApiResult<Response> Do(const Call& c) const {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const int max_retries = c.max_retries.value_or(opts_.max_retries);
    const CancelToken* cancel = CancelFor(c);
    Request req = Build(c);
    const Millis per_attempt = req.timeout;
    for (int attempt = 0;; ++attempt) {
      if (c.deadline) {
        const auto left = *c.deadline - std::chrono::duration_cast<Millis>(Clock::now() - start);
        if (left <= Millis{0}) {
          return ApiError(ApiErrorKind::kTransport, c.method + " '" + Target(c) + "': timed out");
        }
        req.timeout = per_attempt.count() == 0 ? left : std::min(per_attempt, left);
      }
      auto r = http_.Send(req);
      std::optional<ApiError> err;
      bool retry = false;
      if (!r) {
        err = FromTransport(r.error());
        retry =
            err->kind() == ApiErrorKind::kTransport && ShouldRetry(std::nullopt, {}, c.conflict);
      } else if (r->status >= 200 && r->status < 300) {
        return std::move(r).value();
      } else {
        err = Classify(c, *r);
        retry = ShouldRetry(r->status, r->headers, c.conflict);
      }
      if (!retry || attempt >= max_retries) return std::move(*err);
      const Millis delay = SdkRetryDelay(attempt, err->retry_after(), opts_.uniform());
      if (c.deadline &&
          std::chrono::duration_cast<Millis>(Clock::now() - start) + delay >= *c.deadline) {
        return std::move(*err);
      }
      if (cancel != nullptr ? !cancel->WaitFor(delay)
                            : (std::this_thread::sleep_for(delay), false)) {
        return ApiError(ApiErrorKind::kCancelled, c.method + " '" + Target(c) + "': cancelled");
      }
    }
  }

  const HttpClient& http() const { return http_; }

 private:
  std::string base_;
  std::string bearer_;
  ClientOptions opts_;
  HttpClient http_;
};

// ---- WorkQueueClient ----------------------------------------------------------------------

WorkQueueClient::WorkQueueClient(std::shared_ptr<const ApiTransport> t, std::string env,
                                 std::string worker)
    : t_(std::move(t)), environment_id_(std::move(env)), worker_id_(std::move(worker)) {}

Result<WorkQueueClient> WorkQueueClient::Create(WorkQueueConfig config) {
  SRT_RETURN_IF_ERROR(ApiTransport::ValidateBase(config.base_url, config.options.allow_plain_http));
  SRT_RETURN_IF_ERROR(ValidateId("environment id", config.environment_id));
  if (!PrintableNoSpace(config.environment_key)) {
    return MakeError(
        Errc::kInvalidArgument,
        "environment key is empty or contains spaces, control or non-ASCII characters");
  }
  if (!PrintableNoSpace(config.worker_id) || config.worker_id.size() > 256) {
    return MakeError(Errc::kInvalidArgument,
                     "worker id " + strings::QuoteForMessage(config.worker_id) +
                         " must be 1 to 256 printable ASCII characters without spaces");
  }
  auto t = std::make_shared<const ApiTransport>(
      std::move(config.base_url), std::move(config.environment_key), std::move(config.options));
  return WorkQueueClient(std::move(t), std::move(config.environment_id),
                         std::move(config.worker_id));
}

ApiResult<std::optional<Work>> WorkQueueClient::Poll(const PollOptions& options) const {
  ApiTransport::Call c;
  c.path = "/v1/environments/" + environment_id_ + "/work/poll";
  if (options.block_ms) c.query.emplace_back("block_ms", std::to_string(*options.block_ms));
  if (options.reclaim_older_than_ms) {
    c.query.emplace_back("reclaim_older_than_ms", std::to_string(*options.reclaim_older_than_ms));
  }
  c.extra.Add("Anthropic-Worker-ID", worker_id_);
  auto r = t_->Do(c);
  if (!r) return std::move(r).error();
  auto w = ParsePollResponse(r->status, r->body);
  if (!w) return FromParse("poll", w.error());
  return std::move(w).value();
}

ApiResult<void> WorkQueueClient::Ack(std::string_view work_id) const {
  if (auto ok = ValidateId("work id", work_id); !ok) return Invalid(ok.error().message());
  ApiTransport::Call c;
  c.method = "POST";
  c.path = "/v1/environments/" + environment_id_ + "/work/" + std::string(work_id) + "/ack";
  c.conflict = ConflictPolicy::kFinal;
  auto r = t_->Do(c);
  if (!r) return std::move(r).error();
  return {};
}

ApiResult<HeartbeatResponse> WorkQueueClient::Heartbeat(std::string_view work_id,
                                                        std::string_view expected_last_heartbeat,
                                                        std::optional<int64_t> desired_ttl_seconds,
                                                        Millis timeout) const {
  if (auto ok = ValidateId("work id", work_id); !ok) return Invalid(ok.error().message());
  if (expected_last_heartbeat.empty()) {
    return Invalid("heartbeat: expected_last_heartbeat is empty (use NO_HEARTBEAT first)");
  }
  ApiTransport::Call c;
  c.method = "POST";
  c.path = "/v1/environments/" + environment_id_ + "/work/" + std::string(work_id) + "/heartbeat";
  c.query.emplace_back("expected_last_heartbeat", std::string(expected_last_heartbeat));
  if (desired_ttl_seconds) {
    c.query.emplace_back("desired_ttl_seconds", std::to_string(*desired_ttl_seconds));
  }
  c.conflict = ConflictPolicy::kFinal;
  c.timeout = timeout;
  c.deadline = timeout;
  auto r = t_->Do(c);
  if (!r) return std::move(r).error();
  auto h = ParseHeartbeatResponse(r->body);
  if (!h) return FromParse("heartbeat", h.error());
  return std::move(h).value();
}

ApiResult<QueueStats> WorkQueueClient::Stats(Millis timeout) const {
  ApiTransport::Call c;
  c.method = "GET";
  c.path = "/v1/environments/" + environment_id_ + "/work/stats";
  c.timeout = timeout;
  c.deadline = timeout;
  auto r = t_->Do(c);
  if (!r) return std::move(r).error();
  auto q = ParseQueueStats(r->body);
  if (!q) return FromParse("queue stats", q.error());
  return std::move(q).value();
}

ApiResult<void> WorkQueueClient::Stop(std::string_view work_id, bool force, Millis timeout) const {
  if (auto ok = ValidateId("work id", work_id); !ok) return Invalid(ok.error().message());
  ApiTransport::Call c;
  c.method = "POST";
  c.path = "/v1/environments/" + environment_id_ + "/work/" + std::string(work_id) + "/stop";
  c.body = force ? R"({"force":true})" : "{}";
  c.json_body = true;
  c.conflict = ConflictPolicy::kFinal;
  c.timeout = timeout;
  c.deadline = timeout;
  auto r = t_->Do(c);
  if (!r && r.error().kind() != ApiErrorKind::kConflict) return std::move(r).error();
  return {};  // 409: already stopped, which is what we asked for
}

// ---- SessionClient ------------------------------------------------------------------------

namespace {

// GETs `first` and then each `next_page` until the last page, concatenating `data`. At most
// SessionClient::kMaxEventPages pages; a repeated page token is a kProtocol error.
template <typename Item, typename ParsePage>
ApiResult<std::vector<Item>> ListAllPages(const ApiTransport& t, const ApiTransport::Call& first,
                                          std::string_view what, ParsePage parse) {
  std::vector<Item> all;
  std::set<std::string> tokens;
  std::optional<std::string> page;
  for (int n = 0; n < SessionClient::kMaxEventPages; ++n) {
    ApiTransport::Call c = first;
    if (page) c.query.emplace_back("page", *page);
    auto r = t.Do(c);
    if (!r) return std::move(r).error();
    auto p = parse(r->body);
    if (!p) return FromParse(what, p.error());
    for (auto& item : p->data) all.push_back(std::move(item));
    if (!p->next_page) return all;
    if (!tokens.insert(*p->next_page).second) {
      return ApiError(ApiErrorKind::kProtocol, std::string(what) +
                                                   ": the server repeated page token " +
                                                   strings::QuoteForMessage(*p->next_page));
    }
    page = std::move(p->next_page);
  }
  return ApiError(ApiErrorKind::kProtocol, std::string(what) + ": more than " +
                                               std::to_string(SessionClient::kMaxEventPages) +
                                               " pages");
}

}  // namespace

Result<SessionClient> SessionClient::Create(SessionClientConfig config) {
  SRT_RETURN_IF_ERROR(ApiTransport::ValidateBase(config.base_url, config.options.allow_plain_http));
  if (!PrintableNoSpace(config.bearer)) {
    return MakeError(Errc::kInvalidArgument,
                     "session bearer is empty or contains spaces, control or non-ASCII characters");
  }
  return SessionClient(std::make_shared<const ApiTransport>(
      std::move(config.base_url), std::move(config.bearer), std::move(config.options)));
}

ApiResult<Session> SessionClient::GetSession(std::string_view session_id) const {
  if (auto ok = ValidateId("session id", session_id); !ok) return Invalid(ok.error().message());
  ApiTransport::Call c;
  c.path = "/v1/sessions/" + std::string(session_id);
  auto r = t_->Do(c);
  if (!r) return std::move(r).error();
  auto s = ParseSession(r->body);
  if (!s) return FromParse("get session", s.error());
  return std::move(s).value();
}

ApiResult<std::vector<SessionEvent>> SessionClient::ListEvents(std::string_view session_id) const {
  if (auto ok = ValidateId("session id", session_id); !ok) return Invalid(ok.error().message());
  ApiTransport::Call c;
  c.path = "/v1/sessions/" + std::string(session_id) + "/events";
  c.query = {{"limit", "1000"}, {"order", "asc"}};
  return ListAllPages<SessionEvent>(*t_, c, "list events", ParseEventPage);
}

ApiResult<StreamEnd> SessionClient::StreamEvents(std::string_view session_id,
                                                 const StreamHandlers& handlers,
                                                 const CancelToken* cancel) const {
  if (auto ok = ValidateId("session id", session_id); !ok) return Invalid(ok.error().message());
  ApiTransport::Call c;
  c.path = "/v1/sessions/" + std::string(session_id) + "/events/stream";
  c.extra.Add("Accept", "text/event-stream");
  c.timeout = Millis{0};
  c.cancel = cancel;
  Request req = t_->Build(c);
  req.idle_timeout = t_->options().stream_idle_timeout;
  req.max_body = size_t{1} << 20;  // cap on a non-2xx body

  SseParser parser;
  std::optional<ApiError> failure;
  auto on_head = [&](const Response& head) {
    if (head.status >= 200 && head.status < 300 && handlers.on_open) handlers.on_open();
    return true;
  };
  auto on_bytes = [&](std::string_view bytes) {
    auto events = parser.Feed(bytes);
    if (!events) {
      failure = FromParse("event stream", events.error());
      return false;
    }
    for (SseEvent& sse : *events) {
      if (sse.type == "ping") continue;
      if (sse.type == "error") {
        failure = ApiError(ApiErrorKind::kRetryable, "event stream: server error: " +
                                                         ParseApiErrorMessage(sse.data).value_or(
                                                             strings::QuoteForMessage(sse.data)));
        return false;
      }
      auto ev = ParseSessionEvent(sse.data);
      if (!ev) {
        failure = FromParse("event stream", ev.error());
        return false;
      }
      if (handlers.on_event && !handlers.on_event(std::move(ev).value())) return false;
    }
    return true;
  };
  auto r = t_->http().Stream(req, on_bytes, on_head);
  if (!r) return ApiTransport::FromTransport(r.error());
  if (failure) return std::move(*failure);
  if (r->end == StreamEnd::kCancelled) return StreamEnd::kCancelled;
  if (r->head.status < 200 || r->head.status >= 300) return t_->Classify(c, r->head);
  return r->end;
}

ApiResult<void> SessionClient::PostEvents(std::string_view session_id, std::string body_json,
                                          std::optional<Millis> timeout) const {
  if (auto ok = ValidateId("session id", session_id); !ok) return Invalid(ok.error().message());
  ApiTransport::Call c;
  c.method = "POST";
  c.path = "/v1/sessions/" + std::string(session_id) + "/events";
  c.body = std::move(body_json);
  c.json_body = true;
  c.timeout = timeout;
  auto r = t_->Do(c);
  if (!r) return std::move(r).error();
  return {};
}

ApiResult<void> SessionClient::SendToolResults(std::string_view session_id,
                                               const std::vector<PostedToolResult>& results,
                                               const SendPolicy& policy) const {
  if (auto ok = ValidateId("session id", session_id); !ok) return Invalid(ok.error().message());
  auto body = EncodeEventsBody(results);
  if (!body) return Invalid(body.error().message());
  const CancelToken* cancel = t_->options().cancel.get();
  std::optional<ApiError> last;
  for (int attempt = 1; attempt <= std::max(1, policy.attempts); ++attempt) {
    ApiTransport::Call c;
    c.method = "POST";
    c.path = "/v1/sessions/" + std::string(session_id) + "/events";
    c.body = *body;
    c.json_body = true;
    c.timeout = policy.attempt_timeout;
    c.max_retries = 0;  // this loop is the retry policy
    auto r = t_->Do(c);
    if (r) return {};
    last = std::move(r).error();
    const ApiErrorKind k = last->kind();
    if (k != ApiErrorKind::kTransport && k != ApiErrorKind::kRetryable) return std::move(*last);
    if (attempt == policy.attempts) break;  // no sleep after the final attempt
    const Millis sleep = policy.first_sleep * attempt;
    if (cancel != nullptr ? !cancel->WaitFor(sleep) : (std::this_thread::sleep_for(sleep), false)) {
      return ApiError(ApiErrorKind::kCancelled, "send tool results: cancelled");
    }
  }
  return std::move(*last);
}

ApiResult<std::vector<SkillVersion>> SessionClient::ListSkillVersions(
    std::string_view skill_id) const {
  if (auto ok = ValidateId("skill id", skill_id); !ok) return Invalid(ok.error().message());
  ApiTransport::Call c;
  c.path = "/v1/skills/" + std::string(skill_id) + "/versions";
  c.beta = kSkillsBeta;
  return ListAllPages<SkillVersion>(*t_, c, "list skill versions", ParseSkillVersionPage);
}

ApiResult<SkillVersion> SessionClient::GetSkillVersion(std::string_view skill_id,
                                                       std::string_view version) const {
  if (auto ok = ValidateId("skill id", skill_id); !ok) return Invalid(ok.error().message());
  if (auto ok = ValidateId("skill version", version); !ok) return Invalid(ok.error().message());
  ApiTransport::Call c;
  c.path = "/v1/skills/" + std::string(skill_id) + "/versions/" + std::string(version);
  c.beta = kSkillsBeta;
  auto r = t_->Do(c);
  if (!r) return std::move(r).error();
  auto v = ParseSkillVersion(r->body);
  if (!v) return FromParse("get skill version", v.error());
  return std::move(v).value();
}

ApiResult<std::string> SessionClient::DownloadSkillContent(std::string_view skill_id,
                                                           std::string_view version) const {
  if (auto ok = ValidateId("skill id", skill_id); !ok) return Invalid(ok.error().message());
  if (auto ok = ValidateId("skill version", version); !ok) return Invalid(ok.error().message());
  ApiTransport::Call c;
  c.path = "/v1/skills/" + std::string(skill_id) + "/versions/" + std::string(version) + "/content";
  c.beta = kSkillsBeta;
  c.extra.Add("Accept", "application/binary");
  c.max_body = t_->options().max_skill_bytes;
  auto r = t_->Do(c);
  if (!r) return std::move(r).error();
  return std::move(r->body);
}

namespace {

Result<ApiTransport::Call> MemoryCall(std::string method, std::string_view store_id,
                                      std::string_view memory_id) {
  SRT_RETURN_IF_ERROR(ValidateId("memory store id", store_id));
  ApiTransport::Call c;
  c.method = std::move(method);
  c.path = "/v1/memory_stores/" + std::string(store_id) + "/memories";
  if (!memory_id.empty()) {
    SRT_RETURN_IF_ERROR(ValidateId("memory id", memory_id));
    c.path += "/" + std::string(memory_id);
  }
  c.beta = kMemoryBeta;
  return c;
}

}  // namespace

ApiResult<std::vector<Memory>> SessionClient::ListMemories(std::string_view store_id,
                                                           size_t max_memories) const {
  auto c = MemoryCall("GET", store_id, "");
  if (!c) return Invalid(c.error().message());
  c->query = {{"view", "full"}, {"limit", "20"}};
  auto all = ListAllPages<Memory>(*t_, *c, "list memories", ParseMemoryPage);
  if (all && all->size() > max_memories) {
    return ApiError(ApiErrorKind::kProtocol, "list memories: store " + std::string(store_id) +
                                                 " holds more than " +
                                                 std::to_string(max_memories) + " memories");
  }
  return all;
}

namespace {

// POSTs a memory write: a 409 (a path taken, a version changed meanwhile) stays one.
ApiResult<Memory> PostMemoryWrite(const ApiTransport& t, ApiTransport::Call c, std::string body,
                                  std::string_view what) {
  c.body = std::move(body);
  c.json_body = true;
  c.conflict = ConflictPolicy::kFinal;
  auto r = t.Do(c);
  if (!r) return std::move(r).error();
  auto m = ParseMemory(r->body);
  if (!m) return FromParse(what, m.error());
  return std::move(m).value();
}

}  // namespace

ApiResult<Memory> SessionClient::CreateMemory(std::string_view store_id, std::string_view path,
                                              std::string_view content) const {
  auto c = MemoryCall("POST", store_id, "");
  if (!c) return Invalid(c.error().message());
  return PostMemoryWrite(*t_, std::move(*c), EncodeMemoryWrite(path, content, std::nullopt),
                         "create memory");
}

ApiResult<Memory> SessionClient::UpdateMemory(std::string_view store_id, std::string_view memory_id,
                                              std::string_view content,
                                              std::string_view expected_sha256) const {
  auto c = MemoryCall("POST", store_id, memory_id);
  if (!c) return Invalid(c.error().message());
  return PostMemoryWrite(*t_, std::move(*c),
                         EncodeMemoryWrite(std::nullopt, content, expected_sha256),
                         "update memory");
}

ApiResult<void> SessionClient::DeleteMemory(std::string_view store_id, std::string_view memory_id,
                                            std::string_view expected_sha256) const {
  auto c = MemoryCall("DELETE", store_id, memory_id);
  if (!c) return Invalid(c.error().message());
  c->query = {{"expected_content_sha256", std::string(expected_sha256)}};
  c->conflict = ConflictPolicy::kFinal;
  auto r = t_->Do(*c);
  if (!r) return std::move(r).error();
  return {};
}

}  // namespace srt::poller
