// SPDX-License-Identifier: Apache-2.0
// Filesystem isolation through the real srt: exact errno for every rule.
#include <dirent.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "srt_fixture.h"

namespace srt::it {
namespace {

using FilesystemTest = SrtTest;

const char* kWriteCwd = R"({"filesystem": {"allowWrite": ["."]}})";

// The scratch tree's parent: outside every write root, owned by the run identity.
std::string Outside(Runner& r, const std::string& name) { return r.root() + "/../" + name; }

TEST_P(FilesystemTest, WritesOnlyInsideWriteRoots) {
  std::ofstream(Outside(run(), "outside.txt")) << "x";
  chown(Outside(run(), "outside.txt").c_str(), root() ? 0 : 65534, root() ? 0 : 65534);
  EXPECT_EQ(Errno(kWriteCwd, {"create", "new.txt", "hello"}), 0) << last_.err;
  EXPECT_EQ(run().ReadFile("new.txt"), "hello");
  EXPECT_EQ(Errno(kWriteCwd, {"write", Outside(run(), "outside.txt")}), EROFS);
  EXPECT_EQ(Errno(kWriteCwd, {"create", Outside(run(), "new.txt")}), EROFS);
  EXPECT_EQ(Errno(kWriteCwd, {"create", run().home() + "/x"}), EROFS);
  EXPECT_EQ(Errno(kWriteCwd, {"read", Outside(run(), "outside.txt")}), 0);
  // Nothing is writable by default.
  EXPECT_EQ(Errno("{}", {"create", "other.txt"}), EROFS);
}

TEST_P(FilesystemTest, DenyReadHidesDirectoriesAndFiles) {
  run().WriteFile("../home/.ssh/id_ed25519", "KEY");
  run().WriteFile("../home/secret.txt", "SECRET");
  const char* s = R"({"filesystem": {"denyRead": ["~/.ssh", "~/secret.txt"]}})";
  RunResult ls = run().Srt(s, Probe({"ls", run().home() + "/.ssh"}));
  EXPECT_EQ(ls.exit_code, 0);
  EXPECT_EQ(ls.out, "");
  EXPECT_EQ(Errno(s, {"read", run().home() + "/.ssh/id_ed25519"}), ENOENT);
  EXPECT_EQ(Errno(s, {"read", run().home() + "/secret.txt"}), EACCES);
  RunResult st = run().Srt(s, Probe({"stat", run().home() + "/secret.txt"}));
  EXPECT_EQ(st.out, "char\n");
}

TEST_P(FilesystemTest, CredentialFilesDeniedThroughSymlinksAndMaskedWithASentinel) {
  run().WriteFile("../home/.aws/credentials", "AWSSECRET");
  run().WriteFile("../home/.netrc",
                  "machine h login me password AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n");
  ASSERT_EQ(::symlink((run().home() + "/.aws/credentials").c_str(),
                      (run().home() + "/creds-link").c_str()),
            0);
  ASSERT_EQ(::symlink((run().home() + "/.aws").c_str(), (run().home() + "/aws-link").c_str()), 0);
  // The deny follows symlinks to what it protects, and allowRead does not lift it.
  const std::string s = R"J({"filesystem": {"allowRead": ["~/.aws"]}, "credentials": {
      "allowPlaintextInject": true,
      "files": [{"path": "~/creds-link", "mode": "deny"},
                {"path": "~/.netrc", "mode": "mask", "extract": "password (\\S+)"}]}})J";
  EXPECT_EQ(Errno(s, {"read", run().home() + "/.aws/credentials"}), EACCES);
  EXPECT_EQ(Errno(s, {"read", run().home() + "/creds-link"}), EACCES);
  EXPECT_EQ(Errno(s, {"read", run().home() + "/aws-link/credentials"}), EACCES);
  RunResult r = run().Srt(s, Probe({"read", run().home() + "/.netrc"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("machine h login me password fake_value_")) << r.out;
  EXPECT_EQ(r.out.size(), run().ReadFile("../home/.netrc").size()) << r.out;  // same length
  EXPECT_EQ(r.out.find("AAAAAAAAAA"), std::string::npos) << r.out;
  // Read-only, and the host's file is untouched.
  const int write_errno = Errno(s, {"write", run().home() + "/.netrc"});
  EXPECT_TRUE(write_errno == EROFS || write_errno == EACCES) << write_errno;
  EXPECT_EQ(run().ReadFile("../home/.netrc"),
            "machine h login me password AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n");
}

TEST_P(FilesystemTest, AllowReadReopensAndADeeperDenyStillWins) {
  run().WriteFile("../home/.config/tool/conf", "CONF");
  run().WriteFile("../home/.config/tool/token", "TOKEN");
  run().WriteFile("../home/other", "OTHER");
  const char* s = R"({"filesystem": {"denyRead": ["~", "~/.config/tool/token"],
                                     "allowRead": ["~/.config/tool"]}})";
  RunResult r = run().Srt(s, Probe({"read", run().home() + "/.config/tool/conf"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "CONF");
  EXPECT_EQ(Errno(s, {"read", run().home() + "/other"}), ENOENT);
  EXPECT_EQ(Errno(s, {"read", run().home() + "/.config/tool/token"}), EACCES);
}

TEST_P(FilesystemTest, DenyWriteInsideAWriteRoot) {
  run().WriteFile("locked.txt", "L");
  const char* s =
      R"({"filesystem": {"allowWrite": ["."], "denyWrite": ["locked.txt", "out/gen"]}})";
  EXPECT_EQ(Errno(s, {"write", "locked.txt"}), EROFS);
  EXPECT_EQ(Errno(s, {"unlink", "locked.txt"}), EBUSY);
  // A missing denied path cannot be made, whatever the way; the directories on its way can be.
  RunResult r = run().Srt(s, {"sh", "-c",
                              "mkdir out; echo mkdir-out=$?; mkdir out/gen; echo gen=$?; "
                              "mkdir -p x/gen && rmdir out && mv x out; echo moved=$?; "
                              "rmdir out; ln -s /tmp out; echo symlink=$?; echo x > out/gen; "
                              "echo file=$?"});
  EXPECT_EQ(r.out, "mkdir-out=0\ngen=1\nmoved=1\nsymlink=1\nfile=2\n") << r.err;
  EXPECT_FALSE(run().Exists("out/gen"));
  EXPECT_EQ(run().ReadFile("locked.txt"), "L");
  // Nothing of srt's is left on the host while a sandbox runs or after it.
  EXPECT_FALSE(run().Exists("out"));
}

// bwrap enters the working directory before srt-agent puts the protections in place, so a
// working directory at or below a protected path was the writable one beneath the protection:
// a relative path wrote through it to the host. The command enters it again after them.
TEST_P(FilesystemTest, AWorkingDirectoryInsideAProtectedPathIsProtectedToo) {
  run().MakeDir("locked");
  run().MakeDir(".git/hooks");
  const std::string s = R"({"filesystem": {"allowWrite": [")" + run().root() +
                        R"("], "denyWrite": [")" + run().root() + R"(/locked"]}})";
  EXPECT_EQ(Errno(s, {"create", "x", "X"}, "locked"), EROFS) << last_.err;
  EXPECT_FALSE(run().Exists("locked/x"));
  EXPECT_EQ(Errno(s, {"create", "pre-commit", "#!/bin/sh"}, ".git/hooks"), EROFS) << last_.err;
  EXPECT_FALSE(run().Exists(".git/hooks/pre-commit"));
  // The same command, from the write root, still writes there.
  EXPECT_EQ(Errno(s, {"create", "x", "X"}), 0) << last_.err;
  EXPECT_EQ(run().ReadFile("x"), "X");
}

