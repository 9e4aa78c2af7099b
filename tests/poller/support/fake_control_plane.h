// SPDX-License-Identifier: Apache-2.0
// support/fake_control_plane.h: starts tests/poller/fake_control_plane.py (a loopback fake of the
// work queue, sessions, skills and memory store endpoints) and scripts it through its /_fake/
// control API.
//
// Usage:
//   #include "poller/support/fake_control_plane.h"
//   auto fake = srt::testing::FakeControlPlane::Start({});
//   ASSERT_TRUE(fake.has_value()) << fake.error().message();
//   FakeControlPlane& cp = **fake;
//   auto work = cp.Enqueue({.session_id = "sesn_a"});          // queued, with a secret
//   ... point srt-poller at cp.base_url() with cp.environment_id() / cp.environment_key() ...
//   ASSERT_TRUE(cp.WaitForWorkState(work->work_id, "active", 5s).has_value());
//   cp.AppendEvents("sesn_a", {{{"type", "agent.tool_use"}, {"name", "bash"}, ...}});
//   auto results = cp.WaitForResults("sesn_a", 1, 10s);
//
// The fake runs as our child (python3, found on PATH before fork). Start() returns once it has
// reported its port over a pipe. The destructor stops it by pid (SIGTERM, then SIGKILL after
// 2 s) and reaps it; if the test process dies first, the fake sees EOF on its stdin (a pipe
// whose write end only we hold, CLOEXEC) and the kernel sends it SIGTERM (PR_SET_PDEATHSIG,
// tied to the thread that called Start(): start it from the test's main thread).
//
// TLS mode (Options::tls): Start() makes a throwaway CA and a server certificate for 127.0.0.1
// and localhost with the openssl CLI in a private temp dir, base_url() is https://, and
// ca_file() is the CA bundle to hand to the client. The control API then runs on a second,
// plain-HTTP port (control_port()), so this class needs no TLS client. The temp dir is removed
// by the destructor.
//
// The fake's behaviour, its /_fake/ API and its fault kinds are documented at the top of
// fake_control_plane.py and in the comments below. Every method is blocking and thread-safe
// (each call opens its own loopback connection).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::testing {

// ---- A small blocking HTTP/1.1 client (loopback, plain text, one request per connection) ----

struct HttpHeader {
  std::string name;
  std::string value;
};

struct HttpRequest {
  std::string host = "127.0.0.1";  // an IPv4 literal
  uint16_t port = 0;
  std::string method = "GET";
  std::string target = "/";  // path and query, already encoded
  std::vector<HttpHeader> headers;
  std::string body;  // sent with Content-Length when non-empty or when method is POST/PUT
  std::chrono::milliseconds timeout{10000};  // for the whole exchange
};

struct HttpResponse {
  int status = 0;
  std::vector<HttpHeader> headers;
  std::string body;  // de-chunked
  // The first header of that name (case-insensitive), if any.
  [[nodiscard]] std::optional<std::string> Header(std::string_view name) const;
};

// Sends one request with "Connection: close" and reads the whole response. Errc::kSystem for
// socket errors and timeouts, Errc::kProtocol for a malformed response.
[[nodiscard]] Result<HttpResponse> HttpCall(const HttpRequest& request);

// Calls `predicate` every `interval` until it returns true (true) or `timeout` passes (false;
// the predicate gets one last call at the deadline).
[[nodiscard]] bool WaitFor(const std::function<bool()>& predicate,
                           std::chrono::milliseconds timeout,
                           std::chrono::milliseconds interval = std::chrono::milliseconds(20));

// ---- The fake ----

