// SPDX-License-Identifier: Apache-2.0
// The write guard's rules (srt-cli/init/guard_rules.h), over a fake directory tree.
#include "guard_rules.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace srt::init::guard {
namespace {

// Entries by directory level: up = 0 is the directory of the change, 1 its parent, 2 above.
class FakeProbe final : public Probe {
 public:
  FakeProbe(std::set<std::string> here, std::set<std::string> parent = {},
            std::set<std::string> grandparent = {}, bool on_private = true)
      : levels_{std::move(here), std::move(parent), std::move(grandparent)},
        on_private_(on_private) {}
  bool Has(int up, const char* name) override {
    return up >= 0 && up < 3 && levels_[up].count(name) > 0;
  }
  bool OnPrivateFileSystem() override { return on_private_; }

 private:
  std::set<std::string> levels_[3];
  bool on_private_;
};

const std::set<std::string> kGitDir = {"HEAD", "objects", "refs", "config", "hooks", "index"};

class GuardRulesTest : public ::testing::Test {
 protected:
  GuardRulesTest() {
    config_.git_roots[config_.git_root_count++] = "/w";
    config_.git_roots[config_.git_root_count++] = "/workspace";
    config_.private_roots[config_.private_root_count++] = "/tmp/srt-1234";
    config_.blocked = blocked_;
    config_.blocked_count = 3;
    config_.mounted = mounted_;
    config_.mounted_count = 3;
  }
  Verdict J(Change c, Kind k, const char* dir, const char* name, FakeProbe probe = {{}}) {
    return Judge(config_, c, k, dir, name, probe);
  }
  const char* blocked_[3] = {"/w/.mcp.json", "/w/out/gen/x", "/w/.claude/commands"};
  const char* mounted_[3] = {"/w/.bashrc", "/w/srt.json", "/w/.vscode/settings.json"};
  Config config_;
};

TEST_F(GuardRulesTest, OrdinaryChangesPass) {
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/src", "main.c"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kWrite, Kind::kFile, "/w", "README"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kMoveIn, Kind::kDirectory, "/w", "build"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w", "."), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w", ".."), Verdict::kAllow);
}

TEST_F(GuardRulesTest, ProtectedPathsThatDoNotExistCannotBeMade) {
  for (Change c : {Change::kCreate, Change::kLinkIn, Change::kMoveIn, Change::kWrite}) {
    EXPECT_EQ(J(c, Kind::kFile, "/w", ".mcp.json"), Verdict::kProtectedPath);
  }
  // Its directories may be made empty; a symlink or a directory moved in with its contents
  // would stand for the protected path.
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/w", "out"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/w/out", "gen"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kSymlink, "/w", "out"), Verdict::kProtectedPath);
  EXPECT_EQ(J(Change::kMoveIn, Kind::kSymlink, "/w/out", "gen"), Verdict::kProtectedPath);
  EXPECT_EQ(J(Change::kMoveIn, Kind::kDirectory, "/w", "out"), Verdict::kProtectedPath);
  EXPECT_EQ(J(Change::kMoveIn, Kind::kFile, "/w", "out"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/w/out/gen", "x"), Verdict::kProtectedPath);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/w/.claude", "commands"),
            Verdict::kProtectedPath);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/w/.claude", "skills"), Verdict::kAllow);
  // Names are compared exactly, components whole.
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w", ".mcp.json2"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kSymlink, "/w", "ou"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/out/gen", "xy"), Verdict::kAllow);
}

// A protected path made by the host after start (a directory the command could write into).
TEST_F(GuardRulesTest, NothingBelowAMissingProtectedPathIsMadeOrWritten) {
  for (Change c :
       {Change::kCreate, Change::kLinkIn, Change::kMoveIn, Change::kWrite, Change::kExecutable}) {
    EXPECT_EQ(J(c, Kind::kFile, "/w/.claude/commands", "evil.md"), Verdict::kProtectedPath);
    EXPECT_EQ(J(c, Kind::kFile, "/w/.claude/commands/a/b", "c"), Verdict::kProtectedPath);
  }
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/.claude/commandsx", "evil.md"), Verdict::kAllow);
}

