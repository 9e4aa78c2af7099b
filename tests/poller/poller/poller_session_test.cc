// SPDX-License-Identifier: Apache-2.0
// srt-poller end to end, one session at a time: the real binary against the loopback fake
// control plane (tests/poller/fake_control_plane.py), with real sandboxes. Covers every tool of
// agent_toolset_20260401 through srt-toolbox in the session's sandbox, the confinement of the
// file tools and of bash, confirmations, SSE drops, the environment key never reaching a
// sandbox, --on-work, skills and the cgroup limits.
//
// Root only (the sandboxes get cgroup limits): the tests skip elsewhere unless SRT_MUST_WORK is
// set, when they fail instead. Every test starts its own fake and poller and stops them by pid.
// Nothing here waits for a fixed time to prove an absence: a later tool call is the barrier
// ("the runner has seen everything before it").
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "base/scope_exit.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "leftovers.h"
#include "poller/support/fake_control_plane.h"
#include "poller/support/poller_process.h"
#include "poller/workspace_disk.h"
#include "sys/landlock.h"

namespace srt::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using std::chrono::milliseconds;
using namespace std::chrono_literals;

constexpr auto kStartTimeout = 30s;  // poller start, claim, sandbox and toolbox ready
constexpr auto kToolTimeout = 30s;   // one tool call's result

#define SKIP_UNLESS_ROOT()                                                                   \
  do {                                                                                       \
    if (geteuid() != 0) {                                                                    \
      if (getenv("SRT_MUST_WORK") != nullptr) FAIL() << "SRT_MUST_WORK is set but not root"; \
      GTEST_SKIP() << "needs root (cgroup limits for the session sandboxes)";                \
    }                                                                                        \
  } while (0)

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& content, mode_t mode) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
  }
  chmod(path.c_str(), mode);
}

// The text blocks of a posted user.tool_result, joined.
struct Posted {
  bool is_error = false;
  std::string text;
  json event;
};

Posted ToPosted(const json& event) {
  Posted p;
  p.event = event;
  p.is_error = event.value("is_error", false);
  if (event.contains("content") && event["content"].is_array()) {
    for (const auto& block : event["content"]) {
      if (block.value("type", "") == "text") p.text += block.value("text", "");
    }
  }
  return p;
}

// A tool_use event as the agent would send it.
json ToolUse(const std::string& id, const std::string& name, json input,
             const std::string& permission = "allow") {
  return {{"id", id},
          {"type", "agent.tool_use"},
          {"name", name},
          {"input", std::move(input)},
          {"evaluated_permission", permission}};
}

// The mount points in the host's mount table below `dir`, with their options.
// srt-poller mounts each item's workspace in a mount namespace of that item's thread: `pid` is
// whose tables to read, every thread's (0: this process's, the host's).
std::map<std::string, std::string> MountsBelow(const std::string& dir, pid_t pid = 0) {
  std::vector<std::string> tables;
  if (pid == 0) {
    tables.push_back("/proc/self/mountinfo");
  } else {
    std::error_code ec;
    for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
      tables.push_back(task.path().string() + "/mountinfo");
    }
  }
  std::map<std::string, std::string> found;
  for (const std::string& file : tables) {
    std::istringstream table(ReadAll(file));
    for (std::string line; std::getline(table, line);) {
      std::istringstream fields(line);
      std::string id, parent, dev, root, point, options;
      fields >> id >> parent >> dev >> root >> point >> options;
      if (point.rfind(dir + "/", 0) == 0) found[point] = options;
    }
  }
  return found;
}

// The loop devices whose backing file is below `dir`.
std::vector<std::string> LoopsBackedBelow(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator("/sys/block")) {
    std::string backing = ReadAll(e.path().string() + "/loop/backing_file");
    if (backing.rfind(dir + "/", 0) == 0)
      found.push_back(e.path().filename().string() + " " + backing);
  }
  return found;
}

// The loop device backed by the spare workspace's image (`<sessions>/.disks/.spare.ext4`), or "".
std::string SpareLoop(const std::string& sessions) {
  for (const std::string& l : LoopsBackedBelow(sessions)) {
    if (l.ends_with(" " + sessions + "/.disks/.spare.ext4\n")) return l.substr(0, l.find(' '));
  }
  return "";
}

// Whether the block device `dev` ("loop0") is in use by a mounted filesystem: open(O_EXCL) of a
// block device fails with EBUSY then (open(2)).
bool Mounted(const std::string& dev) {
  UniqueFd fd(open(("/dev/" + dev).c_str(), O_RDONLY | O_EXCL | O_CLOEXEC));
  return !fd && errno == EBUSY;
}

// The spare workspace is ready to be taken: its loop device is attached and its filesystem
// mounted (the maker hands it out microseconds later).
bool SpareReady(const std::string& sessions) {
  const std::string loop = SpareLoop(sessions);
  return !loop.empty() && Mounted(loop);
}

// The loop devices backed by a session's workspace image (the spare's left out).
std::vector<std::string> SessionLoopsBelow(const std::string& sessions) {
  std::vector<std::string> found;
  for (const std::string& l : LoopsBackedBelow(sessions)) {
    if (!l.ends_with("/.disks/.spare.ext4\n")) found.push_back(l);
  }
  return found;
}

// An ext4 image of `mib` MiB at `image` that holds one file, `leftover.txt`: what a workspace
// an earlier session used would hold.
void MakeUsedImage(const std::string& image, const std::string& scratch, int mib) {
  ASSERT_TRUE(fs::create_directories(scratch + "/content"));
  WriteAll(scratch + "/content/leftover.txt", "another session's file\n", 0644);
  { std::ofstream out(image, std::ios::binary | std::ios::trunc); }
  ASSERT_EQ(truncate(image.c_str(), off_t{mib} << 20), 0);
  chmod(image.c_str(), 0600);
  const std::string cmd =
      "mkfs.ext4 -q -F -d '" + scratch + "/content' '" + image + "' >/dev/null 2>&1";
  ASSERT_EQ(system(cmd.c_str()), 0) << cmd;
}

class PollerSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_UNLESS_ROOT();
    char tmpl[] = "/tmp/srt-psess-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    sessions_ = dir_ + "/sessions";
    key_file_ = dir_ + "/environment.key";
    FakeControlPlane::Options o;
    // A key unique to this run, so that a search for it cannot hit an old copy.
    o.environment_key = "sk-ant-oat01-psess-" + std::to_string(getpid()) + "-" +
                        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    auto cp = FakeControlPlane::Start(o);
    ASSERT_TRUE(cp.has_value()) << cp.error().message();
    cp_ = std::move(*cp);
    WriteAll(key_file_, cp_->environment_key(), 0600);
  }

  void TearDown() override {
    if (poller_ && poller_->running()) {
      poller_->Signal(SIGTERM);
      EXPECT_TRUE(poller_->Wait(40s).has_value()) << "srt-poller did not stop";
    }
    // Every session any test touched got each tool use answered at most once.
    if (cp_) {
      for (const std::string& sid : sessions_used_) {
        auto results = cp_->Results(sid);
        ASSERT_TRUE(results.has_value()) << results.error().message();
        for (const auto& r : *results) {
          EXPECT_FALSE(r.value("duplicate", false)) << "duplicate result: " << r.dump();
        }
      }
    }
    poller_.reset();
    cp_.reset();
    if (!dir_.empty()) {
      // What an srt-poller that was killed, or exited at a second signal, left (workspaces
      // still mounted, its sessions' cgroups): nothing of a test stays on the host.
      (void)SweepPollerLeftovers(sessions_);
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  // The flags every run needs, then `extra`. The key comes from the file unless `key_in_env`.
  std::vector<std::string> Args(const std::vector<std::string>& extra, bool key_in_env) const {
    std::vector<std::string> a = {
        "--environment-id", cp_->environment_id(), "--base-url", cp_->base_url(), "--sessions-dir",
        sessions_,          "--max-idle",          "2s"};
    if (!key_in_env) {
      a.push_back("--environment-key-file");
      a.push_back(key_file_);
    }
    a.insert(a.end(), default_extra_.begin(), default_extra_.end());
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  std::vector<std::string> default_extra_;  // after the flags above, before each call's own

  // Starts srt-poller and waits until it polls.
  void StartPoller(const std::vector<std::string>& extra = {}, bool key_in_env = false,
                   std::map<std::string, std::string> env = {}) {
    if (key_in_env) env["ANTHROPIC_ENVIRONMENT_KEY"] = cp_->environment_key();
    auto p = PollerProcess::Start(Args(extra, key_in_env), env);
    ASSERT_TRUE(p.has_value()) << p.error().message();
    poller_ = std::move(*p);
    ASSERT_TRUE(poller_->WaitForLog("polling for work", kStartTimeout)) << poller_->Logs();
  }

  FakeControlPlane::Enqueued Enqueue(const FakeControlPlane::WorkOptions& options) {
    sessions_used_.push_back(options.session_id);
    auto work = cp_->Enqueue(options);
    EXPECT_TRUE(work.has_value()) << work.error().message();
    if (!work) return {};
    return std::move(*work);
  }

  // Enqueues a session (before the poller starts, so its first poll finds it), starts the
  // poller and waits until the session's runner listens (its SSE stream is open; the stream
  // opens while the sandbox starts, so a tool's result is the barrier for the sandbox).
  FakeControlPlane::Enqueued StartSession(const std::string& sid,
                                          const std::vector<std::string>& extra = {},
                                          bool key_in_env = false) {
    FakeControlPlane::Enqueued work = Enqueue({.session_id = sid});
    StartPoller(extra, key_in_env);
    if (!poller_) return work;
    auto streams = cp_->WaitForStreams(sid, 1, kStartTimeout);
    EXPECT_TRUE(streams.has_value()) << streams.error().message() << "\n" << poller_->Logs();
    return work;
  }

  std::optional<Posted> FindResult(const std::string& sid, const std::string& tool_use_id) {
    auto results = cp_->Results(sid);
    if (!results) return std::nullopt;
    for (const auto& r : *results) {
      const json& ev = r["event"];
      if (ev.value("tool_use_id", "") == tool_use_id) return ToPosted(ev);
    }
    return std::nullopt;
  }

  // Waits for the result of `tool_use_id`.
  Posted WaitResult(const std::string& sid, const std::string& tool_use_id,
                    milliseconds timeout = kToolTimeout) {
    std::optional<Posted> found;
    bool ok = WaitFor(
        [&] {
          found = FindResult(sid, tool_use_id);
          return found.has_value();
        },
        timeout, 50ms);
    EXPECT_TRUE(ok) << "no result for " << tool_use_id << " in " << sid << "\n"
                    << (poller_ ? poller_->Logs() : "");
    return found.value_or(Posted{true, "<no result>", nullptr});
  }

  // Appends one tool use and waits for its result.
  Posted Run(const std::string& sid, const std::string& name, json input,
             milliseconds timeout = kToolTimeout) {
    std::string id = "toolu_" + std::to_string(++tool_seq_);
    auto appended = cp_->AppendEvents(sid, ToolUse(id, name, std::move(input)));
    EXPECT_TRUE(appended.has_value()) << appended.error().message();
    return WaitResult(sid, id, timeout);
  }
  Posted Bash(const std::string& sid, const std::string& command,
              milliseconds timeout = kToolTimeout) {
    return Run(sid, "bash", {{"command", command}}, timeout);
  }

  // Ends the session (terminated) and waits until the poller force-stopped its item.
  void EndSession(const FakeControlPlane::Enqueued& work) {
    auto appended = cp_->AppendEvents(work.session_id, json{{"type", "session.status_terminated"}});
    ASSERT_TRUE(appended.has_value()) << appended.error().message();
    auto stopped = cp_->WaitForWorkState(work.work_id, "stopped", kStartTimeout);
    ASSERT_TRUE(stopped.has_value()) << stopped.error().message() << "\n" << poller_->Logs();
    ASSERT_TRUE(poller_->WaitForLog("session item finished", kStartTimeout)) << poller_->Logs();
  }

  // SIGTERM, then the exit code.
  int StopPoller() {
    poller_->Signal(SIGTERM);
    auto code = poller_->Wait(40s);
    EXPECT_TRUE(code.has_value()) << "srt-poller did not stop:\n" << poller_->Logs();
    return code.value_or(-1);
  }

  // The session's workspace as srt-poller sees it now: its --disk filesystem is mounted in a
  // mount namespace of its item's thread, which /proc/PID/task/TID/root reaches while it runs
  // (a path that goes with the item); the host's directory when nothing is mounted there.
  std::string Workspace(const std::string& sid) const {
    const std::string point = sessions_ + "/" + sid;
    return (poller_ && poller_->running() ? poller_->RootWithMountAt(point) : "") + point;
  }
  // Workspace(sid) once the item's --disk filesystem is mounted (the streams may open before).
  std::string WorkspaceOnceMounted(const std::string& sid) const {
    const std::string point = sessions_ + "/" + sid;
    std::string root;
    EXPECT_TRUE(
        WaitFor([&] { return !(root = poller_->RootWithMountAt(point)).empty(); }, kStartTimeout))
        << sid << "'s workspace is not mounted";
    return root + point;
  }

  std::unique_ptr<FakeControlPlane> cp_;
  std::unique_ptr<PollerProcess> poller_;
  std::string dir_;
  std::string sessions_;
  std::string key_file_;
  std::vector<std::string> sessions_used_;
  int tool_seq_ = 0;
};

// ---- bash --------------------------------------------------------------------------------------

TEST_F(PollerSessionTest, BashKeepsStateReportsExitCodesAndRestartsAfterATimeout) {
  auto work = StartSession("sesn_bash");

  // The command's output plus the newline before the exit-code marker, as Go keeps it.
  Posted r = Bash("sesn_bash", "echo hi");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "hi\n\n");

  r = Bash("sesn_bash", "echo out; (exit 3)");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "out\n\n\nexit code: 3");
  // A bare `exit` ends the persistent shell itself: Go's "bash session terminated", and the
  // next call gets a new shell.
  r = Bash("sesn_bash", "echo out; exit 3");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "bash: bash session terminated");
  EXPECT_EQ(Bash("sesn_bash", "echo again").text, "again\n\n");

  // One shell: the working directory and exported variables survive to the next call.
  r = Bash("sesn_bash", "mkdir -p /workspace/sub && cd /workspace/sub; export X=1");
  EXPECT_FALSE(r.is_error) << r.text;
  r = Bash("sesn_bash", "echo \"$X\"; pwd");
  EXPECT_EQ(r.text, "1\n/workspace/sub\n\n");

  // No ANTHROPIC_* variable reaches the shell; history expansion is off.
  r = Bash("sesn_bash", "env | grep -c '^ANTHROPIC_'; echo \"hi!x\"");
  EXPECT_EQ(r.text, "0\nhi!x\n\n");

  // Its own timeout: the call fails with the timeout text and the shell restarts.
  r = Run("sesn_bash", "bash", {{"command", "sleep 60"}, {"timeout_ms", 1500}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "\n[timed out]\nsession restarted after timeout");
  r = Bash("sesn_bash", "echo \"[$X]\"; pwd");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "[]\n/workspace\n\n");

  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// ---- file tools --------------------------------------------------------------------------------

