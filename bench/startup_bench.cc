// SPDX-License-Identifier: Apache-2.0
// srt-startup-bench: wall time and peak RSS of `srt -c true` under a filesystem policy, measured
// side by side with bare bwrap given the same options (and upstream srt when it is installed).
//
// With --network the settings also allow a domain, so srt starts its proxy and srt-init makes the
// proxy's sockets in the sandbox's network namespace; the baseline stays bare bwrap with the same
// options, and "srt, no network" (the filesystem-only settings) is added beside it.
//
// The machine is shared and noisy, so every figure comes from one run of this program with the
// contenders interleaved round by round (the order rotates each round so no contender always
// follows the same one). The program prints figures and never fails on them: targets are
// reported as PASS/MISS for information. It exits non-zero only when it cannot measure at all.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "bench_util.h"

extern char** environ;

namespace {

using srt::UniqueFd;
using srt::bench::DescribeStatus;
using srt::bench::Die;
using srt::bench::Errno;
using srt::bench::FirstLines;
using srt::bench::IsExecutableFile;
using srt::bench::LoadAverage;
using srt::bench::Stats;
using srt::bench::StopRequested;
using srt::bench::Summarize;
using srt::bench::WriteFile;

constexpr double kTargetRatio = 1.3;
constexpr double kTargetRatioNetwork = 1.5;  // --network
constexpr long kTargetRssKib = 8 * 1024;

// ---------------------------------------------------------------------------------------------
// Options

struct Options {
  int runs = 40;
  int warmup = 3;
  int phase_runs = 10;
  int rss_runs = 5;
  int exit_runs = 20;
  std::string srt;
  std::string bwrap;
  std::string upstream;
  std::string node;
  std::string workdir = "/var/tmp";
  bool no_upstream = false;
  bool network = false;
  bool empty_policy = false;     // --policy empty
  std::string command = "true";  // the shell command every contender runs
};

constexpr std::string_view kUsage =
    "Usage: srt-startup-bench [OPTIONS]\n"
    "\n"
    "Times `srt -s SETTINGS -c true` beside bare bwrap with the same mounts (and upstream srt\n"
    "when installed), interleaved, and prints wall times, their ratio and peak RSS.\n"
    "\n"
    "  --runs N         timed runs per contender (default 40, at least 20 recommended)\n"
    "  --warmup N       untimed rounds first (default 3)\n"
    "  --phase-runs N   extra `srt -d` runs for the phase breakdown (default 10, 0 = skip)\n"
    "  --rss-runs N     extra traced runs reading each front end's own VmHWM (default 5)\n"
    "  --exit-runs N    extra rounds timing the exit: from the command's last instruction to\n"
    "                   the front end reaped, srt and bare bwrap interleaved (default 20)\n"
    "  --srt PATH       srt binary (default: next to this program)\n"
    "  --bwrap PATH     bubblewrap (default: `bwrap` in PATH)\n"
    "  --upstream PATH  upstream srt: its cli.js, its package dir, or a dir holding node_modules\n"
    "                   (default: bench/node_modules of the source tree, then ./bench, then .)\n"
    "  --no-upstream    do not run upstream srt\n"
    "  --node PATH      node for upstream srt (default: `node` in PATH)\n"
    "  --workdir DIR    where the scratch project is created (default /var/tmp; srt hides /tmp)\n"
    "  --network        allowedDomains [example.com]: srt runs its proxy (target <= 1.5x);\n"
    "                   adds \"srt, no network\" with the filesystem-only settings\n"
    "  --policy NAME    developer (default: allowWrite [.], denyRead [~/.ssh, ~/.aws, **/.env],\n"
    "                   denyWrite [./secrets.env, ./docs]) or empty (no filesystem rules)\n"
    "  --command SH     run this shell command instead of `true` (a workload: file creation\n"
    "                   for the write guard, output for the relay), in the scratch project\n";

constexpr int kMaxCount = 100000;  // for every count option

Options ParseOptions(int argc, char** argv) {
  using srt::bench::ParseCount;
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&] { return srt::bench::OptionValue(argc, argv, i); };
    if (a == "--help" || a == "-h") {
      srt::bench::PrintUsageAndExit(kUsage);
    } else if (a == "--runs") {
      o.runs = ParseCount(a, value(), 1, kMaxCount);
    } else if (a == "--warmup") {
      o.warmup = ParseCount(a, value(), 0, kMaxCount);
    } else if (a == "--phase-runs") {
      o.phase_runs = ParseCount(a, value(), 0, kMaxCount);
    } else if (a == "--rss-runs") {
      o.rss_runs = ParseCount(a, value(), 0, kMaxCount);
    } else if (a == "--exit-runs") {
      o.exit_runs = ParseCount(a, value(), 0, kMaxCount);
    } else if (a == "--srt") {
      o.srt = value();
    } else if (a == "--bwrap") {
      o.bwrap = value();
    } else if (a == "--upstream") {
      o.upstream = value();
    } else if (a == "--no-upstream") {
      o.no_upstream = true;
    } else if (a == "--node") {
      o.node = value();
    } else if (a == "--workdir") {
      o.workdir = value();
    } else if (a == "--network") {
      o.network = true;
    } else if (a == "--policy") {
      const std::string name = value();
      if (name != "empty" && name != "developer") {
        srt::bench::Die("--policy: 'empty' or 'developer', not '" + name + "'");
      }
      o.empty_policy = name == "empty";
    } else if (a == "--command") {
      o.command = value();
    } else {
      srt::bench::DieUnknownOption(a);
    }
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Files and paths

std::string ReadAll(int fd, size_t limit = 1u << 20) {
  std::string out;
  char buf[4096];
  off_t off = 0;
  while (out.size() < limit) {
    ssize_t n = pread(fd, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return out;
}

UniqueFd MakeMemfd(const char* name) {
  UniqueFd fd(memfd_create(name, MFD_CLOEXEC));
  if (!fd) Die(Errno(std::string("memfd_create ") + name));
  return fd;
}

// The scratch project: a small, realistic tree (a git checkout, sources, docs), a separate HOME
// holding the credentials the policy hides, and the settings file.
struct Scratch {
  std::string root;
  std::string project;
  std::string home;
  std::string settings;
  std::string settings_no_network;  // --network only: settings without the allowed domain
};

Scratch MakeScratch(const std::string& workdir, bool network, bool empty_policy) {
  const std::string tmpl = srt::bench::CreateScratch(workdir, "srt-bench");
  std::atexit(srt::bench::RemoveScratch);
  Scratch s{tmpl, tmpl + "/project", tmpl + "/home", tmpl + "/settings.json"};
  const std::string& p = s.project;
  WriteFile(p + "/.git/HEAD", "ref: refs/heads/main\n");
  WriteFile(p + "/.git/config",
            "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n");
  WriteFile(p + "/.git/description", "Unnamed repository\n");
  WriteFile(p + "/.git/hooks/pre-commit.sample", "#!/bin/sh\nexit 0\n");
  WriteFile(p + "/.git/hooks/pre-push.sample", "#!/bin/sh\nexit 0\n");
  WriteFile(p + "/.git/refs/heads/main", "0123456789abcdef0123456789abcdef01234567\n");
  std::filesystem::create_directories(p + "/.git/objects/pack");
  WriteFile(p + "/README.md", "# demo\n\nA small project for the srt start-up benchmark.\n");
  WriteFile(p + "/Makefile", "all:\n\tcc -o demo src/main.c src/util/str.c\n");
  WriteFile(p + "/src/main.c",
            "#include \"util/str.h\"\nint main(void) { return str_len(\"\"); }\n");
  WriteFile(p + "/src/util/str.h", "int str_len(const char* s);\n");
  WriteFile(p + "/src/util/str.c",
            "int str_len(const char* s) { int n = 0; while (s[n]) ++n; return n; }\n");
  WriteFile(p + "/tests/test_main.c", "int main(void) { return 0; }\n");
  WriteFile(p + "/docs/design.md", "# design\n");
  WriteFile(p + "/secrets.env", "API_TOKEN=not-a-real-token\n");
  WriteFile(p + "/.env", "DATABASE_URL=postgres://not-real\n");
  WriteFile(p + "/src/.env", "DEBUG=1\n");
  WriteFile(s.home + "/.ssh/id_ed25519", "not a real key\n");
  WriteFile(s.home + "/.ssh/known_hosts", "example.com ssh-ed25519 AAAA\n");
  WriteFile(s.home + "/.aws/credentials", "[default]\naws_access_key_id = NOTAREALKEY\n");
  // Upstream refuses a settings file without "network"; empty lists mean "no network" for both.
  auto settings = [empty_policy](std::string_view allowed) {
    const std::string net = "  \"network\": {\"allowedDomains\": [" + std::string(allowed) +
                            "], \"deniedDomains\": []}";
    if (empty_policy) return "{\n" + net + "\n}\n";
    return "{\n" + net +
           ",\n"
           "  \"filesystem\": {\n"
           "    \"allowWrite\": [\".\"],\n"
           "    \"denyRead\": [\"~/.ssh\", \"~/.aws\", \"**/.env\"],\n"
           "    \"denyWrite\": [\"./secrets.env\", \"./docs\"]\n"
           "  }\n"
           "}\n";
  };
  WriteFile(s.settings, settings(network ? "\"example.com\"" : ""));
  if (network) {
    s.settings_no_network = tmpl + "/settings-no-network.json";
    WriteFile(s.settings_no_network, settings(""));
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Running one command

struct Command {
  std::string label;
  std::string path;  // absolute; execve'd as is
  std::vector<std::string> argv;
  int inherit_fd = -1;  // made inheritable (and rewound) in the child
  std::string cwd;      // "" = the bench's own (the scratch project)
};

struct RunResult {
  int status = 0;
  double wall_ms = 0;
  double cpu_ms = 0;             // user + sys of the process and the descendants it reaped
  long maxrss_kib = 0;           // wait4's ru_maxrss: the largest peak in that reaped subtree
  long own_hwm_kib = -1;         // VmHWM of the process itself, read at its exit (traced runs only)
  double reaped_realtime_s = 0;  // CLOCK_REALTIME once reaped (for the exit figure)
  std::string out;
  std::string err;
};

class Runner {
 public:
  explicit Runner(std::vector<std::string> env)
      : env_(std::move(env)), out_(MakeMemfd("bench-stdout")), err_(MakeMemfd("bench-stderr")) {
    devnull_.reset(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!devnull_) Die(Errno("open /dev/null"));
    for (std::string& e : env_) envp_.push_back(e.data());
    envp_.push_back(nullptr);
  }

  // Runs `cmd` to completion. With `trace`, the child is ptraced (no descendants) so that its
  // own VmHWM can be read at PTRACE_EVENT_EXIT, before its memory is released; such runs are
  // never timed.
  RunResult Run(const Command& cmd, bool trace = false) {
    std::vector<char*> argv;
    for (const std::string& a : cmd.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (int fd : {out_.get(), err_.get()}) {
      if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) Die(Errno("reset capture memfd"));
    }
    RunResult r;
    timespec t0{}, t1{};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) Die(Errno("fork"));
    if (pid == 0) {
      // Only async-signal-safe calls from here to execve.
      if (trace && ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(126);
      if (dup2(devnull_.get(), 0) < 0 || dup2(out_.get(), 1) < 0 || dup2(err_.get(), 2) < 0) {
        _exit(126);
      }
      if (!cmd.cwd.empty() && chdir(cmd.cwd.c_str()) != 0) _exit(126);
      if (cmd.inherit_fd >= 0 &&
          (lseek(cmd.inherit_fd, 0, SEEK_SET) != 0 || fcntl(cmd.inherit_fd, F_SETFD, 0) != 0)) {
        _exit(126);
      }
      execve(cmd.path.c_str(), argv.data(), envp_.data());
      _exit(127);
    }
    int status = 0;
    rusage ru{};
    bool exec_stop_seen = false;
    while (true) {
      pid_t w = wait4(pid, &status, trace ? __WALL : 0, &ru);
      if (w < 0) {
        if (errno == EINTR) continue;
        Die(Errno("wait4"));
      }
      if (WIFEXITED(status) || WIFSIGNALED(status)) break;
      if (!WIFSTOPPED(status)) continue;
      int sig = WSTOPSIG(status);
      int event = status >> 16;
      long inject = 0;
      if (sig == SIGTRAP && !exec_stop_seen) {
        exec_stop_seen = true;  // the stop after execve: ask for an exit stop, kill on our exit
        ptrace(PTRACE_SETOPTIONS, pid, nullptr,
               reinterpret_cast<void*>(static_cast<long>(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)));
      } else if (sig == SIGTRAP && event == PTRACE_EVENT_EXIT) {
        r.own_hwm_kib = ReadVmHwm(pid);
      } else {
        inject = sig;  // a signal for the tracee (SIGCHLD from its own children, ...)
      }
      ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(inject));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    timespec reaped{};
    clock_gettime(CLOCK_REALTIME, &reaped);
    r.reaped_realtime_s =
        static_cast<double>(reaped.tv_sec) + static_cast<double>(reaped.tv_nsec) / 1e9;
    r.status = status;
    r.wall_ms = static_cast<double>(t1.tv_sec - t0.tv_sec) * 1e3 +
                static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e6;
    r.cpu_ms = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
               static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    r.maxrss_kib = ru.ru_maxrss;
    r.out = ReadAll(out_.get(), 64 * 1024);
    r.err = ReadAll(err_.get());
    return r;
  }

 private:
  static long ReadVmHwm(pid_t pid) {
    std::string path = "/proc/" + std::to_string(pid) + "/status";
    UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return -1;
    std::string status = ReadAll(fd.get(), 64 * 1024);
    size_t at = status.find("\nVmHWM:");
    if (at == std::string::npos) return -1;
    return std::strtol(status.c_str() + at + 7, nullptr, 10);
  }

  std::vector<std::string> env_;
  std::vector<char*> envp_;
  UniqueFd devnull_;
  UniqueFd out_;
  UniqueFd err_;
};

// ---------------------------------------------------------------------------------------------
// srt's debug output

// Splits a line produced by srt's ShellJoin (POSIX shell quoting: '...', "...", backslash).
std::vector<std::string> ShellSplit(std::string_view s) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else if (c == '\'') {
      in_word = true;
      size_t end = s.find('\'', i + 1);
      if (end == std::string_view::npos) Die("unbalanced quote in srt's bwrap command line");
      cur.append(s.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      in_word = true;
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        cur += s[i];
      }
    } else if (c == '\\' && i + 1 < s.size()) {
      in_word = true;
      cur += s[++i];
    } else {
      in_word = true;
      cur += c;
    }
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

struct DebugEvent {
  double at_ms;
  std::string message;
};

// "srt: debug: [  5.907 ms] message" -> {5.907, "message"}.
std::vector<DebugEvent> ParseDebug(const std::string& err) {
  std::vector<DebugEvent> events;
  size_t start = 0;
  while (start < err.size()) {
    size_t end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    std::string_view line(err.data() + start, end - start);
    start = end + 1;
    size_t open = line.find("debug: [");
    size_t close = line.find(" ms] ");
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) continue;
    std::string number(line.substr(open + 8, close - open - 8));
    events.push_back({std::strtod(number.c_str(), nullptr), std::string(line.substr(close + 5))});
  }
  return events;
}

struct SrtCapture {
  std::vector<std::string> options;  // what srt passed through --args, verbatim
  std::vector<std::string> dropped;  // fd-carrying options the bare run cannot replay
  int placeholders = 0;              // "cannot be created (the write guard)" decisions
  // Those missing protected paths: the path, and the protected entries it stands for, relative
  // to the project (e.g. '/p/.claude' for '.claude/commands' and '.claude/agents').
  std::vector<std::pair<std::string, std::vector<std::string>>> placeholder_paths;
  std::string agent_line;    // "srt-agent: ..." (what the host-side helper did)
  std::string network_line;  // "network: proxy on ..." (--network)
};

SrtCapture CaptureSrtOptions(const std::string& debug_err) {
  SrtCapture cap;
  std::string line;
  for (const DebugEvent& e : ParseDebug(debug_err)) {
    if (e.message.starts_with("bwrap command")) line = e.message;
    if (e.message.find("cannot be created (the write guard)") != std::string::npos) {
      ++cap.placeholders;
      // "<what> '<entry>' ...: '<path>' cannot be created (the write guard)"
      size_t end = e.message.rfind("' cannot be created");
      size_t begin = e.message.rfind(": '", end);
      size_t entry_begin = e.message.find('\'');
      size_t entry_end = e.message.find('\'', entry_begin + 1);
      if (end != std::string::npos && begin != std::string::npos &&
          entry_end != std::string::npos) {
        std::string_view list(e.message.data() + entry_begin + 1, entry_end - entry_begin - 1);
        std::vector<std::string> entries;
        while (!list.empty()) {
          size_t comma = list.find(", ");
          std::string_view one = list.substr(0, comma);
          if (one.starts_with("./")) one.remove_prefix(2);
          entries.emplace_back(one);
          list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 2);
        }
        cap.placeholder_paths.push_back({e.message.substr(begin + 3, end - begin - 3), entries});
      }
    }
    if (e.message.starts_with("srt-agent:")) cap.agent_line = e.message;
    if (e.message.starts_with("network: proxy")) cap.network_line = e.message;
  }
  if (line.empty()) Die("srt -d printed no 'bwrap command' line:\n" + FirstLines(debug_err, 20));
  size_t colon = line.find("): ");
  colon = colon == std::string::npos ? line.find(": ") : colon + 1;
  std::vector<std::string> words = ShellSplit(std::string_view(line).substr(colon + 2));
  auto dd = std::find(words.rbegin(), words.rend(), "--");
  if (words.size() < 2 || dd == words.rend()) Die("cannot parse srt's bwrap command: " + line);
  size_t end = static_cast<size_t>(words.rend() - dd) - 1;  // index of the last "--"
  // Options whose arguments are descriptors of srt's own process cannot be replayed.
  static const std::vector<std::pair<std::string_view, int>> kFdOptions = {
      {"--seccomp", 1},   {"--add-seccomp-fd", 1},  {"--json-status-fd", 1}, {"--info-fd", 1},
      {"--block-fd", 1},  {"--userns-block-fd", 1}, {"--sync-fd", 1},        {"--file", 2},
      {"--bind-data", 2}, {"--ro-bind-data", 2}};
  for (size_t i = 1; i < end; ++i) {
    auto fd_opt = std::find_if(kFdOptions.begin(), kFdOptions.end(),
                               [&](const auto& o) { return words[i] == o.first; });
    if (fd_opt != kFdOptions.end()) {
      std::string d = words[i];
      for (int k = 0; k < fd_opt->second && i + 1 < end; ++k) d += " " + words[++i];
      cap.dropped.push_back(d);
      continue;
    }
    cap.options.push_back(words[i]);
  }
  return cap;
}

// ---------------------------------------------------------------------------------------------
// Statistics and printing

std::string Kib(double kib) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f KiB (%.2f MiB)", kib, kib / 1024);
  return buf;
}

struct Contender {
  Command cmd;
  bool required = false;
  bool failed = false;
  std::string failure;
  std::vector<double> wall_ms;
  std::vector<double> cpu_ms;
  std::vector<double> maxrss_kib;
  std::vector<double> own_hwm_kib;
};

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  srt::bench::SetProgramName("srt-startup-bench");
  Options opt = ParseOptions(argc, argv);
  srt::bench::CatchStopSignals();

  const std::string start_cwd = std::filesystem::current_path().string();
  if (opt.srt.empty()) opt.srt = srt::bench::SelfDir() + "/srt";
  if (opt.bwrap.empty()) opt.bwrap = srt::bench::FindInPath("bwrap");
  if (!IsExecutableFile(opt.srt)) Die("no srt at '" + opt.srt + "' (use --srt PATH)");
  if (opt.bwrap.empty() || !IsExecutableFile(opt.bwrap)) Die("no bwrap found (use --bwrap PATH)");
  opt.srt = std::filesystem::canonical(opt.srt).string();
  std::string upstream_cli = srt::bench::FindUpstreamCli(opt.upstream, opt.no_upstream, start_cwd);
  std::string upstream_note;
  if (!upstream_cli.empty()) {
    if (opt.node.empty()) opt.node = srt::bench::FindInPath("node");
    if (opt.node.empty() || !IsExecutableFile(opt.node)) {
      upstream_note = "found " + upstream_cli + " but no node (use --node PATH)";
      upstream_cli.clear();
    }
  } else if (!opt.no_upstream) {
    upstream_note = "not installed (npm ci --prefix bench, or --upstream PATH)";
  } else {
    upstream_note = "skipped (--no-upstream)";
  }

  Scratch scratch = MakeScratch(opt.workdir, opt.network, opt.empty_policy);
  const double target_ratio = opt.network ? kTargetRatioNetwork : kTargetRatio;
  if (chdir(scratch.project.c_str()) != 0) Die(Errno("chdir '" + scratch.project + "'"));
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view v = *e;
    // PWD is left out: srt and node use getcwd(), and bash sets its own.
    if (v.starts_with("HOME=") || v.starts_with("SRT_DEBUG=") || v.starts_with("PWD=")) continue;
    env.emplace_back(v);
  }
  env.push_back("HOME=" + scratch.home);
  Runner runner(env);

