// SPDX-License-Identifier: Apache-2.0
// srt-poller/poller/session: serves one claimed work item, in its own thread, inside its own
// sandbox.
//
// Native mode (the default), per protocol §2.4-§2.6 and the Go EnvironmentWorker:
//   heartbeat thread first (the lease must be ours before slow work) -> the SessionRunner
//   opens the event stream and reads the history, its dispatch held, while the session is read
//   (beside the workspace's mount), its memory stores mounted, its sandbox started running
//   srt-toolbox (beside the workspace's reservation) and its skills put into the workspace ->
//   the runner's dispatch is
//   released and it serves the session until it ends -> force-stop the item (not after a 412)
//   -> remove skills.
// --on-work mode, per the `ant beta:worker poll --on-work` contract: the script runs in the
//   session's sandbox with the work JSON (and its `secret`) on stdin; the poller sends the
//   item's first heartbeat and hands the lease to the script's worker
//   (ANTHROPIC_WORK_LAST_HEARTBEAT, unless --no-lease-handoff), and stops the item gracefully,
//   with the item's sessions token, once the script exits.
//
// The environment key is used here, on the host, for skills and (without a sessions token)
// for the API; it is never put in a sandbox's environment, files or arguments.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "api/client.h"
#include "api/work.h"
#include "base/unique_fd.h"
#include "poller/config.h"
#include "poller/log.h"
#include "srt/sandbox.h"
#include "srt/settings.h"

namespace srt::poller {

class MemoryApi;
class MountedWorkspace;
class SpareWorkspaceMaker;
class SandboxOutput;
class SessionMemory;
struct MemoryStoreSync;
class ToolboxClient;
struct SessionRunnerOptions;

// The current session policy; SIGHUP replaces it. Thread-safe.
class PolicyStore {
 public:
  // Loads `path`, or the built-in policies/poller-session.json when empty.
  [[nodiscard]] Result<void> Load(const std::optional<std::string>& path);
  std::shared_ptr<const Settings> Current() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Settings> current_;
};

// What every session shares; outlives the sessions.
struct PollerContext {
  const PollerConfig* config = nullptr;
  std::string environment_key;
  std::string worker_id;
  const Logger* log = nullptr;
  std::string toolbox_path;
  const PolicyStore* policy = nullptr;
  // With --disk: the spare workspace a new session takes (null: each makes its own).
  SpareWorkspaceMaker* spare_workspaces = nullptr;
  // The variables of srt-poller's environment an --on-work script gets besides the curated
  // base and the protocol's (--script-env), "NAME=value".
  std::vector<std::string> script_env;
};

// How a served item ended, for the poller's log and the workspace cleanup.
struct SessionEnd {
  std::string
      outcome;  // "terminated", "idle", "stopped", "lease_lost", "fatal", "script_exit", ...
  std::string message;
  bool session_over = false;  // terminated or deleted: the workspace may be cleaned up
  bool fatal_script = false;  // --on-work script missing or not executable: the poller stops
};

// What the sandbox id of every session of this srt-poller starts with, and so the name of its
// cgroups: "p" and 8 hex digits of a hash of the sessions directory, then '-'. One srt-poller
// holds a sessions directory at a time (LockSessionsDir), so a cgroup with this prefix that
// exists when it starts was left by an earlier run of it. Pure.
[[nodiscard]] std::string SessionSandboxIdPrefix(const PollerConfig& config);

// The sandbox options for a session (pure): the policy plus the workspace bind at /workspace,
// denyRead for the poller's own files, limits, the curated environment and the network for
// --on-work. `argv` and the standard descriptors are the caller's.
[[nodiscard]] Result<SandboxOptions> SessionSandboxOptions(const Settings& policy,
                                                           const PollerConfig& config,
                                                           const std::string& session_id,
                                                           const std::string& workspace,
                                                           const std::vector<std::string>& env);

// "host:port" of an http(s) URL for allowedDomains ("api.anthropic.com:443"), or "" if unusable.
std::string UrlHostPort(std::string_view url);

class SessionWorker {
 public:
  SessionWorker(const PollerContext& ctx, Work work);
  ~SessionWorker();
  SessionWorker(const SessionWorker&) = delete;
  SessionWorker& operator=(const SessionWorker&) = delete;

  // Serves the item; returns when it is over and everything is cleaned up. Call once, on a
  // thread that lives until it returns (the sandbox is tied to it).
  SessionEnd Run();
  // Asks Run to finish: cancels the running tool and posts its result (native) or sends the
  // script SIGTERM, then SIGKILL after `grace` (--on-work). Thread-safe; idempotent.
  void Stop(const std::string& reason);
  // Gives a running sandbox new network lists (SIGHUP).
  void UpdateNetwork(const NetworkSettings& network);

