// SPDX-License-Identifier: Apache-2.0
// srt-serve-bench: many short commands in one repository, bare, under bare bwrap, under `srt`
// (one sandbox each) and under `srt --serve` + `srt --attach` and `srt-attach` (one warm sandbox
// for all), and the per-command overhead of an attached command over a bare one.
//
// The workload is the issue's: a git repository of --files files (default 10000) and --commands
// commands (default 200) cycling through `git status`, `ls`, `cat FILE` and `python3 -c pass`,
// run one after another from a small driver, each with stdout and stderr to /dev/null. Not a
// test: it prints figures and never judges them (bench/README.md records them with the load).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"

extern char** environ;

namespace srt::bench {
namespace {

struct Options {
  int files = 10000;
  int commands = 200;
  int rounds = 3;
  std::string srt;
  std::string srt_attach;
  std::string bwrap;
  std::string workdir = "/tmp";
};

constexpr char kUsage[] =
    "Usage: srt-serve-bench [--files N] [--commands N] [--rounds N] [--srt PATH] [--bwrap PATH]\n"
    "                       [--srt-attach PATH] [--workdir DIR]\n"
    "Times N short commands (git status, ls, cat, python3 -c pass) in a repository of --files\n"
    "files: bare, under bare bwrap, one `srt` each, and attached to one `srt --serve` (with\n"
    "`srt --attach` and with `srt-attach`, when there is one beside srt or at --srt-attach);\n"
    "then the per-command overhead of an attached `true` over a bare `true`, also with a\n"
    "terminal (a pty the bench makes for each). The median of --rounds.\n";

// Runs argv in `cwd` with stdout/stderr to /dev/null, or (`terminal`) with stdin, stdout and
// stderr on a new pty whose output is drained until it hangs up; returns the wait status.
int Run(const std::vector<std::string>& argv, const std::string& cwd, bool terminal = false) {
  std::vector<char*> c;
  for (const std::string& a : argv) c.push_back(const_cast<char*>(a.c_str()));
  c.push_back(nullptr);
  int master = -1, replica = -1;
  if (terminal) {
    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) Die("posix_openpt");
    replica = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (replica < 0) Die("open the pty's replica");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (terminal) {
    for (int fd = 0; fd < 3; ++fd) posix_spawn_file_actions_adddup2(&fa, replica, fd);
  } else {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  pid_t pid;
  int err = posix_spawnp(&pid, c[0], &fa, nullptr, c.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) Die("spawn " + argv[0] + ": " + std::string(strerror(err)));
  if (terminal) {
    close(replica);
    char buf[4096];
    while (read(master, buf, sizeof buf) > 0) {
    }
    close(master);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
  }
  return st;
}

std::vector<std::vector<std::string>> Workload(int n) {
  const std::vector<std::vector<std::string>> kinds = {
      {"git", "status", "--short"}, {"ls", "-1"}, {"cat", "d0/f0.txt"}, {"python3", "-c", "pass"}};
  std::vector<std::vector<std::string>> out;
  for (int i = 0; i < n; ++i) out.push_back(kinds[static_cast<size_t>(i) % kinds.size()]);
  return out;
}

// Seconds for one command wrapped by `prefix`.
double Time(const std::vector<std::string>& prefix, const std::vector<std::string>& cmd,
            const std::string& repo, bool terminal = false) {
  const double start = ClockSeconds(CLOCK_MONOTONIC);
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  int st = Run(argv, repo, terminal);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    Die("`" + argv[0] + " ... " + cmd[0] + "` failed: " + DescribeStatus(st));
  }
  if (StopRequested()) Die("stopped");
  return ClockSeconds(CLOCK_MONOTONIC) - start;
}

// Each command under every contender in turn (so that a change of the machine's load between
// them touches all alike); the workload's total per contender, per round.
std::vector<std::vector<double>> Interleaved(const std::vector<std::vector<std::string>>& prefixes,
                                             const std::vector<std::vector<std::string>>& work,
                                             const std::string& repo, int rounds) {
  std::vector<std::vector<double>> totals(prefixes.size());
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> round(prefixes.size(), 0);
    for (const auto& cmd : work) {
      for (size_t c = 0; c < prefixes.size(); ++c) round[c] += Time(prefixes[c], cmd, repo);
    }
    for (size_t c = 0; c < prefixes.size(); ++c) totals[c].push_back(round[c]);
  }
  return totals;
}

void MakeRepo(const std::string& repo, int files) {
  for (int i = 0; i < files; ++i) {
    WriteFile(repo + "/d" + std::to_string(i / 100) + "/f" + std::to_string(i % 100) + ".txt",
              "file " + std::to_string(i) + "\n");
  }
  for (const std::vector<std::string>& c :
       {std::vector<std::string>{"git", "init", "-q"},
        {"git", "add", "-A"},
        {"git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"}}) {
    if (Run(c, repo) != 0) Die("git setup failed in " + repo);
  }
}

}  // namespace
}  // namespace srt::bench

