// SPDX-License-Identifier: Apache-2.0
// srt/sandbox.h: run a command in a sandbox - the same path the `srt` command uses.
//
// Usage protocol:
//   1. Fill a SandboxOptions: the settings (LoadSettingsFile or by hand), the argv, optionally
//      the environment, working directory, standard descriptors and extra descriptors to pass.
//   2. srt::Sandbox::Start(options) checks the settings against this host, starts bubblewrap and
//      returns once the command is running (or an Error saying why it could not start; nothing is
//      left behind in that case).
//   3. Optionally Signal() it; then Wait() for its ExitStatus. Wait() returns only after every
//      process in the sandbox is gone and srt's temporary placeholders are removed.
//   A Sandbox destroyed before Wait() kills its command and cleans up.
//
//   srt::SandboxOptions o;
//   o.settings = srt::LoadSettingsFile(path).value().settings;
//   o.argv = {"make", "test"};
//   auto sb = srt::Sandbox::Start(std::move(o));
//   if (!sb) { report(sb.error().message()); }
//   auto status = sb->Wait();            // status->code is what a shell would report
//
// Threads: Start() spawns bubblewrap with --die-with-parent, which the kernel ties to the
// *thread* that called Start(); call it from a thread that outlives the sandbox.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"
#include "srt/settings.h"

