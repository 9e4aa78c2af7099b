// SPDX-License-Identifier: Apache-2.0
// client_test.cc: WorkQueueClient and SessionClient against the loopback FakeHttpServer:
// headers, query strings, bodies, empty polls, 412/409, Retry-After, fatal 4xx, SSE in
// fragments, cancellation latency, skills.
#include "api/client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "fake_http_server.h"

namespace srt::poller {
namespace {

using std::chrono::milliseconds;
using testing::FakeHttpServer;
using testing::ScriptedResponse;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kWork =
    R"({"type":"work","id":"work_1","environment_id":"env_1","data":{"type":"session","id":"sesn_1"},)"
    R"("state":"queued","secret":"eyJzZXNzaW9uc190b2tlbiI6InNrLWFudC1yZXEtMSJ9","metadata":{}})";

ClientOptions FastOptions() {
  ClientOptions o;
  o.timeout = milliseconds(5000);
  o.uniform = [] { return 0.0; };
  return o;
}

WorkQueueClient MakeQueue(const FakeHttpServer& s, ClientOptions o = FastOptions()) {
  auto c = WorkQueueClient::Create({.base_url = s.base_url() + "/",
                                    .environment_id = "env_1",
                                    .environment_key = "sk-ant-oat01-key",
                                    .worker_id = "host-0123456789abcdef",
                                    .options = std::move(o)});
  EXPECT_TRUE(c.has_value()) << c.error().message();
  return std::move(c).value();
}

SessionClient MakeSession(const FakeHttpServer& s, ClientOptions o = FastOptions()) {
  auto c = SessionClient::Create(
      {.base_url = s.base_url(), .bearer = "sk-ant-req-token", .options = std::move(o)});
  EXPECT_TRUE(c.has_value()) << c.error().message();
  return std::move(c).value();
}

void ExpectCommonHeaders(const testing::RecordedRequest& r, std::string_view bearer,
                         std::string_view beta = kManagedAgentsBeta) {
  EXPECT_EQ(r.headers.Get("authorization").value_or(""), "Bearer " + std::string(bearer));
  EXPECT_EQ(r.headers.Get("anthropic-version").value_or(""), "2023-06-01");
  EXPECT_EQ(r.headers.Get("anthropic-beta").value_or(""), beta);
  EXPECT_FALSE(r.headers.Has("x-api-key"));
  EXPECT_TRUE(r.headers.Get("user-agent").value_or("").starts_with("srt-poller/"));
  EXPECT_TRUE(r.query.starts_with("beta=true")) << r.query;
}

TEST(WorkQueueClientTest, CreateRejectsBadConfig) {
  EXPECT_FALSE(WorkQueueClient::Create({.base_url = "ftp://x",
                                        .environment_id = "env_1",
                                        .environment_key = "k",
                                        .worker_id = "w"}));
  auto r = WorkQueueClient::Create({.base_url = "http://127.0.0.1:1",
                                    .environment_id = "env/../1",
                                    .environment_key = "k",
                                    .worker_id = "w"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("'env/../1'"), std::string::npos) << r.error().message();
  EXPECT_FALSE(WorkQueueClient::Create({.base_url = "http://127.0.0.1:1",
                                        .environment_id = "env_1",
                                        .environment_key = "a\r\nb",
                                        .worker_id = "w"}));
}

TEST(WorkQueueClientTest, PollSendsHeadersAndQueryAndParsesWork) {
  FakeHttpServer s;
  s.EnqueueJson(200, std::string(kWork));
  auto q = MakeQueue(s);
  auto w = q.Poll();
  ASSERT_TRUE(w) << w.error().message();
  ASSERT_TRUE(w->has_value());
  EXPECT_EQ((*w)->id, "work_1");
  EXPECT_EQ((*w)->data_id, "sesn_1");
  EXPECT_EQ((*w)->raw_json, kWork);
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_EQ(reqs[0].path, "/v1/environments/env_1/work/poll");
  EXPECT_EQ(reqs[0].query, "beta=true&block_ms=999");
  ExpectCommonHeaders(reqs[0], "sk-ant-oat01-key");
  EXPECT_EQ(reqs[0].headers.Get("anthropic-worker-id").value_or(""), "host-0123456789abcdef");
}

TEST(WorkQueueClientTest, PollOptionsReclaimAndNonBlocking) {
  FakeHttpServer s;
  s.EnqueueJson(204, "");
  auto q = MakeQueue(s);
  ASSERT_TRUE(q.Poll({.block_ms = std::nullopt, .reclaim_older_than_ms = 5000}));
  EXPECT_EQ(s.requests()[0].query, "beta=true&reclaim_older_than_ms=5000");
}

TEST(WorkQueueClientTest, EmptyPollsAre204EmptyBodyAndNull) {
  FakeHttpServer s;
  s.EnqueueJson(204, "");
  s.EnqueueJson(200, "");
  s.EnqueueJson(200, "null");
  auto q = MakeQueue(s);
  for (int i = 0; i < 3; ++i) {
    auto w = q.Poll();
    ASSERT_TRUE(w) << i << ": " << w.error().message();
    EXPECT_FALSE(w->has_value()) << i;
  }
}

TEST(WorkQueueClientTest, PollWithUnsafeSessionIdIsAProtocolError) {
  FakeHttpServer s;
  s.EnqueueJson(200, R"({"id":"work_1","data":{"type":"session","id":"../etc"}})");
  auto w = MakeQueue(s).Poll();
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().kind(), ApiErrorKind::kProtocol);
  EXPECT_NE(w.error().message().find("/data/id: '../etc' is not a safe id"), std::string::npos)
      << w.error().message();
}

TEST(WorkQueueClientTest, FatalPoll4xxCarriesTheApiMessageAndIsNotRetried) {
  FakeHttpServer s;
  s.EnqueueJson(
      401, R"({"type":"error","error":{"type":"authentication_error","message":"invalid key"}})",
      {{"request-id", "req_1"}});
  auto w = MakeQueue(s).Poll();
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().kind(), ApiErrorKind::kFatal);
  EXPECT_EQ(w.error().status(), 401);
  EXPECT_NE(w.error().message().find("HTTP 401 authentication_error: invalid key"),
            std::string::npos)
      << w.error().message();
  EXPECT_EQ(w.error().message().find("sk-ant"), std::string::npos);
  EXPECT_EQ(s.request_count(), 1u);
}

TEST(WorkQueueClientTest, ServerErrorsAreRetriedThenRetryable) {
  FakeHttpServer s;
  for (int i = 0; i < 3; ++i) s.EnqueueJson(503, "");
  auto w = MakeQueue(s).Poll();
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().kind(), ApiErrorKind::kRetryable);
  EXPECT_EQ(w.error().status(), 503);
  EXPECT_EQ(s.request_count(), 3u);  // 1 + max_retries (2)
}

