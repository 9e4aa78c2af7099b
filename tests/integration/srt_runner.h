// SPDX-License-Identifier: Apache-2.0
// Integration-test support: runs the real `srt` binary, as root or as an unprivileged user, on
// scratch trees, with a time limit; and checks that a run leaves nothing behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace srt::it {

struct RunResult {
  int exit_code = -1;  // srt's exit status; 128+N if srt itself died of signal N
  std::string out;
  std::string err;
};

enum class Identity { kRoot, kUnprivileged };

class Runner {
 public:
  explicit Runner(Identity who);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // A scratch directory owned by the identity that runs srt (removed at destruction).
  const std::string& root() const { return root_; }
  const std::string& home() const { return home_; }
  std::string Path(const std::string& rel) const { return root_ + "/" + rel; }

  // Creates files/dirs below root(), owned by the run identity.
  void MakeDir(const std::string& rel) const;
  void WriteFile(const std::string& rel, const std::string& content) const;
  void MakeSymlink(const std::string& target, const std::string& rel) const;
  bool Exists(const std::string& rel) const;
  std::string ReadFile(const std::string& rel) const;

  // Writes `settings` (JSON text) to a file and runs `srt -s FILE <args>` in `cwd` (relative to
  // root(); "" = root()). Kills the run after `limit` and fails the test.
  RunResult Srt(const std::string& settings, const std::vector<std::string>& args,
                const std::string& cwd = "",
                std::chrono::milliseconds limit = std::chrono::seconds(30)) const;
  // The same, with no -s (so the default settings file applies) and free-form arguments.
  RunResult SrtRaw(const std::vector<std::string>& args, const std::string& cwd = "",
                   std::chrono::milliseconds limit = std::chrono::seconds(30),
                   const std::vector<std::string>& extra_env = {}) const;
  // Starts srt in the background (own process group) and returns its pid; `Finish` collects it.
  pid_t Start(const std::string& settings, const std::vector<std::string>& args,
              const std::string& cwd = "") const;
  RunResult Finish(pid_t pid, std::chrono::milliseconds limit = std::chrono::seconds(30)) const;
  // Start, and srt also gets descriptors: each pair is {fd number in srt, fd here}. The numbers
  // in srt must not be 0-2 nor equal to the fd here (so dup2 clears CLOEXEC).
  pid_t StartWithFds(const std::string& settings, const std::vector<std::string>& args,
                     const std::vector<std::pair<int, int>>& fds,
                     const std::string& cwd = "") const;

  std::string SettingsFile(const std::string& settings) const;

  // Runs `argv` on the host, unsandboxed, as the run identity, in `cwd` (as srt is run): what
  // the user's own tools (git, a shell) do with what a sandbox left behind.
  RunResult Host(const std::vector<std::string>& argv, const std::string& cwd = "",
                 const std::vector<std::string>& extra_env = {}) const;

  // srt in a real terminal, as a person runs it: a new pty whose slave is srt's controlling
  // terminal and its stdin, stdout and stderr, with srt as the terminal's foreground process
  // group (so Ctrl-C typed on the master goes to srt's whole process group).
  struct Terminal {
    pid_t pid = -1;
    int master = -1;  // what the person types goes here; what the terminal shows comes from here
  };
  Terminal StartInTerminal(const std::string& settings, const std::vector<std::string>& args,
                           const std::string& cwd = "") const;
  // Any program (as the test's user, like srt), e.g. an interactive shell to type srt into;
  // the terminal is 40 rows by 100 columns.
  Terminal StartProgramInTerminal(const std::vector<std::string>& argv, const std::string& cwd = "",
                                  const std::vector<std::string>& extra_env = {}) const;
  // What a terminal is left in.
  struct TerminalState {
    bool echo = false, canonical = false, signals = false;  // ECHO, ICANON, ISIG
    unsigned rows = 0, cols = 0;
  };
  // Types `keys` (e.g. "\x03" for Ctrl-C) on the terminal.
  static void Type(const Terminal& t, std::string_view keys);
  // Reads what the terminal shows, appending it to `shown`, until `needle` is in `shown` at or
  // after `from` (as a person waits to see a line or a prompt before typing on); false if it
  // was not within `limit`.
  static bool WaitToSee(const Terminal& t, std::string_view needle, std::string& shown,
                        size_t from = 0,
                        std::chrono::milliseconds limit = std::chrono::seconds(10));
  // Reads everything the terminal shows until srt and everything holding the terminal are gone,
  // then reaps srt: `out` is the terminal's output (stdout and stderr together, with the
  // terminal's own echo and CR-LF translation).
  // `after`: the terminal's modes and size once srt has exited.
  RunResult FinishInTerminal(const Terminal& t,
                             std::chrono::milliseconds limit = std::chrono::seconds(30),
                             TerminalState* after = nullptr) const;

 private:
  // A command ready for exec: its argv and environment as the C arrays exec takes (pointing
  // into the strings kept beside them) and the directory it starts in.
  struct Exec {
    std::vector<std::string> argv, env;
    std::vector<char*> c_argv, c_env;
    std::string dir;
  };
  std::vector<std::string> Wrap(const std::vector<std::string>& argv) const;
  Exec Prepare(const std::vector<std::string>& argv, const std::string& cwd,
               std::vector<std::string> env, const std::vector<std::string>& extra_env) const;
  pid_t Spawn(const std::vector<std::string>& argv, const std::string& cwd,
              const std::vector<std::string>& extra_env, int out_fd, int err_fd,
              const std::vector<std::pair<int, int>>& fds = {}) const;
  void Chown(const std::string& path) const;

  Identity who_;
  std::string root_;
  std::string home_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  mutable int settings_counter_ = 0;
  mutable std::vector<std::pair<pid_t, std::pair<int, int>>> running_;  // pid -> out/err pipes
};

// Absolute paths of the binaries under test.
const char* SrtBinary();
const char* SrtAttachBinary();
const char* ProbeBinary();

// True when this host can run bwrap sandboxes; otherwise tests skip, unless SRT_MUST_WORK=1.
bool SandboxingWorks();

// True when this kernel runs i386 programs (`int $0x80` reaches the i386 syscall table); without
// IA32 emulation it kills them with SIGSEGV before any seccomp filter is consulted.
bool KernelRunsI386();

// The pids of processes whose command line contains `needle`.
std::vector<pid_t> ProcessesMatching(const std::string& needle);

// The command line of `pid`, its arguments joined by spaces.
std::string CommandLineOf(pid_t pid);

// The children (by /proc/PID/task/PID/children) of `pid` whose command line holds `needle`
// (any, when it is empty).
std::vector<pid_t> ChildrenOf(pid_t pid, const std::string& needle = "");

// How many threads of process `pid` are named `name` (/proc/PID/task/*/comm); 0 once it is gone.
size_t ThreadsNamed(pid_t pid, const std::string& name);

// The bwrap srt would find first in /usr/bin, /usr/local/bin or /bin; "" when there is none.
std::string SystemBwrap();

// Polls `done` until it holds or `limit` passes.
bool Eventually(const std::function<bool()>& done,
                std::chrono::milliseconds limit = std::chrono::seconds(5));

}  // namespace srt::it
