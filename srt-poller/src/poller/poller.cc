// SPDX-License-Identifier: Apache-2.0
#include "poller/poller.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/retry.h"
#include "base/scope_exit.h"
#include "base/unique_fd.h"
#include "poller/workspace_disk.h"
#include "sys/landlock.h"

namespace srt::poller {

Poller::Poller(const PollerContext& ctx, PolicyStore& policy, WorkQueueClient queue,
               std::shared_ptr<CancelToken> cancel)
    : ctx_(ctx), policy_(policy), queue_(std::move(queue)), cancel_(std::move(cancel)) {}

Poller::~Poller() {
  Shutdown("poller destroyed");
  std::unique_lock lock(mu_);
  for (auto& [id, slot] : slots_) {
    if (slot.thread.joinable()) {
      lock.unlock();
      slot.thread.join();
      lock.lock();
    }
  }
}

void Poller::Shutdown(const std::string& reason) {
  // Workers are stopped under mu_: a worker that finishes meanwhile cannot be reaped (and
  // destroyed) by Run while we still call into it. SessionWorker::Stop only flags the worker and
  // its runner; it never takes mu_.
  std::lock_guard lock(mu_);
  if (shutdown_) return;
  shutdown_ = true;
  std::vector<SessionWorker*> workers;
  for (auto& [id, slot] : slots_) {
    if (!slot.finished) workers.push_back(slot.worker.get());
  }
  ctx_.log->Info("shutting down", {{"reason", reason}, {"sessions", workers.size()}});
  cancel_->Cancel();
  for (SessionWorker* w : workers) w->Stop(reason);
  cv_.notify_all();
}

void Poller::Reload() {
  auto r = policy_.Load(ctx_.config->policy_path);
  if (!r) {
    ctx_.log->Error("policy reload failed; keeping the current policy",
                    {{"error", r.error().message()}});
    return;
  }
  auto current = policy_.Current();
  std::lock_guard lock(mu_);
  for (auto& [id, slot] : slots_) {
    if (!slot.finished) slot.worker->UpdateNetwork(current->network);
  }
  ctx_.log->Info("session policy reloaded",
                 {{"policy", ctx_.config->policy_path.value_or("built-in")}});
}

void Poller::StopItem(const std::string& work_id, bool force) {
  if (auto r = queue_.Stop(work_id, force); !r) {
    ctx_.log->Warn("stop failed", {{"work_id", work_id}, {"error", r.error().message()}});
  }
}

void Poller::ServeHealthCheck(const std::string& work_id, LogFields f) {
  // The SDK's runner "handles the health check by probing connectivity to required services".
  // The first heartbeat takes the lease (the item becomes active) and shows that the control
  // plane answers this worker's key; the sandbox probe shows that sessions can run on this host;
  // a force-stop then ends the item `stopped` at once. A graceful stop, without a heartbeat to
  // confirm it, would leave the item `stopping` until its lease expired.
  auto beat = queue_.Heartbeat(work_id, kNoHeartbeat);
  if (!beat) {
    f.emplace_back("error", beat.error().message());
    ctx_.log->Warn("health check: heartbeat failed; ending the item", f);
    StopItem(work_id, /*force=*/true);
    return;
  }
  if (!beat->lease_extended || beat->state == "stopping" || beat->state == "stopped") {
    f.emplace_back("state", beat->state);
    ctx_.log->Info("health check ended by the control plane", f);
    StopItem(work_id, /*force=*/true);
    return;
  }
  if (auto probe = ProbeSessionSandbox(*ctx_.config, *policy_.Current()); !probe) {
    // Not confirmed: the item is released with a graceful stop and no heartbeat, so the control
    // plane sees it end only when its lease runs out, as a check that did not pass.
    f.emplace_back("error", probe.error().message());
    ctx_.log->Error("health check failed: sessions cannot run on this host", f);
    StopItem(work_id, /*force=*/false);
    return;
  }
  ctx_.log->Info("health check passed", f);
  StopItem(work_id, /*force=*/true);
}

void Poller::ReapFinished() {
  std::vector<std::thread> done;
  {
    std::lock_guard lock(mu_);
    for (auto it = slots_.begin(); it != slots_.end();) {
      if (it->second.finished) {
        done.push_back(std::move(it->second.thread));
        it = slots_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& t : done) t.join();
}

void Poller::StartSession(Work work) {
  std::string sid = work.data_id;
  // The session's previous worker may have finished while we polled (the caller saw `finished`)
  // without having been reaped: join it first, or moving a new thread into its joinable
  // std::thread would std::terminate.
  std::optional<Slot> previous;
  {
    std::lock_guard lock(mu_);
    if (auto it = slots_.find(sid); it != slots_.end()) {
      previous.emplace(std::move(it->second));
      slots_.erase(it);
    }
  }
  if (previous && previous->thread.joinable()) previous->thread.join();
  previous.reset();
  auto worker = std::make_unique<SessionWorker>(ctx_, std::move(work));
  SessionWorker* w = worker.get();
  std::lock_guard lock(mu_);
  Slot& slot = slots_[sid];
  slot.worker = std::move(worker);
  slot.thread = std::thread([this, w, sid] {
    SessionEnd end;
    // The worker's last line for a session: RunNative catches what its sandbox stages throw,
    // this catches the rest (the clients, the lease's start, the on-work path), so that one
    // session's exception never std::terminates the worker and its other sessions.
    try {
      end = w->Run();
    } catch (const std::exception& e) {
      end = {"fatal", std::string("internal error: ") + e.what()};
    }
    ctx_.log->Info("session item finished", {{"work_id", w->work_id()},
                                             {"session_id", sid},
                                             {"outcome", end.outcome},
                                             {"message", end.message}});
    if (end.session_over && ctx_.config->workspace_cleanup == WorkspaceCleanup::kTerminated) {
      std::error_code ec;
      // The image only once its filesystem is unmounted (the session's worker did that).
      std::filesystem::remove_all(ctx_.config->sessions_dir + "/" + sid, ec);
      if (!ec) std::filesystem::remove(WorkspaceImagePath(ctx_.config->sessions_dir, sid), ec);
      if (ec) {
        ctx_.log->Warn("workspace cleanup failed", {{"session_id", sid}, {"error", ec.message()}});
      } else {
        ctx_.log->Info("workspace removed (session over)", {{"session_id", sid}});
      }
    }
    if (end.fatal_script) {
      ctx_.log->Error("on-work script cannot run; stopping", {{"error", end.message}});
      {
        std::lock_guard l(mu_);
        fatal_ = true;
      }
      Shutdown("on-work script cannot run");
    }
    std::lock_guard l(mu_);
    slots_[sid].finished = true;
    cv_.notify_all();
  });
}

int Poller::Run() {
  Backoff backoff;  // 1 s doubling to 60 s, jitter [b/2, b)
  auto uniform = DefaultUniform();
  ctx_.log->Info("polling for work", {{"environment_id", ctx_.config->environment_id},
                                      {"worker_id", ctx_.worker_id},
                                      {"concurrency", ctx_.config->concurrency},
                                      {"mode", ctx_.config->on_work ? "on-work" : "native"}});
  for (;;) {
    ReapFinished();
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] {
        if (shutdown_) return true;
        size_t live = 0;
        for (auto& [id, s] : slots_) live += s.finished ? 0 : 1;
        return live < static_cast<size_t>(ctx_.config->concurrency);
      });
      if (shutdown_) break;
    }
    ReapFinished();

    auto polled = queue_.Poll();
    if (!polled) {
      const ApiError& e = polled.error();
      if (e.kind() == ApiErrorKind::kCancelled) break;
      if (e.kind() == ApiErrorKind::kFatal || e.kind() == ApiErrorKind::kInvalidArgument) {
        // A bad key or a missing environment never recovers.
        ctx_.log->Error("poll hit permanent 4xx; stopping", {{"error", e.message()}});
        std::lock_guard lock(mu_);
        fatal_ = true;
        break;
      }
      Millis d = backoff.Next(uniform());
      ctx_.log->Warn("poll failed, backing off",
                     {{"error", e.message()}, {"sleep", std::to_string(d.count()) + "ms"}});
      cancel_->WaitFor(d);
      continue;
    }
    backoff.Reset();
    if (!polled->has_value()) {
      cancel_->WaitFor(PollEmptySleep(uniform()));
      continue;
    }
    Work work = std::move(**polled);
    LogFields f = {{"work_id", work.id}, {"work_type", work.data_type}};
    if (auto acked = queue_.Ack(work.id); !acked) {
      f.emplace_back("error", acked.error().message());
      ctx_.log->Error("ack failed, discarding work item", f);
      StopItem(work.id, /*force=*/true);
      cancel_->WaitFor(backoff.Next(uniform()));
      continue;
    }
    ctx_.log->Info("claimed work", f);
    if (work.data_type == "healthcheck") {
      ServeHealthCheck(work.id, std::move(f));
      continue;
    }
    if (!work.is_session()) {
      // `ant` skips item types it does not know with a warning; the stop releases them.
      ctx_.log->Warn("skipping non-session work item", f);
      StopItem(work.id, /*force=*/false);
      continue;
    }
    bool duplicate = false;
    {
      std::lock_guard lock(mu_);
      auto it = slots_.find(work.data_id);
      duplicate = it != slots_.end() && !it->second.finished;
    }
    if (duplicate) {
      // Reclaim or lease loss can hand us a session we already serve (QS duplicate guard).
      f.emplace_back("session_id", work.data_id);
      ctx_.log->Warn("session already running on this host; skipping the duplicate item", f);
      StopItem(work.id, /*force=*/false);
      continue;
    }
    StartSession(std::move(work));
  }