TEST(WorkQueueClientTest, XShouldRetryFalseStopsRetries) {
  FakeHttpServer s;
  s.EnqueueJson(503, "", {{"X-Should-Retry", "false"}});
  auto w = MakeQueue(s).Poll();
  ASSERT_FALSE(w);
  EXPECT_EQ(s.request_count(), 1u);
}

TEST(WorkQueueClientTest, RetryAfterMsIsHonoured) {
  FakeHttpServer s;
  s.EnqueueJson(429, "", {{"Retry-After-Ms", "300"}});
  s.EnqueueJson(204, "");
  auto w = MakeQueue(s).Poll();
  ASSERT_TRUE(w) << w.error().message();
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_GE(reqs[1].at - reqs[0].at, milliseconds(290));
}

TEST(WorkQueueClientTest, RetryAfterSecondsIsHonoured) {
  FakeHttpServer s;
  s.EnqueueJson(503, "", {{"Retry-After", "1"}});
  s.EnqueueJson(204, "");
  auto w = MakeQueue(s).Poll();
  ASSERT_TRUE(w) << w.error().message();
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_GE(reqs[1].at - reqs[0].at, milliseconds(990));
}

TEST(WorkQueueClientTest, TransportErrorIsTransport) {
  uint16_t port;
  {
    FakeHttpServer s;
    port = s.port();
  }
  ClientOptions o = FastOptions();
  o.max_retries = 0;
  auto c = WorkQueueClient::Create({.base_url = "http://127.0.0.1:" + std::to_string(port),
                                    .environment_id = "env_1",
                                    .environment_key = "k",
                                    .worker_id = "w",
                                    .options = o});
  ASSERT_TRUE(c);
  auto w = c->Poll();
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().kind(), ApiErrorKind::kTransport) << w.error().message();
}