class FakeControlPlane {
 public:
  struct Options {
    std::string environment_id = "env_fake";
    std::string environment_key = "sk-ant-oat01-fake-environment-key";
    // Serve /v1 over HTTPS with a throwaway CA (see above).
    bool tls = false;
    // ttl_seconds that heartbeats report (and after which a stopping item with no heartbeat
    // becomes stopped). Changeable later with Configure({{"ttl_seconds", n}}).
    int ttl_seconds = 30;
    // Seconds between SSE `ping` events; 0 disables them.
    double ping_interval_seconds = 5.0;
    // The interpreter and the script; empty: python3 from PATH, and the script of this source
    // tree (SRT_FAKE_CONTROL_PLANE_SCRIPT, or the SRT_FAKE_CONTROL_PLANE environment variable).
    std::string python;
    std::string script;
    std::vector<std::string> extra_args;  // e.g. "-v" (logs every request to the log())
    std::chrono::milliseconds startup_timeout{15000};
  };

  // One work item to enqueue (POST /_fake/work).
  struct WorkOptions {
    std::string session_id;             // empty: a new "sesn_..." id
    std::string data_type = "session";  // or "healthcheck" (never gets a secret)
    bool with_secret = true;            // false: secret is null on poll
    std::string sessions_token;         // empty: generated "sk-ant-req-fake-..."
    std::string work_id;                // empty: generated "work_..."
    std::string api_base_url;           // optional api_base_url inside the secret
    nlohmann::json metadata = nlohmann::json::object();
  };
  struct Enqueued {
    std::string work_id;
    std::string session_id;
    std::string sessions_token;  // empty without a secret
    std::string secret;          // the base64url secret poll will return; empty without one
    nlohmann::json work;         // the fake's full view of the item
  };

  // Filters for Requests(); empty fields match everything.
  struct RequestFilter {
    // poll, stats, ack, heartbeat, stop, work_get, work_update, work_list, session_get,
    // events_list, events_post, stream, skill_versions, skill_version, skill_content,
    // memory_list, memory_get, memory_create, memory_update, memory_delete.
    std::string endpoint;
    std::string method;
    std::string session_id;
    std::string work_id;
    std::string path_regex;  // Python re.search on the path (no query)
    int64_t since_seq = 0;   // only requests with seq > since_seq
  };

  // A fault (POST /_fake/faults): the next `count` requests that match get the scripted answer
  // instead of the real one. Faults apply before the auth checks.
  struct Fault {
    std::string endpoint;    // as in RequestFilter (empty: any)
    std::string method;      // empty: any
    std::string path_regex;  // empty: any
    std::string session_id;  // only requests for this session / work item
    std::string work_id;
    // "status": answer `status` (with an API error body unless `body` is set); "drop": close
    // the connection without answering; "delay": wait delay_ms, then answer normally;
    // "stream_drop": the next matching SSE stream ends after `after_events` events (cleanly
    // with the last chunk, or abruptly with `abrupt`).
    std::string kind = "status";
    int status = 500;
    int count = 1;  // -1: until cleared
    int skip = 0;   // let this many matching requests through first
    int delay_ms = 0;
    std::optional<std::string> retry_after;  // Retry-After header value
    std::vector<HttpHeader> headers;         // more response headers
    std::optional<nlohmann::json> body;      // a JSON body, or a string sent as text/plain
    int after_events = 0;
    bool abrupt = false;
  };

  // A skill version (POST /_fake/skills). Paths are archive member names as given, optionally
  // under top_dir (real skill bundles wrap everything in one directory named after the skill).
  struct SkillFile {
    std::string content;
    uint32_t mode = 0644;
  };
  // Raw members for escape tests: type "file", "dir", "symlink", "hardlink" (tar), "fifo" (tar);
  // any name (e.g. "../escape", "/abs/path"); `target` for links.
  struct SkillMember {
    std::string name;
    std::string type = "file";
    std::string content;
    std::string target;
    uint32_t mode = 0644;
  };
  struct Skill {
    std::string skill_id;           // empty: generated "skill_..."
    std::string version;            // empty: a numeric version (microseconds since the epoch)
    std::string name;               // empty: the skill id
    std::string format = "tar.gz";  // tar.gz | tar.bz2 | tar | zip
    std::string top_dir;
    std::map<std::string, SkillFile> files;
    std::vector<SkillMember> members;  // added after `files`
  };

