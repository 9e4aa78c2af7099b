// SPDX-License-Identifier: Apache-2.0
// Golden tests: the exact bwrap arguments, order included (bwrap applies them in order).
#include "bwrap/argv_builder.h"

#include <gtest/gtest.h>

#include "fake_fs_view.h"

namespace srt::bwrap {
namespace {

using policy::MountRule;
using policy::Policy;
using policy::View;
using Args = std::vector<std::string>;

const Layout kLayout{/*args_fd=*/9, /*init_exe_fd=*/8, /*init_ctl_fd=*/7, /*init_plan_fd=*/6,
                     /*caller_is_root=*/false};

Policy Base() {
  Policy p;
  p.cwd = "/w";
  p.tmpdir_parent = "/tmp";
  return p;
}

Args Namespaces() {
  return {"--new-session", "--die-with-parent",    "--unshare-user",
          "--unshare-pid", "--unshare-net",        "--unshare-ipc",
          "--unshare-uts", "--unshare-cgroup-try", "--as-pid-1"};
}

Args Concat(std::initializer_list<Args> parts) {
  Args out;
  for (const Args& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(ArgvBuilderTest, MinimalPolicy) {
  Invocation inv = BuildInvocation(Base(), kLayout);
  EXPECT_EQ(inv.args, Concat({Namespaces(),
                              {"--disable-userns", "--ro-bind", "/", "/", "--dev", "/dev", "--proc",
                               "/proc", "--chdir", "/w"}}));
  EXPECT_EQ(inv.argv, (Args{"bwrap", "--args", "9", "--", "/proc/self/fd/8", "init", "7", "6"}));
}

// Masked credential files come from srt's memfds, bound over every other mount (a masked file
// under a hidden directory is still shown, masked), before the synthetic directories turn
// read-only.
TEST(ArgvBuilderTest, MaskedFilesAreBoundFromDataAfterTheMounts) {
  Policy p = Base();
  p.mounts = {MountRule{"/home/u", View::kHiddenDir, ""}};
  p.masked_files = {{"/home/u/.netrc", 0}, {"/etc/token", 1}};
  Layout l = kLayout;
  l.masked_file_fds = {11, 12};
  Invocation inv = BuildInvocation(p, l);
  EXPECT_EQ(inv.args,
            Concat({Namespaces(),
                    {"--disable-userns", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                     "--tmpfs", "/home/u", "--ro-bind-data", "11", "/home/u/.netrc",
                     "--ro-bind-data", "12", "/etc/token", "--chdir", "/w"}}));
}

// A size for tmpfs mounts applies to those of hidden directories and to a /dev/shm of its own,
// not to a synthetic directory (read-only once its mount points exist); /dev, bwrap's tmpfs,
// becomes read-only last.
TEST(ArgvBuilderTest, TmpfsSizeBoundsEveryWritableTmpfs) {
  Policy p = Base();
  p.mounts = {MountRule{"/tmp", View::kHiddenDir, ""}, MountRule{"/opt", View::kSyntheticDir, ""},
              MountRule{"/w/secrets", View::kHiddenDir, ""}};
  Layout sized = kLayout;
  sized.tmpfs_bytes = 64 << 20;
  Invocation inv = BuildInvocation(p, sized);
  EXPECT_EQ(
      inv.args,
      Concat({Namespaces(),
              {"--disable-userns", "--ro-bind", "/",       "/",          "--dev",        "/dev",
               "--size",           "67108864",  "--tmpfs", "/dev/shm",   "--proc",       "/proc",
               "--size",           "67108864",  "--tmpfs", "/tmp",       "--tmpfs",      "/opt",
               "--size",           "67108864",  "--tmpfs", "/w/secrets", "--remount-ro", "/dev",
               "--chdir",          "/w"}}));
}

// Denied files (View::kHiddenFile) are not bwrap's: srt-agent covers them afterwards (bwrap
// re-reads the mount table after every bind, which made a thousand of them cost seconds).
TEST(ArgvBuilderTest, MountsFollowTheRootDevAndProcInPolicyOrder) {
  Policy p = Base();
  p.mounts = {MountRule{"/tmp", View::kHiddenDir, ""}, MountRule{"/w", View::kHostWritable, ""},
              MountRule{"/w/secrets", View::kHiddenDir, ""},
              MountRule{"/w/.env", View::kHiddenFile, ""},
              MountRule{"/w/secrets/public", View::kHostReadOnly, ""}};
  Invocation inv = BuildInvocation(p, kLayout);
  EXPECT_EQ(inv.args, Concat({Namespaces(),
                              {"--disable-userns",
                               "--ro-bind",
                               "/",
                               "/",
                               "--dev",
                               "/dev",
                               "--proc",
                               "/proc",
                               "--tmpfs",
                               "/tmp",
                               "--bind",
                               "/w",
                               "/w",
                               "--tmpfs",
                               "/w/secrets",
                               "--ro-bind",
                               "/w/secrets/public",
                               "/w/secrets/public",
                               "--chdir",
                               "/w"}}));
}

TEST(ArgvBuilderTest, RootDropsCapabilities) {
  Layout root = kLayout;
  root.caller_is_root = true;
  Invocation inv = BuildInvocation(Base(), root);
  EXPECT_EQ(inv.args, Concat({Namespaces(),
                              {"--cap-drop", "ALL", "--disable-userns", "--ro-bind", "/", "/",
                               "--dev", "/dev", "--proc", "/proc", "--chdir", "/w"}}));
}

// With nested user namespaces a root caller's command keeps CAP_SETFCAP alone (the kernel
// wants it to map the host's root into a new namespace), right after everything was dropped.
TEST(ArgvBuilderTest, RootWithNestedNamespacesKeepsOnlyCapSetfcap) {
  Layout root = kLayout;
  root.caller_is_root = true;
  root.keep_setfcap = true;
  Policy nested = Base();
  nested.allow_nested_user_namespaces = true;
  EXPECT_EQ(BuildInvocation(nested, root).args,
            Concat({Namespaces(),
                    {"--cap-drop", "ALL", "--cap-add", "CAP_SETFCAP", "--ro-bind", "/", "/",
                     "--dev", "/dev", "--proc", "/proc", "--chdir", "/w"}}));
  // An unprivileged caller has nothing to keep.
  Layout user = kLayout;
  user.keep_setfcap = true;
  EXPECT_EQ(BuildInvocation(nested, user).args,
            Concat({Namespaces(),
                    {"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--chdir", "/w"}}));
}

TEST(ArgvBuilderTest, NestedUserNamespacesKeepUsernsAndWeakerNestedBindsHostProc) {
  Policy nested = Base();
  nested.allow_nested_user_namespaces = true;
  EXPECT_EQ(BuildInvocation(nested, kLayout).args,
            Concat({Namespaces(),
                    {"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--chdir", "/w"}}));
  Policy weaker = Base();
  weaker.weaker_nested_sandbox = true;
  EXPECT_EQ(BuildInvocation(weaker, kLayout).args,
            Concat({Namespaces(),
                    {"--ro-bind", "/", "/", "--dev", "/dev", "--bind", "/proc", "/proc", "--chdir",
                     "/w"}}));
}

TEST(ArgvBuilderTest, DisabledFilesystemBindsTheRootWritable) {
  Policy p = Base();
  p.filesystem_disabled = true;
  EXPECT_EQ(BuildInvocation(p, kLayout).args,
            Concat({Namespaces(),
                    {"--disable-userns", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                     "--chdir", "/w"}}));
}

TEST(ArgvBuilderTest, EvilPathsPassThroughAsSingleArguments) {
  Policy p = Base();
  p.cwd = "/w/dir with spaces/--ro-bind";
  p.mounts = {MountRule{"/w/a\nb", View::kHostWritable, ""}};
  Invocation inv = BuildInvocation(p, kLayout);
  Args tail(inv.args.end() - 5, inv.args.end());
  EXPECT_EQ(tail,
            (Args{"--bind", "/w/a\nb", "/w/a\nb", "--chdir", "/w/dir with spaces/--ro-bind"}));
}

TEST(ArgvBuilderTest, SerializedArgsAreNulTerminatedWords) {
  EXPECT_EQ(SerializeArgs({"--bind", "/a", "/a"}), std::string("--bind\0/a\0/a\0", 13));
  EXPECT_EQ(SerializeArgs({}), "");
}

// The whole path from policy resolution to arguments, over a fake host, order included.
TEST(ArgvBuilderTest, GoldenFromSettings) {
  using namespace policy::fakefs;
  policy::FakeFsView fs({{"/tmp", kDir},
                         {"/home/u/.ssh", kDir},
                         {"/home/u/proj/src", kDir},
                         {"/home/u/proj/.env", kFile}});
  Settings s;
  s.filesystem.deny_read = {{"~/.ssh", false}, {"**/.env", false}};
  s.filesystem.allow_write = {{".", false}};
  Result<Policy> p = policy::ResolvePolicy(s, {"/home/u", "/home/u/proj"}, fs);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(BuildInvocation(*p, kLayout).args,
            Concat({Namespaces(),
                    {"--disable-userns", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                     "--tmpfs", "/home/u/.ssh", "--bind", "/home/u/proj", "/home/u/proj", "--chdir",
                     "/home/u/proj"}}));
}

// A bind whose target is missing on the host: the root becomes srt's tmpfs holding the host's
// top-level entries (symlinks copied), the bind goes last, and the root is made read-only after
// every mount point exists.
TEST(ArgvBuilderTest, GoldenBindToANewTopLevelDirectory) {
  using namespace policy::fakefs;
  policy::FakeFsView fs({{"/tmp", kDir},
                         {"/usr/bin", kDir},
                         {"/bin", Symlink("usr/bin")},
                         {"/dev/null", kSpecial},
                         {"/proc/1", kDir},
                         {"/srv/sessions/s1/.git/hooks", kDir},
                         {"/srv/ro", kDir}});
  Settings s;
  policy::Environment env{"/root", "/workspace", {}};
  env.binds = {{"/srv/sessions/s1", "/workspace", true}, {"/srv/ro", "/data/ro", false}};
  Result<Policy> p = policy::ResolvePolicy(s, env, fs);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(BuildInvocation(*p, kLayout).args, Concat({Namespaces(),
                                                       {"--disable-userns",
                                                        "--tmpfs",
                                                        "/",
                                                        "--dev",
                                                        "/dev",
                                                        "--proc",
                                                        "/proc",
                                                        "--symlink",
                                                        "usr/bin",
                                                        "/bin",
                                                        "--ro-bind",
                                                        "/srv",
                                                        "/srv",
                                                        "--ro-bind",
                                                        "/tmp",
                                                        "/tmp",
                                                        "--ro-bind",
                                                        "/usr",
                                                        "/usr",
                                                        "--bind",
                                                        "/srv/sessions/s1",
                                                        "/workspace",
                                                        "--ro-bind",
                                                        "/srv/ro",
                                                        "/data/ro",
                                                        "--remount-ro",
                                                        "/",
                                                        "--chdir",
                                                        "/workspace"}}));
}

// A target whose parent exists: only that parent is rebuilt, after the settings' rules at or
// above it and before the deeper ones; a read rule inside the source is mirrored into the target.
TEST(ArgvBuilderTest, GoldenBindIntoAnExistingDirectoryWithMirroredDeny) {
  using namespace policy::fakefs;
  policy::FakeFsView fs({{"/tmp", kDir},
                         {"/opt/tool", kDir},
                         {"/opt/link", Symlink("tool")},
                         {"/opt/tool/secret", kDir},
                         {"/src/s1/.env", kFile}});
  Settings s;
  s.filesystem.deny_read = {{"/opt/tool/secret", false}, {"/src/s1/.env", false}};
  policy::Environment env{"/root", "/", {}};
  env.binds = {{"/src/s1", "/opt/work", false}};
  Result<Policy> p = policy::ResolvePolicy(s, env, fs);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(BuildInvocation(*p, kLayout).args, Concat({Namespaces(),
                                                       {"--disable-userns",
                                                        "--ro-bind",
                                                        "/",
                                                        "/",
                                                        "--dev",
                                                        "/dev",
                                                        "--proc",
                                                        "/proc",
                                                        "--tmpfs",
                                                        "/opt",
                                                        "--symlink",
                                                        "tool",
                                                        "/opt/link",
                                                        "--ro-bind",
                                                        "/opt/tool",
                                                        "/opt/tool",
                                                        "--tmpfs",
                                                        "/opt/tool/secret",
                                                        "--ro-bind",
                                                        "/src/s1",
                                                        "/opt/work",
                                                        "--remount-ro",
                                                        "/opt",
                                                        "--chdir",
                                                        "/"}}));
}

// An existing target needs no synthetic directory: the bind simply goes on top.
TEST(ArgvBuilderTest, BindOntoAnExistingTarget) {
  Policy p = Base();
  p.mounts = {MountRule{"/mnt/x", View::kHostWritable, "bind", "/srv/x"}};
  EXPECT_EQ(BuildInvocation(p, kLayout).args,
            Concat({Namespaces(),
                    {"--disable-userns", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                     "--bind", "/srv/x", "/mnt/x", "--chdir", "/w"}}));
}

// A root caller's srt-agent shows the read-only entries bwrap would bind directly into a tmpfs
// of its own (a hidden directory's, a synthetic one's), so bwrap does not re-read the mount table
// for each: neither the bind nor its mount point is bwrap's, and a synthetic directory holding
// one is made read-only by the agent, after them. Everything else stays bwrap's, in order.
TEST(ArgvBuilderTest, ARootCallersAgentShowsTheEntriesOfBwrapsTmpfsInItsPlace) {
  Policy p = Base();
  p.mounts = {MountRule{"/etc", View::kHiddenDir, ""},
              MountRule{"/etc/passwd", View::kHostReadOnly, ""},
              MountRule{"/etc/perl", View::kHostReadOnly, ""},
              MountRule{"/etc/perl/secret", View::kHiddenFile, ""},
              MountRule{"/opt", View::kSyntheticDir, ""},
              MountRule{"/opt/link", View::kSymlink, "", "tool"},
              MountRule{"/opt/tool", View::kHostReadOnly, ""},
              MountRule{"/opt/work", View::kHostWritable, "", "/src/s1"}};
  p.remount_read_only = {"/opt"};
  Layout root = kLayout;
  root.caller_is_root = true;
  root.agent_shows = kMaxAgentShows;
  EXPECT_EQ(BuildInvocation(p, root).agent_shows,
            (AgentShows{{"/etc/passwd", "/etc/perl", "/opt/tool"}, {"/opt"}}));
  EXPECT_EQ(
      BuildInvocation(p, root).args,
      Concat({Namespaces(),
              {"--cap-drop", "ALL",       "--disable-userns", "--ro-bind", "/",         "/",
               "--dev",      "/dev",      "--proc",           "/proc",     "--tmpfs",   "/etc",
               "--tmpfs",    "/opt",      "--symlink",        "tool",      "/opt/link", "--bind",
               "/src/s1",    "/opt/work", "--chdir",          "/w"}}));
  // Without an agent that can (an unprivileged caller's), all of it is bwrap's, as before.
  // As many as the launcher has room for (the agent's descriptors, its plan's operations).
  Layout two = root;
  two.agent_shows = 2;
  EXPECT_EQ(BuildInvocation(p, two).agent_shows, (AgentShows{{"/etc/passwd", "/etc/perl"}, {}}));
  Layout plain = root;
  plain.agent_shows = 0;
  EXPECT_EQ(BuildInvocation(p, plain).agent_shows, AgentShows{});
  EXPECT_EQ(BuildInvocation(p, plain).args,
            Concat({Namespaces(), {"--cap-drop", "ALL",         "--disable-userns",
                                   "--ro-bind",  "/",           "/",
                                   "--dev",      "/dev",        "--proc",
                                   "/proc",      "--tmpfs",     "/etc",
                                   "--ro-bind",  "/etc/passwd", "/etc/passwd",
                                   "--ro-bind",  "/etc/perl",   "/etc/perl",
                                   "--tmpfs",    "/opt",        "--symlink",
                                   "tool",       "/opt/link",   "--ro-bind",
                                   "/opt/tool",  "/opt/tool",   "--bind",
                                   "/src/s1",    "/opt/work",   "--remount-ro",
                                   "/opt",       "--chdir",     "/w"}}));
}

// Where the agent's later mount would not give bwrap's view, the entry stays bwrap's: a mount of
// bwrap's after it at, below or above it (it would end up below the agent's), one before it
// below it, a parent that is not bwrap's tmpfs (the host's root; a directory bwrap makes on the
// way), another source, a writable bind, the working directory (bwrap enters it before the
// agent runs), the resolv.conf and masked files bwrap binds after the mounts.
TEST(ArgvBuilderTest, TheAgentShowsNoEntryWhoseViewWouldChange) {
  Policy p = Base();
  p.cwd = "/etc/cwd/sub";
  p.mounts = {MountRule{"/etc", View::kHiddenDir, ""},
              MountRule{"/etc/early/x", View::kHiddenDir, ""},
              MountRule{"/etc/early", View::kHostReadOnly, ""},
              MountRule{"/etc/below", View::kHostReadOnly, ""},
              MountRule{"/etc/on", View::kHostReadOnly, ""},
              MountRule{"/etc/renamed", View::kHostReadOnly, "", "/srv/other"},
              MountRule{"/etc/rw", View::kHostWritable, ""},
              MountRule{"/etc/cwd", View::kHostReadOnly, ""},
              MountRule{"/etc/resolv.conf", View::kHostReadOnly, ""},
              MountRule{"/etc/token", View::kHostReadOnly, ""},
              MountRule{"/etc/ssl/certs", View::kHostReadOnly, ""},
              MountRule{"/usr", View::kHostReadOnly, ""},
              MountRule{"/etc/ok", View::kHostReadOnly, ""},
              MountRule{"/etc/below/deeper", View::kHiddenDir, ""},
              MountRule{"/etc/on", View::kSymlink, "", "x"}};
  p.resolv_conf = "/etc/resolv.conf";
  p.masked_files = {{"/etc/token", 0}};
  Layout root = kLayout;
  root.caller_is_root = true;
  root.agent_shows = kMaxAgentShows;
  EXPECT_EQ(BuildInvocation(p, root).agent_shows, (AgentShows{{"/etc/ok"}, {}}));
  // After a later mount above it, nothing is the agent's either.
  p.mounts.push_back(MountRule{"/etc", View::kHiddenDir, ""});
  EXPECT_EQ(BuildInvocation(p, root).agent_shows, AgentShows{});
}

}  // namespace
}  // namespace srt::bwrap
