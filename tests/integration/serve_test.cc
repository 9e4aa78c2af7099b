// SPDX-License-Identifier: Apache-2.0
// srt --serve and srt --attach, through the real srt: one warm sandbox, many commands, each with
// its own stdio, environment, working directory, exit status and signals, all under the serve's
// policy; the socket out of every command's reach; nothing left behind once it is stopped.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "srt_fixture.h"

namespace srt::it {
namespace {

const char* kServeSettings =
    R"({"filesystem": {"allowWrite": ["."], "denyWrite": ["./ro"], "denyRead": ["./secret.txt"]}})";

class ServeTest : public SrtTest {
 protected:
  void SetUp() override {
    SrtTest::SetUp();
    if (IsSkipped()) return;
    // The socket outside the write root ".": one inside it is refused (a command could move it
    // away and bind one of its own at its name).
    run().MakeDir("../run");
    run().MakeDir("ro");
    run().MakeDir("d1");
    run().MakeDir("d2");
    run().WriteFile("secret.txt", "secret\n");
    socket_ = run().Path("../run/srt.sock");
    serve_ = run().Start(kServeSettings, {"--serve", socket_});
    ASSERT_TRUE(
        Eventually([&] { return run().Exists("../run/srt.sock"); }, std::chrono::seconds(10)))
        << "srt --serve never made its socket: " << run().Finish(serve_).err;
  }
  void TearDown() override {
    if (serve_ > 0) {
      kill(serve_, SIGTERM);
      RunResult r = run().Finish(serve_);
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
  }

  RunResult Attach(std::vector<std::string> args, const std::string& cwd = "",
                   const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), {"--attach", socket_});
    return run().SrtRaw(args, cwd, std::chrono::seconds(30), env);
  }
  // The same command through srt-attach, the small client.
  RunResult SmallAttach(std::vector<std::string> args, const std::string& cwd = "",
                        const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), {SrtAttachBinary(), socket_});
    return run().Host(args, cwd, env);
  }

  std::string socket_;
  pid_t serve_ = -1;
};