  [[nodiscard]] static Result<std::unique_ptr<FakeControlPlane>> Start(const Options& options);
  ~FakeControlPlane();
  FakeControlPlane(const FakeControlPlane&) = delete;
  FakeControlPlane& operator=(const FakeControlPlane&) = delete;

  // "http://127.0.0.1:<port>" (or https:// in TLS mode), no trailing slash, no /v1.
  [[nodiscard]] std::string base_url() const;
  [[nodiscard]] uint16_t port() const { return port_; }
  [[nodiscard]] uint16_t control_port() const { return control_port_; }
  [[nodiscard]] const std::string& environment_id() const { return options_.environment_id; }
  [[nodiscard]] const std::string& environment_key() const { return options_.environment_key; }
  // TLS mode: the PEM file of the test CA; otherwise empty.
  [[nodiscard]] const std::string& ca_file() const { return ca_file_; }
  [[nodiscard]] pid_t pid() const { return pid_; }
  // What the fake wrote to stdout and stderr so far.
  [[nodiscard]] std::string log() const;

  // Raw call to the control API: `path` starts with "/_fake/"; `body` is sent as JSON unless
  // null. A non-2xx answer is an Errc::kProtocol error quoting status and body.
  [[nodiscard]] Result<nlohmann::json> Control(std::string_view method, std::string_view path,
                                               const nlohmann::json& body = nullptr) const;
  // Raw call to the public API on the plain port (not in TLS mode: Errc::kUnsupported) with
  // the usual headers (anthropic-version, anthropic-beta, Authorization: Bearer `bearer` unless
  // empty) plus `extra_headers`. Any status is returned as a value.
  [[nodiscard]] Result<HttpResponse> Api(std::string_view method, std::string_view target,
                                         std::string_view bearer, std::string body = {},
                                         std::vector<HttpHeader> extra_headers = {}) const;