  // Wind down: every session stops (its tool is cancelled and answered), then we wait.
  Shutdown(fatal_ ? "fatal error" : "stopped");
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, s] : slots_) {
      if (s.thread.joinable()) threads.push_back(std::move(s.thread));
    }
  }
  for (auto& t : threads) t.join();
  std::lock_guard lock(mu_);
  slots_.clear();
  return fatal_ ? 1 : 0;
}

Result<UniqueFd> LockSessionsDir(const PollerConfig& config) {
  std::error_code ec;
  if (std::filesystem::create_directories(config.sessions_dir, ec); ec) {
    return MakeError(Errc::kSystem,
                     "sessions directory '" + config.sessions_dir + "': " + ec.message());
  }
  (void)chmod(config.sessions_dir.c_str(), 0700);
  const std::string path = config.sessions_dir + "/.srt-poller.lock";
  // O_NOFOLLOW: a symlink planted here must not make us create or lock another file.
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return SysError("open the sessions directory's lock '" + path + "'");
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return MakeError(Errc::kSystem, "sessions directory '" + config.sessions_dir +
                                          "' is in use by another srt-poller (give each "
                                          "one its own --sessions-dir)");
    }
    return SysError("lock '" + path + "'");
  }
  return fd;
}

void UnmountLeftoverWorkspaceDisks(const PollerConfig& config, const Logger& log) {
  auto unmounted = UnmountLeftoverWorkspaces(config.sessions_dir);
  if (!unmounted) {
    log.Warn("could not unmount the workspaces of an earlier run",
             {{"sessions_dir", config.sessions_dir}, {"error", unmounted.error().message()}});
    return;
  }
  for (const std::string& path : *unmounted) {
    log.Warn("unmounted a workspace an earlier run left mounted", {{"workspace", path}});
  }
}

