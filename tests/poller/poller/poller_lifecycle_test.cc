// SPDX-License-Identifier: Apache-2.0
// poller_lifecycle_test: the real srt-poller binary against the loopback fake control plane
// (tests/poller/fake_control_plane.py): the work-queue protocol (poll cadence, headers,
// backoff, fatal 4xx, ack failure, heartbeats and leases) and the lifecycle of served items
// (operator stop, idle exit, termination, duplicates, concurrency, signals, SIGHUP, --check),
// asserted on the requests the fake recorded, item states, exit codes and the poller's logs.
// Sandboxes are real (bwrap, cgroup limits): root only, unless SRT_MUST_WORK makes a skip fail.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "leftovers.h"
#include "poller/support/fake_control_plane.h"
#include "poller/support/poller_process.h"

namespace srt::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kBeta = "managed-agents-2026-04-01";
constexpr const char* kVersion = "2023-06-01";

bool MustWork() {
  const char* v = std::getenv("SRT_MUST_WORK");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

double Seconds(const json& t) { return t.get<double>(); }

// The poller's log time ("2026-01-02T03:04:05.678Z") as seconds since the epoch.
double LogTime(const json& record) {
  std::string s = record.value("time", "");
  tm t{};
  int ms = 0;
  if (sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour,
             &t.tm_min, &t.tm_sec, &ms) != 7) {
    return 0;
  }
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<double>(timegm(&t)) + ms / 1000.0;
}

double WallNow() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string NewId(std::string_view prefix) {
  static std::atomic<int> n{0};
  return std::string(prefix) + std::to_string(getpid()) + "_" + std::to_string(++n);
}

json BashToolUse(const std::string& id, const std::string& command) {
  return {{"id", id},
          {"type", "agent.tool_use"},
          {"name", "bash"},
          {"input", {{"command", command}}},
          {"evaluated_permission", "allow"}};
}
json IdleEndTurn() {
  return {{"type", "session.status_idle"}, {"stop_reason", {{"type", "end_turn"}}}};
}
json Running() { return {{"type", "session.status_running"}}; }
json Terminated() { return {{"type", "session.status_terminated"}}; }

// The text of a posted user.tool_result.
std::string ResultText(const json& result) {
  std::string out;
  for (const auto& block : result.at("event").value("content", json::array())) {
    if (block.value("type", "") == "text") out += block.value("text", "");
  }
  return out;
}
bool ResultIsError(const json& result) { return result.at("event").value("is_error", false); }

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFileText(const std::string& path, const std::string& text, mode_t mode) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  chmod(path.c_str(), mode);
}

// A process whose command line is exactly `argv` (NUL-separated) exists.
bool ProcessWithCmdline(const std::string& cmdline) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (ReadFileText(entry.path().string() + "/cmdline") == cmdline) return true;
  }
  return false;
}

// A minimal valid session policy for --policy.
std::string PolicyJson(const std::vector<std::string>& allowed_domains) {
  json p = {{"network", {{"allowedDomains", allowed_domains}, {"deniedDomains", json::array()}}},
            {"filesystem",
             {{"allowWrite", json::array()},
              {"denyWrite", json::array()},
              {"denyRead", json::array({"/root", "/etc/shadow"})},
              {"allowRead", json::array()}}}};
  return p.dump(2);
}

class PollerLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      if (MustWork()) {
        FAIL() << "srt-poller sessions need root here (bwrap, cgroup limits); SRT_MUST_WORK is set";
      }
      GTEST_SKIP() << "needs root (session sandboxes with cgroup limits)";
    }
    char tmpl[] = "/tmp/srt-life-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    sessions_ = dir_ + "/sessions";
    key_file_ = dir_ + "/environment.key";
  }

  void TearDown() override {
    if (poller_ && poller_->running()) {
      poller_->Signal(SIGTERM);
      if (!poller_->Wait(seconds(40))) ADD_FAILURE() << "srt-poller ignored SIGTERM for 40 s";
    }
    if (HasFailure() && poller_) std::cerr << "---- srt-poller stderr ----\n" << poller_->Logs();
    poller_.reset();  // SIGKILL by pid if still running
    cp_.reset();      // stops the fake by pid
    if (!dir_.empty()) {
      // What an srt-poller that was killed, or exited at a second signal, left (workspaces
      // still mounted, its sessions' cgroups): nothing of a test stays on the host.
      (void)SweepPollerLeftovers(sessions_);
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  void StartFake(FakeControlPlane::Options options = {}) {
    auto fake = FakeControlPlane::Start(options);
    ASSERT_TRUE(fake.has_value()) << fake.error().message();
    cp_ = std::move(*fake);
    WriteFileText(key_file_, cp_->environment_key(), 0600);
  }

  // The manual run of the brief: key file, fake base URL, private sessions dir, JSON logs.
  std::vector<std::string> BaseArgs(bool key_file = true) const {
    std::vector<std::string> a = {"--environment-id", cp_ ? cp_->environment_id() : "env_fake",
                                  "--base-url",       cp_ ? cp_->base_url() : "http://127.0.0.1:9",
                                  "--sessions-dir",   sessions_,
                                  "--max-idle",       "2s",
                                  "--log-format",     "json"};
    if (key_file) {
      a.push_back("--environment-key-file");
      a.push_back(key_file_);
    }
    return a;
  }

  void StartPoller(const std::vector<std::string>& extra = {},
                   const std::map<std::string, std::string>& env = {}, bool key_file = true) {
    std::vector<std::string> args = BaseArgs(key_file);
    // Later flags win (the parser applies them in order), so `extra` can override defaults.
    args.insert(args.end(), extra.begin(), extra.end());
    auto p = PollerProcess::Start(args, env);
    ASSERT_TRUE(p.has_value()) << p.error().message();
    poller_ = std::move(*p);
    ASSERT_TRUE(poller_->WaitForLog("polling for work", seconds(30)))
        << "srt-poller did not start:\n"
        << poller_->Logs();
  }

  // Runs srt-poller to completion (for flag and --check tests).
  struct Run {
    int code = -1;
    std::string out;
    std::string err;
  };
  Run RunPoller(const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env = {}) {
    Run r;
    auto p = PollerProcess::Start(args, env);
    if (!p) {
      ADD_FAILURE() << p.error().message();
      return r;
    }
    auto code = (*p)->Wait(seconds(60));
    EXPECT_TRUE(code.has_value()) << "srt-poller did not exit";
    r.code = code.value_or(-1);
    r.out = (*p)->Stdout();
    r.err = (*p)->Logs();
    return r;
  }

  // The poller's JSON log records (non-JSON lines are skipped), optionally only those with
  // msg == `msg`.
  std::vector<json> Records(const std::string& msg = "") const {
    std::vector<json> out;
    std::istringstream in(poller_->Logs());
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!j.is_object()) continue;
      if (!msg.empty() && j.value("msg", "") != msg) continue;
      out.push_back(std::move(j));
    }
    return out;
  }

  // Waits for a record with msg == `msg` whose fields include `fields`.
  std::optional<json> WaitForRecord(const std::string& msg,
                                    const std::map<std::string, std::string>& fields,
                                    milliseconds timeout) const {
    std::optional<json> found;
    (void)WaitFor(
        [&] {
          for (auto& r : Records(msg)) {
            bool match = true;
            for (const auto& [k, v] : fields) match = match && r.value(k, "") == v;
            if (match) {
              found = r;
              return true;
            }
          }
          return false;
        },
        timeout, milliseconds(50));
    return found;
  }

  json Requests(const FakeControlPlane::RequestFilter& filter) const {
    auto r = cp_->Requests(filter);
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return r.has_value() ? std::move(*r) : json::array();
  }
  json Work(const std::string& work_id) const {
    auto r = cp_->WorkState(work_id);
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return r.has_value() ? std::move(*r) : json::object();
  }
  FakeControlPlane::Enqueued Enqueue(const FakeControlPlane::WorkOptions& options) const {
    auto r = cp_->Enqueue(options);
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return r.has_value() ? std::move(*r) : FakeControlPlane::Enqueued{};
  }
  void Append(const std::string& session_id, const json& events) const {
    auto r = cp_->AppendEvents(session_id, events);
    ASSERT_TRUE(r.has_value()) << r.error().message();
  }
  json WaitResults(const std::string& session_id, size_t count,
                   milliseconds timeout = seconds(30)) const {
    auto r = cp_->WaitForResults(session_id, count, timeout);
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return r.has_value() ? std::move(*r) : json::array();
  }
  // Waits until the session has `count` live event streams; fails at once if srt-poller died.
  void WaitStreams(const std::string& session_id, int count = 1) const {
    int last = -1;
    bool ok = WaitFor(
        [&] {
          auto s = cp_->Session(session_id);
          last = s.has_value() ? s->value("streams", -1) : -1;
          return last == count || !poller_->running();
        },
        seconds(30), milliseconds(50));
    ASSERT_TRUE(poller_->running()) << "srt-poller exited";
    ASSERT_TRUE(ok && last == count)
        << "session '" << session_id << "' has " << last << " live streams, want " << count;
  }
  // The outcome= of the item's "session item finished" record ("" on timeout).
  std::string WaitFinished(const std::string& work_id, milliseconds timeout = seconds(40)) const {
    auto r = WaitForRecord("session item finished", {{"work_id", work_id}}, timeout);
    return r ? r->value("outcome", "") : "";
  }
  // The session's workspace as srt-poller sees it now: its --disk filesystem is mounted in a
  // mount namespace of its item's thread, which /proc/PID/task/TID/root reaches while it runs
  // (a path that goes with the item); the host's directory when nothing is mounted there.
  std::string Workspace(const std::string& session_id) const {
    const std::string point = sessions_ + "/" + session_id;
    return (poller_ && poller_->running() ? poller_->RootWithMountAt(point) : "") + point;
  }

  std::string dir_;
  std::string sessions_;
  std::string key_file_;
  std::unique_ptr<FakeControlPlane> cp_;
  std::unique_ptr<PollerProcess> poller_;
};