  const std::string& session_id() const { return work_.data_id; }
  const std::string& work_id() const { return work_.id; }

 private:
  struct NativeClients;  // RunNative's API clients (session.cc)
  struct NativeSession;  // what RunNative's stages share (session.cc)

  SessionEnd RunNative();
  // RunNative's stages, in the order it runs them (session.cc says what each needs).
  [[nodiscard]] Result<NativeClients> CreateNativeClients() const;
  // Where and with what per-item calls go: the secret's api_base_url, else --base-url; the
  // item's sessions token, else the environment key.
  const std::string& ItemBaseUrl() const;
  const std::string& ItemBearer() const;
  // The item's work-queue client: the item's API base URL and its sessions token (the
  // environment key for an item without a secret), with `options` plus --ca-file.
  [[nodiscard]] Result<WorkQueueClient> ItemQueue(ClientOptions options) const;
  // --on-work: the item's first heartbeat, whose last_heartbeat the script's worker continues
  // from (ANTHROPIC_WORK_LAST_HEARTBEAT). nullopt: no hand-off, the script starts the lease;
  // an end: the item is not ours to serve.
  struct Handoff {
    std::optional<std::string> last_heartbeat;
    std::optional<SessionEnd> end;
  };
  Handoff HandOffLease(const WorkQueueClient& queue) const;
  void StartLease(NativeSession& s);
  void AcceptStops(NativeSession& s);
  // The runner, the workspace (into `disk`), the session read, the sandbox, the skills; then
  // the session's calls until it ends. Uses the next ones.
  SessionEnd ServeInSandbox(NativeSession& s, const std::string& workspace,
                            std::unique_ptr<MountedWorkspace>& disk);
  [[nodiscard]] Result<Session> ReadSession(NativeSession& s) const;
  [[nodiscard]] Result<std::unique_ptr<SandboxOutput>> StartOutput() const;
  [[nodiscard]] Result<std::unique_ptr<SessionMemory>> MountMemory(
      MemoryApi& api, const std::vector<MemoryStoreRef>& stores,
      const std::string& workspace) const;
  [[nodiscard]] Result<Sandbox> StartToolboxSandbox(const std::string& workspace,
                                                    const std::vector<BindMount>& memory_binds,
                                                    UniqueFd toolbox_stdin, UniqueFd toolbox_stdout,
                                                    int output_fd) const;
  // The skills are fetched with `skills` (the environment key).
  void SetUpSkills(const Session& session, const SessionClient& skills,
                   const std::string& workspace) const;
  void LogMemorySyncs(const std::vector<MemoryStoreSync>& syncs, bool quiet_when_idle) const;
  SessionRunnerOptions RunnerOptions() const;
  void EndToolboxSandbox(ToolboxClient& toolbox, Sandbox& sandbox);
  SessionEnd FinishNative(NativeSession& s, const std::string& workspace, SessionEnd end);
  void SetSandbox(Sandbox* sandbox);
  // The workspace directory and, with --disk, its filesystem mounted there (null without), in a
  // mount namespace of the calling thread's own (EnterItemMountNamespace): the item's thread
  // calls it, before it mounts anything else or starts the sandbox.
  [[nodiscard]] Result<std::unique_ptr<MountedWorkspace>> PrepareWorkspace(
      const std::string& workspace) const;
  // Reserves the workspace's image (none without --disk).
  [[nodiscard]] static Result<void> ReserveWorkspace(MountedWorkspace* disk);
  // With a workspace that was the spare: asks for the next spare, once (`asked`).
  void ReplenishSpare(const std::unique_ptr<MountedWorkspace>& disk, bool& asked) const;
  void ReleaseWorkspace(std::unique_ptr<MountedWorkspace>& disk) const;

  SessionEnd RunScript();
  LogFields Fields(LogFields extra = {}) const;

  const PollerContext& ctx_;
  Work work_;
  std::optional<WorkSecret> secret_;

  // Held while a stop hook runs and while one is removed, so a hook never outlives what it
  // refers to. Taken before mu_.
  std::mutex hook_mu_;
  std::mutex mu_;
  bool stopping_ = false;
  std::string stop_reason_;
  std::function<void(const std::string&)> stop_hook_;  // set while something can be stopped
  Sandbox* sandbox_ = nullptr;                         // guarded by mu_
};

}  // namespace srt::poller
