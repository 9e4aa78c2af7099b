// SPDX-License-Identifier: Apache-2.0
// Nothing a sandboxed command writes may act on the host later: privilege bits, git's
// configuration and programs, planted symlinks, moved deny rules, the files srt itself opens.
// Each test plays the hostile command of one run and checks what the host sees afterwards.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "srt_fixture.h"

namespace srt::it {
namespace {

using PersistenceTest = SrtTest;

const char* kWriteCwd = R"({"filesystem": {"allowWrite": ["."]}})";

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode;
}

// A setuid or setgid bit on anything the sandbox can write would run as its owner for every
// user of the host after the sandbox ends (a root caller's copy of a shell, chmod 4755).
TEST_P(PersistenceTest, NoSyscallSetsSetuidOrSetgidBits) {
  run().WriteFile("prog", "#!/bin/sh\n");
  chmod(run().Path("prog").c_str(), 0755);
  for (const char* call : {"chmod", "fchmod", "fchmodat", "fchmodat2"}) {
    for (const char* mode : {"4755", "2755", "6755"}) {
      EXPECT_EQ(Errno(kWriteCwd, {"setmode", call, "prog", mode}), EPERM) << call << " " << mode;
    }
  }
  for (const char* call : {"open", "openat", "creat", "mknod", "mknodat"}) {
    for (const char* mode : {"4755", "2755"}) {
      const std::string name = std::string("new-") + call + "-" + mode;
      EXPECT_EQ(Errno(kWriteCwd, {"setmode", call, name, mode}), EPERM) << call << " " << mode;
      EXPECT_FALSE(run().Exists(name)) << name;
    }
  }
  EXPECT_EQ(Errno(kWriteCwd, {"setmode", "tmpfile", ".", "4755"}), EPERM);
  EXPECT_EQ(ModeOf(run().Path("prog")) & 07777, 0755u);
  // Ordinary modes still work.
  EXPECT_EQ(Errno(kWriteCwd, {"setmode", "chmod", "prog", "0700"}), 0);
  EXPECT_EQ(Errno(kWriteCwd, {"setmode", "open", "plain", "0644"}), 0);
  EXPECT_EQ(ModeOf(run().Path("prog")) & 07777, 0700u);
}

// A command that made itself non-dumpable (srt-toolbox does) keeps a working write guard, as
// root and unprivileged: a descriptor the guard cannot open through /proc (root's 0500 fd
// directory) it takes with pidfd_getfd, and it still judges the call.
TEST_P(PersistenceTest, TheGuardJudgesANonDumpableCommand) {
  EXPECT_EQ(Errno(kWriteCwd, {"nondumpable-createat", ".", "made"}), 0);
  EXPECT_TRUE(run().Exists("made"));
  EXPECT_EQ(Errno(kWriteCwd, {"nondumpable-createat", ".", ".bashrc"}), EPERM);
  EXPECT_FALSE(run().Exists(".bashrc"));
}

TEST_P(PersistenceTest, ToolsCannotMakeASetuidCopy) {
  RunResult r =
      run().Srt(kWriteCwd, {"sh", "-c",
                            "cp /bin/sh ./sh1; chmod 4755 ./sh1; echo chmod=$?; "
                            "install -m 4755 /bin/sh ./sh2; echo install=$?; "
                            "python3 -c 'import os; os.chmod(\"sh1\", 0o6755)'; echo python=$?; "
                            "chmod u+s,g+s ./sh1; echo symbolic=$?"});
  EXPECT_NE(r.out.find("chmod=1"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("install=1"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("python=1"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("symbolic=1"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(ModeOf(run().Path("sh1")) & 06000, 0u);
  EXPECT_EQ(ModeOf(run().Path("sh2")) & 06000, 0u);
}

// File capabilities: without a nested user namespace the command has no CAP_SETFCAP, so the
// kernel refuses them; with allowNestedUserNamespaces a root caller's nested namespace would map
// the host's root, where they would be real, so srt refuses nesting to a root caller.
TEST_P(PersistenceTest, NoFileCapabilities) {
  run().WriteFile("prog", "#!/bin/sh\n");
  EXPECT_EQ(Errno(kWriteCwd, {"setxattr", "setxattr", "prog", "security.capability"}), EPERM);
  const char* nested =
      R"({"allowNestedUserNamespaces": true, "filesystem": {"allowWrite": ["."]}})";
  for (const char* call : {"setxattr", "lsetxattr", "fsetxattr"}) {
    RunResult r = run().Srt(
        nested, {"unshare", "-r", ProbeBinary(), "setxattr", call, "prog", "security.capability"});
    if (root()) {
      // Nesting is refused for a root caller, whose nested root would be the host's.
      EXPECT_EQ(r.exit_code, 125) << call << ": " << r.err;
    } else {
      // An unprivileged caller's nested root is the caller: the kernel stores the capability
      // as valid only where that uid is root (a namespace of the caller's own), never for the
      // host. xattr writes stay allowed for it (rootless podman needs them).
      EXPECT_EQ(r.exit_code, 0) << call << ": " << r.err;
    }
  }
  uint32_t value[8] = {};
  ssize_t n = getxattr(run().Path("prog").c_str(), "security.capability", value, sizeof value);
  if (root()) {
    EXPECT_LT(n, 0) << "the file has capabilities on the host";
  } else {
    ASSERT_EQ(n, 24) << "expected a namespaced (revision 3) capability";
    EXPECT_EQ(value[0] >> 24, 3u);
    EXPECT_EQ(value[5], 65534u) << "the capability's root is not the caller";
  }
}

// Run 1 with allowWrite [W] turns W/a/b into a link to a host directory; run 2 with the narrower
// allowWrite [W/a/b] must not write there, nor allowRead [W/c] read ~/.ssh through W/c.
TEST_P(PersistenceTest, APlantedSymlinkIsNeverFollowedByALaterNarrowerPolicy) {
  run().WriteFile("../home/.ssh/id_ed25519", "KEY");
  RunResult plant = run().Srt(
      kWriteCwd, {"sh", "-c", "mkdir -p a && ln -s \"$HOME\" a/b && ln -s \"$HOME/.ssh\" c"});
  ASSERT_EQ(plant.exit_code, 0) << plant.err;
  RunResult write = run().Srt(R"({"filesystem": {"allowWrite": ["./a/b"]}})",
                              Probe({"create", run().home() + "/planted"}));
  EXPECT_EQ(write.exit_code, EROFS) << write.err;
  EXPECT_NE(write.err.find("srt: warning: allowWrite './a/b': '" + run().Path("a/b") +
                           "' resolves through a symlink to '" + run().home() +
                           "', outside its own tree: skipped"),
            std::string::npos)
      << write.err;
  EXPECT_NE(access((run().home() + "/planted").c_str(), F_OK), 0);
  RunResult read = run().Srt(R"({"filesystem": {"denyRead": ["~/.ssh"], "allowRead": ["./c"]}})",
                             Probe({"read", "c/id_ed25519"}));
  EXPECT_EQ(read.exit_code, ENOENT) << read.out << read.err;
  EXPECT_NE(read.err.find("srt: warning: allowRead './c'"), std::string::npos) << read.err;
}

// A deny entry that is a symlink inside a write root: the link cannot be replaced by a file of
// the command's choosing (which would catch what the user later writes through it).
TEST_P(PersistenceTest, ASymlinkedDenyPathCannotBeReplaced) {
  run().WriteFile("real/settings.toml", "S");
  run().MakeSymlink("real/settings.toml", "settings.toml");
  run().WriteFile("vault/token", "T");
  run().MakeSymlink("vault", "secrets");
  const char* s = R"({"filesystem": {"allowWrite": ["."], "denyWrite": ["settings.toml"],
                                     "denyRead": ["secrets/token"]}})";
  EXPECT_EQ(Errno(s, {"unlink", "settings.toml"}), EBUSY);
  EXPECT_EQ(Errno(s, {"rename", "settings.toml", "moved"}), EBUSY);
  EXPECT_EQ(Errno(s, {"write", "settings.toml"}), EROFS);
  EXPECT_EQ(Errno(s, {"unlink", "secrets"}), EBUSY);
  EXPECT_EQ(Errno(s, {"read", "secrets/token"}), EACCES);
  EXPECT_EQ(Errno(s, {"rename", "vault", "vault2"}), EBUSY);
  struct stat st {};
  ASSERT_EQ(lstat(run().Path("settings.toml").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(lstat(run().Path("secrets").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

// A deny rule protects its path for as long as the sandbox runs: its directories cannot be
// moved away (so the next run's rule would match nothing), and a missing denyRead path cannot be
// created and hard-linked elsewhere before the user puts the secret there.
TEST_P(PersistenceTest, DenyReadRulesCannotBeMovedOrPreArmed) {
  run().WriteFile("app/config/.env", "SECRET");
  const char* s = R"({"filesystem": {"allowWrite": ["."],
                                     "denyRead": ["app/config/.env", ".env", "keys/prod.pem"]}})";
  EXPECT_EQ(Errno(s, {"rename", "app/config", "app/moved"}), EBUSY);
  EXPECT_EQ(Errno(s, {"rename", "app", "moved"}), EBUSY);
  EXPECT_EQ(Errno(s, {"read", "app/config/.env"}), EACCES);
  RunResult arm = run().Srt(s, {"sh", "-c",
                                "echo x > .env; echo create=$?; touch f; ln f .env; echo link=$?; "
                                "mkdir -p keys; echo x > keys/prod.pem; echo nested=$?; "
                                "ln -s f .env; echo symlink=$?"});
  EXPECT_EQ(arm.exit_code, 0) << arm.err;
  for (const char* step : {"create=0", "link=0", "nested=0", "symlink=0"}) {
    EXPECT_EQ(arm.out.find(step), std::string::npos) << step << " succeeded: " << arm.out;
  }
  EXPECT_FALSE(run().Exists(".env"));
  EXPECT_FALSE(run().Exists("keys/prod.pem"));
  EXPECT_EQ(run().ReadFile("app/config/.env"), "SECRET");
}

// --- Files srt itself opens on the host.

// The settings in use decide the next run's policy: read-only inside every sandbox that uses
// them, their directory not renameable; and the default file cannot be planted where it is
// missing.
TEST_P(PersistenceTest, TheSettingsFileCannotBeChangedFromInside) {
  const std::string settings = R"({"filesystem": {"allowWrite": ["."]}})";
  run().WriteFile("conf/srt.json", settings);
  RunResult r =
      run().SrtRaw({"-s", "conf/srt.json", "sh", "-c",
                    "echo '{}' > conf/srt.json; echo write=$?; mv conf/srt.json x; echo move=$?; "
                    "mv conf conf2; echo move-dir=$?; rm -f conf/srt.json; echo rm=$?"});
  EXPECT_EQ(r.out, "write=2\nmove=1\nmove-dir=1\nrm=1\n") << r.err;  // sh: 2 = redirection
  EXPECT_EQ(run().ReadFile("conf/srt.json"), settings);
  // The default ~/.srt-settings.json, missing, under a writable home: it cannot be planted.
  const std::string home_writable = R"({"filesystem": {"allowWrite": ["~"]}})";
  RunResult plant = run().Srt(home_writable, {"sh", "-c", "echo '{}' > ~/.srt-settings.json"});
  EXPECT_NE(plant.exit_code, 0);
  EXPECT_NE(access((run().home() + "/.srt-settings.json").c_str(), F_OK), 0);
}

TEST_P(PersistenceTest, TheLogFileIsNeverOpenedThroughWhatASandboxCouldPlant) {
  const std::string host_file = run().root() + "/../host-file";
  { std::ofstream(host_file) << "HOST"; }
  chown(host_file.c_str(), root() ? 0 : 65534, root() ? 0 : 65534);
  run().MakeSymlink(host_file, "log-link");
  run().MakeDir("real");
  run().MakeSymlink("real", "dir-link");
  mkfifo(run().Path("log-fifo").c_str(), 0644);
  chown(run().Path("log-fifo").c_str(), root() ? 0 : 65534, root() ? 0 : 65534);
  run().WriteFile("log-linked", "");
  link(run().Path("log-linked").c_str(), run().Path("second-name").c_str());
  const std::string net = R"({"network": {"allowedDomains": []}})";
  struct Case {
    const char* path;
    const char* says;
  } cases[] = {{"log-link", "symlink"},
               {"dir-link/log", "symlink"},
               {"log-fifo", "not a regular file"},
               {"log-linked", "2 names"}};
  for (const Case& c : cases) {
    RunResult r = run().SrtRaw({"-s", run().SettingsFile(net), "--log-file", c.path, "true"});
    EXPECT_EQ(r.exit_code, 125) << c.path;
    EXPECT_NE(r.err.find("--log-file " + std::string(c.path)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  EXPECT_EQ(run().ReadFile("../host-file"), "HOST");
  EXPECT_FALSE(run().Exists("real/log"));
  // A file of its own is fine.
  RunResult ok = run().SrtRaw({"-s", run().SettingsFile(net), "--log-file", "mine.jsonl", "true"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// --- Descriptors the caller passed grant exactly the access they were opened with.

// `srt CMD < file` and `srt CMD >> log` from a shell, as the user types them.
RunResult Redirected(Runner& run, const std::string& redirections, const std::string& script,
                     const std::string& settings = kWriteCwd) {
  return run.Host({"sh", "-c",
                   std::string(SrtBinary()) + " -s " + run.SettingsFile(settings) + " sh -c '" +
                       script + "' " + redirections});
}

TEST_P(PersistenceTest, AFileGivenAsInputCannotBeReopenedForWriting) {
  run().WriteFile("../input.txt", "ORIGINAL\n");  // outside every write root
  RunResult r = Redirected(run(), "< " + run().Path("../input.txt"),
                           "read line; echo \"read:$line\"; echo EVIL > /proc/self/fd/0; "
                           "python3 -c \"import os; os.open(\\\"/dev/stdin\\\", os.O_RDWR)\" && "
                           "echo reopened");
  EXPECT_EQ(run().ReadFile("../input.txt"), "ORIGINAL\n");
  EXPECT_NE(r.out.find("read:ORIGINAL"), std::string::npos) << r.out << r.err;
}

TEST_P(PersistenceTest, AnAppendOnlyOutputCannotBeReadNorOverwritten) {
  run().WriteFile("../log.txt", "EARLIER SECRET\n");
  RunResult r = Redirected(run(), ">> " + run().Path("../log.txt"),
                           "echo new; timeout 2 cat /proc/self/fd/1 >&2; echo X > /dev/stdout; "
                           "python3 -c \"import os; f = os.open(\\\"/dev/stdout\\\", "
                           "os.O_WRONLY); os.pwrite(f, b\\\"OVER\\\", 0)\"; true");
  EXPECT_EQ(r.err.find("EARLIER SECRET"), std::string::npos) << r.err;
  const std::string log = run().ReadFile("../log.txt");
  EXPECT_EQ(log.rfind("EARLIER SECRET\nnew\n", 0), 0u) << log;
}

TEST_P(PersistenceTest, OutputAndErrorToOneFileKeepTheirOrder) {
  RunResult r = Redirected(run(), "> " + run().Path("../both.txt") + " 2>&1",
                           "for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run().ReadFile("../both.txt"),
            "out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\nerr5\n");
}

// A directory descriptor reaches the host's tree below it whatever the policy hides: srt
// refuses to hand one over.
TEST_P(PersistenceTest, ADirectoryIsNeverPassedToTheCommand) {
  run().WriteFile("../home/.ssh/id_ed25519", "KEY");
  const char* hidden = R"({"filesystem": {"denyRead": ["~/.ssh"]}})";
  RunResult in =
      Redirected(run(), "< " + run().home() + "/.ssh", "cat /proc/self/fd/0/id_ed25519", hidden);
  EXPECT_EQ(in.exit_code, 125) << in.out << in.err;
  EXPECT_NE(in.err.find("standard input is a directory"), std::string::npos) << in.err;
  EXPECT_EQ(in.out.find("KEY"), std::string::npos);
  RunResult passed =
      run().Host({"sh", "-c",
                  std::string(SrtBinary()) + " -s " + run().SettingsFile(hidden) +
                      " --pass-fd 7 cat /proc/self/fd/7/id_ed25519 7< " + run().home() + "/.ssh"});
  EXPECT_EQ(passed.exit_code, 125) << passed.out << passed.err;
  EXPECT_NE(passed.err.find("descriptor 7 is a directory"), std::string::npos) << passed.err;
}

// bwrap's /dev binds the host's device nodes, and the caller's /dev/null is the host's node too:
// neither may let the command change the host's (chmod 000 /dev/null breaks every host program).
TEST_P(PersistenceTest, TheHostsDeviceNodesCannotBeChanged) {
  struct stat before[3];
  const char* nodes[] = {"/dev/null", "/dev/zero", "/dev/tty"};
  for (int i = 0; i < 3; ++i) ASSERT_EQ(stat(nodes[i], &before[i]), 0);
  RunResult r = Redirected(run(), "< /dev/null",
                           "chmod 600 /dev/null /dev/zero /dev/tty; touch -d 2001-01-01 /dev/null; "
                           "python3 -c \"import os; os.fchmod(0, 0o600)\"; "
                           "echo written > /dev/null && echo ok");
  bool changed = false;
  for (int i = 0; i < 3; ++i) {
    struct stat now {};
    ASSERT_EQ(stat(nodes[i], &now), 0);
    EXPECT_EQ(now.st_mode, before[i].st_mode) << nodes[i];
    EXPECT_EQ(now.st_mtime, before[i].st_mtime) << nodes[i];
    if (now.st_mode != before[i].st_mode) {
      changed = true;
      chmod(nodes[i], before[i].st_mode & 07777);  // the host must go on working
    }
  }
  EXPECT_FALSE(changed);
  EXPECT_NE(r.out.find("ok"), std::string::npos) << "the devices must still work: " << r.err;
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << r.err;
}

// A file open for reading and writing cannot be relayed (no pipe is both), and through it the
// command could change the file's mode: srt refuses it, naming it.
TEST_P(PersistenceTest, AFileOpenForReadingAndWritingIsRefused) {
  run().WriteFile("../both.txt", "KEEP\n");
  RunResult r = Redirected(run(), "<> " + run().Path("../both.txt"), "chmod 777 /proc/self/fd/0");
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_NE(r.err.find("standard input is open for reading and writing"), std::string::npos)
      << r.err;
  struct stat st {};
  ASSERT_EQ(stat(run().Path("../both.txt").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 07777, 0777u);
}

// --- Git: nothing a sandbox writes may make the host user's git run code or leave the repository.

// The fsmonitor hook runs on every `git status` (a shell prompt, an IDE): the canary of every
// attack below is a marker file it would create.
constexpr char kFsmonitor[] = "[core]\n\tfsmonitor = touch \"$MARKER\"\n";

// git on the host, as the user, with the commit identity set, and MARKER naming the canary
// that a planted program creates.
RunResult HostGit(Runner& run, std::vector<std::string> args, const std::string& cwd = "") {
  std::vector<std::string> argv = {"git", "-c", "user.name=u", "-c", "user.email=u@example.com"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run.Host(argv, cwd, {"MARKER=" + run.Path("MARKER")});
}

// The canary itself: a planted fsmonitor does run in the host's `git status` (else no test
// below could fail).
TEST_P(PersistenceTest, TheCanaryOfTheGitTestsFires) {
  run().MakeDir("canary");
  ASSERT_EQ(HostGit(run(), {"init", "-q", run().Path("canary")}).exit_code, 0);
  run().WriteFile("canary/.git/config", kFsmonitor);
  HostGit(run(), {"-C", run().Path("canary"), "status", "--porcelain"});
  EXPECT_TRUE(run().Exists("MARKER"));
}

// Every line of `out` that ends in "=0": the steps of a hostile script that succeeded.
std::vector<std::string> Succeeded(const std::string& out) {
  std::vector<std::string> ok;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    if (line.size() > 2 && line.compare(line.size() - 2, 2, "=0") == 0) ok.push_back(line);
    start = end + 1;
  }
  return ok;
}

TEST_P(PersistenceTest, NoNewRepositoryAppearsInAWriteRoot) {
  const std::string marker = run().Path("MARKER");
  RunResult r = run().Srt(
      kWriteCwd,
      {"sh", "-c",
       "mkdir sub && git init -q sub; echo init=$?\n"
       "mkdir .git; echo mkdir=$?\n"
       "echo 'gitdir: /tmp/x' > .git; echo gitfile=$?\n"
       "ln -s /tmp .git; echo symlink=$?\n"
       "mkdir d && mkdir d/.GIT; echo case=$?\n"
       "mkdir d/x && mv d/x d/.git; echo rename=$?\n"
       "mkdir -p bare/objects bare/refs && echo 'ref: refs/heads/main' > bare/HEAD; echo bare=$?\n"
       "mkdir -p wt && echo 'ref: refs/heads/main' > wt/HEAD && echo /x > wt/commondir; "
       "echo commondir=$?\n"
       "mkdir -p m/refs m/objects m/x && echo 'ref: refs/heads/main' > m/x/HEAD && "
       "mv m/x/HEAD m/HEAD; echo moved=$?\n"
       "mkdir -p n/objects n/refs n/y && ln -s refs/heads/main n/y/HEAD && mv n/y/HEAD n/HEAD; "
       "echo linked=$?"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Succeeded(r.out), std::vector<std::string>{}) << r.out << r.err;
  for (const char* path :
       {"sub/.git", ".git", "d/.GIT", "d/.git", "bare/HEAD", "m/HEAD", "n/HEAD"}) {
    EXPECT_FALSE(run().Exists(path)) << path;
  }
  // The host's git finds no repository anywhere in the tree.
  for (const char* dir : {".", "sub", "d", "bare", "wt", "m", "n"}) {
    RunResult git = HostGit(run(), {"-C", run().Path(dir), "rev-parse", "--git-dir"});
    EXPECT_NE(git.exit_code, 0) << dir << " is a repository: " << git.out;
  }
  EXPECT_NE(access(marker.c_str(), F_OK), 0);
}

// A repository the user made, at the top and far below the mandatory-deny search depth.
TEST_P(PersistenceTest, AnExistingRepositoryCannotBeTurnedAgainstTheHost) {
  for (const char* repo : {".", "a/b/c/d/e"}) {
    run().MakeDir(repo);
    ASSERT_EQ(HostGit(run(), {"init", "-q", run().Path(repo)}).exit_code, 0);
    ASSERT_EQ(HostGit(run(), {"-C", run().Path(repo), "commit", "-q", "--allow-empty", "-m", "1"})
                  .exit_code,
              0);
  }
  const std::string marker = run().Path("MARKER");
  std::string script = "export MARKER=" + marker + "\n";
  for (const char* repo : {".", "a/b/c/d/e"}) {
    const std::string g = std::string(repo) + "/.git";
    const std::string p = std::string(repo) + " ";
    script += "printf '" + std::string(kFsmonitor) + "' >> " + g + "/config; echo " + p +
              "config=$?\n"
              "git -C " +
              repo + " config core.fsmonitor 'touch $MARKER'; echo " + p +
              "git-config=$?\n"
              "printf '#!/bin/sh\\ntouch $MARKER\\n' > " +
              g + "/hooks/pre-commit; echo " + p +
              "hook=$?\n"
              "chmod +x " +
              g + "/hooks/pre-commit.sample; echo " + p +
              "hook-chmod=$?\n"
              "mv " +
              g + "/hooks " + g + "/hooks.old && mkdir " + g + "/hooks; echo " + p +
              "hooks-dir=$?\n"
              "echo /tmp > " +
              g + "/commondir; echo " + p +
              "commondir=$?\n"
              "printf '" +
              kFsmonitor + "' > " + g + "/config.worktree; echo " + p +
              "config.worktree=$?\n"
              "echo /tmp > " +
              g + "/objects/info/alternates; echo " + p +
              "alternates=$?\n"
              "ln " +
              g + "/config " + repo + "/config-link; echo " + p +
              "link=$?\n"
              "cp " +
              g + "/config x.cfg && printf '" + kFsmonitor + "' >> x.cfg && mv x.cfg " + g +
              "/config; echo " + p +
              "replace=$?\n"
              "mkdir -p " +
              g + "/modules/s/objects " + g + "/modules/s/refs && echo 'ref: x' > " + g +
              "/modules/s/HEAD; echo " + p + "module=$?\n";
  }
  RunResult r = run().Srt(kWriteCwd, {"sh", "-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Succeeded(r.out), std::vector<std::string>{}) << r.out << r.err;
  // What the user does next: status (and a prompt, an IDE) and a commit run nothing planted.
  for (const char* repo : {".", "a/b/c/d/e"}) {
    EXPECT_EQ(HostGit(run(), {"-C", run().Path(repo), "status", "--porcelain"}).exit_code, 0);
    EXPECT_EQ(HostGit(run(), {"-C", run().Path(repo), "commit", "-q", "--allow-empty", "-m", "2"})
                  .exit_code,
              0);
  }
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "a planted git program ran on the host";
}

// --- The write guard against a hostile command (each case a way past it that was found).

const char* kNestedWriteCwd =
    R"({"allowNestedUserNamespaces": true, "filesystem": {"allowWrite": ["."]}})";

// Python in the sandbox, for the calls a shell has no command for.
std::string Py(const std::string& code) { return "python3 -c '" + code + "'"; }
std::string BindSocket(const std::string& name) {
  return Py("import socket; a, b = socket.socketpair(socket.AF_UNIX); a.bind(\"" + name + "\")");
}

// bind(2) names an AF_UNIX socket in the filesystem, and git takes a socket named `refs` for
// the directory: the last part of a bare repository, or a protected name.
TEST_P(PersistenceTest, ASocketCannotCompleteARepositoryNorTakeAProtectedName) {
  run().MakeDir("r");
  ASSERT_EQ(HostGit(run(), {"init", "-q", run().Path("r")}).exit_code, 0);
  RunResult r = run().Srt(
      kWriteCwd,
      {"sh", "-c",
       "mkdir src && cd src && printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n"
       "\\tfsmonitor = touch \"$MARKER\"\\n' > config && echo 'ref: refs/heads/main' > HEAD && "
       "mkdir objects && " +
           BindSocket("refs") + "; echo refs-socket=$?; cd ..\n" + BindSocket(".bashrc") +
           "; echo bashrc=$?\n" + BindSocket("src2/.git") + "; echo git=$?\n" +
           // A protected repository stops being one once its HEAD moves away; its worktree then
           // gets the parts of another.
           "mv r/.git/HEAD r/.git/HEAD.orig; cd r && printf '[core]\\n\\tfsmonitor = touch "
           "\"$MARKER\"\\n' > config && echo 'ref: refs/heads/main' > HEAD && ln -s .git/objects "
           "objects && " +
           BindSocket("refs") + "; echo root-refs=$?; cd ..\n" + BindSocket("ok.sock") +
           " && echo legit-bind=fine"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Succeeded(r.out), std::vector<std::string>{}) << r.out << r.err;
  EXPECT_NE(r.out.find("legit-bind=fine"), std::string::npos)
      << "a bind must still work: " << r.err;
  EXPECT_TRUE(run().Exists("ok.sock"));
  for (const char* p : {"src/refs", ".bashrc", "r/refs"}) EXPECT_FALSE(run().Exists(p)) << p;
  for (const char* dir : {"src", "r"}) {
    HostGit(run(), {"-C", run().Path(dir), "status", "--porcelain"});
  }
  EXPECT_FALSE(run().Exists("MARKER")) << "a planted git program ran on the host";
}

// The object store's `info` (where alternates live) and the stores themselves cannot be
// replaced: by a directory moved in, or by a symlink swapped in with RENAME_EXCHANGE.
TEST_P(PersistenceTest, GitsObjectStoreCannotBeSwappedOrPointedElsewhere) {
  ASSERT_EQ(HostGit(run(), {"init", "-q", run().root()}).exit_code, 0);
  ASSERT_EQ(
      HostGit(run(), {"-C", run().root(), "commit", "-q", "--allow-empty", "-m", "1"}).exit_code,
      0);
  const std::string exchange =
      "import ctypes; c = ctypes.CDLL(None); "
      "exit(0 if c.syscall(316, -100, b\"objects\", -100, b\"objects.evil\", 2) == 0 else 1)";
  RunResult r = run().Srt(
      kWriteCwd, {"sh", "-c",
                  "cd .git/objects && mv info i2 && echo /tmp/elsewhere > i2/alternates && "
                  "mv i2 info; echo alternates-dir=$?; cd ../..\n"
                  "cd .git && ln -s /tmp objects.evil && " +
                      Py(exchange) + "; echo exchange=$?\n" +
                      "ln -s /tmp refs.evil && mv -T refs.evil refs; echo refs=$?"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Succeeded(r.out), std::vector<std::string>{}) << r.out << r.err;
  EXPECT_FALSE(run().Exists(".git/objects/info/alternates"));
  struct stat st {};
  ASSERT_EQ(lstat(run().Path(".git/objects").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode)) << ".git/objects was swapped";
  ASSERT_EQ(lstat(run().Path(".git/refs").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode)) << ".git/refs was swapped";
}

// What the guard cannot look at must not be taken as allowed: a directory made unreadable
// (chmod 000) around a write, a path longer than the kernel will name.
TEST_P(PersistenceTest, WhatTheGuardCannotSeeIsRefused) {
  run().MakeDir("a/b/c/deep");  // deep enough that no read-only mount protects its repository
  ASSERT_EQ(HostGit(run(), {"init", "-q", run().Path("a/b/c/deep")}).exit_code, 0);
  const std::string chain =
      "import os\n"
      "d = os.open(\".\", os.O_RDONLY)\n"
      "top = os.open(\".\", os.O_RDONLY)\n"
      "try:\n"
      "  for i in range(20):\n"
      "    n = chr(97 + i) * 250\n"
      "    os.mkdir(n, dir_fd=d)\n"
      "    d = os.open(n, os.O_RDONLY, dir_fd=d)\n"
      "  os.rename(\"a/b/c/deep\", \"deep\", src_dir_fd=top, dst_dir_fd=d)\n"
      "  print(\"moved-deep=0\")\n"
      "except OSError as e:\n"
      "  print(\"deep=%d\" % e.errno)\n";
  run().WriteFile("chain.py", chain);
  RunResult r = run().Srt(
      kWriteCwd,
      {"sh", "-c",
       "cd a/b/c/deep && exec 3<.git/config && chmod 000 . && "
       "(exec 4>/proc/self/fd/3 && printf '[core]\\n\\tfsmonitor = touch \"$MARKER\"\\n' >&4); "
       "echo config-through-fd=$?; cd .. && chmod 755 deep; cd ../../..\n"
       "cd a/b/c/deep/.git/hooks && chmod 000 .. && printf '#!/bin/sh\\ntouch \"$MARKER\"\\n' > "
       "pre-commit; echo hook=$?; chmod 755 ..; cd /\n"
       "cd " +
           run().root() + " && python3 chain.py"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Succeeded(r.out), std::vector<std::string>{}) << r.out << r.err;
  EXPECT_FALSE(run().Exists("a/b/c/deep/.git/hooks/pre-commit"));
  chmod(run().Path("a/b/c/deep").c_str(), 0755);
  chmod(run().Path("a/b/c/deep/.git").c_str(), 0755);
  HostGit(run(), {"-C", run().Path("a/b/c/deep"), "status", "--porcelain"});
  HostGit(run(), {"-C", run().Path("a/b/c/deep"), "commit", "-q", "--allow-empty", "-m", "x"});
  EXPECT_FALSE(run().Exists("MARKER")) << "a planted git program ran on the host";
}

// allowNestedUserNamespaces lets the command mount: a write root bound elsewhere is still that
// write root, and two calls of a nested namespace are judged one after the other.
TEST_P(PersistenceTest, ANestedMountNamespaceDoesNotMoveTheRules) {
  if (root()) {  // nesting is refused for a root caller (seccomp_srt_test)
    EXPECT_EQ(run().Srt(kNestedWriteCwd, {"true"}).exit_code, 125);
    return;
  }
  RunResult r = run().Srt(
      kNestedWriteCwd,
      {"sh", "-c",
       "unshare -Urm sh -c 'mount --rbind " + run().root() +
           " /mnt && cd /mnt && echo evil > .bashrc; echo bashrc=$?; mkdir nest && git init -q "
           "nest; echo init=$?; mkdir plain && echo ok > plain/file && echo plain-write=fine'"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Succeeded(r.out), std::vector<std::string>{}) << r.out << r.err;
  EXPECT_NE(r.out.find("plain-write=fine"), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(run().Exists(".bashrc"));
  EXPECT_FALSE(run().Exists("nest/.git"));

  const std::string race =
      "import os, threading\n"
      "os.makedirs(\"d/objects\")\n"
      "hits = 0\n"
      "def head():\n"
      "  try: os.close(os.open(\"d/HEAD\", os.O_CREAT | os.O_WRONLY))\n"
      "  except OSError: pass\n"
      "def refs():\n"
      "  try: os.mkdir(\"d/refs\")\n"
      "  except OSError: pass\n"
      "for i in range(200):\n"
      "  t = [threading.Thread(target=f) for f in (head, refs)]\n"
      "  [x.start() for x in t]\n"
      "  [x.join() for x in t]\n"
      "  if os.path.exists(\"d/HEAD\") and os.path.isdir(\"d/refs\"): hits += 1\n"
      "  for undo in (lambda: os.unlink(\"d/HEAD\"), lambda: os.rmdir(\"d/refs\")):\n"
      "    try: undo()\n"
      "    except OSError: pass\n"
      "print(\"raced %d\" % hits)\n";
  run().WriteFile("race.py", race);
  RunResult raced = run().Srt(kNestedWriteCwd, {"unshare", "-Ur", "python3", "race.py"}, "",
                              std::chrono::seconds(120));
  EXPECT_EQ(raced.exit_code, 0) << raced.err;
  EXPECT_NE(raced.out.find("raced 0"), std::string::npos) << raced.out << raced.err;
}

// An open that waits (a FIFO without its other end) must not stop the guard: the command's
// other calls go on, and srt ends when the command does.
TEST_P(PersistenceTest, AFifoThatNeverOpensDoesNotStopTheGuard) {
  RunResult r = run().Srt(
      kWriteCwd,
      {"sh", "-c",
       "mkfifo ff && (timeout 3 " + Py("import os; os.open(\"ff\", os.O_RDONLY | os.O_CREAT)") +
           " &) ; sleep 0.5; touch after && echo after=fine\n"
           "(timeout 3 " +
           Py("import os; f = os.open(\"ff\", os.O_PATH); "
              "os.open(\"/proc/self/fd/%d\" % f, os.O_WRONLY)") +
           " &) ; sleep 0.5; touch after2 && echo after2=fine; wait"},
      "", std::chrono::seconds(20));
  EXPECT_NE(r.out.find("after=fine"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("after2=fine"), std::string::npos) << r.out << r.err;
}

// Ordinary work in a repository still works inside: status, add, commit, branch, checkout,
// stash and a fetch from its remote (a repository outside the write root).
TEST_P(PersistenceTest, OrdinaryGitWorkStillWorksInside) {
  const std::string remote = run().root() + "/../remote.git";
  ASSERT_EQ(HostGit(run(), {"init", "-q", "--bare", remote}).exit_code, 0);
  ASSERT_EQ(HostGit(run(), {"clone", "-q", remote, run().Path("work")}).exit_code, 0);
  ASSERT_EQ(HostGit(run(), {"-C", run().Path("work"), "commit", "-q", "--allow-empty", "-m", "1"})
                .exit_code,
            0);
  ASSERT_EQ(HostGit(run(), {"-C", run().Path("work"), "push", "-q", "origin", "HEAD"}).exit_code,
            0);
  RunResult r = run().Srt(
      kWriteCwd,
      {"sh", "-c",
       "set -e; cd work; export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=a "
       "GIT_COMMITTER_EMAIL=a@x; echo one > f; git add f; git commit -qm add; git branch b; "
       "git checkout -q b; echo two > f; git stash -q; git stash pop -q; git commit -qam two; "
       "git checkout -q -; git merge -q b; git fetch -q origin; git status --porcelain; "
       "git log --oneline | wc -l"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "3\n") << r.err;
}

SRT_INSTANTIATE(PersistenceTest);

}  // namespace
}  // namespace srt::it