void WarnIfWorkspacesCannotFit(const PollerConfig& config, const Logger& log) {
  if (!config.limits || config.limits->disk_bytes == 0) return;
  struct statvfs fs {};
  if (statvfs(config.sessions_dir.c_str(), &fs) != 0) return;
  const uint64_t free_bytes = uint64_t{fs.f_bavail} * fs.f_frsize;
  const uint64_t needed = config.limits->disk_bytes * static_cast<uint64_t>(config.concurrency);
  if (free_bytes >= needed) return;
  log.Warn(
      "the sessions filesystem cannot reserve every session's workspace at once: items "
      "whose reservation does not fit fail at their start (lower --disk or --concurrency)",
      {{"sessions_dir", config.sessions_dir},
       {"free_mib", free_bytes >> 20},
       {"needed_mib", needed >> 20}});
}

void TakeSessionCgroupDelegation(PollerConfig& config, const Logger& log) {
  if (!config.limits) return;
  ResourceLimits limits;
  limits.memory_bytes = config.limits->memory_bytes;
  limits.cpu_millis = config.limits->cpu_millis;
  limits.pids = config.limits->pids;
  Result<std::string> parent = TakeCgroupDelegation(limits);
  if (!parent) {
    // The sessions still get their limits, in a cgroup of srt's own outside the unit.
    log.Warn(
        "could not use the cgroup systemd delegated to this unit; sessions' cgroups go to "
        "<cgroup2 root>/srt, outside the unit",
        {{"error", parent.error().message()}});
    return;
  }
  if (parent->empty()) return;
  config.limits->cgroup_parent = *parent;
  log.Info("sessions' cgroups go below the unit's delegated cgroup", {{"cgroup", *parent}});
}