  // 1. One `srt -d` run tells us exactly what srt asks of bwrap.
  Command srt_cmd{"srt", opt.srt, {"srt", "-s", scratch.settings, "-c", opt.command}, -1};
  Command srt_debug = srt_cmd;
  srt_debug.argv.insert(srt_debug.argv.begin() + 1, "-d");
  RunResult probe = runner.Run(srt_debug);
  if (probe.status != 0) {
    Die("`srt -d -s SETTINGS -c true` failed (" + DescribeStatus(probe.status) + "):\n" +
        FirstLines(probe.err, 30));
  }
  SrtCapture cap = CaptureSrtOptions(probe.err);

  // 1b. The same project with every protected path present, so that each is a read-only mount
  // instead of a name the write guard refuses: compares the two ways of protecting a path.
  const std::string prefilled = scratch.root + "/project-prefilled";
  std::filesystem::copy(scratch.project, prefilled, std::filesystem::copy_options::recursive);
  for (const auto& [path, entries] : cap.placeholder_paths) {
    if (!path.starts_with(scratch.project + "/")) continue;
    const std::string rel = path.substr(scratch.project.size() + 1);
    for (const std::string& entry : entries) {
      if (entry == rel) {
        WriteFile(prefilled + "/" + rel, "");  // a dotfile such as .bashrc
      } else if (entry.starts_with(rel + "/")) {
        std::filesystem::create_directories(prefilled + "/" + entry);  // e.g. .claude/commands
      }
    }
  }
  Command srt_prefilled{"srt, all protected exist", opt.srt, srt_cmd.argv, -1, prefilled};
  Command prefilled_debug = srt_debug;
  prefilled_debug.cwd = prefilled;
  RunResult probe2 = runner.Run(prefilled_debug);
  if (probe2.status != 0) {
    Die("`srt -d` in the prefilled project failed (" + DescribeStatus(probe2.status) + "):\n" +
        FirstLines(probe2.err, 30));
  }
  const int prefilled_placeholders = CaptureSrtOptions(probe2.err).placeholders;

