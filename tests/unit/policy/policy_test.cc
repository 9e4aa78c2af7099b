// SPDX-License-Identifier: Apache-2.0
// Settings -> Policy resolution over a FakeFsView.
#include "policy/policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "base/path.h"
#include "fake_fs_view.h"

namespace srt::policy {

void PrintTo(const MountRule& m, std::ostream* os) { *os << ToString(m); }

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

MountRule M(std::string path, View view, std::string reason) {
  return MountRule{std::move(path), view, std::move(reason)};
}

// A small host: home /home/u, project /w (a git repo), the usual /tmp and /etc/ssh/ssh_config.d.
FakeFsView Host() {
  return FakeFsView({{"/tmp", kDir},
                     {"/etc/ssh/ssh_config.d", kDir},
                     {"/home/u/.ssh/id_ed25519", kFile},
                     {"/home/u/.config/git/config", kFile},
                     {"/home/u/.aws/credentials", kFile},
                     {"/w/src/main.c", kFile},
                     {"/w/.git/hooks", kDir},
                     {"/w/.git/config", kFile},
                     {"/w/.env", kFile},
                     {"/w/src/.env", kFile}});
}

Settings WithFs(FilesystemSettings fs) {
  Settings s;
  s.filesystem = std::move(fs);
  return s;
}

std::vector<PathEntry> Paths(std::initializer_list<const char*> ps) {
  std::vector<PathEntry> out;
  for (const char* p : ps) out.push_back(PathEntry{p, false});
  return out;
}

Policy Resolve(const Settings& s, const FsView& fs, Environment env = {"/home/u", "/w"}) {
  Result<Policy> p = ResolvePolicy(s, env, fs);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message());
  return p ? *p : Policy{};
}

std::string ErrorOf(const Settings& s, const FsView& fs, Environment env = {"/home/u", "/w"}) {
  Result<Policy> p = ResolvePolicy(s, env, fs);
  EXPECT_FALSE(p.has_value());
  return p ? "" : p.error().message();
}

// Index of the mount at `path`, or -1.
int IndexOf(const Policy& p, const std::string& path) {
  for (size_t i = 0; i < p.mounts.size(); ++i) {
    if (p.mounts[i].path == path) return static_cast<int>(i);
  }
  return -1;
}

const MountRule* Find(const Policy& p, const std::string& path) {
  int i = IndexOf(p, path);
  return i < 0 ? nullptr : &p.mounts[static_cast<size_t>(i)];
}

std::vector<std::string> ProtectedPaths(const Policy& p, ProtectKind kind) {
  std::vector<std::string> out;
  for (const Protection& x : p.protections) {
    if (x.kind == kind) out.push_back(x.path);
  }
  return out;
}

TEST(PolicyTest, DefaultsHideSshConfigAndWriteNothing) {
  FakeFsView fs = Host();
  Policy p = Resolve(Settings{}, fs);
  EXPECT_THAT(p.mounts, ElementsAre(M("/etc/ssh/ssh_config.d", View::kHiddenDir,
                                      "ssh_config.d (owned by nobody inside the sandbox)")));
  EXPECT_TRUE(p.write_roots.empty());
  EXPECT_TRUE(p.protections.empty());
  EXPECT_EQ(p.tmpdir_parent, "/tmp");
  EXPECT_EQ(p.cwd, "/w");
}

TEST(PolicyTest, DenyReadHidesDirectoriesAndFilesAndIgnoresMissingOnes) {
  FakeFsView fs = Host();
  Policy p = Resolve(WithFs({.deny_read = Paths({"~/.ssh", "~/.aws/credentials", "~/nope"})}), fs);
  EXPECT_THAT(p.mounts, ElementsAre(M("/etc/ssh/ssh_config.d", View::kHiddenDir,
                                      "ssh_config.d (owned by nobody inside the sandbox)"),
                                    M("/home/u/.ssh", View::kHiddenDir, "denyRead '~/.ssh'"),
                                    M("/home/u/.aws/credentials", View::kHiddenFile,
                                      "denyRead '~/.aws/credentials'")));
  EXPECT_THAT(p.notes, testing::Contains(
                           "denyRead '~/nope': '/home/u/nope' does not exist, nothing to hide"));
}

TEST(PolicyTest, AllowReadReopensInsideADeniedDirectoryAndDeeperDeniesStillWin) {
  FakeFsView fs = Host();
  fs.Add("/home/u/.config/git/credentials", kFile);
  Policy p = Resolve(WithFs({.deny_read = Paths({"~", "~/.config/git/credentials"}),
                             .allow_read = Paths({"~/.config/git"})}),
                     fs);
  ASSERT_EQ(p.mounts.size(), 4u);
  EXPECT_EQ(*Find(p, "/home/u"), M("/home/u", View::kHiddenDir, "denyRead '~'"));
  EXPECT_EQ(*Find(p, "/home/u/.config/git"),
            M("/home/u/.config/git", View::kHostReadOnly, "allowRead '~/.config/git'"));
  EXPECT_EQ(*Find(p, "/home/u/.config/git/credentials"),
            M("/home/u/.config/git/credentials", View::kHiddenFile,
              "denyRead '~/.config/git/credentials'"));
  // Shallow first: each rule is mounted on top of the one it refines.
  EXPECT_LT(IndexOf(p, "/home/u"), IndexOf(p, "/home/u/.config/git"));
  EXPECT_LT(IndexOf(p, "/home/u/.config/git"), IndexOf(p, "/home/u/.config/git/credentials"));
}