// Every /v1 request: the protocol's headers and query (§2.1), and nothing the server rejects.
void ExpectWellFormed(const json& requests, const std::string& env_key) {
  ASSERT_FALSE(requests.empty());
  for (const auto& r : requests) {
    SCOPED_TRACE(r.value("method", "") + " " + r.value("path", ""));
    const json& h = r.at("headers");
    EXPECT_EQ(h.value("anthropic-version", ""), kVersion);
    EXPECT_NE(h.value("anthropic-beta", "").find(kBeta), std::string::npos);
    EXPECT_FALSE(h.contains("x-api-key"));
    EXPECT_EQ(r.at("query").value("beta", ""), "true");
    EXPECT_TRUE(h.value("authorization", "").starts_with("Bearer "));
    EXPECT_TRUE(r.at("auth") == "env_key" || r.at("auth") == "sessions_token") << r.at("auth");
    EXPECT_NE(r.at("status"), 400);
    EXPECT_NE(r.at("status"), 401);
    if (r.at("endpoint") == "poll") {
      EXPECT_EQ(h.value("authorization", ""), "Bearer " + env_key);
      EXPECT_TRUE(std::regex_match(h.value("anthropic-worker-id", ""),
                                   std::regex("[A-Za-z0-9._-]+-[0-9a-f]{16}")))
          << h.value("anthropic-worker-id", "");
      EXPECT_EQ(r.at("query").value("block_ms", ""), "999");
    }
  }
}

// ---- polling -----------------------------------------------------------------------------------

TEST_F(PollerLifecycleTest, EmptyPollsAcceptNoContentAndNullAndArePacedWithoutAHotLoop) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  // Switch to `null` answers between two polls: once the second has been answered, srt-poller
  // sleeps at least 1 s before the third.
  auto answered = [&](size_t n) {
    json all = Requests({.endpoint = "poll"});
    return all.size() >= n && !all[n - 1]["status"].is_null();
  };
  ASSERT_TRUE(WaitFor([&] { return answered(2); }, seconds(20)));
  ASSERT_TRUE(cp_->Configure({{"empty_poll", "null"}}).has_value());
  json before = Requests({.endpoint = "poll"});
  ASSERT_EQ(before.size(), 2u);
  int64_t seq = before.back()["seq"];
  ASSERT_TRUE(cp_->WaitForRequests({.endpoint = "poll", .since_seq = seq}, 2, seconds(20)));
  // Let the last poll finish its 1 s block so that its answer is recorded.
  ASSERT_TRUE(WaitFor([&] { return answered(4); }, seconds(5)));

  json polls = Requests({.endpoint = "poll"});
  ASSERT_GE(polls.size(), 4u);
  EXPECT_EQ(polls[0]["status"], 204);
  EXPECT_EQ(polls[1]["status"], 204);
  for (const auto& p : polls) {
    if (p["seq"].get<int64_t>() > seq && !p["status"].is_null()) {
      EXPECT_EQ(p["status"], 200);
    }
  }
  ExpectWellFormed(polls, cp_->environment_key());
  std::string worker = polls[0]["headers"]["anthropic-worker-id"];
  for (const auto& p : polls) EXPECT_EQ(p["headers"]["anthropic-worker-id"], worker);
  // Each empty poll blocks 999 ms on the server, then srt-poller sleeps U(1 s, 3 s): starts are
  // at least ~2 s apart. A hot loop would show gaps of milliseconds.
  for (size_t i = 1; i < polls.size(); ++i) {
    double gap = Seconds(polls[i]["time"]) - Seconds(polls[i - 1]["time"]);
    EXPECT_GE(gap, 1.5) << "poll " << i;
    EXPECT_LE(gap, 10.0) << "poll " << i;
  }
  // Neither answer is an error, and nothing else was asked.
  EXPECT_EQ(Records("poll failed, backing off").size(), 0u);
  EXPECT_EQ(Requests({}).size(), Requests({.endpoint = "poll"}).size());
  EXPECT_TRUE(poller_->running());
}

TEST_F(PollerLifecycleTest, EnvironmentKeyFromTheEnvironmentAuthorizesPolls) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  ASSERT_NO_FATAL_FAILURE(
      StartPoller({}, {{"ANTHROPIC_ENVIRONMENT_KEY", cp_->environment_key()}}, false));
  auto poll = cp_->WaitForRequest({.endpoint = "poll"}, seconds(20));
  ASSERT_TRUE(poll.has_value()) << poll.error().message();
  EXPECT_EQ((*poll)["auth"], "env_key");
  EXPECT_EQ((*poll)["headers"]["authorization"], "Bearer " + cp_->environment_key());
  ASSERT_TRUE(
      WaitFor([&] { return !Requests({.endpoint = "poll"})[0]["status"].is_null(); }, seconds(5)));
  EXPECT_EQ(Requests({.endpoint = "poll"})[0]["status"], 204);
}