TEST(WorkQueueClientTest, AckIsAnEmptyPostAnd409IsFinal) {
  FakeHttpServer s;
  s.EnqueueJson(200, std::string(kWork));
  s.EnqueueJson(409, R"({"type":"error","error":{"type":"conflict_error","message":"stopped"}})");
  auto q = MakeQueue(s);
  ASSERT_TRUE(q.Ack("work_1"));
  auto r = q.Ack("work_1");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ApiErrorKind::kConflict);
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path, "/v1/environments/env_1/work/work_1/ack");
  EXPECT_EQ(reqs[0].query, "beta=true");
  EXPECT_EQ(reqs[0].body, "");
  EXPECT_EQ(reqs[0].headers.Get("content-length").value_or(""), "0");
  ExpectCommonHeaders(reqs[0], "sk-ant-oat01-key");
  EXPECT_FALSE(q.Ack("work 1"));  // unsafe id: refused before any request
  EXPECT_EQ(s.request_count(), 2u);
}

TEST(WorkQueueClientTest, HeartbeatQueryAndResponse) {
  FakeHttpServer s;
  s.EnqueueJson(200, R"({"type":"work_heartbeat","last_heartbeat":"2026-01-01T00:00:00.5+00:00",)"
                     R"("lease_extended":true,"state":"active","ttl_seconds":30})");
  s.EnqueueJson(200, R"({"last_heartbeat":"b","lease_extended":false,"state":"stopping"})");
  auto q = MakeQueue(s);
  auto h = q.Heartbeat("work_1", kNoHeartbeat);
  ASSERT_TRUE(h) << h.error().message();
  EXPECT_EQ(h->last_heartbeat, "2026-01-01T00:00:00.5+00:00");
  EXPECT_TRUE(h->lease_extended);
  EXPECT_EQ(h->ttl_seconds, 30);
  auto h2 = q.Heartbeat("work_1", h->last_heartbeat, 60);
  ASSERT_TRUE(h2);
  EXPECT_FALSE(h2->lease_extended);
  auto reqs = s.requests();
  EXPECT_EQ(reqs[0].path, "/v1/environments/env_1/work/work_1/heartbeat");
  EXPECT_EQ(reqs[0].query, "beta=true&expected_last_heartbeat=NO_HEARTBEAT");
  EXPECT_EQ(reqs[1].query,
            "beta=true&expected_last_heartbeat=2026-01-01T00%3A00%3A00.5%2B00%3A00&"
            "desired_ttl_seconds=60");
}

TEST(WorkQueueClientTest, Heartbeat412IsLeaseLostAndNotRetried) {
  FakeHttpServer s;
  s.EnqueueJson(412, R"({"type":"error","error":{"type":"invalid_request_error","message":"x"}})");
  auto h = MakeQueue(s).Heartbeat("work_1", "old");
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().kind(), ApiErrorKind::kLeaseLost);
  EXPECT_EQ(h.error().status(), 412);
  EXPECT_EQ(s.request_count(), 1u);
}

TEST(WorkQueueClientTest, StopBodiesAnd409IsSuccess) {
  FakeHttpServer s;
  s.EnqueueJson(204, "");
  s.EnqueueJson(409, "");
  s.EnqueueJson(200, "{}");
  auto q = MakeQueue(s);
  EXPECT_TRUE(q.Stop("work_1", /*force=*/true));
  EXPECT_TRUE(q.Stop("work_1", /*force=*/true));
  EXPECT_TRUE(q.Stop("work_1", /*force=*/false));
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 3u);  // the 409 was not retried
  EXPECT_EQ(reqs[0].path, "/v1/environments/env_1/work/work_1/stop");
  EXPECT_EQ(reqs[0].body, R"({"force":true})");
  EXPECT_EQ(reqs[0].headers.Get("content-type").value_or(""), "application/json");
  EXPECT_EQ(reqs[2].body, "{}");
}

TEST(WorkQueueClientTest, CancelEndsARetrySleepPromptly) {
  FakeHttpServer s;
  s.EnqueueJson(503, "", {{"Retry-After", "30"}});
  ClientOptions o = FastOptions();
  o.cancel = std::make_shared<CancelToken>();
  auto q = MakeQueue(s, o);
  std::thread t([&] {
    std::this_thread::sleep_for(milliseconds(200));
    o.cancel->Cancel();
  });
  auto start = Clock::now();
  auto w = q.Poll();
  t.join();
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().kind(), ApiErrorKind::kCancelled);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