TEST(PolicyTest, AllowReadOfTheSamePathAsADenyWins) {
  FakeFsView fs = Host();
  Policy p = Resolve(WithFs({.deny_read = Paths({"~/.ssh"}), .allow_read = Paths({"~/.ssh"})}), fs);
  EXPECT_EQ(p.mounts.size(), 1u);  // nothing to do: the re-open cancels the deny
}

TEST(PolicyTest, CredentialFileDeniesFollowSymlinksAndNoAllowReadLiftsThem) {
  FakeFsView fs({{"/home/u/.aws/credentials", kFile},
                 {"/home/u/link", Symlink(".aws/credentials")},
                 {"/home/u/.netrc", kFile},
                 {"/home/u/.config", kDir}});
  Settings s =
      WithFs({.allow_read = Paths({"~/.aws/credentials", "~"}), .allow_write = Paths({"~"})});
  s.credentials.files = {{{"~/link", false}, CredentialMode::kDeny, {}},
                         {{"~/.netrc", false}, CredentialMode::kMask, {}}};
  Policy p = Resolve(s, fs);
  const MountRule* m = Find(p, "/home/u/.aws/credentials");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->view, View::kHiddenFile);
  ASSERT_EQ(p.masked_files.size(), 1u);
  EXPECT_EQ(p.masked_files[0], (MaskedFile{"/home/u/.netrc", 1}));
  // A mask names one regular file.
  s.credentials.files = {{{"~/.config", false}, CredentialMode::kMask, {}}};
  EXPECT_THAT(ErrorOf(s, fs),
              HasSubstr("is not a regular file; mode \"mask\" applies to a single file"));
}

TEST(PolicyTest, WriteRootInsideADeniedDirectoryIsRestoredWritable) {
  FakeFsView fs = Host();
  fs.Add("/home/u/proj", kDir);
  Policy p = Resolve(WithFs({.deny_read = Paths({"~"}), .allow_write = Paths({"~/proj"})}), fs);
  EXPECT_EQ(*Find(p, "/home/u"), M("/home/u", View::kHiddenDir, "denyRead '~'"));
  EXPECT_EQ(*Find(p, "/home/u/proj"),
            M("/home/u/proj", View::kHostWritable, "allowWrite '/home/u/proj'"));
  EXPECT_LT(IndexOf(p, "/home/u"), IndexOf(p, "/home/u/proj"));
  EXPECT_EQ(p.write_roots, std::vector<std::string>{"/home/u/proj"});
}

TEST(PolicyTest, DenyReadInsideAWriteRootHidesAndReopenedPathsKeepTheirWriteAccess) {
  FakeFsView fs = Host();
  fs.Add("/w/secrets/public/key.pub", kFile);
  Policy p = Resolve(WithFs({.deny_read = Paths({"./secrets"}),
                             .allow_read = Paths({"./secrets/public"}),
                             .allow_write = Paths({"."})}),
                     fs);
  EXPECT_THAT(p.mounts, ElementsAre(M("/w", View::kHostWritable, "allowWrite '/w'"),
                                    M("/w/secrets", View::kHiddenDir, "denyRead './secrets'"),
                                    M("/etc/ssh/ssh_config.d", View::kHiddenDir,
                                      "ssh_config.d (owned by nobody inside the sandbox)"),
                                    M("/w/secrets/public", View::kHostWritable,
                                      "allowRead './secrets/public'")));
}

TEST(PolicyTest, DenyWriteAtOrAboveAWriteRootKeepsItReadOnly) {
  FakeFsView fs = Host();
  Policy p = Resolve(WithFs({.allow_write = Paths({"/w/src"}), .deny_write = Paths({"/w"})}), fs);
  EXPECT_TRUE(p.write_roots.empty());
  EXPECT_THAT(p.notes, testing::Contains("allowWrite '/w/src': '/w/src' stays read-only because "
                                         "of denyWrite '/w'"));
}

TEST(PolicyTest, MissingWriteRootsAndManagedTreesAreSkippedWithANote) {
  FakeFsView fs = Host();
  fs.Add("/dev/shm", kDir);
  Policy p = Resolve(WithFs({.allow_write = Paths({"./build", "/dev/shm"})}), fs);
  EXPECT_TRUE(p.write_roots.empty());
  EXPECT_THAT(p.notes, testing::Contains("allowWrite './build': '/w/build' does not exist, so "
                                         "nothing is made writable"));
  EXPECT_THAT(p.notes, testing::Contains("allowWrite '/dev/shm': '/dev/shm' is under /dev or "
                                         "/proc, which srt builds itself"));
}

