// SPDX-License-Identifier: Apache-2.0
#include "policy/mandatory_deny.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_fs_view.h"

namespace srt::policy {
namespace {

using ::testing::Contains;
using ::testing::Not;

std::vector<std::string> Existing(const std::vector<ProtectTarget>& ts) {
  std::vector<std::string> out;
  for (const auto& t : ts) {
    if (t.exists) out.push_back(t.path);
  }
  return out;
}
std::vector<std::string> Missing(const std::vector<ProtectTarget>& ts) {
  std::vector<std::string> out;
  for (const auto& t : ts) {
    if (!t.exists) out.push_back(t.path);
  }
  return out;
}

std::vector<ProtectTarget> Discover(const FsView& fs, MandatoryDenyOptions o = {}) {
  Result<std::vector<ProtectTarget>> r = DiscoverMandatoryDenies(fs, "/w", o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message());
  return r ? *r : std::vector<ProtectTarget>{};
}

TEST(MandatoryDenyTest, MissingNamesAreReportedOnlyAtTheRoot) {
  FakeFsView fs({{"/w/a/b", kDir}});
  auto ts = Discover(fs);
  EXPECT_EQ(Missing(ts).size(), 13u);  // 9 files, .vscode, .idea, .claude/{commands,agents}
  EXPECT_THAT(Missing(ts), Contains("/w/.claude/commands"));
  EXPECT_THAT(Missing(ts), Contains("/w/.claude/agents"));
  EXPECT_THAT(Missing(ts), Not(Contains("/w/a/.bashrc")));
}

TEST(MandatoryDenyTest, ExistingNamesAreFoundWithinTheDepth) {
  FakeFsView fs({{"/w/a/b/.bashrc", kFile},
                 {"/w/a/.vscode/settings.json", kFile},
                 {"/w/a/b/c/.zshrc", kFile},  // level 3: beyond depth 3
                 {"/w/a/.claude/commands/x.md", kFile},
                 {"/w/node_modules/p/.mcp.json", kFile}});
  auto ts = Discover(fs);
  EXPECT_THAT(Existing(ts), Contains("/w/a/b/.bashrc"));
  EXPECT_THAT(Existing(ts), Contains("/w/a/.vscode"));
  EXPECT_THAT(Existing(ts), Contains("/w/a/.claude/commands"));
  EXPECT_THAT(Existing(ts), Not(Contains("/w/a/b/c/.zshrc")));
  EXPECT_THAT(Existing(ts), Not(Contains("/w/node_modules/p/.mcp.json")));
  auto deeper = Discover(fs, {.depth = 4});
  EXPECT_THAT(Existing(deeper), Contains("/w/a/b/c/.zshrc"));
}

TEST(MandatoryDenyTest, GitRepositoriesAndHooks) {
  FakeFsView fs({{"/w/.git/hooks", kDir},
                 {"/w/.git/config", kFile},
                 {"/w/sub/.git/config", kFile}});  // a nested repo without hooks
  auto ts = Discover(fs);
  EXPECT_THAT(Existing(ts), Contains("/w/.git/hooks"));
  EXPECT_THAT(Existing(ts), Contains("/w/.git/config"));
  EXPECT_THAT(Existing(ts), Contains("/w/sub/.git/config"));
  EXPECT_THAT(Missing(ts), Contains("/w/sub/.git/hooks"));
  auto allowed = Discover(fs, {.allow_git_config = true});
  EXPECT_THAT(Existing(allowed), Not(Contains("/w/.git/config")));
}

TEST(MandatoryDenyTest, WorktreeGitFileProtectsTheFileAndTheCommonDirectory) {
  FakeFsView fs({{"/w/.git", File("gitdir: /repo/.git/worktrees/w\n")},
                 {"/repo/.git/worktrees/w/commondir", File("../..\n")},
                 {"/repo/.git/hooks", kDir},
                 {"/repo/.git/config", kFile}});
  auto ts = Discover(fs);
  EXPECT_THAT(Existing(ts), Contains("/w/.git"));
  EXPECT_THAT(Existing(ts), Contains("/repo/.git/hooks"));
  EXPECT_THAT(Existing(ts), Contains("/repo/.git/config"));
  for (const auto& t : ts) {
    if (t.path.starts_with("/repo")) {
      EXPECT_FALSE(t.canonical);
    }
  }
}

TEST(MandatoryDenyTest, SymlinksAreReportedNotFollowed) {
  FakeFsView fs({{"/w/.bashrc", Symlink("/etc/bash.bashrc")}, {"/w/link", Symlink("/")}});
  auto ts = Discover(fs);
  bool found = false;
  for (const auto& t : ts) {
    if (t.path == "/w/.bashrc") {
      found = true;
      EXPECT_TRUE(t.is_symlink);
    }
    EXPECT_FALSE(t.path.starts_with("/w/link/"));
  }
  EXPECT_TRUE(found);
}

// Empty r-------- directories that an earlier srt (which blocked missing paths with them) left.
TEST(MandatoryDenyTest, LeftoverPlaceholdersCountAsMissing) {
  FakeFsView fs({{"/w/.mcp.json", kPlaceholderDir},
                 {"/w/.claude", kPlaceholderDir},
                 {"/w/.git/hooks", kPlaceholderDir},
                 {"/w/sub/.vscode", kPlaceholderDir},  // left behind below the root
                 {"/w/.idea", kDir}});                 // a real directory
  auto ts = Discover(fs);
  EXPECT_THAT(Missing(ts), Contains("/w/.mcp.json"));
  EXPECT_THAT(Missing(ts), Contains("/w/.claude/commands"));
  EXPECT_THAT(Missing(ts), Contains("/w/.git/hooks"));
  EXPECT_THAT(Missing(ts), Contains("/w/sub/.vscode"));
  EXPECT_THAT(Existing(ts), Contains("/w/.idea"));
}

// Counts the calls that reach the file system beyond listing a directory.
class CountingFs final : public FsView {
 public:
  explicit CountingFs(const FsView& inner) : inner_(inner) {}
  FileType TypeOf(const std::string& p) const override {
    ++lookups;
    return inner_.TypeOf(p);
  }
  Result<std::string> ReadLink(const std::string& p) const override { return inner_.ReadLink(p); }
  Result<std::vector<DirEntry>> List(const std::string& dir) const override {
    return inner_.List(dir);
  }
  Result<FileId> IdOf(const std::string& p) const override { return inner_.IdOf(p); }
  Result<std::string> ReadSmallFile(const std::string& p, size_t n) const override {
    return inner_.ReadSmallFile(p, n);
  }
  bool IsPlaceholder(const std::string& p) const override {
    ++lookups;
    return inner_.IsPlaceholder(p);
  }
  mutable size_t lookups = 0;