TEST_F(PollerLifecycleTest, PollServerErrorsBackOffExponentiallyThenRecoverAndClaim) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  auto work = Enqueue({.session_id = NewId("sesn_5xx")});
  // 6 failures: two Poll() calls of 3 attempts each (the client retries a 5xx twice), then the
  // seventh request succeeds and claims the item.
  ASSERT_TRUE(cp_->AddFault({.endpoint = "poll", .status = 503, .count = 6}).has_value());
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  ASSERT_TRUE(WaitForRecord("claimed work", {{"work_id", work.work_id}}, seconds(30)));

  json polls = Requests({.endpoint = "poll"});
  ASSERT_EQ(polls.size(), 7u) << polls.dump();
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(polls[i]["status"], 503) << i;
  EXPECT_EQ(polls[6]["status"], 200);
  EXPECT_EQ(polls[6]["work_id"], work.work_id);

  std::vector<json> backoffs = Records("poll failed, backing off");
  ASSERT_EQ(backoffs.size(), 2u);
  auto sleep_ms = [](const json& r) { return std::stoi(r.value("sleep", "0ms")); };
  // Backoff 1 s then 2 s, jittered into [b/2, b).
  EXPECT_GE(sleep_ms(backoffs[0]), 500);
  EXPECT_LT(sleep_ms(backoffs[0]), 1000);
  EXPECT_GE(sleep_ms(backoffs[1]), 1000);
  EXPECT_LT(sleep_ms(backoffs[1]), 2000);
  EXPECT_NE(backoffs[0].value("error", "").find("503"), std::string::npos);

  auto gap = [&](size_t i) { return Seconds(polls[i]["time"]) - Seconds(polls[i - 1]["time"]); };
  // Inside one Poll(): the SDK retry delays 0.5 s then 1 s, minus up to 25 %.
  EXPECT_GE(gap(1), 0.36);
  EXPECT_GE(gap(2), 0.72);
  EXPECT_GE(gap(4), 0.36);
  EXPECT_GE(gap(5), 0.72);
  // Between Poll() calls: the poller's own backoff, which grows.
  EXPECT_GE(gap(3), sleep_ms(backoffs[0]) / 1000.0 - 0.05);
  EXPECT_GE(gap(6), sleep_ms(backoffs[1]) / 1000.0 - 0.05);
  EXPECT_GT(sleep_ms(backoffs[1]), sleep_ms(backoffs[0]));

  auto state = cp_->WaitForWorkState(work.work_id, "active", seconds(20));
  EXPECT_TRUE(state.has_value()) << state.error().message();
}

TEST_F(PollerLifecycleTest, PollRetryAfterIsHonoured) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  auto work = Enqueue({.session_id = NewId("sesn_ra")});
  ASSERT_TRUE(cp_->AddFault({.endpoint = "poll", .status = 503, .count = 1, .retry_after = "2"})
                  .has_value());
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  ASSERT_TRUE(WaitForRecord("claimed work", {{"work_id", work.work_id}}, seconds(30)));
  json polls = Requests({.endpoint = "poll"});
  ASSERT_EQ(polls.size(), 2u);
  EXPECT_EQ(polls[0]["status"], 503);
  EXPECT_EQ(polls[1]["status"], 200);
  // Without Retry-After the SDK retry waits at most 0.5 s.
  EXPECT_GE(Seconds(polls[1]["time"]) - Seconds(polls[0]["time"]), 1.9);
  // The automatic retry absorbed it: the poll loop saw no failure.
  EXPECT_EQ(Records("poll failed, backing off").size(), 0u);
}

TEST_F(PollerLifecycleTest, Poll401IsFatalExitOneWithoutRetryStorm) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  WriteFileText(key_file_, "sk-ant-oat01-not-the-environment-key", 0600);
  std::vector<std::string> args = BaseArgs();
  args.push_back("--log-format");
  args.push_back("text");
  auto p = PollerProcess::Start(args);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  poller_ = std::move(*p);
  auto t0 = Clock::now();
  auto code = poller_->Wait(seconds(30));
  ASSERT_TRUE(code.has_value()) << "srt-poller kept running after a 401";
  EXPECT_EQ(*code, 1);
  EXPECT_LT(Clock::now() - t0, seconds(10));
  std::string logs = poller_->Logs();
  EXPECT_NE(logs.find("level=ERROR msg=\"poll hit permanent 4xx; stopping\""), std::string::npos)
      << logs;
  EXPECT_NE(logs.find("401"), std::string::npos) << logs;
  EXPECT_NE(logs.find("msg=\"srt-poller exiting\" code=1"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("backing off"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("sk-ant-oat01-not-the-environment-key"), std::string::npos);
  json polls = Requests({.endpoint = "poll"});
  ASSERT_EQ(polls.size(), 1u) << polls.dump();
  EXPECT_EQ(polls[0]["status"], 401);
  EXPECT_EQ(polls[0]["auth"], "invalid");
  EXPECT_EQ(Requests({}).size(), 1u);
}

TEST_F(PollerLifecycleTest, AckFailureForceStopsTheItemUnservedAndPollingContinues) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  auto work = Enqueue({.session_id = NewId("sesn_ack")});
  ASSERT_TRUE(cp_->AddFault({.endpoint = "ack", .status = 500, .count = -1}).has_value());
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  ASSERT_TRUE(
      WaitForRecord("ack failed, discarding work item", {{"work_id", work.work_id}}, seconds(30)));
  auto stopped = cp_->WaitForWorkState(work.work_id, "stopped", seconds(20));
  ASSERT_TRUE(stopped.has_value()) << stopped.error().message();
  json stops = (*stopped)["stops"];
  ASSERT_EQ(stops.size(), 1u) << stops.dump();
  EXPECT_EQ(stops[0]["force"], true);
  EXPECT_EQ(stops[0]["by"], "api");

  json stop_req = Requests({.endpoint = "stop", .work_id = work.work_id});
  ASSERT_EQ(stop_req.size(), 1u);
  EXPECT_EQ(stop_req[0]["json"], json({{"force", true}}));
  // A 500 is retried by the client (1 + 2 attempts) before the item is given up.
  EXPECT_EQ(Requests({.endpoint = "ack"}).size(), 3u);
  // Polling goes on after the backoff.
  int64_t stop_seq = stop_req[0]["seq"];
  EXPECT_TRUE(cp_->WaitForRequest({.endpoint = "poll", .since_seq = stop_seq}, seconds(20)));
  // Never served: no lease, no session traffic, no claim.
  EXPECT_EQ(Requests({.endpoint = "heartbeat"}).size(), 0u);
  EXPECT_EQ(Requests({.session_id = work.session_id, .path_regex = "^/v1/sessions/"}).size(), 0u);
  EXPECT_EQ(Records("claimed work").size(), 0u);
  EXPECT_EQ(Work(work.work_id)["deliveries"].size(), 1u);
  EXPECT_TRUE(poller_->running());
}

// ---- the lease
// -----------------------------------------------------------------------------------