TEST(PolicyTest, MandatoryDeniesUnderTheWriteRoot) {
  FakeFsView fs = Host();
  Policy p = Resolve(WithFs({.allow_write = Paths({"."})}), fs);
  EXPECT_THAT(ProtectedPaths(p, ProtectKind::kPin), ElementsAre("/w/.git"));
  EXPECT_THAT(ProtectedPaths(p, ProtectKind::kProtect),
              ElementsAre("/w/.bash_profile", "/w/.bashrc", "/w/.gitconfig", "/w/.gitmodules",
                          "/w/.idea", "/w/.mcp.json", "/w/.profile", "/w/.ripgreprc", "/w/.vscode",
                          "/w/.zprofile", "/w/.zshrc", "/w/.claude/agents", "/w/.claude/commands",
                          "/w/.git/config", "/w/.git/hooks"));
  for (const Protection& x : p.protections) {
    if (x.kind == ProtectKind::kProtect) {
      EXPECT_EQ(x.exists, x.path.starts_with("/w/.git/")) << x.path;
    }
  }
}

// `**` denies and the mandatory-deny walk of a write root cover the same directories: one
// walk serves them all, each directory listed once (before, once per pattern and once more for
// the mandatory denies), with the same result as separate walks.
TEST(PolicyTest, GlobDeniesAndTheMandatoryWalkListEachDirectoryOnce) {
  FakeFsView fs = Host();
  fs.Add("/w/src/deep/.env.local", kFile);
  Settings s = WithFs(
      {.deny_read = Paths({"**/.env", "**/.env.local", "**/*.pem"}), .allow_write = Paths({"."})});
  s.mandatory_deny_search_depth = 5;
  Policy p = Resolve(s, fs);
  std::map<std::string, int> lists;
  for (const std::string& d : fs.ListCalls()) ++lists[d];
  for (const auto& [dir, n] : lists) EXPECT_EQ(n, 1) << dir << " listed " << n << " times";
  EXPECT_EQ(lists.count("/w/src/deep"), 1u);
  std::vector<std::string> hidden;
  for (const MountRule& m : p.mounts) {
    if (m.view == View::kHiddenFile) hidden.push_back(m.path);
  }
  EXPECT_THAT(hidden, testing::IsSupersetOf({"/w/.env", "/w/src/.env", "/w/src/deep/.env.local"}));
}

TEST(PolicyTest, AllowGitConfigLeavesTheConfigWritable) {
  FakeFsView fs = Host();
  Policy p = Resolve(WithFs({.allow_write = Paths({"."}), .allow_git_config = true}), fs);
  EXPECT_THAT(ProtectedPaths(p, ProtectKind::kProtect),
              testing::Not(testing::Contains("/w/.git/config")));
  EXPECT_THAT(ProtectedPaths(p, ProtectKind::kProtect), testing::Contains("/w/.git/hooks"));
}

TEST(PolicyTest, ASymlinkedDotfileIsProtectedAndSoIsItsTargetInsideAWriteRoot) {
  FakeFsView fs = Host();
  fs.Add("/home/u/dotfiles/bashrc", kFile);
  fs.Add("/home/u/.bashrc", Symlink("dotfiles/bashrc"));
  Policy p = Resolve(WithFs({.allow_write = Paths({"~"})}), fs);
  auto protects = ProtectedPaths(p, ProtectKind::kProtect);
  EXPECT_THAT(protects, testing::Contains("/home/u/.bashrc"));
  EXPECT_THAT(protects, testing::Contains("/home/u/dotfiles/bashrc"));
  EXPECT_THAT(ProtectedPaths(p, ProtectKind::kPin), testing::Contains("/home/u/dotfiles"));
}

// A missing denied path itself goes to the write guard (which also refuses a symlink or a
// moved-in directory at one of its ancestors): the directories on its way may still be made.
TEST(PolicyTest, UserDenyWriteProtectsExistingPathsAndBlocksTheMissingOnes) {
  FakeFsView fs = Host();
  Policy p = Resolve(WithFs({.allow_write = Paths({"."}),
                             .deny_write = Paths({"src/main.c", "out/gen/x", "/etc/passwd"})}),
                     fs);
  auto protects = ProtectedPaths(p, ProtectKind::kProtect);
  EXPECT_THAT(protects, testing::Contains("/w/src/main.c"));
  EXPECT_THAT(protects, testing::Contains("/w/out/gen/x"));
  EXPECT_THAT(protects, testing::Not(testing::Contains("/w/out")));
  EXPECT_THAT(ProtectedPaths(p, ProtectKind::kPin), testing::Contains("/w/src"));
  EXPECT_THAT(p.notes, testing::Contains("denyWrite '/etc/passwd': '/etc/passwd' is outside every "
                                         "write root, already read-only"));
}

