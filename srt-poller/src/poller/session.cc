// SPDX-License-Identifier: Apache-2.0
#include "poller/session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "base/scope_exit.h"
#include "base/system_text.h"
#include "base/unique_fd.h"
#include "poller/lease.h"
#include "poller/poller_session_policy.h"
#include "poller/sandbox_output.h"
#include "poller/session_memory.h"
#include "poller/toolbox_client.h"
#include "poller/workspace_disk.h"
#include "runner/memory_stores.h"
#include "runner/runner.h"
#include "runner/skills.h"
#include "sys/fd.h"
#include "toolbox_protocol/protocol.h"

namespace srt::poller {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kScriptGrace{30'000};  // SIGTERM -> SIGKILL, as `ant`'s WaitDelay
constexpr milliseconds kStopTimeout{10'000};
// srt-toolbox exits at once on EOF; one that has not within this (stopped by the agent's shell,
// wedged) gets SIGTERM, and SIGKILL kToolboxGrace later.
constexpr milliseconds kToolboxExitWait{2'000};
constexpr milliseconds kToolboxGrace{3'000};
// The official workers' bound on a finishing item's final sync and flush of writes.
constexpr milliseconds kMemorySyncTimeout{30'000};
constexpr size_t kMemoryNotesLogged = 10;
constexpr uint64_t kMemoryStoreTmpfsBytes = uint64_t{256} << 20;
// Where the session's workspace is, in its sandbox: srt-toolbox's root, the cwd, HOME.
constexpr char kSessionWorkdir[] = "/workspace";

// Ends a sandbox that does not end by itself, from a thread of its own: SIGTERM to its command
// at Begin() (or at the deadline BeginAt() names), then SIGKILL `grace` later, each through
// `signal`, unless Finish() (the sandbox has ended) comes first. One thread sends both, so
// nothing races the end of the sandbox. Every wait srt-poller makes for a sandbox has one.
class Escalation {
 public:
  Escalation(std::function<void(int)> signal, milliseconds grace)
      : signal_(std::move(signal)), grace_(grace), thread_([this] { Loop(); }) {}
  ~Escalation() { Finish(); }
  Escalation(const Escalation&) = delete;
  Escalation& operator=(const Escalation&) = delete;

  void Begin() {
    {
      std::lock_guard lock(mu_);
      begun_ = true;
    }
    cv_.notify_all();
  }
  void BeginAt(std::chrono::steady_clock::time_point at) {
    {
      std::lock_guard lock(mu_);
      begin_at_ = at;
    }
    cv_.notify_all();
  }
  // The sandbox has ended: nothing more is sent. Joins the thread.
  void Finish() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      if (done_) return;
      if (begun_) break;
      if (begin_at_) {
        if (cv_.wait_until(lock, *begin_at_, [this] { return done_ || begun_; })) continue;
        break;
      }
      cv_.wait(lock);
    }
    signal_(SIGTERM);
    if (cv_.wait_for(lock, grace_, [this] { return done_; })) return;
    signal_(SIGKILL);
  }

  std::function<void(int)> signal_;
  milliseconds grace_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool begun_ = false;                                             // guarded by mu_
  bool done_ = false;                                              // guarded by mu_
  std::optional<std::chrono::steady_clock::time_point> begin_at_;  // guarded by mu_
  std::thread thread_;  // last: it starts once the rest exists
};

// Runs a SessionRunner on a thread of its own from construction; Finish() waits for its end. A
// way out before that (a set-up that failed, an exception) stops the runner and joins it.
class RunnerThread {
 public:
  explicit RunnerThread(SessionRunner& runner)
      : runner_(runner), thread_([this] {
          // An exception must not leave this thread (std::terminate): it ends the session.
          try {
            result_ = runner_.Run();
          } catch (const std::exception& e) {
            result_ = {RunOutcome::kFatal, std::string("session runner: ") + e.what()};
          }
        }) {}
  ~RunnerThread() {
    if (!thread_.joinable()) return;
    runner_.Stop(StopReason::kShutdown, "the session's set-up failed");
    thread_.join();
  }
  RunnerThread(const RunnerThread&) = delete;
  RunnerThread& operator=(const RunnerThread&) = delete;

  RunResult Finish() {
    thread_.join();
    return result_;
  }

 private:
  SessionRunner& runner_;
  RunResult result_{RunOutcome::kFatal, "the session runner did not run"};
  std::thread thread_;  // last: it starts once the rest exists
};

// --- The runner's view of the API (runner/session_api.h) over api/client.h ---------------------

// Maps an API failure onto the Errc classes runner/session_api.h expects.
Error ToRunnerError(const ApiError& e) {
  if (e.kind() == ApiErrorKind::kFatal || e.kind() == ApiErrorKind::kInvalidArgument) {
    int s = e.status();
    Errc c = (s == 401 || s == 403)                         ? Errc::kPermissionDenied
             : (s == 404 || s == 410)                       ? Errc::kNotFound
             : (s == 400 || s == 413 || s == 422 || s == 0) ? Errc::kInvalidArgument
                                                            : Errc::kDenied;
    return MakeError(c, e.message());
  }
  return MakeError(Errc::kSystem, e.message());
}

class ApiSession final : public SessionApi {
 public:
  // `reader` may retry on its own; `poster` must not (the runner does the §2.5 retries).
  ApiSession(SessionClient reader, SessionClient poster, std::string session_id)
      : reader_(std::move(reader)), poster_(std::move(poster)), id_(std::move(session_id)) {}

  Result<std::vector<Event>> ListHistory() override {
    auto events = reader_.ListEvents(id_);
    if (!events) return ToRunnerError(events.error());
    std::vector<Event> out;
    out.reserve(events->size());
    for (auto& e : *events) out.push_back(std::move(e));
    return out;
  }

  Result<void> Stream(const std::function<void()>& on_open,
                      const std::function<bool(const Event&)>& on_event,
                      const std::atomic<bool>& cancel) override {
    CancelToken token;
    // The runner's cancel is an atomic flag; the client's is a token. Bridge them.
    std::atomic<bool> done{false};
    std::thread bridge([&] {
      while (!done && !cancel) std::this_thread::sleep_for(milliseconds(20));
      if (cancel) token.Cancel();
    });
    StreamHandlers h;
    h.on_open = on_open;
    h.on_event = [&](SessionEvent&& e) { return on_event(e); };
    auto r = reader_.StreamEvents(id_, h, &token);
    done = true;
    bridge.join();
    if (!r) {
      if (r.error().kind() == ApiErrorKind::kCancelled) return {};
      return ToRunnerError(r.error());
    }
    return {};
  }

  Result<void> PostEvents(std::string events_json_array) override {
    auto r =
        poster_.PostEvents(id_, "{\"events\":" + events_json_array + "}", milliseconds(15'000));
    if (!r) return ToRunnerError(r.error());
    return {};
  }

 private:
  SessionClient reader_;
  SessionClient poster_;
  std::string id_;
};

// The memory endpoints on the item's sessions token. A 409 is the server's version winning.
class ApiMemory final : public MemoryApi {
 public:
  explicit ApiMemory(SessionClient client) : c_(std::move(client)) {}
  Result<std::vector<Memory>> List(const std::string& store_id) override {
    auto v = c_.ListMemories(store_id, kMaxMemories);
    if (!v) return v.error().ToError();
    return std::move(*v);
  }
  Result<Written> Create(const std::string& store_id, const std::string& path,
                         const std::string& content) override {
    return Outcome(c_.CreateMemory(store_id, path, content));
  }
  Result<Written> Update(const std::string& store_id, const std::string& id,
                         const std::string& content, const std::string& expected_sha256) override {
    return Outcome(c_.UpdateMemory(store_id, id, content, expected_sha256));
  }
  Result<Write> Delete(const std::string& store_id, const std::string& id,
                       const std::string& expected_sha256) override {
    auto r = c_.DeleteMemory(store_id, id, expected_sha256);
    if (r) return Write::kDone;
    if (r.error().kind() == ApiErrorKind::kConflict) return Write::kConflict;
    return r.error().ToError();
  }

 private:
  static Result<Written> Outcome(const ApiResult<Memory>& r) {
    if (r) return Written{Write::kDone, r->id, ""};
    if (r.error().kind() == ApiErrorKind::kConflict) return Written{Write::kConflict, "", ""};
    // What the server will not take of this memory (its path, its content), not the sync.
    const int status = r.error().status();
    if (status == 400 || status == 413 || status == 422) {
      return Written{Write::kRefused, "", r.error().message()};
    }
    return r.error().ToError();
  }
  SessionClient c_;
};

class ApiSkills final : public SkillsApi {
 public:
  explicit ApiSkills(SessionClient client) : c_(std::move(client)) {}
  Result<std::vector<std::string>> ListVersions(const std::string& skill_id) override {
    auto v = c_.ListSkillVersions(skill_id);
    if (!v) return v.error().ToError();
    std::vector<std::string> out;
    for (const auto& s : *v) out.push_back(s.version);
    return out;
  }
  Result<std::string> GetVersionName(const std::string& skill_id,
                                     const std::string& version) override {
    auto v = c_.GetSkillVersion(skill_id, version);
    if (!v) return v.error().ToError();
    return v->name;
  }
  Result<std::string> Download(const std::string& skill_id, const std::string& version) override {
    auto v = c_.DownloadSkillContent(skill_id, version);
    if (!v) return v.error().ToError();
    return std::move(*v);
  }

 private:
  SessionClient c_;
};

HeartbeatReply ToReply(const ApiResult<HeartbeatResponse>& r) {
  HeartbeatReply out;
  if (r) {
    out.last_heartbeat = r->last_heartbeat;
    out.ttl_seconds = r->ttl_seconds.value_or(0);
    out.state = r->state;
    out.lease_extended = r->lease_extended;
    return out;
  }
  out.error = r.error().message();
  switch (r.error().kind()) {
    case ApiErrorKind::kLeaseLost:
      out.kind = HeartbeatReply::Kind::kPreconditionFailed;
      break;
    case ApiErrorKind::kFatal:
    case ApiErrorKind::kConflict:
    case ApiErrorKind::kInvalidArgument:
      out.kind = HeartbeatReply::Kind::kFatal;
      break;
    default:
      out.kind = HeartbeatReply::Kind::kTransient;
  }
  return out;
}

Result<void> MakeDirs(const std::string& path, mode_t mode) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return MakeError(Errc::kSystem, "create '" + path + "': " + ec.message());
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return SysError("stat '" + path + "'");
  if (!S_ISDIR(st.st_mode)) return MakeError(Errc::kSystem, "'" + path + "' is not a directory");
  if ((st.st_mode & 07777) != mode) chmod(path.c_str(), mode);
  return {};
}

// The sessions directory (private to srt-poller) and the session's workspace below it.
Result<void> MakeWorkspace(const std::string& sessions_dir, const std::string& workspace) {
  SRT_RETURN_IF_ERROR(MakeDirs(sessions_dir, 0700));
  return MakeDirs(workspace, 0755);
}

std::vector<std::string> BaseEnv() {
  return {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          std::string("HOME=") + kSessionWorkdir, "LANG=C.UTF-8", "USER=agent", "SHELL=/bin/bash"};
}

// Pipes for the toolbox's stdin and stdout (CLOEXEC on our ends: only the sandbox's copies
// stay open in the child, as its fds 0 and 1).
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};
Result<Pipe> MakePipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return SysError("pipe2");
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// How a session the runner served ended, for the poller's log and the workspace cleanup.
SessionEnd SessionEndFor(const RunResult& result) {
  SessionEnd end;
  switch (result.outcome) {
    case RunOutcome::kTerminated:
      end = {"terminated", result.message, true};
      break;
    case RunOutcome::kIdleTimeout:
      end = {"idle", result.message};
      break;
    case RunOutcome::kStopped:
      end = {"stopped", result.message};
      break;
    case RunOutcome::kLeaseLost:
      end = {"lease_lost", result.message};
      break;
    case RunOutcome::kFatal:
      end = {"fatal", result.message};
      break;
  }
  return end;
}

}  // namespace

// --- PolicyStore ---------------------------------------------------------------------------------

Result<void> PolicyStore::Load(const std::optional<std::string>& path) {
  Result<LoadedSettings> loaded =
      path ? LoadSettingsFile(*path)
           : ParseSettings(kPollerSessionPolicy, "built-in policies/poller-session.json");
  if (!loaded) return loaded.error().Wrap("session policy");
  auto s = std::make_shared<const Settings>(std::move(loaded->settings));
  std::lock_guard lock(mu_);
  current_ = std::move(s);
  return {};
}

std::shared_ptr<const Settings> PolicyStore::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

// --- Sandbox options -----------------------------------------------------------------------------

std::string UrlHostPort(std::string_view url) {
  bool https = url.starts_with("https://");
  if (!https && !url.starts_with("http://")) return "";
  std::string_view rest = url.substr(https ? 8 : 7);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) rest = rest.substr(at + 1);
  if (rest.empty()) return "";
  // A port is present when the last ':' follows the host (after ']' for IPv6 literals).
  size_t colon = rest.rfind(':');
  size_t bracket = rest.rfind(']');
  bool has_port =
      colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket);
  if (has_port) return std::string(rest);
  return std::string(rest) + (https ? ":443" : ":80");
}

std::string SessionSandboxIdPrefix(const PollerConfig& config) {
  // FNV-1a over the directory as written, minus a trailing '/' and doubled ones: a stable name
  // across runs and builds (std::hash promises neither).
  std::string dir = std::filesystem::path(config.sessions_dir).lexically_normal().string();
  while (dir.size() > 1 && dir.ends_with('/')) dir.pop_back();
  uint64_t h = 14695981039346656037ULL;
  for (char c : dir) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(h ^ (h >> 32)));
  return std::string("p") + hex + "-";
}

