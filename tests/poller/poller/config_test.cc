// SPDX-License-Identifier: Apache-2.0
#include "poller/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "poller/log.h"

namespace srt::poller {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

std::map<std::string, std::string> Env(std::map<std::string, std::string> extra = {}) {
  std::map<std::string, std::string> e = {{"ANTHROPIC_ENVIRONMENT_KEY", "sk-ant-oat01-x"}};
  for (auto& [k, v] : extra) e[k] = v;
  return e;
}

FileReader Files(std::map<std::string, std::string> files) {
  return [files](const std::string& path) -> Result<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return MakeError(Errc::kNotFound, "no such file");
    return it->second;
  };
}

Result<PollerConfig> Parse(std::vector<std::string_view> args,
                           std::map<std::string, std::string> env = Env(),
                           std::map<std::string, std::string> files = {}) {
  return ParseConfig(args, env, Files(files));
}

TEST(PollerConfig, DefaultsMatchTheIssue) {
  auto c = Parse({"--environment-id", "env_1"});
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->environment_id, "env_1");
  EXPECT_EQ(c->base_url, "https://api.anthropic.com");
  EXPECT_EQ(c->sessions_dir, "/var/lib/srt-poller/sessions");
  EXPECT_EQ(c->concurrency, 1);
  EXPECT_EQ(c->max_idle, milliseconds(60'000));
  ASSERT_TRUE(c->limits);
  EXPECT_EQ(c->limits->memory_bytes, uint64_t{3} << 30);
  EXPECT_EQ(c->limits->cpu_millis, 2000u);
  EXPECT_EQ(c->limits->pids, 512u);
  EXPECT_TRUE(c->environment_key_from_env);
  EXPECT_EQ(c->log_format, LogFormat::kText);
  EXPECT_EQ(c->workspace_cleanup, WorkspaceCleanup::kKeep);
}

TEST(PollerConfig, AntNamesFromTheEnvironmentAndFlagsWin) {
  auto c = Parse({"--base-url=http://127.0.0.1:9/", "--worker-id", "w-2"},
                 Env({{"ANTHROPIC_ENVIRONMENT_ID", "env_e"},
                      {"ANTHROPIC_BASE_URL", "https://example.test"},
                      {"ANTHROPIC_WORKER_ID", "w-1"}}));
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->environment_id, "env_e");
  EXPECT_EQ(c->base_url, "http://127.0.0.1:9");  // trailing slash dropped
  EXPECT_EQ(c->worker_id, "w-2");
}

TEST(PollerConfig, ConfigFileSitsBelowEnvironmentAndFlags) {
  std::map<std::string, std::string> files = {
      {"/etc/p.json",
       R"({"environment-id": "env_f", "concurrency": 4, "max-idle": "90s", "cpus": 0.5,
           "memory": "1G", "log-format": "json", "workspace-cleanup": "terminated"})"}};
  auto c = Parse({"--config", "/etc/p.json", "--concurrency", "2"}, Env(), files);
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->environment_id, "env_f");
  EXPECT_EQ(c->concurrency, 2);
  EXPECT_EQ(c->max_idle, milliseconds(90'000));
  EXPECT_EQ(c->limits->cpu_millis, 500u);
  EXPECT_EQ(c->limits->memory_bytes, uint64_t{1} << 30);
  EXPECT_EQ(c->log_format, LogFormat::kJson);
  EXPECT_EQ(c->workspace_cleanup, WorkspaceCleanup::kTerminated);
}

TEST(PollerConfig, ConcurrencyIsBounded) {
  auto c = Parse({"--environment-id", "e", "--concurrency", "4096"});
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->concurrency, 4096);
  auto e = Parse({"--environment-id", "e", "--concurrency", "4097"});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("'4097' is not a whole number from 1 to 4096"));
}

