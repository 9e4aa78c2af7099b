// SPDX-License-Identifier: Apache-2.0
// srt-scale-bench: how srt's start-up grows with the work a policy asks for, beside bare bwrap
// given the same mounts. Four curves (issue 12): denied files (each a /dev/null over a file),
// allowWrite roots (each a writable bind, with its mandatory denies), entries allowed back in a
// hidden directory (each a read-only bind in a tmpfs), and the mandatory-deny walk over a tree of
// directories at mandatoryDenySearchDepth 10. Each point runs `srt -c true` and the
// bwrap command in turn (A B A B ...) and prints the medians and their ratio. It prints figures
// and asserts nothing; its exit status is non-zero only when it cannot measure.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_util.h"

extern char** environ;

namespace {

using srt::bench::Die;

struct Options {
  std::string srt, bwrap, workdir = "/var/tmp";
  int runs = 9;
};

constexpr char kUsage[] =
    R"(Usage: srt-scale-bench [--runs N] [--srt PATH] [--bwrap PATH] [--workdir DIR]

How srt's start-up grows with denied files, allowWrite roots, entries allowed back in a hidden
directory and the mandatory-deny walk, beside bare bwrap given the same mounts. Prints median
wall times (ms) and their ratio per point.
  --runs N      timed pairs per point (default 9)
  --srt PATH    default: srt next to this program
  --bwrap PATH  default: bwrap from PATH
  --workdir DIR where the scratch trees go (default /var/tmp)
)";

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") srt::bench::PrintUsageAndExit(kUsage);
    if (a == "--runs") {
      o.runs = srt::bench::ParseCount("--runs", srt::bench::OptionValue(argc, argv, i), 3, 100);
    } else if (a == "--srt") {
      o.srt = srt::bench::OptionValue(argc, argv, i);
    } else if (a == "--bwrap") {
      o.bwrap = srt::bench::OptionValue(argc, argv, i);
    } else if (a == "--workdir") {
      o.workdir = srt::bench::OptionValue(argc, argv, i);
    } else {
      srt::bench::DieUnknownOption(a);
    }
  }
  return o;
}

// Runs argv (stdin and stdout /dev/null, stderr kept) and returns its wall time in ms.
double TimeRun(const std::vector<std::string>& argv, const std::string& cwd) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  const double start = srt::bench::ClockSeconds(CLOCK_MONOTONIC);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) {
    errno = err;
    Die(srt::bench::Errno("cannot start " + argv[0]));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) Die(srt::bench::Errno("waitpid"));
  }
  const double ms = (srt::bench::ClockSeconds(CLOCK_MONOTONIC) - start) * 1000;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Die(argv[0] + " failed (" + srt::bench::DescribeStatus(status) + ")");
  }
  return ms;
}

struct Point {
  std::string label;
  std::string settings;                 // srt's settings file
  std::vector<std::string> bwrap_adds;  // the mounts bare bwrap is given
  std::string cwd;
};

void Measure(const Options& o, const Point& p) {
  const std::vector<std::string> srt_argv = {o.srt, "-s", p.settings, "-c", "true"};
  std::vector<std::string> bwrap_argv = {
      o.bwrap,  "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev",
      "--proc", "/proc"};
  bwrap_argv.insert(bwrap_argv.end(), p.bwrap_adds.begin(), p.bwrap_adds.end());
  bwrap_argv.insert(bwrap_argv.end(), {"--chdir", p.cwd, "true"});
  (void)TimeRun(srt_argv, p.cwd);  // warm-up
  (void)TimeRun(bwrap_argv, p.cwd);
  std::vector<double> s, b, ratio;
  for (int i = 0; i < o.runs && !srt::bench::StopRequested(); ++i) {
    s.push_back(TimeRun(srt_argv, p.cwd));
    b.push_back(TimeRun(bwrap_argv, p.cwd));
    ratio.push_back(s.back() / b.back());
  }
  std::printf("  %-34s srt %8.1f ms   bwrap %8.1f ms   ratio %6.2f\n", p.label.c_str(),
              srt::bench::Median(s), srt::bench::Median(b), srt::bench::Median(ratio));
  (void)std::fflush(stdout);
}

std::string Settings(const std::string& dir, const std::string& name, const std::string& json) {
  std::string path = dir + "/" + name;
  srt::bench::WriteFile(path, json);
  return path;
}