Result<SandboxOptions> SessionSandboxOptions(const Settings& policy, const PollerConfig& config,
                                             const std::string& session_id,
                                             const std::string& workspace,
                                             const std::vector<std::string>& env) {
  SandboxOptions o;
  o.settings = policy;
  // The poller's own files are never readable in a session: every session's workspace (this
  // one comes back through the bind), the key, the configuration. A path the rule cannot
  // place fails the session rather than leaving the file readable.
  for (const std::optional<std::string>& p :
       {std::optional(config.sessions_dir), config.environment_key_file, config.config_path}) {
    if (!p) continue;
    if (!p->starts_with('/')) {
      return MakeError(Errc::kInvalidArgument,
                       "cannot hide '" + *p + "' from the session: not an absolute path");
    }
    o.settings.filesystem.deny_read.push_back({*p, true});
  }
  // Nor what names the other sessions' workspaces by their loop devices, whatever the policy
  // shows of /sys: each loop device's backing file (a session's image, so its id) and I/O, and
  // each mounted ext4 (when a session starts and ends). The session's own workspace needs neither.
  for (const char* p : {"/sys/devices/virtual/block", "/sys/fs/ext4"}) {
    o.settings.filesystem.deny_read.push_back({p, true});
  }
  // The workspace is the session's own: the agent clones and commits there, and no host user's
  // git reads it (git's write-guard rules would refuse the clone).
  o.binds.push_back({workspace, kSessionWorkdir, true, /*own_repositories=*/true});
  o.cwd = kSessionWorkdir;
  o.env = env;
  if (config.limits) {
    // The agent's shell runs in an inner cgroup (srt-toolbox moves it there) with
    // a reserve less: what it fills - /tmp is a tmpfs, whose pages belong to no process the
    // OOM killer could weigh, and a memfd's neither - then costs it alone, not srt-toolbox or
    // bwrap, which would end the session. An eighth of each limit, within bounds: the reserve
    // is what srt-toolbox's own tools (glob, read, the grep walker) may use at worst.
    const SessionLimits& l = *config.limits;
    const uint64_t memory_reserve =
        std::min(std::clamp<uint64_t>(l.memory_bytes / 8, uint64_t{64} << 20, uint64_t{256} << 20),
                 l.memory_bytes / 2);
    const uint32_t pids_reserve = std::min(std::clamp<uint32_t>(l.pids / 8, 8, 64), l.pids / 2);
    const uint64_t inner_memory = l.memory_bytes ? l.memory_bytes - memory_reserve : 0;
    // A full /tmp (a hidden directory's tmpfs) then says ENOSPC, and leaves the shell half its
    // memory to start again and remove what filled it.
    o.limits = ResourceLimits{
        l.memory_bytes,   l.cpu_millis,   l.pids, inner_memory, l.pids ? l.pids - pids_reserve : 0,
        inner_memory / 2, l.cgroup_parent};
  }
  // Names the session's proxy in the connection log (every sandbox has one, so SIGHUP can
  // widen or narrow a running session's network) and its cgroups, which a later run finds by
  // the prefix. Letters, digits, '.', '_', '-'; at most 64.
  const std::string prefix = SessionSandboxIdPrefix(config);
  o.id = prefix + session_id.substr(0, 64 - prefix.size());
  return o;
}