// ---- sessions -----------------------------------------------------------------------------

TEST(SessionClientTest, GetSessionParsesSkills) {
  FakeHttpServer s;
  s.EnqueueJson(200, R"({"id":"sesn_1","agent":{"skills":[{"type":"custom","skill_id":"skill_a",)"
                     R"("version":"latest"},{"type":"anthropic","skill_id":"pdf","version":"3"}]},)"
                     R"("metadata":{"repo":"x"}})");
  auto sess = MakeSession(s).GetSession("sesn_1");
  ASSERT_TRUE(sess) << sess.error().message();
  ASSERT_EQ(sess->skills.size(), 2u);
  EXPECT_EQ(sess->skills[0].skill_id, "skill_a");
  EXPECT_EQ(sess->skills[1].version, "3");
  EXPECT_EQ(sess->metadata_json, R"({"repo":"x"})");
  auto reqs = s.requests();
  EXPECT_EQ(reqs[0].path, "/v1/sessions/sesn_1");
  ExpectCommonHeaders(reqs[0], "sk-ant-req-token");
}

TEST(SessionClientTest, ListEventsFollowsPages) {
  FakeHttpServer s;
  s.EnqueueJson(200, R"({"data":[{"type":"agent.tool_use","id":"e1","name":"bash",)"
                     R"("input":{"command":"ls"}}],"next_page":"tok/2+"})");
  s.EnqueueJson(200, R"({"data":[{"type":"user.tool_result","id":"e2","tool_use_id":"e1"}],)"
                     R"("next_page":null})");
  auto evs = MakeSession(s).ListEvents("sesn_1");
  ASSERT_TRUE(evs) << evs.error().message();
  ASSERT_EQ(evs->size(), 2u);
  EXPECT_EQ((*evs)[0].kind, EventKind::kAgentToolUse);
  EXPECT_EQ((*evs)[0].input_json, R"({"command":"ls"})");
  EXPECT_EQ((*evs)[1].tool_use_id, "e1");
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].path, "/v1/sessions/sesn_1/events");
  EXPECT_EQ(reqs[0].query, "beta=true&limit=1000&order=asc");
  EXPECT_EQ(reqs[1].query, "beta=true&limit=1000&order=asc&page=tok%2F2%2B");
}

TEST(SessionClientTest, ListEventsRejectsARepeatedPageToken) {
  FakeHttpServer s;
  s.EnqueueJson(200, R"({"data":[],"next_page":"a"})");
  s.EnqueueJson(200, R"({"data":[],"next_page":"a"})");
  auto evs = MakeSession(s).ListEvents("sesn_1");
  ASSERT_FALSE(evs);
  EXPECT_EQ(evs.error().kind(), ApiErrorKind::kProtocol);
}

TEST(SessionClientTest, StreamEventsParsesFragmentedSse) {
  FakeHttpServer s;
  ScriptedResponse r;
  r.headers = {{"Content-Type", "text/event-stream"}};
  r.chunks = {"\xEF\xBB",
              "\xBF: hello\r\n\r\nevent: ping\r\ndata: {}\r\n\r\nev",
              "ent: agent.tool_use\ndata: {\"type\":\"agent.tool_use\",\"id\":\"e1\",",
              "\"name\":\"bash\",\"input\":{}}\n\nevent: session.status_idle\rdata: {\"type\":",
              "\"session.status_idle\",\"stop_reason\":{\"type\":\"end_turn\"}}\r",
              "\r"};
  r.chunk_delay = milliseconds(20);
  s.Enqueue(r);
  std::vector<SessionEvent> got;
  bool opened = false;
  auto end = MakeSession(s).StreamEvents("sesn_1", {.on_open = [&] { opened = got.empty(); },
                                                    .on_event =
                                                        [&](SessionEvent&& e) {
                                                          got.push_back(std::move(e));
                                                          return true;
                                                        }});
  ASSERT_TRUE(end) << end.error().message();
  EXPECT_EQ(*end, StreamEnd::kEnded);
  EXPECT_TRUE(opened);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, "e1");
  EXPECT_EQ(got[1].stop_reason, "end_turn");
  auto reqs = s.requests();
  EXPECT_EQ(reqs[0].path, "/v1/sessions/sesn_1/events/stream");
  EXPECT_EQ(reqs[0].headers.Get("accept").value_or(""), "text/event-stream");
  ExpectCommonHeaders(reqs[0], "sk-ant-req-token");
}