  // 2. The bare baseline: bwrap with the same options through --args, running `bash -c true`.
  UniqueFd args_fd = MakeMemfd("bench-bwrap-args");
  std::string serialized;
  for (const std::string& a : cap.options) serialized += a + '\0';
  if (write(args_fd.get(), serialized.data(), serialized.size()) !=
      static_cast<ssize_t>(serialized.size())) {
    Die(Errno("write bwrap args memfd"));
  }
  Command bare{"bwrap (same mounts)",
               opt.bwrap,
               {"bwrap", "--args", std::to_string(args_fd.get()), "--", "bash", "-c", opt.command},
               args_fd.get()};

  std::vector<Contender> cs;
  cs.push_back({bare, true});
  cs.push_back({srt_cmd, true});
  cs.push_back({srt_prefilled, true});
  size_t no_network_index = 0;
  if (opt.network) {
    no_network_index = cs.size();
    cs.push_back({{"srt, no network",
                   opt.srt,
                   {"srt", "-s", scratch.settings_no_network, "-c", opt.command},
                   -1},
                  true});
  }
  size_t upstream_index = 0;
  if (!upstream_cli.empty()) {
    Command up{"upstream srt (node)",
               opt.node,
               {"node", upstream_cli, "--settings", scratch.settings, "-c", opt.command},
               -1};
    RunResult check = runner.Run(up);
    if (check.status != 0) {
      upstream_note = "installed but failed (" + DescribeStatus(check.status) + "):\n" +
                      FirstLines(check.err, 6);
    } else {
      upstream_index = cs.size();
      cs.push_back({up, false});
    }
  }
  const size_t version_begin = cs.size();
  cs.push_back({{"bwrap --version", opt.bwrap, {"bwrap", "--version"}, -1}, true});
  cs.push_back({{"srt --version", opt.srt, {"srt", "--version"}, -1}, true});
  if (upstream_index) {
    cs.push_back(
        {{"upstream --version", opt.node, {"node", upstream_cli, "--version"}, -1}, false});
  }