TEST_F(PollerLifecycleTest, HeartbeatsEchoEveryHalfTtlWithTheSessionsTokenAnd412EndsWithoutStop) {
  ASSERT_NO_FATAL_FAILURE(StartFake({.ttl_seconds = 4}));
  auto work = Enqueue({.session_id = NewId("sesn_hb")});
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  ASSERT_NO_FATAL_FAILURE(WaitStreams(work.session_id));
  ASSERT_NO_FATAL_FAILURE(Append(work.session_id, BashToolUse(NewId("toolu_"), "echo served")));
  json results = WaitResults(work.session_id, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["auth"], "sessions_token");
  EXPECT_NE(ResultText(results[0]).find("served"), std::string::npos) << results.dump();

  ASSERT_TRUE(WaitFor([&] { return Work(work.work_id)["heartbeats"].size() >= 4; }, seconds(30)));
  json beats = Work(work.work_id)["heartbeats"];
  EXPECT_EQ(beats[0]["expected"], "NO_HEARTBEAT");
  for (size_t i = 0; i < beats.size(); ++i) {
    SCOPED_TRACE("beat " + std::to_string(i));
    EXPECT_EQ(beats[i]["ok"], true);  // the previous last_heartbeat, echoed exactly
    EXPECT_EQ(beats[i]["status"], 200);
    EXPECT_EQ(beats[i]["state"], "active");
    // ttl_seconds 4 -> a beat every 2 s (the default before the first answer would be 30 s).
    if (i > 0) {
      double gap = Seconds(beats[i]["time"]) - Seconds(beats[i - 1]["time"]);
      EXPECT_GE(gap, 1.5);
      EXPECT_LE(gap, 6.0);
    }
  }
  // The sessions token from the item's secret is the bearer for every per-item call.
  for (const char* ep : {"heartbeat", "stream", "events_list", "events_post"}) {
    json reqs = Requests({.endpoint = ep, .session_id = work.session_id});
    ASSERT_FALSE(reqs.empty()) << ep;
    for (const auto& r : reqs) {
      EXPECT_EQ(r["auth"], "sessions_token") << ep;
      EXPECT_EQ(r["headers"]["authorization"], "Bearer " + work.sessions_token) << ep;
    }
  }
  ExpectWellFormed(Requests({}), cp_->environment_key());

  // Another worker takes the lease: the next beat gets 412 and the session ends at once.
  ASSERT_TRUE(cp_->StealLease(work.work_id).has_value());
  auto ended = WaitForRecord("lease ended", {{"work_id", work.work_id}}, seconds(20));
  ASSERT_TRUE(ended.has_value());
  EXPECT_NE(ended->value("reason", "").find("412"), std::string::npos) << ended->dump();
  EXPECT_EQ(WaitFinished(work.work_id), "lease_lost");
  json after = Work(work.work_id);
  EXPECT_EQ(after["heartbeats"].back()["status"], 412);
  EXPECT_EQ(after["stops"].size(), 0u) << "an item whose lease was taken must not be stopped";
  EXPECT_EQ(Requests({.endpoint = "stop"}).size(), 0u);
  EXPECT_EQ(after["state"], "active");  // the other worker's item now
  EXPECT_TRUE(poller_->running());
}

// ---- how items end
// -------------------------------------------------------------------------------

TEST_F(PollerLifecycleTest, GracefulOperatorStopCancelsTheToolAndEndsStopped) {
  ASSERT_NO_FATAL_FAILURE(StartFake({.ttl_seconds = 4}));
  auto work = Enqueue({.session_id = NewId("sesn_gstop")});
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  ASSERT_NO_FATAL_FAILURE(WaitStreams(work.session_id));
  ASSERT_NO_FATAL_FAILURE(
      Append(work.session_id, BashToolUse(NewId("toolu_"), "touch started; sleep 100")));
  ASSERT_TRUE(
      WaitFor([&] { return std::filesystem::exists(Workspace(work.session_id) + "/started"); },
              seconds(20)));

  ASSERT_TRUE(cp_->StopWork(work.work_id, /*force=*/false).has_value());
  EXPECT_EQ(WaitFinished(work.work_id), "stopped");
  json results = WaitResults(work.session_id, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(ResultIsError(results[0]));
  EXPECT_NE(ResultText(results[0]).find("cancelled"), std::string::npos) << results.dump();

  auto state = cp_->WaitForWorkState(work.work_id, "stopped", seconds(10));
  ASSERT_TRUE(state.has_value()) << state.error().message();
  json stops = (*state)["stops"];
  ASSERT_EQ(stops.size(), 2u) << stops.dump();
  EXPECT_EQ(stops[0]["by"], "operator");
  EXPECT_EQ(stops[0]["force"], false);
  // The worker noticed on a heartbeat and confirmed with a force-stop of the stopping item.
  EXPECT_EQ((*state)["heartbeats"].back()["state"], "stopping");
  EXPECT_EQ(stops[1]["by"], "api");
  EXPECT_EQ(stops[1]["force"], true);
  EXPECT_EQ(stops[1]["state_before"], "stopping");
  auto lease = Records("lease ended");
  ASSERT_EQ(lease.size(), 1u);
  EXPECT_EQ(lease[0].value("reason", ""), "work item is stopping");
  EXPECT_TRUE(poller_->running());
}

TEST_F(PollerLifecycleTest, ForcedOperatorStopEndsTheItemStopped) {
  ASSERT_NO_FATAL_FAILURE(StartFake({.ttl_seconds = 4}));
  auto work = Enqueue({.session_id = NewId("sesn_fstop")});
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  ASSERT_NO_FATAL_FAILURE(WaitStreams(work.session_id));
  ASSERT_NO_FATAL_FAILURE(
      Append(work.session_id, BashToolUse(NewId("toolu_"), "touch started; sleep 100")));
  ASSERT_TRUE(
      WaitFor([&] { return std::filesystem::exists(Workspace(work.session_id) + "/started"); },
              seconds(20)));

  ASSERT_TRUE(cp_->StopWork(work.work_id, /*force=*/true).has_value());
  EXPECT_EQ(WaitFinished(work.work_id), "stopped");
  json results = WaitResults(work.session_id, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(ResultIsError(results[0]));
  json w = Work(work.work_id);
  EXPECT_EQ(w["state"], "stopped");
  EXPECT_EQ(w["heartbeats"].back()["state"], "stopped");
  ASSERT_EQ(w["stops"].size(), 2u) << w["stops"].dump();
  EXPECT_EQ(w["stops"][0]["by"], "operator");
  EXPECT_EQ(w["stops"][0]["force"], true);
  // The worker's own force-stop gets 409 (already stopped), which is fine.
  EXPECT_EQ(w["stops"][1]["by"], "api");
  EXPECT_EQ(w["stops"][1]["state_before"], "stopped");
  EXPECT_EQ(Records("force-stop on exit failed").size(), 0u);
  EXPECT_TRUE(poller_->running());
}

TEST_F(PollerLifecycleTest, IdleExitForceStopsAndTheNextItemReusesTheWorkspace) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  std::string sid = NewId("sesn_idle");
  auto first = Enqueue({.session_id = sid});
  ASSERT_NO_FATAL_FAILURE(StartPoller({"--max-idle", "1s"}));
  ASSERT_NO_FATAL_FAILURE(WaitStreams(sid));
  ASSERT_NO_FATAL_FAILURE(
      Append(sid, BashToolUse(NewId("toolu_"), "echo first-item > marker.txt && echo wrote")));
  ASSERT_EQ(WaitResults(sid, 1).size(), 1u);
  double idle_at = WallNow();
  ASSERT_NO_FATAL_FAILURE(Append(sid, IdleEndTurn()));
  auto finished = WaitForRecord("session item finished", {{"work_id", first.work_id}}, seconds(20));
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(finished->value("outcome", ""), "idle");
  // Not before --max-idle (1 s) after the end_turn (log times have millisecond resolution).
  EXPECT_GE(LogTime(*finished) - idle_at, 0.9);

  auto state = cp_->WaitForWorkState(first.work_id, "stopped", seconds(10));
  ASSERT_TRUE(state.has_value()) << state.error().message();
  ASSERT_EQ((*state)["stops"].size(), 1u);
  EXPECT_EQ((*state)["stops"][0]["force"], true);
  json stop_req = Requests({.endpoint = "stop", .work_id = first.work_id});
  ASSERT_EQ(stop_req.size(), 1u);
  EXPECT_EQ(stop_req[0]["auth"], "sessions_token");
  EXPECT_EQ(stop_req[0]["json"], json({{"force", true}}));
  // (The workspace's filesystem, --disk, is unmounted between items: the next item reads it.)

  // The session's next message brings a new work item: same workspace.
  ASSERT_NO_FATAL_FAILURE(
      Append(sid, json::array({Running(), BashToolUse(NewId("toolu_"), "cat marker.txt")})));
  auto second = Enqueue({.session_id = sid});
  json results = WaitResults(sid, 2);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1]["auth"], "sessions_token");
  EXPECT_FALSE(ResultIsError(results[1]));
  EXPECT_NE(ResultText(results[1]).find("first-item"), std::string::npos) << results.dump();
  ASSERT_NO_FATAL_FAILURE(Append(sid, IdleEndTurn()));
  EXPECT_EQ(WaitFinished(second.work_id), "idle");
  EXPECT_TRUE(cp_->WaitForWorkState(second.work_id, "stopped", seconds(10)).has_value());

  // Every request of the whole exchange follows §2.1; the second item used its own token.
  ExpectWellFormed(Requests({}), cp_->environment_key());
  for (const auto& r : Requests({.endpoint = "heartbeat", .work_id = second.work_id})) {
    EXPECT_EQ(r["headers"]["authorization"], "Bearer " + second.sessions_token);
  }
}