TEST(SessionClientTest, StreamStopsWhenTheCallbackSaysSo) {
  FakeHttpServer s;
  ScriptedResponse r;
  r.chunks = {"data: {\"type\":\"session.deleted\"}\n\ndata: {\"type\":\"x\"}\n\n"};
  r.hold_open = true;
  s.Enqueue(r);
  int n = 0;
  auto end = MakeSession(s).StreamEvents("sesn_1", {.on_event = [&](SessionEvent&& e) {
                                           ++n;
                                           return e.kind != EventKind::kSessionDeleted;
                                         }});
  ASSERT_TRUE(end) << end.error().message();
  EXPECT_EQ(*end, StreamEnd::kStopped);
  EXPECT_EQ(n, 1);
}

TEST(SessionClientTest, StreamCancelIsPrompt) {
  FakeHttpServer s;
  ScriptedResponse r;
  r.chunks = {"data: {\"type\":\"session.status_running\"}\n\n"};
  r.hold_open = true;  // then silence
  s.Enqueue(r);
  CancelToken cancel;
  Clock::time_point cancelled_at;
  std::thread t;
  auto end = MakeSession(s).StreamEvents("sesn_1",
                                         {.on_event =
                                              [&](SessionEvent&&) {
                                                t = std::thread([&] {
                                                  std::this_thread::sleep_for(milliseconds(100));
                                                  cancelled_at = Clock::now();
                                                  cancel.Cancel();
                                                });
                                                return true;
                                              }},
                                         &cancel);
  const auto returned_at = Clock::now();
  t.join();
  ASSERT_TRUE(end) << end.error().message();
  EXPECT_EQ(*end, StreamEnd::kCancelled);
  EXPECT_LT(returned_at - cancelled_at, milliseconds(100));
}

TEST(SessionClientTest, StreamHttpErrorAndSseErrorEvent) {
  FakeHttpServer s;
  s.EnqueueJson(404,
                R"({"type":"error","error":{"type":"not_found_error","message":"no session"}})");
  ScriptedResponse r;
  r.chunks = {
      "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
      "\"message\":\"busy\"}}\n\n"};
  s.Enqueue(r);
  auto c = MakeSession(s);
  auto e1 = c.StreamEvents("sesn_1", {.on_event = [](SessionEvent&&) { return true; }});
  ASSERT_FALSE(e1);
  EXPECT_EQ(e1.error().kind(), ApiErrorKind::kFatal);
  EXPECT_NE(e1.error().message().find("no session"), std::string::npos);
  auto e2 = c.StreamEvents("sesn_1", {.on_event = [](SessionEvent&&) { return true; }});
  ASSERT_FALSE(e2);
  EXPECT_EQ(e2.error().kind(), ApiErrorKind::kRetryable);
  EXPECT_NE(e2.error().message().find("overloaded_error: busy"), std::string::npos);
}

TEST(SessionClientTest, SendToolResultsRetriesTwiceWithGrowingSleeps) {
  FakeHttpServer s;
  s.EnqueueJson(500, "");
  s.EnqueueJson(502, "");
  s.EnqueueJson(200, "{}");
  auto c = MakeSession(s);
  PostedToolResult tr{.kind = ResultKind::kToolResult,
                      .tool_use_id = "e1",
                      .is_error = false,
                      .content_json = TextContent("ok")};
  auto r = c.SendToolResults("sesn_1", {tr}, {.first_sleep = milliseconds(100)});
  ASSERT_TRUE(r) << r.error().message();
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_GE(reqs[1].at - reqs[0].at, milliseconds(100));
  EXPECT_GE(reqs[2].at - reqs[1].at, milliseconds(200));
  EXPECT_EQ(reqs[0].path, "/v1/sessions/sesn_1/events");
  EXPECT_EQ(reqs[0].body, R"({"events":[{"content":[{"text":"ok","type":"text"}],"is_error":false,)"
                          R"("tool_use_id":"e1","type":"user.tool_result"}]})");
}