  std::string bwrap_version, srt_version, upstream_version;
  for (Contender& c : cs) {
    if (c.cmd.argv.back() != "--version") continue;
    RunResult v = runner.Run(c.cmd);
    std::string text = Trim(v.out.empty() ? v.err : v.out);
    if (c.cmd.label.starts_with("bwrap")) bwrap_version = text;
    if (c.cmd.label.starts_with("srt")) srt_version = text;
    if (c.cmd.label.starts_with("upstream")) upstream_version = text;
  }

  utsname uts{};
  uname(&uts);
  std::printf(opt.network ? "srt start-up benchmark, network on\n" : "srt start-up benchmark\n");
  std::printf("  host      %ld CPUs online, Linux %s, load average %s\n",
              sysconf(_SC_NPROCESSORS_ONLN), uts.release, LoadAverage().c_str());
  std::printf("  srt       %s (%s)\n", opt.srt.c_str(), srt_version.c_str());
  std::printf("  bwrap     %s (%s)\n", opt.bwrap.c_str(), bwrap_version.c_str());
  std::printf("  command   %s\n", opt.command.c_str());
  if (upstream_index) {
    std::printf("  upstream  %s (version %s, node %s)\n", upstream_cli.c_str(),
                upstream_version.c_str(), opt.node.c_str());
  } else {
    std::printf("  upstream  %s\n", upstream_note.c_str());
  }
  std::printf(
      "  scratch   %s: project/ (git tree, sources, docs), home/ (.ssh, .aws), settings.json\n",
      scratch.root.c_str());
  std::printf("  policy    %s\n",
              opt.empty_policy ? "empty (no filesystem rules)"
                               : "allowWrite [.], denyRead [~/.ssh, ~/.aws, **/.env], denyWrite "
                                 "[./secrets.env, ./docs]");
  if (opt.network) {
    std::printf(
        "  network   allowedDomains [example.com]: srt starts its proxy thread and srt-init makes\n"
        "            its sockets in the sandbox's network namespace (\"%s\");\n"
        "            \"srt, no network\" runs the same policy with allowedDomains [] (no proxy).\n",
        cap.network_line.empty() ? "nothing reported" : cap.network_line.c_str());
  }
  std::printf(
      "  baseline  bwrap with srt's %zu options verbatim (through --args), exec'ing `bash -c "
      "true`\n",
      cap.options.size());
  std::printf(
      "            directly instead of srt-init. Not replicated there: srt-init's seccomp\n");
  std::printf(
      "            filter and fd hand-over, and the host-side helper (`srt-init agent`), which\n");
  std::printf("            reported \"%s\";\n",
              cap.agent_line.empty() ? "nothing" : cap.agent_line.c_str());
  std::printf(
      "            %d protected paths are missing: the write guard keeps them from being made\n",
      cap.placeholders);
  std::printf("            (.bashrc, .mcp.json, ...); the others are read-only mounts.\n");
  std::printf(
      "  also      \"srt, all protected exist\": the same, in project-prefilled/, a copy of the "
      "project\n");
  std::printf("            where those %d paths already exist (%d still missing there).\n",
              cap.placeholders, prefilled_placeholders);
  for (const std::string& d : cap.dropped) {
    std::printf("            dropped from the baseline (refers to srt's descriptors): %s\n",
                d.c_str());
  }
  std::printf(
      "  method    %d timed rounds after %d warm-up rounds; each round runs every contender "
      "once,\n",
      opt.runs, opt.warmup);
  std::printf(
      "            order rotated per round; fork+execve+wait4; wall time = fork to reaped.\n\n");
  std::fflush(stdout);

