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
// kernel refuses them; with allowNestedUserNamespaces a root caller's nested namespace maps the
// host's root, where they would be real, so srt refuses every xattr write there.
TEST_P(PersistenceTest, NoFileCapabilities) {
  run().WriteFile("prog", "#!/bin/sh\n");
  EXPECT_EQ(Errno(kWriteCwd, {"setxattr", "setxattr", "prog", "security.capability"}), EPERM);
  const char* nested =
      R"({"allowNestedUserNamespaces": true, "filesystem": {"allowWrite": ["."]}})";
  for (const char* call : {"setxattr", "lsetxattr", "fsetxattr"}) {
    RunResult r = run().Srt(
        nested, {"unshare", "-r", ProbeBinary(), "setxattr", call, "prog", "security.capability"});
    if (root()) {
      EXPECT_EQ(r.exit_code, EPERM) << call << ": " << r.err;
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

// --- Git: nothing a sandbox writes may make the host user's git run code or leave the repository.

// The fsmonitor hook runs on every `git status` (a shell prompt, an IDE): the canary of every
// attack below is a marker file it would create.
constexpr char kFsmonitor[] = "[core]\n\tfsmonitor = touch \"$MARKER\"\n";

// git on the host, as the user, with the commit identity set.
RunResult HostGit(Runner& run, std::vector<std::string> args, const std::string& cwd = "") {
  std::vector<std::string> argv = {"git", "-c", "user.name=u", "-c", "user.email=u@example.com"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run.Host(argv, cwd);
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