// A read-only mount covered them at start; the host's rename over the entry detaches it.
TEST_F(GuardRulesTest, ProtectedPathsThatExistedAreRefusedByRuleToo) {
  for (Change c : {Change::kCreate, Change::kLinkIn, Change::kMoveIn, Change::kWrite,
                   Change::kLinkSource, Change::kExecutable}) {
    EXPECT_EQ(J(c, Kind::kFile, "/w", ".bashrc"), Verdict::kReadOnly);
    EXPECT_EQ(J(c, Kind::kFile, "/w", "srt.json"), Verdict::kReadOnly);
    EXPECT_EQ(J(c, Kind::kFile, "/w/.vscode", "settings.json"), Verdict::kReadOnly);
  }
  // Nor is it renamed away (the host's file would leave its place); its neighbours may be, and
  // a .git or a hook is judged where it arrives, not where it leaves.
  EXPECT_EQ(J(Change::kMoveOut, Kind::kFile, "/w", ".bashrc"), Verdict::kReadOnly);
  EXPECT_EQ(J(Change::kMoveOut, Kind::kFile, "/w", "README"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kMoveOut, Kind::kDirectory, "/w", ".git"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kMoveOut, Kind::kFile, "/w/.git/hooks", "pre-commit", FakeProbe({}, kGitDir)),
            Verdict::kAllow);
  // A symlink or a tree moved in at an ancestor would stand for it; an empty directory cannot.
  EXPECT_EQ(J(Change::kCreate, Kind::kSymlink, "/w", ".vscode"), Verdict::kReadOnly);
  EXPECT_EQ(J(Change::kMoveIn, Kind::kDirectory, "/w", ".vscode"), Verdict::kReadOnly);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/w", ".vscode"), Verdict::kAllow);
  // Its neighbours are ordinary files.
  EXPECT_EQ(J(Change::kWrite, Kind::kFile, "/w", ".bashrc.swp"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/.vscode", "tasks.json"), Verdict::kAllow);
}

TEST_F(GuardRulesTest, NoDotGitAnywhereInAGuardRoot) {
  for (const char* name : {".git", ".GIT", ".Git"}) {
    for (Change c : {Change::kCreate, Change::kMoveIn, Change::kLinkIn, Change::kWrite,
                     Change::kLinkSource, Change::kExecutable}) {
      EXPECT_EQ(J(c, Kind::kDirectory, "/w/a/b/c/d/e/f", name), Verdict::kGitMetadata) << name;
    }
  }
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/w", ".git"), Verdict::kGitMetadata);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/workspace", ".git"), Verdict::kGitMetadata);
  // Not in a guard root, or in the private TMPDIR: clones there vanish with the sandbox.
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/tmp/srt-1234/clone", ".git"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/var/tmp", ".git"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/wx", ".git"), Verdict::kAllow);
  // Where the guard cannot tell, the name rules hold.
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "", ".git"), Verdict::kGitMetadata);
}

TEST_F(GuardRulesTest, NoDirectoryBecomesAGitDirectory) {
  // The last of HEAD, objects and refs (or HEAD and commondir) is refused, in any order.
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/b", "HEAD", FakeProbe({"objects", "refs"})),
            Verdict::kNewRepository);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/w/b", "refs", FakeProbe({"objects", "HEAD"})),
            Verdict::kNewRepository);
  EXPECT_EQ(J(Change::kMoveIn, Kind::kFile, "/w/b", "HEAD", FakeProbe({"objects", "refs"})),
            Verdict::kNewRepository);
  EXPECT_EQ(J(Change::kLinkIn, Kind::kFile, "/w/b", "HEAD", FakeProbe({"commondir"})),
            Verdict::kNewRepository);
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/b", "commondir", FakeProbe({"HEAD"})),
            Verdict::kNewRepository);
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/b", "head", FakeProbe({"objects", "refs"})),
            Verdict::kNewRepository);
  // Parts of one alone are fine (a project may have a directory named refs or objects).
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/w/b", "refs", FakeProbe({"objects"})),
            Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/b", "HEAD", FakeProbe({"refs"})), Verdict::kAllow);
  // An existing git directory's HEAD is rewritten through HEAD.lock and a rename: allowed.
  EXPECT_EQ(J(Change::kMoveIn, Kind::kFile, "/w/.git", "HEAD", FakeProbe(kGitDir)),
            Verdict::kAllow);
}

