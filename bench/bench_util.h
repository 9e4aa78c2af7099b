// SPDX-License-Identifier: Apache-2.0
// bench_util: what srt's benchmark programs (srt-startup-bench, srt-network-bench,
// srt-poller-bench) share: dying with a message, stop signals, option values, files and /proc,
// clocks, statistics, the scratch directory and where upstream srt is installed.
//
// These are helpers of programs, not of a library: they print to stderr and exit(2) when
// something stops the program from measuring (Die()). Call SetProgramName() first thing in main()
// so that the messages name the program.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace srt::bench {

// ---------------------------------------------------------------------------------------------
// Dying

// The name Die() puts in front of its messages ("srt-startup-bench: ...").
void SetProgramName(std::string_view name);

// Runs in Die() after the message and before exit(2) (srt-poller-bench prints srt-poller's log).
void SetDieHook(void (*hook)());

// Flushes stdout, prints "<program>: <message>" on stderr, runs the hook and exits with status 2;
// atexit handlers run.
[[noreturn]] void Die(const std::string& message);

// "<what>: <strerror(errno)>".
std::string Errno(const std::string& what);

// ---------------------------------------------------------------------------------------------
// Stop signals

// SIGINT, SIGTERM and SIGHUP set a flag (StopRequested()) instead of killing the program, so it
// can stop its children and remove its scratch directory.
void CatchStopSignals();
bool StopRequested();

// ---------------------------------------------------------------------------------------------
// Options

// The value of the option argv[i], advancing i; dies with "<option> needs a value" at the end.
const char* OptionValue(int argc, char** argv, int& i);

// An integer in [min, max] for `flag`, or dies saying what it expected.
int ParseCount(std::string_view flag, const char* value, int min, int max = 1000000);

// --help: writes `usage` to stdout and exits 0.
[[noreturn]] void PrintUsageAndExit(std::string_view usage);

// Dies with "unknown option '<option>' (see --help)".
[[noreturn]] void DieUnknownOption(std::string_view option);

// ---------------------------------------------------------------------------------------------
// Files and paths

bool IsExecutableFile(const std::string& path);
bool IsRegularFile(const std::string& path);

// `name` in $PATH (/usr/local/bin:/usr/bin:/bin without one), "" if it is in none.
std::string FindInPath(std::string_view name);

// This program (/proc/self/exe) and its directory; dies if the link cannot be read.
std::string SelfPath();
std::string SelfDir();

// Up to `limit` bytes of `path`; "" if it cannot be opened.
std::string ReadFile(const std::string& path, size_t limit = 1u << 20);

// Writes all of `data` (retrying short writes and EINTR); false on an error or a zero write.
bool WriteAll(int fd, std::string_view data);

// Creates `path` (and its missing parent directories) holding `content`, or dies.
void WriteFile(const std::string& path, std::string_view content);

// ---------------------------------------------------------------------------------------------
// /proc

// The first three fields of /proc/loadavg ("0.52 0.48 0.40"), "unknown" if unreadable.
std::string LoadAverage();

// The number after "Key:" in /proc/PID/status, smaps_rollup or /proc/meminfo ("VmRSS:  1234 kB"
// -> 1234), -1 if the key is absent.
long StatusKib(const std::string& status, std::string_view key);

// One process of a tree. The fields SampleTree() was not asked for keep their defaults.
struct ProcSample {
  pid_t pid = 0;
  std::string comm;
  long rss_kib = -1;    // VmRSS
  long hwm_kib = -1;    // VmHWM
  long pss_kib = -1;    // proportional share: shared pages split between their users
  uint64_t cpu_ns = 0;  // every thread's time on a CPU (schedstat)
};

// What SampleTree() reads per process, beside its name.
enum SampleFields : unsigned {
  kSampleStatus = 1,  // rss_kib, hwm_kib from /proc/PID/status
  kSampleCpu = 2,     // cpu_ns from /proc/PID/task/*/schedstat
  kSamplePss = 4,     // pss_kib from /proc/PID/smaps_rollup (slower)
};

// The process `root` and all its descendants, root first; empty if `root` is gone. A process
// executed as /proc/self/fd/N (srt-init) is named after its executable. Dies if /proc cannot be
// listed.
std::vector<ProcSample> SampleTree(pid_t root, unsigned fields);

// ---------------------------------------------------------------------------------------------
// Clocks

// clock_gettime(clock) in seconds.
double ClockSeconds(clockid_t clock);

// User + system CPU seconds of this process (getrusage(RUSAGE_SELF)).
double SelfCpuSeconds();

// ---------------------------------------------------------------------------------------------
// Child processes and their output

// "exit status 1", "killed by signal 9" for a wait status.
std::string DescribeStatus(int status);

// The first `max_lines` lines of `text`, each as "    | <line>\n".
std::string FirstLines(const std::string& text, size_t max_lines);

// ---------------------------------------------------------------------------------------------
// Statistics

struct Stats {
  size_t n = 0;  // values summarized (NaNs are left out)
  double min = 0, median = 0, p90 = 0, max = 0;
};

// min, median, nearest-rank p90 and max of the values that are not NaN; all 0 when none is.
Stats Summarize(std::vector<double> values);
double Median(const std::vector<double>& values);

// "PASS" or "MISS": targets are reported, never enforced.
const char* Verdict(bool pass);

// ---------------------------------------------------------------------------------------------
// The scratch directory

// Creates <workdir>/<prefix>-XXXXXX (mkdtemp) and returns it, or dies. RemoveScratch() removes it.
std::string CreateScratch(const std::string& workdir, std::string_view prefix);

// Removes the scratch directory and everything in it, if there is one; errors are ignored. The
// programs call it at exit, after their children have stopped.
void RemoveScratch();

// ---------------------------------------------------------------------------------------------
// Upstream srt (npm package @anthropic-ai/sandbox-runtime)

// Its cli.js, canonical: from --upstream (the file, its package dir, or a dir holding
// node_modules) or else bench/node_modules of the source tree, then ./bench, then `start_cwd`.
// "" when `no_upstream` or nothing is found; dies when --upstream names no cli.js.
std::string FindUpstreamCli(const std::string& upstream, bool no_upstream,
                            const std::string& start_cwd);

}  // namespace srt::bench
