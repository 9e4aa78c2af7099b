// SPDX-License-Identifier: Apache-2.0
// srt-poller/poller/poller: the poll loop (protocol §2.4, Go WorkPoller): claim, ack, hand each
// session item to a SessionWorker thread (at most --concurrency at once), back off on errors,
// stop on a fatal 4xx, and wind everything down on Shutdown().
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "api/client.h"
#include "base/unique_fd.h"
#include "poller/session.h"

namespace srt::poller {

class Poller {
 public:
  Poller(const PollerContext& ctx, PolicyStore& policy, WorkQueueClient queue,
         std::shared_ptr<CancelToken> cancel);
  ~Poller();

  // Polls until Shutdown() or a fatal error; then stops every session and waits for them.
  // Returns the process exit code: 0 after a shutdown, 1 after a fatal error.
  int Run();
  // Thread-safe; the first reason is logged.
  void Shutdown(const std::string& reason);
  // SIGHUP: re-reads the session policy; running sessions get its network lists.
  void Reload();

 private:
  struct Slot {
    std::unique_ptr<SessionWorker> worker;
    std::thread thread;
    bool finished = false;
  };

  void StartSession(Work work);
  void ReapFinished();
  void StopItem(const std::string& work_id, bool force);
  // A `healthcheck` item: heartbeat, probe a session sandbox, and end the item.
  void ServeHealthCheck(const std::string& work_id, LogFields f);

  const PollerContext& ctx_;
  PolicyStore& policy_;
  WorkQueueClient queue_;
  std::shared_ptr<CancelToken> cancel_;  // the queue client's: cancels a poll in flight

  std::mutex mu_;
  std::condition_variable cv_;
  bool shutdown_ = false;
  bool fatal_ = false;
  std::map<std::string, Slot> slots_;  // by session id: one live worker per session here
};

// Creates the sessions directory (0700) if need be and takes an exclusive lock on its
// ".srt-poller.lock", held while the returned descriptor is open: a second srt-poller on the
// same directory would share its workspaces and sweep its live sessions' cgroups. Errors name
// the directory and, when it is taken, say so.
[[nodiscard]] Result<UniqueFd> LockSessionsDir(const PollerConfig& config);

// Unmounts the workspace filesystems (--disk) an earlier run of this srt-poller left mounted
// when it was killed, logging each. Under the lock above, before any session starts.
void UnmountLeftoverWorkspaceDisks(const PollerConfig& config, const Logger& log);

// With --disk: warns when the sessions filesystem has less free space than --concurrency
// workspaces of --disk reserve.
void WarnIfWorkspacesCannotFit(const PollerConfig& config, const Logger& log);

// With limits on, under systemd with Delegate=yes on cgroup v2: moves srt-poller into
// <unit cgroup>/supervisor and has the sessions' cgroups made in <unit cgroup>/srt (sets
// config.limits->cgroup_parent), so that `systemctl status` lists them and stopping the unit
// reaches them. Before any thread or session starts (v2 moves every thread of the process; a
// child left behind would keep the controllers from being handed on). Failures are logged.
void TakeSessionCgroupDelegation(PollerConfig& config, const Logger& log);

// With limits on: kills and removes the cgroups an earlier run of this srt-poller (the same
// sessions directory) left behind when it was killed, logging each. Under the lock above,
// before any session sandbox exists. Failures are logged: a leftover costs memory, not safety.
void RemoveLeftoverSessionCgroups(const PollerConfig& config, const Logger& log);

// Empty when the kernel keeps the agent's shell from signalling srt-toolbox and srt-init
// (Landlock signal scoping, Linux 6.12); else what the shell can do here, for the warning at
// start and for --check.
std::string ShellSignalScopeGap();

// Starts a sandbox with the session policy, the limits and a workspace bind, running
// /bin/true: proves that sessions can run on this host. Used at start and by --check.
[[nodiscard]] Result<void> ProbeSessionSandbox(const PollerConfig& config, const Settings& policy);

}  // namespace srt::poller
