// SPDX-License-Identifier: Apache-2.0
// launch/launcher: runs a resolved Policy - spawns bubblewrap with srt-init as the sandbox's PID 1
// and srt-init's agent on the host side, relays signals, and collects the exit status.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "cgroup/cgroup.h"
#include "init_protocol/wire.h"
#include "launch/plan_writer.h"
#include "launch/stdio_relay.h"
#include "policy/policy.h"
#include "srt/result.h"
#include "srt/sandbox.h"

namespace srt::launch {

// The command's seccomp filters: the deny rules, and the write guard's (empty: no guard).
struct SeccompPrograms {
  std::vector<std::byte> deny;
  std::vector<std::byte> guard;
};

struct LaunchSpec {
  policy::Policy policy;
  // Gives the seccomp filters (copies of the programs compiled when srt was built: cheap).
  // Called once bwrap and the agent are running; needed only at the go-ahead.
  std::function<Result<SeccompPrograms>()> build_seccomp_filter;
  // What the agent's write guard serves and knows (no calls: no guard; then `guard` above is
  // empty too).
  GuardPlan guard;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  // What the command gets for these is launch/passing's decision (a pipe srt relays, the
  // sandbox's own terminal, or the descriptor itself).
  int stdin_fd = 0;
  int stdout_fd = 1;
  int stderr_fd = 2;
  std::vector<int> keep_fds;
  // Called on Wait()'s thread when the command was stopped by its terminal (Ctrl-Z), with the
  // caller's terminal back in its own modes; the command is continued when it returns.
  std::function<void()> on_terminal_stop;
  PrivateTmpdir tmpdir;  // the command's private TMPDIR (path "" = none)
  // Sockets srt-agent makes inside the sandbox's network namespace, and what to do with them
  // (called once they all exist, before the command starts; an error aborts the launch).
  std::vector<wire::NetSocket> net_sockets;
  std::function<Result<void>(std::vector<UniqueFd>)> on_network;
  // Work of the caller's done while bubblewrap sets up (once bwrap and the agent are spawned,
  // before srt-init's hello); an error aborts the launch. May be empty.
  std::function<Result<void>()> beside_bwrap;
  // Work of the caller's done while bubblewrap and srt-agent exit: called once srt-init has
  // reported that the command (or the warm sandbox) ended and it emptied the sandbox. Not called
  // when the sandbox ends without that report. May be empty.
  std::function<void()> on_sandbox_empty;
  // The sandbox's /etc/resolv.conf when the policy points it at srt's DNS stub.
  std::string resolv_conf;
  // What the sandbox reads at each of policy.masked_files (same order): the file with its
  // secrets replaced by sentinels (credentials.files mode "mask").
  std::vector<std::string> masked_file_contents;
  // RLIMIT_NOFILE (soft, hard) for the command when srt raised its own.
  std::optional<std::pair<uint64_t, uint64_t>> command_nofile;
  // The sandbox's cgroups (resource limits): bwrap is spawned into them; they are emptied and
  // removed once the sandbox has ended (Wait, or an aborted start). Null = no limits.
  std::unique_ptr<cgroup::Cgroups> cgroups;
  uint64_t tmpfs_bytes = 0;  // ResourceLimits::tmpfs_bytes
  std::string bwrap_path;    // absolute, checked
  // A warm sandbox: srt-init runs no command of its own (argv is empty) but each Exec()'s, until
  // Stop() (or a SIGINT, SIGTERM, SIGHUP or SIGQUIT read from Wait()'s signalfd).
  bool serve = false;
  std::string init_path;  // absolute, checked
  std::function<void(std::string_view)> debug;
};

// One command of a warm sandbox (Launch::Exec).
struct ExecSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd;  // absolute, in the sandbox
  int stdin_fd = 0;
  int stdout_fd = 1;
  int stderr_fd = 2;
};

class Launch;

// srt-agent's plan, but for its shows (the launcher's GatherAgentOps): `count` records of
// wire::kMaxAgentOps.
struct AgentOps {
  std::vector<policy::Protection> protections;  // the policy's, and the host's device nodes
  std::vector<std::string> covers;              // denied files, also those not there yet
  std::vector<std::string> masks;               // masked files, which bwrap binds
  size_t count = 0;
};
struct ExecState;

// A running command of a warm sandbox. Its Launch must outlive it.
class Execution {
 public:
  ~Execution();
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;
  // Delivers `signal` to the command's process group (SIGWINCH resizes its terminal instead).
  [[nodiscard]] Result<void> Signal(int signal);
  // Readable (an eventfd) once the command has ended: Wait() then returns at once.
  int done_fd() const;
  // Blocks until the command has ended (or the warm sandbox did) and its output is passed on.
  [[nodiscard]] Result<ExitStatus> Wait();