TEST_P(FilesystemTest, MandatoryDeniesExistingFiles) {
  run().WriteFile(".bashrc", "B");
  run().WriteFile(".git/config", "[core]\n");
  run().MakeDir(".git/hooks");
  run().WriteFile("sub/.vscode/settings.json", "{}");
  EXPECT_EQ(Errno(kWriteCwd, {"write", ".bashrc"}), EROFS);
  EXPECT_EQ(Errno(kWriteCwd, {"unlink", ".bashrc"}), EBUSY);
  EXPECT_EQ(Errno(kWriteCwd, {"create", ".git/hooks/pre-commit"}), EROFS);
  EXPECT_EQ(Errno(kWriteCwd, {"write", ".git/config"}), EROFS);
  EXPECT_EQ(Errno(kWriteCwd, {"rename", ".git", "git2"}), EBUSY);
  EXPECT_EQ(Errno(kWriteCwd, {"write", "sub/.vscode/settings.json"}), EROFS);
  EXPECT_EQ(Errno(kWriteCwd, {"rename", "sub", "sub2"}), EBUSY);
  // Other files in the repository stay writable.
  EXPECT_EQ(Errno(kWriteCwd, {"create", ".git/FETCH_HEAD"}), 0);
  const char* git_config_ok = R"({"filesystem": {"allowWrite": ["."], "allowGitConfig": true}})";
  EXPECT_EQ(Errno(git_config_ok, {"write", ".git/config"}), 0);
  EXPECT_EQ(Errno(git_config_ok, {"create", ".git/hooks/post-checkout"}), EROFS);
}

