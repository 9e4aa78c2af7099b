// SPDX-License-Identifier: Apache-2.0
// glob and grep: the Go toolset's output, limits, and no escape through symlinks.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "support/sanitizers.h"
#include "toolbox/glob_match.h"
#include "toolbox/limits.h"
#include "toolbox_test_support.h"

namespace srt::poller::toolbox::testing {
namespace {

void SetMtime(const std::string& path, time_t sec) {
  timespec t[2] = {{sec, 0}, {sec, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), t, AT_SYMLINK_NOFOLLOW), 0) << path;
}

TEST(GlobMatchTest, Segments) {
  EXPECT_TRUE(GlobMatch("*.go", "a.go"));
  EXPECT_FALSE(GlobMatch("*.go", "d/a.go"));
  EXPECT_TRUE(GlobMatch("**/*.go", "a.go"));
  EXPECT_TRUE(GlobMatch("**/*.go", "d/e/a.go"));
  EXPECT_TRUE(GlobMatch("d/**", "d/e/f"));
  EXPECT_TRUE(GlobMatch("d/**/f", "d/f"));
  EXPECT_FALSE(GlobMatch("d/**/f", "e/f"));
  EXPECT_TRUE(GlobMatch("?.[ch]", "x.h"));
  EXPECT_TRUE(GlobMatch("*", ".hidden"));
  EXPECT_TRUE(GlobMatch("**/**/**/**/**/**/**/**/z", "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/z"));
  EXPECT_FALSE(GlobMatch("**/**/**/**/**/**/**/**/z", "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/y"));
  EXPECT_TRUE(HasParentDirSegment("a/../b"));
  EXPECT_FALSE(HasParentDirSegment("a/..b"));
}

using GlobToolTest = ToolboxTest;

TEST_F(GlobToolTest, NewestFirstWithAbsolutePaths) {
  WriteFile(In("old.go"), "");
  WriteFile(In("d/mid.go"), "");
  WriteFile(In("d/e/new.go"), "");
  WriteFile(In("d/e/skip.txt"), "");
  SetMtime(In("old.go"), 1000);
  SetMtime(In("d/mid.go"), 2000);
  SetMtime(In("d/e/new.go"), 3000);
  ToolResult r = Call("glob", {{"pattern", "**/*.go"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, In("d/e/new.go") + "\n" + In("d/mid.go") + "\n" + In("old.go"));
  EXPECT_EQ(Call("glob", {{"pattern", "*.go"}, {"path", "d"}}).text, In("d/mid.go"));
  EXPECT_EQ(Call("glob", {{"pattern", "*.rs"}}).text, "no matches");
  EXPECT_EQ(Call("glob", {{"pattern", "*"}, {"path", "nonexistent"}}).text, "no matches");
}

TEST_F(GlobToolTest, Refusals) {
  EXPECT_EQ(Call("glob", nlohmann::json::object()).text, "glob: pattern is required");
  EXPECT_EQ(Call("glob", {{"pattern", "/etc/*"}}).text, "glob: absolute pattern not permitted");
  EXPECT_EQ(Call("glob", {{"pattern", "../*"}}).text,
            "glob: pattern \"../*\" must not contain a \"..\" segment");
  EXPECT_EQ(Call("glob", {{"pattern", "*"}, {"path", "../outside"}}).text,
            "glob: path \"../outside\" escapes workdir");
}

TEST_F(GlobToolTest, DoesNotDescendSymlinks) {
  WriteFile(In("a.txt"), "");
  ASSERT_EQ(symlink(outside_.c_str(), In("out").c_str()), 0);
  ToolResult r = Call("glob", {{"pattern", "**"}});
  // The link itself is listed (like Go's WalkDir); nothing beneath it is.
  EXPECT_NE(r.text.find(In("out")), std::string::npos);
  EXPECT_EQ(r.text.find("secret"), std::string::npos) << r.text;
}

TEST_F(GlobToolTest, ResultsAreCapped) {
  for (int i = 0; i < 250; ++i) WriteFile(In("f" + std::to_string(i)), "");
  ToolResult r = Call("glob", {{"pattern", "f*"}});
  EXPECT_EQ(std::count(r.text.begin(), r.text.end(), '\n') + 1,
            static_cast<long>(kGlobResultLimit));
}

// The cap keeps the newest, newest first, in walk (lexical) order among equal times: the same
// as sorting every match, though only kGlobResultLimit are ever held.
TEST_F(GlobToolTest, TheCapKeepsTheNewestInWalkOrderAmongEquals) {
  std::vector<std::string> expected;
  for (int i = 0; i < 500; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "f%03d", i);
    WriteFile(In(name), "");
    // Every third file shares a time with two others; times grow, then fall, then grow again.
    const time_t t = 10000 + (i < 250 ? i / 3 : i < 400 ? 500 - i / 3 : 1000 + i / 3);
    SetMtime(In(name), t);
  }
  std::vector<std::pair<time_t, std::string>> all;
  for (int i = 0; i < 500; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "f%03d", i);
    all.emplace_back(-(10000 + (i < 250 ? i / 3 : i < 400 ? 500 - i / 3 : 1000 + i / 3)), In(name));
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string want;
  for (size_t i = 0; i < kGlobResultLimit; ++i) want += (i ? "\n" : "") + all[i].second;
  EXPECT_EQ(Call("glob", {{"pattern", "f*"}}).text, want);
}

// The agent's tree decides what a walk meets, so a walk holds little of it: 20,000 matches of
// 3.6 KiB paths each were 70 MiB of glob results in our memory (where our cgroup reserve is 32
// MiB), and a directory of more entries than a walk visits is read only that far. Measured in a
// child: its peak RSS grows by less than 16 MiB.
TEST_F(GlobToolTest, AWalkHoldsLittleOfTheAgentsTree) {
  std::string deep = "deep";
  for (int i = 0; i < 13; ++i) deep += "/" + std::string(250, static_cast<char>('a' + i));
  fs::create_directories(In(deep));
  for (int i = 0; i < 20000; ++i) {
    int fd = open(In(deep + "/" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  fs::create_directories(In("big"));
  for (size_t i = 0; i < kWalkMaxEntries + 100; ++i) {
    int fd = open(In("big/" + std::string(200, 'n') + std::to_string(i)).c_str(),
                  O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  auto grown_mib = [&](const nlohmann::json& input, std::string* first_line) {
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
      rusage before{}, after{};
      getrusage(RUSAGE_SELF, &before);
      ToolResult r = Call("glob", input);
      getrusage(RUSAGE_SELF, &after);
      std::string report = std::to_string((after.ru_maxrss - before.ru_maxrss) / 1024) + " " +
                           std::to_string(std::count(r.text.begin(), r.text.end(), '\n') + 1);
      (void)!write(p[1], report.data(), report.size());
      _exit(0);
    }
    close(p[1]);
    char buf[64] = {};
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    waitpid(pid, nullptr, 0);
    *first_line = std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
    return std::atol(buf);
  };
  // ASan's quarantine keeps every path a walk built and dropped (67 MiB in the CI run), so under a
  // sanitizer the figure is the allocator's, not the walk's: only the results are checked.
  const long limit_mib = SRT_TEST_SANITIZED ? std::numeric_limits<long>::max() : 16;
  std::string report;
  EXPECT_LT(grown_mib({{"pattern", "**"}, {"path", "deep"}}, &report), limit_mib) << report;
  EXPECT_EQ(report.substr(report.find(' ') + 1), std::to_string(kGlobResultLimit));
  EXPECT_LT(grown_mib({{"pattern", "*"}, {"path", "big"}}, &report), limit_mib) << report;
  EXPECT_EQ(report.substr(report.find(' ') + 1), std::to_string(kGlobResultLimit));
}

using GrepWalkerTest = ToolboxTest;

TEST_F(GrepWalkerTest, FindsLinesWithAbsolutePaths) {
  WriteFile(In("a.txt"), "alpha\nbeta 42\ngamma\n");
  WriteFile(In("d/b.txt"), "beta\n");
  WriteFile(In(".git/config"), "beta\n");
  WriteFile(In("node_modules/x"), "beta\n");
  WriteFile(In("bin"), std::string("beta\0\0", 6));
  ToolResult r = Call("grep", {{"pattern", "beta"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, In("a.txt") + ":2:beta 42\n" + In("d/b.txt") + ":1:beta");
  EXPECT_EQ(Call("grep", {{"pattern", "beta \\d+"}}).text, In("a.txt") + ":2:beta 42");
  EXPECT_EQ(Call("grep", {{"pattern", "beta"}, {"path", "d"}}).text, In("d/b.txt") + ":1:beta");
  EXPECT_EQ(Call("grep", {{"pattern", "alpha"}, {"path", "a.txt"}}).text, In("a.txt") + ":1:alpha");
  EXPECT_EQ(Call("grep", {{"pattern", "zeta"}}).text, "no matches");
  r = Call("grep", {{"pattern", "(unclosed"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text.rfind("grep: invalid regex \"(unclosed\": ", 0), 0u) << r.text;
  EXPECT_EQ(Call("grep", nlohmann::json::object()).text, "grep: pattern is required");
}

TEST_F(GrepWalkerTest, SkipsSymlinksAndFifos) {
  ASSERT_EQ(symlink((outside_ + "/secret").c_str(), In("link").c_str()), 0);
  ASSERT_EQ(symlink(outside_.c_str(), In("dirlink").c_str()), 0);
  ASSERT_EQ(mkfifo(In("fifo").c_str(), 0644), 0);
  EXPECT_EQ(Call("grep", {{"pattern", "secret"}}).text, "no matches");
}

TEST_F(GrepWalkerTest, OutputIsCapped) {
  std::string line(1000, 'x');
  std::string content;
  for (int i = 0; i < 200; ++i) content += line + "\n";
  WriteFile(In("big.txt"), content);
  ToolResult r = Call("grep", {{"pattern", "x"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_LE(r.text.size(), kGrepOutputLimit + 32);
  EXPECT_EQ(r.text.substr(r.text.size() - 19), "\n[output truncated]");
}

TEST_F(GrepWalkerTest, TheCallDeadlineStopsTheWalk) {
  for (int i = 0; i < 3000; ++i)
    WriteFile(In("d" + std::to_string(i % 30) + "/f" + std::to_string(i)), "x\n");
  ToolResult r = Call("grep", {{"pattern", "x"}}, std::chrono::milliseconds(1));
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "tool \"grep\" timed out after 1ms");
}

// The grep tool's contract is Go's regexp syntax (RE2): the pattern the agent writes for the
// official toolset must mean the same here, whether or not ripgrep is on the host's PATH (a
// real rg, or a stand-in that would give other answers) and never POSIX's dialect.
enum class RgOnPath { kNone, kReal, kStandIn };

class GrepSyntaxTest : public ::testing::TestWithParam<RgOnPath> {
 protected:
  void SetUp() override {
    root_ = base_.path() + "/root";
    fs::create_directories(root_);
    std::string path = bin_.path();
    if (GetParam() == RgOnPath::kReal) {
      if (access("/usr/bin/rg", X_OK) != 0) GTEST_SKIP() << "ripgrep is not installed";
      path = "/usr/bin:/bin";
    } else if (GetParam() == RgOnPath::kStandIn) {
      WriteFile(bin_.path() + "/rg", "#!/bin/sh\necho stand-in:1:rg\n");
      ASSERT_EQ(chmod((bin_.path() + "/rg").c_str(), 0755), 0);
    }
    const char* old = getenv("PATH");
    old_path_ = old ? old : "";
    setenv("PATH", path.c_str(), 1);  // NOLINT(concurrency-mt-unsafe): no thread runs yet
    ToolboxOptions options;
    options.root = root_;
    auto tb = Toolbox::Create(options);
    ASSERT_TRUE(tb.has_value()) << tb.error().message();
    tb_ = std::move(*tb);
  }
  void TearDown() override {
    setenv("PATH", old_path_.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  }
  ToolResult Grep(const std::string& pattern) {
    NoInterrupt never;
    return tb_->Run("grep", {{"pattern", pattern}}, std::chrono::milliseconds(0), never);
  }
  std::string In(const std::string& rel) const { return root_ + "/" + rel; }

  TempDir base_;
  TempDir bin_;
  std::string root_;
  std::string old_path_;
  std::unique_ptr<Toolbox> tb_;
};

TEST_P(GrepSyntaxTest, CaseInsensitiveFlag) {
  WriteFile(In("a.txt"), "Hello World\nbye\ngrüne ÄPFEL\n");
  EXPECT_EQ(Grep("(?i)hello").text, In("a.txt") + ":1:Hello World");
  EXPECT_EQ(Grep("(?i)äpfel").text, In("a.txt") + ":3:grüne ÄPFEL");
  EXPECT_EQ(Grep("hello").text, "no matches");
}

TEST_P(GrepSyntaxTest, PerlClassesAndWordBoundaries) {
  WriteFile(In("a.txt"), "a cat sat\nconcatenate\nroom 101\n");
  EXPECT_EQ(Grep(R"(\bcat\b)").text, In("a.txt") + ":1:a cat sat");
  EXPECT_EQ(Grep(R"(\s\d+$)").text, In("a.txt") + ":3:room 101");
  EXPECT_EQ(Grep(R"(^\D+$)").text, In("a.txt") + ":1:a cat sat\n" + In("a.txt") + ":2:concatenate");
}

// Valid Go (RE2) that POSIX ERE rejects or reads otherwise.
TEST_P(GrepSyntaxTest, GoSyntaxThatPosixLacks) {
  WriteFile(In("a.txt"), "xababcx\na.b\naxb\nλόγος\nA1\n");
  EXPECT_EQ(Grep("(?:ab){2}c").text, In("a.txt") + ":1:xababcx");
  EXPECT_EQ(Grep(R"(\Qa.b\E)").text, In("a.txt") + ":2:a.b");
  EXPECT_EQ(Grep(R"(^\p{Greek}+$)").text, In("a.txt") + ":4:λόγος");
  EXPECT_EQ(Grep(R"(^\x41\d)").text, In("a.txt") + ":5:A1");
  EXPECT_EQ(Grep("^a.*?b$").text, In("a.txt") + ":2:a.b\n" + In("a.txt") + ":3:axb");
  EXPECT_EQ(Grep("(?s)^x.b").text, In("a.txt") + ":1:xababcx");
}

// Go's words for a bad pattern ("error parsing regexp: <what>: `<where>`"), after the pattern.
TEST_P(GrepSyntaxTest, AnInvalidPatternIsNamedWithTheParsersReason) {
  WriteFile(In("a.txt"), "x\n");
  ToolResult r = Grep("(unclosed");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text,
            "grep: invalid regex \"(unclosed\": error parsing regexp: missing closing ): "
            "`(unclosed`");
  r = Grep("a**");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text,
            "grep: invalid regex \"a**\": error parsing regexp: invalid nested repetition "
            "operator: `**`");
}

TEST_P(GrepSyntaxTest, ABackreferenceIsRefusedClearly) {
  WriteFile(In("a.txt"), "aa\n");
  ToolResult r = Grep(R"((a)\1)");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text,
            "grep: invalid regex \"(a)\\\\1\": error parsing regexp: invalid escape sequence: "
            "`\\1` (Go's regexp syntax has no backreferences)");
}

std::string RgOnPathName(const ::testing::TestParamInfo<RgOnPath>& param) {
  switch (param.param) {
    case RgOnPath::kNone:
      return "NoRipgrep";
    case RgOnPath::kReal:
      return "Ripgrep";
    case RgOnPath::kStandIn:
      return "RipgrepStandIn";
  }
  return "";
}

INSTANTIATE_TEST_SUITE_P(RgOnPath, GrepSyntaxTest,
                         ::testing::Values(RgOnPath::kNone, RgOnPath::kReal, RgOnPath::kStandIn),
                         RgOnPathName);

}  // namespace
}  // namespace srt::poller::toolbox::testing
