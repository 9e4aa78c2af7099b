// SPDX-License-Identifier: Apache-2.0
// support/fake_control_plane_test.cc: the fake control plane behaves as the work-queue protocol
// says (shared/reference/work-queue-protocol.md §2), checked through the C++ wrapper and through
// curl, so srt-poller's tests can trust it.
#include "poller/support/fake_control_plane.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace srt::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kBeta = "managed-agents-2026-04-01";

struct RunResult {
  int exit_code = -1;  // 128+N for a signal, -1 if it could not start
  std::string out;
  std::string err;
};

std::string ReadMemfd(int fd) {
  std::string out;
  char buf[4096];
  off_t off = 0;
  ssize_t n;
  while ((n = ::pread(fd, buf, sizeof(buf), off)) > 0) {
    out.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return out;
}

// Runs argv (searched on PATH) with stdin from /dev/null; kills it after `timeout`.
RunResult RunProgram(const std::vector<std::string>& argv,
                     milliseconds timeout = milliseconds(20000)) {
  RunResult r;
  UniqueFd out(::memfd_create("run-out", MFD_CLOEXEC));
  UniqueFd err(::memfd_create("run-err", MFD_CLOEXEC));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out.get(), 1);
  posix_spawn_file_actions_adddup2(&fa, err.get(), 2);
  std::vector<char*> cargv;
  for (const std::string& a : argv) {
    cargv.push_back(const_cast<char*>(a.c_str()));
  }
  cargv.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    r.err = std::string("posix_spawnp: ") + std::strerror(rc);
    return r;
  }
  auto deadline = Clock::now() + timeout;
  int status = 0;
  while (true) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      break;
    }
    if (Clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadMemfd(out.get());
  r.err = ReadMemfd(err.get());
  return r;
}

bool HaveCurl() { return RunProgram({"curl", "--version"}).exit_code == 0; }

std::vector<std::string> CurlArgs(const FakeControlPlane& cp, const std::string& bearer) {
  return {"curl", "-sS",
          "-H",   "anthropic-version: 2023-06-01",
          "-H",   std::string("anthropic-beta: ") + kBeta,
          "-H",   "Authorization: Bearer " + (bearer.empty() ? cp.environment_key() : bearer)};
}

std::string Base64UrlDecode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-' || c == '+') return 62;
    if (c == '_' || c == '/') return 63;
    return -1;
  };
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  for (char c : in) {
    int v = val(c);
    if (v < 0) {
      break;
    }
    buf = (buf << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return out;
}

json Body(const Result<HttpResponse>& r) {
  return json::parse(r->body, nullptr, /*allow_exceptions=*/false);
}

class FakeControlPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeControlPlane::Options options;
    options.ping_interval_seconds = 0.3;
    auto fake = FakeControlPlane::Start(options);
    ASSERT_TRUE(fake.has_value()) << fake.error().message();
    fake_ = std::move(*fake);
  }

  std::string WorkPath(const std::string& rest) const {
    return "/v1/environments/" + fake_->environment_id() + "/work" + rest;
  }
  Result<HttpResponse> EnvCall(std::string_view method, const std::string& target,
                               std::string body = {}) const {
    return fake_->Api(method, target, fake_->environment_key(), std::move(body));
  }

  std::unique_ptr<FakeControlPlane> fake_;
};

// ---- the work queue ----

TEST_F(FakeControlPlaneTest, EmptyPollIs204AndBlocksForBlockMsCappedAt999) {
  auto t0 = Clock::now();
  auto r = EnvCall("GET", WorkPath("/poll?beta=true&block_ms=300"));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->status, 204);
  EXPECT_EQ(r->body, "");
  EXPECT_GE(Clock::now() - t0, milliseconds(280));

  t0 = Clock::now();
  r = EnvCall("GET", WorkPath("/poll?block_ms=60000"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 204);
  EXPECT_LT(Clock::now() - t0, milliseconds(1500));

  r = EnvCall("GET", WorkPath("/poll?block_ms=0"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 400);

  ASSERT_TRUE(fake_->Configure({{"empty_poll", "null"}}).has_value());
  r = EnvCall("GET", WorkPath("/poll"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "null");
}

TEST_F(FakeControlPlaneTest, BlockingPollWakesUpWhenWorkIsEnqueued) {
  auto poll = std::async(std::launch::async,
                         [this] { return EnvCall("GET", WorkPath("/poll?block_ms=999")); });
  std::this_thread::sleep_for(milliseconds(150));
  auto work = fake_->Enqueue({.session_id = "sesn_wake"});
  ASSERT_TRUE(work.has_value()) << work.error().message();
  auto r = poll.get();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["id"], work->work_id);
}

TEST_F(FakeControlPlaneTest, PollAckHeartbeatStopFollowTheProtocol) {
  auto work = fake_->Enqueue({.session_id = "sesn_flow", .metadata = {{"k", "v"}}});
  ASSERT_TRUE(work.has_value()) << work.error().message();

  auto r = fake_->Api("GET", WorkPath("/poll?block_ms=999&beta=true"), fake_->environment_key(), {},
                      {{"Anthropic-Worker-ID", "host-0123456789abcdef"}});
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  json w = Body(r);
  EXPECT_EQ(w["type"], "work");
  EXPECT_EQ(w["id"], work->work_id);
  EXPECT_EQ(w["environment_id"], fake_->environment_id());
  EXPECT_EQ(w["data"], (json{{"type", "session"}, {"id", "sesn_flow"}}));
  EXPECT_EQ(w["state"], "queued");
  EXPECT_EQ(w["metadata"], (json{{"k", "v"}}));
  ASSERT_TRUE(w["secret"].is_string());
  json secret = json::parse(Base64UrlDecode(w["secret"].get<std::string>()));
  EXPECT_EQ(secret["sessions_token"], work->sessions_token);
  EXPECT_EQ(w["secret"].get<std::string>().find_first_of("+/="), std::string::npos);

  // Delivered but not acked: pending in the stats, not given to the next poll.
  r = EnvCall("GET", WorkPath("/stats"));
  ASSERT_TRUE(r.has_value());
  json stats = Body(r);
  EXPECT_EQ(stats["type"], "work_queue_stats");
  EXPECT_EQ(stats["depth"], 0);
  EXPECT_EQ(stats["pending"], 1);
  EXPECT_EQ(stats["workers_polling"], 1);
  r = EnvCall("GET", WorkPath("/poll?block_ms=50"));
  EXPECT_EQ(r->status, 204);

  r = EnvCall("POST", WorkPath("/" + work->work_id + "/ack"));
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["state"], "starting");
  EXPECT_TRUE(Body(r)["secret"].is_null());

  const std::string hb = WorkPath("/" + work->work_id + "/heartbeat");
  r = EnvCall("POST", hb);
  EXPECT_EQ(r->status, 400) << "expected_last_heartbeat is required";
  r = EnvCall("POST", hb + "?expected_last_heartbeat=NO_HEARTBEAT");
  ASSERT_EQ(r->status, 200) << r->body;
  json beat = Body(r);
  EXPECT_EQ(beat["type"], "work_heartbeat");
  EXPECT_EQ(beat["state"], "active");
  EXPECT_EQ(beat["lease_extended"], true);
  EXPECT_EQ(beat["ttl_seconds"], 30);
  const std::string last = beat["last_heartbeat"];

  r = EnvCall("POST", hb + "?expected_last_heartbeat=NO_HEARTBEAT");
  EXPECT_EQ(r->status, 412);
  EXPECT_EQ(Body(r)["type"], "error");

  r = EnvCall("POST", hb + "?expected_last_heartbeat=" + last + "&desired_ttl_seconds=7");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_NE(Body(r)["last_heartbeat"], last);
  EXPECT_EQ(Body(r)["ttl_seconds"], 7);

  r = EnvCall("GET", WorkPath("/" + work->work_id));
  EXPECT_EQ(Body(r)["state"], "active");
  EXPECT_TRUE(Body(r)["secret"].is_null());

  r = EnvCall("POST", WorkPath("/" + work->work_id + "/stop"), R"({"force":true})");
  EXPECT_EQ(r->status, 204);
  EXPECT_EQ(r->body, "");
  r = EnvCall("POST", WorkPath("/" + work->work_id + "/stop"), "{}");
  EXPECT_EQ(r->status, 409);

  auto state = fake_->WorkState(work->work_id);
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ((*state)["state"], "stopped");
  EXPECT_EQ((*state)["heartbeats"].size(), 3u);  // the 400 one is not a heartbeat
  EXPECT_EQ((*state)["stops"].size(), 2u);
  EXPECT_EQ((*state)["acks"], 1);
}

