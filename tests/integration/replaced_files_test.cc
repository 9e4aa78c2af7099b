// SPDX-License-Identifier: Apache-2.0
// Protected, denied and masked files that the host replaces while a sandbox runs (an editor's
// save, `sed -i`, `git checkout`, a CLI refreshing a token: a new file renamed over the old, or
// the old one deleted and made again). srt's read-only mounts and covers sit on the old
// directory entry, and the kernel detaches such a mount in every other mount namespace when the
// host renames over or unlinks that entry: the protection must hold all the same.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "srt_fixture.h"

namespace srt::it {
namespace {

using ReplacedFilesTest = SrtTest;

// The command's script: it says it has started (a file `started` in the scratch root, a write
// root for every test here), then waits for `go`, which the host makes once it has replaced its
// files. `before` runs before the wait, `after` after it.
std::string Script(const std::string& before, const std::string& after) {
  return before + "; : > started; i=0; while [ ! -e go ] && [ $i -lt 1000 ]; do sleep 0.01; " +
         "i=$((i+1)); done; " + after;
}

// Waits for the command's `started`, runs `host` (the host's edits), gives the agent a moment
// to act on them, then lets the command go on.
template <typename Fn>
RunResult RunAround(Runner& run, const std::string& settings, const std::string& script, Fn host) {
  pid_t pid = run.Start(settings, {"sh", "-c", script});
  for (int i = 0; i < 1000 && !run.Exists("started"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(run.Exists("started"));
  host();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  run.WriteFile("go", "");
  return run.Finish(pid);
}

// What `sed -i` or an editor does: a new file, renamed over the old one.
void ReplaceByRename(Runner& run, const std::string& rel, const std::string& content) {
  run.WriteFile(rel + ".new", content);
  ASSERT_EQ(std::rename(run.Path(rel + ".new").c_str(), run.Path(rel).c_str()), 0) << rel;
}

std::string P() { return ProbeBinary(); }

// Finding 5 of the hostile review: the host's edit used to make a protected file writable.
TEST_P(ReplacedFilesTest, ProtectedFilesStayReadOnlyAfterTheHostReplacesThem) {
  run().WriteFile(".bashrc", "# host rc\n");
  run().WriteFile("release.key", "KEY\n");
  run().WriteFile(".mcp.json", "{}\n");
  run().WriteFile(".git/hooks/pre-commit", "#!/bin/sh\n");
  const std::string s = R"({"filesystem": {"allowWrite": ["."], "denyWrite": ["release.key"]}})";
  const std::string after =
      P() + " append .bashrc; echo bashrc=$?; " + P() + " write release.key; echo key=$?; " + P() +
      " create .mcp.json; echo mcp=$?; " + P() + " write .git/hooks/pre-commit; echo hook=$?; " +
      "echo x > other; " + P() + " rename other .bashrc; echo rename=$?; " + P() +
      " append other; echo other=$?; " + P() + " rename release.key moved; echo away=$?";
  RunResult r = RunAround(run(), s, Script(P() + " append .bashrc; echo first=$?", after), [&] {
    ReplaceByRename(run(), ".bashrc", "# host rc, edited\n");
    ReplaceByRename(run(), "release.key", "KEY2\n");
    ReplaceByRename(run(), ".git/hooks/pre-commit", "#!/bin/sh\n# new\n");
    ASSERT_EQ(::unlink(run().Path(".mcp.json").c_str()), 0);
  });
  // As the read-only mounts answer before the host's edits; .mcp.json, gone, cannot be made.
  EXPECT_EQ(r.out, "first=30\nbashrc=30\nkey=30\nmcp=30\nhook=30\nrename=16\nother=0\naway=16\n")
      << r.err;
  EXPECT_EQ(run().ReadFile(".bashrc"), "# host rc, edited\n");
  EXPECT_EQ(run().ReadFile("release.key"), "KEY2\n");
  EXPECT_FALSE(run().Exists(".mcp.json"));
}

// Finding 1: a denied file the host replaces, or a denied path it creates after start.
TEST_P(ReplacedFilesTest, DeniedFilesStayHiddenAfterTheHostReplacesOrCreatesThem) {
  run().WriteFile("aws/credentials", "OLD-SECRET\n");
  run().WriteFile("aws/gone", "GONE-SECRET\n");
  const std::string s = R"({"filesystem": {"allowWrite": ["."], "denyRead": [")" +
                        run().Path("aws/credentials") + R"(", ")" + run().Path("aws/config") +
                        R"(", ")" + run().Path("aws/gone") + R"("]}})";
  const std::string after = P() + " read aws/credentials; echo creds=$?; " + P() +
                            " read aws/config; echo config=$?; " + P() +
                            " read aws/gone; echo gone=$?";
  RunResult r =
      RunAround(run(), s, Script(P() + " read aws/credentials; echo first=$?", after), [&] {
        ReplaceByRename(run(), "aws/credentials", "NEW-SECRET\n");
        run().WriteFile("aws/config", "CONFIG-SECRET\n");
        ASSERT_EQ(::unlink(run().Path("aws/gone").c_str()), 0);
        run().WriteFile("aws/gone", "RECREATED-SECRET\n");
      });
  EXPECT_EQ(r.out, "first=13\ncreds=13\nconfig=13\ngone=13\n") << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Hostile review 2, finding 3: the host moves a denied file's directory away (or deletes it) and
