// SPDX-License-Identifier: Apache-2.0
// sys::Spawn's clone path: the working directory, the Landlock domain and the step a failure
// names. Unprivileged: Landlock needs no privilege.
#include "sys/spawn.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "sys/fd.h"
#include "sys/landlock.h"

namespace srt::sys {
namespace {

struct Ran {
  int status = -1;
  std::string out;
};

// Runs /bin/sh -c `script` with stdout on a pipe, and waits for it.
Ran RunShell(SpawnRequest request, const std::string& script) {
  auto pipe = Pipe();
  EXPECT_TRUE(pipe.has_value());
  request.path = "/bin/sh";
  request.argv = {"sh", "-c", script};
  request.env = {"PATH=/usr/bin:/bin"};
  request.fds = {{pipe->second.get(), 1}};
  auto pid = Spawn(request);
  EXPECT_TRUE(pid.has_value()) << pid.error().message();
  Ran ran;
  if (!pid) return ran;
  pipe->second.reset();
  char buf[256];
  for (ssize_t n; (n = read(pipe->first.get(), buf, sizeof buf)) > 0;) {
    ran.out.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  EXPECT_EQ(waitpid(*pid, &status, 0), *pid);
  ran.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return ran;
}

TEST(SpawnTest, TheChildStartsInItsWorkingDirectory) {
  SpawnRequest request;
  request.cwd = "/usr/share";
  Ran ran = RunShell(request, "pwd");
  EXPECT_EQ(ran.status, 0);
  EXPECT_EQ(ran.out, "/usr/share\n");
}

TEST(SpawnTest, AFailedStepIsNamedAndNothingRuns) {
  SpawnRequest request;
  request.path = "/bin/true";
  request.argv = {"true"};
  request.cwd = "/nonexistent/dir";
  auto pid = Spawn(request);
  ASSERT_FALSE(pid.has_value());
  EXPECT_EQ(pid.error().message(),
            "start '/bin/true': enter its working directory: No such file or directory");
}

TEST(SpawnTest, TheLandlockDomainKeepsSignalsFromItsParentButNotFromItsOwnJobs) {
  if (LandlockAbi() < kLandlockSignalScopeAbi) {
    GTEST_SKIP() << "this kernel has no Landlock signal scoping (Linux 6.12)";
  }
  const std::string script =
      "kill -0 $PPID 2>/dev/null; echo parent=$?; "
      "sleep 60 & kill $!; wait $!; echo own=$?";
  SpawnRequest plain;
  EXPECT_EQ(RunShell(plain, script).out, "parent=0\nown=143\n");

  auto ruleset = SignalScopeRuleset();
  ASSERT_TRUE(ruleset.has_value()) << ruleset.error().message();
  ASSERT_TRUE(*ruleset);
  SpawnRequest scoped;
  scoped.landlock_ruleset_fd = ruleset->get();
  Ran ran = RunShell(scoped, script);
  EXPECT_EQ(ran.status, 0);
  EXPECT_EQ(ran.out, "parent=1\nown=143\n");
  // The domain is the child's alone: this process can still signal itself.
  EXPECT_EQ(kill(getpid(), 0), 0);
}

// A child that leaves our process group never dies of a Ctrl-C meant for the group: a terminal
// signals the whole foreground group, and a child between clone and setsid/setpgid is still in
// it (a Ctrl-C at srt's start killed bwrap or srt-agent that way: the launch failed with 125).
// A helper process of its own group spawns children while a thread sends SIGINT to that group
// as fast as it can; the helper itself takes SIGINT blocked, as srt does.
TEST(SpawnTest, AChildThatLeavesOurGroupDropsTheGroupsCtrlC) {
  for (const bool session : {false, true}) {
    pid_t helper = fork();
    ASSERT_GE(helper, 0);
    if (helper == 0) {
      setpgid(0, 0);
      sigset_t intr;
      sigemptyset(&intr);
      sigaddset(&intr, SIGINT);
      pthread_sigmask(SIG_BLOCK, &intr, nullptr);
      std::atomic<bool> stop{false};
      std::atomic<long> sent{0};
      std::thread hammer([&] {
        while (!stop) {
          kill(-getpgrp(), SIGINT);
          ++sent;
        }
      });
      int killed = 0;
      for (int i = 0; i < 300; ++i) {
        SpawnRequest request;
        request.path = "/bin/true";
        request.argv = {"true"};
        request.new_session = session;
        request.new_process_group = !session;
        auto pid = Spawn(request);
        if (!pid) _exit(200);
        int status = 0;
        while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) ++killed;
      }
      stop = true;
      hammer.join();
      _exit(sent > 0 ? std::min(killed, 100) : 201);
    }
    int status = 0;
    ASSERT_EQ(waitpid(helper, &status, 0), helper);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << (session ? "new_session" : "new_process_group")
                                      << ": children killed by the group's SIGINT (200: a spawn "
                                         "failed, 201: no signal sent)";
  }
}

}  // namespace
}  // namespace srt::sys
