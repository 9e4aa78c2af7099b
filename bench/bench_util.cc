// SPDX-License-Identifier: Apache-2.0
// bench_util: the helpers srt's benchmark programs share (see bench_util.h).
#include "bench_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "base/unique_fd.h"

namespace srt::bench {
namespace {

std::string g_program = "srt-bench";
void (*g_die_hook)() = nullptr;
volatile sig_atomic_t g_stop = 0;
std::string g_scratch;

void OnStopSignal(int) { g_stop = 1; }

// Sum of the first field (ns on a CPU) of every thread's schedstat.
uint64_t ProcessCpuNs(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  uint64_t total = 0;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string s = ReadFile(dir + "/" + e->d_name + "/schedstat", 128);
    total += std::strtoull(s.c_str(), nullptr, 10);
  }
  ::closedir(d);
  return total;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Dying

void SetProgramName(std::string_view name) { g_program = std::string(name); }

void SetDieHook(void (*hook)()) { g_die_hook = hook; }

void Die(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", g_program.c_str(), message.c_str());
  if (g_die_hook != nullptr) g_die_hook();
  std::exit(2);  // the programs' cleanup runs from atexit
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// ---------------------------------------------------------------------------------------------
// Stop signals

void CatchStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

bool StopRequested() { return g_stop != 0; }

// ---------------------------------------------------------------------------------------------
// Options

const char* OptionValue(int argc, char** argv, int& i) {
  if (i + 1 >= argc) Die(std::string(argv[i]) + " needs a value");
  return argv[++i];
}

int ParseCount(std::string_view flag, const char* value, int min, int max) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || v < min || v > max) {
    Die(std::string(flag) + ": expected an integer in [" + std::to_string(min) + ", " +
        std::to_string(max) + "], got '" + value + "'");
  }
  return static_cast<int>(v);
}

void PrintUsageAndExit(std::string_view usage) {
  std::fwrite(usage.data(), 1, usage.size(), stdout);
  std::exit(0);
}

void DieUnknownOption(std::string_view option) {
  Die("unknown option '" + std::string(option) + "' (see --help)");
}

// ---------------------------------------------------------------------------------------------
// Files and paths

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string FindInPath(std::string_view name) {
  const char* path = getenv("PATH");
  std::string_view rest = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (!dir.empty()) {
      std::string candidate = dir + "/" + std::string(name);
      if (IsExecutableFile(candidate)) return candidate;
    }
    if (colon == std::string_view::npos) return "";
    rest = rest.substr(colon + 1);
  }
}

std::string SelfPath() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) Die("readlink /proc/self/exe: " + ec.message());
  return self.string();
}

std::string SelfDir() { return std::filesystem::path(SelfPath()).parent_path().string(); }

std::string ReadFile(const std::string& path, size_t limit) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return "";
  std::string out;
  char buf[4096];
  while (out.size() < limit) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void WriteFile(const std::string& path, std::string_view content) {
  std::error_code ec;
  const std::string parent = std::filesystem::path(path).parent_path().string();
  std::filesystem::create_directories(parent, ec);
  if (ec) Die("mkdir -p '" + parent + "': " + ec.message());
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) Die(Errno("open '" + path + "'"));
  if (!WriteAll(fd.get(), content)) Die(Errno("write '" + path + "'"));
}

// ---------------------------------------------------------------------------------------------
// /proc

std::string LoadAverage() {
  std::string s = ReadFile("/proc/loadavg", 256);
  if (s.empty()) return "unknown";
  size_t end = 0;
  for (int fields = 0; fields < 3 && end != std::string::npos; ++fields) {
    end = s.find(' ', end + (fields ? 1 : 0));
  }
  return s.substr(0, end);
}

long StatusKib(const std::string& status, std::string_view key) {
  // At the start of the text (meminfo's MemTotal) or of a line, never inside another key.
  size_t at = status.find(std::string(key) + ":");
  if (at == std::string::npos || (at > 0 && status[at - 1] != '\n')) {
    at = status.find("\n" + std::string(key) + ":");
    if (at == std::string::npos) return -1;
    ++at;
  }
  return std::strtol(status.c_str() + at + key.size() + 1, nullptr, 10);
}