// makes it again a moment later (`rm -rf ~/.aws; aws configure`). The watcher used to re-add its
// watch while the directory was missing, fail (ENOENT) and never look at that path again: the
// credentials written into the new directory were readable. A denied file whose directory only
// appears after the start is covered the same way.
TEST_P(ReplacedFilesTest, DeniedFilesStayHiddenAfterTheHostRemakesTheirDirectory) {
  run().WriteFile("aws/credentials", "OLD-SECRET\n");
  const std::string s = R"({"filesystem": {"allowWrite": ["."], "denyRead": [")" +
                        run().Path("aws/credentials") + R"(", ")" +
                        run().Path("gcloud/legacy/credentials.db") + R"("]}})";
  const std::string after = P() + " read aws/credentials; echo creds=$?; " + P() +
                            " read gcloud/legacy/credentials.db; echo gcloud=$?";
  RunResult r =
      RunAround(run(), s, Script(P() + " read aws/credentials; echo first=$?", after), [&] {
        ASSERT_EQ(std::rename(run().Path("aws").c_str(), run().Path("aws.bak").c_str()), 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        run().MakeDir("aws");
        run().MakeDir("gcloud/legacy");
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        run().WriteFile("aws/credentials", "NEW-SECRET\n");
        run().WriteFile("gcloud/legacy/credentials.db", "GCLOUD-SECRET\n");
      });
  EXPECT_EQ(r.out, "first=13\ncreds=13\ngcloud=13\n") << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// The same for a masked file: the new directory's file shows the masked copy, not the new value.
TEST_P(ReplacedFilesTest, MaskedFilesStayMaskedAfterTheHostRemakesTheirDirectory) {
  run().WriteFile("cfg/netrc", "machine h login me password REALSECRETREALSECRETREALSECRET1234\n");
  const std::string s = R"J({"filesystem": {"allowWrite": ["."]}, "credentials": {
      "allowPlaintextInject": true, "files": [{"path": ")J" +
                        run().Path("cfg/netrc") +
                        R"J(", "mode": "mask", "extract": "password (\\S+)"}]}})J";
  RunResult r = RunAround(run(), s, Script("cat cfg/netrc", "cat cfg/netrc"), [&] {
    ASSERT_EQ(std::rename(run().Path("cfg").c_str(), run().Path("cfg.bak").c_str()), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    run().MakeDir("cfg");
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    run().WriteFile("cfg/netrc",
                    "machine h login me password ROTATED___ROTATED___ROTATED___1234\n");
  });
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("REALSECRET"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ROTATED"), std::string::npos) << r.out;
  const size_t half = r.out.find('\n');
  ASSERT_NE(half, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(half + 1), r.out.substr(0, half + 1)) << r.out;
}

// A new entry the cover cannot go on (a directory where a denied file was): the sandbox is
// stopped, and srt says which file.
TEST_P(ReplacedFilesTest, ADeniedFileThatCannotBeCoveredAgainStopsTheSandbox) {
  run().WriteFile("aws/credentials", "OLD-SECRET\n");
  const std::string s = R"({"filesystem": {"allowWrite": ["."], "denyRead": [")" +
                        run().Path("aws/credentials") + R"("]}})";
  RunResult r = RunAround(run(), s, Script("true", "echo still-running"), [&] {
    ASSERT_EQ(::unlink(run().Path("aws/credentials").c_str()), 0);
    run().MakeDir("aws/credentials");
  });
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("srt-agent failed covering a denied file ('" +
                       run().Path("aws/credentials") + "')"),
            std::string::npos)
      << r.err;
}