int main(int argc, char** argv) {
  using namespace srt::bench;
  SetProgramName("srt-serve-bench");
  CatchStopSignals();
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help") PrintUsageAndExit(kUsage);
    if (a == "--files") {
      o.files = ParseCount(a, OptionValue(argc, argv, i), 1, 200000);
    } else if (a == "--commands") {
      o.commands = ParseCount(a, OptionValue(argc, argv, i), 4, 100000);
    } else if (a == "--rounds") {
      o.rounds = ParseCount(a, OptionValue(argc, argv, i), 1, 100);
    } else if (a == "--srt") {
      o.srt = OptionValue(argc, argv, i);
    } else if (a == "--srt-attach") {
      o.srt_attach = OptionValue(argc, argv, i);
    } else if (a == "--bwrap") {
      o.bwrap = OptionValue(argc, argv, i);
    } else if (a == "--workdir") {
      o.workdir = OptionValue(argc, argv, i);
    } else {
      DieUnknownOption(a);
    }
  }
  if (o.srt.empty()) o.srt = SelfDir() + "/srt";
  if (o.bwrap.empty()) o.bwrap = FindInPath("bwrap");
  if (!IsExecutableFile(o.srt)) Die("no srt at " + o.srt + " (--srt)");
  if (o.srt_attach.empty()) {
    // Beside srt (an older build has none: its rows are left out).
    const std::string beside = o.srt.substr(0, o.srt.rfind('/') + 1) + "srt-attach";
    if (IsExecutableFile(beside)) o.srt_attach = beside;
  } else if (!IsExecutableFile(o.srt_attach)) {
    Die("no srt-attach at " + o.srt_attach + " (--srt-attach)");
  }
  const bool small_client = !o.srt_attach.empty();
  if (o.bwrap.empty()) Die("no bwrap in PATH (--bwrap)");

  const std::string scratch = CreateScratch(o.workdir, "srt-serve-bench");
  // The socket's directory must be the user's alone; the scratch directory is (mkdtemp, 0700).
  const std::string repo = scratch + "/repo";
  const std::string settings = scratch + "/settings.json";
  const std::string socket = scratch + "/serve.sock";
  WriteFile(settings, R"({"filesystem": {"allowWrite": ["./repo"]}})");
  std::printf("load average before: %s\n", LoadAverage().c_str());
  std::printf("making a repository of %d files...\n", o.files);
  std::fflush(stdout);
  MakeRepo(repo, o.files);
  const auto work = Workload(o.commands);

  // Start the warm sandbox.
  std::vector<char*> serve_argv;
  std::vector<std::string> serve_args = {o.srt, "-s", settings, "--serve", socket};
  for (std::string& s : serve_args) serve_argv.push_back(s.data());
  serve_argv.push_back(nullptr);
  pid_t serve = -1;
  if (posix_spawn(&serve, o.srt.c_str(), nullptr, nullptr, serve_argv.data(), environ) != 0) {
    Die("spawn srt --serve");
  }
  for (int i = 0; i < 500 && access(socket.c_str(), F_OK) != 0; ++i) usleep(10000);
  if (access(socket.c_str(), F_OK) != 0) Die("srt --serve made no socket");

  const std::vector<std::string> bwrap = {o.bwrap,
                                          "--ro-bind",
                                          "/",
                                          "/",
                                          "--dev",
                                          "/dev",
                                          "--proc",
                                          "/proc",
                                          "--bind",
                                          repo,
                                          repo,
                                          "--unshare-all",
                                          "--die-with-parent",
                                          "--new-session",
                                          "--"};
  const std::vector<std::string> srt = {o.srt, "-s", settings, "--"};
  const std::vector<std::string> attach = {o.srt, "--attach", socket, "--"};
  const std::vector<std::string> small = {o.srt_attach, socket, "--"};
  std::vector<std::vector<std::string>> prefixes = {{}, bwrap, srt, attach};
  std::vector<const char*> names = {"bare", "bwrap", "srt (one sandbox each)",
                                    "srt --serve + srt --attach"};
  if (small_client) {
    prefixes.push_back(small);
    names.push_back("srt --serve + srt-attach");
  }
  const auto totals = Interleaved(prefixes, work, repo, o.rounds);
  std::printf("\n%d commands (git status, ls, cat, python3 -c pass), %d files, median of %d:\n",
              o.commands, o.files, o.rounds);
  const double bare = Median(totals[0]);
  for (size_t c = 0; c < totals.size(); ++c) {
    const double s = Median(totals[c]);
    std::printf("  %-28s %7.2f s  %5.2fx bare\n", names[c], s, s / bare);
  }
  // Per command: `true x` bare and attached, and each client's own start (`--version`: its
  // loader and libraries), which every attached command pays before the warm sandbox is asked
  // anything.
  const std::vector<std::vector<std::string>> trues(static_cast<size_t>(o.commands), {"true", "x"});
  enum { kBare, kAttach, kVersion, kSmall, kSmallVersion, kBareTty, kSmallTty, kColumns };
  std::vector<std::vector<double>> per(kColumns);
  for (int r = 0; r < o.rounds; ++r) {
    std::vector<double> round(kColumns, 0);
    for (const auto& cmd : trues) {
      round[kBare] += Time({}, cmd, repo);
      round[kAttach] += Time(attach, cmd, repo);
      round[kVersion] += Time({o.srt}, {"--version"}, repo);
      if (small_client) {
        round[kSmall] += Time(small, cmd, repo);
        round[kSmallVersion] += Time({o.srt_attach}, {"--version"}, repo);
        // With a terminal: the command gets a pty of its own (docs/serve.md, The terminal).
        round[kBareTty] += Time({}, cmd, repo, /*terminal=*/true);
        round[kSmallTty] += Time(small, cmd, repo, /*terminal=*/true);
      }
    }
    for (size_t c = 0; c < kColumns; ++c) per[c].push_back(round[c]);
  }
  auto ms = [&](int column) {
    return Median(per[static_cast<size_t>(column)]) / o.commands * 1000;
  };
  std::printf(
      "\nper command, `true x`: bare %.3f ms, srt --attach %.3f ms: %.3f ms of overhead,\n"
      "  of which %.3f ms is starting the attaching srt (`srt --version` over bare `true`)\n"
      "  and %.3f ms the warm sandbox (socket, srt --serve, srt-init's fork and exec)\n",
      ms(kBare), ms(kAttach), ms(kAttach) - ms(kBare), ms(kVersion) - ms(kBare),
      ms(kAttach) - ms(kVersion));
  if (small_client) {
    std::printf(
        "per command, `true x`: bare %.3f ms, srt-attach %.3f ms: %.3f ms of overhead,\n"
        "  of which %.3f ms is starting srt-attach (`srt-attach --version` over bare `true`)\n"
        "  and %.3f ms the warm sandbox\n",
        ms(kBare), ms(kSmall), ms(kSmall) - ms(kBare), ms(kSmallVersion) - ms(kBare),
        ms(kSmall) - ms(kSmallVersion));
    std::printf(
        "per command in a terminal, `true x`: bare %.3f ms, srt-attach %.3f ms: %.3f ms of "
        "overhead\n  (%.3f ms more than without a terminal: the command's pty, relayed)\n",
        ms(kBareTty), ms(kSmallTty), ms(kSmallTty) - ms(kBareTty),
        (ms(kSmallTty) - ms(kBareTty)) - (ms(kSmall) - ms(kBare)));
  }
  std::printf("load average after: %s\n", LoadAverage().c_str());
  kill(serve, SIGTERM);
  int st = 0;
  waitpid(serve, &st, 0);
  if (access(socket.c_str(), F_OK) == 0) Die("srt --serve left its socket behind");
  RemoveScratch();
  return 0;
}