TEST_P(FilesystemTest, MandatoryDeniesBlockMissingFilesWithoutLeavingAnything) {
  EXPECT_EQ(Errno(kWriteCwd, {"create", ".mcp.json"}), EPERM);
  EXPECT_EQ(Errno(kWriteCwd, {"append", ".bashrc"}), EPERM);
  EXPECT_EQ(Errno(kWriteCwd, {"mkdir", ".vscode"}), EPERM);
  EXPECT_EQ(Errno(kWriteCwd, {"symlink", "/tmp", ".vscode"}), EPERM);
  EXPECT_EQ(Errno(kWriteCwd, {"mkdir", ".claude"}), 0);
  EXPECT_EQ(Errno(kWriteCwd, {"mkdir", ".claude/commands"}), EPERM);
  for (const char* name :
       {".mcp.json", ".bashrc", ".vscode", ".claude/commands", ".gitmodules", ".idea"}) {
    EXPECT_FALSE(run().Exists(name)) << name << " is on the host";
  }
}

TEST_P(FilesystemTest, MandatoryDeniesApplyUnderEveryWriteRoot) {
  run().MakeDir("../second");
  chown((run().root() + "/../second").c_str(), root() ? 0 : 65534, root() ? 0 : 65534);
  std::string s = R"({"filesystem": {"allowWrite": [".", "../second"]}})";
  EXPECT_EQ(Errno(s, {"create", "../second/.mcp.json"}), EPERM);
  EXPECT_EQ(Errno(s, {"create", "../second/ok.txt"}), 0);
  EXPECT_FALSE(run().Exists("../second/.mcp.json"));
}

TEST_P(FilesystemTest, SymlinksCannotCarryWritesOutOrReplaceProtectedFiles) {
  std::ofstream(Outside(run(), "target.txt")) << "T";
  chown(Outside(run(), "target.txt").c_str(), root() ? 0 : 65534, root() ? 0 : 65534);
  run().MakeSymlink(Outside(run(), "target.txt"), "escape");
  EXPECT_EQ(Errno(kWriteCwd, {"write", "escape"}), EROFS);
  // A symlinked dotfile: the link cannot be swapped and its target cannot be written through it.
  run().WriteFile("dotfiles/bashrc", "REAL");
  run().MakeSymlink("dotfiles/bashrc", ".bashrc");
  EXPECT_EQ(Errno(kWriteCwd, {"write", ".bashrc"}), EROFS);
  EXPECT_EQ(Errno(kWriteCwd, {"unlink", ".bashrc"}), EBUSY);
  RunResult r = run().Srt(kWriteCwd, Probe({"read", ".bashrc"}));
  EXPECT_EQ(r.out, "REAL");
}

TEST_P(FilesystemTest, AWriteRootThroughASymlinkIsSkippedWithAWarning) {
  run().MakeSymlink(run().home(), "out");
  RunResult r = run().Srt(R"({"filesystem": {"allowWrite": [".", "out"]}})",
                          Probe({"create", run().home() + "/x"}));
  EXPECT_EQ(r.exit_code, EROFS);
  EXPECT_NE(r.err.find("srt: warning: allowWrite 'out': '" + run().Path("out") +
                       "' resolves through a symlink to '" + run().home() +
                       "', outside its own tree: skipped"),
            std::string::npos)
      << r.err;
}