TEST_F(FakeControlPlaneTest, GracefulOperatorStopIsReportedByTheNextHeartbeat) {
  auto work = fake_->Enqueue({.session_id = "sesn_stop"});
  ASSERT_TRUE(work.has_value());
  ASSERT_EQ(EnvCall("GET", WorkPath("/poll?block_ms=999"))->status, 200);
  ASSERT_EQ(EnvCall("POST", WorkPath("/" + work->work_id + "/ack"))->status, 200);
  const std::string hb = WorkPath("/" + work->work_id + "/heartbeat");
  auto r = EnvCall("POST", hb + "?expected_last_heartbeat=NO_HEARTBEAT");
  ASSERT_EQ(r->status, 200);

  auto stopped = fake_->StopWork(work->work_id, /*force=*/false);
  ASSERT_TRUE(stopped.has_value()) << stopped.error().message();
  EXPECT_EQ((*stopped)["state"], "stopping");
  r = EnvCall("POST",
              hb + "?expected_last_heartbeat=" + Body(r)["last_heartbeat"].get<std::string>());
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["state"], "stopping");

  // The worker confirms with its own stop; a second one is 409.
  EXPECT_EQ(EnvCall("POST", WorkPath("/" + work->work_id + "/stop"), "{}")->status, 204);
  EXPECT_EQ(fake_->WorkState(work->work_id)->at("state"), "stopped");
  EXPECT_EQ(EnvCall("POST", WorkPath("/" + work->work_id + "/stop"))->status, 409);
  EXPECT_FALSE(fake_->StopWork(work->work_id, /*force=*/true).has_value());
}

TEST_F(FakeControlPlaneTest, StolenLeaseGives412AndUnackedWorkIsReclaimed) {
  auto work = fake_->Enqueue({.session_id = "sesn_steal"});
  ASSERT_TRUE(work.has_value());
  ASSERT_EQ(EnvCall("GET", WorkPath("/poll?block_ms=999"))->status, 200);
  // Not acked: a poll asking to reclaim items older than 1 ms gets it again.
  std::this_thread::sleep_for(milliseconds(5));
  auto r = EnvCall("GET", WorkPath("/poll?block_ms=100&reclaim_older_than_ms=1"));
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["id"], work->work_id);
  ASSERT_EQ(EnvCall("POST", WorkPath("/" + work->work_id + "/ack"))->status, 200);
  const std::string hb = WorkPath("/" + work->work_id + "/heartbeat");
  r = EnvCall("POST", hb + "?expected_last_heartbeat=NO_HEARTBEAT");
  ASSERT_EQ(r->status, 200);
  ASSERT_TRUE(fake_->StealLease(work->work_id).has_value());
  r = EnvCall("POST",
              hb + "?expected_last_heartbeat=" + Body(r)["last_heartbeat"].get<std::string>());
  EXPECT_EQ(r->status, 412);
  EXPECT_EQ(fake_->WorkState(work->work_id)->at("deliveries").size(), 2u);
}

TEST_F(FakeControlPlaneTest, HealthcheckAndSecretlessItems) {
  auto hc = fake_->Enqueue({.data_type = "healthcheck"});
  ASSERT_TRUE(hc.has_value());
  auto r = EnvCall("GET", WorkPath("/poll?block_ms=999"));
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["data"]["type"], "healthcheck");
  EXPECT_TRUE(Body(r)["secret"].is_null());

  auto bare = fake_->Enqueue({.session_id = "sesn_bare", .with_secret = false});
  ASSERT_TRUE(bare.has_value());
  r = EnvCall("GET", WorkPath("/poll?block_ms=999"));
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["data"]["id"], "sesn_bare");
  EXPECT_TRUE(Body(r)["secret"].is_null());
}

// ---- auth and headers ----