namespace srt {

namespace launch {
class Launch;
class Execution;
}  // namespace launch
namespace net {
class SandboxNetwork;
}

struct ExitStatus {
  // What a shell would report: the exit code 0..255, 128+N when killed by signal N, 126/127 when
  // the command could not be executed or found.
  int code = 0;
  int signal = 0;      // the signal that killed the command, or 0
  int exec_errno = 0;  // execve's errno when the command could not be started, or 0
  // The first signal relayed to the command from the `forward_signals_fd` given to Wait().
  int relayed_signal = 0;
  // The kernel's OOM killer killed a process of the sandbox because of `limits.memory_bytes`
  // (the command itself, or one of its children). Always false without a memory limit.
  bool oom_killed = false;
};

// A host file or directory shown at another path in the sandbox.
struct BindMount {
  // Host path; must exist, a directory or a regular file (symlinks are resolved).
  std::string source;
  // Absolute, normalised path in the sandbox; not "/", not under /proc, /dev or /sys. It need not
  // exist on the host: srt then rebuilds its (read-only) parent as a read-only tmpfs holding
  // the host's entries, and never creates anything on the host. A missing target whose parent
  // is writable in the sandbox (a write root) is refused: bwrap would create it on the host.
  std::string target;
  // Writable only when true (and no denyWrite covers the source). A writable directory is a
  // write root at `target`: the mandatory denies (.git/hooks, .bashrc, ...) and the settings'
  // denyWrite/denyRead rules inside the source apply there too.
  bool writable = false;
  // The command's own repositories live here (srt-poller's session workspace, where the agent
  // clones and commits): git's rules of the write guard do not apply below `target` (new
  // repositories, their config and hooks are the command's). Only for a tree no host user runs
  // git in.
  bool own_repositories = false;
};

// Resource limits for everything in the sandbox (bwrap, srt-init, the command and its
// children), enforced by a cgroup srt creates for the sandbox and removes after Wait(). 0 leaves
// that limit unset.
// The most descriptors SandboxOptions::inherit_fds may name (`srt --pass-fd`); Start() refuses
// more.
inline constexpr size_t kMaxInheritFds = 64;

// Names the inner cgroup's descriptors in the command's environment (ResourceLimits).
inline constexpr char kInnerCgroupFdsVariable[] = "SRT_INNER_CGROUP_FDS";

struct ResourceLimits {
  uint64_t memory_bytes = 0;  // memory (and no swap where the kernel accounts it)
  uint32_t cpu_millis = 0;    // CPU time per period: 1000 = one CPU; at least 10
  uint32_t pids = 0;          // processes and threads
  // An inner cgroup below the sandbox's, with less memory and fewer processes (0: none; each
  // below its limit above), for a command that supervises work it does not trust (srt-toolbox
  // and the agent's shell): it moves that work there, so that when the work fills its memory
  // (files in a tmpfs and memfds included, which belong to no process the OOM killer could
  // weigh) or its process budget, the OOM killer and the pids limit take the work alone, and
  // the command keeps the difference to go on. The command finds write-only descriptors of the
  // inner cgroup's cgroup.procs files, one per cgroup hierarchy, in the variable
  // kInnerCgroupFdsVariable ("7" or "7,8"); a process joins by writing "0" to each.
  uint64_t inner_memory_bytes = 0;
  uint32_t inner_pids = 0;
  // The size of each tmpfs the command can write in - the empty ones that stand for hidden
  // directories (a hidden /tmp is the command's /tmp) and /dev/shm, with the rest of /dev
  // read-only: a write past it fails with ENOSPC, rather than filling memory_bytes with files
  // the OOM killer cannot weigh. 0: the kernel's default (half the host's memory) and a
  // writable /dev, as bwrap makes it.
  uint64_t tmpfs_bytes = 0;
  // cgroup v2: put the sandbox's cgroup below this cgroup directory, a subtree delegated to the
  // caller that TakeCgroupDelegation() made ready (its return value). Empty: the placement that
  // SandboxOptions::limits describes.
  std::string cgroup_parent;
};

// One decision of the sandbox's network proxy: a connection (or a DNS query) allowed or denied.
struct ConnectionEvent {
  // One JSON object and '\n': time, sandbox, protocol, host, port, address, via, decision,
  // reason, entry, bytes_up, bytes_down, duration_ms, end, error (docs/network.md).
  std::string json;
  // "allow connect example.com:443 -> 93.184.216.34:443 (517 B up, 4.0 KiB down, 12 ms, closed)"
  std::string summary;
  bool allowed = false;
  // Where it went, for people: "example.com:443", "[2001:db8::1]:80", or for a DNS query the
  // name alone; bytes a terminal or shell would act on are escaped as \xNN.
  std::string destination;
  // Why it was denied ("host is not on the allow list"), escaped the same way; "" if allowed.
  std::string reason;
};

struct SandboxOptions {
  Settings settings;
  std::vector<std::string> argv;                // argv[0] is looked up in the sandbox's PATH
  std::optional<std::vector<std::string>> env;  // "NAME=value"; default: this process's env
  std::optional<std::string> cwd;               // default: the current directory
  std::optional<std::string> home;              // for `~` in settings; default: $HOME
  // The command's standard descriptors, and descriptors of this process it inherits under the
  // same numbers (>= 3); no other descriptor reaches the sandbox. Each grants exactly the access
  // it was opened with: one the command could open again with more (/proc/self/fd/N: a file
  // read-only or append-only, a pipe, a FIFO) reaches it as a pipe of srt's, which Wait()
  // relays, moving an input file's offset back to what the command consumed; sockets, /dev/null
  // and files open read-write are passed as they are. A terminal (0-2) is replaced by the
  // sandbox's own, relayed to and from it, with the caller's raw while the command reads it and
  // restored at the end. Start() refuses a directory, an O_PATH descriptor, a terminal above 2,
  // a file open for reading and appending, and more than kMaxInheritFds descriptors; a closed
  // standard descriptor becomes /dev/null.
  int stdin_fd = 0;
  int stdout_fd = 1;
  int stderr_fd = 2;
  std::vector<int> inherit_fds;
  // Called on Wait()'s thread when the command's terminal stopped it (Ctrl-Z), with the caller's
  // terminal back in its own modes; the command is continued (SIGCONT) when it returns. The srt
  // command stops itself here (SIGTSTP), so that its shell gets the terminal back. Unset: the
  // command is continued at once.
  std::function<void()> on_terminal_stop;
  // srt-init, srt's helper binary; default: found next to this program or in the install prefix.
  std::optional<std::string> init_path;
  // Receives one line per decision (settings, paths, mounts, the bwrap command) when set.
  std::function<void(std::string_view)> debug;
  // Receives each warning - a settings rule that was skipped, and why - whether or not `debug`
  // is set (the srt command prints them as "srt: warning: ...").
  std::function<void(std::string_view)> warn;