std::vector<ProcSample> SampleTree(pid_t root, unsigned fields) {
  std::unordered_map<pid_t, std::vector<pid_t>> children;
  std::unordered_map<pid_t, std::string> comms;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) Die(Errno("opendir /proc"));
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string stat = ReadFile(std::string("/proc/") + e->d_name + "/stat", 1024);
    size_t open = stat.find('(');
    size_t close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 4 >= stat.size()) {
      continue;  // gone meanwhile
    }
    const auto pid = static_cast<pid_t>(std::atoi(e->d_name));
    const auto ppid = static_cast<pid_t>(std::atoi(stat.c_str() + close + 4));  // ") S PPID"
    comms[pid] = stat.substr(open + 1, close - open - 1);
    children[ppid].push_back(pid);
  }
  ::closedir(d);
  std::vector<ProcSample> out;
  if (!comms.contains(root)) return out;
  std::vector<pid_t> todo = {root};
  while (!todo.empty()) {
    pid_t pid = todo.back();
    todo.pop_back();
    const std::string dir = "/proc/" + std::to_string(pid);
    ProcSample s;
    s.pid = pid;
    s.comm = comms[pid];
    if (!s.comm.empty() && s.comm.find_first_not_of("0123456789") == std::string::npos) {
      // Executed as /proc/self/fd/N (srt-init): name it after its executable instead.
      std::error_code ec;
      auto exe = std::filesystem::read_symlink(dir + "/exe", ec);
      if (!ec) s.comm = exe.filename().string();
    }
    if (fields & kSampleStatus) {
      std::string status = ReadFile(dir + "/status", 16 * 1024);
      s.rss_kib = StatusKib(status, "VmRSS");
      s.hwm_kib = StatusKib(status, "VmHWM");
    }
    if (fields & kSampleCpu) s.cpu_ns = ProcessCpuNs(pid);
    if (fields & kSamplePss) s.pss_kib = StatusKib(ReadFile(dir + "/smaps_rollup", 8192), "Pss");
    out.push_back(std::move(s));
    for (pid_t c : children[pid]) todo.push_back(c);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Clocks

double ClockSeconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double SelfCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// ---------------------------------------------------------------------------------------------
// Child processes and their output

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

std::string FirstLines(const std::string& text, size_t max_lines) {
  std::string out;
  size_t start = 0;
  for (size_t n = 0; n < max_lines && start < text.size(); ++n) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += "    | " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Statistics

Stats Summarize(std::vector<double> v) {
  Stats s;
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  s.min = v.front();
  s.max = v.back();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));  // nearest rank
  s.p90 = v[std::max<size_t>(rank, 1) - 1];
  return s;
}

double Median(const std::vector<double>& values) { return Summarize(values).median; }

const char* Verdict(bool pass) { return pass ? "PASS" : "MISS"; }

// ---------------------------------------------------------------------------------------------
// The scratch directory

std::string CreateScratch(const std::string& workdir, std::string_view prefix) {
  std::string tmpl = workdir + "/" + std::string(prefix) + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) Die(Errno("mkdtemp '" + tmpl + "'"));
  g_scratch = tmpl;
  return tmpl;
}

void RemoveScratch() {
  if (g_scratch.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(g_scratch, ec);
  g_scratch.clear();
}

// ---------------------------------------------------------------------------------------------
// Upstream srt

std::string FindUpstreamCli(const std::string& upstream, bool no_upstream,
                            const std::string& start_cwd) {
  static constexpr std::string_view kUpstreamCli =
      "node_modules/@anthropic-ai/sandbox-runtime/dist/cli.js";
  if (no_upstream) return "";
  std::vector<std::string> candidates;
  if (!upstream.empty()) {
    candidates = {upstream, upstream + "/dist/cli.js", upstream + "/" + std::string(kUpstreamCli)};
  } else {
    candidates = {std::string(SRT_BENCH_SOURCE_DIR) + "/" + std::string(kUpstreamCli),
                  start_cwd + "/bench/" + std::string(kUpstreamCli),
                  start_cwd + "/" + std::string(kUpstreamCli)};
  }
  for (const std::string& c : candidates) {
    if (IsRegularFile(c)) return std::filesystem::weakly_canonical(c).string();
  }
  if (!upstream.empty()) Die("--upstream '" + upstream + "': no cli.js found there");
  return "";
}

}  // namespace srt::bench