TEST_F(FakeControlPlaneTest, AuthAndHeaderRules) {
  auto a = fake_->Enqueue({.session_id = "sesn_a"});
  auto b = fake_->Enqueue({.session_id = "sesn_b"});
  ASSERT_TRUE(a.has_value() && b.has_value());

  auto r = fake_->Api("GET", WorkPath("/stats"), "");
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(Body(r)["type"], "error");
  EXPECT_EQ(Body(r)["error"]["type"], "authentication_error");
  EXPECT_EQ(fake_->Api("GET", WorkPath("/stats"), "sk-ant-wrong")->status, 401);
  // Bearer plus x-api-key: dual auth.
  r = fake_->Api("GET", WorkPath("/stats"), fake_->environment_key(), {},
                 {{"x-api-key", "sk-ant-api03-org"}});
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(Body(r)["error"]["message"].get<std::string>().find("dual auth"), std::string::npos);
  // Missing anthropic-version / anthropic-beta.
  HttpRequest raw;
  raw.port = fake_->port();
  raw.target = WorkPath("/stats");
  raw.headers = {{"Authorization", "Bearer " + fake_->environment_key()},
                 {"anthropic-beta", kBeta}};
  EXPECT_EQ(HttpCall(raw)->status, 400);
  raw.headers = {{"Authorization", "Bearer " + fake_->environment_key()},
                 {"anthropic-version", "2023-06-01"}};
  EXPECT_EQ(HttpCall(raw)->status, 400);
  // A wrong environment id.
  EXPECT_EQ(EnvCall("GET", "/v1/environments/env_other/work/stats")->status, 404);

  // The sessions token: its own session and work item, nothing else, never the queue.
  EXPECT_EQ(fake_->Api("GET", "/v1/sessions/sesn_a", a->sessions_token)->status, 200);
  EXPECT_EQ(fake_->Api("GET", "/v1/sessions/sesn_b", a->sessions_token)->status, 401);
  EXPECT_EQ(fake_->Api("GET", WorkPath("/poll"), a->sessions_token)->status, 401);
  EXPECT_EQ(fake_->Api("POST", WorkPath("/" + a->work_id + "/ack"), a->sessions_token)->status,
            200);
  EXPECT_EQ(fake_->Api("POST", WorkPath("/" + b->work_id + "/ack"), a->sessions_token)->status,
            401);
  // The environment key reads sessions too.
  EXPECT_EQ(EnvCall("GET", "/v1/sessions/sesn_b")->status, 200);
  EXPECT_EQ(EnvCall("GET", "/v1/sessions/sesn_nope")->status, 404);

  auto reqs = fake_->Requests({.endpoint = "session_get"});
  ASSERT_TRUE(reqs.has_value());
  ASSERT_EQ(reqs->size(), 4u);
  EXPECT_EQ((*reqs)[0]["auth"], "sessions_token");
  EXPECT_EQ((*reqs)[0]["status"], 200);
  EXPECT_EQ((*reqs)[1]["status"], 401);
  EXPECT_EQ((*reqs)[2]["auth"], "env_key");
  EXPECT_EQ((*reqs)[2]["headers"]["anthropic-beta"], kBeta);
  EXPECT_EQ((*reqs)[2]["headers"]["authorization"], "Bearer " + fake_->environment_key());
}

// ---- sessions and events ----

TEST_F(FakeControlPlaneTest, HistoryIsPagedAndPostedResultsJoinIt) {
  ASSERT_TRUE(
      fake_
          ->PutSession("sesn_h", {{"metadata", {{"repo", "x"}}},
                                  {"skills", {{{"skill_id", "skill_1"}, {"version", "latest"}}}}})
          .has_value());
  auto stored = fake_->AppendEvents(
      "sesn_h",
      json::array({
          {{"type", "agent.tool_use"},
           {"name", "bash"},
           {"input", {{"command", "ls"}}},
           {"evaluated_permission", "allow"}},
          {{"type", "agent.custom_tool_use"}, {"name", "lookup"}, {"input", json::object()}},
          {{"type", "agent.tool_use"},
           {"name", "read"},
           {"input", {{"file_path", "/x"}}},
           {"evaluated_permission", "ask"}},
          {{"type", "session.status_idle"},
           {"stop_reason", {{"type", "requires_action"}, {"event_ids", json::array()}}}},
      }));
  ASSERT_TRUE(stored.has_value()) << stored.error().message();
  ASSERT_EQ(stored->size(), 4u);
  const std::string tool_use = (*stored)[0]["id"];
  const std::string custom_use = (*stored)[1]["id"];
  EXPECT_TRUE((*stored)[0]["processed_at"].is_string());

  auto r = EnvCall("GET", "/v1/sessions/sesn_h");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["metadata"]["repo"], "x");
  EXPECT_EQ(Body(r)["agent"]["skills"][0]["skill_id"], "skill_1");

  // Post results the way srt-poller does.
  json post = {{"events",
                {{{"type", "user.tool_result"},
                  {"tool_use_id", tool_use},
                  {"is_error", false},
                  {"content", {{{"type", "text"}, {"text", "a\nb"}}}}},
                 {{"type", "user.custom_tool_result"},
                  {"custom_tool_use_id", custom_use},
                  {"is_error", true},
                  {"content", {{{"type", "text"}, {"text", "no"}}}}},
                 {{"type", "user.tool_confirmation"},
                  {"tool_use_id", (*stored)[2]["id"]},
                  {"result", "deny"}}}}};
  r = EnvCall("POST", "/v1/sessions/sesn_h/events?beta=true", post.dump());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["data"].size(), 3u);
  // Unknown tool use, wrong kinds, malformed: 400.
  EXPECT_EQ(
      EnvCall("POST", "/v1/sessions/sesn_h/events",
              R"({"events":[{"type":"user.tool_result","tool_use_id":"sevt_nope","content":[]}]})")
          ->status,
      400);
  EXPECT_EQ(EnvCall("POST", "/v1/sessions/sesn_h/events",
                    R"({"events":[{"type":"agent.message","content":[]}]})")
                ->status,
            400);
  EXPECT_EQ(EnvCall("POST", "/v1/sessions/sesn_h/events", R"({"events":[]})")->status, 400);
  // A second result for the same call is accepted and flagged.
  r = EnvCall(
      "POST", "/v1/sessions/sesn_h/events",
      json{
          {"events",
           {{{"type", "user.tool_result"}, {"tool_use_id", tool_use}, {"content", json::array()}}}}}
          .dump());
  ASSERT_EQ(r->status, 200) << r->body;

  auto results = fake_->WaitForResults("sesn_h", 4, seconds(2));
  ASSERT_TRUE(results.has_value()) << results.error().message();
  EXPECT_EQ((*results)[0]["event"]["type"], "user.tool_result");
  EXPECT_EQ((*results)[0]["event"]["content"][0]["text"], "a\nb");
  EXPECT_EQ((*results)[0]["duplicate"], false);
  EXPECT_EQ((*results)[0]["auth"], "env_key");
  EXPECT_EQ((*results)[3]["duplicate"], true);

  // 8 events now; page through them 3 at a time, oldest first.
  std::vector<std::string> ids;
  std::string cursor;
  int pages = 0;
  do {
    std::string target = "/v1/sessions/sesn_h/events?beta=true&limit=3&order=asc";
    if (!cursor.empty()) {
      target += "&page=" + cursor;
    }
    r = EnvCall("GET", target);
    ASSERT_EQ(r->status, 200) << r->body;
    json page = Body(r);
    for (const json& e : page["data"]) {
      ids.push_back(e["id"]);
    }
    cursor = page["next_page"].is_string() ? page["next_page"].get<std::string>() : "";
    ++pages;
  } while (!cursor.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  auto history = fake_->Events("sesn_h");
  ASSERT_EQ(ids.size(), history->size());
  ASSERT_EQ(ids.size(), 8u);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(ids[i], (*history)[i]["id"]);
  }
  r = EnvCall("GET", "/v1/sessions/sesn_h/events?order=desc&limit=1");
  EXPECT_EQ(Body(r)["data"][0]["id"], ids.back());
  r = EnvCall("GET", "/v1/sessions/sesn_h/events?types[]=agent.tool_use");
  EXPECT_EQ(Body(r)["data"].size(), 2u);
}