 private:
  friend class Launch;
  Execution(Launch* launch, std::shared_ptr<ExecState> state);
  Launch* launch_;
  std::shared_ptr<ExecState> state_;
  bool waited_ = false;
};

class Launch {
 public:
  // Returns once the command runs (or could not be executed: Wait() then reports 126/127).
  [[nodiscard]] static Result<std::unique_ptr<Launch>> Start(LaunchSpec spec);
  ~Launch();
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  [[nodiscard]] Result<void> Signal(int signal);
  [[nodiscard]] Result<ExitStatus> Wait(int forward_signals_fd);

  // A warm sandbox (LaunchSpec::serve): runs one more command. Thread-safe; the commands make
  // progress only while some thread is inside Wait().
  [[nodiscard]] Result<std::unique_ptr<Execution>> Exec(ExecSpec spec);
  // Ends a warm sandbox: srt-init kills every process in it; Wait() then returns.
  [[nodiscard]] Result<void> Stop();

 private:
  friend class Execution;
  // serve.cc: a warm sandbox's messages from srt-init, and its end.
  bool HandleExecReport(uint32_t type, const std::vector<uint8_t>& payload, UniqueFd fd);
  void EndExecs();
  Result<void> SendToInit(uint32_t type, const std::vector<int32_t>& values,
                          const std::vector<int>& fds);
  Result<void> PassGuardListener(UniqueFd listener);

  explicit Launch(LaunchSpec spec) : spec_(std::move(spec)) {}
  Result<void> SpawnBwrap();
  Result<void> SpawnAgent();
  Result<void> AwaitHello();
  Result<void> AwaitAgent();
  Result<void> AwaitStart();
  // The waiting command's write-guard listener (kMsgGuard), on to the agent, which serves it.
  Result<void> ForwardGuardListener(UniqueFd listener);
  // Wait()'s stages, and the relay's handler for each source (launcher.cc says what each does).
  Result<void> RelayUntilSandboxEnds(int forward_signals_fd);
  Result<bool> ReadInitReport();
  void ReadAgentReport();
  void RelayCallerSignal(int forward_signals_fd);
  void PassOnDiagnostics();
  ExitStatus CommandExitStatus() const;
  bool RemoveCgroups();
  void Debug(std::string_view line) const;
  void ReadDiagnostics();
  void StartRejoin();
  void ReapBwrap();
  void ReapAgent();
  void Abort();
  Error BwrapFailure();
  Result<void> SendInit(uint32_t type, int32_t value = 0, int fd = -1);
  Result<void> SendAgent(uint32_t type, int fd);

  LaunchSpec spec_;
  std::mutex ctl_mu_;  // Signal() may run on another thread than Wait()
  UniqueFd ctl_;       // our end of srt-init's control socket
  UniqueFd diag_;      // bwrap's stderr
  UniqueFd bwrap_pidfd_;
  pid_t bwrap_pid_ = -1;
  std::thread rejoin_;     // StartRejoin's; joined by ReapBwrap
  int bwrap_status_ = -1;  // wait status once reaped
  UniqueFd init_pidfd_;
  UniqueFd init_exe_;
  UniqueFd agent_ctl_;
  UniqueFd agent_pidfd_;
  pid_t agent_pid_ = -1;
  int agent_status_ = -1;
  // The agent's failure while the command ran (a file the host replaced could not be covered
  // again; the agent then stopped the sandbox): Wait() returns it.
  std::optional<Error> agent_failure_;
  std::string diagnostics_;
  bool init_reported_exit_ = false;
  int command_status_ = 0;
  int exec_errno_ = 0;
  int relayed_signal_ = 0;
  // The command's filters in one sealed memfd (the deny filter, then the guard's), made while
  // bwrap sets up and sent once PID 1 has said hello; deny_bytes_ says where the first ends.
  UniqueFd filters_fd_;
  size_t deny_bytes_ = 0;
  // A warm sandbox's devpts instance, mounted nowhere (wire::kTagPtys): from the agent to init.
  UniqueFd ptys_;
  AgentOps agent_ops_;  // SpawnBwrap gathers and counts it, SpawnAgent sends it
  // The host entries the agent mounts in bwrap's place, and the synthetic directories it then
  // makes read-only (bwrap::AgentShows): SpawnBwrap decides, SpawnAgent sends.
  std::vector<std::string> agent_shows_;
  std::vector<std::string> agent_seals_;
  std::unique_ptr<StdioRelay> relay_;
  bool finished_ = false;
  // A warm sandbox's commands, by id (serve.cc).
  std::mutex exec_mu_;
  std::map<uint32_t, std::shared_ptr<ExecState>> execs_;
  uint32_t next_exec_id_ = 1;
  bool serve_ended_ = false;
};

}  // namespace srt::launch