// --- SessionWorker -------------------------------------------------------------------------------

SessionWorker::SessionWorker(const PollerContext& ctx, Work work)
    : ctx_(ctx), work_(std::move(work)) {}

SessionWorker::~SessionWorker() = default;

LogFields SessionWorker::Fields(LogFields extra) const {
  LogFields f = {{"work_id", work_.id}, {"session_id", work_.data_id}};
  for (auto& kv : extra) f.push_back(std::move(kv));
  return f;
}

void SessionWorker::Stop(const std::string& reason) {
  std::lock_guard hook_lock(hook_mu_);
  std::function<void(const std::string&)> hook;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    stop_reason_ = reason;
    hook = stop_hook_;
  }
  if (hook) hook(reason);
}

void SessionWorker::UpdateNetwork(const NetworkSettings& network) {
  std::lock_guard lock(mu_);
  if (sandbox_ == nullptr) return;
  if (auto r = sandbox_->UpdateNetwork(network); !r) {
    ctx_.log->Warn("could not update the session's network",
                   Fields({{"error", r.error().message()}}));
  }
}

SessionEnd SessionWorker::Run() {
  if (work_.secret) {
    auto s = DecodeWorkSecret(*work_.secret);
    if (s) {
      secret_ = std::move(*s);
    } else {
      ctx_.log->Warn("work item secret unusable", Fields({{"error", s.error().message()}}));
    }
  }
  return ctx_.config->on_work ? RunScript() : RunNative();
}

// --- SessionWorker::RunNative and its stages -----------------------------------------------------

// The API clients of a native session.
struct SessionWorker::NativeClients {
  // Heartbeats get a client of their own whose calls the lease's end cancels, so a slow
  // server cannot hold up the end of the item (the force-stop in FinishNative must not be
  // cancelled).
  std::shared_ptr<CancelToken> hb_cancel;
  WorkQueueClient hb_queue;
  WorkQueueClient item_queue;
  SessionClient reader;  // may retry on its own
  SessionClient poster;  // must not (the runner does the §2.5 retries)
  SessionClient skills;  // with the environment key
  // The memory stores' syncs while the session runs: cancelled when its sandbox ends, so that
  // a slow server cannot hold up the final sync (on `reader`).
  std::shared_ptr<CancelToken> memory_cancel;
  SessionClient memory;
};

// What RunNative's stages share. It outlives the lease, the stop hook and the runner, which
// all point into it.
struct SessionWorker::NativeSession {
  explicit NativeSession(NativeClients c) : api(std::move(c)) {}