TEST(PolicyTest, DenyReadInsideAWriteRootIsPinnedAndAMissingOneIsBlocked) {
  FakeFsView fs = Host();
  fs.Add("/w/app/config/.env", kFile);
  Policy p = Resolve(WithFs({.deny_read = Paths({"app/config/.env", "keys/prod.pem", "~/.aws"}),
                             .allow_write = Paths({"."})}),
                     fs);
  auto pins = ProtectedPaths(p, ProtectKind::kPin);
  EXPECT_THAT(pins, testing::Contains("/w/app"));
  EXPECT_THAT(pins, testing::Contains("/w/app/config"));
  auto protects = ProtectedPaths(p, ProtectKind::kProtect);
  EXPECT_THAT(protects, testing::Contains("/w/keys/prod.pem"));
  EXPECT_THAT(protects, testing::Not(testing::Contains("/w/app/config/.env")));  // hidden
  EXPECT_THAT(protects, testing::Not(testing::Contains("/home/u/.aws")));        // no write root
}

TEST(PolicyTest, SymlinksOnTheWayToADenyEntryInsideAWriteRootAreProtected) {
  FakeFsView fs = Host();
  fs.Add("/w/vault/token", kFile);
  fs.Add("/w/secrets", Symlink("vault"));
  fs.Add("/w/real/settings.toml", kFile);
  fs.Add("/w/settings.toml", Symlink("real/settings.toml"));
  Policy p = Resolve(WithFs({.deny_read = Paths({"secrets/token"}),
                             .allow_write = Paths({"."}),
                             .deny_write = Paths({"settings.toml"})}),
                     fs);
  auto protects = ProtectedPaths(p, ProtectKind::kProtect);
  EXPECT_THAT(protects, testing::Contains("/w/secrets"));
  EXPECT_THAT(protects, testing::Contains("/w/settings.toml"));
  EXPECT_THAT(protects, testing::Contains("/w/real/settings.toml"));
  EXPECT_THAT(ProtectedPaths(p, ProtectKind::kPin), testing::Contains("/w/vault"));
}

TEST(PolicyTest, ProtectionsBelowAnotherProtectionAreDropped) {
  FakeFsView fs = Host();
  fs.Add("/w/.vscode/settings.json", kFile);
  Policy p = Resolve(
      WithFs({.allow_write = Paths({"."}), .deny_write = Paths({".vscode/settings.json"})}), fs);
  auto protects = ProtectedPaths(p, ProtectKind::kProtect);
  EXPECT_THAT(protects, testing::Contains("/w/.vscode"));
  EXPECT_THAT(protects, testing::Not(testing::Contains("/w/.vscode/settings.json")));
}

// An earlier sandbox with a wider policy may have planted the symlink: an allowWrite or
// allowRead entry that resolves outside its own tree is never followed (as upstream), and the
// warning says what to name instead.
TEST(PolicyTest, AllowEntriesResolvingOutsideTheirOwnTreeAreSkippedWithAWarning) {
  FakeFsView fs = Host();
  fs.Add("/w/a/b", Symlink("/home/u/.ssh"));
  fs.Add("/home/u/notes", Symlink("/w/src"));
  fs.Add("/w/build/out", kDir);
  fs.Add("/w/b", Symlink("build"));
  Policy p = Resolve(WithFs({.deny_read = Paths({"~"}),
                             .allow_read = Paths({"~/notes"}),
                             .allow_write = Paths({"./a/b", "./b/out"})}),
                     fs);
  EXPECT_TRUE(p.write_roots.empty()) << p.write_roots.front();
  EXPECT_THAT(p.warnings,
              ElementsAre("allowWrite './a/b': '/w/a/b' resolves through a symlink to "
                          "'/home/u/.ssh', outside its own tree: skipped; name '/home/u/.ssh' "
                          "itself if that is what it should grant",
                          "allowWrite './b/out': '/w/b/out' resolves through a symlink to "
                          "'/w/build/out', outside its own tree: skipped; name '/w/build/out' "
                          "itself if that is what it should grant",
                          "allowRead '~/notes': '/home/u/notes' resolves through a symlink to "
                          "'/w/src', outside its own tree: skipped; name '/w/src' itself if that "
                          "is what it should grant"));
  EXPECT_EQ(Find(p, "/w/src"), nullptr);
  // A deny entry is always followed: it only ever takes access away.
  Policy d = Resolve(WithFs({.deny_read = Paths({"~/notes"})}), fs);
  EXPECT_THAT(d.mounts, testing::Contains(M("/w/src", View::kHiddenDir, "denyRead '~/notes'")));
}

TEST(PolicyTest, AHiddenWorkingDirectoryIsAnErrorUnlessItIsTheHiddenDirectoryItself) {
  FakeFsView fs = Host();
  EXPECT_EQ(ErrorOf(WithFs({.deny_read = Paths({"/"})}), fs, {"/home/u", "/w/src"}),
            "the working directory '/w/src' is hidden by denyRead '/'; allowRead or allowWrite "
            "it, or run srt from another directory");
  Policy p = Resolve(WithFs({.deny_read = Paths({"/w"})}), fs, {"/home/u", "/w"});
  EXPECT_THAT(p.mounts, testing::Contains(M("/w", View::kHiddenDir, "denyRead '/w'")));
}