void RemoveLeftoverSessionCgroups(const PollerConfig& config, const Logger& log) {
  if (!config.limits) return;
  const std::string prefix = SessionSandboxIdPrefix(config);
  ResourceLimits limits;
  limits.memory_bytes = config.limits->memory_bytes;
  limits.cpu_millis = config.limits->cpu_millis;
  limits.pids = config.limits->pids;
  limits.cgroup_parent = config.limits->cgroup_parent;
  auto removed = RemoveLeftoverCgroups(limits, prefix);
  if (!removed) {
    log.Warn("could not remove the cgroups of an earlier run",
             {{"prefix", prefix}, {"error", removed.error().message()}});
    return;
  }
  for (const std::string& path : *removed) {
    log.Warn("removed a cgroup an earlier run left behind", {{"cgroup", path}});
  }
}

std::string ShellSignalScopeGap() {
  const int abi = sys::LandlockAbi();
  if (abi >= sys::kLandlockSignalScopeAbi) return "";
  return "this kernel has no Landlock signal scoping (Landlock ABI " + std::to_string(abi) +
         ", scoping needs 6, Linux 6.12): the agent's shell can stop or kill srt-toolbox, which "
         "ends its own session within the toolbox deadlines";
}

namespace {

Result<void> ProbeOnThisThread(const PollerConfig& config, const Settings& policy) {
  std::error_code ec;
  std::filesystem::create_directories(config.sessions_dir, ec);
  if (ec) {
    return MakeError(Errc::kSystem,
                     "sessions directory '" + config.sessions_dir + "': " + ec.message());
  }
  std::string probe = config.sessions_dir + "/.srt-poller-probe-" + std::to_string(getpid());
  // The options first: a failure there leaves no probe directory behind.
  SRT_ASSIGN_OR_RETURN(
      SandboxOptions o,
      SessionSandboxOptions(policy, config, "probe", probe,
                            {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}));
  std::filesystem::create_directories(probe, ec);
  if (ec) return MakeError(Errc::kSystem, "create '" + probe + "': " + ec.message());
  const std::string probe_image =
      WorkspaceImagePath(config.sessions_dir, ".probe-" + std::to_string(getpid()));
  // Removed last, after the workspace filesystem below is unmounted (declared first).
  const ScopeExit remove_probe([&] {
    std::error_code ignored;
    std::filesystem::remove_all(probe, ignored);
    std::filesystem::remove(probe_image, ignored);
  });
  // With --disk, the probe's workspace is a filesystem of its own, of the smallest size,
  // mounted in this thread's own namespace (ProbeSessionSandbox).
  std::unique_ptr<MountedWorkspace> disk;
  if (config.limits && config.limits->disk_bytes != 0) {
    std::filesystem::remove(probe_image, ec);  // an earlier crash's
    auto mounted = MountWorkspace(probe_image, probe, kMinDiskBytes);
    if (!mounted) return mounted.error().Wrap("a workspace filesystem (--disk)");
    disk = std::move(*mounted);
    if (auto r = disk->Reserve(); !r) return r.error().Wrap("a workspace filesystem (--disk)");
  }
  // The probe checks the workspace bind and that bash (which the bash tool runs) works.
  o.argv = {"/bin/bash", "-c", "test -w /workspace && touch /workspace/.probe"};
  UniqueFd null(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!null) return SysError("open /dev/null");
  o.stdin_fd = null.get();
  o.stdout_fd = null.get();
  auto status = RunSandboxed(std::move(o));
  if (disk) {
    if (auto r = disk->Release(); !r) return r.error().Wrap("a workspace filesystem (--disk)");
  }
  if (!status) return status.error();
  if (status->code != 0) {
    return MakeError(Errc::kSystem, "the probe sandbox exited with " +
                                        std::to_string(status->code) +
                                        " (expected a writable /workspace and /bin/bash)");
  }
  return {};
}

}  // namespace

Result<void> ProbeSessionSandbox(const PollerConfig& config, const Settings& policy) {
  if (!config.limits || config.limits->disk_bytes == 0) return ProbeOnThisThread(config, policy);
  // With --disk, on a thread of its own that first enters a mount namespace of its own: the
  // caller's namespace is srt-poller's, which every item's thread copies when it starts.
  Result<void> result = MakeError(Errc::kInternal, "the probe's thread did not run");
  std::thread probe([&] {
    // The edge of this thread: an exception here would end srt-poller.
    try {
      if (auto entered = EnterProbeMountNamespace(); !entered) {
        result = entered.error().Wrap("a workspace filesystem (--disk)");
      } else {
        result = ProbeOnThisThread(config, policy);
      }
    } catch (const std::exception& e) {
      result = MakeError(Errc::kInternal, std::string("the sandbox probe: ") + e.what());
    }
  });
  probe.join();
  return result;
}

}  // namespace srt::poller