TEST_F(PollerLifecycleTest, NextItemOfASessionThatEndedDuringAPollIsServed) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  std::string sid = NewId("sesn_quick");
  auto first = Enqueue({.session_id = sid});
  ASSERT_NO_FATAL_FAILURE(StartPoller({"--concurrency", "2", "--max-idle", "1s"}));
  ASSERT_NO_FATAL_FAILURE(WaitStreams(sid));
  // Hold srt-poller's next poll for 5 s. Meanwhile the session idles out and its next item is
  // queued, so that very poll hands over the new item of a session whose worker has just
  // finished (and not been reaped yet).
  ASSERT_TRUE(cp_->AddFault({.endpoint = "poll", .kind = "delay", .delay_ms = 5000}).has_value());
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const auto& r : Requests({.endpoint = "poll"})) {
          if (!r["fault"].is_null()) return true;
        }
        return false;
      },
      seconds(10)));
  ASSERT_NO_FATAL_FAILURE(Append(sid, IdleEndTurn()));
  EXPECT_EQ(WaitFinished(first.work_id, seconds(20)), "idle");
  ASSERT_NO_FATAL_FAILURE(
      Append(sid, json::array({Running(), BashToolUse(NewId("toolu_"), "echo again")})));
  auto second = Enqueue({.session_id = sid});
  ASSERT_TRUE(WaitForRecord("claimed work", {{"work_id", second.work_id}}, seconds(20)));
  ASSERT_NO_FATAL_FAILURE(WaitStreams(sid));
  json results = WaitResults(sid, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_NE(ResultText(results[0]).find("again"), std::string::npos);
  EXPECT_EQ(Work(second.work_id)["state"], "active");
  EXPECT_TRUE(poller_->running());
}

class TerminationTest : public PollerLifecycleTest,
                        public ::testing::WithParamInterface<std::string> {};

TEST_P(TerminationTest, TerminatedSessionEndsTheItemAndTheCleanupFlagDecidesTheWorkspace) {
  const bool cleanup = GetParam() == "terminated";
  ASSERT_NO_FATAL_FAILURE(StartFake());
  auto work = Enqueue({.session_id = NewId("sesn_term")});
  ASSERT_NO_FATAL_FAILURE(StartPoller({"--workspace-cleanup", GetParam()}));
  ASSERT_NO_FATAL_FAILURE(WaitStreams(work.session_id));
  ASSERT_NO_FATAL_FAILURE(Append(work.session_id, BashToolUse(NewId("toolu_"), "echo x > f")));
  ASSERT_EQ(WaitResults(work.session_id, 1).size(), 1u);
  ASSERT_TRUE(std::filesystem::exists(Workspace(work.session_id) + "/f"));

  ASSERT_NO_FATAL_FAILURE(Append(work.session_id, Terminated()));
  EXPECT_EQ(WaitFinished(work.work_id), "terminated");
  auto state = cp_->WaitForWorkState(work.work_id, "stopped", seconds(10));
  ASSERT_TRUE(state.has_value()) << state.error().message();
  EXPECT_EQ((*state)["stops"][0]["force"], true);
  // The workspace's filesystem (--disk, on by default) is unmounted once its item ends; what the
  // session wrote stays in its image.
  const std::string image =
      std::filesystem::path(Workspace(work.session_id)).parent_path().string() + "/.disks/" +
      work.session_id + ".ext4";
  if (cleanup) {
    ASSERT_TRUE(WaitForRecord("workspace removed (session over)", {{"session_id", work.session_id}},
                              seconds(10)));
    EXPECT_FALSE(std::filesystem::exists(Workspace(work.session_id)));
    EXPECT_FALSE(std::filesystem::exists(image));
  } else {
    EXPECT_TRUE(std::filesystem::is_directory(Workspace(work.session_id)));
    EXPECT_TRUE(std::filesystem::is_regular_file(image));
    EXPECT_EQ(Records("workspace removed (session over)").size(), 0u);
  }
  EXPECT_TRUE(poller_->running());
}

INSTANTIATE_TEST_SUITE_P(Cleanup, TerminationTest, ::testing::Values("keep", "terminated"));