TEST_F(GuardRulesTest, TheEntriesThroughWhichGitReadsConfigurationOrRunsPrograms) {
  for (const char* name : {"config", "config.worktree", "commondir", "gitdir", "hooks", "remotes",
                           "branches", "rebase-merge", "rebase-apply", "CONFIG"}) {
    for (Change c :
         {Change::kCreate, Change::kMoveIn, Change::kLinkIn, Change::kWrite, Change::kLinkSource}) {
      EXPECT_EQ(J(c, Kind::kFile, "/w/a/b/c/d/e/.git", name, FakeProbe(kGitDir)),
                Verdict::kGitMetadata)
          << name;
    }
  }
  // Inside hooks/ (and the rebase todo directories) nothing changes; the samples neither.
  for (Change c : {Change::kCreate, Change::kMoveIn, Change::kWrite, Change::kExecutable,
                   Change::kLinkSource}) {
    EXPECT_EQ(J(c, Kind::kFile, "/w/.git/hooks", "pre-commit", FakeProbe({}, kGitDir)),
              Verdict::kGitMetadata);
    EXPECT_EQ(J(c, Kind::kFile, "/w/.git/rebase-merge", "git-rebase-todo", FakeProbe({}, kGitDir)),
              Verdict::kGitMetadata);
  }
  // A directory named hooks that is not a git directory's is an ordinary one.
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/src/hooks", "useThing.js", FakeProbe({}, {"src"})),
            Verdict::kAllow);
  EXPECT_EQ(J(Change::kExecutable, Kind::kFile, "/w/bin", "tool", FakeProbe({})), Verdict::kAllow);
  // objects/info/alternates: objects read from elsewhere.
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/.git/objects/info", "alternates",
              FakeProbe({}, {"pack"}, kGitDir)),
            Verdict::kGitMetadata);
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/.git/objects/info", "packs",
              FakeProbe({}, {"pack"}, kGitDir)),
            Verdict::kAllow);
  // Ordinary git work in a git directory.
  for (const char* name : {"index", "index.lock", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "packed-refs",
                           "COMMIT_EDITMSG", "config.lock", "logs"}) {
    EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/.git", name, FakeProbe(kGitDir)), Verdict::kAllow)
        << name;
  }
  // allowGitConfig: the config may change, the rest stays protected.
  config_.allow_git_config = true;
  EXPECT_EQ(J(Change::kWrite, Kind::kFile, "/w/.git", "config", FakeProbe(kGitDir)),
            Verdict::kAllow);
  EXPECT_EQ(J(Change::kMoveIn, Kind::kFile, "/w/.git", "config.worktree", FakeProbe(kGitDir)),
            Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/w/.git/hooks", "pre-push", FakeProbe({}, kGitDir)),
            Verdict::kGitMetadata);
}