  // 3. The timed, interleaved rounds.
  const size_t n = cs.size();
  for (int round = -opt.warmup; round < opt.runs && !StopRequested(); ++round) {
    for (size_t k = 0; k < n && !StopRequested(); ++k) {
      Contender& c = cs[(k + static_cast<size_t>(round + opt.warmup)) % n];
      if (c.failed) continue;
      RunResult r = runner.Run(c.cmd);
      if (r.status != 0) {
        c.failed = true;
        c.failure = DescribeStatus(r.status) + ":\n" + FirstLines(r.err, 10);
        if (c.required) Die(c.cmd.label + " failed, " + c.failure);
        continue;
      }
      if (round < 0) continue;
      c.wall_ms.push_back(r.wall_ms);
      c.cpu_ms.push_back(r.cpu_ms);
      c.maxrss_kib.push_back(static_cast<double>(r.maxrss_kib));
    }
  }
  if (StopRequested()) Die("interrupted");

  const std::string load_after = LoadAverage();

  // 4. Untimed: each front end's own peak RSS, read at its exit under ptrace.
  // A sanitized srt cannot be traced: LeakSanitizer ptraces its own threads at exit.
  std::string trace_problem;
  for (int i = 0; i < opt.rss_runs && trace_problem.empty() && !StopRequested(); ++i) {
    for (size_t idx : {size_t{1}, upstream_index}) {
      if (idx == 0 || cs[idx].failed) continue;
      RunResult r = runner.Run(cs[idx].cmd, /*trace=*/true);
      if (r.status != 0 || r.own_hwm_kib < 0) {
        trace_problem = r.status != 0 ? "the traced " + cs[idx].cmd.label + " ended with " +
                                            DescribeStatus(r.status)
                                      : "no VmHWM at the exit stop";
        break;
      }
      cs[idx].own_hwm_kib.push_back(static_cast<double>(r.own_hwm_kib));
    }
  }