// Hostile review 2, finding 7: a file denied or masked through symlinks keeps its name, for
// srt-agent to follow again when the host points a link elsewhere; denyWrite, and names without
// a symlink, need none.
TEST(PolicyTest, FilesDeniedOrMaskedThroughSymlinksKeepTheirNames) {
  FakeFsView fs = Host();
  fs.Add("/w/vault/token", kFile);
  fs.Add("/w/secrets", Symlink("vault"));
  fs.Add("/w/real/settings.toml", kFile);
  fs.Add("/w/settings.toml", Symlink("real/settings.toml"));
  fs.Add("/w/sa/..v1/netrc", kFile);
  fs.Add("/w/sa/..data", Symlink("..v1"));
  fs.Add("/w/sa/netrc", Symlink("..data/netrc"));
  fs.Add("/w/plain", kFile);
  Settings s = WithFs({.deny_read = Paths({"secrets/token", "plain"}),
                       .allow_write = Paths({"."}),
                       .deny_write = Paths({"settings.toml"})});
  s.credentials.files = {{{"/w/sa/netrc", false}, CredentialMode::kMask, {}}};
  Policy p = Resolve(s, fs);
  EXPECT_EQ(p.symlinked_files, (std::vector<SymlinkedFile>{{"/w/vault/token", "/w/secrets/token"},
                                                           {"/w/sa/..v1/netrc", "/w/sa/netrc"}}));
}

TEST(PolicyTest, DenyReadOfTheRootHidesEachTopLevelEntryButDevAndProc) {
  FakeFsView fs = Host();
  fs.Add("/usr/bin/sh", kFile);
  fs.Add("/dev/null", kSpecial);
  fs.Add("/proc/1", kDir);
  Policy p = Resolve(
      WithFs(
          {.deny_read = Paths({"/"}), .allow_read = Paths({"/usr"}), .allow_write = Paths({"."})}),
      fs);
  for (const char* hidden : {"/etc", "/home", "/tmp"}) {
    EXPECT_THAT(p.mounts, testing::Contains(M(hidden, View::kHiddenDir, "denyRead '/'"))) << hidden;
  }
  EXPECT_THAT(p.mounts, testing::Contains(M("/w", View::kHostWritable, "allowWrite '/w'")));
  for (const MountRule& m : p.mounts) {
    EXPECT_NE(m.path, "/dev");
    EXPECT_NE(m.path, "/proc");
    EXPECT_NE(m.path, "/usr");  // denied, then re-opened read-only: nothing to mount
  }
}

// A merged-/usr host: /bin, /lib, /lib64 and /sbin are symlinks into /usr. A symlink is not a
// secret (it shows only its target's name) and bwrap cannot bind /dev/null over one: it stays,
// and reads through it get what the target's own rule says.
TEST(PolicyTest, DenyReadOfTheRootKeepsTheTopLevelSymlinks) {
  FakeFsView fs = Host();
  fs.Add("/usr/bin/sh", kFile);
  fs.Add("/usr/lib/x86_64-linux-gnu/libc.so.6", kFile);
  fs.Add("/bin", Symlink("usr/bin"));
  fs.Add("/lib", Symlink("usr/lib"));
  fs.Add("/lib64", Symlink("usr/lib64"));
  fs.Add("/opt/tool", kFile);
  Policy p = Resolve(
      WithFs(
          {.deny_read = Paths({"/"}), .allow_read = Paths({"/usr"}), .allow_write = Paths({"."})}),
      fs);
  for (const char* link : {"/bin", "/lib", "/lib64"}) {
    EXPECT_EQ(Find(p, link), nullptr) << link << " is mounted over: " << ToString(*Find(p, link));
  }
  EXPECT_THAT(p.mounts, testing::Contains(M("/opt", View::kHiddenDir, "denyRead '/'")));
}

