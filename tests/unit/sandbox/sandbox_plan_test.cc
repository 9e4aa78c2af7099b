// SPDX-License-Identifier: Apache-2.0
// Sandbox::Start's decisions, from facts given here instead of the host's (sandbox_plan.h):
// each case prints the whole plan and compares it with its golden text.
#include "sandbox_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

namespace srt::facade {
namespace {

std::string Describe(const SandboxPlan& plan) {
  std::string out;
  auto line = [&](const std::string& s) { out += s + "\n"; };
  line(std::string("filter: unix=") + (plan.filter.allow_unix_sockets ? "allowed" : "denied") +
       " namespaces=" + (plan.filter.allow_namespaces ? "allowed" : "denied") +
       " xattr-writes=" + (plan.filter.deny_xattr_writes ? "denied" : "allowed"));
  for (const std::string& e : plan.environment) line("env " + e);
  line("tmpdir " + (plan.tmpdir.path.empty() ? std::string("-") : plan.tmpdir.path) +
       (plan.tmpdir.in_kept_parent ? " (in its kept parent)" : ""));
  line("guard " + std::string(plan.guard.calls.empty() ? "off" : "on") +
       " flags=" + std::to_string(plan.guard.flags));
  for (const std::string& r : plan.guard.roots) line("guard root " + r);
  for (const std::string& r : plan.guard.private_roots) line("guard private " + r);
  for (const std::string& w : plan.writable) line("writable " + w);
  line("nofile " + (plan.raise_nofile ? std::to_string(*plan.raise_nofile) : std::string("-")) +
       " command " +
       (plan.command_nofile ? std::to_string(plan.command_nofile->first) + "/" +
                                  std::to_string(plan.command_nofile->second)
                            : std::string("-")));
  for (const std::string& n : plan.notes) line("note " + n);
  return out;
}

HostFacts Facts() {
  HostFacts f;
  f.home = "/home/u";
  f.cwd = "/home/u/p";
  f.euid = 1000;
  f.environment = {"PATH=/usr/bin:/bin", "TMPDIR=/var/tmp", "SANDBOX_RUNTIME=0"};
  f.random_name = "0123456789abcdef";
  f.nofile = std::make_pair(1024, 524288);
  return f;
}

policy::Policy ProjectPolicy() {
  policy::Policy p;
  p.write_roots = {"/home/u/p"};
  p.writable_bind_sources = {"/srv/cache"};
  p.guard_roots = {"/home/u/p"};
  p.tmpdir_parent = "/tmp";
  return p;
}

TEST(SandboxPlanTest, ATypicalProjectSandbox) {
  SandboxOptions options;
  EXPECT_EQ(Describe(PlanSandbox(options, Facts(), ProjectPolicy())),
            "filter: unix=denied namespaces=denied xattr-writes=allowed\n"
            "env PATH=/usr/bin:/bin\n"
            "env SANDBOX_RUNTIME=1\n"
            "env TMPDIR=/tmp/srt-1000/0123456789abcdef\n"
            "tmpdir /tmp/srt-1000/0123456789abcdef (in its kept parent)\n"
            "guard on flags=0\n"
            "guard root /home/u/p\n"
            "guard private /tmp/srt-1000\n"
            "writable /home/u/p\n"
            "writable /srv/cache\n"
            "nofile 65536 command 1024/524288\n"
            "note TMPDIR /tmp/srt-1000/0123456789abcdef: in a private tmpfs on /tmp/srt-1000 (kept "
            "for the next sandboxes, mode 0700), gone afterwards\n");
}

// The kept parent is someone else's, a symlink, or open to others: srt does not mount on it and
// falls back to a TMPDIR of its own on a directory made and removed for this sandbox alone.
TEST(SandboxPlanTest, AnUnusableKeptParentGetsATmpdirOfItsOwn) {
  HostFacts facts = Facts();
  facts.kept_tmpdir_parent_unusable = true;
  const SandboxPlan plan = PlanSandbox(SandboxOptions{}, facts, ProjectPolicy());
  EXPECT_EQ(plan.tmpdir.path, "/tmp/srt-0123456789abcdef");
  EXPECT_FALSE(plan.tmpdir.in_kept_parent);
  EXPECT_EQ(plan.guard.private_roots, std::vector<std::string>{"/tmp/srt-0123456789abcdef"});
  EXPECT_EQ(plan.warnings,
            std::vector<std::string>{
                "/tmp/srt-1000 is not a directory of uid 1000 with mode 0700, so srt does not use "
                "it: TMPDIR /tmp/srt-0123456789abcdef is a private tmpfs on a directory made now "
                "and removed afterwards (remove /tmp/srt-1000, or make it yours with mode 0700)"});
  // A usable one, or none (srt-agent makes it), is used.
  facts.kept_tmpdir_parent_unusable = false;
  EXPECT_TRUE(PlanSandbox(SandboxOptions{}, facts, ProjectPolicy()).tmpdir.in_kept_parent);
}

// The command enters its working directory after the mounts: a tmpfs on the kept parent would
// hide one at or below it (a nested srt started in its outer sandbox's TMPDIR).
TEST(SandboxPlanTest, AWorkingDirectoryInTheKeptParentGetsATmpdirOfItsOwn) {
  policy::Policy p = ProjectPolicy();
  for (const char* cwd : {"/tmp/srt-1000", "/tmp/srt-1000/0123/proj"}) {
    p.cwd = cwd;
    const SandboxPlan plan = PlanSandbox(SandboxOptions{}, Facts(), p);
    EXPECT_EQ(plan.tmpdir.path, "/tmp/srt-0123456789abcdef") << cwd;
    EXPECT_FALSE(plan.tmpdir.in_kept_parent) << cwd;
    EXPECT_EQ(plan.guard.private_roots, std::vector<std::string>{"/tmp/srt-0123456789abcdef"});
    EXPECT_TRUE(plan.warnings.empty()) << cwd;
    EXPECT_EQ(plan.notes, std::vector<std::string>{
                              "TMPDIR /tmp/srt-0123456789abcdef: in a private tmpfs on a "
                              "directory made now and removed afterwards, not on /tmp/srt-1000, "
                              "which holds the working directory"});
  }
  for (const char* cwd : {"/tmp/srt-10000", "/tmp", "/home/u/p"}) {
    p.cwd = cwd;
    EXPECT_TRUE(PlanSandbox(SandboxOptions{}, Facts(), p).tmpdir.in_kept_parent) << cwd;
  }
}

TEST(SandboxPlanTest, TheCallersEnvironmentReplacesSrtsOwn) {
  SandboxOptions options;
  options.env = std::vector<std::string>{"A=1", "SANDBOX_RUNTIME=x"};
  policy::Policy p;
  p.filesystem_disabled = true;
  EXPECT_EQ(Describe(PlanSandbox(options, Facts(), p)),
            "filter: unix=denied namespaces=denied xattr-writes=allowed\n"
            "env A=1\n"
            "env SANDBOX_RUNTIME=1\n"
            "tmpdir -\n"
            "guard off flags=0\n"
            "nofile 65536 command 1024/524288\n");
}

TEST(SandboxPlanTest, NestedNamespacesAsRootDenyXattrWritesAndGitConfigIsFlagged) {
  HostFacts facts = Facts();
  facts.euid = 0;
  facts.nofile = std::make_pair(65536, 65536);  // high enough already: nothing raised
  policy::Policy p = ProjectPolicy();
  p.allow_nested_user_namespaces = true;
  p.allow_all_unix_sockets = true;
  p.allow_git_config = true;
  p.tmpdir_parent.clear();
  EXPECT_EQ(Describe(PlanSandbox(SandboxOptions{}, facts, p)),
            "filter: unix=allowed namespaces=allowed xattr-writes=denied\n"
            "env PATH=/usr/bin:/bin\n"
            "env TMPDIR=/var/tmp\n"
            "env SANDBOX_RUNTIME=1\n"
            "tmpdir -\n"
            "guard on flags=" +
                std::to_string(wire::kGuardAllowGitConfig) +
                "\n"
                "guard root /home/u/p\n"
                "writable /home/u/p\n"
                "writable /srv/cache\n"
                "nofile - command -\n");
}

// Found by a hostile review: a root caller's command, the host's uid 0, mounted a cgroup
// hierarchy in a user namespace of its own and lifted its own limits (and could write the
// host's top cpuset), and made setuid copies through overlayfs. Nesting is for unprivileged
// callers only.
TEST(SandboxPlanTest, NestedNamespacesAreRefusedForARootCaller) {
  policy::Policy p = ProjectPolicy();
  p.allow_nested_user_namespaces = true;
  HostFacts root = Facts();
  root.euid = 0;
  Result<void> refused = VetNesting(p, root);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code(), Errc::kPermissionDenied);
  EXPECT_NE(
      refused.error().message().find("allowNestedUserNamespaces is refused for a root caller"),
      std::string::npos);
  HostFacts user = Facts();
  user.euid = 1000;
  EXPECT_TRUE(VetNesting(p, user).has_value());
  p.allow_nested_user_namespaces = false;
  EXPECT_TRUE(VetNesting(p, root).has_value());
}

TEST(SandboxPlanTest, ASoftLimitAtTheHardLimitIsNotRaised) {
  HostFacts facts = Facts();
  facts.nofile = std::make_pair(4096, 4096);
  EXPECT_FALSE(PlanSandbox(SandboxOptions{}, facts, policy::Policy{}).raise_nofile);
  facts.nofile = std::make_pair(1024, 4096);
  SandboxPlan plan = PlanSandbox(SandboxOptions{}, facts, policy::Policy{});
  ASSERT_TRUE(plan.raise_nofile);
  EXPECT_EQ(*plan.raise_nofile, 4096u);
  facts.nofile.reset();  // getrlimit failed
  EXPECT_FALSE(PlanSandbox(SandboxOptions{}, facts, policy::Policy{}).raise_nofile);
}

// Root may raise its hard limit too (the proxy's ten thousand tunnels need twice as many
// descriptors); the command gets the limits srt started with.
TEST(SandboxPlanTest, RootRaisesPastItsHardLimit) {
  HostFacts facts = Facts();
  facts.euid = 0;
  facts.nofile = std::make_pair(20000, 20000);
  SandboxPlan plan = PlanSandbox(SandboxOptions{}, facts, policy::Policy{});
  ASSERT_TRUE(plan.raise_nofile);
  EXPECT_EQ(*plan.raise_nofile, kProxyNofile);
  EXPECT_EQ(plan.command_nofile, std::make_pair(uint64_t{20000}, uint64_t{20000}));
  facts.nofile = std::make_pair(kProxyNofile, kProxyNofile);
  EXPECT_FALSE(PlanSandbox(SandboxOptions{}, facts, policy::Policy{}).raise_nofile);
}

// The executables srt runs on the host, vetted from what the facts say of them.
TEST(SandboxPlanTest, AnExecutableASandboxCouldReplaceIsRefused) {
  ExecutableFact bwrap{"/usr/bin/bwrap", "/usr/bin/bwrap", 0, true, false};
  const std::vector<std::string> writable = {"/home/u/p", "/srv/cache"};
  auto vet = [&](const ExecutableFact& f) {
    Result<std::string> r = VetExecutable(f, "bwrap", writable);
    return r ? "ok " + *r : r.error().message();
  };
  EXPECT_EQ(vet(bwrap), "ok /usr/bin/bwrap");

  ExecutableFact planted{"/home/u/p/bin/bwrap", "/home/u/p/bin/bwrap", 0, true, false};
  EXPECT_EQ(vet(planted),
            "bwrap '/home/u/p/bin/bwrap' lies inside the write root '/home/u/p': a sandboxed "
            "command could replace it and run on the host next time. Install it elsewhere or "
            "narrow allowWrite.");
  // Judged by where the link leads, named by what was found.
  ExecutableFact linked{"/usr/local/bin/bwrap", "/srv/cache/bwrap", 0, true, false};
  EXPECT_EQ(vet(linked),
            "bwrap '/srv/cache/bwrap' lies inside the write root '/srv/cache': a sandboxed "
            "command could replace it and run on the host next time. Install it elsewhere or "
            "narrow allowWrite.");
  ExecutableFact shared{"/opt/bwrap", "/opt/bwrap", 0, true, true};
  EXPECT_EQ(vet(shared), "bwrap '/opt/bwrap' is writable by other users; refusing to run it");
  ExecutableFact not_executable{"/opt/bwrap", "/opt/bwrap", 0, false, false};
  EXPECT_EQ(vet(not_executable), "bwrap '/opt/bwrap' is not an executable file");
  ExecutableFact missing{"/opt/none", "/opt/none", ENOENT, false, false};
  EXPECT_EQ(vet(missing), "bwrap '/opt/none': No such file or directory");
}

std::string GitEnv(std::vector<std::string> environment, const std::vector<std::string>& dirs) {
  AddGitSafeDirectories(environment, dirs);
  std::string out;
  for (const std::string& e : environment) out += e + "\n";
  return out;
}

TEST(SandboxPlanTest, GitSafeDirectoriesBecomeGitConfigVariables) {
  EXPECT_EQ(GitEnv({"PATH=/bin"}, {"/w/repo/", "/", "/w/repo", "~/src"}),
            "PATH=/bin\n"
            "GIT_CONFIG_KEY_0=safe.directory\nGIT_CONFIG_VALUE_0=/w/repo\n"
            "GIT_CONFIG_KEY_1=safe.directory\nGIT_CONFIG_VALUE_1=/w/repo/*\n"
            "GIT_CONFIG_KEY_2=safe.directory\nGIT_CONFIG_VALUE_2=/\n"
            "GIT_CONFIG_KEY_3=safe.directory\nGIT_CONFIG_VALUE_3=/*\n"
            "GIT_CONFIG_KEY_4=safe.directory\nGIT_CONFIG_VALUE_4=~/src\n"
            "GIT_CONFIG_KEY_5=safe.directory\nGIT_CONFIG_VALUE_5=~/src/*\n"
            "GIT_CONFIG_COUNT=6\n");
  EXPECT_EQ(GitEnv({"PATH=/bin"}, {}), "PATH=/bin\n");
}

TEST(SandboxPlanTest, GitSafeDirectoriesContinueAnInheritedCountAndRespectZero) {
  EXPECT_EQ(GitEnv({"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=1",
                    "GIT_CONFIG_KEY_1=c.d", "GIT_CONFIG_VALUE_1=2"},
                   {"/w"}),
            "GIT_CONFIG_KEY_0=a.b\nGIT_CONFIG_VALUE_0=1\nGIT_CONFIG_KEY_1=c.d\n"
            "GIT_CONFIG_VALUE_1=2\n"
            "GIT_CONFIG_KEY_2=safe.directory\nGIT_CONFIG_VALUE_2=/w\n"
            "GIT_CONFIG_KEY_3=safe.directory\nGIT_CONFIG_VALUE_3=/w/*\n"
            "GIT_CONFIG_COUNT=4\n");
  // The user's explicit "no environment git config".
  EXPECT_EQ(GitEnv({"GIT_CONFIG_COUNT=0"}, {"/w"}), "GIT_CONFIG_COUNT=0\n");
  // Not a count (git would refuse it anyway): numbering starts at 0.
  EXPECT_EQ(GitEnv({"GIT_CONFIG_COUNT=2x"}, {"/w"}),
            "GIT_CONFIG_KEY_0=safe.directory\nGIT_CONFIG_VALUE_0=/w\n"
            "GIT_CONFIG_KEY_1=safe.directory\nGIT_CONFIG_VALUE_1=/w/*\n"
            "GIT_CONFIG_COUNT=2\n");
}

TEST(SandboxPlanTest, MoreThanEightSafeDirectoriesBecomeOneWildcard) {
  std::vector<std::string> dirs;
  for (int i = 0; i < 9; ++i) dirs.push_back("/w" + std::to_string(i));
  EXPECT_EQ(GitEnv({}, dirs),
            "GIT_CONFIG_KEY_0=safe.directory\nGIT_CONFIG_VALUE_0=*\nGIT_CONFIG_COUNT=1\n");
  dirs.pop_back();
  EXPECT_NE(GitEnv({}, dirs).find("GIT_CONFIG_COUNT=16\n"), std::string::npos);
}

TEST(SandboxPlanTest, AWarmSandboxsCommandKeepsSrtsVariables) {
  const std::vector<std::string> base = {"PATH=/bin", "TMPDIR=/tmp", "TOKEN=real", "GONE=1"};
  // What srt planned: TMPDIR changed, TOKEN masked, GONE removed, a proxy variable added.
  const std::vector<std::string> planned = {"PATH=/bin", "TMPDIR=/tmp/srt-x", "TOKEN=sentinel",
                                            "HTTPS_PROXY=http://127.0.0.1:9"};
  const std::vector<std::string> given = {
      "PATH=/usr/bin",           "TMPDIR=/mine", "TOKEN=leak", "GONE=back",
      "HTTPS_PROXY=http://evil", "NEW=1",        "SECRET=2"};
  std::vector<std::string> env = ExecEnvironment(given, base, planned, {"TOKEN", "SECRET"});
  std::sort(env.begin(), env.end());
  EXPECT_EQ(env,
            (std::vector<std::string>{"HTTPS_PROXY=http://127.0.0.1:9", "NEW=1", "PATH=/usr/bin",
                                      "TMPDIR=/tmp/srt-x", "TOKEN=sentinel"}));
}

}  // namespace
}  // namespace srt::facade