  // Stops the runner, or keeps the reason for the runner yet to come (the first one wins).
  void StopRunner(StopReason why, const std::string& msg) {
    std::lock_guard lock(runner_mu);
    if (runner != nullptr) {
      runner->Stop(why, msg);
    } else if (early_stop.empty()) {
      early_stop = msg;
    }
  }

  NativeClients api;
  // The runner, once it exists, is what Stop() and the lease talk to.
  std::mutex runner_mu;
  SessionRunner* runner = nullptr;  // guarded by runner_mu
  std::string early_stop;           // guarded by runner_mu
  std::atomic<bool> lease_lost{false};
  std::unique_ptr<LeaseKeeper> lease;  // set by StartLease
};

SessionEnd SessionWorker::RunNative() {
  const PollerConfig& cfg = *ctx_.config;
  Result<NativeClients> clients = CreateNativeClients();
  if (!clients) return {"fatal", "API client: " + clients.error().message()};
  NativeSession s(std::move(*clients));
  // The lease first: the item must be ours before slow work (the sandbox, skills). From here
  // on every way out goes through FinishNative.
  StartLease(s);
  AcceptStops(s);

  const std::string workspace = cfg.sessions_dir + "/" + work_.data_id;
  std::unique_ptr<MountedWorkspace> disk;
  SessionEnd end;
  // The session's edge: an exception (a bug of ours, memory running out) fails this session
  // and its item, not the worker and its other sessions. The sandbox is gone by now.
  try {
    end = ServeInSandbox(s, workspace, disk);
  } catch (const std::exception& e) {
    ctx_.log->Error("session failed on an exception", Fields({{"error", e.what()}}));
    end = {"fatal", std::string("internal error: ") + e.what()};
  }
  end = FinishNative(s, workspace, std::move(end));
  // After FinishNative, whose skill cleanup works in the mounted workspace.
  ReleaseWorkspace(disk);
  return end;
}

Result<std::unique_ptr<MountedWorkspace>> SessionWorker::PrepareWorkspace(
    const std::string& workspace) const {
  const PollerConfig& cfg = *ctx_.config;
  SRT_RETURN_IF_ERROR(MakeWorkspace(cfg.sessions_dir, workspace));
  if (!cfg.limits || cfg.limits->disk_bytes == 0) return std::unique_ptr<MountedWorkspace>();
  // This item's thread (its workspace's mount, its memory stores', its sandbox) in a mount
  // namespace of its own: no other session's sandbox holds or lists them.
  SRT_RETURN_IF_ERROR(EnterItemMountNamespace(cfg.sessions_dir));
  return MountWorkspace(WorkspaceImagePath(cfg.sessions_dir, work_.data_id), workspace,
                        cfg.limits->disk_bytes, ctx_.spare_workspaces);
}

void SessionWorker::ReplenishSpare(const std::unique_ptr<MountedWorkspace>& disk,
                                   bool& asked) const {
  if (asked || !disk || !disk->asks_spare() || ctx_.spare_workspaces == nullptr) return;
  asked = true;
  ctx_.spare_workspaces->Replenish();
}

// Never throws: it runs on a thread of its own.
Result<void> SessionWorker::ReserveWorkspace(MountedWorkspace* disk) {
  if (disk == nullptr) return {};
  try {
    return disk->Reserve();
  } catch (const std::exception& e) {
    return MakeError(Errc::kInternal, std::string("reserve the workspace: ") + e.what());
  }
}

void SessionWorker::ReleaseWorkspace(std::unique_ptr<MountedWorkspace>& disk) const {
  if (!disk) return;
  if (auto r = disk->Release(); !r) {
    ctx_.log->Warn("workspace unmount", Fields({{"error", r.error().message()}}));
  }
  disk.reset();
}