// Finding 2: a masked credential file the host rewrites by rename shows the masked copy still.
TEST_P(ReplacedFilesTest, MaskedFilesStayMaskedAfterTheHostReplacesThem) {
  run().WriteFile("netrc", "machine h login me password REALSECRETREALSECRETREALSECRET1234\n");
  const std::string s = R"J({"filesystem": {"allowWrite": ["."]}, "credentials": {
      "allowPlaintextInject": true, "files": [{"path": ")J" +
                        run().Path("netrc") +
                        R"J(", "mode": "mask", "extract": "password (\\S+)"}]}})J";
  RunResult r = RunAround(
      run(), s, Script("cat netrc; stat -c %a netrc", "cat netrc; stat -c %a netrc"), [&] {
        ReplaceByRename(run(), "netrc",
                        "machine h login me password ROTATED___ROTATED___ROTATED___1234\n");
      });
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("REALSECRET"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ROTATED"), std::string::npos) << r.out;
  // The same masked line and mode, twice.
  const size_t half = r.out.find('\n', r.out.find('\n') + 1);
  ASSERT_NE(half, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(half + 1), r.out.substr(0, half + 1)) << r.out;
}

// What kubelet does to a secret or projected-token volume on every rotation: `token ->
// ..data/token`, `..data -> ..v1`; it writes `..v2`, points a new link at it, renames that over
// `..data` and removes `..v1`.
void RotateLikeKubelet(Runner& run, const std::string& dir, const std::string& file,
                       const std::string& content) {
  run.WriteFile(dir + "/..v2/" + file, content);
  run.MakeSymlink("..v2", dir + "/..data_tmp");
  ASSERT_EQ(std::rename(run.Path(dir + "/..data_tmp").c_str(), run.Path(dir + "/..data").c_str()),
            0);
  ASSERT_EQ(::unlink(run.Path(dir + "/..v1/" + file).c_str()), 0);
  ASSERT_EQ(::rmdir(run.Path(dir + "/..v1").c_str()), 0);
}

// The layout RotateLikeKubelet rotates, with `content` in `..v1`.
void MakeKubeletVolume(Runner& run, const std::string& dir, const std::string& file,
                       const std::string& content) {
  run.WriteFile(dir + "/..v1/" + file, content);
  run.MakeSymlink("..v1", dir + "/..data");
  run.MakeSymlink("..data/" + file, dir + "/" + file);
}