  // --- Network ----------------------------------------------------------------------------------
  // The sandbox reaches the network only through srt's proxy, which runs in every sandbox: with
  // nothing allowed it refuses every attempt (with the reason, and a record to
  // `on_connection`), and Sandbox::UpdateNetwork can open it later.
  // Names this sandbox in the connection log and the proxy's user name; default: random.
  // Letters, digits, '.', '_' and '-', at most 64.
  std::string id;
  // Every connection the proxy decides, allowed or denied; called on the proxy's thread, so it
  // must be quick and thread-safe. The proxy stops once the sandbox is empty (connections still
  // open then end with "shutdown"); no call comes after the Sandbox is destroyed.
  std::function<void(const ConnectionEvent&)> on_connection;

  // --- Mounts and limits ------------------------------------------------------------------------
  // Mounted after every settings rule, shallow targets first; each target at most once.
  std::vector<BindMount> binds;
  // Host files the caller trusts and the command must not be able to replace (a socket the
  // caller serves, say): Start() fails, naming `what` and the write root, before any sandbox
  // exists, when one lies where the command could write. `path` is real and absolute.
  struct HostPath {
    std::string what;
    std::string path;
  };
  std::vector<HostPath> outside_writable;
  // Start() fails, naming what is missing, when a limit cannot be enforced: no cgroup v2 with
  // the controller nor a v1 hierarchy of it, or no permission to create cgroups there. The cgroup
  // is <own cgroup>/srt/<id>-<random> (v2: when the caller's cgroup delegates the controllers,
  // else <cgroup2 root>/srt/...; v1: in each controller's hierarchy); `id` may be empty.
  std::optional<ResourceLimits> limits;

  // --- A warm sandbox ---------------------------------------------------------------------------
  // Start() runs no command (argv must be empty; the standard descriptors and inherit_fds are
  // not used) but keeps the sandbox up for Exec(), each command under the same policy and
  // proxy, until Stop(). Its commands share everything a sandbox has: the same /tmp (and
  // private TMPDIR) and writable files, one pid namespace (they can see and signal each other's
  // processes), one network namespace and proxy, one cgroup (limits are for all of them).
  bool serve = false;
};

// One command of a warm sandbox (SandboxOptions::serve), as the SandboxOptions fields of the
// same names say, each its own.
struct ExecOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in the command's PATH
  // Its whole environment (default: the one the sandbox was started with). srt's own variables
  // (the proxy's, TMPDIR, ...) and those credentials.envVars names are the sandbox's, whatever
  // is given here.
  std::optional<std::vector<std::string>> env;
  std::optional<std::string> cwd;  // absolute, in the sandbox; default: the sandbox's
  int stdin_fd = 0;
  int stdout_fd = 1;
  int stderr_fd = 2;
};

// A running command of a warm sandbox; its Sandbox must outlive it. Destroying it before Wait()
// kills the command.
class Execution {
 public:
  Execution(Execution&&) noexcept;
  Execution& operator=(Execution&&) noexcept;
  ~Execution();
  // Delivers `signal` to the command's process group; SIGWINCH resizes the command's terminal
  // (from the caller's) when it has one.
  [[nodiscard]] Result<void> Signal(int signal);
  // A descriptor that becomes readable once the command has ended (for poll).
  int done_fd() const;
  // Blocks until the command has ended and all it wrote is passed on; what is left of its
  // process group is killed then (what it started in another group runs on until Stop()).
  // Ctrl-Z on a command's terminal does not stop it: nobody could continue it.
  [[nodiscard]] Result<ExitStatus> Wait();

 private:
  friend class Sandbox;
  explicit Execution(std::unique_ptr<launch::Execution> exec);
  std::unique_ptr<launch::Execution> exec_;
};