// ---- SSE, through curl ----

TEST_F(FakeControlPlaneTest, StreamDeliversEventsAppendedAfterConnectAndPings) {
  if (!HaveCurl()) {
    GTEST_SKIP() << "curl is not installed";
  }
  ASSERT_TRUE(
      fake_->AppendEvents("sesn_s", {{"type", "agent.message"}, {"id", "sevt_old"}}).has_value());
  // End the stream cleanly after 3 events so curl exits by itself.
  ASSERT_TRUE(fake_->AddFault({.endpoint = "stream", .kind = "stream_drop", .after_events = 3})
                  .has_value());
  std::vector<std::string> argv = CurlArgs(*fake_, "");
  argv.insert(argv.end(), {"-N", "--max-time", "15",
                           fake_->base_url() + "/v1/sessions/sesn_s/events/stream?beta=true"});
  auto curl = std::async(std::launch::async, [argv] { return RunProgram(argv); });
  ASSERT_TRUE(fake_->WaitForStreams("sesn_s", 1, seconds(10)).has_value());
  std::this_thread::sleep_for(milliseconds(400));  // at least one ping
  auto stored = fake_->AppendEvents(
      "sesn_s",
      json::array({{{"type", "agent.tool_use"},
                    {"name", "bash"},
                    {"input", {{"command", "echo hi"}}},
                    {"evaluated_permission", "allow"}},
                   {{"type", "session.status_idle"}, {"stop_reason", {{"type", "end_turn"}}}}}));
  ASSERT_TRUE(stored.has_value());
  // A posted result shows up on the stream too.
  json post = {{"events",
                {{{"type", "user.tool_result"},
                  {"tool_use_id", (*stored)[0]["id"]},
                  {"content", {{{"type", "text"}, {"text", "hi"}}}}}}}};
  ASSERT_EQ(EnvCall("POST", "/v1/sessions/sesn_s/events", post.dump())->status, 200);

  RunResult res = curl.get();
  ASSERT_EQ(res.exit_code, 0) << res.err << res.out;
  EXPECT_EQ(res.out.find("sevt_old"), std::string::npos) << "nothing is replayed";
  EXPECT_NE(res.out.find("event: ping\ndata: {\"type\":\"ping\"}\n\n"), std::string::npos);
  const std::string first =
      "event: agent.tool_use\nid: " + (*stored)[0]["id"].get<std::string>() + "\ndata: {";
  size_t a = res.out.find(first);
  size_t b = res.out.find("event: session.status_idle\n");
  size_t c = res.out.find("event: user.tool_result\n");
  ASSERT_NE(a, std::string::npos) << res.out;
  ASSERT_NE(b, std::string::npos) << res.out;
  ASSERT_NE(c, std::string::npos) << res.out;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  // The data line is the event JSON.
  size_t data = res.out.find("data: ", a) + 6;
  json ev = json::parse(res.out.substr(data, res.out.find('\n', data) - data));
  EXPECT_EQ(ev["input"]["command"], "echo hi");
  EXPECT_TRUE(fake_->WaitForStreams("sesn_s", 0, seconds(5)).has_value());
}

TEST_F(FakeControlPlaneTest, StreamsCanBeDroppedNowAbruptlyOrGetAnErrorEvent) {
  if (!HaveCurl()) {
    GTEST_SKIP() << "curl is not installed";
  }
  ASSERT_TRUE(fake_->PutSession("sesn_d", json::object()).has_value());
  std::vector<std::string> argv = CurlArgs(*fake_, "");
  argv.insert(argv.end(),
              {"-N", "--max-time", "15", fake_->base_url() + "/v1/sessions/sesn_d/events/stream"});
  auto curl = std::async(std::launch::async, [argv] { return RunProgram(argv); });
  ASSERT_TRUE(fake_->WaitForStreams("sesn_d", 1, seconds(10)).has_value());
  ASSERT_TRUE(fake_->StreamError("sesn_d").has_value());
  std::this_thread::sleep_for(milliseconds(100));
  auto dropped = fake_->DropStreams("sesn_d", /*abrupt=*/true);
  ASSERT_TRUE(dropped.has_value());
  EXPECT_EQ(*dropped, 1);
  RunResult res = curl.get();
  EXPECT_EQ(res.exit_code, 18) << "curl: transfer closed with outstanding read data; " << res.err;
  EXPECT_NE(res.out.find("event: error\ndata: {\"type\": \"error\""), std::string::npos) << res.out;
}

// ---- faults ----