TEST_F(GuardRulesTest, TheObjectStoresCannotBeSwapped) {
  FakeProbe repo(kGitDir);
  for (const char* name : {"objects", "refs", "OBJECTS"}) {
    EXPECT_EQ(J(Change::kMoveIn, Kind::kDirectory, "/w/.git", name, repo), Verdict::kGitMetadata)
        << name;
    EXPECT_EQ(J(Change::kMoveIn, Kind::kSymlink, "/w/.git", name, repo), Verdict::kGitMetadata);
    EXPECT_EQ(J(Change::kCreate, Kind::kSymlink, "/w/.git", name, repo), Verdict::kGitMetadata);
  }
  // objects/info arrives only empty (mkdir); moved in, it could bring alternates along.
  FakeProbe objects({"pack"}, kGitDir);
  EXPECT_EQ(J(Change::kMoveIn, Kind::kDirectory, "/w/.git/objects", "info", objects),
            Verdict::kGitMetadata);
  EXPECT_EQ(J(Change::kCreate, Kind::kSymlink, "/w/.git/objects", "info", objects),
            Verdict::kGitMetadata);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/w/.git/objects", "info", objects),
            Verdict::kAllow);
  // What git itself does there: packs, commit graphs, loose objects moved into place.
  FakeProbe info({"packs"}, {"pack", "info"}, kGitDir);
  EXPECT_EQ(J(Change::kMoveIn, Kind::kFile, "/w/.git/objects/info", "commit-graph", info),
            Verdict::kAllow);
  EXPECT_EQ(J(Change::kMoveIn, Kind::kFile, "/w/.git/objects/ab", "cdef", FakeProbe({}, {"info"})),
            Verdict::kAllow);
  // Outside a git directory, a directory named objects is nothing special.
  EXPECT_EQ(J(Change::kMoveIn, Kind::kDirectory, "/w/src", "objects"), Verdict::kAllow);
}

// A probe that cannot look (a directory the command made unreadable) answers "there": the
// rules refuse rather than allow.
TEST_F(GuardRulesTest, AProbeThatCannotSeeMakesTheRulesRefuse) {
  class Blind final : public Probe {
   public:
    bool Has(int, const char*) override { return true; }
    bool OnPrivateFileSystem() override { return false; }
  } blind;
  EXPECT_EQ(Judge(config_, Change::kCreate, Kind::kFile, "/w/a/.git/hooks", "pre-commit", blind),
            Verdict::kGitMetadata);
  EXPECT_EQ(Judge(config_, Change::kCreate, Kind::kFile, "/w/a", "config", blind),
            Verdict::kGitMetadata);
  EXPECT_EQ(Judge(config_, Change::kCreate, Kind::kFile, "/w/a", "commondir", blind),
            Verdict::kGitMetadata);
}

TEST_F(GuardRulesTest, GitRulesHoldOnlyInGuardRoots) {
  EXPECT_EQ(J(Change::kWrite, Kind::kFile, "/tmp/srt-1234/r/.git", "config", FakeProbe(kGitDir)),
            Verdict::kAllow);
  EXPECT_EQ(J(Change::kWrite, Kind::kFile, "/home/u/r/.git", "config", FakeProbe(kGitDir)),
            Verdict::kAllow);
  // The root itself as a guard root.
  config_.git_roots[0] = "/";
  config_.git_root_count = 1;
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/", ".git"), Verdict::kGitMetadata);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/anything", ".git"), Verdict::kGitMetadata);
}

// Found by a hostile review: the host can remove or rename the directory the private tmpfs is
// mounted on (a tmp cleaner, `rm -rf /tmp/srt-*`) while the sandbox runs, and the TMPDIR's name
// then leads to the host's disk; a working directory below that directory is on the host's disk
// from the start. A private root exempts only what is on the private tmpfs.
TEST_F(GuardRulesTest, APrivateRootExemptsOnlyThePrivateFileSystem) {
  config_.git_roots[0] = "/";
  config_.git_root_count = 1;
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/tmp/srt-1234/r", ".git"), Verdict::kAllow);
  EXPECT_EQ(J(Change::kCreate, Kind::kDirectory, "/tmp/srt-1234/r", ".git",
              FakeProbe({}, {}, {}, /*on_private=*/false)),
            Verdict::kGitMetadata);
  EXPECT_EQ(J(Change::kCreate, Kind::kFile, "/tmp/srt-1234/r/.git", "config",
              FakeProbe(kGitDir, {}, {}, /*on_private=*/false)),
            Verdict::kGitMetadata);
}

}  // namespace
}  // namespace srt::init::guard