// A health check is served as the SDK's workers do: its lease taken by a first heartbeat, a
// session sandbox probed, and the item ended `stopped` at once (not left `stopping` until its
// lease expires, which is how the control plane would see a worker that skipped it).
TEST_F(PollerLifecycleTest, HealthcheckIsHeartbeatenProbedAndEndedAndASecretlessItemIsServed) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  auto health = Enqueue({.data_type = "healthcheck"});
  auto bare = Enqueue({.session_id = NewId("sesn_bare"), .with_secret = false});
  ASSERT_NO_FATAL_FAILURE(StartPoller());

  auto passed = WaitForRecord("health check passed", {{"work_id", health.work_id}}, seconds(20));
  ASSERT_TRUE(passed.has_value());
  EXPECT_EQ(passed->value("level", ""), "INFO");
  EXPECT_EQ(passed->value("work_type", ""), "healthcheck");
  ASSERT_TRUE(WaitFor([&] { return !Work(health.work_id)["stops"].empty(); }, seconds(10)));
  json h = Work(health.work_id);
  EXPECT_EQ(h["acks"], 1);
  ASSERT_EQ(h["heartbeats"].size(), 1u);
  EXPECT_EQ(h["heartbeats"][0]["expected"], "NO_HEARTBEAT");
  EXPECT_EQ(h["heartbeats"][0]["state"], "active");
  ASSERT_EQ(h["stops"].size(), 1u);
  EXPECT_EQ(h["stops"][0]["force"], true);
  EXPECT_EQ(h["stops"][0]["state_before"], "active");
  EXPECT_EQ(h["state"], "stopped") << h.dump();
  EXPECT_EQ(Records("skipping non-session work item").size(), 0u);

  // No secret: the environment key serves the session, on the host.
  ASSERT_NO_FATAL_FAILURE(WaitStreams(bare.session_id));
  ASSERT_NO_FATAL_FAILURE(Append(bare.session_id, BashToolUse(NewId("toolu_"), "echo bare")));
  json results = WaitResults(bare.session_id, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["auth"], "env_key");
  EXPECT_NE(ResultText(results[0]).find("bare"), std::string::npos);
  for (const auto& r : Requests({.endpoint = "heartbeat", .work_id = bare.work_id})) {
    EXPECT_EQ(r["auth"], "env_key");
  }
  EXPECT_EQ(Records("work item secret unusable").size(), 0u);
  ASSERT_NO_FATAL_FAILURE(Append(bare.session_id, Terminated()));
  EXPECT_EQ(WaitFinished(bare.work_id), "terminated");
}

// Hostile review 6, F2: the health check's probe mounted its workspace filesystem (--disk) in
// srt-poller's own mount namespace, which every item's thread copies when it enters its own: an
// item starting meanwhile kept a copy of that mount, and the probe's loop device, until the item
// ended. The probe mounts in a namespace of its own thread now: srt-poller's mount table does not
// change while a health check runs.
TEST_F(PollerLifecycleTest, AHealthchecksProbeMountsNothingInThePollersNamespace) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  // The kernel marks an open mountinfo whose namespace's table has changed since it was opened
  // (poll reports POLLPRI): a mount and its unmount between two looks are both seen.
  const std::string path = "/proc/" + std::to_string(poller_->pid()) + "/mountinfo";
  UniqueFd mountinfo(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(mountinfo) << path;
  auto health = Enqueue({.data_type = "healthcheck"});
  ASSERT_TRUE(
      WaitForRecord("health check passed", {{"work_id", health.work_id}}, seconds(20)).has_value())
      << poller_->Logs();
  pollfd changed{mountinfo.get(), POLLPRI, 0};
  EXPECT_EQ(poll(&changed, 1, 0), 0) << "srt-poller's own mount table changed during the probe";
  EXPECT_EQ(changed.revents, 0);
}

// A health check whose sandbox probe fails is not confirmed: the worker logs why and releases
// the item with a graceful stop and no heartbeat after it, so it never shows as passed.
TEST_F(PollerLifecycleTest, AHealthcheckWhoseSandboxCannotStartIsNotConfirmed) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  // The sessions directory becomes a file: no session (and no probe) can get a workspace. The
  // poller may be making its spare workspace image in it meanwhile (a file appearing while the
  // tree is removed: "Directory not empty"), so the removal is tried until it holds.
  std::error_code gone;
  for (int i = 0; i < 100; ++i) {
    std::filesystem::remove_all(sessions_, gone);
    if (!gone) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(gone) << gone.message();
  { std::ofstream(sessions_) << "not a directory"; }
  auto health = Enqueue({.data_type = "healthcheck"});
  auto failed = WaitForRecord("health check failed: sessions cannot run on this host",
                              {{"work_id", health.work_id}}, seconds(20));
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->value("level", ""), "ERROR");
  EXPECT_NE(failed->value("error", "").find(sessions_), std::string::npos) << failed->dump();
  ASSERT_TRUE(WaitFor([&] { return !Work(health.work_id)["stops"].empty(); }, seconds(10)));
  json h = Work(health.work_id);
  ASSERT_EQ(h["heartbeats"].size(), 1u);
  ASSERT_EQ(h["stops"].size(), 1u);
  EXPECT_EQ(h["stops"][0]["force"], false);
  EXPECT_EQ(h["state"], "stopping");
  EXPECT_EQ(Records("health check passed").size(), 0u);
  EXPECT_TRUE(poller_->running());
  std::filesystem::remove(sessions_);
}

// Two srt-pollers on one sessions directory would share workspaces and sweep each other's
// cgroups: the second is refused, and says why.
TEST_F(PollerLifecycleTest, ASecondPollerOnTheSameSessionsDirectoryIsRefused) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  Run second = RunPoller(BaseArgs());
  EXPECT_EQ(second.code, 2) << second.err;
  EXPECT_NE(
      second.err.find("sessions directory '" + sessions_ + "' is in use by another srt-poller"),
      std::string::npos)
      << second.err;
  EXPECT_TRUE(poller_->running());
  // A symlink where the lock should be is not followed.
  poller_->Signal(SIGTERM);
  ASSERT_TRUE(poller_->Wait(seconds(40)).has_value());
  const std::string lock = sessions_ + "/.srt-poller.lock";
  std::filesystem::remove(lock);
  std::filesystem::create_symlink(dir_ + "/elsewhere", lock);
  Run planted = RunPoller(BaseArgs());
  EXPECT_EQ(planted.code, 2) << planted.err;
  EXPECT_NE(planted.err.find("open the sessions directory's lock"), std::string::npos)
      << planted.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/elsewhere"));
}