 private:
  const FsView& inner_;
};

// The listing says which names exist: a name it does not show is not looked up again (the walk
// over a large tree was eleven failing lstat calls per directory). Only a directory bearing a
// protected name is asked whether it is a placeholder.
TEST(MandatoryDenyTest, NamesTheListingDoesNotShowAreNotLookedUp) {
  std::vector<std::pair<std::string, FakeNode>> entries;
  for (int i = 0; i < 50; ++i) entries.push_back({"/w/d" + std::to_string(i) + "/f.js", kFile});
  entries.push_back({"/w/d7/.vscode", kDir});
  FakeFsView inner(entries);
  CountingFs fs(inner);
  auto ts = Discover(fs, {.depth = 5});
  EXPECT_THAT(Existing(ts), Contains("/w/d7/.vscode"));
  EXPECT_EQ(fs.lookups, 1u);
}

TEST(MandatoryDenyTest, UnlistableDirectoriesAreProtectedWhole) {
  FakeFsView fs({{"/w/locked", kUnreadableDir}});
  auto ts = Discover(fs);
  EXPECT_THAT(Existing(ts), Contains("/w/locked"));
}

TEST(MandatoryDenyTest, LimitsAreErrorsNotPartialScans) {
  FakeFsView fs;
  for (int i = 0; i < 20; ++i) fs.Add("/w/d" + std::to_string(i), kDir);
  Result<std::vector<ProtectTarget>> r = DiscoverMandatoryDenies(fs, "/w", {.max_directories = 10});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(),
            "write root '/w' has more than 10 directories within mandatoryDenySearchDepth 3; lower "
            "mandatoryDenySearchDepth or allow a narrower directory");
  r = DiscoverMandatoryDenies(fs, "/w", {.max_entries = 5});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(),
            "write root '/w' has more than 5 entries within mandatoryDenySearchDepth 3; lower "
            "mandatoryDenySearchDepth or allow a narrower directory");
}

}  // namespace
}  // namespace srt::policy