// Hostile review 2, finding 7: a denied path that goes through symlinks was covered at the
// target it had at the start; once the host pointed a link elsewhere, the same denied path read
// the new target.
TEST_P(ReplacedFilesTest, DeniedFilesStayHiddenAfterTheHostSwapsTheirSymlink) {
  MakeKubeletVolume(run(), "sa", "token", "OLD-TOKEN\n");
  const std::string s =
      R"({"filesystem": {"allowWrite": ["."], "denyRead": [")" + run().Path("sa/token") + R"("]}})";
  const std::string after = P() + " read sa/token; echo token=$?; " + P() +
                            " read sa/..data/token; echo data=$?; " + P() +
                            " read sa/..v2/token; echo v2=$?";
  RunResult r = RunAround(run(), s, Script(P() + " read sa/token; echo first=$?", after),
                          [&] { RotateLikeKubelet(run(), "sa", "token", "ROTATED-TOKEN\n"); });
  EXPECT_EQ(r.out, "first=13\ntoken=13\ndata=13\nv2=13\n") << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// The same for a masked credential file: the new target shows the masked copy.
TEST_P(ReplacedFilesTest, MaskedFilesStayMaskedAfterTheHostSwapsTheirSymlink) {
  MakeKubeletVolume(run(), "cfg", "netrc",
                    "machine h login me password REALSECRETREALSECRETREALSECRET1234\n");
  const std::string s = R"J({"filesystem": {"allowWrite": ["."]}, "credentials": {
      "allowPlaintextInject": true, "files": [{"path": ")J" +
                        run().Path("cfg/netrc") +
                        R"J(", "mode": "mask", "extract": "password (\\S+)"}]}})J";
  RunResult r = RunAround(run(), s, Script("cat cfg/netrc", "cat cfg/netrc"), [&] {
    RotateLikeKubelet(run(), "cfg", "netrc",
                      "machine h login me password ROTATED___ROTATED___ROTATED___1234\n");
  });
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("REALSECRET"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ROTATED"), std::string::npos) << r.out;
  const size_t half = r.out.find('\n');
  ASSERT_NE(half, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(half + 1), r.out.substr(0, half + 1)) << r.out;
}

// A denied path whose link the host points at a directory: nothing can cover it there, so the
// sandbox is stopped, and srt names the path the policy denied.
TEST_P(ReplacedFilesTest, ADeniedSymlinkSwappedToWhatCannotBeCoveredStopsTheSandbox) {
  MakeKubeletVolume(run(), "sa", "token", "OLD-TOKEN\n");
  const std::string s =
      R"({"filesystem": {"allowWrite": ["."], "denyRead": [")" + run().Path("sa/token") + R"("]}})";
  RunResult r = RunAround(run(), s, Script("true", "echo still-running"), [&] {
    run().MakeDir("sa/..v2/token");
    run().MakeSymlink("..v2", "sa/..data_tmp");
    ASSERT_EQ(std::rename(run().Path("sa/..data_tmp").c_str(), run().Path("sa/..data").c_str()), 0);
  });
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("('" + run().Path("sa/token") + "')"), std::string::npos) << r.err;
}

// Stop 35's review: only the directories holding a link were watched. A plain directory on
// the way (`sub/y` below, reached through `link -> sub`) that the host moved out to where
// nothing was watched, and replaced by a link, went unseen: the name then read the new target.
// (Renamed within a watched directory it was caught only because any event there led to a
// walk.) Every directory the walk looks a name up in is watched now.
TEST_P(ReplacedFilesTest, DeniedFilesStayHiddenAfterTheHostSwapsADirectoryOnTheirWayForALink) {
  run().WriteFile("sub/y/x/secret", "OLD-SECRET\n");
  run().WriteFile("pub/x/secret", "NEW-SECRET\n");
  run().MakeSymlink("sub", "link");
  run().MakeDir("aside");
  const std::string s = R"({"filesystem": {"allowWrite": ["."], "denyRead": [")" +
                        run().Path("link/y/x/secret") + R"("]}})";
  RunResult r = RunAround(
      run(), s,
      Script(P() + " read link/y/x/secret; echo first=$?",
             P() + " read link/y/x/secret; echo after=$?; cat link/y/x/secret"),
      [&] {
        ASSERT_EQ(std::rename(run().Path("sub/y").c_str(), run().Path("aside/y").c_str()), 0);
        run().MakeSymlink("../pub", "sub/y");
      });
  EXPECT_EQ(r.out, "first=13\nafter=13\n") << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;  // cat's
}