TEST_F(PollerLifecycleTest, DuplicateItemForARunningSessionIsSkippedAndTheFirstKeepsRunning) {
  ASSERT_NO_FATAL_FAILURE(StartFake({.ttl_seconds = 4}));
  std::string sid = NewId("sesn_dup");
  auto first = Enqueue({.session_id = sid});
  ASSERT_NO_FATAL_FAILURE(StartPoller({"--concurrency", "2"}));
  ASSERT_NO_FATAL_FAILURE(WaitStreams(sid));
  auto dup = Enqueue({.session_id = sid});
  auto skipped = WaitForRecord("session already running on this host; skipping the duplicate item",
                               {{"work_id", dup.work_id}}, seconds(20));
  ASSERT_TRUE(skipped.has_value());
  EXPECT_EQ(skipped->value("session_id", ""), sid);
  ASSERT_TRUE(WaitFor([&] { return !Work(dup.work_id)["stops"].empty(); }, seconds(10)));
  json d = Work(dup.work_id);
  EXPECT_EQ(d["acks"], 1);
  EXPECT_EQ(d["stops"][0]["force"], false);
  EXPECT_EQ(d["heartbeats"].size(), 0u);

  // The first item is untouched: it still serves tools and keeps its lease.
  ASSERT_NO_FATAL_FAILURE(Append(sid, BashToolUse(NewId("toolu_"), "echo still-here")));
  json results = WaitResults(sid, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_NE(ResultText(results[0]).find("still-here"), std::string::npos);
  size_t beats = Work(first.work_id)["heartbeats"].size();
  ASSERT_TRUE(
      WaitFor([&] { return Work(first.work_id)["heartbeats"].size() > beats; }, seconds(10)));
  json f = Work(first.work_id);
  EXPECT_EQ(f["state"], "active");
  EXPECT_EQ(f["stops"].size(), 0u);
  EXPECT_EQ(Records("session item finished").size(), 0u);
  auto sess = cp_->Session(sid);
  ASSERT_TRUE(sess.has_value());
  EXPECT_EQ((*sess)["streams"], 1);
}

TEST_F(PollerLifecycleTest, ConcurrencyTwoServesTwoSessionsInParallel) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  auto a = Enqueue({.session_id = NewId("sesn_par_a")});
  auto b = Enqueue({.session_id = NewId("sesn_par_b")});
  ASSERT_NO_FATAL_FAILURE(StartPoller({"--concurrency", "2"}));
  ASSERT_NO_FATAL_FAILURE(WaitStreams(a.session_id));
  ASSERT_NO_FATAL_FAILURE(WaitStreams(b.session_id));
  // Each tool prints when it started and ended; in parallel the two intervals overlap.
  const std::string cmd = "s=$(date +%s.%N); sleep 3; e=$(date +%s.%N); echo \"$s $e\"";
  auto t0 = Clock::now();
  ASSERT_NO_FATAL_FAILURE(Append(a.session_id, BashToolUse(NewId("toolu_"), cmd)));
  ASSERT_NO_FATAL_FAILURE(Append(b.session_id, BashToolUse(NewId("toolu_"), cmd)));
  json ra = WaitResults(a.session_id, 1);
  json rb = WaitResults(b.session_id, 1);
  auto elapsed = Clock::now() - t0;
  ASSERT_EQ(ra.size(), 1u);
  ASSERT_EQ(rb.size(), 1u);
  double sa = 0, ea = 0, sb = 0, eb = 0;
  std::istringstream(ResultText(ra[0])) >> sa >> ea;
  std::istringstream(ResultText(rb[0])) >> sb >> eb;
  ASSERT_GT(ea, sa) << ResultText(ra[0]);
  ASSERT_GT(eb, sb) << ResultText(rb[0]);
  EXPECT_LT(sa, eb) << "the tools ran one after the other";
  EXPECT_LT(sb, ea) << "the tools ran one after the other";
  // Loosely: one after the other would take at least 6 s.
  EXPECT_LT(elapsed, milliseconds(5500));
  EXPECT_EQ(Work(a.work_id)["state"], "active");
  EXPECT_EQ(Work(b.work_id)["state"], "active");
}

TEST_F(PollerLifecycleTest, ConcurrencyOneLeavesTheSecondItemQueuedUntilTheFirstEnds) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  auto a = Enqueue({.session_id = NewId("sesn_one_a")});
  auto b = Enqueue({.session_id = NewId("sesn_one_b")});
  ASSERT_NO_FATAL_FAILURE(StartPoller({"--concurrency", "1"}));
  ASSERT_NO_FATAL_FAILURE(WaitStreams(a.session_id));
  size_t polls = Requests({.endpoint = "poll"}).size();
  ASSERT_NO_FATAL_FAILURE(Append(a.session_id, BashToolUse(NewId("toolu_"), "sleep 1; echo a")));
  ASSERT_EQ(WaitResults(a.session_id, 1).size(), 1u);
  // While `a` is served the slot is full: no poll at all, and `b` was never delivered.
  EXPECT_EQ(Requests({.endpoint = "poll"}).size(), polls);
  json wb = Work(b.work_id);
  EXPECT_EQ(wb["state"], "queued");
  EXPECT_EQ(wb["deliveries"].size(), 0u);

  ASSERT_NO_FATAL_FAILURE(Append(a.session_id, Terminated()));
  EXPECT_EQ(WaitFinished(a.work_id), "terminated");
  ASSERT_NO_FATAL_FAILURE(WaitStreams(b.session_id));
  json wa = Work(a.work_id);
  wb = Work(b.work_id);
  ASSERT_EQ(wa["stops"].size(), 1u);
  ASSERT_EQ(wb["deliveries"].size(), 1u);
  EXPECT_GE(Seconds(wb["deliveries"][0]["time"]), Seconds(wa["stops"][0]["time"]));
}

// ---- signals
// -------------------------------------------------------------------------------------

class ShutdownSignalTest : public PollerLifecycleTest, public ::testing::WithParamInterface<int> {};

TEST_P(ShutdownSignalTest, CancelsTheRunningToolPostsItsErrorStopsTheItemAndExitsZero) {
  const int sig = GetParam();
  ASSERT_NO_FATAL_FAILURE(StartFake());
  auto work = Enqueue({.session_id = NewId("sesn_sig")});
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  ASSERT_NO_FATAL_FAILURE(WaitStreams(work.session_id));
  // A distinctive duration, so the test can find this very process.
  const std::string sleep_arg = "100." + std::to_string(getpid() % 1000) + std::to_string(sig);
  ASSERT_NO_FATAL_FAILURE(
      Append(work.session_id, BashToolUse(NewId("toolu_"), "touch started; sleep " + sleep_arg)));
  ASSERT_TRUE(
      WaitFor([&] { return std::filesystem::exists(Workspace(work.session_id) + "/started"); },
              seconds(20)));
  const std::string cmdline = std::string("sleep") + '\0' + sleep_arg + '\0';
  ASSERT_TRUE(WaitFor([&] { return ProcessWithCmdline(cmdline); }, seconds(10)));

  auto t0 = Clock::now();
  poller_->Signal(sig);
  auto code = poller_->Wait(seconds(30));
  ASSERT_TRUE(code.has_value()) << "srt-poller did not exit within 30 s of the signal";
  EXPECT_EQ(*code, 0);
  EXPECT_LT(Clock::now() - t0, seconds(20));

  json results = WaitResults(work.session_id, 1, seconds(1));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(ResultIsError(results[0]));
  EXPECT_NE(ResultText(results[0]).find("cancelled"), std::string::npos) << results.dump();
  json w = Work(work.work_id);
  EXPECT_EQ(w["state"], "stopped");
  ASSERT_EQ(w["stops"].size(), 1u);
  EXPECT_EQ(w["stops"][0]["force"], true);
  auto down = Records("shutting down");
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].value("reason", ""),
            std::string("signal ") + (sig == SIGTERM ? "TERM" : "INT"));
  auto finished = Records("session item finished");
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].value("outcome", ""), "stopped");
  auto exiting = Records("srt-poller exiting");
  ASSERT_EQ(exiting.size(), 1u);
  EXPECT_EQ(exiting[0].value("code", -1), 0);  // a JSON number, as slog writes it
  EXPECT_TRUE(WaitFor([&] { return !ProcessWithCmdline(cmdline); }, seconds(10)))
      << "the tool outlived srt-poller";
}

INSTANTIATE_TEST_SUITE_P(Signals, ShutdownSignalTest, ::testing::Values(SIGTERM, SIGINT),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string(p.param == SIGTERM ? "SIGTERM" : "SIGINT");
                         });