// The runner starts first, with its dispatch held: the event stream opens and the history is
// read while the workspace, the session read, the memory stores, the sandbox and the skills are
// set up, and the calls they bring wait until all of that is in place (protocol §2.6: a tool
// sees the session's skills). The session read runs beside the workspace's preparation. A set-up
// that fails stops the runner before it has run or answered anything.
SessionEnd SessionWorker::ServeInSandbox(NativeSession& s, const std::string& workspace,
                                         std::unique_ptr<MountedWorkspace>& disk) {
  // srt-toolbox's pipes first: their client is the runner's executor.
  auto to_tb = MakePipe();
  auto from_tb = MakePipe();
  if (!to_tb || !from_tb) return {"fatal", "pipes for srt-toolbox"};
  ToolboxClient toolbox(std::move(to_tb->write), std::move(from_tb->read));
  ApiSession api(s.api.reader, s.api.poster, work_.data_id);
  SessionRunner runner(api, toolbox, RunnerOptions());
  // srt-toolbox's readiness is awaited by the first tool call. A toolbox that never comes up
  // ends the item.
  toolbox.OnBroken([this, &s](const std::string& why) {
    ctx_.log->Error("srt-toolbox failed", Fields({{"error", why}}));
    s.StopRunner(StopReason::kShutdown, "srt-toolbox failed: " + why);
  });
  {
    std::lock_guard lock(s.runner_mu);
    s.runner = &runner;
    if (!s.early_stop.empty()) runner.Stop(StopReason::kShutdown, s.early_stop);
  }
  // After the runner: the lease and Stop() let go of it before it is destroyed, however this
  // ends.
  const ScopeExit forget_runner([&s] {
    std::lock_guard lock(s.runner_mu);
    s.runner = nullptr;
  });
  RunnerThread running(runner);

  // The session (a per-session call: the sessions token, never the environment key, when the
  // item has one) beside the workspace: its memory stores are in place before the sandbox
  // starts.
  Result<Session> session = MakeError(Errc::kSystem, "not read");
  {
    std::jthread reader([&] { session = ReadSession(s); });
    Result<std::unique_ptr<MountedWorkspace>> prepared = PrepareWorkspace(workspace);
    reader.join();
    if (!prepared) {
      ctx_.log->Error("workspace", Fields({{"error", prepared.error().message()}}));
      return {"fatal", "workspace: " + prepared.error().message()};
    }
    disk = std::move(*prepared);
  }
  // The next spare workspace is made once this session's sandbox has started (so that its
  // mkfs.ext4 does not compete with that start), or now if the set-up fails before.
  bool spare_asked = false;
  const ScopeExit replenish_spare([&] { ReplenishSpare(disk, spare_asked); });
  if (!session) {
    ctx_.log->Warn("could not read the session (skills and memory stores skipped)",
                   Fields({{"error", session.error().message()}}));
  }
  // The APIs before the stores: the periodic syncs' thread uses one until the stores are gone.
  ApiMemory memory_api(s.api.reader);
  ApiMemory periodic_memory_api(s.api.memory);
  std::unique_ptr<SessionMemory> memory;
  if (session && !session->memory_stores.empty()) {
    auto mounted = MountMemory(memory_api, session->memory_stores, workspace);
    if (!mounted) {
      ctx_.log->Error("memory store", Fields({{"error", mounted.error().message()}}));
      return {"fatal", "memory store: " + mounted.error().message()};
    }
    memory = std::move(*mounted);
  }

  // The session's sandbox: srt-toolbox on the two pipes.
  // Before the sandbox, so that it outlives it: its thread ends at the sandbox's EOF.
  auto output = StartOutput();
  if (!output) return {"fatal", "the sandbox's output: " + output.error().message()};
  // The workspace's reservation (a fallocate of --disk: milliseconds for gigabytes) beside the
  // sandbox's start: no tool runs before both are done, and a reservation that fails ends the
  // item before any call is answered, as one that failed before the sandbox did.
  Result<void> reserved;
  Result<Sandbox> sandbox = MakeError(Errc::kSystem, "not started");
  {
    std::jthread reserving([&] { reserved = ReserveWorkspace(disk.get()); });
    sandbox = StartToolboxSandbox(workspace, memory ? memory->binds() : std::vector<BindMount>(),
                                  std::move(to_tb->read), std::move(from_tb->write),
                                  (*output)->write_end());
  }
  (*output)->CloseWriteEnd();
  if (!sandbox) return {"fatal", "sandbox: " + sandbox.error().message()};
  ReplenishSpare(disk, spare_asked);
  SetSandbox(&*sandbox);
  // Declared after the sandbox, so UpdateNetwork() lets go of it before it is destroyed on any
  // way out, an exception's included.
  const ScopeExit forget_sandbox([this] { SetSandbox(nullptr); });
  if (!reserved) {
    ctx_.log->Error("workspace", Fields({{"error", reserved.error().message()}}));
    EndToolboxSandbox(toolbox, *sandbox);
    return {"fatal", "workspace: " + reserved.error().message()};
  }

  // Skills: with the environment key, on the host (§2.6), while srt-toolbox starts in the
  // sandbox (the workspace is a bind, so what lands in it now is visible inside). Every tool
  // runs only after this.
  if (session) SetUpSkills(*session, s.api.skills, workspace);
  if (memory) {
    memory->StartPeriodic(periodic_memory_api, ctx_.config->memory_sync_interval,
                          [this](const std::vector<MemoryStoreSync>& syncs) {
                            LogMemorySyncs(syncs, /*quiet_when_idle=*/true);
                          });
  }

  runner.ReleaseDispatch();
  RunResult result = running.Finish();
  EndToolboxSandbox(toolbox, *sandbox);
  // Only now, with every process of the sandbox gone, is a store's directory still.
  if (memory) {
    s.api.memory_cancel->Cancel();
    memory->StopPeriodic();
    LogMemorySyncs(memory->Sync(memory_api, MemorySync::kFinal,
                                std::chrono::steady_clock::now() + kMemorySyncTimeout),
                   /*quiet_when_idle=*/false);
  }
  return SessionEndFor(result);
}

// GET the session, on `s.api.reader`. Never throws: it runs on a thread of its own.
Result<Session> SessionWorker::ReadSession(NativeSession& s) const {
  try {
    auto got = s.api.reader.GetSession(work_.data_id);
    if (!got) return got.error().ToError();
    return std::move(*got);
  } catch (const std::exception& e) {
    return MakeError(Errc::kInternal, std::string("read the session: ") + e.what());
  }
}

// Makes the item's clients (no call yet): per-item calls on the item's API base URL, skills on
// ours. Fails with the error of the first unusable one, item queue first.
Result<SessionWorker::NativeClients> SessionWorker::CreateNativeClients() const {
  const PollerConfig& cfg = *ctx_.config;
  const std::string& base = ItemBaseUrl();
  const std::string& bearer = ItemBearer();
  ClientOptions copts;
  if (cfg.ca_file) copts.ca_file = *cfg.ca_file;

  auto hb_cancel = std::make_shared<CancelToken>();
  ClientOptions hb_opts;
  hb_opts.cancel = hb_cancel;
  auto hb_queue = ItemQueue(hb_opts);
  auto item_queue = ItemQueue({});
  auto reader = SessionClient::Create({base, bearer, copts});
  ClientOptions post_opts = copts;
  post_opts.max_retries = 0;
  auto poster = SessionClient::Create({base, bearer, post_opts});
  auto skills_client = SessionClient::Create({cfg.base_url, ctx_.environment_key, copts});
  auto memory_cancel = std::make_shared<CancelToken>();
  ClientOptions memory_opts = copts;
  memory_opts.cancel = memory_cancel;
  auto memory = SessionClient::Create({base, bearer, memory_opts});
  if (!item_queue) return item_queue.error();
  if (!hb_queue) return hb_queue.error();
  if (!reader) return reader.error();
  if (!poster) return poster.error();
  if (!skills_client) return skills_client.error();
  if (!memory) return memory.error();
  return NativeClients{std::move(hb_cancel),     std::move(*hb_queue), std::move(*item_queue),
                       std::move(*reader),       std::move(*poster),   std::move(*skills_client),
                       std::move(memory_cancel), std::move(*memory)};
}

const std::string& SessionWorker::ItemBaseUrl() const {
  return secret_ && secret_->api_base_url ? *secret_->api_base_url : ctx_.config->base_url;
}

const std::string& SessionWorker::ItemBearer() const {
  // The item's sessions token when there is one (TS SDK #handleItem); the environment key
  // otherwise. Both stay in this process.
  return secret_ ? secret_->sessions_token : ctx_.environment_key;
}

Result<WorkQueueClient> SessionWorker::ItemQueue(ClientOptions options) const {
  const PollerConfig& cfg = *ctx_.config;
  if (cfg.ca_file) options.ca_file = *cfg.ca_file;
  return WorkQueueClient::Create(
      {ItemBaseUrl(), work_.environment_id.empty() ? cfg.environment_id : work_.environment_id,
       ItemBearer(), ctx_.worker_id, std::move(options)});
}