// Inside a hidden directory the sandbox sees the host's symlinks (not what they point at), and
// so in the directories bwrap makes inside one on the way to a re-opened path.
TEST(PolicyTest, SymlinksInAHiddenDirectoryAndOnTheWayToARereadPathStay) {
  FakeFsView fs = Host();
  fs.Add("/usr/share/zoneinfo/UTC", kFile);
  fs.Add("/etc/localtime", Symlink("/usr/share/zoneinfo/UTC"));
  fs.Add("/etc/os-release", Symlink("../usr/lib/os-release"));
  fs.Add("/etc/shadow", kFile);
  fs.Add("/etc/ssl/certs/ca.pem", kFile);
  fs.Add("/etc/ssl/cert.pem", Symlink("certs/ca.pem"));
  fs.Add("/etc/ssl/private/key.pem", kFile);
  Policy p =
      Resolve(WithFs({.deny_read = Paths({"/etc"}), .allow_read = Paths({"/etc/ssl/certs"})}), fs);
  const int etc = IndexOf(p, "/etc");
  ASSERT_GE(etc, 0);
  EXPECT_EQ(p.mounts[static_cast<size_t>(etc)].view, View::kHiddenDir);
  const MountRule* localtime = Find(p, "/etc/localtime");
  ASSERT_NE(localtime, nullptr);
  EXPECT_EQ(localtime->view, View::kSymlink);
  EXPECT_EQ(localtime->source, "/usr/share/zoneinfo/UTC");
  EXPECT_GT(IndexOf(p, "/etc/localtime"), etc);
  ASSERT_NE(Find(p, "/etc/os-release"), nullptr);
  EXPECT_EQ(Find(p, "/etc/os-release")->source, "../usr/lib/os-release");
  // /etc/ssl is made by bwrap for /etc/ssl/certs: its link is back, its private key is not.
  ASSERT_NE(Find(p, "/etc/ssl/cert.pem"), nullptr);
  EXPECT_EQ(Find(p, "/etc/ssl/cert.pem")->view, View::kSymlink);
  EXPECT_EQ(Find(p, "/etc/ssl/private"), nullptr);
  EXPECT_EQ(Find(p, "/etc/shadow"), nullptr);
}

TEST(PolicyTest, HostTmpIsReadOnlyLikeTheRestAndWriteRootsBelowItAreWritable) {
  FakeFsView fs = Host();
  fs.Add("/tmp/build", kDir);
  fs.Add("/tmp/job", kDir);
  Policy p = Resolve(WithFs({.allow_write = Paths({"/tmp/build"})}), fs, {"/home/u", "/tmp/job"});
  EXPECT_THAT(p.mounts,
              testing::Contains(M("/tmp/build", View::kHostWritable, "allowWrite '/tmp/build'")));
  EXPECT_EQ(Find(p, "/tmp"), nullptr);
  EXPECT_EQ(p.cwd, "/tmp/job");
  EXPECT_EQ(p.tmpdir_parent, "/tmp");
}

TEST(PolicyTest, AHiddenTmpIsThePrivateTmpAndNoTmpdirIsMade) {
  // srt-poller's sessions hide the host's /tmp: the sandbox's /tmp is then an empty tmpfs of
  // its own, and a TMPDIR below the host's /tmp could not exist inside it.
  FakeFsView fs = Host();
  fs.Add("/tmp/other-users-file", kDir);
  Policy p = Resolve(WithFs({.deny_read = Paths({"/tmp"})}), fs);
  EXPECT_THAT(p.mounts, testing::Contains(M("/tmp", View::kHiddenDir, "denyRead '/tmp'")));
  EXPECT_EQ(p.tmpdir_parent, "");
}

TEST(PolicyTest, GlobsAreExpandedAtResolution) {
  FakeFsView fs = Host();
  Policy p = Resolve(WithFs({.deny_read = Paths({"**/.env", "~/.aws/**"})}), fs);
  EXPECT_THAT(p.mounts, testing::Contains(M("/w/.env", View::kHiddenFile, "denyRead '**/.env'")));
  EXPECT_THAT(p.mounts,
              testing::Contains(M("/w/src/.env", View::kHiddenFile, "denyRead '**/.env'")));
  EXPECT_THAT(p.mounts,
              testing::Contains(M("/home/u/.aws", View::kHiddenDir, "denyRead '~/.aws/**'")));
}

TEST(PolicyTest, BadGlobsAreErrorsNamingTheEntry) {
  FakeFsView fs = Host();
  EXPECT_THAT(ErrorOf(WithFs({.deny_read = Paths({"~/{a,b}"})}), fs),
              HasSubstr("denyRead '~/{a,b}': "));
  EXPECT_EQ(ErrorOf(WithFs({.deny_read = Paths({"../*/x"})}), fs),
            "'../*/x': '..' is not supported in a glob pattern");
}

TEST(PolicyTest, LiteralEntriesAreNotGlobs) {
  FakeFsView fs = Host();
  fs.Add("/w/[weird]", kDir);
  Policy p = Resolve(WithFs({.deny_read = {PathEntry{"/w/[weird]", true}}}), fs);
  EXPECT_THAT(p.mounts,
              testing::Contains(M("/w/[weird]", View::kHiddenDir, "denyRead '/w/[weird]'")));
}

TEST(PolicyTest, SymlinkedDenyReadIsAppliedAtTheRealLocation) {
  FakeFsView fs = Host();
  fs.Add("/data/secrets", kDir);
  fs.Add("/home/u/secrets", Symlink("/data/secrets"));
  Policy p = Resolve(WithFs({.deny_read = Paths({"~/secrets"})}), fs);
  EXPECT_THAT(p.mounts,
              testing::Contains(M("/data/secrets", View::kHiddenDir, "denyRead '~/secrets'")));
}