TEST_F(FakeControlPlaneTest, FaultsAnswerTheNextMatchingRequests) {
  ASSERT_TRUE(fake_->AddFault({.endpoint = "poll", .status = 503, .count = 2, .retry_after = "2"})
                  .has_value());
  auto r = EnvCall("GET", WorkPath("/poll"));
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->Header("Retry-After"), "2");
  EXPECT_EQ(Body(r)["error"]["type"], "api_error");
  EXPECT_EQ(EnvCall("GET", WorkPath("/poll"))->status, 503);
  EXPECT_EQ(EnvCall("GET", WorkPath("/poll"))->status, 204);

  // A 401 on poll even with the right key; a custom body; a dropped connection.
  ASSERT_TRUE(fake_->AddFault({.endpoint = "poll", .status = 401}).has_value());
  r = EnvCall("GET", WorkPath("/poll"));
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(Body(r)["error"]["type"], "authentication_error");
  ASSERT_TRUE(fake_->AddFault({.endpoint = "stats", .status = 429, .body = json{{"custom", true}}})
                  .has_value());
  r = EnvCall("GET", WorkPath("/stats"));
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(Body(r)["custom"], true);
  ASSERT_TRUE(fake_->AddFault({.path_regex = "/work/stats$", .kind = "drop"}).has_value());
  EXPECT_FALSE(EnvCall("GET", WorkPath("/stats")).has_value());

  // Ack failure for one item only, after letting one ack through.
  auto w = fake_->Enqueue({.session_id = "sesn_f"});
  ASSERT_TRUE(fake_->AddFault({.endpoint = "ack", .work_id = w->work_id, .status = 500, .skip = 1})
                  .has_value());
  EXPECT_EQ(EnvCall("POST", WorkPath("/" + w->work_id + "/ack"))->status, 200);
  EXPECT_EQ(EnvCall("POST", WorkPath("/" + w->work_id + "/ack"))->status, 500);
  // Heartbeat 412 on demand.
  ASSERT_TRUE(fake_->AddFault({.endpoint = "heartbeat", .status = 412}).has_value());
  EXPECT_EQ(EnvCall("POST",
                    WorkPath("/" + w->work_id + "/heartbeat?expected_last_heartbeat=NO_HEARTBEAT"))
                ->status,
            412);
  // Delay, then the real answer.
  ASSERT_TRUE(fake_->AddFault({.endpoint = "stats", .kind = "delay", .delay_ms = 300}).has_value());
  auto t0 = Clock::now();
  EXPECT_EQ(EnvCall("GET", WorkPath("/stats"))->status, 200);
  EXPECT_GE(Clock::now() - t0, milliseconds(280));

  auto reqs = fake_->Requests({.endpoint = "poll"});
  ASSERT_EQ(reqs->size(), 4u);
  EXPECT_TRUE((*reqs)[0]["fault"].is_string());
  EXPECT_TRUE((*reqs)[2]["fault"].is_null());
  auto failed = fake_->Requests({.endpoint = "stats"});
  EXPECT_EQ((*failed)[1]["status"], 0) << "dropped";

  // Forever, then cleared.
  ASSERT_TRUE(fake_->AddFault({.endpoint = "poll", .status = 500, .count = -1}).has_value());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(EnvCall("GET", WorkPath("/poll"))->status, 500);
  }
  ASSERT_TRUE(fake_->ClearFaults().has_value());
  EXPECT_EQ(EnvCall("GET", WorkPath("/poll"))->status, 204);
}

// ---- skills ----