class Sandbox {
 public:
  // Refuses to start while the process ignores SIGCHLD (SIG_IGN or SA_NOCLDWAIT): srt reaps
  // the processes it starts itself.
  [[nodiscard]] static Result<Sandbox> Start(SandboxOptions options);

  Sandbox(Sandbox&&) noexcept;
  Sandbox& operator=(Sandbox&&) noexcept;
  ~Sandbox();

  // Delivers `signal` to the command (not to srt's helpers).
  [[nodiscard]] Result<void> Signal(int signal);
  // Blocks until the sandbox has ended. When `forward_signals_fd` is a signalfd, every signal read
  // from it is relayed to the command while waiting (the `srt` command does this for SIGINT,
  // SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2), except that with a terminal of its own
  // SIGWINCH resizes that terminal (the kernel then tells the command), and SIGCONT puts the
  // caller's terminal back in raw mode before it is relayed.
  [[nodiscard]] Result<ExitStatus> Wait(int forward_signals_fd = -1);

  // Replaces the network lists for new connections: allowedDomains, deniedDomains,
  // deniedDomainReasons, deniedResolvedAddresses, mitmProxy and tlsTerminate's excludeDomains,
  // maxTunnels and handshakeTimeoutMs (other keys keep their start-up values, and ports first
  // named here are reached through the proxy variables, not captured).
  // Thread-safe. Fails if `network` is invalid; changes nothing once the sandbox is empty.
  [[nodiscard]] Result<void> UpdateNetwork(const NetworkSettings& network);

  // A warm sandbox: runs one more command, without a bubblewrap of its own (about a fork and
  // an exec). Thread-safe; its commands make progress only while a thread is inside Wait(),
  // which returns once Stop() (or a SIGINT, SIGTERM, SIGHUP or SIGQUIT read from its
  // `forward_signals_fd`) has ended the sandbox and everything in it.
  [[nodiscard]] Result<Execution> Exec(ExecOptions options);
  [[nodiscard]] Result<void> Stop();

 private:
  struct ServeContext;
  Sandbox(std::unique_ptr<net::SandboxNetwork> network, std::unique_ptr<launch::Launch> launch,
          std::vector<std::string> writable, std::unique_ptr<ServeContext> serve = nullptr);
  // Declared first so that it is destroyed last: the proxy outlives the command.
  std::unique_ptr<net::SandboxNetwork> network_;
  std::unique_ptr<launch::Launch> launch_;
  // Where the command can write (a mitmProxy socket named by an update must not be there).
  std::vector<std::string> writable_;
  std::unique_ptr<ServeContext> serve_;
};

// Start() + Wait().
[[nodiscard]] Result<ExitStatus> RunSandboxed(SandboxOptions options);

// Kills and removes the cgroups that sandboxes with `limits` and an `id` starting with
// `id_prefix` left behind because their owner died before Wait() removed them (a crashed or
// SIGKILLed program), looking where Start() places such cgroups now. Only the caller knows
// that the prefix is its own and that no live sandbox of its uses it: call it at start, before
// any sandbox. Returns the cgroups removed.
[[nodiscard]] Result<std::vector<std::string>> RemoveLeftoverCgroups(const ResourceLimits& limits,
                                                                     std::string_view id_prefix);

// For a program run by a service manager that delegates a cgroup v2 subtree to it (a systemd unit
// with Delegate=yes, which marks the unit's cgroup with the xattr trusted.delegate=1): moves the
// calling process into <unit cgroup>/supervisor and lets the unit's cgroup hand the controllers
// `limits` need to its children, then returns the unit's cgroup, for
// ResourceLimits::cgroup_parent. Sandboxes then live inside the unit (systemctl status lists
// them; stopping the unit stops them). Returns "" when there is nothing to take (no delegation
// mark, cgroup v1 controllers, or the caller is in the root cgroup). Call it at start, before the
// program starts other processes; calling it again is harmless.
[[nodiscard]] Result<std::string> TakeCgroupDelegation(const ResourceLimits& limits);

// srt's version, "0.1.0".
std::string_view Version();

}  // namespace srt