TEST(SessionClientTest, SendToolResultsStopsAtAFatal4xx) {
  FakeHttpServer s;
  s.EnqueueJson(400,
                R"({"type":"error","error":{"type":"invalid_request_error","message":"bad"}})");
  PostedToolResult tr{
      .kind = ResultKind::kCustomToolResult, .tool_use_id = "e1", .content_json = TextContent("x")};
  auto r = MakeSession(s).SendToolResults("sesn_1", {tr}, {.first_sleep = milliseconds(10)});
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().fatal());
  EXPECT_EQ(s.request_count(), 1u);
}

TEST(SessionClientTest, SkillsEndpoints) {
  FakeHttpServer s;
  s.EnqueueJson(200,
                R"({"data":[{"skill_id":"skill_a","version":"1","name":"a"}],"next_page":"p2"})");
  s.EnqueueJson(200, R"({"data":[{"skill_id":"skill_a","version":"2","name":"a"}]})");
  s.EnqueueJson(200, R"({"skill_id":"skill_a","version":"2","name":"my-skill","directory":"d"})");
  ScriptedResponse zip;
  zip.body = std::string("PK\x03\x04\0\xff", 6);
  s.Enqueue(zip);
  ScriptedResponse big;
  big.body = std::string(2048, 'x');
  s.Enqueue(big);
  ClientOptions o = FastOptions();
  o.max_skill_bytes = 1024;
  auto c = MakeSession(s, o);
  auto versions = c.ListSkillVersions("skill_a");
  ASSERT_TRUE(versions) << versions.error().message();
  ASSERT_EQ(versions->size(), 2u);
  auto v = c.GetSkillVersion("skill_a", "2");
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_EQ(v->name, "my-skill");
  auto bytes = c.DownloadSkillContent("skill_a", "2");
  ASSERT_TRUE(bytes) << bytes.error().message();
  EXPECT_EQ(*bytes, std::string("PK\x03\x04\0\xff", 6));
  auto too_big = c.DownloadSkillContent("skill_a", "2");
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().kind(), ApiErrorKind::kProtocol);
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 5u);
  EXPECT_EQ(reqs[0].path, "/v1/skills/skill_a/versions");
  EXPECT_EQ(reqs[1].query, "beta=true&page=p2");
  EXPECT_EQ(reqs[2].path, "/v1/skills/skill_a/versions/2");
  EXPECT_EQ(reqs[3].path, "/v1/skills/skill_a/versions/2/content");
  EXPECT_EQ(reqs[3].headers.Get("accept").value_or(""), "application/binary");
  for (const auto& r : reqs) ExpectCommonHeaders(r, "sk-ant-req-token", kSkillsBeta);
}

TEST(HttpClientTest, ResponseHeadersAreCaseInsensitive) {
  FakeHttpServer s;
  s.EnqueueJson(200, "{}", {{"X-Custom-Thing", "v1"}});
  HttpClient http;
  auto r = http.Send({.url = s.base_url() + "/x"});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->headers.Get("x-custom-thing").value_or(""), "v1");
  EXPECT_EQ(r->headers.Get("CONTENT-TYPE").value_or(""), "application/json");
}

TEST(HttpClientTest, BodyLimitAndHeaderInjection) {
  FakeHttpServer s;
  s.EnqueueJson(200, std::string(5000, 'a'));
  HttpClient http;
  auto r = http.Send({.url = s.base_url() + "/x", .max_body = 100});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().sys_errno(), EFBIG);
  Request bad{.url = s.base_url() + "/x"};
  bad.headers.Add("Authorization", "Bearer a\r\nX-Evil: 1");
  auto r2 = http.Send(bad);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(r2.error().message().find("Bearer"), std::string::npos);
}

// Many threads through one client: each call borrows a handle of the client's pool and gives it
// back (this test is in the TSan suite); every thread holds a copy, and copies share the pool.
TEST(HttpClientTest, ConcurrentCallsShareOnePool) {
  constexpr int kThreads = 6, kCalls = 8;
  FakeHttpServer s;
  for (int i = 0; i < kThreads * kCalls; ++i) s.EnqueueJson(200, "{}");
  HttpClient http;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, copy = http] {
      for (int i = 0; i < kCalls; ++i) {
        auto r = copy.Send({.url = s.base_url() + "/x"});
        if (r && r->status == 200) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kCalls);
  EXPECT_EQ(s.request_count(), static_cast<size_t>(kThreads * kCalls));
}

}  // namespace
}  // namespace srt::poller