TEST_F(FakeControlPlaneTest, SkillsServeVersionsAndArchivesWithModesAndEvilMembers) {
  if (!HaveCurl()) {
    GTEST_SKIP() << "curl is not installed";
  }
  FakeControlPlane::Skill skill;
  skill.skill_id = "skill_pdf";
  skill.version = "1759000000000000";
  skill.name = "pdf";
  skill.top_dir = "pdf";
  skill.files = {{"SKILL.md", {"# pdf\n", 0644}},
                 {"scripts/run.sh", {"#!/bin/sh\necho ok\n", 0755}}};
  skill.members = {{.name = "../escape", .content = "x"},
                   {.name = "/etc/evil", .content = "x"},
                   {.name = "pdf/link", .type = "symlink", .target = "/etc/passwd"}};
  auto added = fake_->AddSkill(skill);
  ASSERT_TRUE(added.has_value()) << added.error().message();
  EXPECT_EQ((*added)["content_type"], "application/gzip");
  skill.version = "1760000000000000";
  skill.format = "zip";
  skill.members.clear();
  ASSERT_TRUE(fake_->AddSkill(skill).has_value());

  auto r = EnvCall("GET", "/v1/skills/skill_pdf/versions?beta=true");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["data"].size(), 2u);
  EXPECT_EQ(Body(r)["data"][0]["version"], "1760000000000000");
  r = EnvCall("GET", "/v1/skills/skill_pdf/versions/1759000000000000");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(Body(r)["name"], "pdf");
  EXPECT_EQ(EnvCall("GET", "/v1/skills/skill_pdf/versions/1")->status, 404);

  char dir[] = "/tmp/srt-fake-skill-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string tgz = std::string(dir) + "/a.tar.gz";
  std::vector<std::string> argv = CurlArgs(*fake_, "");
  argv.insert(argv.end(),
              {"-f", "-H", "Accept: application/binary", "-o", tgz,
               fake_->base_url() + "/v1/skills/skill_pdf/versions/1759000000000000/content"});
  RunResult res = RunProgram(argv);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  res = RunProgram({"tar", "-tvzf", tgz});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("-rwxr-xr-x"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("pdf/scripts/run.sh"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("../escape"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("/etc/evil"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("pdf/link -> /etc/passwd"), std::string::npos) << res.out;

  const std::string zip = std::string(dir) + "/a.zip";
  argv.at(argv.size() - 2) = zip;
  argv.back() = fake_->base_url() + "/v1/skills/skill_pdf/versions/1760000000000000/content";
  res = RunProgram(argv);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  res = RunProgram(
      {"python3", "-c",
       "import sys,zipfile;z=zipfile.ZipFile(sys.argv[1]);"
       "print(' '.join('%s:%o' % (i.filename, i.external_attr >> 16) for i in z.infolist()))",
       zip});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("pdf/scripts/run.sh:100755"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("pdf/SKILL.md:100644"), std::string::npos) << res.out;
  RunProgram({"rm", "-rf", dir});

  // The QS claim: the skills API may refuse the sessions token.
  auto w = fake_->Enqueue({.session_id = "sesn_sk"});
  EXPECT_EQ(fake_->Api("GET", "/v1/skills/skill_pdf/versions", w->sessions_token)->status, 200);
  ASSERT_TRUE(fake_->Configure({{"skills_accept_sessions_token", false}}).has_value());
  EXPECT_EQ(fake_->Api("GET", "/v1/skills/skill_pdf/versions", w->sessions_token)->status, 401);
}

// ---- memory stores ----

constexpr const char* kSha256Empty =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kSha256Abc =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

// A work item whose session has `store_id` as a resource; its sessions token, or "" on error.
std::string TokenForStore(const FakeControlPlane& cp, const std::string& session_id,
                          const std::string& store_id) {
  auto work = cp.Enqueue({.session_id = session_id});
  json resource = {
      {"type", "memory_store"}, {"memory_store_id", store_id}, {"access", "read_write"}};
  if (!work.has_value() ||
      !cp.PutSession(session_id, {{"resources", json::array({resource})}}).has_value()) {
    return "";
  }
  return work->sessions_token;
}

std::string MemoriesPath(const std::string& store_id, const std::string& rest = "") {
  return "/v1/memory_stores/" + store_id + "/memories" + rest;
}

TEST_F(FakeControlPlaneTest, MemoryStoresTakeOnlyTheTokenOfASessionThatNamesTheStore) {
  ASSERT_TRUE(fake_->PutMemoryStore("memstore_a", {{"/a.md", "a"}}).has_value());
  ASSERT_TRUE(fake_->PutMemoryStore("memstore_b", {{"/b.md", "b"}}).has_value());
  const std::string token = TokenForStore(*fake_, "sesn_mem", "memstore_a");
  const std::string dangling = TokenForStore(*fake_, "sesn_dangling", "memstore_gone");
  ASSERT_FALSE(token.empty());
  ASSERT_FALSE(dangling.empty());
  auto other = fake_->Enqueue({.session_id = "sesn_nomem"});
  ASSERT_TRUE(other.has_value());

  auto r = EnvCall("GET", MemoriesPath("memstore_a"));
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(Body(r)["error"]["type"], "authentication_error");
  EXPECT_NE(Body(r)["error"]["message"].get<std::string>().find("environment key"),
            std::string::npos);
  r = fake_->Api("GET", MemoriesPath("memstore_a"), other->sessions_token);
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(Body(r)["error"]["type"], "permission_error");
  EXPECT_EQ(fake_->Api("GET", MemoriesPath("memstore_b"), token)->status, 403)
      << "the session names memstore_a only";
  r = fake_->Api("GET", MemoriesPath("memstore_a"), token);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["data"][0]["path"], "/a.md");
  EXPECT_EQ(fake_->Api("GET", MemoriesPath("memstore_a"), "")->status, 401);
  // Named by the session but not there.
  r = fake_->Api("GET", MemoriesPath("memstore_gone"), dangling);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(Body(r)["error"]["type"], "not_found_error");
  // Every memory endpoint refuses the environment key.
  EXPECT_EQ(EnvCall("POST", MemoriesPath("memstore_a"), R"({"path":"/x","content":""})")->status,
            401);
  EXPECT_EQ(EnvCall("DELETE", MemoriesPath("memstore_a", "/mem_x"))->status, 401);
  EXPECT_EQ(fake_->MemoryStoreContents("memstore_a")->size(), 1u);

  auto reqs = fake_->Requests({.endpoint = "memory_list"});
  ASSERT_TRUE(reqs.has_value());
  ASSERT_EQ(reqs->size(), 6u);
  EXPECT_EQ((*reqs)[0]["auth"], "env_key");
  EXPECT_EQ((*reqs)[0]["status"], 401);
  EXPECT_EQ((*reqs)[1]["auth"], "sessions_token");
  EXPECT_EQ((*reqs)[1]["status"], 403);
  EXPECT_EQ((*reqs)[3]["status"], 200);
  EXPECT_EQ((*reqs)[4]["auth"], "none");
  EXPECT_EQ((*reqs)[5]["status"], 404);
  EXPECT_EQ(fake_->Requests({.endpoint = "memory_create"})->size(), 1u);
  EXPECT_EQ(fake_->Requests({.endpoint = "memory_delete"})->size(), 1u);
}

TEST_F(FakeControlPlaneTest, MemoryListPagesInPathOrderAndCapsFullPagesAt20) {
  std::map<std::string, std::string> seed;
  for (int i = 0; i < 25; ++i) {
    char path[32];
    std::snprintf(path, sizeof(path), "/notes/%02d.md", i);
    seed[path] = "note " + std::to_string(i);
  }
  seed["/top.md"] = "top";
  ASSERT_TRUE(fake_->PutMemoryStore("memstore_p", seed).has_value());
  const std::string token = TokenForStore(*fake_, "sesn_p", "memstore_p");
  ASSERT_FALSE(token.empty());

  // Full view: at most 20 per page even when asked for 100, content included.
  std::vector<std::string> paths;
  std::string cursor;
  int pages = 0;
  do {
    std::string target = MemoriesPath("memstore_p", "?view=full&limit=100");
    if (!cursor.empty()) {
      target += "&page=" + cursor;
    }
    auto r = fake_->Api("GET", target, token);
    ASSERT_EQ(r->status, 200) << r->body;
    json page = Body(r);
    EXPECT_LE(page["data"].size(), 20u);
    for (const json& m : page["data"]) {
      EXPECT_EQ(m["type"], "memory");
      EXPECT_EQ(m["memory_store_id"], "memstore_p");
      EXPECT_EQ(m["content"], seed.at(m["path"].get<std::string>()));
      EXPECT_EQ(m["content_size_bytes"], seed.at(m["path"].get<std::string>()).size());
      EXPECT_EQ(m["id"].get<std::string>().rfind("mem_", 0), 0u);
      EXPECT_EQ(m["memory_version_id"].get<std::string>().rfind("memver_", 0), 0u);
      paths.push_back(m["path"]);
    }
    cursor = page["next_page"].is_string() ? page["next_page"].get<std::string>() : "";
    EXPECT_TRUE(cursor.empty() || cursor.rfind("page_", 0) == 0) << cursor;
    ++pages;
  } while (!cursor.empty() && pages < 10);
  EXPECT_EQ(pages, 2);
  ASSERT_EQ(paths.size(), seed.size());
  size_t i = 0;
  for (const auto& [path, content] : seed) {
    EXPECT_EQ(paths[i++], path);
  }

  // Basic view (the default): 20 by default, no content; path_prefix filters.
  auto r = fake_->Api("GET", MemoriesPath("memstore_p"), token);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["data"].size(), 20u);
  EXPECT_TRUE(Body(r)["data"][0]["content"].is_null());
  EXPECT_TRUE(Body(r)["data"][0]["content_sha256"].is_string());
  r = fake_->Api("GET", MemoriesPath("memstore_p", "?limit=100&path_prefix=/notes/"), token);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["data"].size(), 25u);
  EXPECT_TRUE(Body(r)["next_page"].is_null());
  EXPECT_EQ(fake_->Api("GET", MemoriesPath("memstore_p", "?path_prefix=/notes"), token)->status,
            400);
  EXPECT_EQ(fake_->Api("GET", MemoriesPath("memstore_p", "?limit=101"), token)->status, 400);
  EXPECT_EQ(fake_->Api("GET", MemoriesPath("memstore_p", "?limit=0"), token)->status, 400);
  EXPECT_EQ(fake_->Api("GET", MemoriesPath("memstore_p", "?view=raw"), token)->status, 400);
  EXPECT_EQ(fake_->Api("GET", MemoriesPath("memstore_p", "?page=nope"), token)->status, 400);
}

