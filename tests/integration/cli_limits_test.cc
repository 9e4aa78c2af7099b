// SPDX-License-Identifier: Apache-2.0
// srt --memory, --cpus, --pids and --timeout, through the real srt binary, as root and as an
// unprivileged user (who cannot create cgroups: srt must say so and run nothing). The limits'
// cgroup mechanics themselves are limits_binds_test's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <string>

#include "srt_fixture.h"

namespace srt::it {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using CliLimitsTest = SrtTest;

TEST_P(CliLimitsTest, PidsLimitMakesForkFailWithEagain) {
  RunResult r = run().Srt("{}", {"--pids", "16", SRT_LIMITS_PROBE, "fork-until-fail"});
  if (!root()) {
    EXPECT_EQ(r.exit_code, 125);
    EXPECT_THAT(r.err, HasSubstr("creating cgroups needs root, or a delegated cgroup")) << r.err;
    return;
  }
  EXPECT_EQ(r.exit_code, EAGAIN) << r.err;
}

TEST_P(CliLimitsTest, MemoryLimitKillsWith137AndSaysWhy) {
  RunResult r = run().Srt("{}", {"--memory", "32M", SRT_LIMITS_PROBE, "alloc", "256"});
  if (!root()) {
    EXPECT_EQ(r.exit_code, 125);
    EXPECT_THAT(r.err, HasSubstr("Permission denied")) << r.err;
    return;
  }
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.err;
  EXPECT_THAT(r.err, HasSubstr("srt: --memory: the sandbox reached its memory limit")) << r.err;
  // Under the limit, nothing is said and the command's status stands.
  RunResult fits = run().Srt("{}", {"--memory", "256M", SRT_LIMITS_PROBE, "alloc", "8"});
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_THAT(fits.err, Not(HasSubstr("memory limit")));
}

TEST_P(CliLimitsTest, CpusReachTheSandboxesCgroup) {
  RunResult r = run().Srt("{}", {"-d", "--cpus", "0.5", "true"});
  if (!root()) {
    EXPECT_EQ(r.exit_code, 125) << r.err;
    return;
  }
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, MatchesRegex("(.|\n)*cgroup v[12] '[^']+': [a-z, ]*cpu(.|\n)*")) << r.err;
}

// A failed join names the files it writes: a v1 leaf is joined through "tasks" now, so the
// message no longer names cgroup.procs alone. A real-time caller cannot join a cpu cgroup that
// has no real-time budget (a kernel with real-time group scheduling says EINVAL).
TEST_P(CliLimitsTest, AJoinTheKernelRefusesIsNamed) {
  if (!root()) GTEST_SKIP() << "only root may run srt at a real-time priority";
  RunResult r = run().Host({"chrt", "-f", "1", SrtBinary(), "-s", run().SettingsFile("{}"),
                            "--cpus", "0.5", "-c", "echo ran"});
  if (r.exit_code == 0) GTEST_SKIP() << "this kernel lets a real-time task join a cpu cgroup";
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_EQ(r.out, "");
  // The end of it: under ASan the failing child first warns of its stack switch.
  EXPECT_THAT(r.err, EndsWith("srt: start '/usr/bin/bwrap': join the sandbox's cgroups (a write to "
                              "cgroup.procs or a v1 tasks file): Invalid argument\n"));
}

TEST_P(CliLimitsTest, TimeoutTermsThenKillsAndExits124) {
  // A command that ends at SIGTERM.
  RunResult term = run().Srt("{}", {"--timeout", "500ms", "sleep", "60"});
  EXPECT_EQ(term.exit_code, 124) << term.err;
  EXPECT_THAT(term.err,
              HasSubstr("srt: --timeout 500ms: the command ran out of time; sending it SIGTERM"));
  EXPECT_THAT(term.err, Not(HasSubstr("SIGKILL")));
  // One that ignores it gets SIGKILL 5 s later, and what it started in the background ends too.
  RunResult kill =
      run().Srt("{}", {"--timeout", "500ms", "-c", "trap '' TERM; sleep 60 & sleep 60"});
  EXPECT_EQ(kill.exit_code, 124) << kill.err;
  EXPECT_THAT(kill.err, HasSubstr("srt: --timeout 500ms: the command outlived SIGTERM by 5 s; "
                                  "sending it SIGKILL"));
  // One that ends in time keeps its own status.
  RunResult quick = run().Srt("{}", {"--timeout", "1m", "-c", "exit 3"});
  EXPECT_EQ(quick.exit_code, 3) << quick.err;
  EXPECT_EQ(quick.err, "");
}

TEST_P(CliLimitsTest, BadValuesAreRefusedNamingTheOption) {
  for (auto [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--memory", "1M", "true"}, "srt: --memory 1M is below the 16M floor"},
           {{"--memory", "lots", "true"}, "srt: --memory: invalid size 'lots'"},
           {{"--cpus", "0", "true"}, "srt: --cpus: invalid CPU count '0'"},
           {{"--pids", "3", "true"}, "srt: --pids needs a whole number from 16"},
           {{"--timeout", "30", "true"}, "srt: --timeout: invalid duration '30': missing unit"},
           {{"--timeout", "0s", "true"}, "srt: --timeout needs a duration above 0"}}) {
    RunResult r = run().Srt("{}", args);
    EXPECT_EQ(r.exit_code, 125) << args[0];
    EXPECT_THAT(r.err, HasSubstr(message)) << r.err;
  }
}

SRT_INSTANTIATE(CliLimitsTest);

}  // namespace
}  // namespace srt::it