std::string Quoted(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) out += (out.empty() ? "\"" : ", \"") + p + "\"";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  srt::bench::SetProgramName("srt-scale-bench");
  Options o = Parse(argc, argv);
  srt::bench::CatchStopSignals();
  if (o.srt.empty()) o.srt = srt::bench::SelfDir() + "/srt";
  if (o.bwrap.empty()) o.bwrap = srt::bench::FindInPath("bwrap");
  if (!srt::bench::IsExecutableFile(o.srt)) Die("no srt at '" + o.srt + "' (use --srt PATH)");
  if (o.bwrap.empty()) Die("no bwrap found (use --bwrap PATH)");
  const std::string root = srt::bench::CreateScratch(o.workdir, "srt-scale-bench");
  if (std::atexit(srt::bench::RemoveScratch) != 0) Die("atexit");
  const std::string net = R"("network": {"allowedDomains": [], "deniedDomains": []})";
  std::printf("srt-scale-bench: %d pairs per point, load %s\n", o.runs,
              srt::bench::LoadAverage().c_str());

  std::printf("denied files (denyRead of N files in one directory):\n");
  const std::string files = root + "/files";
  std::filesystem::create_directories(files);
  // bwrap takes at most 9,000 arguments on its command line.
  for (int n : {0, 100, 1000, 2500}) {
    std::vector<std::string> paths;
    Point p{std::to_string(n) + " files", "", {}, root};
    for (int i = 0; i < n; ++i) {
      paths.push_back(files + "/f" + std::to_string(i));
      srt::bench::WriteFile(paths.back(), "");
      p.bwrap_adds.insert(p.bwrap_adds.end(), {"--ro-bind", "/dev/null", paths.back()});
    }
    p.settings = Settings(root, "files-" + std::to_string(n) + ".json",
                          "{\"filesystem\": {\"denyRead\": [" + Quoted(paths) +
                              "], \"allowWrite\": [], \"denyWrite\": []}, " + net + "}");
    Measure(o, p);
  }

  std::printf("allowWrite roots (N writable directories):\n");
  for (int n : {1, 10, 100}) {
    std::vector<std::string> dirs;
    Point p{std::to_string(n) + " roots", "", {}, root};
    for (int i = 0; i < n; ++i) {
      dirs.push_back(root + "/roots" + std::to_string(n) + "/r" + std::to_string(i));
      std::filesystem::create_directories(dirs.back());
      p.bwrap_adds.insert(p.bwrap_adds.end(), {"--bind", dirs.back(), dirs.back()});
    }
    p.settings = Settings(root, "roots-" + std::to_string(n) + ".json",
                          "{\"filesystem\": {\"denyRead\": [], \"allowWrite\": [" + Quoted(dirs) +
                              "], \"denyWrite\": []}, " + net + "}");
    Measure(o, p);
  }

  std::printf(
      "entries allowed back in a hidden directory (denyRead D, allowRead N files in D; for root,\n"
      "srt-agent shows them, bwrap re-reads the mount table for each):\n");
  for (int n : {10, 30, 100}) {
    const std::string dir = root + "/shown" + std::to_string(n);
    std::filesystem::create_directories(dir);
    std::vector<std::string> paths;
    Point p{std::to_string(n) + " entries", "", {"--tmpfs", dir}, root};
    for (int i = 0; i < n; ++i) {
      paths.push_back(dir + "/e" + std::to_string(i));
      srt::bench::WriteFile(paths.back(), "");
      p.bwrap_adds.insert(p.bwrap_adds.end(), {"--ro-bind", paths.back(), paths.back()});
    }
    p.settings =
        Settings(root, "shown-" + std::to_string(n) + ".json",
                 "{\"filesystem\": {\"denyRead\": [\"" + dir + "\"], \"allowRead\": [" +
                     Quoted(paths) + "], \"allowWrite\": [], \"denyWrite\": []}, " + net + "}");
    Measure(o, p);
  }

  std::printf("mandatory-deny walk (a write root of N directories, 10 files each, depth 10):\n");
  // (srt refuses a write root of more than 20,000 directories within the depth.)
  for (int n : {1000, 5000}) {
    const std::string tree = root + "/tree" + std::to_string(n);
    for (int i = 0; i < n; ++i) {
      // Ten levels: a/b/c/... from the digits of i, so the tree is deep as well as wide.
      std::string d = tree;
      for (int level = 0, v = i; level < 4; ++level, v /= 10) d += "/d" + std::to_string(v % 10);
      d += "/n" + std::to_string(i);
      std::filesystem::create_directories(d);
      for (int f = 0; f < 10; ++f) srt::bench::WriteFile(d + "/f" + std::to_string(f), "");
    }
    Point p{std::to_string(n) + " directories", "", {"--bind", tree, tree}, tree};
    p.settings = Settings(root, "tree-" + std::to_string(n) + ".json",
                          "{\"mandatoryDenySearchDepth\": 10, \"filesystem\": {\"denyRead\": [], "
                          "\"allowWrite\": [\"" +
                              tree + "\"], \"denyWrite\": []}, " + net + "}");
    Measure(o, p);
  }
  return 0;
}
