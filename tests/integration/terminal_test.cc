// SPDX-License-Identifier: Apache-2.0
// srt in a real terminal, as a person uses it: Ctrl-C and Ctrl-\ typed on a pty reach srt's
// whole foreground process group, and the command must get the signal once, srt must exit as
// the command did, and nothing may be left behind.
#include <dirent.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "srt_fixture.h"

namespace srt::it {
namespace {

using TerminalTest = SrtTest;

const char* kWriteCwd = R"({"filesystem": {"allowWrite": ["."]}})";

// The lines of `text`.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

class Keyboard {
 public:
  Keyboard(Runner& run, const std::string& settings, const std::vector<std::string>& args)
      : run_(run), term_(run.StartInTerminal(settings, args)) {}

  // Waits for the command to say it is ready (it creates `marker`), then types `keys`.
  void TypeWhen(const std::string& marker, std::string_view keys) {
    ASSERT_TRUE(Eventually([&] { return run_.Exists(marker); }, std::chrono::seconds(10)))
        << "the command never created " << marker;
    Runner::Type(term_, keys);
  }
  RunResult Finish() { return run_.FinishInTerminal(term_); }

 private:
  Runner& run_;
  Runner::Terminal term_;
};

// What a run must not leave: its processes (their programs are named by `marker`), its private
// TMPDIR (recorded by the command in `tmpdir`), and anything at the protected paths.
void ExpectNothingLeft(Runner& run, const std::string& marker) {
  EXPECT_TRUE(Eventually([&] { return ProcessesMatching(marker).empty(); }))
      << "processes of the sandbox outlived srt";
  std::string tmpdir = run.ReadFile("tmpdir");
  while (!tmpdir.empty() && tmpdir.back() == '\n') tmpdir.pop_back();
  ASSERT_EQ(tmpdir.rfind("/tmp/srt-", 0), 0u) << "the command did not record its TMPDIR";
  EXPECT_NE(access(tmpdir.c_str(), F_OK), 0) << tmpdir << " was left on the host";
  for (const char* name : {".mcp.json", ".bashrc", ".vscode", ".gitmodules"}) {
    EXPECT_FALSE(run.Exists(name)) << name << " was left on the host";
  }
}

// A program of the test's own name, so that its processes can be found on the host.
std::string Sleeper(Runner& run, const std::string& what, bool root) {
  std::string name = what + "-" + std::to_string(getpid()) + (root ? "r" : "u");
  run.MakeSymlink("/bin/sleep", name);
  return name;
}

TEST_P(TerminalTest, CtrlCEndsTheForegroundCommand) {
  const std::string sleeper = Sleeper(run(), "fg-sleeper", root());
  run().WriteFile("fg.sh",
                  "echo \"$TMPDIR\" > tmpdir\ntrap 'echo INT >> got; exit 130' INT\n"
                  ": > started\nwhile :; do ./" +
                      sleeper + " 0.05; done\n");
  Keyboard k(run(), kWriteCwd, {"sh", "fg.sh"});
  k.TypeWhen("started", "\x03");
  RunResult r = k.Finish();
  EXPECT_EQ(r.exit_code, 128 + SIGINT) << r.out;
  EXPECT_EQ(r.out.find("Connection reset"), std::string::npos) << r.out;
  EXPECT_EQ(Lines(run().ReadFile("got")), std::vector<std::string>{"INT"}) << "signals: " << r.out;
  ExpectNothingLeft(run(), sleeper);
}

TEST_P(TerminalTest, CtrlCReachesTheCommandsChildrenOnce) {
  // The command's own child runs in the foreground, as `make` runs a compiler: in a terminal
  // both get SIGINT, once each.
  const std::string sleeper = Sleeper(run(), "child-sleeper", root());
  run().WriteFile("child.sh",
                  "trap 'echo child >> got; exit 1' INT\n: > started\n"
                  "while :; do ./" +
                      sleeper + " 0.05; done\n");
  run().WriteFile("parent.sh",
                  "echo \"$TMPDIR\" > tmpdir\n"
                  "trap 'echo parent >> got' INT\nsh child.sh\nexit 7\n");
  Keyboard k(run(), kWriteCwd, {"sh", "parent.sh"});
  k.TypeWhen("started", "\x03");
  RunResult r = k.Finish();
  std::vector<std::string> got = Lines(run().ReadFile("got"));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"child", "parent"})) << r.out;
  EXPECT_NE(r.exit_code, 125) << r.out;
  ExpectNothingLeft(run(), sleeper);
}