  // 4b. The exit: each contender runs `echo $EPOCHREALTIME` (bash's clock, read by the
  // command's last instruction) and the lag is from that to the front end reaped: what srt adds
  // after the command ends, beside what bwrap alone takes.
  const std::string exit_command = "echo $EPOCHREALTIME";
  Command bare_exit = bare;
  bare_exit.argv.back() = exit_command;
  Command srt_exit = srt_cmd;
  srt_exit.argv.back() = exit_command;
  std::vector<double> exit_lag_bwrap, exit_lag_srt;
  for (int i = 0; i < opt.exit_runs && !StopRequested(); ++i) {
    for (int k = 0; k < 2; ++k) {
      const bool srt_turn = (i + k) % 2 == 1;
      RunResult r = runner.Run(srt_turn ? srt_exit : bare_exit);
      const double said = std::strtod(r.out.c_str(), nullptr);
      if (r.status != 0 || said <= 0) Die("the exit round's `" + exit_command + "` failed");
      (srt_turn ? exit_lag_srt : exit_lag_bwrap).push_back((r.reaped_realtime_s - said) * 1e3);
    }
  }

  // 5. Untimed: where srt's time goes, from its own -d timestamps.
  struct Phase {
    std::string_view prefix;
    std::string_view label;
    std::vector<double> at;
  };
  std::vector<Phase> phases = {
      {"bwrap command", "srt ready to spawn bwrap (settings, policy, plans)", {}},
      {"srt-init is running", "bwrap done: srt-init running as the sandbox's PID 1", {}},
      {"the proxy serves", "srt serves the proxy's sockets (made by the helper first)", {}},
      {"srt-agent:", "host-side helper: /proc hidden, protections applied", {}},
      {"command started", "command exec'd inside the sandbox", {}},
      {"the command ended", "command ended, sandbox empty", {}},
      {"bwrap exited", "bwrap exited", {}},
      {"srt-agent exited", "host-side helper exited (guard done)", {}},
  };
  if (opt.network) {
    phases.insert(phases.begin(), {"network: proxy", "proxy started (its sockets planned)", {}});
  }
  std::vector<double> debug_wall;
  for (int i = 0; i < opt.phase_runs && !StopRequested(); ++i) {
    RunResult r = runner.Run(srt_debug);
    if (r.status != 0) break;
    debug_wall.push_back(r.wall_ms);
    for (const DebugEvent& e : ParseDebug(r.err)) {
      for (Phase& p : phases) {
        if (e.message.starts_with(p.prefix)) p.at.push_back(e.at_ms);
      }
    }
  }

