// SPDX-License-Identifier: Apache-2.0
// The bash tool: one persistent shell on a PTY, with the Go toolset's framing and texts.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "toolbox/bash_session.h"
#include "toolbox/limits.h"
#include "toolbox_test_support.h"

namespace srt::poller::toolbox::testing {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

using BashToolTest = ToolboxTest;

bool Alive(pid_t pid) { return kill(pid, 0) == 0; }

TEST_F(BashToolTest, OutputIsCleanedLikeGo) {
  ToolResult r = Call("bash", {{"command", "echo hi"}});
  EXPECT_FALSE(r.is_error);
  // The command's "hi\n" plus the newline that precedes the exit-code marker (Go keeps both).
  EXPECT_EQ(r.text, "hi\n\n");
  r = Call("bash", {{"command", "printf 'a\\r\\nb\\033[1mc\\033[0m'"}});
  EXPECT_EQ(r.text, "a\nbc\n");
}

TEST_F(BashToolTest, StartsInTheRootOnAPty) {
  // stdout is the PTY, and it is the controlling terminal (/dev/tty opens); stdin is /dev/null.
  ToolResult r = Call("bash", {{"command",
                                "pwd; test -t 1 && echo tty; readlink /proc/self/fd/1; "
                                ": </dev/tty && echo ctty; readlink /proc/self/fd/0"}});
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text.substr(0, r.text.find('\n')), root_);
  EXPECT_NE(r.text.find("tty\n/dev/pts/"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("ctty\n/dev/null\n"), std::string::npos) << r.text;
}

TEST_F(BashToolTest, NonZeroExitIsAnError) {
  ToolResult r = Call("bash", {{"command", "echo oops; (exit 7)"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "oops\n\n\nexit code: 7");  // Go: "%s\nexit code: %d"
  r = Call("bash", {{"command", "false"}});
  EXPECT_EQ(r.text, "\nexit code: 1");
}

TEST_F(BashToolTest, CwdAndExportedVariablesPersist) {
  ASSERT_EQ(Call("bash", {{"command", "export FOO=bar; mkdir -p d/e && cd d/e"}}).text, "");
  ToolResult r = Call("bash", {{"command", "echo $FOO; pwd"}});
  EXPECT_EQ(r.text, "bar\n" + root_ + "/d/e\n\n");
}

TEST_F(BashToolTest, HistoryExpansionIsOff) {
  // The shell is interactive (a PTY), where bash expands `!x` by default: "!x: event not found".
  ToolResult r = Call("bash", {{"command", "echo \"hi!x\"; echo a!!b; set -o | grep histexpand"}});
  EXPECT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(r.text.substr(0, r.text.find("histexpand")), "hi!x\na!!b\n");
  EXPECT_NE(r.text.find("histexpand     \toff"), std::string::npos) << r.text;
}

TEST_F(BashToolTest, RestartGivesAFreshShell) {
  Call("bash", {{"command", "export GONE=1"}});
  ToolResult r = Call("bash", {{"restart", true}, {"command", "echo [$GONE]"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "[]\n\n");
  r = Call("bash", {{"restart", true}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "bash session restarted");
}

TEST_F(BashToolTest, MissingCommandIsRejected) {
  ToolResult r = Call("bash", nlohmann::json::object());
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "bash: command is required");
  r = Call("bash", {{"command", 5}});
  EXPECT_EQ(r.text, "invalid bash input: command must be a string");
}

TEST_F(BashToolTest, TimeoutKillsTheGroupAndRestarts) {
  ToolResult bg = Call("bash", {{"command", "sleep 1000 & echo $!"}});
  ASSERT_FALSE(bg.is_error) << bg.text;
  // Interactive bash announces the job ("[1] PID") before our echo of $!.
  std::string last = bg.text.substr(0, bg.text.find_last_not_of('\n') + 1);
  pid_t sleeper = std::stoi(last.substr(last.rfind('\n') + 1));
  pid_t shell = tb_->shell_pid();
  ASSERT_TRUE(Alive(sleeper));

  auto start = Clock::now();
  ToolResult r = Call("bash", {{"command", "echo before; sleep 5"}, {"timeout_ms", 300}});
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "before\n\n[timed out]\nsession restarted after timeout");
  EXPECT_EQ(tb_->shell_pid(), -1);
  EXPECT_FALSE(Alive(shell));
  // The whole process group went, background jobs included (reaped by init or us).
  EXPECT_TRUE(
      Eventually([&] { return !Alive(sleeper) || waitpid(sleeper, nullptr, WNOHANG) > 0; }));

  r = Call("bash", {{"command", "echo after"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "after\n\n");
}

TEST_F(BashToolTest, TheCallDeadlineIsTheRunnersTimeoutMessage) {
  ToolResult r = Call("bash", {{"command", "sleep 5"}, {"timeout_ms", 30000}}, milliseconds(300));
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "tool \"bash\" timed out after 300ms");
  EXPECT_EQ(Call("bash", {{"command", "echo fresh"}}).text, "fresh\n\n");
}

TEST_F(BashToolTest, AnthropicVariablesAreScrubbed) {
  setenv("ANTHROPIC_API_KEY", "sk-ant-should-not-leak", 1);
  setenv("ANTHROPIC_ENVIRONMENT_KEY", "env-key", 1);
  setenv("SRT_TOOLBOX_TEST_KEPT", "kept", 1);
  ToolResult r = Call("bash", {{"command",
                                "echo \"key=[$ANTHROPIC_API_KEY] env=[$ANTHROPIC_ENVIRONMENT_KEY] "
                                "kept=[$SRT_TOOLBOX_TEST_KEPT] path=[${PATH:+set}] "
                                "term=[$TERM]\"; env | grep -c ^ANTHROPIC_"}});
  unsetenv("ANTHROPIC_API_KEY");
  unsetenv("ANTHROPIC_ENVIRONMENT_KEY");
  unsetenv("SRT_TOOLBOX_TEST_KEPT");
  EXPECT_EQ(r.text, "key=[] env=[] kept=[kept] path=[set] term=[dumb]\n0\n\n\nexit code: 1");
}

TEST_F(BashToolTest, OutputKeepsTheTail) {
  ToolResult r = Call("bash", {{"command", "head -c 300000 /dev/zero | tr '\\0' a; echo END"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text.rfind("[output truncated]\n", 0), 0u);
  EXPECT_EQ(r.text.substr(r.text.size() - 5), "END\n\n");
  EXPECT_LE(r.text.size(), kBashOutputLimit + sizeof("[output truncated]\n"));
  EXPECT_GT(r.text.size(), kBashOutputLimit - 200);
}

TEST_F(BashToolTest, StdinIsDevNull) {
  ToolResult r = Call("bash", {{"command", "cat; read x; echo done"}}, milliseconds(5000));
  EXPECT_EQ(r.text, "done\n\n");
}

TEST_F(BashToolTest, AFakeMarkerCannotSpoofTheExitCode) {
  ToolResult r = Call("bash", {{"command", "printf '__ANT_CMD_DONE__7\\nafter\\n'; (exit 3)"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "__ANT_CMD_DONE__7\nafter\n\n\nexit code: 3");
}

TEST_F(BashToolTest, ASyntaxErrorDoesNotHang) {
  auto start = Clock::now();
  ToolResult r = Call("bash", {{"command", "if then"}}, milliseconds(10000));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("exit code: 2"), std::string::npos) << r.text;
  EXPECT_EQ(Call("bash", {{"command", "echo ok"}}).text, "ok\n\n");
}

TEST_F(BashToolTest, ExitingTheShellRestartsIt) {
  ToolResult r = Call("bash", {{"command", "exit 3"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "bash: bash session terminated");
  EXPECT_EQ(Call("bash", {{"command", "echo back"}}).text, "back\n\n");
}

TEST_F(BashToolTest, MultiLineCommandsAndHeredocs) {
  ToolResult r =
      Call("bash", {{"command", "cat > h.txt <<'EOF'\nline 1\nline 2\nEOF\nwc -l < h.txt"}});
  EXPECT_EQ(r.text, "2\n\n");
  // A command far longer than the terminal's line buffer (4 KiB) goes through intact.
  std::string big(300000, 'x');
  r = Call("bash", {{"command", "echo " + big + " | wc -c"}});
  EXPECT_EQ(r.text, "300001\n\n");
}

TEST_F(BashToolTest, CommandSizeIsLimited) {
  ToolResult r = Call("bash", {{"command", std::string(kMaxBashCommandBytes + 1, 'x')}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text.rfind("bash: command is ", 0), 0u) << r.text.substr(0, 80);
}

// Stops a tool when a byte arrives on a pipe (written by another thread after a delay).
class PipeInterrupt final : public Interrupt {
 public:
  PipeInterrupt() {
    if (pipe2(fds_, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  }
  ~PipeInterrupt() override {
    close(fds_[0]);
    close(fds_[1]);
  }
  int fd() const override { return fds_[0]; }
  bool Check() override {
    char c;
    return read(fds_[0], &c, 1) == 1;
  }
  void Fire() { (void)!write(fds_[1], "x", 1); }

 private:
  int fds_[2];
};

TEST_F(BashToolTest, AnInterruptKillsTheCommandAndTheNextCallGetsAFreshShell) {
  Call("bash", {{"command", "export MARK=old"}});
  pid_t shell = tb_->shell_pid();
  PipeInterrupt interrupt;
  std::thread fire([&] {
    std::this_thread::sleep_for(milliseconds(300));
    interrupt.Fire();
  });
  auto start = Clock::now();
  ToolResult r =
      tb_->Run("bash", {{"command", "echo before; sleep 30"}}, milliseconds(0), interrupt);
  fire.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(r.interrupted);
  EXPECT_FALSE(Alive(shell));
  ToolResult next = Call("bash", {{"command", "echo [$MARK]"}});
  EXPECT_EQ(next.text, "[]\n\n");
}

TEST(BashSessionTest, StartFailsCleanlyWithoutTheShell) {
  BashOptions options;
  options.shell = "/nonexistent/bash";
  options.env = ShellEnvironment();
  auto s = BashSession::Start(options);
  EXPECT_FALSE(s.has_value());
}

TEST(BashSessionTest, ShellEnvironmentDropsAnthropicAndSetsThePrompt) {
  setenv("ANTHROPIC_BASE_URL", "x", 1);
  setenv("PS1", "$ ", 1);
  auto env = ShellEnvironment();
  unsetenv("ANTHROPIC_BASE_URL");
  unsetenv("PS1");
  for (const auto& e : env) EXPECT_NE(e.rfind("ANTHROPIC_", 0), 0u) << e;
  EXPECT_EQ(std::count(env.begin(), env.end(), "PS1="), 1);
  EXPECT_EQ(std::count(env.begin(), env.end(), "PS1=$ "), 0);
  EXPECT_EQ(std::count(env.begin(), env.end(), "TERM=dumb"), 1);
}

// ---- the work cgroup ----------------------------------------------------------------------------

std::string Drain(int fd) {
  std::string out;
  char buf[64];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

// The shell joins the work cgroup before it executes: it writes "0" to every one of its
// descriptors (pipes stand in for cgroup.procs files here); the toolbox itself does not, and
// grep, which matches in the toolbox, starts nothing that would.
TEST(WorkCgroupTest, TheShellJoinsItAndGrepStartsNothing) {
  TempDir dir;
  int a[2], b[2];
  ASSERT_EQ(pipe2(a, O_CLOEXEC | O_NONBLOCK), 0);
  ASSERT_EQ(pipe2(b, O_CLOEXEC | O_NONBLOCK), 0);
  ToolboxOptions options;
  options.root = dir.path();
  options.work_cgroup_fds = {a[1], b[1]};
  auto tb = Toolbox::Create(options);
  ASSERT_TRUE(tb.has_value()) << tb.error().message();
  NoInterrupt never;
  EXPECT_EQ(Drain(a[0]), "");
  EXPECT_EQ((*tb)->Run("bash", {{"command", "echo hi"}}, milliseconds(0), never).text, "hi\n\n");
  EXPECT_EQ(Drain(a[0]), "0");
  EXPECT_EQ(Drain(b[0]), "0");
  WriteFile(dir / "f", "x\n");
  EXPECT_EQ((*tb)->Run("grep", {{"pattern", "x"}}, milliseconds(0), never).text,
            dir / "f" + ":1:x");
  EXPECT_EQ(Drain(a[0]), "");
  EXPECT_EQ(Drain(b[0]), "");
  tb->reset();
  for (int fd : {a[0], a[1], b[0], b[1]}) close(fd);
}

TEST(WorkCgroupTest, TheDescriptorListIsStrict) {
  EXPECT_EQ(*ParseDescriptorList("7"), std::vector<int>({7}));
  EXPECT_EQ(*ParseDescriptorList("9,10"), std::vector<int>({9, 10}));
  for (const char* bad : {"", ",", "7,", ",7", "7,,8", "a", "-7", " 7", "7 ", "1e3", "99999"}) {
    auto r = ParseDescriptorList(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().message(), std::string("SRT_INNER_CGROUP_FDS '") + bad +
                                       "': expected descriptor numbers separated by ','")
        << bad;
  }
  EXPECT_EQ(ParseDescriptorList("2").error().message(),
            "SRT_INNER_CGROUP_FDS '2': a descriptor must be from 3 to 1023");
  EXPECT_EQ(ParseDescriptorList("1024").error().message(),
            "SRT_INNER_CGROUP_FDS '1024': a descriptor must be from 3 to 1023");
  EXPECT_EQ(ParseDescriptorList("3,4,5,6,7,8,9,10,11").error().message(),
            "SRT_INNER_CGROUP_FDS '3,4,5,6,7,8,9,10,11': more than 8 descriptors");
}

// Taken once: the variable is gone afterwards (the shell has no use for it), the descriptors are
// CLOEXEC, and one that is not write-only, or not open, is refused.
TEST(WorkCgroupTest, TakingTheDescriptorsChecksThem) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const std::string w = std::to_string(p[1]), r = std::to_string(p[0]);
  ASSERT_EQ(setenv("SRT_INNER_CGROUP_FDS", w.c_str(), 1), 0);
  auto fds = TakeWorkCgroupFds();
  ASSERT_TRUE(fds.has_value()) << fds.error().message();
  EXPECT_EQ(*fds, std::vector<int>({p[1]}));
  EXPECT_EQ(getenv("SRT_INNER_CGROUP_FDS"), nullptr);
  EXPECT_EQ(fcntl(p[1], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_TRUE(TakeWorkCgroupFds().has_value());  // unset: none
  EXPECT_TRUE(TakeWorkCgroupFds()->empty());

  ASSERT_EQ(setenv("SRT_INNER_CGROUP_FDS", r.c_str(), 1), 0);
  EXPECT_EQ(TakeWorkCgroupFds().error().message(),
            "SRT_INNER_CGROUP_FDS: descriptor " + r + " is not open for writing only");
  close(p[0]);
  close(p[1]);
  ASSERT_EQ(setenv("SRT_INNER_CGROUP_FDS", w.c_str(), 1), 0);
  auto closed = TakeWorkCgroupFds();
  ASSERT_FALSE(closed.has_value());
  EXPECT_EQ(closed.error().sys_errno(), EBADF) << closed.error().message();
  EXPECT_EQ(getenv("SRT_INNER_CGROUP_FDS"), nullptr);
}

}  // namespace
}  // namespace srt::poller::toolbox::testing