TEST_P(FilesystemTest, DenyReadGlobsAreExpandedAtLaunch) {
  run().WriteFile(".env", "E1");
  run().WriteFile("sub/deeper/.env", "E2");
  run().WriteFile("sub/ok.txt", "OK");
  const char* s = R"({"filesystem": {"denyRead": ["**/.env"]}})";
  EXPECT_EQ(Errno(s, {"read", ".env"}), EACCES);
  EXPECT_EQ(Errno(s, {"read", "sub/deeper/.env"}), EACCES);
  EXPECT_EQ(Errno(s, {"read", "sub/ok.txt"}), 0);
  RunResult bad = run().Srt(R"({"filesystem": {"denyRead": ["{a,b}/x"]}})", Probe({"exit", "0"}));
  EXPECT_EQ(bad.exit_code, 125);
  EXPECT_NE(bad.err.find("brace expansion"), std::string::npos) << bad.err;
}

// policies/deny-read-by-default.json: everything hidden, then what bash, coreutils, git,
// Python and Node need re-opened. On a merged-/usr host /bin, /lib and /lib64 are symlinks into
// /usr: they must stay links (a read through one gets what /usr's rule says).
TEST_P(FilesystemTest, TheDenyReadByDefaultPolicyRunsTheUsualTools) {
  std::ifstream in(std::string(SRT_POLICIES_DIR) + "/deny-read-by-default.json");
  std::stringstream policy;
  policy << in.rdbuf();
  ASSERT_FALSE(policy.str().empty());
  // A repository (as `git init` leaves it) and a file in the project.
  run().WriteFile(".git/HEAD", "ref: refs/heads/main\n");
  run().WriteFile(".git/config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n");
  run().MakeDir(".git/objects");
  run().MakeDir(".git/refs/heads");
  run().WriteFile("notes.txt", "b\na\n");
  RunResult r =
      run().Srt(policy.str(),
                {"bash", "-c",
                 "set -e; readlink /bin; sort notes.txt | tr a-z A-Z | head -1; ls / >/dev/null; "
                 "awk 'BEGIN{print 40+2}'; git status --porcelain; python3 -c 'import ssl, json; "
                 "print(\"py\")'; node -e 'console.log(\"node\")'; echo made > out.txt; "
                 "test ! -e /etc/shadow; test -z \"$(ls -A \"$HOME\" 2>/dev/null)\"; echo done"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "usr/bin\nA\n42\n?? notes.txt\npy\nnode\ndone\n") << r.err;
  EXPECT_EQ(run().ReadFile("out.txt"), "made\n");
}

TEST_P(FilesystemTest, TmpdirIsPrivateWritableAndGoneAfterwards) {
  // The host's /tmp is readable and read-only, as upstream; TMPDIR is a fresh private tmpfs.
  std::string marker = "/tmp/srt-it-host-" + std::to_string(getpid()) + (root() ? "r" : "u");
  std::ofstream(marker) << "host";
  RunResult r = run().Srt(
      "{}", {"sh", "-c",
             "echo \"$TMPDIR\"; echo scratch > \"$TMPDIR/f\" && cat \"$TMPDIR/f\" && cat " +
                 marker + "; (echo x > /tmp/direct) 2>/dev/null || echo refused"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string tmpdir = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(tmpdir.rfind("/tmp/srt-", 0), 0u) << r.out;
  EXPECT_EQ(r.out, tmpdir + "\nscratch\nhostrefused\n");
  EXPECT_NE(access(tmpdir.c_str(), F_OK), 0) << "the private TMPDIR was left on the host";
  EXPECT_NE(access("/tmp/direct", F_OK), 0);
  // Every sandbox gets its own.
  RunResult again = run().Srt("{}", Probe({"env", "TMPDIR"}));
  EXPECT_NE(again.out, tmpdir + "\n");
  unlink(marker.c_str());
}

// The TMPDIR's tmpfs is mounted on a directory kept for the user's next sandboxes (/tmp/srt-UID,
// mode 0700), and the TMPDIR is made inside that tmpfs: no sandbox makes or removes anything on
// the host's disk (a removed directory cost 0.7-3 ms of srt's exit on ext4 with `discard`), and
// nothing a command writes there, beside its TMPDIR or in it, reaches the host.
TEST_P(FilesystemTest, TheTmpdirIsInATmpfsOnADirectoryKeptEmpty) {
  const uid_t uid = root() ? 0 : 65534;
  const std::string kept = "/tmp/srt-" + std::to_string(uid);
  RunResult r = run().Srt("{}", {"sh", "-c",
                                 "echo \"$TMPDIR\"; echo x > \"$TMPDIR/f\" && "
                                 "echo y > \"$TMPDIR/../zz\" && ls -A \"$TMPDIR/..\""});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string tmpdir = r.out.substr(0, r.out.find('\n'));
  ASSERT_EQ(tmpdir.rfind(kept + "/", 0), 0u) << r.out;
  const std::string name = tmpdir.substr(kept.size() + 1);
  EXPECT_EQ(r.out, tmpdir + "\n" + name + "\nzz\n");
  struct stat st {};
  ASSERT_EQ(lstat(kept.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, uid);
  // Other sandboxes may be running; none of them writes on the host's side of the directory.
  std::string left;
  if (DIR* d = opendir(kept.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") left += e->d_name;
    }
    closedir(d);
  }
  EXPECT_EQ(left, "") << kept << " holds what a sandbox wrote";
}

// Found by a hostile review: the kept directory is the host's, so a host program can put a
// project below it (or a tmp cleaner remove it while a sandbox runs, after which the TMPDIR's
// name leads to the host's disk). The write guard's git rules then hold there: only what is on
// the sandbox's private tmpfs is exempt, whatever its path. (A working directory below the kept
// directory now also makes srt put the TMPDIR's tmpfs elsewhere, which would otherwise hide it.)
// Root only: the test needs a mount namespace with a /tmp of its own, so that no other test's
// kept directory is touched.
TEST_P(FilesystemTest, OnlyThePrivateTmpfsIsExemptFromTheGitRules) {
  if (!root()) GTEST_SKIP() << "needs a mount namespace of the test's own";
  const std::string settings = run().SettingsFile(R"({"filesystem": {"allowWrite": ["."]}})");
  const std::string script =
      "mount -t tmpfs -o mode=1777 srt-test-tmp /tmp && mkdir -m 0700 /tmp/srt-0 && "
      "mkdir /tmp/srt-0/proj && cd /tmp/srt-0/proj && " +
      std::string(SrtBinary()) + " -s " + settings +
      " -c 'mkdir .git 2>/dev/null; echo here=$?; mkdir -p \"$TMPDIR/r/.git\"; echo tmpdir=$?' && "
      "ls -A /tmp/srt-0/proj";
  RunResult r = run().Host({"unshare", "-m", "--propagation", "private", "sh", "-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "here=1\ntmpdir=0\n") << r.err;
}

TEST_P(FilesystemTest, AWorkingDirectoryUnderTmpStaysVisible) {
  std::string dir = "/tmp/srt-it-cwd-" + std::to_string(getpid()) + (root() ? "r" : "u");
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/f.txt") << "F";
  chown(dir.c_str(), root() ? 0 : 65534, root() ? 0 : 65534);
  RunResult r = run().Srt("{}", Probe({"read", "f.txt"}), dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "F");
  EXPECT_EQ(Errno("{}", {"create", "g.txt"}, dir), EROFS);
  std::string s = R"({"filesystem": {"allowWrite": ["."]}})";
  EXPECT_EQ(Errno(s, {"create", "g.txt"}, dir), 0);
  std::system(("rm -rf " + dir).c_str());
}

TEST_P(FilesystemTest, FilesystemDisabledIsTheHostFilesystem) {
  EXPECT_EQ(Errno(R"({"filesystem": {"disabled": true}})", {"create", "free.txt"}), 0);
}

// Two sandboxes sharing a write root: whichever ends first, the other stays protected, and
// nothing is left on the host.
void OverlappingSandboxes(Runner& r, bool first_ends_first) {
  const char* s = R"({"filesystem": {"allowWrite": ["."]}})";
  // The long-lived sandbox waits for a file the test creates; the short one runs a fixed time.
  pid_t long_lived =
      r.Start(s, {"sh", "-c", ": > long-started; while [ ! -e release ]; do sleep 0.02; done"});
  ASSERT_TRUE(Eventually([&] { return r.Exists("long-started"); }));
  pid_t second = r.Start(s, {"sh", "-c",
                             ": > second-started; while [ ! -e go ]; do sleep 0.02; done; "
                             "(echo evil > .bashrc) 2>/dev/null; echo $? > bashrc-rc; "
                             "(echo evil > .mcp.json/x) 2>/dev/null; echo $? > mcp-rc"});
  ASSERT_TRUE(Eventually([&] { return r.Exists("second-started"); }));
  if (first_ends_first) {
    r.WriteFile("release", "");
    EXPECT_EQ(r.Finish(long_lived).exit_code, 0);
    r.WriteFile("go", "");
    EXPECT_EQ(r.Finish(second).exit_code, 0);
  } else {
    r.WriteFile("go", "");
    EXPECT_EQ(r.Finish(second).exit_code, 0);
    r.WriteFile("release", "");
    EXPECT_EQ(r.Finish(long_lived).exit_code, 0);
  }
  EXPECT_NE(r.ReadFile("bashrc-rc"), "0\n") << ".bashrc was writable in the second sandbox";
  EXPECT_NE(r.ReadFile("mcp-rc"), "0\n");
  for (const char* name : {".bashrc", ".mcp.json", ".claude", ".vscode", ".gitmodules"}) {
    EXPECT_FALSE(r.Exists(name)) << name << " was left on the host";
  }
}

TEST_P(FilesystemTest, OverlappingSandboxesFirstEndsFirst) { OverlappingSandboxes(run(), true); }
TEST_P(FilesystemTest, OverlappingSandboxesFirstEndsLast) { OverlappingSandboxes(run(), false); }

TEST_P(FilesystemTest, ALeftoverPlaceholderIsRemovedAndThePathStillBlocked) {
  // An empty r-------- directory that an earlier srt (which blocked missing paths with one) left
  // when it was killed: the next run removes it, and the path stays uncreatable.
  run().MakeDir(".mcp.json");
  chmod(run().Path(".mcp.json").c_str(), 0400);
  EXPECT_EQ(Errno(kWriteCwd, {"create", ".mcp.json/x"}), ENOENT);
  EXPECT_EQ(Errno(kWriteCwd, {"create", ".mcp.json"}), EPERM);
  EXPECT_FALSE(run().Exists(".mcp.json"));
}

TEST_P(FilesystemTest, AWriteRootTheCallerCannotWriteJustRuns) {
  if (root()) GTEST_SKIP() << "root can write every directory";
  // A directory the caller may read but not write: the command cannot create anything there
  // either, and srt runs without complaint.
  std::string dir = run().root() + "/../readonly";
  mkdir(dir.c_str(), 0755);  // owned by root
  RunResult r = run().Srt(kWriteCwd, Probe({"create", "x"}), dir);
  EXPECT_EQ(r.exit_code, EACCES) << r.err;
  EXPECT_EQ(r.err.find("srt:"), std::string::npos) << r.err;
}

// git.safeDirectories: git in the sandbox sees a repository owned by another user (its owner is
// unmapped in the sandbox's user namespace) and refuses it as "dubious ownership" unless the
// repository is a safe.directory, which srt says through GIT_CONFIG_COUNT/KEY_n/VALUE_n.
TEST_P(FilesystemTest, GitSafeDirectoriesLetGitUseARepositoryOwnedByAnotherUser) {
  if (access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "git is not installed in /usr/bin";
  const std::string repo = run().Path("repo");
  ASSERT_EQ(run().Host({"git", "init", "-q", repo}).exit_code, 0);
  // Another user's repository, readable by everyone (this test runs as root).
  ASSERT_EQ(
      nftw(
          repo.c_str(),
          [](const char* path, const struct stat*, int, FTW*) { return lchown(path, 4242, 4242); },
          16, FTW_PHYS),
      0);
  const std::vector<std::string> status = {"git", "-C", repo, "status", "--porcelain"};
  const std::string settings = R"({"git": {"safeDirectories": [")" + repo + R"(/"]}})";

  RunResult plain = run().Srt("{}", status);
  if (root()) {
    // Inside, root is root and the owner is "nobody": git refuses.
    EXPECT_EQ(plain.exit_code, 128) << plain.err;
    EXPECT_NE(plain.err.find("dubious ownership"), std::string::npos) << plain.err;
  } else {
    // Inside, nobody and every unmapped owner are the same overflow uid: git is content.
    EXPECT_EQ(plain.exit_code, 0) << plain.err;
  }
  RunResult safe = run().Srt(settings, status);
  EXPECT_EQ(safe.exit_code, 0) << safe.err;
  RunResult listed = run().Srt(settings, {"git", "config", "--get-all", "safe.directory"});
  EXPECT_EQ(listed.out, repo + "\n" + repo + "/*\n") << listed.err;
  // Trusting the repository grants no write to it.
  EXPECT_EQ(Errno(settings, {"create", repo + "/x"}), EROFS);

  // An inherited GIT_CONFIG_COUNT is continued, and GIT_CONFIG_COUNT=0 is the user's opt-out.
  const std::string file = run().SettingsFile(settings);
  RunResult continued = run().SrtRaw(
      {"-s", file, "git", "-C", repo, "config", "--get", "user.name"}, "", std::chrono::seconds(30),
      {"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=Sandbox User"});
  EXPECT_EQ(continued.exit_code, 0) << continued.err;
  EXPECT_EQ(continued.out, "Sandbox User\n");
  RunResult opted_out = run().SrtRaw({"-s", file, "git", "config", "--get-all", "safe.directory"},
                                     "", std::chrono::seconds(30), {"GIT_CONFIG_COUNT=0"});
  EXPECT_EQ(opted_out.exit_code, 1) << opted_out.err;
  EXPECT_EQ(opted_out.out, "");
}

// Entries allowed back inside a hidden directory: for a root caller srt-agent shows them in
// bwrap's place (bwrap::AgentShows: bwrap re-read the whole mount table for each bind), for an
// unprivileged one bwrap binds them. Either way the view is the same: each the host's, read-only,
// nosuid and nodev, with what is below it; a file denied inside one still covered; the rest of
// the hidden directory gone; and the sandbox's own mount below a shown entry (the cover) is not
// the host's.
TEST_P(FilesystemTest, EntriesAllowedBackInAHiddenDirectoryAreTheHostsReadOnly) {
  run().WriteFile("../home/.config/tool/settings", "TOOL");
  run().WriteFile("../home/.config/tool/secret", "SECRET");
  run().WriteFile("../home/.config/other/x", "OTHER");
  run().WriteFile("../home/.config/file.txt", "FILE");
  const std::string cfg = run().home() + "/.config";
  const std::string s = R"({"filesystem": {"denyRead": ["~/.config", "~/.config/tool/secret"],
      "allowRead": ["~/.config/tool", "~/.config/file.txt"]}})";
  RunResult r = run().Srt(s, Probe({"read", cfg + "/tool/settings"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "TOOL");
  EXPECT_EQ(Errno(s, {"read", cfg + "/file.txt"}), 0) << last_.err;
  EXPECT_EQ(Errno(s, {"read", cfg + "/tool/secret"}), EACCES);
  EXPECT_EQ(Errno(s, {"read", cfg + "/other/x"}), ENOENT);
  EXPECT_EQ(Errno(s, {"write", cfg + "/tool/settings"}), EROFS);
  EXPECT_EQ(Errno(s, {"write", cfg + "/file.txt"}), EROFS);
  EXPECT_EQ(Errno(s, {"create", cfg + "/tool/new"}), EROFS);
  // Their mounts: the host's filesystem, read-only, nosuid, nodev; the cover is not the host's.
  r = run().Srt(s, {"sh", "-c", "grep -F ' " + cfg + "/' /proc/self/mountinfo | cut -d' ' -f5,6"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, cfg + "/file.txt ro,nosuid,nodev,relatime\n" + cfg +
                       "/tool ro,nosuid,nodev,relatime\n" + cfg +
                       "/tool/secret ro,nosuid,nodev,noexec,relatime\n")
      << r.out;
  std::ifstream host_mounts("/proc/self/mountinfo");
  std::string line;
  while (std::getline(host_mounts, line)) {
    EXPECT_EQ(line.find(cfg), std::string::npos) << "on the host: " << line;
  }
  EXPECT_EQ(run().ReadFile("../home/.config/tool/settings"), "TOOL");
}

// Hostile review 7: root callers for whom srt-agent cannot, or must not, show entries in bwrap's
// place still get them, from bwrap, where the first version of it failed to start: the root of a
// user namespace that shares the host's mount namespace (the agent's clone needs CAP_SYS_ADMIN
// over that), a low open-file limit (the agent holds a clone per entry at once), and a policy
// whose denied files leave the agent's plan no room for them.
TEST_P(FilesystemTest, EveryRootCallerGetsItsEntriesAllowedBack) {
  if (!root()) GTEST_SKIP() << "root callers only";
  const std::string dir = run().Path("hidden");
  for (int i = 0; i < 100; ++i) run().WriteFile("hidden/e" + std::to_string(i), "E");
  run().WriteFile("hidden/secret", "SECRET");
  for (int i = 0; i < 16280; ++i) run().WriteFile("denied/f" + std::to_string(i), "");
  std::string allowed, denied;
  for (int i = 0; i < 100; ++i) allowed += ", \"" + dir + "/e" + std::to_string(i) + "\"";
  for (int i = 0; i < 16280; ++i)
    denied += ", \"" + run().Path("denied/f" + std::to_string(i)) + "\"";
  const std::string shows = "{\"filesystem\": {\"denyRead\": [\"" + dir + "\"], \"allowRead\": [" +
                            allowed.substr(2) + "]}}";
  const std::string crowded = "{\"filesystem\": {\"denyRead\": [\"" + dir + "\"" + denied +
                              "], \"allowRead\": [" + allowed.substr(2) + "]}}";
  run().WriteFile("shows.json", shows);
  run().WriteFile("crowded.json", crowded);
  const std::string srt = SrtBinary();
  const std::string cmd = " -c 'cat " + dir + "/e0 " + dir + "/e99; cat " + dir + "/secret'";
  for (const std::string& how : {"unshare -Ur " + srt + " -s " + run().Path("shows.json"),
                                 "ulimit -n 64; " + srt + " -s " + run().Path("shows.json"),
                                 srt + " -s " + run().Path("crowded.json")}) {
    FILE* p = popen(("cd /usr && " + how + cmd + " 2>&1").c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    EXPECT_EQ(pclose(p), 256) << how << ":\n" << out;  // cat's 1, for the hidden file
    EXPECT_TRUE(out.starts_with("EE")) << how << ":\n" << out;
    EXPECT_NE(out.find("No such file or directory"), std::string::npos) << how << ":\n" << out;
  }
  // A policy past the agent's plan even without them fails before anything starts, naming the
  // limit (not a broken pipe to the agent, as before).
  for (int i = 0; i < 110; ++i) run().WriteFile("more/f" + std::to_string(i), "");
  for (int i = 0; i < 110; ++i) denied += ", \"" + run().Path("more/f" + std::to_string(i)) + "\"";
  RunResult over =
      run().Srt("{\"filesystem\": {\"denyRead\": [" + denied.substr(2) + "]}}", {"true"});
  EXPECT_EQ(over.exit_code, 125) << over.err;
  EXPECT_NE(
      over.err.find("the policy needs 16396 operations of srt-agent (denied and masked files, "
                    "protected paths), more than its limit of 16384"),
      std::string::npos)
      << over.err;
}

// Hostile review 7, seen beside it: a root without CAP_SYS_ADMIN (a container's) has its agent
// join the sandbox's user namespace, which with enableWeakerNestedSandbox is also the command's
// (bwrap nests none): joining it again failed every such sandbox with EINVAL.
TEST_P(FilesystemTest, ARootWithoutCapSysAdminRunsAWeakerNestedSandbox) {
  if (!root()) GTEST_SKIP() << "root callers only";
  run().WriteFile("weaker.json", R"({"enableWeakerNestedSandbox": true})");
  const std::string cmd = "cd /usr && setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin " +
                          std::string(SrtBinary()) + " -s " + run().Path("weaker.json") +
                          " -c 'echo ran; grep CapEff /proc/self/status' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << out;
  EXPECT_EQ(out, "ran\nCapEff:\t0000000000000000\n");
}

SRT_INSTANTIATE(FilesystemTest);

}  // namespace
}  // namespace srt::it