TEST_P(TerminalTest, ACommandThatIgnoresCtrlCRunsToItsEnd) {
  const std::string sleeper = Sleeper(run(), "ign-sleeper", root());
  run().WriteFile("ign.sh", "echo \"$TMPDIR\" > tmpdir\ntrap '' INT\n: > started\n./" + sleeper +
                                " 0.3\necho finished > finished\n");
  Keyboard k(run(), kWriteCwd, {"sh", "ign.sh"});
  k.TypeWhen("started", "\x03");
  RunResult r = k.Finish();
  EXPECT_EQ(run().ReadFile("finished"), "finished\n") << r.out;
  EXPECT_EQ(r.out.find("srt:"), std::string::npos) << r.out;
  EXPECT_EQ(r.exit_code, 0) << "srt must exit as the command did: " << r.out;
  ExpectNothingLeft(run(), sleeper);
}

TEST_P(TerminalTest, CtrlBackslashQuitsTheCommand) {
  const std::string sleeper = Sleeper(run(), "quit-sleeper", root());
  run().WriteFile("quit.sh",
                  "echo \"$TMPDIR\" > tmpdir\n: > started\nexec ./" + sleeper + " 600\n");
  Keyboard k(run(), kWriteCwd, {"sh", "quit.sh"});
  k.TypeWhen("started", "\x1c");
  RunResult r = k.Finish();
  EXPECT_EQ(r.exit_code, 128 + SIGQUIT) << r.out;
  ExpectNothingLeft(run(), sleeper);
}

// The command gets a terminal of its own: a real one (tty, /dev/tty, the caller's size), which it
// may put in any mode and size without touching the caller's.
TEST_P(TerminalTest, TheCommandHasATerminalOfItsOwn) {
  run().WriteFile("own.sh",
                  "echo \"$TMPDIR\" > tmpdir\ntty > ttyname\n"
                  "test -t 0 && test -t 1 && test -t 2 && echo yes > all-tty\n"
                  "echo via-dev-tty > /dev/tty\nstty size > size-inside\n"
                  "stty raw -echo -isig cols 17 rows 5\n");
  Runner::Terminal t = run().StartInTerminal(kWriteCwd, {"sh", "own.sh"});
  Runner::TerminalState after;
  RunResult r = run().FinishInTerminal(t, std::chrono::seconds(30), &after);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(run().ReadFile("ttyname").rfind("/dev/pts/", 0), 0u) << run().ReadFile("ttyname");
  EXPECT_EQ(run().ReadFile("all-tty"), "yes\n");
  EXPECT_NE(r.out.find("via-dev-tty"), std::string::npos) << r.out;
  EXPECT_EQ(run().ReadFile("size-inside"), "40 100\n");
  EXPECT_TRUE(after.echo && after.canonical && after.signals)
      << "the command left the caller's terminal in its modes";
  EXPECT_EQ(after.rows, 40u);
  EXPECT_EQ(after.cols, 100u);
}