TEST(PolicyTest, FilesystemDisabled) {
  FakeFsView fs = Host();
  Policy p = Resolve(WithFs({.deny_read = Paths({"~/.ssh"}), .disabled = true}), fs);
  EXPECT_TRUE(p.filesystem_disabled);
  EXPECT_TRUE(p.mounts.empty());
  EXPECT_TRUE(p.protections.empty());
  EXPECT_EQ(p.tmpdir_parent, "");
}

TEST(PolicyTest, CarriesTheOtherSwitches) {
  FakeFsView fs = Host();
  Settings s;
  s.enable_weaker_nested_sandbox = true;
  s.allow_nested_user_namespaces = true;
  s.network.allow_all_unix_sockets = true;
  s.network.allowed_domains = {"example.com"};
  Policy p = Resolve(s, fs);
  EXPECT_TRUE(p.weaker_nested_sandbox);
  EXPECT_TRUE(p.allow_nested_user_namespaces);
  EXPECT_TRUE(p.allow_all_unix_sockets);
  ASSERT_EQ(p.network.allowed.size(), 1u);
  EXPECT_EQ(p.network.allowed[0].entry, "example.com");
}

// --- Binds (Environment::binds) --------------------------------------------------------------

Environment WithBinds(std::vector<BindRequest> binds) {
  Environment env{"/home/u", "/w", {}};
  env.binds = std::move(binds);
  return env;
}

FakeFsView BindHost() {
  return FakeFsView({{"/tmp", kDir},
                     {"/srv/s1/.git/hooks", kDir},
                     {"/srv/s1/.git/config", kFile},
                     {"/srv/s1/src/main.c", kFile},
                     {"/srv/file.txt", kFile},
                     {"/srv/link", Symlink("s1")},
                     {"/w/src", kDir},
                     {"/etc/hosts", kFile}});
}

TEST(PolicyBindTest, InvalidBindsAreRefusedNamingTheValue) {
  Settings s;
  FakeFsView fs = BindHost();
  auto error = [&](std::vector<BindRequest> b) { return ErrorOf(s, fs, WithBinds(std::move(b))); };
  EXPECT_EQ(error({{"/srv/s1", "workspace", true}}),
            "bind '/srv/s1' -> 'workspace': the target 'workspace' is not an absolute path");
  EXPECT_EQ(error({{"/srv/s1", "/workspace/../x", true}}),
            "bind '/srv/s1' -> '/workspace/../x': the target '/workspace/../x' is not normalised "
            "(write '/x')");
  EXPECT_EQ(error({{"/srv/s1", "/", true}}),
            "bind '/srv/s1' -> '/': the target cannot be the sandbox's root '/'");
  EXPECT_EQ(error({{"/srv/s1", "/proc/x", true}}),
            "bind '/srv/s1' -> '/proc/x': the target '/proc/x' is under /proc, which the sandbox "
            "gets from the kernel");
  EXPECT_THAT(error({{"/srv/s1", "/sys", true}}), HasSubstr("is under /sys"));
  EXPECT_EQ(error({{"/srv/s1", "/a", true}, {"/srv/file.txt", "/a", false}}),
            "bind '/srv/file.txt' -> '/a': the target '/a' is already the target of bind "
            "'/srv/s1' -> '/a'");
  EXPECT_EQ(error({{"/srv/nope", "/a", true}}),
            "bind '/srv/nope' -> '/a': the source '/srv/nope' does not exist");
  EXPECT_EQ(error({{"/srv/file.txt", "/etc", false}}),
            "bind '/srv/file.txt' -> '/etc': the source is a file but the target '/etc' exists on "
            "the host as a directory");
  EXPECT_THAT(error({{"/srv/s1", "/srv/link/x", false}}),
              HasSubstr("passes through the host's symlink '/srv/link'"));
  // A missing target whose parent is writable would be created on the host by bwrap.
  s.filesystem.allow_write = {{"/w", false}};
  EXPECT_THAT(error({{"/srv/s1", "/w/new", true}}),
              HasSubstr("the target does not exist and its parent '/w' is writable in the "
                        "sandbox, so bwrap would create it on the host"));
}

TEST(PolicyBindTest, WritableBindIsWritableAndProtectedAtTheTarget) {
  Settings s;
  Policy p = Resolve(s, BindHost(), WithBinds({{"/srv/s1", "/workspace", true}}));
  const MountRule* m = Find(p, "/workspace");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(*m, (MountRule{"/workspace", View::kHostWritable, "bind '/srv/s1' -> '/workspace'",
                           "/srv/s1"}));
  EXPECT_TRUE(p.synthetic_root);
  EXPECT_EQ(p.remount_read_only, std::vector<std::string>{"/"});
  EXPECT_EQ(p.writable_bind_sources, std::vector<std::string>{"/srv/s1"});
  EXPECT_TRUE(p.write_roots.empty());
  // Mandatory denies of the source apply at the target, with the host path for placeholders.
  const std::vector<std::string> protects = ProtectedPaths(p, ProtectKind::kProtect);
  EXPECT_THAT(protects, ::testing::Contains("/workspace/.git/hooks"));
  EXPECT_THAT(protects, ::testing::Contains("/workspace/.git/config"));
  EXPECT_THAT(protects, ::testing::Contains("/workspace/.bashrc"));
  for (const Protection& x : p.protections) {
    if (x.path == "/workspace/.bashrc") {
      EXPECT_EQ(x.host_path, "/srv/s1/.bashrc");
      EXPECT_FALSE(x.exists);
    }
    EXPECT_TRUE(path::IsWithin(x.path, "/workspace")) << x.path;
  }
  EXPECT_THAT(ProtectedPaths(p, ProtectKind::kPin), ElementsAre("/workspace/.git"));
}