TEST(PollerConfig, ErrorsNameTheFileKeyOrValue) {
  std::map<std::string, std::string> files = {
      {"/c.json", R"({"concurrency": 0})"}, {"/u.json", R"({"colour": "red"})"}, {"/j.json", "{"}};
  auto e = Parse({"--config", "/c.json", "--environment-id", "e"}, Env(), files);
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("'/c.json'"));
  EXPECT_THAT(e.error().message(), HasSubstr("concurrency"));
  e = Parse({"--config", "/u.json", "--environment-id", "e"}, Env(), files);
  EXPECT_THAT(e.error().message(), HasSubstr("key 'colour': unknown key"));
  e = Parse({"--config", "/j.json", "--environment-id", "e"}, Env(), files);
  EXPECT_THAT(e.error().message(), HasSubstr("not JSON"));
  e = Parse({"--config", "/missing.json", "--environment-id", "e"}, Env(), files);
  EXPECT_THAT(e.error().message(), HasSubstr("'/missing.json'"));
  e = Parse({"--environment-id", "e", "--max-idle", "10 parsecs"});
  EXPECT_THAT(e.error().message(), HasSubstr("--max-idle: '10 parsecs'"));
  e = Parse({"--environment-id", "e", "--memory-sync-interval", "2s"});
  EXPECT_THAT(e.error().message(),
              HasSubstr("--memory-sync-interval: '2s': must be 0 or at least 5s"));
  auto sync = Parse({"--environment-id", "e", "--memory-sync-interval", "0"});
  ASSERT_TRUE(sync) << sync.error().message();
  EXPECT_EQ(sync->memory_sync_interval.count(), 0);
  EXPECT_EQ(Parse({"--environment-id", "e"})->memory_sync_interval.count(), 15'000);
  e = Parse({"--environment-id", "e", "--log-format", "xml"});
  EXPECT_THAT(e.error().message(), HasSubstr("expected text or json"));
  e = Parse({"--environment-id", "e", "--bogus"});
  EXPECT_THAT(e.error().message(), HasSubstr("unknown option '--bogus'"));
  e = Parse({"--environment-id", "e/../x"});
  EXPECT_THAT(e.error().message(), HasSubstr("not an environment id"));
  e = Parse({"--environment-id", "e", "--base-url", "ftp://x"});
  EXPECT_THAT(e.error().message(), HasSubstr("https://"));
}

TEST(PollerConfig, RequiresIdAndKey) {
  auto e = Parse({}, Env());
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("--environment-id"));
  e = Parse({"--environment-id", "e"}, {});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("--environment-key-file"));
  auto c = Parse({"--environment-id", "e", "--environment-key-file", "/k"}, {});
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(*c->environment_key_file, "/k");
}

// Every sandbox hides the key file by its path, and a deny rule needs an absolute one: a relative
// path once passed here, was skipped by the deny rule, and every session could read the key.
TEST(PollerConfig, TheKeyFileAndTheConfigFileMustBeAbsolute) {
  auto e = Parse({"--environment-id", "e", "--environment-key-file", "key"}, {});
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message(),
            "--environment-key-file: 'key': must be an absolute path (every session's sandbox "
            "hides the file by its path)");
  e = Parse({"--environment-id", "e", "--environment-key-file", "./k"}, {});
  ASSERT_FALSE(e);
  e = Parse({"--config", "p.json", "--environment-id", "e"}, Env(), {{"p.json", "{}"}});
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message(),
            "--config: 'p.json': must be an absolute path (every session's sandbox hides the "
            "file by its path)");
  e = Parse({"--config", "/p.json", "--environment-id", "e"}, {},
            {{"/p.json", R"({"environment-key-file": "k"})"}});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("must be an absolute path"));
}

TEST(PollerConfig, NoLimitsWhateverTheOrder) {
  auto c = Parse({"--environment-id", "e", "--memory", "1G", "--no-limits"});
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->limits);
  c = Parse({"--environment-id", "e", "--no-limits", "--pids", "64"});
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->limits);
  auto e = Parse({"--environment-id", "e", "--memory", "1M"});
  EXPECT_THAT(e.error().message(), HasSubstr("16 MiB"));
}

TEST(PollerConfig, DiskIsTenGibibytesByDefaultZeroTurnsItOffAndNoLimitsDropsIt) {
  auto c = Parse({"--environment-id", "e"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->limits->disk_bytes, uint64_t{10} << 30);
  c = Parse({"--environment-id", "e", "--disk", "64M"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->limits->disk_bytes, uint64_t{64} << 20);
  c = Parse({"--environment-id", "e", "--disk", "0"});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->limits->disk_bytes, 0u);
  c = Parse({"--environment-id", "e", "--disk", "1G", "--no-limits"});
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->limits);
  auto e = Parse({"--environment-id", "e", "--disk", "16M"});
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message(), "--disk: '16M': below the 32 MiB floor (0 turns it off)");
  e = Parse({"--environment-id", "e", "--disk", "lots"});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("--disk: 'lots'"));
}