SessionWorker::Handoff SessionWorker::HandOffLease(const WorkQueueClient& queue) const {
  auto beat = queue.Heartbeat(work_.id, kNoHeartbeat);
  if (!beat) {
    if (beat.error().kind() == ApiErrorKind::kLeaseLost) {
      // Another worker holds it: released without a stop, as the SDK does.
      ctx_.log->Warn("lease lost before the script started; released without stopping it",
                     Fields({{"error", beat.error().message()}}));
      return {std::nullopt, SessionEnd{"lease_lost", beat.error().message()}};
    }
    ctx_.log->Warn("first heartbeat failed; the script's worker starts the lease",
                   Fields({{"error", beat.error().message()}}));
    return {};
  }
  if (!beat->lease_extended || beat->state == "stopping" || beat->state == "stopped") {
    ctx_.log->Info("heartbeat reports shutdown; the script does not run",
                   Fields({{"state", beat->state}}));
    return {std::nullopt, SessionEnd{"stopped", "state " + beat->state}};
  }
  return {beat->last_heartbeat, std::nullopt};
}

// Heartbeats the item from now on, on the lease's thread. The lease's end stops the runner (or
// the runner yet to come); a lost lease also spares the item FinishNative's force-stop.
void SessionWorker::StartLease(NativeSession& s) {
  s.lease = std::make_unique<LeaseKeeper>(
      [this, &s](const std::string& expected, milliseconds timeout, const std::atomic<bool>&) {
        return ToReply(s.api.hb_queue.Heartbeat(work_.id, expected, std::nullopt, timeout));
      },
      [this, &s](LeaseEnd end, const std::string& detail) {
        ctx_.log->Warn("lease ended",
                       Fields({{"reason", std::string(LeaseEndName(end))}, {"detail", detail}}));
        if (end == LeaseEnd::kLost) {
          s.lease_lost = true;
          s.StopRunner(StopReason::kLeaseLost, std::string(LeaseEndName(end)));
        } else {
          s.StopRunner(StopReason::kShutdown, std::string(LeaseEndName(end)));
        }
      });
  s.lease->Start();
}

// From now on Stop() stops the runner (or the runner yet to come); a Stop() that came earlier
// is applied here. FinishNative takes the hook away.
void SessionWorker::AcceptStops(NativeSession& s) {
  std::lock_guard lock(mu_);
  stop_hook_ = [&s](const std::string& reason) { s.StopRunner(StopReason::kShutdown, reason); };
  if (stopping_) s.StopRunner(StopReason::kShutdown, stop_reason_);
}

// Starts the session's sandbox running srt-toolbox on the given stdin and stdout (the
// sandbox's ends of its pipes, closed here once the sandbox has its copies). Logs a failure.
Result<Sandbox> SessionWorker::StartToolboxSandbox(const std::string& workspace,
                                                   const std::vector<BindMount>& memory_binds,
                                                   UniqueFd toolbox_stdin, UniqueFd toolbox_stdout,
                                                   int output_fd) const {
  auto policy = ctx_.policy->Current();
  Result<SandboxOptions> options =
      SessionSandboxOptions(*policy, *ctx_.config, work_.data_id, workspace, BaseEnv());
  if (!options) {
    ctx_.log->Error("session sandbox did not start",
                    Fields({{"error", options.error().message()}}));
    return options.error();
  }
  SandboxOptions so = std::move(*options);
  so.argv = {ctx_.toolbox_path, "--root", kSessionWorkdir};
  // srt-toolbox is shown read-only at its own path whatever the policy hides: a build tree or
  // an install under /tmp, /root or /home would otherwise be invisible in the sandbox.
  so.binds.push_back({ctx_.toolbox_path, ctx_.toolbox_path, false});
  so.binds.insert(so.binds.end(), memory_binds.begin(), memory_binds.end());
  so.stdin_fd = toolbox_stdin.get();
  so.stdout_fd = toolbox_stdout.get();
  so.stderr_fd = output_fd;
  auto sandbox = Sandbox::Start(std::move(so));
  // Our copies of the sandbox's ends must go, or EOF never arrives.
  toolbox_stdin.reset();
  toolbox_stdout.reset();
  if (!sandbox) {
    ctx_.log->Error("session sandbox did not start",
                    Fields({{"error", sandbox.error().message()}}));
  }
  return sandbox;
}

// Fetches the session's memory stores (their API refuses the environment key: an item without
// a sessions token cannot have them) for binds into its sandbox.
Result<std::unique_ptr<SessionMemory>> SessionWorker::MountMemory(
    MemoryApi& api, const std::vector<MemoryStoreRef>& stores, const std::string& workspace) const {
  if (!secret_) {
    return MakeError(Errc::kDenied,
                     "the session has memory stores, whose API refuses the environment key, and "
                     "its work item carries no sessions token");
  }
  const PollerConfig& cfg = *ctx_.config;
  // With --disk no session may fill the sessions filesystem (and srt-poller has a mount
  // namespace of its own to mount in): a store gets room for its 2000 memories of 100 kB.
  const uint64_t tmpfs_bytes =
      cfg.limits && cfg.limits->disk_bytes != 0 ? stores.size() * kMemoryStoreTmpfsBytes : 0;
  auto memory = SessionMemory::Mount(api, stores, cfg.sessions_dir, work_.data_id, workspace,
                                     kSessionWorkdir, tmpfs_bytes);
  if (!memory) return memory;
  for (const std::string& note : (*memory)->notes()) {
    ctx_.log->Warn("memory not fetched", Fields({{"error", note}}));
  }
  for (const BindMount& b : (*memory)->binds()) {
    ctx_.log->Info(
        "memory store ready",
        Fields({{"path", b.target}, {"access", b.writable ? "read_write" : "read_only"}}));
  }
  return memory;
}

// Logs what syncs of the memory stores did; a periodic sync that sent nothing says nothing.
void SessionWorker::LogMemorySyncs(const std::vector<MemoryStoreSync>& syncs,
                                   bool quiet_when_idle) const {
  for (const auto& [store_id, report] : syncs) {
    if (!report) {
      ctx_.log->Error("memory store not written back",
                      Fields({{"memory_store_id", store_id}, {"error", report.error().message()}}));
      continue;
    }
    const size_t sent = report->created + report->updated + report->deleted + report->conflicts;
    if (quiet_when_idle && sent == 0 && !report->out_of_time) continue;
    ctx_.log->Info(quiet_when_idle ? "memory store synced" : "memory store written back",
                   Fields({{"memory_store_id", store_id},
                           {"created", report->created},
                           {"updated", report->updated},
                           {"deleted", report->deleted},
                           {"conflicts", report->conflicts},
                           {"skipped", report->skipped.count},
                           {"out_of_time", report->out_of_time ? "true" : "false"},
                           {"incomplete_walk", report->incomplete_walk ? "true" : "false"}}));
    if (quiet_when_idle) continue;  // the final sync says what was skipped, once
    // The agent decides how many there are: the first few say what kind.
    const auto& notes = report->skipped.first;
    for (size_t i = 0; i < std::min(notes.size(), kMemoryNotesLogged); ++i) {
      ctx_.log->Warn("memory not written back",
                     Fields({{"memory_store_id", store_id}, {"error", notes[i]}}));
    }
  }
}