TEST_P(ServeTest, SequentialCommandsEachGetTheirOwnEnvironmentDirectoryAndStatus) {
  RunResult a =
      Attach({"sh", "-c", "echo \"$NAME\"; pwd; echo oops >&2; exit 3"}, "d1", {"NAME=first"});
  EXPECT_EQ(a.exit_code, 3) << a.err;
  EXPECT_EQ(a.out, "first\n" + run().Path("d1") + "\n");
  EXPECT_EQ(a.err, "oops\n");
  RunResult b = Attach({"sh", "-c", "echo \"$NAME\"; pwd; exit 5"}, "d2", {"NAME=second"});
  EXPECT_EQ(b.exit_code, 5) << b.err;
  EXPECT_EQ(b.out, "second\n" + run().Path("d2") + "\n");
  // A single word runs with bash -c, as with plain srt; -c too.
  RunResult c = Attach({"-c", "echo $((6 * 7))"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, "42\n");
}

TEST_P(ServeTest, ConcurrentCommandsKeepTheirOwnStdioAndStatus) {
  // Three at once from a shell on the host, each with its own output file, variable, directory
  // and exit status; each sleeps first, so that all three run together.
  std::string script;
  for (int i = 1; i <= 3; ++i) {
    const std::string n = std::to_string(i);
    script += "(cd d" + std::to_string(1 + i % 2) + " && N=" + n + " " + SrtBinary() +
              " --attach " + socket_ + " sh -c 'sleep 0.5; echo \"$N $(pwd)\"; exit 1" + n +
              "' > ../out" + n + " 2>&1; echo $? > ../code" + n + ") &\n";
  }
  script += "wait\n";
  RunResult r = run().Host({"sh", "-c", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int i = 1; i <= 3; ++i) {
    const std::string n = std::to_string(i);
    EXPECT_EQ(run().ReadFile("code" + n), "1" + n + "\n");
    EXPECT_EQ(run().ReadFile("out" + n),
              n + " " + run().Path("d" + std::to_string(1 + i % 2)) + "\n");
  }
}

TEST_P(ServeTest, ACommandGetsItsOwnStdioAndNoOtherDescriptor) {
  RunResult r = Attach(Probe({"fds"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0 1 2\n");
}

TEST_P(ServeTest, ACommandCannotReachTheServeSocket) {
  // socket(AF_UNIX) is refused by the sandbox's filter, so no connect can follow.
  RunResult r = Attach(Probe({"socket", "unix", "seqpacket"}));
  EXPECT_EQ(r.exit_code, EPERM) << r.err;
  r = Attach(Probe({"socketpair", "unix", "seqpacket"}));
  EXPECT_EQ(r.exit_code, EPERM) << r.err;
}

TEST_P(ServeTest, ThePolicyHoldsForAttachedCommands) {
  EXPECT_EQ(Attach(Probe({"create", "written.txt", "x"})).exit_code, 0);
  EXPECT_TRUE(run().Exists("written.txt"));
  EXPECT_EQ(Attach(Probe({"create", "ro/x", "x"})).exit_code, EROFS);
  EXPECT_EQ(Attach(Probe({"create", run().home() + "/x"})).exit_code, EROFS);
  EXPECT_EQ(Attach(Probe({"read", "secret.txt"})).exit_code, EACCES);
  // srt's own variables are the sandbox's, whatever the attaching environment says.
  RunResult r = Attach(Probe({"env", "HTTPS_PROXY"}), "", {"HTTPS_PROXY=http://evil:1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("evil"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("@localhost:"), std::string::npos) << r.out;
}

// F5: srt --attach and srt-attach started in a deleted directory send no working directory
// for their command: they fail, naming the problem.
TEST_P(ServeTest, AttachingFromADeletedDirectoryFailsNamingIt) {
  for (const std::string& client :
       {std::string(SrtBinary()) + " --attach", std::string(SrtAttachBinary())}) {
    RunResult r = run().Host(
        {"bash", "-c",
         "mkdir gone && cd gone && rmdir ../gone && exec " + client + " " + socket_ + " pwd"});
    EXPECT_EQ(r.exit_code, 125) << client;
    EXPECT_EQ(r.out, "") << client;
    EXPECT_EQ(r.err,
              "srt: the working directory no longer exists or cannot be read (getcwd: No such "
              "file or directory); change to a directory that exists and run again\n")
        << client;
  }
}

TEST_P(ServeTest, ExitStatusesFollowSrtsConventions) {
  RunResult killed = Attach(Probe({"kill-self", "TERM"}));
  EXPECT_EQ(killed.exit_code, 128 + SIGTERM) << killed.err;
  RunResult r = Attach({"no-such-command-srt", "x"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("no-such-command-srt: command not found"), std::string::npos) << r.err;
  run().WriteFile("noexec", "#!/bin/sh\n");  // not executable: EACCES
  EXPECT_EQ(Attach({"./noexec", "x"}).exit_code, 126);
}

TEST_P(ServeTest, ASignalToTheAttachingSrtReachesItsCommandOnly) {
  run().WriteFile("trap.sh",
                  "trap 'echo TERM > got; exit 9' TERM\n: > started\n"
                  "while :; do sleep 0.05; done\n");
  run().WriteFile("other.sh", ": > other-started\nsleep 1\necho alive > other\n");
  std::string script = std::string(SrtBinary()) + " --attach " + socket_ +
                       " sh other.sh & other=$!\n" + SrtBinary() + " --attach " + socket_ +
                       " sh trap.sh & pid=$!\n"
                       "while [ ! -e started ] || [ ! -e other-started ]; do sleep 0.02; done\n"
                       "kill -TERM $pid; wait $pid; echo $? > code\nwait $other; echo $? > ocode\n";
  RunResult r = run().Host({"sh", "-c", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run().ReadFile("got"), "TERM\n");
  EXPECT_EQ(run().ReadFile("code"), std::to_string(128 + SIGTERM) + "\n");  // as srt's
  EXPECT_EQ(run().ReadFile("other"), "alive\n");
  EXPECT_EQ(run().ReadFile("ocode"), "0\n");
}

TEST_P(ServeTest, CtrlCInARealTerminalReachesOnlyItsCommand) {
  run().WriteFile("fg.sh",
                  "trap 'echo INT > got; exit 130' INT\n: > started\n"
                  "while :; do sleep 0.05; done\n");
  run().WriteFile("bg.sh", ": > bg-started\nsleep 1\necho alive > bg\n");
  Runner::Terminal other =
      run().StartProgramInTerminal({SrtBinary(), "--attach", socket_, "sh", "bg.sh"});
  Runner::Terminal term =
      run().StartProgramInTerminal({SrtBinary(), "--attach", socket_, "sh", "fg.sh"});
  ASSERT_TRUE(Eventually([&] { return run().Exists("started") && run().Exists("bg-started"); },
                         std::chrono::seconds(10)));
  Runner::Type(term, "\x03");
  Runner::TerminalState after;
  RunResult r = run().FinishInTerminal(term, std::chrono::seconds(30), &after);
  EXPECT_EQ(r.exit_code, 130) << r.out;
  EXPECT_EQ(run().ReadFile("got"), "INT\n");
  EXPECT_TRUE(after.echo && after.canonical && after.signals) << "the terminal stayed raw";
  RunResult o = run().FinishInTerminal(other);
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_EQ(run().ReadFile("bg"), "alive\n");
}

TEST_P(ServeTest, ATerminalIsPassedAsATerminal) {
  Runner::Terminal term = run().StartProgramInTerminal(
      {SrtBinary(), "--attach", socket_, "sh", "-c", "test -t 0 && test -t 1 && echo tty-ok"});
  RunResult r = run().FinishInTerminal(term);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("tty-ok"), std::string::npos) << r.out;
}

// A command's terminal is a pty no path in the sandbox reaches (a devpts instance srt-init's
// agent made and mounted nowhere): another command running at the same time finds no entry for
// it in the sandbox's /dev/pts (there, it would have been /dev/pts/0, the instance's first).
TEST_P(ServeTest, AnotherCommandCannotOpenACommandsTerminal) {
  const std::string wait_probed =
      "i=0; while [ ! -e probed ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; echo seen";
  Runner::Terminal term = run().StartProgramInTerminal(
      {SrtAttachBinary(), socket_, "sh", "-c", "test -t 0 && : > started; " + wait_probed});
  ASSERT_TRUE(Eventually([&] { return run().Exists("started"); }, std::chrono::seconds(10)));
  RunResult open = Attach(Probe({"open-write", "/dev/pts/0"}));
  RunResult ls = Attach(Probe({"ls", "/dev/pts"}));
  run().WriteFile("probed", "");
  RunResult r = run().FinishInTerminal(term);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("seen"), std::string::npos) << r.out;
  EXPECT_EQ(open.exit_code, ENOENT) << open.err;
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out, "ptmx\n");
}

// Neither the pty's master nor the devpts instance it comes from reaches the command: it holds
// its terminal on 0-2 and nothing else.
TEST_P(ServeTest, ACommandWithATerminalHoldsNoMasterAndNoMount) {
  Runner::Terminal term =
      run().StartProgramInTerminal({SrtAttachBinary(), socket_, ProbeBinary(), "fds"});
  RunResult r = run().FinishInTerminal(term);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // "\r\n" from the command's terminal, or "\r\r\n" when it wrote before srt-attach had made
  // the caller's terminal raw (it does so once the command has started).
  EXPECT_NE(r.out.find("0 1 2\r"), std::string::npos) << r.out;
}

// Nor does a process an earlier command left behind in a session of its own (setsid), which
// outlives that command and looks once a later one has its terminal.
TEST_P(ServeTest, WhatACommandLeftBehindCannotOpenALaterCommandsTerminal) {
  const std::string probe = ProbeBinary();
  const std::string left =
      ": > left-up; i=0; while [ ! -e started ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); "
      "done; " +
      probe + " open-write /dev/pts/0; echo $? > left-open; " + probe +
      " ls /dev/pts > left-ls; : > probed";
  // The first command waits until its child has a session of its own (what is left of the
  // command's process group is killed as it exits).
  RunResult first = Attach({"sh", "-c",
                            "setsid sh -c '" + left +
                                "' < /dev/null > /dev/null 2>&1 &\n"
                                "while [ ! -e left-up ]; do sleep 0.02; done"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  Runner::Terminal term = run().StartProgramInTerminal(
      {SrtAttachBinary(), socket_, "sh", "-c",
       "test -t 0 && : > started; i=0; while [ ! -e probed ] && [ $i -lt 400 ]; do sleep 0.05; "
       "i=$((i+1)); done; echo seen"});
  RunResult r = run().FinishInTerminal(term);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("seen"), std::string::npos) << r.out;
  EXPECT_EQ(run().ReadFile("left-open"), std::to_string(ENOENT) + "\n");
  EXPECT_EQ(run().ReadFile("left-ls"), "ptmx\n");
}

// What a command with a terminal sees of it: a terminal that controls its session, whose
// foreground job it is; /dev/tty (which the write guard opens for a write) is that terminal;
// it has no name (ttyname(3): ENODEV), since no path in the sandbox reaches it.
TEST_P(ServeTest, ACommandsTerminalControlsItsSessionAndHasNoName) {
  run().WriteFile("look.py",
                  "import errno, os\n"
                  "print('fg' if os.tcgetpgrp(0) == os.getpgrp() else 'not-fg')\n"
                  "try:\n    print('name', os.ttyname(0))\n"
                  "except OSError as e:\n    print('noname', errno.errorcode[e.errno])\n"
                  "with open('/dev/tty', 'w') as t:\n    t.write('via-dev-tty\\n')\n");
  Runner::Terminal term = run().StartProgramInTerminal(
      {SrtAttachBinary(), socket_, "sh", "-c", "python3 look.py; echo via-sh > /dev/tty"});
  RunResult r = run().FinishInTerminal(term);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("fg\r"), std::string::npos) << r.out;  // "\r\r\n" before srt-attach's raw
  EXPECT_EQ(r.out.find("not-fg"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("noname ENODEV"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("via-dev-tty"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("via-sh"), std::string::npos) << r.out;
}

// The sandbox's /dev/pts numbers its ptys as the commands' instance does: the pty another
// command makes there with the number of this command's terminal is not this command's
// terminal. /dev/tty opened for writing (which the write guard performs) is the terminal the
// command holds, and ENXIO once it holds it on none of its standard descriptors: never that
// other pty, whose master is read here for anything written to it.
TEST_P(ServeTest, DevTtyIsNeverAnotherPtyOfTheSameNumber) {
  run().WriteFile("other.py",
                  "import fcntl, os, select, struct\n"
                  "m = os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY)\n"
                  "fcntl.ioctl(m, 0x40045431, struct.pack('i', 0))  # TIOCSPTLCK: unlocked\n"
                  "n = struct.unpack('I', fcntl.ioctl(m, 0x80045430, bytes(4)))[0]  # TIOCGPTN\n"
                  "open('other-name', 'w').write('/dev/pts/%d\\n' % n)\n"
                  "got = b''\n"
                  "for _ in range(100):\n"
                  "    if os.path.exists('probed'): break\n"
                  "    if select.select([m], [], [], 0.05)[0]: got += os.read(m, 4096)\n"
                  "open('other-got', 'w').write(repr(got) + '\\n')\n");
  run().WriteFile("own.py",
                  "import errno, os, time\n"
                  "for _ in range(500):\n"
                  "    if os.path.exists('other-name'): break\n"
                  "    time.sleep(0.02)\n"
                  "def tty(tag):\n"
                  "    try:\n"
                  "        with open('/dev/tty', 'w') as t: t.write('secret-' + tag + '\\n')\n"
                  "        return 'ok'\n"
                  "    except OSError as e: return errno.errorcode[e.errno]\n"
                  "held = tty('held')\n"
                  "for fd in (0, 1, 2): os.close(fd)\n"
                  "open('own-got', 'w').write(held + ' ' + tty('none') + '\\n')\n"
                  "open('probed', 'w')\n");
  Runner::Terminal term =
      run().StartProgramInTerminal({SrtAttachBinary(), socket_, "python3", "own.py"});
  RunResult other = Attach({"python3", "other.py"});
  RunResult r = run().FinishInTerminal(term);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(run().ReadFile("other-name"), "/dev/pts/0\n");
  EXPECT_EQ(run().ReadFile("own-got"), "ok ENXIO\n");
  EXPECT_NE(r.out.find("secret-held"), std::string::npos) << r.out;
  EXPECT_EQ(run().ReadFile("other-got"), "b''\n");
}

TEST_P(ServeTest, EndOfInputReachesTheCommand) {
  RunResult r = run().Host(
      {"sh", "-c",
       "printf 'a\\nb\\n' | " + std::string(SrtBinary()) + " --attach " + socket_ + " wc -l"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2\n");
}

TEST_P(ServeTest, SigtermLeavesNoProcessAndNoSocket) {
  const std::string name = "serve-sleeper-" + std::to_string(getpid()) + (root() ? "r" : "u");
  run().MakeSymlink("/bin/sleep", name);
  // The command says when it runs (a process matching `name` could be the client's).
  std::string script = std::string(SrtBinary()) + " --attach " + socket_ +
                       " sh -c ': > running; exec ./" + name + " 60'; echo $? > code\n";
  RunResult bg = run().Host({"sh", "-c", "(" + script + ") > /dev/null 2> attach-err &"});
  ASSERT_EQ(bg.exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return run().Exists("running"); }, std::chrono::seconds(10)));
  kill(serve_, SIGTERM);
  RunResult r = run().Finish(serve_);
  serve_ = -1;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(run().Exists("../run/srt.sock"));
  EXPECT_TRUE(Eventually([&] { return ProcessesMatching(name).empty(); }))
      << "a command outlived srt --serve";
  ASSERT_TRUE(Eventually([&] { return run().Exists("code"); }));
  EXPECT_EQ(run().ReadFile("code"), std::to_string(128 + SIGKILL) + "\n")
      << run().ReadFile("attach-err");
  // ... and an attach now says clearly that nothing serves there.
  RunResult late = Attach({"true", "x"});
  EXPECT_EQ(late.exit_code, 125);
  EXPECT_NE(late.err.find("no srt --serve is running there"), std::string::npos) << late.err;
}

TEST_P(ServeTest, ACommandCannotSignalTheSandboxsInit) {
  // PID 1 (srt-init, which forks every command) gets no signal it does not handle from inside
  // its pid namespace: the warm sandbox serves on.
  RunResult r = Attach({"sh", "-c", "kill -KILL 1; kill -TERM 1; kill -INT 1; echo sent"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "sent\n");
  RunResult after = Attach({"echo", "still-serving"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, "still-serving\n");
}

// Each command is in a Landlock domain of its own (Linux 6.12+): another command can neither
// read its descriptors (its stdio) or environment through /proc nor signal it; the sandbox's
// /proc (hidepid=invisible) does not even show it.
TEST_P(ServeTest, ACommandCannotReachAnothersStdioOrSignalIt) {
  RunResult abi = run().Host(
      {"python3", "-c", "import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))"});
  if (abi.exit_code != 0 || std::atoi(abi.out.c_str()) < 6) {
    GTEST_SKIP() << "Landlock ABI 6 (LANDLOCK_SCOPE_SIGNAL) is missing here";
  }
  run().WriteFile("a.sh", "echo $$ > a.pid\nexec sleep 30\n");
  const std::string script = std::string(SrtBinary()) + " --attach " + socket_ +
                             " sh a.sh > /dev/null 2>&1 &\n"
                             "while [ ! -s a.pid ]; do sleep 0.02; done\n";
  ASSERT_EQ(run().Host({"sh", "-c", script}).exit_code, 0);
  std::string pid = run().ReadFile("a.pid");
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  EXPECT_EQ(Attach(Probe({"read", "/proc/" + pid + "/environ"})).exit_code, ENOENT);
  RunResult fd = Attach({"sh", "-c", "ls /proc/" + pid + "/fd/ 2>/dev/null; echo ls=$?"});
  EXPECT_NE(fd.out.find("ls=2"), std::string::npos) << fd.out;
  RunResult kill = Attach({"sh", "-c", "kill -TERM " + pid + " 2>/dev/null; echo kill=$?"});
  EXPECT_EQ(kill.out, "kill=1\n");
  EXPECT_NE(Attach({"test", "-d", "/proc/" + pid}).exit_code, 0);
  // ... while a command still sees its own processes.
  RunResult own =
      Attach({"sh", "-c", "sleep 5 & test -r /proc/$!/environ && echo own-ok; kill $!"});
  EXPECT_EQ(own.out, "own-ok\n") << own.err;
}

TEST_P(ServeTest, AnotherUsersSocketIsRefused) {
  if (root()) GTEST_SKIP() << "needs a server of another uid than the test's (root)";
  // This test runs as root, the server as nobody: root could connect (it passes the socket's
  // mode), and both ends refuse it by uid.
  const std::string err = run().Path("root-attach.err");
  const std::string cmd = std::string(SrtBinary()) + " --attach " + socket_ + " true x 2> " + err;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 125);
  EXPECT_NE(run().ReadFile("root-attach.err").find("not by you; refusing"), std::string::npos)
      << run().ReadFile("root-attach.err");
}

TEST_P(ServeTest, TheSocketIsPrivate) {
  struct stat st {};
  ASSERT_EQ(lstat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A second server refuses a socket that is served.
  RunResult r = run().SrtRaw({"--serve", socket_});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("another srt --serve is serving it"), std::string::npos) << r.err;
}

TEST_P(ServeTest, AServeSocketInADirectoryOthersCanWriteIsRefused) {
  run().MakeDir("open");
  ASSERT_EQ(chmod(run().Path("open").c_str(), 01777), 0);
  RunResult r = run().SrtRaw({"--serve", run().Path("open/s")});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("can be written by other users"), std::string::npos) << r.err;
  run().MakeSymlink(run().Path("../run"), "link");
  r = run().SrtRaw({"--serve", run().Path("link/s")});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("goes through a symlink"), std::string::npos) << r.err;
}

// A socket where the sandbox's commands can write could be moved away by one of them, and a
// socket of its own bound at its name: every later --attach would reach nothing (or, were the
// refusal of AF_UNIX sockets ever to slip, the command). Refused, as mitmProxy's socket is.
TEST_P(ServeTest, AServeSocketInsideAWriteRootIsRefused) {
  run().MakeDir("inside");
  RunResult r = run().Srt(kServeSettings, {"--serve", run().Path("inside/s")});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_NE(r.err.find("lies inside the write root '" + run().root() + "'"), std::string::npos)
      << r.err;
  EXPECT_FALSE(run().Exists("inside/s"));
  // Named through '..' from outside, it is the same place.
  r = run().Srt(kServeSettings, {"--serve", run().Path("../run/../w/inside/s")});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_NE(r.err.find("lies inside the write root"), std::string::npos) << r.err;
}

SRT_INSTANTIATE(ServeTest);

// srt-attach keeps srt --attach's contract: the same stdio, environment, directory, statuses,
// messages and signals (each case below is one of the tests above, through srt-attach).
TEST_P(ServeTest, SrtAttachGivesACommandItsOwnEnvironmentDirectoryAndStatus) {
  RunResult a = SmallAttach({"sh", "-c", "echo \"$NAME\"; pwd; echo oops >&2; exit 3"},
                            run().Path("d1"), {"NAME=first"});
  EXPECT_EQ(a.exit_code, 3) << a.err;
  EXPECT_EQ(a.out, "first\n" + run().Path("d1") + "\n");
  EXPECT_EQ(a.err, "oops\n");
  RunResult c = SmallAttach({"-c", "echo $((6 * 7)) $0 $1", "a", "b"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, "42 a b\n");
  RunResult one = SmallAttach({"echo one word"});
  EXPECT_EQ(one.out, "one word\n") << one.err;
  EXPECT_EQ(SmallAttach(Probe({"fds"})).out, "0 1 2\n");
  // The policy and srt's own variables are the serving srt's.
  EXPECT_EQ(SmallAttach(Probe({"read", "secret.txt"})).exit_code, EACCES);
  RunResult env = SmallAttach(Probe({"env", "HTTPS_PROXY"}), "", {"HTTPS_PROXY=http://evil:1"});
  EXPECT_EQ(env.out.find("evil"), std::string::npos) << env.out;
  RunResult in = run().Host(
      {"sh", "-c",
       "printf 'a\\nb\\n' | " + std::string(SrtAttachBinary()) + " " + socket_ + " wc -l"});
  EXPECT_EQ(in.out, "2\n") << in.err;
}

TEST_P(ServeTest, SrtAttachExitStatusesAndMessagesAreSrts) {
  EXPECT_EQ(SmallAttach(Probe({"kill-self", "TERM"})).exit_code, 128 + SIGTERM);
  for (bool small : {false, true}) {
    SCOPED_TRACE(small ? "srt-attach" : "srt --attach");
    auto attach = [&](const std::vector<std::string>& a) {
      return small ? SmallAttach(a) : Attach(a);
    };
    RunResult r = attach({"no-such-command-srt", "x"});
    EXPECT_EQ(r.exit_code, 127);
    EXPECT_EQ(r.err, "srt: no-such-command-srt: command not found\n");
    run().WriteFile("noexec", "#!/bin/sh\n");
    RunResult ne = attach({"./noexec", "x"});
    EXPECT_EQ(ne.exit_code, 126);
    EXPECT_EQ(ne.err, "srt: ./noexec: Permission denied\n");
    RunResult opt = attach({"-s", "other.json", "true", "x"});
    EXPECT_EQ(opt.exit_code, 125) << opt.err;
    EXPECT_EQ(opt.out, "");
  }
  // Nothing served there: the same words as srt's.
  const std::string gone = run().Path("../run/none.sock");
  RunResult srt = run().SrtRaw({"--attach", gone, "true", "x"});
  RunResult small = run().Host({SrtAttachBinary(), gone, "true", "x"});
  EXPECT_EQ(small.exit_code, 125);
  EXPECT_EQ(small.err, srt.err);
  EXPECT_NE(small.err.find("no srt --serve is running there"), std::string::npos) << small.err;
}

TEST_P(ServeTest, ASignalToSrtAttachReachesItsCommand) {
  run().WriteFile("trap.sh",
                  "trap 'echo TERM > got; exit 9' TERM\n: > started\n"
                  "while :; do sleep 0.05; done\n");
  // SRT_DEBUG=1 is -d, as for srt: the relay is said.
  std::string script = "SRT_DEBUG=1 " + std::string(SrtAttachBinary()) + " " + socket_ +
                       " sh trap.sh 2> debug & pid=$!\n"
                       "while [ ! -e started ]; do sleep 0.02; done\n"
                       "kill -TERM $pid; wait $pid; echo $? > code\n";
  RunResult r = run().Host({"sh", "-c", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run().ReadFile("got"), "TERM\n");
  EXPECT_EQ(run().ReadFile("code"), std::to_string(128 + SIGTERM) + "\n");
  EXPECT_NE(run().ReadFile("debug").find("srt: debug: relaying signal 15 to the command"),
            std::string::npos)
      << run().ReadFile("debug");
}

TEST_P(ServeTest, CtrlCOnSrtAttachsTerminalReachesItsCommand) {
  run().WriteFile("fg.sh",
                  "test -t 0 && test -t 1 && echo tty-ok\n"
                  "trap 'echo INT > got; exit 130' INT\n: > started\n"
                  "while :; do sleep 0.05; done\n");
  Runner::Terminal term = run().StartProgramInTerminal({SrtAttachBinary(), socket_, "sh", "fg.sh"});
  ASSERT_TRUE(Eventually([&] { return run().Exists("started"); }, std::chrono::seconds(10)));
  Runner::Type(term, "\x03");
  Runner::TerminalState after;
  RunResult r = run().FinishInTerminal(term, std::chrono::seconds(30), &after);
  EXPECT_EQ(r.exit_code, 130) << r.out;
  EXPECT_NE(r.out.find("tty-ok"), std::string::npos) << r.out;
  EXPECT_EQ(run().ReadFile("got"), "INT\n");
  EXPECT_TRUE(after.echo && after.canonical && after.signals) << "the terminal stayed raw";
}

TEST_P(ServeTest, SrtAttachRefusesAnotherUsersSocket) {
  if (root()) GTEST_SKIP() << "needs a server of another uid than the test's (root)";
  const std::string err = run().Path("root-small.err");
  const std::string cmd = std::string(SrtAttachBinary()) + " " + socket_ + " true x 2> " + err;
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 125);
  EXPECT_NE(run().ReadFile("root-small.err").find("not by you; refusing"), std::string::npos)
      << run().ReadFile("root-small.err");
}

TEST_P(ServeTest, ManySequentialCommandsAreServed) {
  // More commands than the server keeps threads waiting for: each is served, in turn.
  std::string script;
  for (int i = 0; i < 20; ++i) {
    script += std::string(SrtAttachBinary()) + " " + socket_ + " sh -c 'echo " + std::to_string(i) +
              "' >> seq || exit 1\n";
  }
  ASSERT_EQ(run().Host({"sh", "-c", script}).exit_code, 0);
  std::string want;
  for (int i = 0; i < 20; ++i) want += std::to_string(i) + "\n";
  EXPECT_EQ(run().ReadFile("seq"), want);
}

}  // namespace
}  // namespace srt::it