TEST_F(PollerSessionTest, FileToolsReadWriteEditGlobGrep) {
  auto work = StartSession("sesn_files");
  const std::string ws = WorkspaceOnceMounted("sesn_files");

  Posted r = Run("sesn_files", "write",
                 {{"file_path", "/workspace/a/b/notes.txt"}, {"content", "one\ntwo\nthree\nfour"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "wrote 18 bytes to /workspace/a/b/notes.txt");
  EXPECT_EQ(ReadAll(ws + "/a/b/notes.txt"), "one\ntwo\nthree\nfour");

  r = Run("sesn_files", "read", {{"file_path", "a/b/notes.txt"}});
  EXPECT_EQ(r.text, "one\ntwo\nthree\nfour");
  r = Run("sesn_files", "read",
          {{"file_path", "/workspace/a/b/notes.txt"}, {"view_range", json::array({2, 3})}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "two\nthree");

  r = Run("sesn_files", "edit",
          {{"file_path", "a/b/notes.txt"}, {"old_string", "two"}, {"new_string", "TWO"}});
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "edited a/b/notes.txt (1 replacement(s))");
  r = Run("sesn_files", "write", {{"file_path", "x.txt"}, {"content", "x x x"}});
  r = Run("sesn_files", "edit", {{"file_path", "x.txt"}, {"old_string", "x"}, {"new_string", "y"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "edit: old_string appears 3 times in x.txt (must be unique)");
  r = Run(
      "sesn_files", "edit",
      {{"file_path", "x.txt"}, {"old_string", "x"}, {"new_string", "y"}, {"replace_all", true}});
  EXPECT_EQ(r.text, "edited x.txt (3 replacement(s))");
  r = Run("sesn_files", "edit",
          {{"file_path", "x.txt"}, {"old_string", "zzz"}, {"new_string", "y"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "edit: old_string not found in x.txt");
  EXPECT_EQ(ReadAll(ws + "/a/b/notes.txt"), "one\nTWO\nthree\nfour");
  EXPECT_EQ(ReadAll(ws + "/x.txt"), "y y y");

  // Newest first, with `**` reaching every depth (mtimes set explicitly: no timing).
  r = Bash("sesn_files",
           "mkdir -p g/d/e && touch -d 2020-01-01 g/old.go && touch -d 2021-01-01 g/d/mid.go && "
           "touch -d 2022-01-01 g/d/e/new.go && touch g/skip.txt");
  ASSERT_FALSE(r.is_error) << r.text;
  r = Run("sesn_files", "glob", {{"pattern", "**/*.go"}, {"path", "g"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "/workspace/g/d/e/new.go\n/workspace/g/d/mid.go\n/workspace/g/old.go");

  r = Run("sesn_files", "grep", {{"pattern", "^t[a-z]+e+$"}, {"path", "a"}});
  EXPECT_FALSE(r.is_error);
  // The toolbox's own walker (RE2), never ripgrep: no trailing newline, as the Go SDK's grep.
  EXPECT_EQ(r.text, "/workspace/a/b/notes.txt:3:three");
  r = Run("sesn_files", "grep", {{"pattern", "nowhere-to-be-found"}});
  EXPECT_EQ(r.text, "no matches");

  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// ---- confinement -------------------------------------------------------------------------------

TEST_F(PollerSessionTest, FileToolsRefuseEveryEscape) {
  // Another session's workspace, with a secret, next to ours.
  fs::create_directories(Workspace("sesn_other"));
  WriteAll(Workspace("sesn_other") + "/secret.txt", "other session's secret\n", 0644);
  auto work = StartSession("sesn_esc");
  const std::string sid = "sesn_esc";

  auto expect_escape = [&](const Posted& r, const std::string& op, const std::string& path) {
    EXPECT_TRUE(r.is_error);
    EXPECT_EQ(r.text, op + ": path \"" + path + "\" escapes workdir");
  };
  expect_escape(Run(sid, "read", {{"file_path", "../../etc/passwd"}}), "read", "../../etc/passwd");
  expect_escape(Run(sid, "write", {{"file_path", "/etc/x"}, {"content", "x"}}), "write", "/etc/x");
  expect_escape(Run(sid, "write", {{"file_path", "/workspace/../x"}, {"content", "x"}}), "write",
                "/workspace/../x");
  EXPECT_FALSE(fs::exists("/etc/x"));
  EXPECT_FALSE(fs::exists("/x"));

  // Links planted by bash inside the sandbox: to a host file, to the other session's workspace
  // (by its host path), and a symlinked directory.
  Posted r = Bash(sid, "ln -s /etc/passwd pw && ln -s " + Workspace("sesn_other") +
                           "/secret.txt other && ln -s /etc etcdir && ln -s " +
                           Workspace("sesn_other") + " otherdir && echo planted");
  ASSERT_EQ(r.text, "planted\n\n");
  for (const char* link : {"pw", "other", "/workspace/pw"}) {
    expect_escape(Run(sid, "read", {{"file_path", link}}), "read", link);
    expect_escape(Run(sid, "write", {{"file_path", link}, {"content", "pwned"}}), "write", link);
    expect_escape(
        Run(sid, "edit", {{"file_path", link}, {"old_string", "root"}, {"new_string", "x"}}),
        "edit", link);
  }
  expect_escape(Run(sid, "read", {{"file_path", "etcdir/passwd"}}), "read", "etcdir/passwd");
  expect_escape(Run(sid, "write", {{"file_path", "etcdir/srt-psess-x"}, {"content", "x"}}), "write",
                "etcdir/srt-psess-x");
  expect_escape(Run(sid, "read", {{"file_path", "otherdir/secret.txt"}}), "read",
                "otherdir/secret.txt");
  expect_escape(Run(sid, "glob", {{"pattern", "*"}, {"path", "etcdir"}}), "glob", "etcdir");
  expect_escape(Run(sid, "grep", {{"pattern", "root"}, {"path", "etcdir"}}), "grep", "etcdir");
  EXPECT_FALSE(fs::exists("/etc/srt-psess-x"));
  EXPECT_EQ(ReadAll(Workspace("sesn_other") + "/secret.txt"), "other session's secret\n");

  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

TEST_F(PollerSessionTest, BashCannotReadOtherSessionsOrTheKeyNorWriteOutsideTheWorkspace) {
  fs::create_directories(Workspace("sesn_other"));
  WriteAll(Workspace("sesn_other") + "/secret.txt", "other session's secret\n", 0644);
  auto work = StartSession("sesn_box");
  const std::string sid = "sesn_box";

  Posted r = Bash(sid, "cat " + Workspace("sesn_other") + "/secret.txt; echo \"rc=$?\"");
  EXPECT_EQ(r.text.find("other session's secret"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("rc=1"), std::string::npos) << r.text;
  r = Bash(sid, "ls " + sessions_ + "; echo \"rc=$?\"");
  EXPECT_EQ(r.text.find("sesn_other"), std::string::npos) << r.text;
  r = Bash(sid, "cat " + key_file_ + "; echo \"rc=$?\"");
  EXPECT_EQ(r.text.find(cp_->environment_key()), std::string::npos) << r.text;

  // What the host shows is read-only: EROFS, not EACCES. The rest of the root is the sandbox's
  // own empty tmpfs (the policy hides the host there), where a write lands in memory only.
  r = Bash(sid, "touch /usr/srt-psess-x; echo $?");
  EXPECT_EQ(r.text, "touch: cannot touch '/usr/srt-psess-x': Read-only file system\n1\n\n");
  r = Bash(sid, "echo x > /etc/passwd; echo $?");
  EXPECT_EQ(r.text, "bash: /etc/passwd: Read-only file system\n1\n\n");
  r = Bash(sid, "echo x > /etc/srt-psess-x; echo $?");
  EXPECT_EQ(r.text, "0\n\n");
  r = Bash(sid, "echo x > " + Workspace("sesn_other") + "/planted; echo $?");
  EXPECT_NE(r.text.find("\n1\n"), std::string::npos) << r.text;
  EXPECT_FALSE(fs::exists("/usr/srt-psess-x"));
  EXPECT_FALSE(fs::exists("/etc/srt-psess-x"));
  EXPECT_FALSE(fs::exists(Workspace("sesn_other") + "/planted"));
  // The workspace itself is writable and is the host directory.
  r = Bash(sid, "echo made-inside > /workspace/inside.txt; echo $?");
  EXPECT_EQ(r.text, "0\n\n");
  EXPECT_EQ(ReadAll(Workspace(sid) + "/inside.txt"), "made-inside\n");

  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// Hostile: srt-poller runs as root, and bwrap maps a root caller to the host's uid 0, so the
// agent's shell reads every file root may read (without any capability, owner bits suffice)
// unless the policy hides it: a service's private key, another program's database. A list of
// known secrets cannot keep up with a host, so the session policy hides the whole host but for
// what tools need (/usr and the parts of /etc they read).
TEST_F(PollerSessionTest, BashReadsNothingOfTheHostButWhatToolsNeed) {
  const std::string secret_dir = dir_ + "-hostsecret";
  fs::create_directories(secret_dir);
  WriteAll(secret_dir + "/service.key", "host service private key\n", 0600);
  // Where a host's secrets live outside the home directories and srt-poller's own state.
  const std::string var_secret = "/var/tmp/" + fs::path(dir_).filename().string() + ".key";
  WriteAll(var_secret, "host service private key\n", 0600);
  auto work = StartSession("sesn_host");
  const std::string sid = "sesn_host";
  for (const std::string& path : {secret_dir + "/service.key", var_secret}) {
    Posted r = Bash(sid, "cat " + path + "; echo \"rc=$?\"");
    EXPECT_EQ(r.text.find("host service private key"), std::string::npos) << path << ": " << r.text;
    EXPECT_NE(r.text.find("rc=1"), std::string::npos) << r.text;
  }
  Posted r = Bash(
      sid,
      "find /etc/ssl/private /var/lib /opt /srv -mindepth 1 2>/dev/null | grep -c . ; echo end");
  EXPECT_EQ(r.text, "0\nend\n\n");
  // What tools need is there: the loader, users, TLS roots, git, Python.
  r = Bash(sid,
           "id -un && git --version >/dev/null && python3 -c 'import ssl; "
           "print(ssl.get_default_verify_paths().openssl_cafile)' && ls /etc/ssl/certs | grep -c "
           "pem >/dev/null && echo tools-ok");
  EXPECT_NE(r.text.find("tools-ok"), std::string::npos) << r.text;
  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
  fs::remove_all(secret_dir);
  fs::remove(var_secret);
}

// Hostile: the agent's shell is srt-toolbox's child, with the same uid. It must not open the
// toolbox's descriptors (the channel: a forged answer, a stolen call) through /proc or
// pidfd_getfd, nor read its environment or memory; nor those of srt-init, the sandbox's PID 1
// (its stderr is the poller's). Both are non-dumpable, so the sandbox's /proc (hidepid=
// invisible) does not even show them, and pidfd_getfd's ptrace check refuses.
TEST_F(PollerSessionTest, BashCannotReachTheToolboxsOrInitsDescriptors) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  auto work = StartSession("sesn_steal");
  const std::string sid = "sesn_steal";
  Posted r = Bash(sid, R"sh(/usr/bin/python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pp = int(sys.argv[1])  # $PPID of the shell: srt-toolbox
def show(what, f):
    try:
        f()
        print(what, "ok")
    except OSError as e:
        print(what, os.strerror(e.errno))
show("toolbox comm", lambda: open(f"/proc/{pp}/comm").read())
show("toolbox fd", lambda: os.readlink(f"/proc/{pp}/fd/1"))
show("toolbox environ", lambda: open(f"/proc/{pp}/environ", "rb").read())
show("toolbox mem", lambda: open(f"/proc/{pp}/mem", "rb"))
show("init fd", lambda: os.readlink("/proc/1/fd/2"))
pidfd = os.pidfd_open(pp)
r = libc.syscall(438, pidfd, 1, 0)  # pidfd_getfd
print("pidfd_getfd", "ok" if r >= 0 else os.strerror(ctypes.get_errno()))
'  "$PPID")sh");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text,
            "toolbox comm No such file or directory\n"
            "toolbox fd No such file or directory\n"
            "toolbox environ No such file or directory\n"
            "toolbox mem No such file or directory\n"
            "init fd No such file or directory\n"
            "pidfd_getfd Operation not permitted\n\n");
  // The toolbox still serves the session.
  EXPECT_EQ(Bash(sid, "echo still-served").text, "still-served\n\n");
  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// Hostile: the agent's shell signals srt-toolbox (its $PPID) and srt-init (PID 1) every way it
// can: kill, pidfd_send_signal, and a SIGIO through F_SETOWN (whose default action kills). The
// shell lives in a Landlock domain that may signal only itself and below, so each is refused
// with EPERM (the SIGIO is dropped) while the shell's own jobs still take its signals; the
// toolbox keeps serving. Before: `kill -STOP $PPID` wedged the session until the deadlines.
TEST_F(PollerSessionTest, TheShellCannotSignalTheToolboxOrInit) {
  if (sys::LandlockAbi() < sys::kLandlockSignalScopeAbi) {
    GTEST_SKIP() << "this kernel has no Landlock signal scoping (Linux 6.12)";
  }
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  auto work = StartSession("sesn_signal");
  const std::string sid = "sesn_signal";
  Posted r = Bash(sid, R"sh(toolbox=$PPID
kill -STOP $toolbox 2>/dev/null; echo "stop toolbox $?"
kill -KILL $toolbox 2>/dev/null; echo "kill toolbox $?"
kill -TERM 1 2>/dev/null; echo "term init $?"
kill -STOP -1 2>/dev/null  # 0 even when all refuse (kill(2)); still-served below says it did
/usr/bin/python3 -c '
import fcntl, os, signal, sys, time
pp = int(sys.argv[1])
for target, name in ((pp, "toolbox"), (1, "init")):
    try:
        signal.pidfd_send_signal(os.pidfd_open(target), signal.SIGSTOP)
        print("pidfd stop", name, "ok")
    except OSError as e:
        print("pidfd stop", name, os.strerror(e.errno))
r, w = os.pipe()
fcntl.fcntl(r, fcntl.F_SETOWN, pp)
fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
os.write(w, b"x")
time.sleep(0.2)
print("sigio sent")
' "$toolbox"
(sleep 60 & kill $!; wait $!; echo "own job $?"))sh");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text,
            "stop toolbox 1\n"
            "kill toolbox 1\n"
            "term init 1\n"
            "pidfd stop toolbox Operation not permitted\n"
            "pidfd stop init Operation not permitted\n"
            "sigio sent\n"
            "own job 143\n\n");
  // The toolbox neither stopped nor died of the SIGIO: it still serves the session.
  EXPECT_EQ(Bash(sid, "echo still-served").text, "still-served\n\n");
  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// srt-toolbox stops in the middle of a call (a kernel without signal scoping lets the shell do
// this with `kill -STOP $PPID`; here the host does it). The call in flight is cancelled and
// given up on, the sandbox is killed, and srt-poller's SIGTERM is honoured at once instead of
// waiting for a toolbox that will never read its EOF.
TEST_F(PollerSessionTest, AStoppedToolboxDoesNotHoldUpTheWorker) {
  auto work = StartSession("sesn_stopped");
  const std::string sid = "sesn_stopped";
  // Other tests' sessions may run alongside: the toolbox is found as the parent of the shell
  // that runs this call's `sleep 60.25`.
  auto field = [](pid_t pid, const std::string& name) {
    std::istringstream status(ReadAll("/proc/" + std::to_string(pid) + "/status"));
    for (std::string line; std::getline(status, line);) {
      if (line.rfind(name + ":\t", 0) == 0) return line.substr(name.size() + 2);
    }
    return std::string();
  };
  auto find_sleep = [] {
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string pid = e.path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (ReadAll(e.path().string() + "/cmdline") == std::string("sleep\0"
                                                                 "60.25\0",
                                                                 12)) {
        return static_cast<pid_t>(std::stol(pid));
      }
    }
    return pid_t{-1};
  };
  auto appended =
      cp_->AppendEvents(sid, ToolUse("toolu_stop", "bash", {{"command", "sleep 60.25"}}));
  ASSERT_TRUE(appended.has_value()) << appended.error().message();
  ASSERT_TRUE(WaitFor([&] { return find_sleep() > 0; }, 20s, 20ms)) << poller_->Logs();
  const pid_t shell = static_cast<pid_t>(std::stol(field(find_sleep(), "PPid")));
  const pid_t toolbox = static_cast<pid_t>(std::stol(field(shell, "PPid")));
  ASSERT_EQ(field(toolbox, "Name"), "srt-toolbox");
  ASSERT_EQ(kill(toolbox, SIGSTOP), 0);
  ASSERT_TRUE(WaitFor([&] { return field(toolbox, "State").rfind("T", 0) == 0; }, 5s, 20ms))
      << field(toolbox, "State");
  auto start = std::chrono::steady_clock::now();
  poller_->Signal(SIGTERM);
  auto code = poller_->Wait(30s);
  ASSERT_TRUE(code.has_value()) << "srt-poller did not stop:\n" << poller_->Logs();
  EXPECT_EQ(*code, 0);
  // 5 s for the cancel, 2 s for the EOF, 3 s from SIGTERM to SIGKILL, and slack.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  // The call got one answer, an error; the toolbox is gone; the item was stopped.
  Posted r = WaitResult(sid, "toolu_stop", 1s);
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("did not answer within 5s of a cancel"), std::string::npos) << r.text;
  EXPECT_EQ(field(toolbox, "Name"), "") << "srt-toolbox is still there";
  EXPECT_NE(poller_->Logs().find("srt-toolbox did not exit on EOF; signalling it"),
            std::string::npos)
      << poller_->Logs();
  auto stopped = cp_->WaitForWorkState(work.work_id, "stopped", 5s);
  EXPECT_TRUE(stopped.has_value()) << stopped.error().message();
}

// ---- confirmations -----------------------------------------------------------------------------

TEST_F(PollerSessionTest, AskWaitsForTheVerdictAndDenyNeverRuns) {
  auto work = StartSession("sesn_ask");
  const std::string sid = "sesn_ask";
  const std::string ws = WorkspaceOnceMounted(sid);

  // "ask": held. A later allowed call is the barrier proving the runner saw it and ran nothing.
  ASSERT_TRUE(
      cp_->AppendEvents(sid, ToolUse("toolu_ask_allow", "bash",
                                     {{"command", "touch /workspace/allowed; echo ran"}}, "ask"))
          .has_value());
  ASSERT_TRUE(
      cp_->AppendEvents(sid, ToolUse("toolu_ask_deny", "bash",
                                     {{"command", "touch /workspace/denied; echo ran"}}, "ask"))
          .has_value());
  ASSERT_TRUE(
      cp_->AppendEvents(sid, ToolUse("toolu_server_deny", "bash",
                                     {{"command", "touch /workspace/never; echo ran"}}, "deny"))
          .has_value());
  EXPECT_EQ(Bash(sid, "echo barrier").text, "barrier\n\n");
  EXPECT_FALSE(fs::exists(ws + "/allowed"));
  EXPECT_FALSE(fs::exists(ws + "/denied"));
  EXPECT_FALSE(fs::exists(ws + "/never"));
  EXPECT_FALSE(FindResult(sid, "toolu_ask_allow").has_value());
  EXPECT_FALSE(FindResult(sid, "toolu_ask_deny").has_value());

  // deny: nothing runs, nothing is posted.
  ASSERT_TRUE(cp_->AppendEvents(sid, json{{"type", "user.tool_confirmation"},
                                          {"tool_use_id", "toolu_ask_deny"},
                                          {"result", "deny"}})
                  .has_value());
  // allow: it runs now and posts.
  ASSERT_TRUE(cp_->AppendEvents(sid, json{{"type", "user.tool_confirmation"},
                                          {"tool_use_id", "toolu_ask_allow"},
                                          {"result", "allow"}})
                  .has_value());
  Posted r = WaitResult(sid, "toolu_ask_allow");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "ran\n\n");
  EXPECT_TRUE(fs::exists(ws + "/allowed"));
  EXPECT_EQ(Bash(sid, "echo barrier2").text, "barrier2\n\n");
  EXPECT_FALSE(fs::exists(ws + "/denied"));
  EXPECT_FALSE(fs::exists(ws + "/never"));

  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
  auto results = cp_->Results(sid);
  ASSERT_TRUE(results.has_value());
  std::vector<std::string> answered;
  for (const auto& x : *results) answered.push_back(x["event"].value("tool_use_id", ""));
  EXPECT_EQ(answered, (std::vector<std::string>{"toolu_1", "toolu_ask_allow", "toolu_2"}));
}

// ---- SSE drops ---------------------------------------------------------------------------------

TEST_F(PollerSessionTest, StreamDropsAreReconciledAndEveryCallIsAnsweredOnce) {
  auto work = StartSession("sesn_drop");
  const std::string sid = "sesn_drop";
  EXPECT_EQ(Bash(sid, "echo 1").text, "1\n\n");

  // Drop cleanly, keep appending while the runner reconnects; then abruptly; then a stream
  // that breaks after one event.
  std::vector<std::string> ids;
  auto add = [&](const std::string& id) {
    ids.push_back(id);
    ASSERT_TRUE(
        cp_->AppendEvents(sid, ToolUse(id, "bash", {{"command", "echo " + id}})).has_value());
  };
  ASSERT_TRUE(cp_->DropStreams(sid, /*abrupt=*/false).has_value());
  add("toolu_d1");
  add("toolu_d2");
  ASSERT_TRUE(cp_->WaitForStreams(sid, 1, kStartTimeout).has_value());
  ASSERT_TRUE(cp_->DropStreams(sid, /*abrupt=*/true).has_value());
  add("toolu_d3");
  FakeControlPlane::Fault f;
  f.endpoint = "stream";
  f.kind = "stream_drop";
  f.session_id = sid;
  f.after_events = 1;
  f.abrupt = true;
  ASSERT_TRUE(cp_->AddFault(f).has_value());
  ASSERT_TRUE(cp_->WaitForStreams(sid, 1, kStartTimeout).has_value());
  add("toolu_d4");
  add("toolu_d5");
  add("toolu_d6");
  for (const auto& id : ids) {
    Posted r = WaitResult(sid, id);
    EXPECT_EQ(r.text, id + "\n\n");
  }
  EXPECT_EQ(Bash(sid, "echo last").text, "last\n\n");

  auto results = cp_->Results(sid);
  ASSERT_TRUE(results.has_value());
  std::map<std::string, int> count;
  for (const auto& x : *results) {
    EXPECT_FALSE(x.value("duplicate", false)) << x.dump();
    ++count[x["event"].value("tool_use_id", "")];
  }
  EXPECT_EQ(count.size(), ids.size() + 2);
  for (const auto& [id, n] : count) EXPECT_EQ(n, 1) << id;
  // It did reconnect (stream requests after the first) and read the history again.
  auto streams = cp_->Requests({.endpoint = "stream", .session_id = sid});
  ASSERT_TRUE(streams.has_value());
  EXPECT_GE(streams->size(), 3u);
  auto lists = cp_->Requests({.endpoint = "events_list", .session_id = sid});
  ASSERT_TRUE(lists.has_value());
  EXPECT_GE(lists->size(), 3u);

  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// ---- the environment key -----------------------------------------------------------------------

// A bash script that searches the sandbox for `secret` without ever holding it in an argument or
// an exported variable (the pattern comes from a pipe, printed from two halves), and plants a
// canary in every place searched (a file, an exported variable, a process's argv, an open fd)
// so each search proves it works. Prints "<key|canary> <place>: found|not found" lines, whether
// any process holds the key file open, and the toolbox's argv.
// The secret is unique to the run, so only files written since the test started (`since`,
// seconds since the epoch) can hold it: /tmp (the host's, read-only, gigabytes on a build box)
// is searched by that, the other trees whole.
std::string LeakSearch(const std::string& secret, const std::string& canary, int64_t since) {
  auto halves = [](const std::string& x) {
    size_t h = x.size() / 2;
    return "'" + x.substr(0, h) + "' '" + x.substr(h) + "'";
  };
  return "key() { printf '%s%s\\n' " + halves(secret) + "; }\n" + "canary() { printf '%s%s\\n' " +
         halves(canary) + "; }\n" +
         "canary > /workspace/canary.txt; canary > /tmp/canary.txt 2>/dev/null\n"
         "export CANARY_VAR=\"$(canary)\"\n"
         "exec 7</workspace/canary.txt\n"
         "(exec -a \"$(canary)\" sleep 120) & holder=$!\n"
         // The holder shows the canary once it has exec'd sleep: wait for that (at most 10 s),
         // or a loaded machine makes the environ and cmdline searches race its fork.
         "for i in $(seq 1000); do grep -qaF -f <(canary) /proc/$holder/cmdline 2>/dev/null "
         "&& break; sleep 0.01; done\n"
         "look() { name=$1; shift; for p in key canary; do\n"
         "  if \"$@\" 2>/dev/null | grep -qaF -f <($p); then r=found; else r='not found'; fi\n"
         "  echo \"$p $name: $r\"; done; }\n"
         "workspace() { grep -rhsaF -f <(key; canary) /workspace; }\n"
         "tmp() { find /tmp -xdev -type f -newermt @" +
         std::to_string(since) +
         " -print0 2>/dev/null | xargs -0 -r grep -hsaF -f <(key; canary); }\n"
         "system() { grep -rhsaF -f <(key; canary) /etc /run /var --exclude-dir=cache; }\n"
         "fdcat() { for l in /proc/[0-9]*/fd/*; do t=$(readlink \"$l\"); [ -f \"$t\" ] && echo "
         "\"$t\"; done | sort -u | xargs -r -d '\\n' cat; }\n"
         "look env env\n"
         "look environ cat /proc/[0-9]*/environ\n"
         "look cmdline cat /proc/[0-9]*/cmdline\n"
         "look workspace workspace\nlook tmp tmp\nlook system system\n"
         "look fds fdcat\n"
         "if ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -q environment.key; then echo 'key file "
         "open: yes'; else echo 'key file open: no'; fi\n"
         "kill $holder; wait $holder 2>/dev/null; exec 7<&-\n"
         "if pgrep -x srt-toolbox >/dev/null; then echo 'toolbox: visible'; else echo 'toolbox: "
         "invisible'; fi\n";
}

class PollerKeyTest : public PollerSessionTest, public ::testing::WithParamInterface<bool> {};

TEST_P(PollerKeyTest, TheEnvironmentKeyAndTheSessionsTokenNeverReachTheSandbox) {
  const bool key_in_env = GetParam();
  // With the key in the environment there is no key file (else nothing would deny it).
  if (key_in_env) fs::remove(key_file_);
  const int64_t since = static_cast<int64_t>(time(nullptr)) - 2;
  auto work = StartSession("sesn_key", {}, key_in_env);
  ASSERT_FALSE(work.sessions_token.empty());
  const std::string canary = "canary-" + std::to_string(getpid()) + "-psess";
  const std::string expected =
      "key env: not found\ncanary env: found\n"
      "key environ: not found\ncanary environ: found\n"
      "key cmdline: not found\ncanary cmdline: found\n"
      "key workspace: not found\ncanary workspace: found\n"
      "key tmp: not found\ncanary tmp: found\n"
      "key system: not found\ncanary system: not found\n"
      "key fds: not found\ncanary fds: found\n"
      "key file open: no\n";
  // The host's /tmp is visible (read-only): a canary there proves its search works.
  WriteAll(dir_ + "/host-canary.txt", canary + "\n", 0644);
  for (const std::string& secret : {cp_->environment_key(), work.sessions_token}) {
    Posted r = Run("sesn_key", "bash",
                   {{"command", LeakSearch(secret, canary, since)}, {"timeout_ms", 60000}}, 90s);
    EXPECT_FALSE(r.is_error) << r.text;
    // (Before the report: the shell's job notice, and EROFS for the canary in /tmp.)
    size_t report = r.text.find("key env: ");
    ASSERT_NE(report, std::string::npos) << r.text;
    EXPECT_EQ(r.text.substr(report, expected.size()), expected) << r.text;
    // The toolbox (non-dumpable) is not even in the shell's /proc: neither its argv nor its
    // environment nor its memory can be searched.
    EXPECT_NE(r.text.find("toolbox: invisible\n"), std::string::npos) << r.text;
  }
  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

INSTANTIATE_TEST_SUITE_P(KeySource, PollerKeyTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "FromEnv" : "FromFile";
                         });

// ---- --on-work ---------------------------------------------------------------------------------

class PollerOnWorkTest : public PollerSessionTest {
 protected:
  // These tests read what the script wrote from the host once it has exited, when a --disk
  // workspace is unmounted: plain directories (TheScriptsWorkspaceIsAFilesystemOfItsOwn covers
  // the script's workspace with --disk).
  PollerOnWorkTest() { default_extra_ = {"--disk", "0"}; }
  std::string WriteScript(const std::string& body, mode_t mode = 0755) {
    std::string path = dir_ + "/on-work-" + std::to_string(++scripts_) + ".sh";
    WriteAll(path, "#!/bin/bash\n" + body, mode);
    return path;
  }
  int scripts_ = 0;
};

TEST_F(PollerOnWorkTest, TheScriptGetsTheWorkAndIdsButNotTheKey) {
  const std::string token = "sk-ant-req-fake-onwork-token";
  std::string script = WriteScript(
      "env > /workspace/env.txt\n"
      "cat > /workspace/stdin.json\n"
      "id > /workspace/id.txt\n"
      "echo script-says-out\n"
      "echo script-says-err >&2\n"
      "curl -sS -o /workspace/session.json -w '%{http_code}' "
      "-H 'Authorization: Bearer " +
      token +
      "' -H 'anthropic-version: 2023-06-01' -H 'anthropic-beta: managed-agents-2026-04-01' "
      "\"$ANTHROPIC_BASE_URL/v1/sessions/$ANTHROPIC_SESSION_ID\" > /workspace/curl.txt "
      "2>/workspace/curl.err\n"
      "exit 0\n");
  FakeControlPlane::Enqueued work = Enqueue({.session_id = "sesn_ow", .sessions_token = token});
  StartPoller({"--on-work", script}, false, {{"ANTHROPIC_BASE_URL", cp_->base_url()}});
  // Gracefully stopped once the script returned: a stop with force=false.
  ASSERT_TRUE(WaitFor(
      [&] {
        auto w = cp_->WorkState(work.work_id);
        return w && !(*w)["stops"].empty();
      },
      kStartTimeout))
      << poller_->Logs();
  auto w = cp_->WorkState(work.work_id);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ((*w)["stops"][0]["force"], false) << w->dump();
  const std::string ws = Workspace("sesn_ow");

  json in = json::parse(ReadAll(ws + "/stdin.json"), nullptr, false);
  ASSERT_TRUE(in.is_object()) << ReadAll(ws + "/stdin.json");
  EXPECT_EQ(in["id"], work.work_id);
  EXPECT_EQ(in["secret"], work.secret);
  EXPECT_EQ(in["data"]["id"], "sesn_ow");

  std::string env = ReadAll(ws + "/env.txt");
  EXPECT_NE(env.find("ANTHROPIC_WORK_ID=" + work.work_id + "\n"), std::string::npos) << env;
  EXPECT_NE(env.find("ANTHROPIC_SESSION_ID=sesn_ow\n"), std::string::npos) << env;
  EXPECT_NE(env.find("ANTHROPIC_ENVIRONMENT_ID=" + cp_->environment_id() + "\n"), std::string::npos)
      << env;
  EXPECT_EQ(env.find("ANTHROPIC_ENVIRONMENT_KEY"), std::string::npos) << env;
  EXPECT_EQ(env.find(cp_->environment_key()), std::string::npos) << env;
  EXPECT_NE(env.find("HTTP_PROXY="), std::string::npos) << env;
  EXPECT_FALSE(ReadAll(ws + "/id.txt").empty());

  // Both of the script's streams reached the poller's log (as records of the session, below);
  // its stdout stays clean.
  EXPECT_TRUE(poller_->WaitForLog("script-says-err", 5s)) << poller_->Logs();
  EXPECT_NE(poller_->Logs().find("script-says-out"), std::string::npos);
  EXPECT_EQ(poller_->Stdout(), "");

  // The script reached the fake through srt's proxy.
  EXPECT_EQ(ReadAll(ws + "/curl.txt"), "200") << ReadAll(ws + "/curl.err") << "\n"
                                              << poller_->Logs();
  json session = json::parse(ReadAll(ws + "/session.json"), nullptr, false);
  EXPECT_EQ(session.value("id", ""), "sesn_ow") << ReadAll(ws + "/session.json");

  EXPECT_EQ(StopPoller(), 0);
}

// The lease hand-off of the SDK: srt-poller sends the item's first heartbeat (with the item's
// sessions token) before the sandbox starts and hands its last_heartbeat to the script, whose
// worker continues the lease from it. --no-lease-handoff leaves the lease to the script.
TEST_F(PollerOnWorkTest, TheScriptContinuesTheLeaseSrtPollerStarted) {
  const std::string token = "sk-ant-req-fake-handoff-token";
  std::string script = WriteScript(
      "env > /workspace/env.txt\n"
      "curl -sS -G -X POST -o /dev/null -w '%{http_code}' "
      "-H 'Authorization: Bearer " +
      token +
      "' -H 'anthropic-version: 2023-06-01' -H 'anthropic-beta: managed-agents-2026-04-01' "
      "--data-urlencode \"expected_last_heartbeat=$ANTHROPIC_WORK_LAST_HEARTBEAT\" "
      "\"$ANTHROPIC_BASE_URL/v1/environments/$ANTHROPIC_ENVIRONMENT_ID/work/$ANTHROPIC_WORK_ID/"
      "heartbeat\" > /workspace/beat.txt 2>/workspace/beat.err\n");
  FakeControlPlane::Enqueued work = Enqueue({.session_id = "sesn_hand", .sessions_token = token});
  StartPoller({"--on-work", script});
  ASSERT_TRUE(WaitFor(
      [&] {
        auto w = cp_->WorkState(work.work_id);
        return w && !(*w)["stops"].empty();
      },
      kStartTimeout))
      << poller_->Logs();
  auto w = cp_->WorkState(work.work_id);
  ASSERT_TRUE(w.has_value());
  const std::string ws = Workspace("sesn_hand");
  EXPECT_EQ(ReadAll(ws + "/beat.txt"), "200") << ReadAll(ws + "/beat.err");
  const json& beats = (*w)["heartbeats"];
  ASSERT_EQ(beats.size(), 2u) << w->dump();
  EXPECT_EQ(beats[0]["expected"], "NO_HEARTBEAT");
  EXPECT_EQ(beats[1]["expected"].get<std::string>().empty(), false);
  EXPECT_EQ(beats[1]["ok"], true) << w->dump();
  const std::string env = ReadAll(ws + "/env.txt");
  EXPECT_NE(
      env.find("ANTHROPIC_WORK_LAST_HEARTBEAT=" + beats[1]["expected"].get<std::string>() + "\n"),
      std::string::npos)
      << env;
  auto ours = cp_->Requests({.endpoint = "heartbeat", .work_id = work.work_id});
  ASSERT_TRUE(ours.has_value());
  for (const auto& r : *ours) EXPECT_EQ(r["auth"], "sessions_token") << r.dump();
  auto stops = cp_->Requests({.endpoint = "stop", .work_id = work.work_id});
  ASSERT_TRUE(stops.has_value());
  for (const auto& r : *stops) EXPECT_EQ(r["auth"], "sessions_token") << r.dump();
  EXPECT_EQ(StopPoller(), 0);

  // Without the hand-off the script gets no token and srt-poller sends no heartbeat.
  FakeControlPlane::Enqueued own = Enqueue({.session_id = "sesn_own"});
  StartPoller({"--on-work", WriteScript("env > /workspace/env.txt\n"), "--no-lease-handoff"});
  ASSERT_TRUE(WaitFor(
      [&] {
        auto o = cp_->WorkState(own.work_id);
        return o && !(*o)["stops"].empty();
      },
      kStartTimeout))
      << poller_->Logs();
  EXPECT_EQ(ReadAll(Workspace("sesn_own") + "/env.txt").find("ANTHROPIC_WORK_LAST_HEARTBEAT"),
            std::string::npos);
  auto o = cp_->WorkState(own.work_id);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ((*o)["heartbeats"].size(), 0u) << o->dump();
  EXPECT_EQ(StopPoller(), 0);
}

// Hostile: what the sandbox writes never reaches srt-poller's own descriptors. Each line is a
// record of its session, escaped, so a forged record stays a value; a long line is cut at 4 KiB
// and the rest counted.
TEST_F(PollerOnWorkTest, TheScriptsOutputIsLoggedAsRecordsOfItsSession) {
  std::string script = WriteScript(
      "cat >/dev/null\n"
      "echo plain-out\n"
      "printf 'time=2026-01-01T00:00:00.000Z level=ERROR msg=\"forged record\"\\n' >&2\n"
      "head -c 10000 /dev/zero | tr '\\0' x; echo\n");
  Enqueue({.session_id = "sesn_out"});
  StartPoller({"--on-work", script});
  ASSERT_TRUE(poller_->WaitForLog("session item finished", kStartTimeout)) << poller_->Logs();
  EXPECT_EQ(StopPoller(), 0);
  const std::string logs = poller_->Logs();
  std::vector<std::string> records;
  std::istringstream in(logs);
  for (std::string line; std::getline(in, line);) {
    if (line.find("msg=\"sandbox output\"") != std::string::npos) records.push_back(line);
    EXPECT_NE(line.rfind("time=2026-01-01T00:00:00.000Z", 0), 0u) << "a forged record: " << line;
  }
  auto has = [&](const std::string& what) {
    for (const auto& r : records) {
      if (r.find(what) != std::string::npos && r.find("session_id=sesn_out") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(has(" line=plain-out")) << logs;
  EXPECT_TRUE(has(R"( line="time=2026-01-01T00:00:00.000Z level=ERROR msg=\"forged record\"")"))
      << logs;
  EXPECT_TRUE(has(" line=" + std::string(4096, 'x') + " cut=true")) << logs;
  EXPECT_NE(logs.find("msg=\"sandbox output not logged\""), std::string::npos) << logs;
  EXPECT_NE(logs.find("bytes=5904"), std::string::npos) << logs;
}

// The script runs the session's code: of srt-poller's environment it gets only what the
// operator names with --script-env, on top of the curated base and the protocol's variables.
TEST_F(PollerOnWorkTest, TheScriptGetsOnlyTheEnvironmentItIsGiven) {
  std::string script = WriteScript("cat >/dev/null; env > /workspace/env.txt\n");
  Enqueue({.session_id = "sesn_owenv"});
  StartPoller({"--on-work", script, "--script-env", "SRT_TEST_NAMED,SRT_TEST_UNSET", "--script-env",
               "SRT_TEST_ALSO"},
              false,
              {{"SRT_TEST_NAMED", "named-value"},
               {"SRT_TEST_ALSO", "also-value"},
               {"SRT_TEST_UNNAMED", "cloud-token-of-the-host"}});
  ASSERT_TRUE(poller_->WaitForLog("session item finished", kStartTimeout)) << poller_->Logs();
  const std::string env = ReadAll(Workspace("sesn_owenv") + "/env.txt");
  EXPECT_NE(env.find("\nSRT_TEST_NAMED=named-value\n"), std::string::npos) << env;
  EXPECT_NE(env.find("\nSRT_TEST_ALSO=also-value\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("SRT_TEST_UNSET"), std::string::npos) << env;
  EXPECT_EQ(env.find("cloud-token-of-the-host"), std::string::npos) << env;
  EXPECT_NE(env.find("\nHOME=/workspace\n"), std::string::npos) << env;
  EXPECT_NE(env.find("ANTHROPIC_SESSION_ID=sesn_owenv\n"), std::string::npos) << env;
  EXPECT_EQ(StopPoller(), 0);
}

TEST_F(PollerOnWorkTest, TheKeyOnlyWithScriptGetsEnvironmentKey) {
  std::string script = WriteScript("cat >/dev/null; env > /workspace/env.txt\n");
  Enqueue({.session_id = "sesn_owk"});
  StartPoller({"--on-work", script, "--script-gets-environment-key"});
  ASSERT_TRUE(poller_->WaitForLog("session item finished", kStartTimeout)) << poller_->Logs();
  std::string env = ReadAll(Workspace("sesn_owk") + "/env.txt");
  EXPECT_NE(env.find("ANTHROPIC_ENVIRONMENT_KEY=" + cp_->environment_key() + "\n"),
            std::string::npos)
      << env;
  EXPECT_EQ(StopPoller(), 0);
}

TEST_F(PollerOnWorkTest, AFailingScriptIsLoggedAndPollingContinues) {
  std::string script = WriteScript(
      "cat >/dev/null; echo \"$ANTHROPIC_SESSION_ID\" >> "
      "/workspace/ran; exit 7\n");
  Enqueue({.session_id = "sesn_f1"});
  Enqueue({.session_id = "sesn_f2"});
  StartPoller({"--on-work", script});
  ASSERT_TRUE(
      WaitFor([&] { return poller_->CountLog("session item finished") >= 2; }, kStartTimeout))
      << poller_->Logs();
  EXPECT_EQ(poller_->CountLog("on-work script failed"), 2u) << poller_->Logs();
  EXPECT_NE(poller_->Logs().find("exit_code=7"), std::string::npos) << poller_->Logs();
  EXPECT_EQ(ReadAll(Workspace("sesn_f1") + "/ran"), "sesn_f1\n");
  EXPECT_EQ(ReadAll(Workspace("sesn_f2") + "/ran"), "sesn_f2\n");
  EXPECT_TRUE(poller_->running());
  EXPECT_EQ(StopPoller(), 0);
}

TEST_F(PollerOnWorkTest, TheScriptsWorkspaceIsAFilesystemOfItsOwn) {
  default_extra_.clear();
  std::string script = WriteScript(
      "cat >/dev/null\n"
      "echo \"workspace $(df -B1M --output=size /workspace | tail -1 | tr -d ' ') MiB\"\n"
      "head -c 100M /dev/zero > /workspace/big 2>/dev/null || echo \"full at $(($(stat -c %s "
      "/workspace/big) >> 20)) MiB\"\n");
  Enqueue({.session_id = "sesn_scriptdisk"});
  StartPoller({"--on-work", script, "--disk", "64M"});
  ASSERT_TRUE(poller_->WaitForLog("session item finished", kStartTimeout)) << poller_->Logs();
  const std::string logs = poller_->Logs();
  const size_t at = logs.find("line=\"workspace ");
  ASSERT_NE(at, std::string::npos) << logs;
  const int mib = std::stoi(logs.substr(at + 16));
  EXPECT_GE(mib, 48) << logs;
  EXPECT_LE(mib, 64) << logs;
  EXPECT_NE(logs.find("line=\"full at "), std::string::npos) << logs;
  EXPECT_TRUE(MountsBelow(sessions_, poller_->pid()).empty());
  EXPECT_EQ(StopPoller(), 0);
}

TEST_F(PollerOnWorkTest, SigtermToThePollerReachesTheScript) {
  std::string script = WriteScript(
      "trap 'echo got-term > /workspace/term; exit 0' TERM\n"
      "cat >/dev/null; touch /workspace/ready\n"
      "sleep 1000 & wait\n");
  Enqueue({.session_id = "sesn_term"});
  StartPoller({"--on-work", script});
  const std::string ws = Workspace("sesn_term");
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ws + "/ready"); }, kStartTimeout)) << poller_->Logs();
  EXPECT_EQ(StopPoller(), 0);
  EXPECT_EQ(ReadAll(Workspace("sesn_term") + "/term"), "got-term\n") << poller_->Logs();
}

TEST_F(PollerOnWorkTest, ANonExecutableScriptIsRefusedAtStart) {
  std::string script = WriteScript("exit 0\n", 0644);
  auto p = PollerProcess::Start(Args({"--on-work", script}, false));
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ((*p)->Wait(30s), 2) << (*p)->Logs();
  EXPECT_NE((*p)->Logs().find("--on-work script is not executable"), std::string::npos)
      << (*p)->Logs();
  auto polls = cp_->Requests({.endpoint = "poll"});
  ASSERT_TRUE(polls.has_value());
  EXPECT_TRUE(polls->empty());
}

// ---- skills ------------------------------------------------------------------------------------

TEST_F(PollerSessionTest, SkillsAreExtractedWithTheirModesAndRemovedAfterwards) {
  FakeControlPlane::Skill tgz;
  tgz.skill_id = "skill_tgz";
  tgz.name = "tool-tgz";
  tgz.format = "tar.gz";
  tgz.top_dir = "tool-tgz";
  tgz.files = {{"SKILL.md", {"# tgz\n", 0644}},
               {"bin/run.sh", {"#!/bin/sh\necho tgz-ran\n", 0755}}};
  FakeControlPlane::Skill zip;
  zip.skill_id = "skill_zip";
  zip.name = "tool-zip";
  zip.format = "zip";
  zip.files = {{"SKILL.md", {"# zip\n", 0644}}, {"run.sh", {"#!/bin/sh\necho zip-ran\n", 0755}}};
  // Hostile: a `..` member and an absolute one fail their archives; a symlink member is skipped
  // while the rest of its archive is extracted.
  const std::string abs_target = dir_ + "/abs-escape";
  FakeControlPlane::Skill dotdot;
  dotdot.skill_id = "skill_dotdot";
  dotdot.name = "evil-dotdot";
  dotdot.format = "tar";
  dotdot.files = {{"ok.txt", {"fine\n", 0644}}};
  dotdot.members = {{.name = "../escape", .content = "escaped\n"}};
  FakeControlPlane::Skill absolute;
  absolute.skill_id = "skill_abs";
  absolute.name = "evil-abs";
  absolute.format = "tar.gz";
  absolute.files = {{"ok.txt", {"fine\n", 0644}}};
  absolute.members = {{.name = abs_target, .content = "escaped\n"}};
  FakeControlPlane::Skill link;
  link.skill_id = "skill_link";
  link.name = "evil-link";
  link.format = "zip";
  link.files = {{"ok.txt", {"fine\n", 0644}}};
  link.members = {{.name = "passwd", .type = "symlink", .target = "/etc/passwd"},
                  {.name = "up", .type = "symlink", .target = "../../.."}};
  json refs = json::array();
  for (const auto* s : {&tgz, &dotdot, &zip, &absolute, &link}) {
    auto added = cp_->AddSkill(*s);
    ASSERT_TRUE(added.has_value()) << added.error().message();
    refs.push_back({{"skill_id", s->skill_id}, {"version", (*added)["version"]}});
  }
  ASSERT_TRUE(cp_->PutSession("sesn_skills", {{"skills", refs}}).has_value());

  auto work = StartSession("sesn_skills");
  const std::string sid = "sesn_skills";
  const std::string ws = WorkspaceOnceMounted(sid);

  Posted r =
      Bash(sid,
           "cd /workspace/skills && ls -1; test -x tool-tgz/bin/run.sh && tool-tgz/bin/run.sh; "
           "test -x tool-zip/run.sh && tool-zip/run.sh; test -x tool-tgz/SKILL.md || "
           "echo md-not-exec; cat evil-link/ok.txt; ls -A evil-link");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text,
            "evil-link\ntool-tgz\ntool-zip\ntgz-ran\nzip-ran\nmd-not-exec\nfine\nok.txt\n\n");
  EXPECT_FALSE(fs::exists(ws + "/skills/escape"));
  EXPECT_FALSE(fs::exists(ws + "/escape"));
  EXPECT_FALSE(fs::exists(abs_target));
  EXPECT_FALSE(fs::exists(ws + "/skills/evil-dotdot"));
  EXPECT_FALSE(fs::exists(ws + "/skills/evil-abs"));
  EXPECT_EQ(poller_->CountLog("skill failed"), 2u) << poller_->Logs();

  EndSession(work);
  // The item is over: its workspace is unmounted, and its thread (whose root `ws` is) gone.
  EXPECT_FALSE(fs::exists(Workspace(sid) + "/skills"));
  EXPECT_TRUE(fs::exists(Workspace(sid)));
  EXPECT_EQ(StopPoller(), 0);
}

// Reading the session is a per-session call: it takes the item's sessions token, never the
// environment key (which a control plane may refuse there); the skills API takes the key.
TEST_F(PollerSessionTest, TheSessionIsReadWithTheSessionsTokenAndSkillsWithTheKey) {
  ASSERT_TRUE(cp_->Configure({{"session_accepts_env_key", false}}).has_value());
  FakeControlPlane::Skill skill;
  skill.skill_id = "skill_tok";
  skill.name = "tool-tok";
  skill.format = "zip";
  skill.files = {{"SKILL.md", {"# tok\n", 0644}}};
  auto added = cp_->AddSkill(skill);
  ASSERT_TRUE(added.has_value()) << added.error().message();
  const std::string sid = "sesn_skilltok";
  ASSERT_TRUE(cp_->PutSession(sid, {{"skills", json::array({{{"skill_id", skill.skill_id},
                                                             {"version", (*added)["version"]}}})}})
                  .has_value());

  auto work = StartSession(sid);
  Posted r = Bash(sid, "ls /workspace/skills");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "tool-tok\n\n") << poller_->Logs();
  EXPECT_EQ(poller_->CountLog("could not read the session"), 0u) << poller_->Logs();

  auto gets = cp_->Requests({.endpoint = "session_get", .session_id = sid});
  ASSERT_TRUE(gets.has_value()) << gets.error().message();
  ASSERT_FALSE(gets->empty());
  for (const auto& g : *gets) EXPECT_EQ(g["auth"], "sessions_token") << g.dump();
  auto all = cp_->Requests();
  ASSERT_TRUE(all.has_value()) << all.error().message();
  size_t skill_calls = 0;
  for (const auto& q : *all) {
    if (q.value("endpoint", "").rfind("skill", 0) != 0) continue;
    ++skill_calls;
    EXPECT_EQ(q["auth"], "env_key") << q.dump();
  }
  EXPECT_GT(skill_calls, 0u);
  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// ---- memory stores -----------------------------------------------------------------------------

json MemoryStoreResource(const std::string& id, const std::string& access,
                         const std::string& mount_path, const std::string& name = "") {
  json r = {{"type", "memory_store"}, {"memory_store_id", id}, {"access", access}};
  r["mount_path"] = mount_path.empty() ? json(nullptr) : json(mount_path);
  if (!name.empty()) r["name"] = name;
  return r;
}

// Each store is at its mount path (or the workspace's memory/<name>), writable only where it is
// read_write; what the agent changed there is written back when the item ends, on the sessions
// token, and what is not a memory (a symlink to a host file) is not; nothing of the stores is
// left for the session's next item.
TEST_F(PollerSessionTest, MemoryStoresAreMountedAndWhatTheAgentChangedIsWrittenBack) {
  ASSERT_TRUE(cp_->PutMemoryStore("memstore_notes",
                                  {{"/a.md", "alpha"}, {"/d/b.md", "beta"}, {"/gone.md", "bye"}})
                  .has_value());
  ASSERT_TRUE(cp_->PutMemoryStore("memstore_ref", {{"/r.md", "read me"}}).has_value());
  const std::string sid = "sesn_memory";
  ASSERT_TRUE(
      cp_->PutSession(
             sid, {{"resources",
                    json::array(
                        {MemoryStoreResource("memstore_notes", "read_write", "/mnt/memory/notes"),
                         MemoryStoreResource("memstore_ref", "read_only", "", "ref")})}})
          .has_value());
  auto work = StartSession(sid, {"--memory-sync-interval", "5s"});
  EXPECT_EQ(Bash(sid,
                 "cd /mnt/memory/notes && cat a.md d/b.md /workspace/memory/ref/r.md && echo && "
                 "cat .anthropic-memory-store")
                .text,
            "alphabetaread me\nversion 1\nmemstore_notes\n");
  EXPECT_EQ(Bash(sid,
                 "cd /mnt/memory/notes && printf edited > a.md && rm gone.md && printf new > "
                 "new.md && ln -s /etc/passwd passwd.md && mkfifo fifo.md && echo done")
                .text,
            "done\n\n");
  // With --disk, on a tmpfs of the session's own (charged to its memory), sized for one full
  // store each, not on the sessions filesystem every session shares.
  EXPECT_EQ(Bash(sid,
                 "stat -f -c %T /mnt/memory/notes; df -B1M --output=size /mnt/memory/notes | "
                 "tail -1 | tr -d ' '")
                .text,
            "tmpfs\n512\n\n");
  // While the session runs, what changed goes up (a delete waits for the end of the item).
  ASSERT_TRUE(poller_->WaitForLog("memory store synced", 15s)) << poller_->Logs();
  auto running = cp_->MemoryStoreContents("memstore_notes");
  ASSERT_TRUE(running.has_value()) << running.error().message();
  EXPECT_EQ(
      *running,
      (std::map<std::string, std::string>{
          {"/a.md", "edited"}, {"/d/b.md", "beta"}, {"/gone.md", "bye"}, {"/new.md", "new"}}));
  Posted ro = Bash(sid, "printf x > /workspace/memory/ref/r.md");
  EXPECT_NE(ro.text.find("Read-only file system"), std::string::npos) << ro.text;
  EXPECT_NE(Bash(sid, "ls /mnt/memory").text.find("notes"), std::string::npos);
  EndSession(work);
  ASSERT_TRUE(poller_->WaitForLog("memory store written back", 10s)) << poller_->Logs();

  auto notes = cp_->MemoryStoreContents("memstore_notes");
  ASSERT_TRUE(notes.has_value()) << notes.error().message();
  EXPECT_EQ(*notes, (std::map<std::string, std::string>{
                        {"/a.md", "edited"}, {"/d/b.md", "beta"}, {"/new.md", "new"}}))
      << poller_->Logs();
  auto ref = cp_->MemoryStoreContents("memstore_ref");
  ASSERT_TRUE(ref.has_value()) << ref.error().message();
  EXPECT_EQ(*ref, (std::map<std::string, std::string>{{"/r.md", "read me"}}));
  EXPECT_EQ(poller_->CountLog("memory not written back"), 2u) << poller_->Logs();
  auto all = cp_->Requests();
  ASSERT_TRUE(all.has_value()) << all.error().message();
  size_t memory_calls = 0;
  for (const auto& q : *all) {
    if (q.value("endpoint", "").rfind("memory_", 0) != 0) continue;
    ++memory_calls;
    EXPECT_EQ(q["auth"], "sessions_token") << q.dump();
  }
  // Two lists; a create and an update while it ran, a delete at its end.
  EXPECT_EQ(memory_calls, 2u + 3u);
  EXPECT_FALSE(fs::exists(Workspace(sid) + "/memory/ref"));
  EXPECT_FALSE(fs::exists(sessions_ + "/.memory/" + sid));
  EXPECT_EQ(StopPoller(), 0);
}

// As the official workers: a store whose path exists when the session starts fails the item
// (nothing of the host is mounted over), and so does a store of an item without a sessions
// token (the memory endpoints refuse the environment key).
TEST_F(PollerSessionTest, AStoreThatCannotBeMountedFailsTheItem) {
  ASSERT_TRUE(cp_->PutMemoryStore("memstore_etc", {{"/passwd", "x"}}).has_value());
  const std::string sid = "sesn_memexists";
  ASSERT_TRUE(cp_->PutSession(sid, {{"resources", json::array({MemoryStoreResource(
                                                      "memstore_etc", "read_write", "/etc")})}})
                  .has_value());
  FakeControlPlane::Enqueued work = Enqueue({.session_id = sid});
  StartPoller();
  ASSERT_TRUE(poller_->WaitForLog("something already exists at the memory store's path '/etc'",
                                  kStartTimeout))
      << poller_->Logs();
  auto stopped = cp_->WaitForWorkState(work.work_id, "stopped", kStartTimeout);
  EXPECT_TRUE(stopped.has_value()) << poller_->Logs();
  EXPECT_EQ(poller_->Logs().find("srt-toolbox"), std::string::npos) << poller_->Logs();

  const std::string sid2 = "sesn_memnotoken";
  ASSERT_TRUE(cp_->PutMemoryStore("memstore_nt", {{"/a", "x"}}).has_value());
  ASSERT_TRUE(cp_->PutSession(sid2, {{"resources", json::array({MemoryStoreResource(
                                                       "memstore_nt", "read_write", "")})}})
                  .has_value());
  FakeControlPlane::Enqueued work2 = Enqueue({.session_id = sid2, .with_secret = false});
  ASSERT_TRUE(poller_->WaitForLog("carries no sessions token", kStartTimeout)) << poller_->Logs();
  EXPECT_TRUE(cp_->WaitForWorkState(work2.work_id, "stopped", kStartTimeout).has_value());
  EXPECT_EQ(StopPoller(), 0);
}

// The runner opens the stream and reads the history while the session is set up (here its
// read is slow), but runs nothing before the set-up is done: a set-up that fails (a memory
// store that cannot be mounted) answers no call, which stays unanswered for the next item.
TEST_F(PollerSessionTest, ASetUpThatFailsLeavesTheCallsItReadUnrunAndUnanswered) {
  ASSERT_TRUE(cp_->PutMemoryStore("memstore_etc", {{"/passwd", "x"}}).has_value());
  const std::string sid = "sesn_setupfails";
  ASSERT_TRUE(cp_->PutSession(sid, {{"resources", json::array({MemoryStoreResource(
                                                      "memstore_etc", "read_write", "/etc")})}})
                  .has_value());
  ASSERT_TRUE(cp_->AppendEvents(sid, ToolUse("toolu_pending", "bash", {{"command", "echo ran"}}))
                  .has_value());
  ASSERT_TRUE(
      cp_->AddFault(
             {.endpoint = "session_get", .session_id = sid, .kind = "delay", .delay_ms = 1500})
          .has_value());
  FakeControlPlane::Enqueued work = Enqueue({.session_id = sid});
  StartPoller();
  auto stopped = cp_->WaitForWorkState(work.work_id, "stopped", kStartTimeout);
  ASSERT_TRUE(stopped.has_value()) << poller_->Logs();
  // The failure is logged once, and the item's last line repeats it: both are waited for, as the
  // item's state can reach the fake before its last line is written.
  ASSERT_TRUE(poller_->WaitForLog("session item finished", kStartTimeout)) << poller_->Logs();
  EXPECT_EQ(poller_->CountLog("level=ERROR msg=\"memory store\""), 1u) << poller_->Logs();
  EXPECT_EQ(poller_->CountLog("something already exists at the memory store's path '/etc'"), 2u)
      << poller_->Logs();
  auto streams = cp_->Requests({.endpoint = "stream", .session_id = sid});
  ASSERT_TRUE(streams.has_value()) << streams.error().message();
  EXPECT_FALSE(streams->empty()) << "the stream was not opened during the set-up\n"
                                 << poller_->Logs();
  auto lists = cp_->Requests({.endpoint = "events_list", .session_id = sid});
  ASSERT_TRUE(lists.has_value()) << lists.error().message();
  EXPECT_FALSE(lists->empty()) << "the history was not read during the set-up\n" << poller_->Logs();
  auto results = cp_->Results(sid);
  ASSERT_TRUE(results.has_value()) << results.error().message();
  EXPECT_TRUE(results->empty()) << results->dump();
  EXPECT_EQ(poller_->CountLog("dispatched tool"), 0u) << poller_->Logs();
  EXPECT_EQ(StopPoller(), 0);
}

// A call already in the history when the item is claimed is read before the sandbox is up, and
// runs only once the session's skills are in the workspace, however slow their download.
TEST_F(PollerSessionTest, AFirstCallReadEarlyRunsOnlyOnceTheSkillsAreInPlace) {
  FakeControlPlane::Skill skill;
  skill.skill_id = "skill_slow";
  skill.name = "tool-slow";
  skill.format = "zip";
  skill.files = {{"SKILL.md", {"# slow\n", 0644}}};
  auto added = cp_->AddSkill(skill);
  ASSERT_TRUE(added.has_value()) << added.error().message();
  const std::string sid = "sesn_slowskill";
  ASSERT_TRUE(cp_->PutSession(sid, {{"skills", json::array({{{"skill_id", skill.skill_id},
                                                             {"version", (*added)["version"]}}})}})
                  .has_value());
  ASSERT_TRUE(
      cp_->AppendEvents(sid, ToolUse("toolu_first", "bash", {{"command", "ls /workspace/skills"}}))
          .has_value());
  ASSERT_TRUE(
      cp_->AddFault({.endpoint = "skill_content", .kind = "delay", .delay_ms = 1000}).has_value());
  FakeControlPlane::Enqueued work = Enqueue({.session_id = sid});
  StartPoller();
  Posted r = WaitResult(sid, "toolu_first");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "tool-slow\n\n") << poller_->Logs();
  // The history was read before the skill had arrived.
  auto lists = cp_->Requests({.endpoint = "events_list", .session_id = sid});
  auto contents = cp_->Requests({.endpoint = "skill_content"});
  ASSERT_TRUE(lists.has_value() && contents.has_value());
  ASSERT_FALSE(lists->empty());
  ASSERT_FALSE(contents->empty());
  EXPECT_LT((*lists)[0]["seq"].get<int64_t>(), (*contents)[0]["seq"].get<int64_t>())
      << lists->dump() << "\n"
      << contents->dump();
  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// ---- limits ------------------------------------------------------------------------------------

// The cgroup directories (anywhere under /sys/fs/cgroup, a few levels deep) whose name has
// `part` in it.
std::vector<std::string> CgroupDirsNamed(const std::string& part) {
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it("/sys/fs/cgroup",
                                      fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it.depth() >= 5) it.disable_recursion_pending();
    if (it->path().filename().string().find(part) != std::string::npos) {
      found.push_back(it->path().string());
    }
  }
  return found;
}

// A SIGKILLed srt-poller cannot remove its sessions' cgroups. The next run on the same sessions
// directory finds them by its prefix and removes them, and only them: another owner's leaf in
// the same place stays.
TEST_F(PollerSessionTest, CgroupsAKilledPollerLeftAreRemovedAtItsNextStart) {
  // Unique to this run: a leftover of another run (another sessions directory) must not count.
  const std::string sid = "sesn_leftover" + std::to_string(getpid());
  auto work = StartSession(sid);
  EXPECT_EQ(Bash(sid, "echo up").text, "up\n\n");
  const std::vector<std::string> leaves = CgroupDirsNamed("-" + sid + "-");
  ASSERT_FALSE(leaves.empty()) << "the session's sandbox has no cgroup";
  const std::string decoy = fs::path(leaves[0]).parent_path().string() + "/s-sesn_other-0123abcd";
  ASSERT_EQ(mkdir(decoy.c_str(), 0755), 0) << decoy << ": " << strerror(errno);

  poller_->Signal(SIGKILL);
  ASSERT_TRUE(poller_->Wait(10s).has_value());
  for (const std::string& leaf : leaves) EXPECT_TRUE(fs::exists(leaf)) << leaf;

  StartPoller();
  for (const std::string& leaf : leaves) EXPECT_FALSE(fs::exists(leaf)) << leaf;
  EXPECT_EQ(poller_->CountLog("removed a cgroup an earlier run left behind"), leaves.size())
      << poller_->Logs();
  EXPECT_TRUE(fs::exists(decoy));
  rmdir(decoy.c_str());
  EXPECT_EQ(StopPoller(), 0);
}

// Hostile: a session fills its workspace. With --disk every workspace is a filesystem of its
// own, reserved in full: the session meets ENOSPC at its own limit (and the file tools say
// why), while another session writes on; nothing of the session is mounted once its items
// end, the unused space goes back to the host, and the files are there for the next item.
TEST_F(PollerSessionTest, AFullWorkspaceStopsOnlyItsOwnSession) {
  const std::string a = "sesn_diskfull", b = "sesn_diskother";
  auto work_a = Enqueue({.session_id = a});
  auto work_b = Enqueue({.session_id = b});
  StartPoller({"--disk", "64M", "--concurrency", "2"});
  // A result, not the stream (which opens while the sandbox starts), says the workspace is up.
  for (const std::string& sid : {a, b}) EXPECT_EQ(Bash(sid, "echo up").text, "up\n\n");
  // Each workspace is a mount of its own, nosuid and nodev, of about the size asked for.
  auto mounts = MountsBelow(sessions_, poller_->pid());
  ASSERT_EQ(mounts.size(), 2u) << poller_->Logs();
  EXPECT_NE(mounts[sessions_ + "/" + a].find("nosuid"), std::string::npos)
      << mounts[sessions_ + "/" + a];
  EXPECT_NE(mounts[sessions_ + "/" + a].find("nodev"), std::string::npos)
      << mounts[sessions_ + "/" + a];
  Posted r = Bash(a, "ls -A /workspace; df -B1M --output=size /workspace | tail -1");
  ASSERT_FALSE(r.is_error) << r.text;
  const int mib = std::stoi(r.text);
  EXPECT_GE(mib, 48) << r.text;
  EXPECT_LE(mib, 64) << r.text;

  r = Bash(a, "head -c 100M /dev/zero > /workspace/big; echo \"rc=$?\"");
  EXPECT_NE(r.text.find("No space left on device"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("rc=1"), std::string::npos) << r.text;
  r = Run(a, "write",
          {{"file_path", "/workspace/more.txt"}, {"content", std::string(1 << 20, 'x')}});
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("the workspace is full"), std::string::npos) << r.text;
  // The other session is not touched by it.
  r = Bash(b, "head -c 16M /dev/zero > /workspace/fine && echo ok");
  EXPECT_EQ(r.text, "ok\n\n");
  // Room again once the session removes what it wrote, and a file for its next item.
  EXPECT_EQ(Bash(a, "rm /workspace/big && echo kept > /workspace/keep && echo ok").text, "ok\n\n");

  // Both items end idle (end_turn, then --max-idle 2s): nothing stays mounted or attached,
  // and the image of the emptied workspace gave its unused space back.
  for (const std::string& sid : {a, b}) {
    auto idle = cp_->AppendEvents(
        sid, json{{"type", "session.status_idle"}, {"stop_reason", {{"type", "end_turn"}}}});
    ASSERT_TRUE(idle.has_value()) << idle.error().message();
  }
  for (const auto* w : {&work_a, &work_b}) {
    auto stopped = cp_->WaitForWorkState(w->work_id, "stopped", kStartTimeout);
    ASSERT_TRUE(stopped.has_value()) << stopped.error().message() << "\n" << poller_->Logs();
  }
  ASSERT_TRUE(WaitFor([&] { return poller_->CountLog("session item finished") == 2; }, 10s, 50ms))
      << poller_->Logs();
  EXPECT_TRUE(MountsBelow(sessions_, poller_->pid()).empty()) << poller_->Logs();
  // The kernel detaches an unmounted loop device asynchronously. (The spare workspace made for
  // the next new session has one of its own.)
  EXPECT_TRUE(WaitFor([&] { return SessionLoopsBelow(sessions_).empty(); }, 5s, 20ms));
  struct stat st {};
  ASSERT_EQ(stat((sessions_ + "/.disks/" + a + ".ext4").c_str(), &st), 0);
  EXPECT_LT(st.st_blocks * 512, 32 << 20) << "the image keeps " << (st.st_blocks * 512);

  // The session comes back: its next item finds its files.
  auto again = Enqueue({.session_id = a});
  auto streams = cp_->WaitForStreams(a, 2, kStartTimeout);
  ASSERT_TRUE(streams.has_value()) << streams.error().message() << "\n" << poller_->Logs();
  EXPECT_EQ(Bash(a, "cat /workspace/keep").text, "kept\n\n");
  EndSession(again);
  EXPECT_EQ(StopPoller(), 0);
  EXPECT_TRUE(MountsBelow(sessions_).empty());
}

// Hostile (found by a hostile review): a session's sandbox starts while another session's
// workspace is mounted. Its mount namespace must hold no copy of that mount once the other
// session's item ends (each item mounts its workspace in a mount namespace of its own, which no
// other sandbox copies); else the loop device stays attached and the other session's next item
// is refused.
TEST_F(PollerSessionTest, ARunningSessionDoesNotHoldAnotherSessionsWorkspace) {
  const std::string a = "sesn_held", b = "sesn_holder";
  auto work_a = Enqueue({.session_id = a});
  StartPoller({"--disk", "64M", "--concurrency", "2"});
  ASSERT_TRUE(cp_->WaitForStreams(a, 1, kStartTimeout).has_value()) << poller_->Logs();
  EXPECT_EQ(Bash(a, "echo mine > /workspace/f && echo ok").text, "ok\n\n");
  auto work_b = Enqueue({.session_id = b});
  ASSERT_TRUE(cp_->WaitForStreams(b, 1, kStartTimeout).has_value()) << poller_->Logs();
  // B keeps its item busy while A's item ends and A comes back.
  auto busy = cp_->AppendEvents(b, ToolUse("toolu_busy", "bash", {{"command", "sleep 20"}}));
  ASSERT_TRUE(busy.has_value()) << busy.error().message();
  auto idle = cp_->AppendEvents(
      a, json{{"type", "session.status_idle"}, {"stop_reason", {{"type", "end_turn"}}}});
  ASSERT_TRUE(idle.has_value()) << idle.error().message();
  ASSERT_TRUE(cp_->WaitForWorkState(work_a.work_id, "stopped", kStartTimeout).has_value())
      << poller_->Logs();
  auto again = Enqueue({.session_id = a});
  ASSERT_TRUE(cp_->WaitForStreams(a, 2, kStartTimeout).has_value()) << poller_->Logs();
  EXPECT_EQ(Bash(a, "cat /workspace/f").text, "mine\n\n") << poller_->Logs();
  EXPECT_EQ(poller_->CountLog("is still attached"), 0u) << poller_->Logs();
  EndSession(again);
  EndSession(work_b);
  EXPECT_EQ(StopPoller(), 0);
}

// Hostile (hostile review 4, F1): /proc/diskstats and /proc/partitions count the I/O of every
// block device of the host, by name; each session's workspace is a loop device of its own, so
// they would show a session, live, what the sessions beside it read and write, and how many
// there are. Both read as empty in a session, whose own workspace is still there.
TEST_F(PollerSessionTest, ASessionSeesNoOtherSessionsDiskIo) {
  const std::string other = "sesn_ioother", spy = "sesn_iospy";
  auto work_other = Enqueue({.session_id = other});
  auto work_spy = Enqueue({.session_id = spy});
  StartPoller({"--disk", "64M", "--concurrency", "2"});
  EXPECT_EQ(Bash(spy, "echo up").text, "up\n\n") << poller_->Logs();
  EXPECT_EQ(Bash(other, "head -c 4M /dev/urandom > /workspace/io && sync && echo ok").text,
            "ok\n\n");
  // The other session's workspace is on a loop device of its own.
  std::string dev;
  for (const std::string& l : SessionLoopsBelow(sessions_)) {
    if (l.find("/" + other + ".ext4") != std::string::npos) dev = l.substr(0, l.find(' '));
  }
  ASSERT_FALSE(dev.empty()) << ::testing::PrintToString(SessionLoopsBelow(sessions_));
  const Posted seen = Bash(spy, "cat /proc/diskstats /proc/partitions; echo end");
  // "loop1" but not "loop12".
  EXPECT_FALSE(std::regex_search(seen.text, std::regex("\\b" + dev + "\\b"))) << dev << " in:\n"
                                                                              << seen.text;
  EXPECT_EQ(seen.text, "end\n\n");
  // Nor /proc/fs (hostile review 6, F1): /proc/fs/ext4/<dev>/mb_groups and /proc/fs/jbd2 name
  // every mounted ext4 by its device, with its free blocks and journal commits.
  EXPECT_EQ(Bash(spy, "echo $(ls -A /proc/fs | wc -l) entries").text, "0 entries\n\n");
  // Its own workspace is its own filesystem, writable.
  EXPECT_EQ(Bash(spy,
                 "echo mine > /workspace/f && cat /workspace/f && df --output=source "
                 "/workspace | tail -1 | grep -c /dev/loop")
                .text,
            "mine\n1\n\n");
  EndSession(work_spy);
  EndSession(work_other);
  EXPECT_EQ(StopPoller(), 0);
}

// Hostile (hostile review 6, F1b): a --policy that shows the host's /sys (policies/default.json
// does) showed each loop device's backing file there, i.e. every other session's image and so its
// id, and each mounted ext4 in /sys/fs/ext4. srt-poller hides both whatever the policy says.
TEST_F(PollerSessionTest, APolicyThatShowsSysStillShowsNoOtherSession) {
  const std::string other = "sesn_sysother", spy = "sesn_sysspy";
  const std::string policy = dir_ + "/policy.json";
  {
    std::ofstream f(policy);
    f << R"({"filesystem": {"allowWrite": [], "denyWrite": [], "denyRead": []},
             "network": {"allowedDomains": [], "deniedDomains": []}})";
  }
  auto work_other = Enqueue({.session_id = other});
  auto work_spy = Enqueue({.session_id = spy});
  StartPoller({"--disk", "64M", "--concurrency", "2", "--policy", policy});
  EXPECT_EQ(Bash(other, "echo up").text, "up\n\n") << poller_->Logs();
  const Posted seen =
      Bash(spy,
           "cat /sys/devices/virtual/block/loop*/loop/backing_file 2>/dev/null; "
           "ls /sys/fs/ext4 2>/dev/null; ls /sys/class 2>/dev/null | grep -c block");
  EXPECT_EQ(seen.text.find(other), std::string::npos) << seen.text;
  EXPECT_EQ(seen.text.find("loop"), std::string::npos) << seen.text;
  // /sys itself is shown, as the policy asks.
  EXPECT_EQ(seen.text, "1\n\n");
  EndSession(work_spy);
  EndSession(work_other);
  EXPECT_EQ(StopPoller(), 0);
}

// Hostile (hostile review 4, F1): each session's workspace is mounted where every sandbox's
// mount namespace copies it (srt-poller's own, whose sessions directory is a shared mount), so
// a session's mount table named the sessions running beside it: their ids, their loop devices,
// and, live, when each item starts and ends. A session that starts before the other's
// workspace is mounted (propagation) and one that starts after (the copy a new namespace
// makes): neither mount table names the other session or its workspace, and each still has its
// own workspace, a filesystem of its own.
TEST_F(PollerSessionTest, ASessionsMountTableNamesNoOtherSession) {
  const std::string first = "sesn_mntfirst", second = "sesn_mntsecond";
  auto work_first = Enqueue({.session_id = first});
  StartPoller({"--disk", "64M", "--concurrency", "2"});
  EXPECT_EQ(Bash(first, "echo up").text, "up\n\n") << poller_->Logs();
  auto work_second = Enqueue({.session_id = second});
  EXPECT_EQ(Bash(second, "echo up").text, "up\n\n") << poller_->Logs();
  std::map<std::string, std::string> loop_of;
  for (const std::string& l : SessionLoopsBelow(sessions_)) {
    for (const std::string& sid : {first, second}) {
      if (l.find("/" + sid + ".ext4") != std::string::npos) loop_of[sid] = l.substr(0, l.find(' '));
    }
  }
  ASSERT_EQ(loop_of.size(), 2u) << ::testing::PrintToString(SessionLoopsBelow(sessions_));
  for (const auto& [spy, other] : {std::pair(first, second), std::pair(second, first)}) {
    const Posted seen = Bash(spy, "cat /proc/self/mountinfo; echo end");
    EXPECT_EQ(seen.text.find(other), std::string::npos) << spy << " sees " << other << " in:\n"
                                                        << seen.text;
    // "loop1" but not "loop12".
    const std::string& dev = loop_of[other];
    EXPECT_FALSE(std::regex_search(seen.text, std::regex("\\b" + dev + "\\b")))
        << spy << " sees " << other << "'s " << dev << " in:\n"
        << seen.text;
    EXPECT_EQ(Bash(spy,
                   "echo mine > /workspace/f && cat /workspace/f && df --output=source "
                   "/workspace | tail -1")
                  .text,
              "mine\n/dev/" + loop_of[spy] + "\n\n");
  }
  EndSession(work_second);
  EndSession(work_first);
  EXPECT_EQ(StopPoller(), 0);
}

// A new session's workspace is the spare srt-poller made and mounted ahead (so neither
// mkfs.ext4 nor the mount is on the path of its start): a fresh filesystem on a loop device,
// mounted in no mount namespace until a session takes it. An image an earlier run left at the
// spare's path, of the right size, is never taken (it could hold another session's files). The
// session gets the spare's filesystem itself, empty, nosuid and nodev; another spare is made for
// the next session; and at the exit nothing of the spare is left: no mount, no loop device, no
// image.
TEST_F(PollerSessionTest, ANewSessionTakesTheMountedSpareAndNothingOfItOutlivesThePoller) {
  const std::string disks = sessions_ + "/.disks";
  const std::string spare = disks + "/.spare.ext4";
  ASSERT_TRUE(fs::create_directories(disks));
  MakeUsedImage(spare, dir_ + "/used", 64);
  struct stat left {};
  ASSERT_EQ(stat(spare.c_str(), &left), 0);
  // Held open, so that its inode number cannot be reused once srt-poller removes it.
  UniqueFd hold_left(open(spare.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(hold_left);
  StartPoller({"--disk", "64M"});
  ASSERT_TRUE(WaitFor([&] { return SpareReady(sessions_); }, kStartTimeout))
      << "no spare workspace ready\n"
      << poller_->Logs();
  const std::string loop = SpareLoop(sessions_);
  struct stat made {};
  ASSERT_EQ(stat(spare.c_str(), &made), 0);
  EXPECT_NE(made.st_ino, left.st_ino) << "the earlier run's image was kept as the spare";
  EXPECT_EQ(made.st_mode & 07777, 0600u);
  // Mounted, yet in no mount table: not srt-poller's (whose namespace every sandbox copies),
  // not the host's.
  EXPECT_TRUE(MountsBelow(sessions_, poller_->pid()).empty());
  EXPECT_TRUE(MountsBelow(sessions_).empty());

  const std::string sid = "sesn_spare";
  auto work = Enqueue({.session_id = sid});
  // Nothing in it: neither the earlier run's file nor mkfs's lost+found.
  EXPECT_EQ(Bash(sid, "ls -A /workspace; echo mine > /workspace/f && echo ok").text, "ok\n\n")
      << poller_->Logs();
  struct stat image {};
  ASSERT_EQ(stat((disks + "/" + sid + ".ext4").c_str(), &image), 0);
  EXPECT_EQ(image.st_ino, made.st_ino) << "the session made its own image";
  // The spare's own filesystem, moved into place: on the loop device made for the spare.
  const std::vector<std::string> loops = SessionLoopsBelow(sessions_);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].substr(0, loops[0].find(' ')), loop) << loops[0];
  auto mounts = MountsBelow(sessions_, poller_->pid());
  ASSERT_EQ(mounts.size(), 1u) << poller_->Logs();
  EXPECT_NE(mounts[sessions_ + "/" + sid].find("nosuid"), std::string::npos);
  EXPECT_NE(mounts[sessions_ + "/" + sid].find("nodev"), std::string::npos);
  // The next spare, made once the session has started.
  std::string next_loop;
  EXPECT_TRUE(WaitFor([&] { return !(next_loop = SpareLoop(sessions_)).empty(); }, kStartTimeout))
      << poller_->Logs();
  struct stat next {};
  ASSERT_EQ(stat(spare.c_str(), &next), 0);
  EXPECT_NE(next.st_ino, made.st_ino);
  EXPECT_EQ(poller_->CountLog("spare workspace"), 0u) << poller_->Logs();
  EndSession(work);

  EXPECT_EQ(StopPoller(), 0);
  EXPECT_FALSE(fs::exists(spare)) << "the spare's image outlived srt-poller";
  EXPECT_TRUE(MountsBelow(sessions_).empty());
  // The kernel detaches an unused loop device asynchronously.
  EXPECT_TRUE(WaitFor([&] { return LoopsBackedBelow(sessions_).empty(); }, 5s, 20ms))
      << ::testing::PrintToString(LoopsBackedBelow(sessions_));
}

// Hostile host side: what sits at the spare's path when a session takes it is checked, and a
// spare that is no longer what srt-poller made (here: replaced by an image that holds another
// session's file) is refused, with a warning naming it. The session makes a workspace of its
// own, empty, and the next spare is made.
TEST_F(PollerSessionTest, ASpareReplacedSinceItWasMadeIsRefused) {
  const std::string disks = sessions_ + "/.disks";
  const std::string spare = disks + "/.spare.ext4";
  StartPoller({"--disk", "64M"});
  ASSERT_TRUE(WaitFor([&] { return SpareReady(sessions_); }, kStartTimeout)) << poller_->Logs();
  const std::string planted = disks + "/planted.img";
  MakeUsedImage(planted, dir_ + "/used", 64);
  struct stat bad {};
  ASSERT_EQ(stat(planted.c_str(), &bad), 0);
  UniqueFd hold_bad(open(planted.c_str(), O_RDONLY | O_CLOEXEC));  // no reuse of its inode number
  ASSERT_TRUE(hold_bad);
  ASSERT_EQ(rename(planted.c_str(), spare.c_str()), 0);

  const std::string sid = "sesn_refused";
  auto work = Enqueue({.session_id = sid});
  EXPECT_EQ(Bash(sid, "ls -A /workspace; echo ok").text, "ok\n\n") << poller_->Logs();
  struct stat image {};
  ASSERT_EQ(stat((disks + "/" + sid + ".ext4").c_str(), &image), 0);
  EXPECT_NE(image.st_ino, bad.st_ino);
  EXPECT_EQ(poller_->CountLog("refused the spare workspace: the spare workspace '" + spare +
                              "' was replaced since it was made"),
            1u)
      << poller_->Logs();
  // A new spare replaces what was planted.
  EXPECT_TRUE(WaitFor(
      [&] {
        struct stat st {};
        return !SpareLoop(sessions_).empty() && stat(spare.c_str(), &st) == 0 &&
               st.st_ino != bad.st_ino;
      },
      kStartTimeout))
      << ::testing::PrintToString(LoopsBackedBelow(sessions_)) << poller_->Logs();
  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// The workspace's reservation runs beside the sandbox's start, but still nothing runs before it
// has succeeded: on a sessions filesystem without room for --disk, the item ends at its start
// with the reservation's error, and the call already in the history is neither run nor answered.
TEST_F(PollerSessionTest, AReservationThatDoesNotFitEndsTheItemBeforeAnyCallRuns) {
  ASSERT_TRUE(fs::create_directories(sessions_));
  // 48 MiB: room for the start-up probe's 32 MiB workspace and the spare's metadata, not for
  // one 64 MiB reservation.
  ASSERT_EQ(mount("tmpfs", sessions_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=48m,mode=0700"),
            0)
      << std::strerror(errno);
  const ScopeExit unmount([&] { umount2(sessions_.c_str(), MNT_DETACH); });
  const std::string sid = "sesn_nospace";
  ASSERT_TRUE(cp_->AppendEvents(sid, ToolUse("toolu_pending", "bash", {{"command", "echo ran"}}))
                  .has_value());
  FakeControlPlane::Enqueued work = Enqueue({.session_id = sid});
  StartPoller({"--disk", "64M"});
  auto stopped = cp_->WaitForWorkState(work.work_id, "stopped", kStartTimeout);
  ASSERT_TRUE(stopped.has_value()) << poller_->Logs();
  ASSERT_TRUE(poller_->WaitForLog("session item finished", kStartTimeout)) << poller_->Logs();
  // Logged where it fails, and in the item's end.
  EXPECT_EQ(poller_->CountLog("reserve 64 MiB for workspace '" + sessions_ + "/" + sid +
                              "' on the sessions filesystem: No space left on device"),
            2u)
      << poller_->Logs();
  auto results = cp_->Results(sid);
  ASSERT_TRUE(results.has_value()) << results.error().message();
  EXPECT_TRUE(results->empty()) << results->dump();
  EXPECT_EQ(poller_->CountLog("dispatched tool"), 0u) << poller_->Logs();
  EXPECT_EQ(StopPoller(), 0);
}

// Hostile (found by a hostile review): a fallocate that fails keeps every block it got. A
// reservation that does not fit must give them back at once, not when its item has ended (its
// sandbox stopped, the API told: seconds with a slow server). Until then the sessions filesystem
// is full for every other writer on it: another session's new image, the spare, and the whole
// host when the sessions directory is on /.
TEST_F(PollerSessionTest, AReservationThatDoesNotFitGivesBackWhatItTookAtOnce) {
  ASSERT_TRUE(fs::create_directories(sessions_));
  // A sessions filesystem of 48 MiB, ext4 (a tmpfs undoes a failed fallocate; ext4 does not),
  // made as a workspace is: a 64 MiB reservation gets every free block, then fails.
  auto sessions_fs =
      srt::poller::MountWorkspace(dir_ + "/sessions.ext4", sessions_, uint64_t{48} << 20);
  ASSERT_TRUE(sessions_fs.has_value()) << sessions_fs.error().message();
  const std::string sid = "sesn_giveback";
  // The item's end is held back: its stop call waits 3 s at the fake.
  ASSERT_TRUE(cp_->AddFault({.endpoint = "stop", .kind = "delay", .delay_ms = 3000}).has_value());
  FakeControlPlane::Enqueued work = Enqueue({.session_id = sid});
  StartPoller({"--disk", "64M"});
  ASSERT_TRUE(
      poller_->WaitForLog("on the sessions filesystem: No space left on device", kStartTimeout))
      << poller_->Logs();
  struct statvfs vfs {};
  ASSERT_EQ(statvfs(sessions_.c_str(), &vfs), 0) << "errno " << errno;
  const uint64_t free_bytes = uint64_t{vfs.f_bavail} * vfs.f_frsize;
  ASSERT_EQ(poller_->CountLog("session item finished"), 0u) << "the item ended before the check\n"
                                                            << poller_->Logs();
  EXPECT_GT(free_bytes, uint64_t{16} << 20)
      << "the sessions filesystem has " << free_bytes << " bytes free while the item ends";
  auto stopped = cp_->WaitForWorkState(work.work_id, "stopped", kStartTimeout);
  ASSERT_TRUE(stopped.has_value()) << poller_->Logs();
  ASSERT_TRUE(poller_->WaitForLog("session item finished", kStartTimeout)) << poller_->Logs();
  EXPECT_EQ(StopPoller(), 0);
  EXPECT_TRUE((*sessions_fs)->Release().has_value());
}

// Hostile (found by a hostile review): one spare that cannot be made (here a directory is in
// the way of its image; in life a moment of ENOSPC) must not end the spares for the rest of the
// run. The next new session, which makes its own workspace, asks for a spare once its sandbox
// has started, and one is made.
TEST_F(PollerSessionTest, ASpareThatCouldNotBeMadeIsMadeAgainForTheNextSession) {
  const std::string spare = sessions_ + "/.disks/.spare.ext4";
  ASSERT_TRUE(fs::create_directories(spare));
  StartPoller({"--disk", "64M"});
  ASSERT_TRUE(poller_->WaitForLog("no spare workspace; sessions make their own", kStartTimeout))
      << poller_->Logs();
  ASSERT_EQ(rmdir(spare.c_str()), 0) << "errno " << errno;
  const std::string sid = "sesn_nospare";
  auto work = Enqueue({.session_id = sid});
  EXPECT_EQ(Bash(sid, "echo up").text, "up\n\n") << poller_->Logs();
  EXPECT_TRUE(WaitFor([&] { return SpareReady(sessions_); }, kStartTimeout))
      << "no spare made after the first failed\n"
      << poller_->Logs();
  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// A SIGKILLed srt-poller leaves no workspace mounted (they live in its own mount namespace),
// and the session's next item, under the next srt-poller, mounts its workspace again.
TEST_F(PollerSessionTest, AKilledPollerLeavesNoWorkspaceMounted) {
  const std::string sid = "sesn_diskkill";
  auto work = StartSession(sid, {"--disk", "64M"});
  EXPECT_EQ(Bash(sid, "echo before > /workspace/f && echo up").text, "up\n\n");
  EXPECT_EQ(MountsBelow(sessions_, poller_->pid()).size(), 1u);
  // The workspace was mounted only in srt-poller's own mount namespace, never the host's.
  EXPECT_TRUE(MountsBelow(sessions_).empty());
  poller_->Signal(SIGKILL);
  ASSERT_TRUE(poller_->Wait(10s).has_value());
  // The namespace died with srt-poller, and with it the mount and the loop device.
  EXPECT_TRUE(WaitFor([&] { return LoopsBackedBelow(sessions_).empty(); }, 5s, 20ms));

  StartPoller({"--disk", "64M"});
  EXPECT_TRUE(MountsBelow(sessions_, poller_->pid()).empty());
  // The killed run's item is reclaimed (its lease lapses) or a new one comes: either way the
  // session is served again from its own filesystem.
  auto again = Enqueue({.session_id = sid});
  auto streams = cp_->WaitForStreams(sid, 2, kStartTimeout);
  ASSERT_TRUE(streams.has_value()) << streams.error().message() << "\n" << poller_->Logs();
  EXPECT_EQ(Bash(sid, "cat /workspace/f").text, "before\n\n") << poller_->Logs();
  EXPECT_EQ(MountsBelow(sessions_, poller_->pid()).size(), 1u);
  EndSession(again);
  EXPECT_EQ(StopPoller(), 0);
  EXPECT_TRUE(MountsBelow(sessions_).empty());
  // The kernel detaches an unmounted loop device asynchronously.
  EXPECT_TRUE(WaitFor([&] { return LoopsBackedBelow(sessions_).empty(); }, 5s, 20ms));
}

TEST_F(PollerSessionTest, ThePidsLimitStopsAForkBombAndThePollerSurvives) {
  // bash's `for ...; do sleep 5 & done` retries a fork that fails with EAGAIN (1 s, 2 s, 4 s,
  // 8 s) and so takes tens of seconds to give up: python's os.fork reports the first EAGAIN.
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  auto work = StartSession("sesn_pids", {"--pids", "64"});
  const std::string sid = "sesn_pids";
  Posted r = Bash(sid,
                  "/usr/bin/python3 -c '\n"
                  "import os, signal, time\n"
                  "kids = []\n"
                  "try:\n"
                  "  for i in range(200):\n"
                  "    pid = os.fork()\n"
                  "    if pid == 0:\n"
                  "      time.sleep(60); os._exit(0)\n"
                  "    kids.append(pid)\n"
                  "except OSError as e:\n"
                  "  print(e.strerror)\n"
                  "for k in kids: os.kill(k, signal.SIGKILL)\n"
                  "for k in kids: os.waitpid(k, 0)\n"
                  "print(\"stopped after\", \"fewer than 64\" if len(kids) < 64 else len(kids))\n"
                  "'");
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text, "Resource temporarily unavailable\nstopped after fewer than 64\n\n");
  // The session and the poller carry on.
  EXPECT_EQ(Bash(sid, "echo still-here").text, "still-here\n\n");
  EXPECT_TRUE(poller_->running());
  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

// A fork bomb that outlives the shell (setsid) holds the work cgroup at its pids limit, so no
// later shell could start (bash cannot fork its set-up): srt-toolbox ends what is left in the
// work cgroup, never its own processes, and starts one.
TEST_F(PollerSessionTest, AForkBombThatOutlivesTheShellIsEndedForTheNextOne) {
  const std::string sid = "sesn_bomb";
  auto work = StartSession(sid, {"--pids", "64"});
  EXPECT_EQ(
      Bash(sid, "(setsid bash -c 'b() { b | b & }; b' </dev/null >/dev/null 2>&1 &); echo lit")
          .text,
      "lit\n\n");
  std::this_thread::sleep_for(2s);
  Posted r = Run(sid, "bash", {{"command", "/bin/true && echo forked"}, {"restart", true}});
  EXPECT_EQ(r.text, "forked\n\n");
  // ps alone, then the counting: in a pipeline ps could see a member not yet exec'd (a second
  // bash where sed would be), which failed this test under load.
  EXPECT_EQ(Bash(sid, "p=$(ps -e -o comm=); echo \"$p\" | sort | uniq -c | sed 's/^ *//'").text,
            "1 bash\n1 ps\n\n");
  EXPECT_TRUE(poller_->running());
  EndSession(work);
  EXPECT_EQ(poller_->Logs().find("srt-toolbox failed"), std::string::npos) << poller_->Logs();
  EXPECT_EQ(StopPoller(), 0);
}

TEST_F(PollerSessionTest, TheMemoryLimitKillsAHog) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  auto work = StartSession("sesn_mem", {"--memory", "64M"});
  const std::string sid = "sesn_mem";
  Posted r = Bash(sid, "/usr/bin/python3 -c 'b = bytearray(200 << 20); print(\"survived\")'");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text.find("survived"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("exit code: 137"), std::string::npos) << r.text;
  EXPECT_EQ(Bash(sid, "echo after").text, "after\n\n");
  EndSession(work);
  EXPECT_TRUE(poller_->WaitForLog("memory limit", 10s)) << poller_->Logs();
  EXPECT_EQ(StopPoller(), 0);
}

// Memory that belongs to no process - a file in the sandbox's tmpfs /tmp, a memfd - cannot be
// weighed by the OOM killer, which then took the biggest process in the session's cgroup:
// bwrap or srt-toolbox, ending the session. Now /tmp is smaller than the memory limit (a full
// one says ENOSPC), and the shell runs in an inner cgroup with less memory than the session's:
// the OOM killer takes the shell's processes, srt-toolbox answers on, the agent cleans up.
TEST_F(PollerSessionTest, MemoryTheShellFillsCostsTheShellNotTheSession) {
  const std::string sid = "sesn_tmpfill";
  auto work = StartSession(sid, {"--memory", "128M"});
  EXPECT_EQ(Bash(sid, "grep -cE ':(memory|pids):/inner$' /proc/self/cgroup").text, "2\n\n");
  // 128 MiB less the 64 MiB reserve, halved.
  EXPECT_EQ(
      Bash(sid, "head -c 100M /dev/zero > /tmp/fill; echo \"head: $?\"; du -m /tmp/fill").text,
      "head: error writing 'standard output': No space left on device\nhead: 1\n32\t/tmp/"
      "fill\n\n");
  // A memfd: the OOM killer takes the shell or its job, whichever, and the next call has a
  // shell again.
  if (access("/usr/bin/python3", X_OK) == 0) {
    Posted memfd = Bash(sid,
                        "exec /usr/bin/python3 -c 'import os\nfd = os.memfd_create(\"m\")\nfor _ "
                        "in range(200): os.write(fd, bytes(1 << 20))\nprint(\"survived\")'");
    EXPECT_EQ(memfd.text.find("survived"), std::string::npos) << memfd.text;
    EXPECT_EQ(Bash(sid, "echo after the memfd").text, "after the memfd\n\n");
  }
  EXPECT_EQ(Bash(sid, "rm /tmp/fill && echo removed").text, "removed\n\n");
  // /dev/shm is sized the same; the rest of /dev (bwrap's tmpfs) takes no files.
  EXPECT_EQ(Bash(sid,
                 "head -c 100M /dev/zero > /dev/shm/fill; echo \"head: $?\"; rm /dev/shm/fill; "
                 "touch /dev/fill")
                .text,
            "head: error writing 'standard output': No space left on device\nhead: 1\ntouch: "
            "cannot touch '/dev/fill': Read-only file system\n\n\nexit code: 1");
  // The worst a session can do: fill two of them past the inner limit, with a process too small
  // to be worth killing. The OOM killer takes the shell's processes, never srt-toolbox or
  // bwrap: the next call is answered - by a new shell, or with why none could start.
  Bash(sid, "head -c 60M /dev/zero > /tmp/a; exec head -c 60M /dev/zero > /dev/shm/b");
  Posted answered = Bash(sid, "echo answered");
  // Which it is depends on where the memory ran out: during the new shell's first command, or
  // already in its execve (which then says E2BIG).
  EXPECT_TRUE(answered.text == "answered\n\n" ||
              answered.text.starts_with("bash: start bash: the shell did not answer") ||
              answered.text.starts_with("bash: start bash: no memory left for a new shell"))
      << answered.text;
  EXPECT_TRUE(poller_->running());
  EndSession(work);
  EXPECT_TRUE(poller_->WaitForLog("memory limit", 10s)) << poller_->Logs();
  EXPECT_EQ(poller_->Logs().find("srt-toolbox failed"), std::string::npos) << poller_->Logs();
  EXPECT_EQ(StopPoller(), 0);
}

TEST_F(PollerSessionTest, NoLimitsRunsSessions) {
  auto work = StartSession("sesn_nolim", {"--no-limits"});
  Posted r = Bash("sesn_nolim", "echo free");
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "free\n\n");
  EndSession(work);
  EXPECT_EQ(StopPoller(), 0);
}

}  // namespace
}  // namespace srt::testing