TEST(PollerConfig, ScriptKeyNeedsOnWork) {
  auto e = Parse({"--environment-id", "e", "--script-gets-environment-key"});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("--on-work"));
  auto c =
      Parse({"--environment-id", "e", "--on-work", "/bin/true", "--script-gets-environment-key"});
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->script_gets_environment_key);
}

TEST(PollerConfig, TheLeaseIsHandedToTheScriptUnlessRefusedAndTheRefusalNeedsOnWork) {
  auto e = Parse({"--environment-id", "e", "--no-lease-handoff"});
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message(), "--no-lease-handoff needs --on-work");
  auto handed = Parse({"--environment-id", "e", "--on-work", "/bin/true"});
  ASSERT_TRUE(handed);
  EXPECT_TRUE(handed->lease_handoff);
  auto kept = Parse({"--environment-id", "e", "--on-work", "/bin/true", "--no-lease-handoff"});
  ASSERT_TRUE(kept);
  EXPECT_FALSE(kept->lease_handoff);
}

TEST(PollerConfig, ScriptEnvNamesVariablesButNoCredentialNorOursAndNeedsOnWork) {
  auto c = Parse({"--environment-id", "e", "--on-work", "/bin/true", "--script-env", "A,B_2",
                  "--script-env", "_c"});
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->script_env_names, (std::vector<std::string>{"A", "B_2", "_c"}));
  auto bad = [](std::string_view value) {
    auto r = Parse({"--environment-id", "e", "--on-work", "/bin/true", "--script-env", value});
    return r ? std::string("accepted") : r.error().message();
  };
  EXPECT_THAT(bad("2X"), HasSubstr("'2X' is not a variable name"));
  EXPECT_THAT(bad("A,,B"), HasSubstr("'' is not a variable name"));
  EXPECT_THAT(bad("A=B"), HasSubstr("'A=B' is not a variable name"));
  EXPECT_THAT(bad("ANTHROPIC_API_KEY"), HasSubstr("'ANTHROPIC_API_KEY' is set by srt-poller"));
  EXPECT_THAT(bad("ANTHROPIC_ENVIRONMENT_KEY"), HasSubstr("is set by srt-poller itself, or never"));
  EXPECT_THAT(bad("ANTHROPIC_BASE_URL"), HasSubstr("is set by srt-poller itself"));
  EXPECT_THAT(bad("ANTHROPIC_BASE_URL"), HasSubstr("--script-env"));
  auto e = Parse({"--environment-id", "e", "--script-env", "A"});
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message(), "--script-env needs --on-work");
}

// `ant beta:worker poll`'s flags: each works as there, is mapped, or is refused saying why.
TEST(PollerConfig, AntsEnvironmentKeyFlagWorksAndSaysWhereTheKeyIs) {
  auto c = Parse({"--environment-id", "e", "--environment-key", "sk-ant-oat01-abc"}, {});
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_TRUE(c->environment_key_arg);
  EXPECT_EQ(*c->environment_key_arg, "sk-ant-oat01-abc");
  EXPECT_FALSE(c->environment_key_file);
  // Where the key is in the arguments (args[3], from its first byte), to blank it there.
  ASSERT_TRUE(c->environment_key_at);
  EXPECT_EQ(c->environment_key_at->index, 3u);
  EXPECT_EQ(c->environment_key_at->offset, 0u);
  c = Parse({"--environment-key=sk-ant-oat01-abc", "--environment-id", "e"}, Env());
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(*c->environment_key_arg, "sk-ant-oat01-abc");
  EXPECT_EQ(c->environment_key_at->index, 0u);
  EXPECT_EQ(c->environment_key_at->offset, std::string_view("--environment-key=").size());
}