TEST_F(FakeControlPlaneTest, MemoryCreateUpdateDeleteHonourPathRulesAndPreconditions) {
  ASSERT_TRUE(fake_->PutMemoryStore("memstore_c", {}).has_value());
  const std::string token = TokenForStore(*fake_, "sesn_c", "memstore_c");
  ASSERT_FALSE(token.empty());
  auto call = [&](std::string_view method, const std::string& rest, const json& body = nullptr) {
    return fake_->Api(method, MemoriesPath("memstore_c", rest), token,
                      body.is_null() ? std::string() : body.dump());
  };

  auto r = call("POST", "", {{"path", "/dir/a.md"}, {"content", ""}});
  ASSERT_EQ(r->status, 200) << r->body;
  json created = Body(r);
  EXPECT_EQ(created["type"], "memory");
  EXPECT_TRUE(created["content"].is_null()) << "basic view by default";
  EXPECT_EQ(created["content_sha256"], kSha256Empty);
  EXPECT_EQ(created["content_size_bytes"], 0);
  const std::string id = created["id"];
  r = call("POST", "", {{"path", "/dir/a.md"}, {"content", "again"}});
  EXPECT_EQ(r->status, 409);
  EXPECT_NE(Body(r)["error"]["message"].get<std::string>().find("already exists"),
            std::string::npos);
  for (const char* bad : {"a.md", "/", "//a", "/a/", "/a/./b", "/../a", "/a\x01"}) {
    r = call("POST", "", {{"path", bad}, {"content", "x"}});
    EXPECT_EQ(r->status, 400) << bad << ": " << r->body;
    EXPECT_EQ(Body(r)["error"]["type"], "invalid_request_error") << bad;
  }
  EXPECT_EQ(call("POST", "", {{"path", "/" + std::string(1024, 'p')}, {"content", ""}})->status,
            400);
  EXPECT_EQ(call("POST", "", {{"path", "/big"}, {"content", std::string(102401, 'c')}})->status,
            400);
  EXPECT_EQ(call("POST", "", {{"path", "/nocontent"}})->status, 400);
  r = call("POST", "?view=full", {{"path", "/b.md"}, {"content", "abc"}});
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["content"], "abc");
  EXPECT_EQ(Body(r)["content_sha256"], kSha256Abc);

  // A stale precondition is 409; the right one updates and makes a new version.
  json update = {{"content", "abc"},
                 {"precondition", {{"type", "content_sha256"}, {"content_sha256", kSha256Abc}}}};
  r = call("POST", "/" + id, update);
  EXPECT_EQ(r->status, 409);
  EXPECT_EQ(Body(r)["error"]["type"], "memory_precondition_failed_error");
  update["precondition"]["content_sha256"] = kSha256Empty;
  r = call("POST", "/" + id, update);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["content_sha256"], kSha256Abc);
  EXPECT_NE(Body(r)["memory_version_id"], created["memory_version_id"]);
  const json version = Body(r)["memory_version_id"];
  // Retried after it landed: the precondition no longer matches, but the memory is as asked.
  r = call("POST", "/" + id, update);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["memory_version_id"], version);
  // Rename onto a taken path, then to a free one.
  EXPECT_EQ(call("POST", "/" + id, {{"path", "/b.md"}})->status, 409);
  r = call("POST", "/" + id, {{"path", "/dir/renamed.md"}});
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["path"], "/dir/renamed.md");
  r = call("GET", "/" + id);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["content"], "abc") << "full view by default";
  EXPECT_EQ(call("GET", "/mem_nope")->status, 404);

  // A fault makes the next update fail; the memory stays as it was.
  ASSERT_TRUE(fake_->AddFault({.endpoint = "memory_update", .status = 503}).has_value());
  EXPECT_EQ(call("POST", "/" + id, {{"content", "lost"}})->status, 503);
  EXPECT_EQ(fake_->MemoryStoreContents("memstore_c")->at("/dir/renamed.md"), "abc");

  r = call("DELETE", "/" + id + "?expected_content_sha256=" + kSha256Empty);
  EXPECT_EQ(r->status, 409);
  EXPECT_EQ(Body(r)["error"]["type"], "memory_precondition_failed_error");
  r = call("DELETE", "/" + id + "?expected_content_sha256=" + kSha256Abc);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r), (json{{"id", id}, {"type", "memory_deleted"}}));
  EXPECT_EQ(call("DELETE", "/" + id)->status, 404);
  auto contents = fake_->MemoryStoreContents("memstore_c");
  ASSERT_TRUE(contents.has_value()) << contents.error().message();
  EXPECT_EQ(*contents, (std::map<std::string, std::string>{{"/b.md", "abc"}}));

  auto updates = fake_->Requests({.endpoint = "memory_update"});
  ASSERT_TRUE(updates.has_value());
  ASSERT_EQ(updates->size(), 6u);
  EXPECT_EQ((*updates)[0]["auth"], "sessions_token");
  EXPECT_EQ((*updates)[0]["json"]["precondition"]["content_sha256"], kSha256Abc);
  EXPECT_TRUE((*updates)[5]["fault"].is_string());
}

TEST_F(FakeControlPlaneTest, MemoryStoreControlApiRoundTrips) {
  auto put = fake_->PutMemoryStore("memstore_r", {{"/z.md", "zed"}, {"/a/b.md", "ünïcode\n"}});
  ASSERT_TRUE(put.has_value()) << put.error().message();
  EXPECT_EQ((*put)["id"], "memstore_r");
  auto store = fake_->MemoryStore("memstore_r");
  ASSERT_TRUE(store.has_value()) << store.error().message();
  ASSERT_EQ((*store)["memories"].size(), 2u);
  const json& first = (*store)["memories"][0];
  EXPECT_EQ(first["path"], "/a/b.md");
  EXPECT_EQ(first["content"], "ünïcode\n");
  EXPECT_EQ(first["content_size_bytes"], std::string("ünïcode\n").size());
  EXPECT_EQ(first["memory_store_id"], "memstore_r");
  EXPECT_EQ(first["created_at"], first["updated_at"]);
  EXPECT_EQ((*store)["memories"][1]["path"], "/z.md");
  auto contents = fake_->MemoryStoreContents("memstore_r");
  ASSERT_TRUE(contents.has_value());
  EXPECT_EQ(*contents,
            (std::map<std::string, std::string>{{"/a/b.md", "ünïcode\n"}, {"/z.md", "zed"}}));

  // What the control API seeded is what /v1 serves.
  const std::string token = TokenForStore(*fake_, "sesn_r", "memstore_r");
  auto r =
      fake_->Api("GET", MemoriesPath("memstore_r", "/" + first["id"].get<std::string>()), token);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r), first);

  // Replacing the store drops what was there; bad paths are refused; reset forgets stores.
  ASSERT_TRUE(fake_->PutMemoryStore("memstore_r", {{"/only.md", ""}}).has_value());
  EXPECT_EQ(*fake_->MemoryStoreContents("memstore_r"),
            (std::map<std::string, std::string>{{"/only.md", ""}}));
  EXPECT_FALSE(fake_->PutMemoryStore("memstore_bad", {{"/../x", ""}}).has_value());
  EXPECT_FALSE(fake_->MemoryStore("memstore_bad").has_value());
  auto missing = fake_->MemoryStore("memstore_nope");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("404"), std::string::npos) << missing.error().message();
  ASSERT_TRUE(fake_->Reset().has_value());
  EXPECT_FALSE(fake_->MemoryStoreContents("memstore_r").has_value());
}