  // 6. Figures.
  std::printf("%-22s %8s %8s %8s %8s   %-26s %s\n", "contender", "min", "median", "p90", "cpu",
              "ru_maxrss max / median", "(wall and cpu in ms)");
  for (const Contender& c : cs) {
    if (c.failed || c.wall_ms.empty()) {
      std::printf("%-22s failed: %s", c.cmd.label.c_str(), c.failure.c_str());
      continue;
    }
    Stats w = Summarize(c.wall_ms);
    Stats cpu = Summarize(c.cpu_ms);
    Stats rss = Summarize(c.maxrss_kib);
    std::printf("%-22s %8.2f %8.2f %8.2f %8.2f   %6.0f / %6.0f KiB\n", c.cmd.label.c_str(), w.min,
                w.median, w.p90, cpu.median, rss.max, rss.median);
    if (&c == &cs[version_begin - 1] && version_begin < n) std::printf("\n");
  }
  std::printf("  load average after the timed rounds: %s (a busy machine inflates every figure)\n",
              load_after.c_str());
  std::printf(
      "  cpu = user+sys of the process and every descendant it reaped (wait4 rusage); ru_maxrss\n"
      "  likewise is the largest peak in that subtree (srt: srt, bwrap, srt-init, bash).\n\n");

  const Contender& b = cs[0];
  const Contender& s = cs[1];
  Stats bw = Summarize(b.wall_ms);
  Stats sw = Summarize(s.wall_ms);
  double ratio = sw.median / bw.median;
  std::vector<double> paired;
  for (size_t i = 0; i < std::min(b.wall_ms.size(), s.wall_ms.size()); ++i) {
    paired.push_back(s.wall_ms[i] / b.wall_ms[i]);
  }
  Stats pr = Summarize(paired);
  Stats srss = Summarize(s.maxrss_kib);
  std::printf(opt.network ? "srt (network on) vs bare bwrap (same mounts)\n"
                          : "srt vs bare bwrap (same mounts)\n");
  std::printf(
      "  ratio of medians srt/bwrap     %.2fx  (%.2f ms vs %.2f ms, +%.2f ms)   target <= %.1fx: "
      "%s\n",
      ratio, sw.median, bw.median, sw.median - bw.median, target_ratio,
      ratio <= target_ratio ? "PASS" : "MISS");
  std::printf("  per-round ratio min/median/p90 %.2fx / %.2fx / %.2fx\n", pr.min, pr.median,
              pr.p90);
  Stats nw = Summarize(cs[2].wall_ms);
  std::printf(
      "  srt, all protected / bwrap     %.2fx  (%.2f ms: missing paths save %.2f ms of srt's "
      "median)\n",
      nw.median / bw.median, nw.median, sw.median - nw.median);
  if (no_network_index) {
    Stats nn = Summarize(cs[no_network_index].wall_ms);
    std::vector<double> per_round;
    for (size_t i = 0; i < std::min(s.wall_ms.size(), cs[no_network_index].wall_ms.size()); ++i) {
      per_round.push_back(s.wall_ms[i] / cs[no_network_index].wall_ms[i]);
    }
    std::printf(
        "  srt with network / without     %.2fx  (%.2f ms vs %.2f ms: the network costs %.2f ms; "
        "per-round median %.2fx)\n",
        sw.median / nn.median, sw.median, nn.median, sw.median - nn.median,
        Summarize(per_round).median);
    std::printf("  srt without network / bwrap    %.2fx\n", nn.median / bw.median);
  }
  std::printf("  srt peak RSS (wait4, subtree)  max %s, median %s   target <= 8 MiB: %s\n",
              Kib(srss.max).c_str(), Kib(srss.median).c_str(),
              srss.max <= static_cast<double>(kTargetRssKib) ? "PASS" : "MISS");
  if (!s.own_hwm_kib.empty()) {
    Stats own = Summarize(s.own_hwm_kib);
    std::printf("  srt process's own VmHWM        max %s, median %s (%zu traced runs)\n",
                Kib(own.max).c_str(), Kib(own.median).c_str(), s.own_hwm_kib.size());
  } else if (opt.rss_runs > 0) {
    std::printf("  srt process's own VmHWM        unavailable (%s)\n", trace_problem.c_str());
  }
  if (!exit_lag_srt.empty()) {
    Stats le = Summarize(exit_lag_srt);
    Stats lb = Summarize(exit_lag_bwrap);
    std::printf(
        "  exit (last instruction->reaped) srt %.2f ms (p90 %.2f), bwrap %.2f ms (p90 %.2f), "
        "%d rounds   target srt <= 2 ms: %s\n",
        le.median, le.p90, lb.median, lb.p90, opt.exit_runs, le.median <= 2.0 ? "PASS" : "MISS");
  }
  Stats bv = Summarize(cs[version_begin].wall_ms);
  Stats sv = Summarize(cs[version_begin + 1].wall_ms);
  std::printf("  start-up floor (--version)     srt %.2f ms, bwrap %.2f ms (ratio %.2fx)\n",
              sv.median, bv.median, sv.median / bv.median);