// Puts the session's skills into the workspace (their API on `skills`, which takes the
// environment key). Best effort: what fails is logged, and the session goes on without it.
void SessionWorker::SetUpSkills(const Session& session, const SessionClient& skills,
                                const std::string& workspace) const {
  std::vector<SkillRef> refs;
  for (const auto& s : session.skills) refs.push_back(s);
  if (refs.empty()) return;
  ApiSkills api(skills);
  auto outcomes = SetupSkills(api, refs, workspace);
  if (!outcomes) {
    ctx_.log->Warn("skill setup failed", Fields({{"error", outcomes.error().message()}}));
    return;
  }
  for (const auto& o : *outcomes) {
    if (o.ok) {
      ctx_.log->Info("skill ready", Fields({{"skill_id", o.skill_id},
                                            {"version", o.resolved_version},
                                            {"directory", o.directory}}));
    } else {
      ctx_.log->Warn("skill failed", Fields({{"skill_id", o.skill_id}, {"error", o.error}}));
    }
  }
}

// The session runner's options: srt-toolbox's tools, logged dispatches, the dispatch held until
// the sandbox and the skills are in place (ServeInSandbox releases it).
SessionRunnerOptions SessionWorker::RunnerOptions() const {
  SessionRunnerOptions ropts;
  ropts.max_idle = ctx_.config->max_idle;
  ropts.hold_dispatch = true;
  // The built-in toolset srt-toolbox serves; a tool_use for any other name belongs to another
  // client of the session and is left pending for it (Go: unowned names post nothing).
  ropts.served_tools = std::set<std::string>(toolbox_protocol::kServedTools.begin(),
                                             toolbox_protocol::kServedTools.end());
  ropts.on_dispatch = [this](const DispatchReport& d) {
    ctx_.log->Info("dispatched tool", Fields({{"tool", d.call.name},
                                              {"tool_use_id", d.call.id},
                                              {"is_error", d.is_error ? "true" : "false"},
                                              {"posted", d.posted ? "true" : "false"},
                                              {"timed_out", d.timed_out ? "true" : "false"}}));
  };
  ropts.log = [this](std::string_view line) { ctx_.log->Info(line, Fields()); };
  return ropts;
}

// The toolbox exits on EOF; a sandbox that lingers is killed by the Sandbox's destructor.
// Once this returns UpdateNetwork() no longer reaches the sandbox.
void SessionWorker::EndToolboxSandbox(ToolboxClient& toolbox, Sandbox& sandbox) {
  toolbox.Close();
  // A toolbox the agent's shell stopped (kill -STOP $PPID) never reads the EOF: without this,
  // the session's slot, its item and srt-poller's own SIGTERM would wait for it forever.
  Escalation escalation(
      [this, &sandbox](int sig) {
        ctx_.log->Warn("srt-toolbox did not exit on EOF; signalling it",
                       Fields({{"signal", SignalText(sig)}}));
        (void)sandbox.Signal(sig);
      },
      kToolboxGrace);
  escalation.BeginAt(std::chrono::steady_clock::now() + kToolboxExitWait);
  auto status = sandbox.Wait();
  escalation.Finish();
  SetSandbox(nullptr);
  if (status && status->oom_killed) {
    ctx_.log->Warn("the session's sandbox hit its memory limit", Fields());
  }
}

// The last stage on every way out once the lease has started: the lease ends, Stop() no longer
// reaches `s`, the skills leave the workspace, and the item is force-stopped unless another
// worker has it now. Returns `end`.
SessionEnd SessionWorker::FinishNative(NativeSession& s, const std::string& workspace,
                                       SessionEnd end) {
  // Heartbeats first: a call in flight would otherwise hold up the lease's Stop.
  s.api.hb_cancel->Cancel();
  s.lease->Stop();
  {
    // hook_mu_ waits for a stop hook that is running: none is left once the hook is gone.
    std::lock_guard hook_lock(hook_mu_);
    std::lock_guard lock(mu_);
    stop_hook_ = nullptr;
  }
  if (auto r = CleanupSkills(workspace); !r) {
    ctx_.log->Warn("skill cleanup failed", Fields({{"error", r.error().message()}}));
  }
  if (!s.lease_lost) {
    if (auto r = s.api.item_queue.Stop(work_.id, /*force=*/true, kStopTimeout); !r) {
      ctx_.log->Warn("force-stop on exit failed", Fields({{"error", r.error().message()}}));
    }
  }
  return end;
}

// The session's sandbox output pipe, logged line by line as "sandbox output" with the session's
// ids; srt-poller's own notes about it (the limit reached, bytes dropped) as warnings.
Result<std::unique_ptr<SandboxOutput>> SessionWorker::StartOutput() const {
  return SandboxOutput::Start(
      [this](std::string_view line, bool cut) {
        LogFields f = Fields({{"line", std::string(line)}});
        if (cut) f.emplace_back("cut", "true");
        ctx_.log->Info("sandbox output", f);
      },
      [this](std::string_view note, uint64_t dropped) {
        ctx_.log->Warn(note, dropped > 0 ? Fields({{"bytes", dropped}}) : Fields());
      });
}

// The sandbox UpdateNetwork() reaches (null: none).
void SessionWorker::SetSandbox(Sandbox* sandbox) {
  std::lock_guard lock(mu_);
  sandbox_ = sandbox;
}