// The sandbox's /dev/pts holds at most 256 ptys (max=): a command cannot take every pty the
// host's kernel.pty.max leaves to containers and sandboxes (3072 by default).
TEST_P(TerminalTest, TheSandboxsPtysAreLimited) {
  run().WriteFile("many.py",
                  "import errno, os\nfds = []\n"
                  "try:\n"
                  "    for _ in range(400):\n"
                  "        fds.append(os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY))\n"
                  "except OSError as e:\n    print(len(fds), errno.errorcode[e.errno])\n"
                  "else:\n    print(len(fds), 'all')\n");
  RunResult r = run().Srt(kWriteCwd, {"python3", "many.py"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "256 ENOSPC\n") << r.err;
}

TEST_P(TerminalTest, WhatIsTypedReachesTheCommand) {
  run().WriteFile("read.sh",
                  "echo \"$TMPDIR\" > tmpdir\n: > started\nread line\necho \"got:$line\" > got\n");
  Keyboard k(run(), kWriteCwd, {"sh", "read.sh"});
  k.TypeWhen("started", "hello\r");
  RunResult r = k.Finish();
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(run().ReadFile("got"), "got:hello\n") << r.out;
  EXPECT_NE(r.out.find("hello"), std::string::npos) << "no echo: " << r.out;
}

size_t CountLines(Runner& run, const std::string& file) {
  return run.Exists(file) ? Lines(run.ReadFile(file)).size() : 0;
}

// Ctrl-Z in an interactive shell: srt and the command stop together, the shell gets its
// terminal back, and `fg` goes on where they were.
// Found by a hostile review: Ctrl-Z typed while the sandbox starts, once srt has made the
// caller's terminal raw, reached the command while it waited for the go-ahead with its signals
// blocked; it stopped just before its execve, with PID 1 waiting for that execve, and nothing
// (Ctrl-C included) ended srt. Whoever is stopped now (srt itself, before it makes the terminal
// raw, or the command, after it runs) is continued as `fg` would, and every run ends.
TEST_P(TerminalTest, CtrlZWhileTheSandboxStartsNeverHangsIt) {
  for (int trial = 0; trial < 6; ++trial) {
    Runner::Terminal t = run().StartInTerminal(kWriteCwd, {"sh", "-c", "echo STARTED"});
    const auto start = std::chrono::steady_clock::now();
    bool ended = false;
    std::string shown;
    auto typed = start - std::chrono::seconds(1);
    while (!ended && std::chrono::steady_clock::now() - start < std::chrono::seconds(8)) {
      const auto now = std::chrono::steady_clock::now();
      if (now - start < std::chrono::milliseconds(60) &&
          now - typed >= std::chrono::milliseconds(3)) {
        Runner::Type(t, "\x1a");
        typed = now;
      }
      // Every stopped process of srt's session is continued: its job as `fg` would, and also a
      // child srt spawns, which a Ctrl-Z can stop just before it leaves srt's process group
      // (left open: see the Ctrl-Z paragraph of docs/filesystem.md).
      if (DIR* proc = opendir("/proc")) {
        while (dirent* e = readdir(proc)) {
          std::string stat;
          std::getline(std::ifstream(std::string("/proc/") + e->d_name + "/stat"), stat);
          const size_t close = stat.rfind(')');
          if (close == std::string::npos) continue;
          std::istringstream fields(stat.substr(close + 2));
          char state = 0;
          long ppid = 0, pgrp = 0, session = 0;
          if (fields >> state >> ppid >> pgrp >> session && session == t.pid && state == 'T') {
            kill(static_cast<pid_t>(std::stol(e->d_name)), SIGCONT);
          }
        }
        closedir(proc);
      }
      char buf[4096];
      pollfd p{t.master, POLLIN, 0};
      if (poll(&p, 1, 2) > 0) {
        ssize_t n = read(t.master, buf, sizeof buf);
        if (n > 0) shown.append(buf, static_cast<size_t>(n));
      }
      int st = 0;
      ended = waitpid(t.pid, &st, WNOHANG) == t.pid;
    }
    if (!ended) {
      kill(t.pid, SIGKILL);
      waitpid(t.pid, nullptr, 0);
    }
    close(t.master);
    EXPECT_TRUE(ended) << "trial " << trial << ": srt never ended; the terminal showed: " << shown;
  }
}

TEST_P(TerminalTest, CtrlZStopsTheCommandWithSrtAndFgContinuesBoth) {
  run().WriteFile("job.sh",
                  "echo \"$TMPDIR\" > tmpdir\n: > started\n"
                  "while [ ! -e go ]; do echo tick >> ticks; sleep 0.05; done\nexit 4\n");
  Runner::Terminal t =
      run().StartProgramInTerminal({"bash", "--norc", "--noprofile", "-i"}, "", {"PS1=$ "});
  Runner::Type(t,
               std::string(SrtBinary()) + " -s " + run().SettingsFile(kWriteCwd) + " sh job.sh\r");
  if (!Eventually([&] { return CountLines(run(), "ticks") >= 2; }, std::chrono::seconds(10))) {
    Runner::Type(t, "\x03exit\r");
    FAIL() << "the command never ran; the terminal showed: "
           << run().FinishInTerminal(t, std::chrono::seconds(5)).out;
  }
  Runner::Type(t, "\x1a");
  // A person types on once the shell has said the job stopped and shown its prompt again: what
  // is typed before that is still srt's to relay to the command.
  std::string shown;
  if (!Runner::WaitToSee(t, "Stopped", shown) ||
      !Runner::WaitToSee(t, "$ ", shown, shown.find("Stopped"))) {
    Runner::Type(t, "kill -9 %1; exit\r");
    FAIL() << "the shell never got its terminal back; it showed: " << shown
           << run().FinishInTerminal(t, std::chrono::seconds(5)).out;
  }
  // The command has stopped ticking.
  size_t ticks = 0;
  EXPECT_TRUE(Eventually([&] {
    ticks = CountLines(run(), "ticks");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return CountLines(run(), "ticks") == ticks;
  })) << "the command did not stop";
  Runner::Type(t, "jobs > jobs.txt\r");
  ASSERT_TRUE(Eventually([&] { return run().Exists("jobs.txt"); }, std::chrono::seconds(10)));
  EXPECT_NE(run().ReadFile("jobs.txt").find("Stopped"), std::string::npos)
      << run().ReadFile("jobs.txt");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(CountLines(run(), "ticks"), ticks) << "the command ran on while srt was stopped";
  // One line: what is typed while the job runs is the job's.
  Runner::Type(t, "touch go; fg; echo \"rc=$?\" > rc.txt; exit\r");
  RunResult r = run().FinishInTerminal(t);
  EXPECT_EQ(run().ReadFile("rc.txt"), "rc=4\n") << r.out;
}

SRT_INSTANTIATE(TerminalTest);

}  // namespace
}  // namespace srt::it