  if (upstream_index && !cs[upstream_index].failed) {
    const Contender& u = cs[upstream_index];
    Stats uw = Summarize(u.wall_ms);
    Stats urss = Summarize(u.maxrss_kib);
    std::printf("\nupstream srt (node) vs bare bwrap\n");
    std::printf("  ratio of medians upstream/bwrap %.1fx  (%.2f ms)   upstream/srt %.1fx\n",
                uw.median / bw.median, uw.median, uw.median / sw.median);
    std::printf("  upstream peak RSS (wait4)       max %s, median %s\n", Kib(urss.max).c_str(),
                Kib(urss.median).c_str());
    if (!u.own_hwm_kib.empty()) {
      Stats own = Summarize(u.own_hwm_kib);
      std::printf("  node process's own VmHWM        max %s, median %s\n", Kib(own.max).c_str(),
                  Kib(own.median).c_str());
    }
    if (version_begin + 2 < n && !cs[version_begin + 2].wall_ms.empty()) {
      std::printf("  start-up floor (--version)      %.2f ms\n",
                  Summarize(cs[version_begin + 2].wall_ms).median);
    }
  } else if (upstream_index) {
    std::printf("\nupstream srt failed: %s", cs[upstream_index].failure.c_str());
  } else {
    std::printf("\nupstream srt: %s\n", upstream_note.c_str());
  }

  if (!debug_wall.empty()) {
    std::printf(
        "\nwhere srt's time goes: `srt -d` timestamps, median of %zu untimed runs (-d itself\n"
        "adds formatting and writes; total wall median %.2f ms)\n",
        debug_wall.size(), Summarize(debug_wall).median);
    double prev = 0;
    for (const Phase& p : phases) {
      if (p.at.empty()) continue;
      double at = Summarize(p.at).median;
      std::printf("  %8.2f ms  (+%6.2f)  %.*s\n", at, at - prev, static_cast<int>(p.label.size()),
                  p.label.data());
      prev = at;
    }
  }
  return 0;
}