SessionEnd SessionWorker::RunScript() {
  const PollerConfig& cfg = *ctx_.config;
  const std::string& script = *cfg.on_work;
  const std::string workspace = cfg.sessions_dir + "/" + work_.data_id;
  Result<std::unique_ptr<MountedWorkspace>> disk = PrepareWorkspace(workspace);
  if (!disk) {
    ctx_.log->Error("workspace", Fields({{"error", disk.error().message()}}));
    return {"fatal", "workspace: " + disk.error().message()};
  }
  // Declared before the sandbox: the filesystem is unmounted after the sandbox is gone.
  const ScopeExit release([this, &disk] { ReleaseWorkspace(*disk); });
  bool spare_asked = false;
  const ScopeExit replenish_spare([&] { ReplenishSpare(*disk, spare_asked); });
  if (Result<void> reserved = ReserveWorkspace(disk->get()); !reserved) {
    ctx_.log->Error("workspace", Fields({{"error", reserved.error().message()}}));
    return {"fatal", "workspace: " + reserved.error().message()};
  }

  // Per-item calls (the heartbeat below, the stop after the script) use the item's sessions
  // token, never the environment key, when the item has one.
  Result<WorkQueueClient> queue = ItemQueue({});
  if (!queue) return {"fatal", "API client: " + queue.error().message()};
  // The lease hand-off (the SDK's ANTHROPIC_WORK_LAST_HEARTBEAT): the item's first heartbeat is
  // ours, right after the ack, so that the item is not reclaimed while the sandbox and the
  // script start; the script's worker continues the lease from that heartbeat.
  Handoff handoff;
  if (cfg.lease_handoff) handoff = HandOffLease(*queue);
  if (handoff.end) {
    if (handoff.end->outcome != "lease_lost") {
      if (auto r = queue->Stop(work_.id, /*force=*/true, kStopTimeout); !r) {
        ctx_.log->Warn("stop failed", Fields({{"error", r.error().message()}}));
      }
    }
    return *handoff.end;
  }

  // The curated base of every session, what the operator named, and the protocol's variables.
  std::vector<std::string> env = BaseEnv();
  env.insert(env.end(), ctx_.script_env.begin(), ctx_.script_env.end());
  env.push_back("ANTHROPIC_WORK_ID=" + work_.id);
  env.push_back("ANTHROPIC_ENVIRONMENT_ID=" + cfg.environment_id);
  env.push_back("ANTHROPIC_SESSION_ID=" + work_.data_id);
  // The script's worker talks to the same API as we do (ours may come from --base-url or the
  // config file; --script-env cannot name it).
  env.push_back("ANTHROPIC_BASE_URL=" + cfg.base_url);
  if (cfg.script_gets_environment_key) {
    env.push_back("ANTHROPIC_ENVIRONMENT_KEY=" + ctx_.environment_key);
  }
  if (handoff.last_heartbeat) {
    env.push_back("ANTHROPIC_WORK_LAST_HEARTBEAT=" + *handoff.last_heartbeat);
  }
  auto policy = ctx_.policy->Current();
  Result<SandboxOptions> options =
      SessionSandboxOptions(*policy, cfg, work_.data_id, workspace, env);
  if (!options) return {"fatal", options.error().message()};
  SandboxOptions so = std::move(*options);
  // The script talks to the API itself: allow its host (and the secret's, if different).
  for (const std::string& url :
       {cfg.base_url, secret_ && secret_->api_base_url ? *secret_->api_base_url : std::string()}) {
    std::string hp = UrlHostPort(url);
    if (!hp.empty()) so.settings.network.allowed_domains.push_back(hp);
  }
  so.argv = {script};
  // The script itself is shown read-only at its own path, whatever the policy hides (it may
  // live in a hidden directory such as /tmp or /root): the operator chose to run it.
  so.binds.push_back({script, script, false});
  auto in = MakePipe();
  if (!in) return {"fatal", "pipe for the script's stdin"};
  // Both streams to the session's output pipe, never to srt-poller's descriptors. Before the
  // sandbox, so that it outlives it.
  auto output = StartOutput();
  if (!output) return {"fatal", "the sandbox's output: " + output.error().message()};
  so.stdin_fd = in->read.get();
  so.stdout_fd = (*output)->write_end();
  so.stderr_fd = (*output)->write_end();
  auto sandbox = Sandbox::Start(std::move(so));
  in->read.reset();
  (*output)->CloseWriteEnd();
  ReplenishSpare(*disk, spare_asked);
  if (!sandbox) {
    ctx_.log->Error("session sandbox did not start",
                    Fields({{"error", sandbox.error().message()}}));
    return {"fatal", "sandbox: " + sandbox.error().message()};
  }
  {
    std::lock_guard lock(mu_);
    sandbox_ = &*sandbox;
  }
  // The work JSON, secret included, on stdin; then EOF. A script that never reads it must not
  // block us: write from a thread and give up when the sandbox ends.
  std::thread feeder([fd = std::move(in->write), json = work_.raw_json + "\n"]() mutable {
    signal(SIGPIPE, SIG_IGN);
    (void)sys::WriteAll(fd.get(), json, "write the work to the script");  // it may not read
  });

  // Stop(): SIGTERM now, SIGKILL after the grace period (`ant`: exec.CommandContext's cancel,
  // then WaitDelay).
  Escalation escalation(
      [this](int sig) {
        if (sig == SIGKILL)
          ctx_.log->Warn("on-work script outlived its grace period: SIGKILL", Fields());
        std::lock_guard lock(mu_);
        if (sandbox_ != nullptr) (void)sandbox_->Signal(sig);
      },
      kScriptGrace);
  std::once_flag stop_once;
  auto request_stop = [&](const std::string& reason) {
    std::call_once(stop_once, [&] {
      ctx_.log->Info("stopping the on-work script (SIGTERM)", Fields({{"reason", reason}}));
      escalation.Begin();
    });
  };
  {
    // Stop() reads stopping_ and the hook under mu_: a Stop before this point is applied here.
    std::lock_guard lock(mu_);
    stop_hook_ = request_stop;
    if (stopping_) request_stop(stop_reason_);
  }

  auto status = sandbox->Wait();
  {
    std::lock_guard hook_lock(hook_mu_);
    std::lock_guard lock(mu_);
    stop_hook_ = nullptr;
    sandbox_ = nullptr;
  }
  escalation.Finish();
  feeder.join();

  SessionEnd end{"script_exit", ""};
  if (!status) {
    end.message = status.error().message();
  } else if (status->exec_errno != 0) {
    // `ant` treats an exec.Error (missing or not executable) as fatal: do not burn the queue.
    end = {"fatal", "--on-work script '" + script +
                        "' could not be executed: " + std::string(ErrnoText(status->exec_errno))};
    end.fatal_script = true;
  } else if (status->code != 0) {
    ctx_.log->Warn("on-work script failed", Fields({{"exit_code", status->code}}));
    end.message = "exit code " + std::to_string(status->code);
  }
  // The CLI's WorkPoller stops the item gracefully once its consumer returns; 409 is fine.
  if (auto r = queue->Stop(work_.id, /*force=*/false, kStopTimeout); !r) {
    ctx_.log->Warn("stop after the script failed", Fields({{"error", r.error().message()}}));
  }
  return end;
}

}  // namespace srt::poller