// ---- curl against the work queue, keep-alive, reset ----

TEST_F(FakeControlPlaneTest, CurlDrivesTheQueueOverOneKeepAliveConnection) {
  if (!HaveCurl()) {
    GTEST_SKIP() << "curl is not installed";
  }
  auto w = fake_->Enqueue({.session_id = "sesn_curl"});
  ASSERT_TRUE(w.has_value());
  // One curl, two requests: curl reuses the connection ("Re-using existing connection").
  std::vector<std::string> argv = CurlArgs(*fake_, "");
  argv.insert(argv.end(),
              {"-v", "-w", "\n%{http_code}\n", fake_->base_url() + WorkPath("/poll?block_ms=999"),
               "-X", "GET", fake_->base_url() + WorkPath("/" + w->work_id)});
  RunResult res = RunProgram(argv);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("\"secret\": \"" + w->secret + "\""), std::string::npos) << res.out;
  EXPECT_NE(res.err.find("Re-using existing connection"), std::string::npos) << res.err;

  argv = CurlArgs(*fake_, "");
  argv.insert(argv.end(), {"-X", "POST", "-o", "/dev/null", "-w", "%{http_code}",
                           fake_->base_url() + WorkPath("/" + w->work_id + "/stop"), "--json",
                           R"({"force":true})"});
  res = RunProgram(argv);
  EXPECT_EQ(res.out, "204") << res.err;
  res = RunProgram(argv);
  EXPECT_EQ(res.out, "409") << res.err;

  ASSERT_TRUE(fake_->Reset().has_value());
  EXPECT_EQ(fake_->Requests()->size(), 0u);
  EXPECT_FALSE(fake_->WorkState(w->work_id).has_value());
}

// ---- TLS, lifecycle ----

TEST(FakeControlPlaneTlsTest, ServesHttpsWithATestCaAndAPlainControlPort) {
  if (!HaveCurl() || RunProgram({"openssl", "version"}).exit_code != 0) {
    GTEST_SKIP() << "curl or openssl is not installed";
  }
  auto fake = FakeControlPlane::Start({.tls = true});
  ASSERT_TRUE(fake.has_value()) << fake.error().message();
  FakeControlPlane& cp = **fake;
  EXPECT_EQ(cp.base_url().rfind("https://127.0.0.1:", 0), 0u);
  EXPECT_NE(cp.port(), cp.control_port());
  ASSERT_FALSE(cp.ca_file().empty());
  auto w = cp.Enqueue({.session_id = "sesn_tls"});
  ASSERT_TRUE(w.has_value()) << w.error().message();

  std::vector<std::string> argv = CurlArgs(cp, "");
  argv.insert(argv.end(), {"--cacert", cp.ca_file(),
                           cp.base_url() + "/v1/environments/env_fake/work/poll?block_ms=999"});
  RunResult res = RunProgram(argv);
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find(w->work_id), std::string::npos) << res.out;
  // Without the CA the certificate does not verify (curl exit 60).
  argv = CurlArgs(cp, "");
  argv.push_back(cp.base_url() + "/v1/environments/env_fake/work/stats");
  EXPECT_EQ(RunProgram(argv).exit_code, 60);
  // localhost is in the certificate too.
  argv = CurlArgs(cp, "");
  argv.insert(argv.end(), {"--cacert", cp.ca_file(), "-o", "/dev/null", "-w", "%{http_code}",
                           "https://localhost:" + std::to_string(cp.port()) +
                               "/v1/environments/env_fake/work/stats"});
  res = RunProgram(argv);
  EXPECT_EQ(res.out, "200") << res.err;
  // The plain control port serves only /_fake/.
  auto r = HttpCall({.port = cp.control_port(), .target = "/v1/environments/env_fake/work/stats"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 404);
  EXPECT_FALSE(cp.Api("GET", "/v1/sessions/sesn_tls", cp.environment_key()).has_value());
  EXPECT_EQ(cp.Requests({.endpoint = "poll"})->size(), 1u);
}

TEST(FakeControlPlaneLifecycleTest, DestructorReapsAndStdinEofEndsTheFake) {
  pid_t pid = -1;
  {
    auto fake = FakeControlPlane::Start({});
    ASSERT_TRUE(fake.has_value()) << fake.error().message();
    pid = (*fake)->pid();
    ASSERT_GT(pid, 0);
    EXPECT_EQ(::kill(pid, 0), 0);
    // Our child is the fake itself, not a launcher script in front of it.
    auto health = (*fake)->Control("GET", "/_fake/health");
    ASSERT_TRUE(health.has_value()) << health.error().message();
    EXPECT_EQ((*health)["pid"], pid);
  }
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);

  // Run by hand with stdin at EOF: it prints READY, then exits 0 by itself.
  RunResult res = RunProgram(
      {"python3", SRT_FAKE_CONTROL_PLANE_SCRIPT_FOR_TEST, "--port", "0", "--stdin-watch", "on"},
      milliseconds(10000));
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_EQ(res.out.rfind("READY ", 0), 0u) << res.out;
}

TEST(FakeControlPlaneLifecycleTest, MissingScriptIsAClearError) {
  auto fake = FakeControlPlane::Start({.script = "/nonexistent/fake.py"});
  ASSERT_FALSE(fake.has_value());
  EXPECT_NE(fake.error().message().find("/nonexistent/fake.py"), std::string::npos);
}

}  // namespace
}  // namespace srt::testing