TEST_F(PollerLifecycleTest, SecondSigtermExitsAtOnce) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  auto work = Enqueue({.session_id = NewId("sesn_sig2")});
  ASSERT_NO_FATAL_FAILURE(StartPoller());
  ASSERT_NO_FATAL_FAILURE(WaitStreams(work.session_id));
  const std::string sleep_arg = "100." + std::to_string(getpid() % 1000) + "99";
  ASSERT_NO_FATAL_FAILURE(
      Append(work.session_id, BashToolUse(NewId("toolu_"), "touch started; sleep " + sleep_arg)));
  ASSERT_TRUE(
      WaitFor([&] { return std::filesystem::exists(Workspace(work.session_id) + "/started"); },
              seconds(20)));
  // The cancelled tool's result post hangs, so the first SIGTERM's wind-down is still going
  // when the second arrives.
  ASSERT_TRUE(
      cp_->AddFault({.endpoint = "events_post", .kind = "delay", .delay_ms = 20000}).has_value());
  poller_->Signal(SIGTERM);
  ASSERT_TRUE(poller_->WaitForLog("shutting down", seconds(10)));
  ASSERT_TRUE(cp_->WaitForRequest({.endpoint = "events_post"}, seconds(10)).has_value());
  auto t0 = Clock::now();
  poller_->Signal(SIGTERM);
  auto code = poller_->Wait(seconds(10));
  ASSERT_TRUE(code.has_value()) << "a second SIGTERM did not end srt-poller";
  EXPECT_EQ(*code, 128 + SIGTERM);
  EXPECT_LT(Clock::now() - t0, seconds(5));
  EXPECT_EQ(Records("second signal: exiting now (sandboxes die with us)").size(), 1u);
  const std::string cmdline = std::string("sleep") + '\0' + sleep_arg + '\0';
  EXPECT_TRUE(WaitFor([&] { return !ProcessWithCmdline(cmdline); }, seconds(10)))
      << "the tool outlived srt-poller";
  // Its session's cgroups are left for srt-poller's next start in this directory, which
  // removes them; the sweep here is that start's.
  EXPECT_NE(SweepPollerLeftovers(sessions_).find("removed a cgroup an earlier run left behind"),
            std::string::npos);
}

TEST_F(PollerLifecycleTest, SighupReloadsThePolicyAndAnInvalidOneIsRejected) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  const std::string policy = dir_ + "/policy.json";
  WriteFileText(policy, PolicyJson({}), 0644);
  auto work = Enqueue({.session_id = NewId("sesn_hup")});
  ASSERT_NO_FATAL_FAILURE(StartPoller({"--policy", policy}));
  ASSERT_NO_FATAL_FAILURE(WaitStreams(work.session_id));

  WriteFileText(policy, PolicyJson({"example.com"}), 0644);
  poller_->Signal(SIGHUP);
  auto reloaded = WaitForRecord("session policy reloaded", {}, seconds(10));
  ASSERT_TRUE(reloaded.has_value());
  EXPECT_EQ(reloaded->value("policy", ""), policy);
  EXPECT_EQ(Records("could not update the session's network").size(), 0u);

  WriteFileText(policy, "{\"network\": {\"allowedDomains\": [", 0644);
  poller_->Signal(SIGHUP);
  auto failed = WaitForRecord("policy reload failed; keeping the current policy", {}, seconds(10));
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->value("level", ""), "ERROR");
  EXPECT_NE(failed->value("error", "").find(policy), std::string::npos) << failed->dump();
  EXPECT_EQ(Records("session policy reloaded").size(), 1u);

  // Still serving.
  ASSERT_NO_FATAL_FAILURE(Append(work.session_id, BashToolUse(NewId("toolu_"), "echo alive")));
  json results = WaitResults(work.session_id, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_NE(ResultText(results[0]).find("alive"), std::string::npos);
  EXPECT_TRUE(poller_->running());
}

// ---- the command line
// ----------------------------------------------------------------------------

TEST_F(PollerLifecycleTest, CheckSaysReadyOnThisMachine) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  std::vector<std::string> args = BaseArgs();
  args.push_back("--check");
  Run r = RunPoller(args);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok   the API at " + cp_->base_url() +
                       " accepts the environment key: queue depth 0, 0 pending"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("srt-poller is ready"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  // One read-only request, with the key: nothing claimed, acked or stopped.
  auto recorded = cp_->Requests();
  ASSERT_TRUE(recorded.has_value()) << recorded.error().message();
  const json& requests = *recorded;
  ASSERT_EQ(requests.size(), 1u) << requests.dump();
  EXPECT_EQ(requests[0]["endpoint"], "stats");
  EXPECT_EQ(requests[0]["auth"], "env_key");
}

// A revoked or mistyped key, and an API that cannot be reached, are told apart by --check, not
// left to the first poll of the running service.
TEST_F(PollerLifecycleTest, CheckNamesARefusedKeyAndAnUnreachableApi) {
  ASSERT_NO_FATAL_FAILURE(StartFake());
  WriteFileText(key_file_, "sk-ant-oat01-revoked", 0600);
  std::vector<std::string> args = BaseArgs();
  args.push_back("--check");
  Run refused = RunPoller(args);
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.out.find("FAIL the API at " + cp_->base_url() +
                             " accepts the environment key: the key was refused (401)"),
            std::string::npos)
      << refused.out;
  EXPECT_EQ(refused.out.find("sk-ant-oat01-revoked"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("srt-poller is NOT ready"), std::string::npos) << refused.out;

  const std::string base_url = cp_->base_url();
  cp_.reset();  // nothing listens there now
  Run unreachable = RunPoller(args);
  EXPECT_EQ(unreachable.code, 1);
  EXPECT_NE(unreachable.out.find("FAIL the API at " + base_url +
                                 " accepts the environment key: the API cannot be reached"),
            std::string::npos)
      << unreachable.out;
}

TEST_F(PollerLifecycleTest, KeyFileReadableByOthersIsRefusedNamingTheFile) {
  WriteFileText(key_file_, "sk-ant-oat01-check", 0644);
  std::vector<std::string> args = BaseArgs();
  args.push_back("--check");
  Run check = RunPoller(args);
  EXPECT_NE(check.code, 0);
  EXPECT_NE(check.out.find("FAIL environment key file '" + key_file_ + "'"), std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("srt-poller is NOT ready"), std::string::npos) << check.out;

  Run run = RunPoller(BaseArgs());
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find(key_file_), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("mode 0644"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("sk-ant-oat01-check"), std::string::npos);
}

TEST_F(PollerLifecycleTest, BadFlagsExitTwoNamingTheFlag) {
  WriteFileText(key_file_, "sk-ant-oat01-flags", 0600);
  struct Case {
    std::vector<std::string> extra;
    std::string needle;
  };
  for (const Case& c : std::vector<Case>{
           {{"--bogus-flag"}, "'--bogus-flag'"},
           {{"--concurrency", "0"}, "--concurrency"},
           {{"--max-idle", "5x"}, "--max-idle"},
           {{"--log-format", "xml"}, "--log-format"},
           {{"--workspace-cleanup", "always"}, "--workspace-cleanup"},
           {{"--sessions-dir", "relative/dir"}, "--sessions-dir"},
       }) {
    std::vector<std::string> args = BaseArgs();
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    Run r = RunPoller(args);
    EXPECT_EQ(r.code, 2) << c.needle << ": " << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << r.err;
    EXPECT_TRUE(r.err.starts_with("srt-poller: ")) << r.err;
  }
  Run missing = RunPoller({"--environment-key-file", key_file_, "--sessions-dir", sessions_});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("--environment-id"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace srt::testing
