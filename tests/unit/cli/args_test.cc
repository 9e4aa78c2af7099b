// SPDX-License-Identifier: Apache-2.0
#include "args.h"

#include <gtest/gtest.h>

#include "proxy_args.h"
#include "srt/sandbox.h"

namespace srt::cli {
namespace {

using Argv = std::vector<std::string>;

CliOptions Parse(std::vector<std::string_view> args) {
  Result<CliOptions> r = ParseArgs(args);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
  return r ? *r : CliOptions{};
}

std::string ErrorOf(std::vector<std::string_view> args) {
  Result<CliOptions> r = ParseArgs(args);
  EXPECT_FALSE(r.has_value());
  return r ? "" : r.error().message();
}

TEST(ArgsTest, TwoOrMoreWordsRunExactlyWithoutAShell) {
  EXPECT_EQ(Parse({"ls", "-la", "a b"}).argv, (Argv{"ls", "-la", "a b"}));
}

TEST(ArgsTest, OneWordRunsWithBashC) {
  EXPECT_EQ(Parse({"curl example.com | head"}).argv,
            (Argv{"bash", "-c", "curl example.com | head"}));
}

TEST(ArgsTest, DashCRunsWithBashAndPassesPositionalParameters) {
  EXPECT_EQ(Parse({"-c", "echo $1", "zero", "one"}).argv,
            (Argv{"bash", "-c", "echo $1", "zero", "one"}));
  EXPECT_EQ(Parse({"-cecho hi"}).argv, (Argv{"bash", "-c", "echo hi"}));
}

TEST(ArgsTest, OptionsEndAtTheCommandOrDoubleDash) {
  CliOptions o = Parse({"-d", "--settings", "s.json", "grep", "-r", "--debug", "x"});
  EXPECT_TRUE(o.debug);
  EXPECT_EQ(o.settings_path, "s.json");
  EXPECT_EQ(o.argv, (Argv{"grep", "-r", "--debug", "x"}));
  EXPECT_EQ(Parse({"--", "-weird-name", "arg"}).argv, (Argv{"-weird-name", "arg"}));
}

TEST(ArgsTest, SettingsForms) {
  EXPECT_EQ(Parse({"-s", "a.json", "true", "x"}).settings_path, "a.json");
  EXPECT_EQ(Parse({"-sa.json", "true", "x"}).settings_path, "a.json");
  EXPECT_EQ(Parse({"--settings=a.json", "true", "x"}).settings_path, "a.json");
}

TEST(ArgsTest, PassFd) {
  EXPECT_EQ(Parse({"--pass-fd", "5", "--pass-fd=7", "cat", "x"}).pass_fds,
            (std::vector<int>{5, 7}));
  EXPECT_EQ(ErrorOf({"--pass-fd", "2", "cat", "x"}),
            "--pass-fd needs a descriptor number of 3 or more (0-2 are stdin, stdout and stderr), "
            "got '2' (see 'srt --help')");
  EXPECT_EQ(ErrorOf({"--pass-fd", "x1", "cat", "x"}),
            "--pass-fd needs a descriptor number of 3 or more (0-2 are stdin, stdout and stderr), "
            "got 'x1' (see 'srt --help')");
}

// srt-init's plan holds at most kMaxInheritFds of them: more are refused here, naming the option
// and the limit, not by srt-init as a malformed plan.
TEST(ArgsTest, PassFdAtMostKMaxInheritFdsTimes) {
  std::vector<std::string> numbers;
  for (int fd = 10; fd < 10 + static_cast<int>(kMaxInheritFds) + 1; ++fd) {
    numbers.push_back(std::to_string(fd));
  }
  std::vector<std::string_view> args;
  for (size_t i = 0; i < kMaxInheritFds; ++i) args.insert(args.end(), {"--pass-fd", numbers[i]});
  args.emplace_back("true");
  EXPECT_EQ(Parse(args).pass_fds.size(), kMaxInheritFds);
  args.insert(args.end() - 1, {"--pass-fd", numbers.back()});
  EXPECT_EQ(ErrorOf(args),
            "--pass-fd is given 65 times; at most 64 descriptors can be passed (see 'srt --help')");
}

TEST(ArgsTest, NetworkOptions) {
  CliOptions o = Parse({"--control-fd", "3", "--log-file=/tmp/l.jsonl", "true", "x"});
  EXPECT_EQ(o.control_fd, 3);
  EXPECT_EQ(o.log_file, "/tmp/l.jsonl");
  EXPECT_EQ(o.log_fd, std::nullopt);
  EXPECT_EQ(Parse({"--log-fd", "9", "true", "x"}).log_fd, 9);
  // Upstream's rule: decimal digits only, 3 or more.
  for (const char* bad : {"2", "0x10", "-3", "", "3a"}) {
    EXPECT_EQ(ErrorOf({"--control-fd", bad, "true", "x"})
                  .rfind("--control-fd needs a descriptor "
                         "number of 3 or more",
                         0),
              0u)
        << bad;
  }
  EXPECT_EQ(ErrorOf({"--log-fd", "4", "--log-file", "f", "true", "x"}),
            "--log-fd and --log-file cannot be used together (see 'srt --help')");
  EXPECT_EQ(ErrorOf({"--log-file=", "true", "x"}),
            "option '--log-file' needs a value (see 'srt --help')");
}

TEST(ArgsTest, HelpAndVersion) {
  EXPECT_EQ(Parse({"-h"}).action, CliOptions::Action::kHelp);
  EXPECT_EQ(Parse({"--version"}).action, CliOptions::Action::kVersion);
  EXPECT_EQ(Parse({"-V"}).action, CliOptions::Action::kVersion);
}

TEST(ArgsTest, Errors) {
  EXPECT_EQ(ErrorOf({}),
            "no command given; run 'srt COMMAND [ARG...]', 'srt \"shell command\"' or 'srt -c "
            "\"shell command\"' (see 'srt --help')");
  EXPECT_EQ(ErrorOf({"-d"}), ErrorOf({}));
  EXPECT_EQ(ErrorOf({"--bogus", "ls"}), "unknown option '--bogus' (see 'srt --help')");
  EXPECT_EQ(ErrorOf({"-s"}), "option '-s' needs a value (see 'srt --help')");
  EXPECT_EQ(ErrorOf({"--settings=", "ls"}), "option '--settings' needs a value (see 'srt --help')");
  EXPECT_EQ(ErrorOf({"-c", ""}), "-c needs a non-empty command (see 'srt --help')");
  EXPECT_EQ(ErrorOf({""}), "the command is empty (see 'srt --help')");
}

TEST(ArgsTest, ResourceLimitsAndTimeout) {
  CliOptions o =
      Parse({"--memory", "512M", "--cpus=1.5", "--pids", "64", "--timeout=1m30s", "make"});
  EXPECT_EQ(o.memory_bytes, uint64_t{512} << 20);
  EXPECT_EQ(o.cpu_millis, 1500u);
  EXPECT_EQ(o.pids, 64u);
  EXPECT_EQ(o.timeout, std::chrono::milliseconds(90'000));
  EXPECT_EQ(o.timeout_text, "1m30s");
  CliOptions none = Parse({"make"});
  EXPECT_FALSE(none.memory_bytes || none.cpu_millis || none.pids || none.timeout);
  EXPECT_EQ(ErrorOf({"--memory", "15M", "x"}),
            "--memory 15M is below the 16M floor (see 'srt --help')");
  EXPECT_EQ(ErrorOf({"--pids", "4194305", "x"}),
            "--pids needs a whole number from 16 to 4194304, got '4194305' (see 'srt --help')");
  EXPECT_EQ(ErrorOf({"--timeout", "0", "x"}),
            "--timeout needs a duration above 0, e.g. 30s or 5m (see 'srt --help')");
}

TEST(ArgsTest, ServeTakesASocketAndNoCommand) {
  CliOptions o = Parse({"-s", "settings.json", "--serve", "/run/user/1/srt.sock"});
  EXPECT_EQ(o.serve_socket, "/run/user/1/srt.sock");
  EXPECT_TRUE(o.argv.empty());
  EXPECT_EQ(o.settings_path, "settings.json");
  EXPECT_NE(ErrorOf({"--serve", "s", "ls", "-l"}).find("--serve runs no command of its own"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--serve", "s", "--timeout", "5s"}).find("not for --serve"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--serve", "s", "--attach", "t", "ls", "x"}).find("not together"),
            std::string::npos);
}

TEST(ArgsTest, AttachRunsACommandAsAPlainRunWould) {
  CliOptions o = Parse({"--attach", "s", "ls", "-la"});
  EXPECT_EQ(o.attach_socket, "s");
  EXPECT_EQ(o.argv, (Argv{"ls", "-la"}));
  EXPECT_EQ(Parse({"--attach=s", "-c", "echo $1", "zero", "one"}).argv,
            (Argv{"bash", "-c", "echo $1", "zero", "one"}));
  EXPECT_EQ(Parse({"--attach", "s", "make test"}).argv, (Argv{"bash", "-c", "make test"}));
  // The policy, limits and logs are the serving srt's.
  EXPECT_NE(ErrorOf({"--attach", "s", "-s", "x.json", "ls", "y"}).find("--settings cannot be used"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--attach", "s", "--memory", "1G", "ls", "y"}).find("--memory cannot"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--attach", "s"}).find("no command given"), std::string::npos);
}

// SRT_PROXY_REPORT_RSS_MS: upstream's on/off values, and a clear refusal where upstream is
// silent (or reads "1e3" as 1000).
TEST(ProxyArgsTest, ReportRssMs) {
  EXPECT_EQ(*ParseReportRssMs(std::nullopt), 0u);
  EXPECT_EQ(*ParseReportRssMs(""), 0u);
  EXPECT_EQ(*ParseReportRssMs("0"), 0u);
  EXPECT_EQ(*ParseReportRssMs("250"), 250u);
  EXPECT_EQ(*ParseReportRssMs("2147483647"), 2147483647u);
  for (std::string_view bad :
       {"-5", "1e3", " 5", "5ms", "0x10", "2147483648", "99999999999", "1.5"}) {
    Result<uint32_t> r = ParseReportRssMs(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message().find("srt proxy: SRT_PROXY_REPORT_RSS_MS "), std::string::npos);
    EXPECT_NE(r.error().message().find("is not a number of milliseconds from 1 to 2147483647"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace srt::cli