// /proc/PID/cmdline is read from the process's own memory: blanking the key there takes it out
// of `ps` (after the moment between exec and the blanking, which the warning is about).
TEST(PollerConfig, TheKeyIsBlankedInTheCommandLineAndNothingElseIs) {
  std::string a[] = {"srt-poller",          "--environment-id", "e",
                     "--environment-key",   "sk-ant-oat01-abc", "--policy",
                     "--environment-key=zz"};
  char* argv[] = {a[0].data(), a[1].data(), a[2].data(), a[3].data(),
                  a[4].data(), a[5].data(), a[6].data(), nullptr};
  auto c = Parse({argv + 1, argv + 7});
  ASSERT_TRUE(c) << c.error().message();
  BlankEnvironmentKeyArg(*c, 7, argv);
  EXPECT_STREQ(argv[4], "xxxxxxxxxxxxxxxx");
  EXPECT_STREQ(argv[3], "--environment-key");
  EXPECT_STREQ(argv[6], "--environment-key=zz");  // --policy's value, not a key
  std::string b[] = {"srt-poller", "--environment-key=sk-abc", "--environment-id", "e"};
  char* argv2[] = {b[0].data(), b[1].data(), b[2].data(), b[3].data(), nullptr};
  c = Parse({argv2 + 1, argv2 + 4}, {});
  ASSERT_TRUE(c) << c.error().message();
  BlankEnvironmentKeyArg(*c, 4, argv2);
  EXPECT_STREQ(argv2[1], "--environment-key=xxxxxx");
  EXPECT_STREQ(argv2[3], "e");
}

TEST(PollerConfig, AntsEnvironmentKeyFlagIsRefusedBesideAKeyFileOrInTheConfigFile) {
  auto e = Parse(
      {"--environment-id", "e", "--environment-key", "sk", "--environment-key-file", "/etc/k"});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(),
              HasSubstr("--environment-key and --environment-key-file both give the key"));
  e = Parse({"--environment-id", "e", "--environment-key"});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("--environment-key needs a value"));
  e = Parse({"--environment-id", "e", "--environment-key="});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("--environment-key needs a value"));
  e = Parse({"--config", "/c.json", "--environment-id", "e"}, Env(),
            {{"/c.json", R"({"environment-key": "sk"})"}});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(),
              HasSubstr("config file '/c.json': key 'environment-key': the key itself does not "
                        "go in the config file"));
}

TEST(PollerConfig, AntsWorkdirIsTheSessionsWorkspaceAndNothingElse) {
  // What ant's docs ask for: the tools' directory is /workspace. Every session has its own.
  for (std::string_view w : {"/workspace", "/workspace/"}) {
    auto c = Parse({"--environment-id", "e", "--workdir", w});
    ASSERT_TRUE(c) << w << ": " << c.error().message();
  }
  for (std::string_view w : {".", "/srv/agent", "workspace"}) {
    auto e = Parse({"--environment-id", "e", "--workdir", w});
    ASSERT_FALSE(e) << w;
    EXPECT_THAT(e.error().message(), HasSubstr("--workdir: '" + std::string(w) + "': "));
    EXPECT_THAT(e.error().message(), HasSubstr("--sessions-dir"));
  }
  auto e = Parse({"--config", "/c.json", "--environment-id", "e"}, Env(),
                 {{"/c.json", R"({"workdir": "/srv"})"}});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("key 'workdir': '/srv': "));
}

TEST(PollerConfig, AntsUnrestrictedPathsIsRefusedWithTheReason) {
  auto e = Parse({"--environment-id", "e", "--unrestricted-paths"});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("--unrestricted-paths: not supported"));
  EXPECT_THAT(e.error().message(), HasSubstr("--policy"));
}

TEST(PollerConfig, AntsOnWorkInProcessIsTheBuiltInRunner) {
  auto c = Parse({"--environment-id", "e", "--on-work", "in-process"});
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_FALSE(c->on_work);
}

TEST(PollerConfig, HelpVersionCheck) {
  EXPECT_EQ(Parse({"--help"}, {})->action, PollerConfig::Action::kHelp);
  EXPECT_EQ(Parse({"-V"}, {})->action, PollerConfig::Action::kVersion);
  EXPECT_EQ(Parse({"--check", "--environment-id", "e"})->action, PollerConfig::Action::kCheck);
}

class KeyFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/srt-poller-key-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& content, mode_t mode) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p) << content;
    chmod(p.c_str(), mode);
    return p;
  }
  std::string dir_;
};

TEST_F(KeyFile, ReadsAndTrimsA0600File) {
  auto k = LoadEnvironmentKey(Write("k", "sk-ant-oat01-abc\n", 0600), std::nullopt);
  ASSERT_TRUE(k) << k.error().message();
  EXPECT_EQ(*k, "sk-ant-oat01-abc");
}