TEST(PolicyBindTest, ReadOnlyBindGetsNoProtectionsAndDenyWriteMakesAWritableBindReadOnly) {
  Settings s;
  Policy ro = Resolve(s, BindHost(), WithBinds({{"/srv/s1", "/workspace", false}}));
  EXPECT_EQ(Find(ro, "/workspace")->view, View::kHostReadOnly);
  EXPECT_TRUE(ro.protections.empty());
  EXPECT_TRUE(ro.writable_bind_sources.empty());

  s.filesystem.deny_write = {{"/srv", false}};
  Policy denied = Resolve(s, BindHost(), WithBinds({{"/srv/s1", "/workspace", true}}));
  EXPECT_EQ(Find(denied, "/workspace")->view, View::kHostReadOnly);
}

TEST(PolicyBindTest, DenyWriteInsideAWritableBindIsProtectedAtTheTarget) {
  Settings s;
  s.filesystem.deny_write = {{"/srv/s1/src", false}};
  Policy p = Resolve(s, BindHost(), WithBinds({{"/srv/s1", "/workspace", true}}));
  EXPECT_THAT(ProtectedPaths(p, ProtectKind::kProtect), ::testing::Contains("/workspace/src"));
}

// A synthetic directory shows each host entry with a bind, unless a later rule replaces that
// entry with a tmpfs of its own (a hidden or another synthetic directory): that bind would be
// covered at once, and bwrap pays for every bind (it re-reads the whole mount table after each:
// ~0.1 ms). srt-poller's sessions hide most of the root and bind /workspace into it.
TEST(PolicyBindTest, ASyntheticDirectoryBindsNoEntryThatALaterTmpfsCovers) {
  Settings s;
  s.filesystem.deny_read = {{"/srv", false}};
  Policy p = Resolve(s, BindHost(),
                     WithBinds({{"/w", "/workspace", true}, {"/srv/file.txt", "/etc/new", false}}));
  ASSERT_TRUE(p.synthetic_root);
  std::vector<std::string> at_srv, at_etc;
  for (const MountRule& m : p.mounts) {
    if (m.path == "/srv") at_srv.push_back(ViewName(m.view));
    if (m.path == "/etc") at_etc.push_back(ViewName(m.view));
  }
  EXPECT_EQ(at_srv, std::vector<std::string>{ViewName(View::kHiddenDir)});
  EXPECT_EQ(at_etc, std::vector<std::string>{ViewName(View::kSyntheticDir)});
  // The entries nothing replaces are still shown, and what the covering tmpfs holds too.
  EXPECT_EQ(Find(p, "/tmp")->view, View::kHostReadOnly);
  EXPECT_EQ(Find(p, "/etc/hosts")->view, View::kHostReadOnly);
  EXPECT_EQ(Find(p, "/etc/new")->view, View::kHostReadOnly);
  EXPECT_GT(IndexOf(p, "/etc/hosts"), IndexOf(p, "/etc"));
}

TEST(PolicyBindTest, ExistingTargetNeedsNoSyntheticDirectory) {
  Settings s;
  Policy p = Resolve(s, BindHost(), WithBinds({{"/srv/file.txt", "/etc/hosts", false}}));
  EXPECT_FALSE(p.synthetic_root);
  EXPECT_TRUE(p.remount_read_only.empty());
  EXPECT_EQ(p.mounts.back(), (MountRule{"/etc/hosts", View::kHostReadOnly,
                                        "bind '/srv/file.txt' -> '/etc/hosts'", "/srv/file.txt"}));
}

TEST(PolicyBindTest, NestedBindTargetMustExistInTheOuterSource) {
  Settings s;
  EXPECT_THAT(ErrorOf(s, BindHost(),
                      WithBinds({{"/srv/s1", "/workspace", true}, {"/w", "/workspace/out", true}})),
              HasSubstr("so '/srv/s1/out' must exist as a directory"));
  Policy p = Resolve(s, BindHost(),
                     WithBinds({{"/srv/s1", "/workspace", true}, {"/w", "/workspace/src", true}}));
  EXPECT_GT(IndexOf(p, "/workspace/src"), IndexOf(p, "/workspace"));
}

}  // namespace
}  // namespace srt::policy
