// SPDX-License-Identifier: Apache-2.0
// srt-poller-bench: what srt-poller adds between the control plane and a tool call, measured
// against the loopback fake control plane (tests/poller/fake_control_plane.py) with real
// sandboxes: (1) claim -> first result latency, (2) per-tool overhead in a running session,
// (3) how many concurrent sessions this machine serves.
//
// Every latency is taken on the fake's clock (CLOCK_REALTIME in the fake, which the sandbox
// shares), from the fake's own records: the hand-out time of a work item (the fake's delivery
// record, taken when the blocked poll finds the item), the processed_at of an appended
// agent.tool_use, and the arrival time of each /v1 request (recorded once its body is read).
// Inside the shell, `$EPOCHREALTIME` splits a bash call into dispatch, the command and the way
// back. The bench's own reaction time (how fast it notices a result) is never in a figure.
//
// Targets (issue 4) are printed as PASS/MISS for information; the program exits non-zero only
// when it cannot measure.
#include <fcntl.h>
#include <signal.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/client.h"
#include "api/http.h"
#include "base/unique_fd.h"
#include "bench_util.h"
#include "poller/support/fake_control_plane.h"
#include "poller/support/poller_process.h"

namespace {

using nlohmann::json;
using srt::UniqueFd;
using srt::bench::ClockSeconds;
using srt::bench::Die;
using srt::bench::LoadAverage;
using srt::bench::ProcSample;
using srt::bench::ReadFile;
using srt::bench::SelfCpuSeconds;
using srt::bench::Stats;
using srt::bench::StatusKib;
using srt::bench::Summarize;
using srt::bench::Verdict;
using srt::testing::FakeControlPlane;
using srt::testing::PollerProcess;
using std::chrono::milliseconds;

constexpr double kTargetClaimMs = 30;  // issue 12 (50 in issue 4)
constexpr double kTargetToolMs = 10;
constexpr double kKneeP90Ms = 100;   // part 3: the K where p90 tool latency passes this
constexpr int kSessionsPerSlot = 4;  // part 3 runs max(4K, 8) sessions at --concurrency K
constexpr int kMinSessions = 8;
constexpr int kWarmupCalls = 3;             // part 2: calls before the measured ones
constexpr double kPendingPollMaxAge = 0.7;  // s; the fake answers an empty poll after 0.999 s
constexpr size_t kWriteBytes = 1024;

// ---------------------------------------------------------------------------------------------
// Process-wide state, torn down at exit (also by Die()).

std::unique_ptr<PollerProcess> g_poller;
std::unique_ptr<FakeControlPlane> g_fake;

void StopPoller() {
  if (!g_poller) return;
  if (g_poller->running()) {
    g_poller->Signal(SIGTERM);
    (void)g_poller->Wait(milliseconds(20'000));
  }
  g_poller.reset();  // SIGKILL if it is still there, and reap
}

void Cleanup() {
  StopPoller();
  g_fake.reset();
  srt::bench::RemoveScratch();
}

// Die()'s hook: what srt-poller logged last, after the bench's message.
void PrintPollerLogTail() {
  if (g_poller) {
    std::string logs = g_poller->Logs();
    if (logs.size() > 4000) logs = "...\n" + logs.substr(logs.size() - 4000);
    std::fprintf(stderr, "srt-poller's log (tail):\n%s\n", logs.c_str());
  }
}

void CheckStop() {
  if (srt::bench::StopRequested()) Die("interrupted");
}

template <typename T>
T Must(srt::Result<T> r, const std::string& what) {
  if (!r) Die(what + ": " + r.error().message());
  return std::move(*r);
}

void Must(srt::Result<void> r, const std::string& what) {
  if (!r) Die(what + ": " + r.error().message());
}

// ---------------------------------------------------------------------------------------------
// Options

struct Options {
  int rounds = 10;
  int calls = 50;
  int session_calls = 10;
  int http_requests = 200;
  std::vector<int> concurrency = {1, 2, 4, 8, 16};
  bool keep_going = false;
  std::string poller;
  std::string workdir = "/var/tmp";
  std::string disk;  // srt-poller's --disk; empty: its default
};

constexpr std::string_view kUsage =
    "Usage: srt-poller-bench [OPTIONS]\n"
    "\n"
    "Runs srt-poller (real sandboxes) against the loopback fake control plane and measures:\n"
    "  1. claim -> first result: a work item whose session already holds a bash `true`, handed\n"
    "     to an idle, polling srt-poller; from the hand-out to the result POST (target 50 ms)\n"
    "  2. per-tool overhead in one session: bash `true`, bash `sleep 0.1`, write and read, from\n"
    "     the agent.tool_use to the result POST, minus the command's own time (target 10 ms)\n"
    "  3. concurrency: --concurrency K for each K, max(4K, 8) sessions of --session-calls bash\n"
    "     `true` each, then K sessions held open for their memory\n"
    "  4. HTTP connections: srt-poller's HTTP client against the fake over TLS, requests in\n"
    "     interleaved batches with connections kept and with a new connection per request\n"
    "\n"
    "  --rounds N            rounds of part 1 (default 10)\n"
    "  --calls N             calls of each kind in part 2 (default 50)\n"
    "  --concurrency LIST    comma-separated K values for part 3 (default 1,2,4,8,16;\n"
    "                        'none' skips part 3)\n"
    "  --session-calls N     bash calls per session in part 3 (default 10)\n"
    "  --http-requests N     requests of each kind in part 4 (default 200; 0 skips part 4)\n"
    "  --keep-going          part 3: run every K even past the first one whose p90 tool latency\n"
    "                        exceeds 100 ms or that has errors; parts 1-2: count a failed round\n"
    "                        or call and carry on instead of stopping\n"
    "  --poller PATH         srt-poller (default: next to this program; srt-toolbox and\n"
    "                        srt-init must be next to it)\n"
    "  --workdir DIR         where the scratch directory is created (default /var/tmp)\n"
    "  --disk SIZE           srt-poller's --disk (default: its own; 0: plain directories)\n";

Options ParseOptions(int argc, char** argv) {
  using srt::bench::ParseCount;
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&] { return srt::bench::OptionValue(argc, argv, i); };
    if (a == "--help" || a == "-h") {
      srt::bench::PrintUsageAndExit(kUsage);
    } else if (a == "--rounds") {
      o.rounds = ParseCount(a, value(), 1);
    } else if (a == "--calls") {
      o.calls = ParseCount(a, value(), 1);
    } else if (a == "--http-requests") {
      o.http_requests = ParseCount(a, value(), 0);
    } else if (a == "--session-calls") {
      o.session_calls = ParseCount(a, value(), 2, 1000);
    } else if (a == "--concurrency") {
      o.concurrency.clear();
      std::string list = value();
      if (list != "none") {
        size_t start = 0;
        while (start <= list.size()) {
          size_t comma = list.find(',', start);
          if (comma == std::string::npos) comma = list.size();
          std::string one = list.substr(start, comma - start);
          o.concurrency.push_back(ParseCount("--concurrency", one.c_str(), 1, 256));
          start = comma + 1;
        }
      }
    } else if (a == "--keep-going") {
      o.keep_going = true;
    } else if (a == "--poller") {
      o.poller = value();
    } else if (a == "--workdir") {
      o.workdir = value();
    } else if (a == "--disk") {
      o.disk = value();
    } else {
      srt::bench::DieUnknownOption(a);
    }
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Clocks, files, /proc

// Wall-clock seconds: the fake's time.time() and the sandbox's $EPOCHREALTIME use this clock.
double WallNow() { return ClockSeconds(CLOCK_REALTIME); }

// The fake's "2026-01-02T03:04:05.123456Z" (processed_at, created_at); NAN if malformed.
double ParseRfc3339(const std::string& s) {
  tm t{};
  int micros = 0;
  if (std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour,
                  &t.tm_min, &t.tm_sec, &micros) != 7) {
    return NAN;
  }
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<double>(timegm(&t)) + micros / 1e6;
}

// CPU seconds of `pid` (utime + stime) plus those of its reaped children (cutime + cstime):
// for srt-poller that covers every sandbox process once its session has ended.
double CpuSeconds(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat", 2048);
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return NAN;
  std::vector<std::string> f;
  size_t at = close + 2;
  while (at < stat.size() && f.size() < 20) {
    size_t sp = stat.find(' ', at);
    if (sp == std::string::npos) sp = stat.size();
    f.push_back(stat.substr(at, sp - at));
    at = sp + 1;
  }
  if (f.size() < 16) return NAN;
  // f[0] is the state (field 3): utime is field 14, i.e. f[11]; stime f[12]; cutime f[13]...
  double ticks = 0;
  for (int i = 11; i <= 14; ++i) ticks += std::strtod(f[static_cast<size_t>(i)].c_str(), nullptr);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The process `root` and all its descendants with their Pss (smaps_rollup), root first.
std::vector<ProcSample> SampleTree(pid_t root) {
  return srt::bench::SampleTree(root, srt::bench::kSamplePss);
}

// A process without smaps_rollup (gone meanwhile) counts 0.
long PssKib(const ProcSample& p) { return std::max(0L, p.pss_kib); }

long SumPss(const std::vector<ProcSample>& tree) {
  long sum = 0;
  for (const ProcSample& p : tree) sum += PssKib(p);
  return sum;
}

std::string Mib(double kib) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", kib / 1024);
  return buf;
}

std::string TreeByName(const std::vector<ProcSample>& tree) {
  std::map<std::string, std::pair<int, long>> by;
  for (const ProcSample& p : tree) {
    auto& [count, kib] = by[p.comm];
    ++count;
    kib += PssKib(p);
  }
  std::string out;
  for (const auto& [name, v] : by) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s%s x%d %s", out.empty() ? "" : ", ", name.c_str(), v.first,
                  Mib(static_cast<double>(v.second)).c_str());
    out += buf;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Statistics

// "min median p90 max" in ms, fixed widths.
std::string Row(const Stats& s) {
  char buf[96];
  if (s.n == 0) return "       -        -        -        -";
  std::snprintf(buf, sizeof buf, "%8.2f %8.2f %8.2f %8.2f", s.min, s.median, s.p90, s.max);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Talking to the fake

FakeControlPlane& Fake() { return *g_fake; }

json ToolUse(const std::string& id, const std::string& name, json input) {
  return {{"id", id},
          {"type", "agent.tool_use"},
          {"name", name},
          {"input", std::move(input)},
          {"evaluated_permission", "allow"}};
}

json Bash(const std::string& command) { return {{"command", command}}; }

// `command` between two reads of $EPOCHREALTIME; the output ends in "@T <start> <end>".
std::string Timed(const std::string& command) {
  return "__t0=$EPOCHREALTIME; " + command + "; __t1=$EPOCHREALTIME; echo \"@T $__t0 $__t1\"";
}

// The (start, end) that a Timed() command printed, NAN if absent.
std::pair<double, double> ShellTimes(const std::string& text) {
  double t0 = NAN, t1 = NAN;
  size_t at = text.find("@T ");
  if (at != std::string::npos && std::sscanf(text.c_str() + at, "@T %lf %lf", &t0, &t1) != 2) {
    t0 = t1 = NAN;
  }
  return {t0, t1};
}

// Appends one event; returns its processed_at on the fake's clock.
srt::Result<double> Append(const std::string& session_id, const json& event) {
  auto stored = Fake().AppendEvents(session_id, event);
  if (!stored) return stored.error();
  if (!stored->is_array() || stored->empty() || !(*stored)[0].contains("processed_at")) {
    return srt::MakeError(srt::Errc::kProtocol, "append: unexpected answer " + stored->dump());
  }
  return ParseRfc3339((*stored)[0]["processed_at"].get<std::string>());
}

// The session's results once it has at least `count` (GET .../results?wait_count: the fake
// answers as soon as the count is reached, so the bench reacts like an agent would).
srt::Result<json> WaitResults(const std::string& session_id, size_t count,
                              std::chrono::seconds timeout) {
  const double deadline = WallNow() + static_cast<double>(timeout.count());
  for (;;) {
    if (srt::bench::StopRequested()) return srt::MakeError(srt::Errc::kInternal, "interrupted");
    double left = deadline - WallNow();
    int wait_ms = static_cast<int>(std::clamp(left * 1000, 1.0, 5000.0));
    auto r = Fake().Control("GET", "/_fake/sessions/" + session_id +
                                       "/results?wait_count=" + std::to_string(count) +
                                       "&timeout_ms=" + std::to_string(wait_ms));
    if (!r) return r.error();
    json data = (*r)["data"];
    if (data.size() >= count) return data;
    if (left <= 0) {
      return srt::MakeError(srt::Errc::kInternal,
                            "session '" + session_id + "': " + std::to_string(data.size()) +
                                " results after " + std::to_string(timeout.count()) +
                                " s, expected " + std::to_string(count));
    }
  }
}

// The result event for `tool_use_id` among `results`, or null.
const json* FindResult(const json& results, const std::string& tool_use_id) {
  for (const json& r : results) {
    const json& ev = r["event"];
    if (ev.value("tool_use_id", "") == tool_use_id) return &r;
  }
  return nullptr;
}

std::string ResultText(const json& result) {
  std::string out;
  for (const json& block : result["event"].value("content", json::array())) {
    if (block.value("type", "") == "text") out += block.value("text", "");
  }
  return out;
}

// Arrival time of each events_post request of the session, by request seq.
std::map<int64_t, double> PostArrivals(const std::string& session_id) {
  auto reqs = Must(Fake().Requests({.endpoint = "events_post", .session_id = session_id}),
                   "requests of '" + session_id + "'");
  std::map<int64_t, double> out;
  for (const json& r : reqs) out[r["seq"].get<int64_t>()] = r["time"].get<double>();
  return out;
}

// Waits until srt-poller sits in a blocking poll that the fake received less than
// kPendingPollMaxAge ago (srt-poller polls with block_ms=999, then sleeps 1-3 s when empty).
bool WaitForPendingPoll(int64_t& since, std::chrono::seconds timeout) {
  const double deadline = WallNow() + static_cast<double>(timeout.count());
  while (WallNow() < deadline) {
    CheckStop();
    auto reqs = Must(Fake().Requests({.endpoint = "poll", .since_seq = since}), "poll requests");
    int64_t first_pending = 0;
    for (const json& r : reqs) {
      int64_t seq = r["seq"].get<int64_t>();
      if (r["status"].is_null()) {
        if (first_pending == 0) first_pending = seq;
        if (WallNow() - r["time"].get<double>() < kPendingPollMaxAge) return true;
      } else if (first_pending == 0) {
        since = std::max(since, seq);
      }
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// srt-poller

struct Setup {
  Options opt;
  std::string poller;
  std::string key_file;
  std::string sessions_dir;
};

void StartPoller(const Setup& s, int concurrency) {
  StopPoller();
  std::vector<std::string> args = {"--environment-id",
                                   Fake().environment_id(),
                                   "--environment-key-file",
                                   s.key_file,
                                   "--base-url",
                                   Fake().base_url(),
                                   "--sessions-dir",
                                   s.sessions_dir,
                                   "--max-idle",
                                   "60s",
                                   "--workspace-cleanup",
                                   "terminated",
                                   "--concurrency",
                                   std::to_string(concurrency)};
  if (!s.opt.disk.empty()) {
    args.push_back("--disk");
    args.push_back(s.opt.disk);
  }
  g_poller = Must(PollerProcess::Start(args, {}, s.poller), "start srt-poller");
  if (!g_poller->WaitForLog("polling for work", milliseconds(60'000))) {
    Die("srt-poller did not start polling within 60 s");
  }
}

size_t PollerErrorLines() { return g_poller ? g_poller->CountLog("level=ERROR") : 0; }

// Ends a session (session.status_terminated: the runner stops at once and srt-poller
// force-stops the item) and waits for the item to be stopped.
srt::Result<void> EndSession(const std::string& session_id, const std::string& work_id) {
  auto a = Append(session_id, json{{"type", "session.status_terminated"}});
  if (!a) return a.error();
  auto w = Fake().WaitForWorkState(work_id, "stopped", milliseconds(30'000));
  if (!w) return w.error();
  return {};
}

// ---------------------------------------------------------------------------------------------
// 1. claim -> first result

struct Milestone {
  std::string endpoint;
  std::string label;
};

const std::vector<Milestone> kMilestones = {
    {"ack", "ack"},
    {"heartbeat", "first heartbeat"},
    {"session_get", "GET session (skills)"},
    {"stream", "event stream opened"},
    {"events_list", "history read"},
    {"shell", "the shell starts `true`"},
    {"events_post", "result POST"},
};

struct Verdicts {
  std::vector<std::string> lines;
};

void ClaimLatency(const Setup& s, Verdicts& v) {
  const Options& opt = s.opt;
  std::printf(
      "1. claim -> first result: %d rounds, --concurrency 1; each item's session already holds\n"
      "   a bash `true` (timed in the shell) in its history; the item is enqueued while\n"
      "   srt-poller sits in a blocking poll. From the fake's hand-out of the item (its\n"
      "   delivery record) to the arrival of the result POST at the fake.\n",
      opt.rounds);
  std::fflush(stdout);
  std::vector<double> handout_to_result, ack_to_result, enqueue_to_handout;
  std::map<std::string, std::vector<double>> offsets;
  int failures = 0;
  int64_t since = 0;
  // CPU of each side over the rounds, so that the figure is known to be srt-poller's (with its
  // sandboxes, reaped by the time a session ends) and not the fake's or this program's.
  const pid_t poller = g_poller->pid();
  const double cpu_poller0 = CpuSeconds(poller);
  const double cpu_fake0 = CpuSeconds(Fake().pid());
  const double cpu_bench0 = SelfCpuSeconds();
  for (int round = 1; round <= opt.rounds; ++round) {
    CheckStop();
    const std::string sid = "sesn_claim_" + std::to_string(round);
    Must(Append(sid, ToolUse("tu_claim_" + std::to_string(round), "bash", Bash(Timed("true")))),
         "append to '" + sid + "'");
    if (!WaitForPendingPoll(since, std::chrono::seconds(30))) {
      Die("srt-poller did not poll within 30 s");
    }
    auto work = Must(Fake().Enqueue({.session_id = sid}), "enqueue");
    auto results = WaitResults(sid, 1, std::chrono::seconds(60));
    if (!results) {
      ++failures;
      std::printf("   round %d: no result: %s\n", round, results.error().message().c_str());
      if (!opt.keep_going) Die("round " + std::to_string(round) + " failed");
    }
    auto state = Must(Fake().WorkState(work.work_id), "work state");
    auto reqs = Must(Fake().Requests({.session_id = sid}), "requests");
    if (auto e = EndSession(sid, work.work_id); !e) {
      ++failures;
      std::printf("   round %d: session did not end: %s\n", round, e.error().message().c_str());
      if (!opt.keep_going) Die("round " + std::to_string(round) + " failed");
    }
    if (!results || state["deliveries"].empty()) continue;
    const double handout = state["deliveries"][0]["time"].get<double>();
    const double enqueued = ParseRfc3339(work.work.value("created_at", ""));
    std::map<std::string, double> first;
    for (const json& r : reqs) {
      std::string ep = r.value("endpoint", "");
      double t = r["time"].get<double>();
      if (t >= handout && !first.contains(ep)) first[ep] = t;
    }
    if (!first.contains("events_post")) continue;
    if (auto [t0, t1] = ShellTimes(ResultText((*results)[0])); !std::isnan(t0)) first["shell"] = t0;
    const double result = first["events_post"];
    handout_to_result.push_back((result - handout) * 1000);
    if (first.contains("ack")) ack_to_result.push_back((result - first["ack"]) * 1000);
    enqueue_to_handout.push_back((handout - enqueued) * 1000);
    for (const Milestone& m : kMilestones) {
      if (first.contains(m.endpoint)) {
        offsets[m.endpoint].push_back((first[m.endpoint] - handout) * 1000);
      }
    }
  }
  const double rounds = std::max(1, opt.rounds);
  const double cpu_poller = (CpuSeconds(poller) - cpu_poller0) * 1000 / rounds;
  const double cpu_fake = (CpuSeconds(Fake().pid()) - cpu_fake0) * 1000 / rounds;
  const double cpu_bench = (SelfCpuSeconds() - cpu_bench0) * 1000 / rounds;
  Stats claim = Summarize(handout_to_result);
  std::printf("                               n      min   median      p90      max   (ms)\n");
  std::printf("   hand-out -> result POST   %3zu %s\n", claim.n, Row(claim).c_str());
  Stats ack = Summarize(ack_to_result);
  std::printf("   ack -> result POST        %3zu %s\n", ack.n, Row(ack).c_str());
  Stats enq = Summarize(enqueue_to_handout);
  std::printf("   enqueue -> hand-out       %3zu %s   (the fake waking the blocked poll)\n", enq.n,
              Row(enq).c_str());
  if (failures) std::printf("   failed rounds: %d\n", failures);
  std::printf(
      "   CPU per round (whole round: append, enqueue, session start, result, session end):\n"
      "     srt-poller with its sandboxes %.1f ms, fake control plane %.1f ms, bench %.1f ms\n",
      cpu_poller, cpu_fake, cpu_bench);
  std::printf(
      "   where the time goes: median arrival at the fake after the hand-out (each request's\n"
      "   arrival; the heartbeat thread runs beside the session's start)\n");
  std::vector<std::pair<double, std::string>> order;
  for (const Milestone& m : kMilestones) {
    if (offsets.contains(m.endpoint)) {
      order.emplace_back(Summarize(offsets[m.endpoint]).median, m.label);
    }
  }
  std::sort(order.begin(), order.end());
  double prev = 0;
  for (const auto& [t, label] : order) {
    std::printf("     %8.2f ms  (+%7.2f)  %s\n", t, t - prev, label.c_str());
    prev = t;
  }
  std::printf("\n");
  if (claim.n) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "claim -> first result   median %.2f ms, p90 %.2f ms, max %.2f ms   target <= "
                  "%.0f ms (median): %s%s",
                  claim.median, claim.p90, claim.max, kTargetClaimMs,
                  Verdict(claim.median <= kTargetClaimMs),
                  claim.p90 <= kTargetClaimMs ? " (p90 too)" : " (p90 misses)");
    v.lines.push_back(buf);
  } else {
    v.lines.push_back("claim -> first result   no figure (every round failed)");
  }
}

// ---------------------------------------------------------------------------------------------
// 2. per-tool overhead

struct Kind {
  std::string label;
  std::string tool;
  json input;
  bool timed = false;  // the command prints "@T <start> <end>" from $EPOCHREALTIME
};

struct Call {
  size_t kind = 0;
  std::string id;
  double appended = NAN;
  int64_t seq = 0;
  std::string text;
  bool is_error = false;
};

// Runs one tool call in a running session: append, wait for its result. `n_results` counts the
// session's results so far (updated).
srt::Result<Call> RunCall(const std::string& sid, size_t kind, const json& tool_use,
                          size_t& n_results) {
  Call c;
  c.kind = kind;
  c.id = tool_use["id"].get<std::string>();
  auto appended = Append(sid, tool_use);
  if (!appended) return appended.error();
  c.appended = *appended;
  auto results = WaitResults(sid, n_results + 1, std::chrono::seconds(60));
  if (!results) return results.error();
  n_results = results->size();
  const json* r = FindResult(*results, c.id);
  if (r == nullptr) {
    return srt::MakeError(srt::Errc::kProtocol, "no result for '" + c.id + "'");
  }
  c.seq = (*r)["request_seq"].get<int64_t>();
  c.text = ResultText(*r);
  c.is_error = (*r)["event"].value("is_error", false);
  return c;
}

void ToolOverhead(const Setup& s, Verdicts& v) {
  const Options& opt = s.opt;
  const std::string content(kWriteBytes, 'x');
  const std::vector<Kind> kinds = {
      {"bash `true`", "bash", Bash("true"), false},
      {"bash `true`, timed in shell", "bash", Bash(Timed("true")), true},
      {"bash `sleep 0.1`, timed", "bash", Bash(Timed("sleep 0.1")), true},
      {"write 1 KiB", "write", json{{"file_path", "/workspace/bench.txt"}, {"content", content}},
       false},
      {"read 1 KiB", "read", json{{"file_path", "/workspace/bench.txt"}}, false},
  };
  std::printf(
      "2. per-tool overhead: one session, %d calls of each kind, interleaved (order rotates);\n"
      "   from the agent.tool_use's processed_at to the result POST's arrival at the fake\n",
      opt.calls);
  std::fflush(stdout);
  const std::string sid = "sesn_tools";
  Must(Append(sid, ToolUse("tu_warm_0", "write", kinds[3].input)), "append");
  auto work = Must(Fake().Enqueue({.session_id = sid}), "enqueue");
  size_t n_results = 0;
  Must(WaitResults(sid, 1, std::chrono::seconds(60)), "the first call of the session");
  n_results = 1;
  for (int i = 1; i <= kWarmupCalls; ++i) {
    for (size_t k = 0; k < kinds.size(); ++k) {
      json use = ToolUse("tu_warm_" + std::to_string(i) + "_" + std::to_string(k), kinds[k].tool,
                         kinds[k].input);
      Must(RunCall(sid, k, use, n_results), "warm-up call");
    }
  }
  std::vector<Call> calls;
  int failures = 0;
  for (int i = 0; i < opt.calls; ++i) {
    for (size_t j = 0; j < kinds.size(); ++j) {
      CheckStop();
      size_t k = (j + static_cast<size_t>(i)) % kinds.size();
      json use = ToolUse("tu_" + std::to_string(i) + "_" + std::to_string(k), kinds[k].tool,
                         kinds[k].input);
      auto c = RunCall(sid, k, use, n_results);
      if (!c) {
        ++failures;
        std::printf("   call %s failed: %s\n", use["id"].get<std::string>().c_str(),
                    c.error().message().c_str());
        if (!opt.keep_going) Die("a tool call failed");
        n_results = Must(Fake().Results(sid), "results").size();
        continue;
      }
      calls.push_back(std::move(*c));
    }
  }
  std::map<int64_t, double> arrivals = PostArrivals(sid);
  if (auto e = EndSession(sid, work.work_id); !e) {
    std::printf("   the session did not end: %s\n", e.error().message().c_str());
  }

  struct PerKind {
    std::vector<double> total, command, overhead, dispatch, back;
    int errors = 0;
  };
  std::vector<PerKind> per(kinds.size());
  for (const Call& c : calls) {
    PerKind& p = per[c.kind];
    if (c.is_error) ++p.errors;
    auto it = arrivals.find(c.seq);
    if (it == arrivals.end()) continue;
    const double total = (it->second - c.appended) * 1000;
    p.total.push_back(total);
    double command = 0;
    if (kinds[c.kind].timed) {
      auto [t0, t1] = ShellTimes(c.text);
      if (std::isnan(t0) || std::isnan(t1)) {
        ++p.errors;
        continue;
      }
      command = (t1 - t0) * 1000;
      p.command.push_back(command);
      p.dispatch.push_back((t0 - c.appended) * 1000);
      p.back.push_back((it->second - t1) * 1000);
    }
    p.overhead.push_back(total - command);
  }
  std::printf("   %-30s %-9s    min   median      p90      max   (ms)\n", "", "");
  for (size_t k = 0; k < kinds.size(); ++k) {
    const PerKind& p = per[k];
    std::printf("   %-30s %-9s %s\n", kinds[k].label.c_str(), "total",
                Row(Summarize(p.total)).c_str());
    if (kinds[k].timed) {
      std::printf("   %-30s %-9s %s\n", "", "command", Row(Summarize(p.command)).c_str());
      std::printf("   %-30s %-9s %s\n", "", "overhead", Row(Summarize(p.overhead)).c_str());
      std::printf("   %-30s %-9s %s   tool_use -> shell starts it\n", "", "  in",
                  Row(Summarize(p.dispatch)).c_str());
      std::printf("   %-30s %-9s %s   shell done -> result POST arrives\n", "", "  out",
                  Row(Summarize(p.back)).c_str());
    }
    if (p.errors) std::printf("   %-30s %d results were errors or unparsable\n", "", p.errors);
  }
  if (failures) std::printf("   failed calls: %d\n", failures);
  std::printf(
      "   (for `true` and read/write the command's own time is ~0: total = overhead; `timed`\n"
      "   wraps the command in $EPOCHREALTIME reads: overhead = total - command)\n\n");

  Stats t = Summarize(per[1].overhead);
  Stats sl = Summarize(per[2].overhead);
  Stats w = Summarize(per[3].total);
  Stats r = Summarize(per[4].total);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "per-tool overhead       bash true median %.2f / p90 %.2f / max %.2f ms, "
                "beside sleep 0.1 median %.2f ms   target <= %.0f ms (median): %s%s",
                t.median, t.p90, t.max, sl.median, kTargetToolMs,
                Verdict(t.n && t.median <= kTargetToolMs),
                t.p90 <= kTargetToolMs ? " (p90 too)" : " (p90 misses)");
  v.lines.push_back(buf);
  std::snprintf(buf, sizeof buf,
                "                        write 1 KiB median %.2f ms, read 1 KiB median %.2f ms",
                w.median, r.median);
  v.lines.push_back(buf);
}

// ---------------------------------------------------------------------------------------------
// 3. concurrency

struct SessionRun {
  std::string sid;
  std::string work_id;
  std::vector<double> appended;  // processed_at of each tool_use
  std::vector<int64_t> seqs;     // the result POST's request seq of each
  bool hold = false;             // leave the session open after the calls (the caller ends it)
  int is_error = 0;
  std::string error;
};

void DriveSession(SessionRun& run, int calls) {
  auto fail = [&](const std::string& what, const srt::Error& e) {
    run.error = what + ": " + e.message();
  };
  auto first = Append(run.sid, ToolUse(run.sid + "_0", "bash", Bash("true")));
  if (!first) return fail("append", first.error());
  run.appended.push_back(*first);
  auto work = Fake().Enqueue({.session_id = run.sid});
  if (!work) return fail("enqueue", work.error());
  run.work_id = work->work_id;
  for (int i = 0; i < calls; ++i) {
    if (i > 0) {
      auto a = Append(run.sid, ToolUse(run.sid + "_" + std::to_string(i), "bash", Bash("true")));
      if (!a) return fail("append", a.error());
      run.appended.push_back(*a);
    }
    // The first call waits for a free slot too.
    auto results =
        WaitResults(run.sid, static_cast<size_t>(i) + 1, std::chrono::seconds(i == 0 ? 300 : 60));
    if (!results) return fail("call " + std::to_string(i), results.error());
    const json* r = FindResult(*results, run.sid + "_" + std::to_string(i));
    if (r == nullptr) {
      run.error = "no result for call " + std::to_string(i);
      return;
    }
    run.seqs.push_back((*r)["request_seq"].get<int64_t>());
    if ((*r)["event"].value("is_error", false)) ++run.is_error;
  }
  if (run.hold) return;
  auto end = Append(run.sid, json{{"type", "session.status_terminated"}});
  if (!end) return fail("terminate", end.error());
}

struct Level {
  int k = 0;
  int sessions = 0;
  double wall_s = 0;
  Stats tool;
  Stats claim;
  long idle_pss = 0;
  long held_pss = 0;
  int held_live = 0;
  std::string held_by_name;
  double cpu_poller = 0, cpu_fake = 0, cpu_bench = 0;
  double machine_busy = NAN;  // share of all CPUs busy (every process on the machine)
  int errors = 0;
  std::string first_error;
};

// Busy and total jiffies of all CPUs (/proc/stat's first line).
std::pair<double, double> MachineJiffies() {
  std::string stat = ReadFile("/proc/stat", 4096);
  if (!stat.starts_with("cpu ")) return {NAN, NAN};
  std::vector<double> f;
  const char* p = stat.c_str() + 4;
  char* end = nullptr;
  for (int i = 0; i < 8; ++i, p = end) {
    f.push_back(std::strtod(p, &end));
    if (end == p) return {NAN, NAN};
  }
  double total = 0;
  for (double x : f) total += x;
  return {total - f[3] - f[4], total};  // idle and iowait are not busy
}

std::vector<std::thread> StartDrivers(std::vector<SessionRun>& runs, int calls) {
  std::vector<std::thread> drivers;
  for (SessionRun& r : runs) drivers.emplace_back([&r, calls] { DriveSession(r, calls); });
  return drivers;
}

Level RunLevel(const Setup& s, int k) {
  Level lv;
  lv.k = k;
  lv.sessions = std::max(kSessionsPerSlot * k, kMinSessions);
  // A stopped srt-poller's last blocking poll can wait in the fake for up to 999 ms more, and
  // would take a new item for a worker that is gone (re-delivered only after the 5 s reclaim).
  std::this_thread::sleep_for(milliseconds(1200));
  Must(Fake().Reset(), "reset the fake");
  StartPoller(s, k);
  const pid_t poller = g_poller->pid();
  std::this_thread::sleep_for(milliseconds(300));
  lv.idle_pss = SumPss(SampleTree(poller));

  // Throughput: every session enqueued at once, K served at a time.
  const double cpu_poller0 = CpuSeconds(poller);
  const double cpu_fake0 = CpuSeconds(Fake().pid());
  const double cpu_bench0 = SelfCpuSeconds();
  const auto [busy0, total0] = MachineJiffies();
  std::vector<SessionRun> runs(static_cast<size_t>(lv.sessions));
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].sid = "sesn_k" + std::to_string(k) + "_" + std::to_string(i);
  }
  const double start = WallNow();
  for (auto& t : StartDrivers(runs, s.opt.session_calls)) t.join();
  // Every item stopped: the sandboxes are gone and their CPU time is in the poller's cutime.
  for (const SessionRun& r : runs) {
    if (!r.work_id.empty()) {
      (void)Fake().WaitForWorkState(r.work_id, "stopped", milliseconds(30'000));
    }
  }
  lv.cpu_poller = CpuSeconds(poller) - cpu_poller0;
  lv.cpu_fake = CpuSeconds(Fake().pid()) - cpu_fake0;
  lv.cpu_bench = SelfCpuSeconds() - cpu_bench0;
  const auto [busy1, total1] = MachineJiffies();
  if (total1 > total0) lv.machine_busy = (busy1 - busy0) / (total1 - total0);

  // Memory: K sessions at once, each after one bash call (so its shell runs), held open while
  // the tree is sampled, then ended.
  std::vector<SessionRun> held(static_cast<size_t>(k));
  for (size_t i = 0; i < held.size(); ++i) {
    held[i].sid = "sesn_k" + std::to_string(k) + "_held_" + std::to_string(i);
    held[i].hold = true;
  }
  for (auto& t : StartDrivers(held, 1)) t.join();
  std::this_thread::sleep_for(milliseconds(200));
  std::vector<ProcSample> tree = SampleTree(poller);
  for (const ProcSample& p : tree) lv.held_live += p.comm == "srt-toolbox" ? 1 : 0;
  lv.held_pss = SumPss(tree);
  lv.held_by_name = TreeByName(tree);
  for (const SessionRun& r : held) {
    if (r.work_id.empty()) continue;
    (void)Append(r.sid, json{{"type", "session.status_terminated"}});
    (void)Fake().WaitForWorkState(r.work_id, "stopped", milliseconds(30'000));
  }
  lv.errors = static_cast<int>(PollerErrorLines());
  if (lv.errors) lv.first_error = "srt-poller logged errors";
  StopPoller();

  // The result POST of the last session arrived before the bench saw it; use the fake's time.
  std::vector<double> tool, claim;
  double last_post = start;
  for (std::vector<SessionRun>* group : {&runs, &held}) {
    for (const SessionRun& r : *group) {
      if (!r.error.empty()) {
        ++lv.errors;
        if (lv.first_error.empty() || lv.first_error == "srt-poller logged errors") {
          lv.first_error = r.sid + ": " + r.error;
        }
      }
      lv.errors += r.is_error;
      if (group == &held || r.seqs.empty()) continue;
      std::map<int64_t, double> arrivals = PostArrivals(r.sid);
      for (size_t i = 0; i < r.seqs.size(); ++i) {
        auto it = arrivals.find(r.seqs[i]);
        if (it == arrivals.end()) continue;
        last_post = std::max(last_post, it->second);
        if (i == 0) {
          auto state = Fake().WorkState(r.work_id);
          if (state && !(*state)["deliveries"].empty()) {
            claim.push_back((it->second - (*state)["deliveries"][0]["time"].get<double>()) * 1000);
          }
        } else {
          tool.push_back((it->second - r.appended[i]) * 1000);
        }
      }
    }
  }
  lv.wall_s = last_post - start;
  lv.tool = Summarize(tool);
  lv.claim = Summarize(claim);
  return lv;
}

double PerSessionKib(const Level& lv) {
  return lv.held_live > 0 ? static_cast<double>(lv.held_pss - lv.idle_pss) / lv.held_live : NAN;
}

double SessionsPerSecond(const Level& lv) { return lv.sessions / std::max(lv.wall_s, 1e-3); }

void Concurrency(const Setup& s, Verdicts& v) {
  const Options& opt = s.opt;
  const double ncpu = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
  std::printf(
      "3. concurrency: a fresh srt-poller --concurrency K per row; max(4K, %d) sessions enqueued\n"
      "   at once, each %d sequential bash `true` calls (the next appended as soon as the last\n"
      "   result arrives), then ended. wall = first enqueue -> last result POST. tool = tool_use\n"
      "   -> result POST for calls 2..%d; claim = hand-out -> first result POST (the first call\n"
      "   sits in the history). CPU = share of the %.0f CPUs over the wall time: srt-poller with\n"
      "   its reaped sandboxes, the fake, this bench, and the whole machine (every process).\n"
      "   Pss = srt-poller's process tree (smaps_rollup): idle, and with K sessions held open\n"
      "   at once after one bash call each; /session = (held - idle) / K.\n",
      kMinSessions, opt.session_calls, opt.session_calls, ncpu);
  std::printf(
      "    K  sess  wall s  sess/s | tool med    p90    max | claim med    p90 | CPU poller fake "
      "bench machine | Pss idle  held (K)  /session | err\n");
  std::fflush(stdout);
  std::vector<Level> levels;
  std::optional<int> knee;
  for (int k : opt.concurrency) {
    CheckStop();
    Level lv = RunLevel(s, k);
    const double wall = std::max(lv.wall_s, 1e-3);
    std::printf(
        "  %3d  %4d %7.2f %7.2f | %8.2f %6.2f %6.1f | %9.2f %6.1f |   %5.0f%% %3.0f%% %4.0f%%   "
        "%4.0f%% | %8s %9s %9s | %d\n",
        lv.k, lv.sessions, lv.wall_s, SessionsPerSecond(lv), lv.tool.median, lv.tool.p90,
        lv.tool.max, lv.claim.median, lv.claim.p90, 100 * lv.cpu_poller / (wall * ncpu),
        100 * lv.cpu_fake / (wall * ncpu), 100 * lv.cpu_bench / (wall * ncpu),
        100 * lv.machine_busy, Mib(static_cast<double>(lv.idle_pss)).c_str(),
        Mib(static_cast<double>(lv.held_pss)).c_str(), Mib(PerSessionKib(lv)).c_str(), lv.errors);
    if (lv.held_live != lv.k) {
      std::printf("       (only %d of %d held sessions had a live srt-toolbox when sampled)\n",
                  lv.held_live, lv.k);
    }
    if (!lv.first_error.empty()) std::printf("       first error: %s\n", lv.first_error.c_str());
    std::fflush(stdout);
    levels.push_back(lv);
    if (!knee && (lv.tool.p90 > kKneeP90Ms || lv.errors > 0)) {
      knee = k;
      if (!opt.keep_going) {
        std::printf("       (stopping here: p90 > %.0f ms or errors; --keep-going runs the rest)\n",
                    kKneeP90Ms);
        break;
      }
    }
  }
  if (levels.empty()) return;
  const Level& last = levels.back();
  std::printf("   K=%d sessions held open, Pss by process: %s\n", last.k,
              last.held_by_name.c_str());

  // What limits it: CPU (the machine's CPUs, shared with whatever else runs) and memory.
  const Level* best = &levels.front();
  for (const Level& lv : levels) {
    if (lv.errors == 0 && SessionsPerSecond(lv) > SessionsPerSecond(*best)) best = &lv;
  }
  std::vector<double> per_session;
  for (const Level& lv : levels) {
    if (!std::isnan(PerSessionKib(lv))) per_session.push_back(PerSessionKib(lv));
  }
  const double session_kib = Summarize(per_session).median;
  const long avail_kib = StatusKib(ReadFile("/proc/meminfo", 8192), "MemAvailable");
  const double wall = std::max(best->wall_s, 1e-3);
  std::printf(
      "   limits: best %.2f sessions/s at K=%d, with the machine's CPUs %.0f%% busy (ours: poller\n"
      "   and sandboxes %.0f%%, fake %.0f%%, bench %.0f%%; the rest is other work on the host).\n"
      "   CPU per session of %d calls: srt-poller and sandboxes %.0f ms, fake %.0f ms.\n"
      "   Memory: %s Pss per open session (median over K); MemAvailable %s holds ~%.0f.\n\n",
      SessionsPerSecond(*best), best->k, 100 * best->machine_busy,
      100 * best->cpu_poller / (wall * ncpu), 100 * best->cpu_fake / (wall * ncpu),
      100 * best->cpu_bench / (wall * ncpu), opt.session_calls,
      1000 * best->cpu_poller / best->sessions, 1000 * best->cpu_fake / best->sessions,
      Mib(session_kib).c_str(), Mib(static_cast<double>(avail_kib)).c_str(),
      session_kib > 0 ? static_cast<double>(avail_kib) / session_kib : 0.0);

  char buf[320];
  if (knee) {
    std::snprintf(buf, sizeof buf,
                  "concurrency             first K with p90 tool latency > %.0f ms or errors: "
                  "K=%d; best %.2f sessions/s at K=%d; %s Pss per open session",
                  kKneeP90Ms, *knee, SessionsPerSecond(*best), best->k, Mib(session_kib).c_str());
  } else {
    std::snprintf(buf, sizeof buf,
                  "concurrency             p90 tool latency <= %.0f ms and no errors up to K=%d; "
                  "best %.2f sessions/s at K=%d; %s Pss per open session",
                  kKneeP90Ms, levels.back().k, SessionsPerSecond(*best), best->k,
                  Mib(session_kib).c_str());
  }
  v.lines.push_back(buf);
}

// Part 4: what keeping connections saves per request. The fake runs a TLS listener of its own
// (a throwaway CA); both clients are srt-poller's own HttpClient, one keeping connections (as
// srt-poller does) and one with a new TCP connection and TLS handshake per request. Batches
// alternate, so drift of the machine's load falls on both alike.
void HttpReuse(const Options& opt, Verdicts& v) {
  constexpr int kBatch = 20;
  FakeControlPlane::Options fo;
  fo.tls = true;
  std::unique_ptr<FakeControlPlane> fake = Must(FakeControlPlane::Start(fo), "start a TLS fake");
  std::printf(
      "4. HTTP connections: GET work/stats (the environment key, as srt-poller polls) against the\n"
      "   fake's TLS listener (%s), %d requests each way in alternating batches of %d, one\n"
      "   after another; connections = distinct connections the fake saw.\n",
      fake->base_url().c_str(), opt.http_requests, kBatch);
  std::printf(
      "   client                 requests  conns      min   median      p90      max (ms) "
      " req/s\n");
  std::fflush(stdout);
  srt::poller::Request req;
  req.url = fake->base_url() + "/v1/environments/" + fake->environment_id() + "/work/stats";
  req.headers.Add("Authorization", "Bearer " + fake->environment_key());
  req.headers.Add("anthropic-version", srt::poller::kAnthropicVersion);
  req.headers.Add("anthropic-beta", srt::poller::kManagedAgentsBeta);
  struct Mode {
    const char* name;
    srt::poller::HttpClient client;
    std::vector<double> ms;
    double seconds = 0;
    std::set<int64_t> conns;
  };
  auto client = [&](bool reuse) {
    return srt::poller::HttpClient(
        srt::poller::HttpOptions{.ca_file = fake->ca_file(), .reuse_connections = reuse});
  };
  Mode modes[2] = {{"connections kept", client(true)}, {"one per request", client(false)}};
  int64_t seq = 0;
  for (int done = 0; done < opt.http_requests; done += kBatch) {
    for (Mode& m : modes) {
      CheckStop();
      for (int i = 0; i < std::min(kBatch, opt.http_requests - done); ++i) {
        const double t0 = ClockSeconds(CLOCK_MONOTONIC);
        srt::poller::Response r = Must(m.client.Send(req), "GET " + req.url);
        const double dt = ClockSeconds(CLOCK_MONOTONIC) - t0;
        if (r.status != 200) Die("GET " + req.url + ": status " + std::to_string(r.status));
        m.ms.push_back(1000 * dt);
        m.seconds += dt;
      }
      // The fake's records of this batch: which connections carried it.
      FakeControlPlane::RequestFilter f;
      f.since_seq = seq;
      json recs = Must(fake->Requests(f), "the fake's requests");
      for (const json& r : recs) {
        m.conns.insert(r["conn"].get<int64_t>());
        seq = std::max(seq, r["seq"].get<int64_t>());
      }
    }
  }
  double rate[2];
  for (int i = 0; i < 2; ++i) {
    Mode& m = modes[i];
    rate[i] = static_cast<double>(m.ms.size()) / std::max(m.seconds, 1e-9);
    std::printf("   %-22s %8zu %6zu %s %6.0f\n", m.name, m.ms.size(), m.conns.size(),
                Row(Summarize(m.ms)).c_str(), rate[i]);
  }
  const double ratio = rate[0] / std::max(rate[1], 1e-9);
  std::printf("   kept / one per request: %.2fx the request rate, %.2f ms less per request\n\n",
              ratio, Summarize(modes[1].ms).median - Summarize(modes[0].ms).median);
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "HTTP connections        kept: %.2fx the request rate of one per request (TLS, "
                "%zu vs %zu connections)",
                ratio, modes[0].conns.size(), modes[1].conns.size());
  v.lines.push_back(buf);
}

}  // namespace

int main(int argc, char** argv) {
  Setup s;
  srt::bench::SetProgramName("srt-poller-bench");
  srt::bench::SetDieHook(PrintPollerLogTail);
  s.opt = ParseOptions(argc, argv);
  srt::bench::CatchStopSignals();
  signal(SIGPIPE, SIG_IGN);
  std::atexit(Cleanup);

  s.poller = s.opt.poller.empty() ? srt::bench::SelfDir() + "/srt-poller" : s.opt.poller;
  if (::access(s.poller.c_str(), X_OK) != 0) {
    Die("no srt-poller at '" + s.poller + "' (build it, or use --poller PATH)");
  }
  const std::string dir = std::filesystem::path(s.poller).parent_path().string();
  for (const char* helper : {"srt-toolbox", "srt-init"}) {
    if (::access((dir + "/" + helper).c_str(), X_OK) != 0) {
      Die(std::string("no ") + helper + " next to srt-poller in '" + dir + "'");
    }
  }
  const std::string tmpl = srt::bench::CreateScratch(s.opt.workdir, "srt-pollerbench");
  s.sessions_dir = tmpl + "/sessions";
  s.key_file = tmpl + "/environment-key";

  const std::string load_before = LoadAverage();
  g_fake = Must(FakeControlPlane::Start({}), "start the fake control plane");
  {
    UniqueFd fd(::open(s.key_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    const std::string& key = Fake().environment_key();
    if (!fd || ::write(fd.get(), key.data(), key.size()) != static_cast<ssize_t>(key.size())) {
      Die("write '" + s.key_file + "': " + std::strerror(errno));
    }
  }

  utsname uts{};
  uname(&uts);
  const std::string meminfo = ReadFile("/proc/meminfo", 8192);
  std::printf("srt-poller benchmark\n");
  std::printf("  host      %ld CPUs online, Linux %s, MemTotal %s, MemAvailable %s\n",
              sysconf(_SC_NPROCESSORS_ONLN), uts.release,
              Mib(static_cast<double>(StatusKib(meminfo, "MemTotal"))).c_str(),
              Mib(static_cast<double>(StatusKib(meminfo, "MemAvailable"))).c_str());
  std::printf("  load      average %s at the start\n", load_before.c_str());
  std::printf("  poller    %s (--max-idle 60s --workspace-cleanup terminated, default limits%s)\n",
              s.poller.c_str(), s.opt.disk.empty() ? "" : (", --disk " + s.opt.disk).c_str());
  std::printf("  fake      tests/poller/fake_control_plane.py, pid %d, %s (python3, loopback)\n",
              static_cast<int>(Fake().pid()), Fake().base_url().c_str());
  std::printf(
      "  clocks    every figure is a difference of the fake's timestamps (time.time()) and, for\n"
      "            `timed` calls, the shell's $EPOCHREALTIME: the same CLOCK_REALTIME\n\n");
  std::fflush(stdout);

  Verdicts v;
  StartPoller(s, 1);
  ClaimLatency(s, v);
  ToolOverhead(s, v);
  StopPoller();
  if (!s.opt.concurrency.empty()) Concurrency(s, v);
  if (s.opt.http_requests > 0) HttpReuse(s.opt, v);

  std::printf("summary (load average %s at the start, %s now)\n", load_before.c_str(),
              LoadAverage().c_str());
  for (const std::string& line : v.lines) std::printf("  %s\n", line.c_str());
  return 0;
}