TEST_F(KeyFile, RefusesGroupOrWorldAccess) {
  for (mode_t m : {0640u, 0604u, 0620u, 0660u, 0644u}) {
    std::string p = Write("k" + std::to_string(m), "sk", m);
    auto k = LoadEnvironmentKey(p, std::nullopt);
    ASSERT_FALSE(k) << std::oct << m;
    EXPECT_THAT(k.error().message(), HasSubstr("'" + p + "'"));
    EXPECT_THAT(k.error().message(), HasSubstr("chmod 600"));
  }
}

TEST_F(KeyFile, RefusesSymlinksDirectoriesEmptyAndBinary) {
  std::string real = Write("real", "sk", 0600);
  std::string link = dir_ + "/link";
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  EXPECT_FALSE(LoadEnvironmentKey(link, std::nullopt));
  EXPECT_FALSE(LoadEnvironmentKey(dir_, std::nullopt));
  EXPECT_THAT(LoadEnvironmentKey(Write("e", "\n", 0600), std::nullopt).error().message(),
              HasSubstr("empty"));
  EXPECT_FALSE(LoadEnvironmentKey(Write("b", std::string("sk\0x", 4), 0600), std::nullopt));
  EXPECT_FALSE(LoadEnvironmentKey(dir_ + "/missing", std::nullopt));
}

TEST_F(KeyFile, FromTheEnvironmentWithoutAFile) {
  EXPECT_EQ(*LoadEnvironmentKey(std::nullopt, std::string("sk-env")), "sk-env");
  EXPECT_FALSE(LoadEnvironmentKey(std::nullopt, std::nullopt));
}

TEST(Logger, TextAndJsonLikeSlog) {
  LogFields f = {{"work_id", "work_1"}, {"error", "a b=c"}};
  EXPECT_EQ(Logger::Format(LogFormat::kText, "T", LogLevel::kInfo, "claimed", f),
            "time=T level=INFO msg=claimed work_id=work_1 error=\"a b=c\"");
  EXPECT_EQ(Logger::Format(LogFormat::kJson, "T", LogLevel::kWarn, "x \"y\"", f),
            R"({"time":"T","level":"WARN","msg":"x \"y\"","work_id":"work_1","error":"a b=c"})");
}

// slog's JSON handler writes integer attributes as JSON numbers; log pipelines (jq, Loki) count
// and compare them so. Text is the digits either way.
TEST(Logger, NumbersAreJsonNumbers) {
  LogFields f = {{"exit_code", 3}, {"bytes", uint64_t{1} << 40}, {"work_id", "12"}};
  EXPECT_EQ(
      Logger::Format(LogFormat::kJson, "T", LogLevel::kWarn, "x", f),
      R"({"time":"T","level":"WARN","msg":"x","exit_code":3,"bytes":1099511627776,"work_id":"12"})");
  EXPECT_EQ(Logger::Format(LogFormat::kText, "T", LogLevel::kWarn, "x", f),
            "time=T level=WARN msg=x exit_code=3 bytes=1099511627776 work_id=12");
}

// A value from a sandbox may hold anything: an 8-bit CSI (U+009B), a right-to-left override
// (U+202E), bytes that are no UTF-8. A terminal or viewer that shows the log must never get
// them raw, so every byte past ASCII is escaped, in both formats.
TEST(Logger, NothingPastAsciiReachesTheLogRaw) {
  const std::string hostile =
      "plain\xc2\x9b"
      "31mCSI\xe2\x80\xae"
      "RLO\xff"
      "bad";
  LogFields f = {{"line", hostile}};
  const std::string text = Logger::Format(LogFormat::kText, "T", LogLevel::kInfo, "out", f);
  const std::string json = Logger::Format(LogFormat::kJson, "T", LogLevel::kInfo, "out", f);
  for (const std::string& line : {text, json}) {
    for (char c : line) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << line;
  }
  EXPECT_EQ(text, R"(time=T level=INFO msg=out line="plain\u009b31mCSI\u202eRLO\ufffdbad")");
  EXPECT_EQ(
      json,
      R"({"time":"T","level":"INFO","msg":"out","line":"plain\u009b31mCSI\u202eRLO\ufffdbad"})");
}

}  // namespace
}  // namespace srt::poller