// The CPU time `pid` has used (the first field of /proc/PID/schedstat), or -1.
int64_t CpuNanosOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/schedstat");
  int64_t ns = -1;
  in >> ns;
  return ns;
}

// The cover watcher of the srt `srt`: srt-agent's child's child (the agent forks a child that
// joins the sandbox, and that child forks the watcher); 0 when there is none.
pid_t CoverWatcherOf(pid_t srt) {
  for (pid_t agent : ChildrenOf(srt, " agent ")) {
    for (pid_t joined : ChildrenOf(agent, " agent ")) {
      for (pid_t watcher : ChildrenOf(joined, " agent ")) return watcher;
    }
  }
  return 0;
}

// Stop 35's review: a denied file the settings name through symlinks is followed again when
// the host changes a directory that holds one of its links. Every event in such a directory
// led to that walk, for each such file, whatever name it named; and the command can make and
// remove files in there as fast as it likes (here: the project, a write root). With four such
// files the watcher, outside the sandbox's cgroups and at a real-time priority for root, used
// 5.3 s of CPU in 5.5 s for the command's 1 s. Only a name a walk looked up, in the directory
// it looked it up in, can change what it reaches: the rest now cost a comparison (with the names
// alone, a name of a directory above, made in the project, still led to a walk each time). The
// watcher's CPU is compared with the command's, measured side by side in the same run; no time
// is asserted.
TEST_P(ReplacedFilesTest, FilesMadeBesideSymlinkedDeniedFilesCostTheWatcherNoWalk) {
  std::string denied;
  run().MakeSymlink("..v1", "sa/..data");
  for (int i = 1; i <= 8; ++i) {
    const std::string name = "token" + std::to_string(i);
    run().WriteFile("sa/..v1/" + name, "SECRET\n");
    run().MakeSymlink("..data/" + name, "sa/" + name);
    denied += std::string(denied.empty() ? "" : ", ") + "\"" + run().Path("sa/" + name) + "\"";
  }
  const std::string s = R"({"filesystem": {"allowWrite": ["."], "denyRead": [)" + denied + "]}}";
  // 4,000 files made and removed beside the links, under a name the walks look up, but in
  // another directory (the first on the way, e.g. "var" in "/"): an event is about a name in a
  // directory. The command's own CPU time, then it waits.
  const std::string root_path = run().Path("");
  const std::string first = root_path.substr(1, root_path.find('/', 1) - 1);
  const std::string churn =
      "python3 -c 'import os, time\n"
      "for i in range(4000):\n"
      "    os.close(os.open(\"sa/" +
      first +
      "\", os.O_CREAT | os.O_WRONLY)); "
      "os.unlink(\"sa/" +
      first +
      "\")\n"
      "print(time.process_time_ns())'";
  pid_t pid = run().Start(s, {"sh", "-c", Script("cat sa/token1; echo cat=$?; " + churn, "")});
  for (int i = 0; i < 3000 && !run().Exists("started"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const pid_t watcher = CoverWatcherOf(pid);
  const int64_t watcher_ns = watcher > 0 ? CpuNanosOf(watcher) : -1;
  run().WriteFile("go", "");
  RunResult r = run().Finish(pid);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream out(r.out);
  std::string cat;
  int64_t command_ns = 0;
  out >> cat >> command_ns;
  EXPECT_EQ(cat, "cat=1") << r.out;  // denied
  ASSERT_GT(watcher_ns, 0) << "no cover watcher found among srt's processes";
  ASSERT_GT(command_ns, 0) << r.out;
  EXPECT_LT(watcher_ns, 3 * command_ns / 2)
      << "watcher " << watcher_ns << " ns, command " << command_ns << " ns";
}

SRT_INSTANTIATE(ReplacedFilesTest);

}  // namespace
}  // namespace srt::it