  [[nodiscard]] Result<Enqueued> Enqueue(const WorkOptions& options) const;
  // Creates or updates a session: {"skills": [{"skill_id", "version"}], "metadata": {...},
  // "resources": [...], "tools": [...], "status": "..."}; returns the session object.
  [[nodiscard]] Result<nlohmann::json> PutSession(const std::string& session_id,
                                                  nlohmann::json session) const;
  // Appends agent/session events (an array, or one object) to the session's history and to
  // its live streams; id and processed_at are added when missing. Returns the stored events.
  [[nodiscard]] Result<nlohmann::json> AppendEvents(const std::string& session_id,
                                                    const nlohmann::json& events) const;
  // The whole history of the session (agent events and posted user events), oldest first.
  [[nodiscard]] Result<nlohmann::json> Events(const std::string& session_id) const;
  // Events posted through POST /v1/sessions/{id}/events, oldest first: each
  // {"time", "event", "duplicate" (a second result for the same tool use), "auth"
  // ("env_key"|"sessions_token"), "request_seq"}.
  [[nodiscard]] Result<nlohmann::json> Results(const std::string& session_id) const;
  // The fake's view of the session plus "streams" (live SSE connections), "events", "results".
  [[nodiscard]] Result<nlohmann::json> Session(const std::string& session_id) const;
  // Recorded /v1 requests, oldest first: {"seq", "time", "method", "path", "raw_query",
  // "query", "headers" (lower-case names), "body", "json", "endpoint", "session_id", "work_id",
  // "status" (0: dropped), "auth" ("env_key"|"sessions_token"|"none"|"invalid"), "fault"}.
  [[nodiscard]] Result<nlohmann::json> Requests(const RequestFilter& filter) const;
  [[nodiscard]] Result<nlohmann::json> Requests() const;  // all of them
  // Adds a fault; returns its id.
  [[nodiscard]] Result<std::string> AddFault(const Fault& fault) const;
  [[nodiscard]] Result<void> ClearFaults() const;
  // Ends the session's live streams now (cleanly, or abruptly without the last chunk).
  [[nodiscard]] Result<int> DropStreams(const std::string& session_id, bool abrupt = false) const;
  // Sends an SSE `error` event on the session's live streams.
  [[nodiscard]] Result<void> StreamError(const std::string& session_id,
                                         const nlohmann::json& error = nullptr) const;
  // Operator stop: graceful moves the item to "stopping" (heartbeats report it), force to
  // "stopped". Errc::kProtocol (409) if already stopped.
  [[nodiscard]] Result<nlohmann::json> StopWork(const std::string& work_id, bool force) const;
  // Another worker takes the lease: the next heartbeat gets 412.
  [[nodiscard]] Result<void> StealLease(const std::string& work_id) const;
  // The fake's view of a work item: the work object (with secret) plus "sessions_token",
  // "last_heartbeat", "heartbeats" [{"time","expected","ok","status","state"}], "deliveries",
  // "acks", "stops" [{"time","force","by","state_before"}].
  [[nodiscard]] Result<nlohmann::json> WorkState(const std::string& work_id) const;
  // Adds a skill version with its archive; returns the version object plus "size".
  [[nodiscard]] Result<nlohmann::json> AddSkill(const Skill& skill) const;
  // Creates or replaces the memory store `store_id` with `memories` (path -> UTF-8 content; the
  // paths must follow the server's rules, else Errc::kProtocol with the 400). Every memory gets
  // a new id and version. The /v1 memory endpoints take only the sessions token of a session
  // with a {"type": "memory_store", "memory_store_id": store_id} resource (see PutSession).
  // Returns the store as MemoryStore() does.
  [[nodiscard]] Result<nlohmann::json> PutMemoryStore(
      const std::string& store_id, const std::map<std::string, std::string>& memories) const;
  // The store's memories now, path -> content. Errc::kProtocol (404) for an unknown store.
  [[nodiscard]] Result<std::map<std::string, std::string>> MemoryStoreContents(
      const std::string& store_id) const;
  // {"id", "memories": [full memory objects in path order]}: {"type": "memory", "id",
  // "memory_store_id", "path", "content", "content_sha256", "content_size_bytes",
  // "memory_version_id", "created_at", "updated_at"}. Errc::kProtocol (404) for an unknown store.
  [[nodiscard]] Result<nlohmann::json> MemoryStore(const std::string& store_id) const;
  // Changes settings: empty_poll ("204" | "null" | "empty"), stream_replay (bool),
  // skills_accept_sessions_token, session_accepts_env_key, strict_results (bool),
  // ttl_seconds (int), ping_interval (seconds).
  [[nodiscard]] Result<void> Configure(const nlohmann::json& settings) const;
  // Forgets all work, sessions, skills, memory stores, requests, faults and settings; ends live
  // streams.
  [[nodiscard]] Result<void> Reset() const;

  // Polling helpers: Errc::kInternal on timeout, with the last state seen in the message.
  [[nodiscard]] Result<nlohmann::json> WaitForRequest(const RequestFilter& filter,
                                                      std::chrono::milliseconds timeout) const;
  [[nodiscard]] Result<nlohmann::json> WaitForRequests(const RequestFilter& filter, size_t count,
                                                       std::chrono::milliseconds timeout) const;
  [[nodiscard]] Result<nlohmann::json> WaitForResults(const std::string& session_id, size_t count,
                                                      std::chrono::milliseconds timeout) const;
  [[nodiscard]] Result<nlohmann::json> WaitForWorkState(const std::string& work_id,
                                                        std::string_view state,
                                                        std::chrono::milliseconds timeout) const;
  [[nodiscard]] Result<void> WaitForStreams(const std::string& session_id, int count,
                                            std::chrono::milliseconds timeout) const;

 private:
  FakeControlPlane() = default;
  void Stop();

  Options options_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  uint16_t control_port_ = 0;
  UniqueFd log_;          // memfd shared with the child's stdout and stderr
  UniqueFd stdin_write_;  // the child exits when this closes
  std::string temp_dir_;  // TLS material; removed by the destructor
  std::string ca_file_;
};

}  // namespace srt::testing
