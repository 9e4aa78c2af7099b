// SPDX-License-Identifier: Apache-2.0
// srt-poller: claims Claude Managed Agents work from a self-hosted environment's queue and serves
// every session in its own srt sandbox. The only place that prints usage, exits and catches.
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "api/client.h"
#include "base/system_text.h"
#include "poller/config.h"
#include "poller/log.h"
#include "poller/poller.h"
#include "poller/session.h"
#include "poller/session_memory.h"
#include "poller/worker_id.h"
#include "poller/workspace_disk.h"
#include "srt/sandbox.h"
#include "sys/helper_path.h"

extern char** environ;

namespace srt::poller {
namespace {

// Variables a session must never inherit from the poller's environment (§1.2): the key itself,
// and organisation credentials that have no business on a worker host.
constexpr const char* kSecretVars[] = {"ANTHROPIC_ENVIRONMENT_KEY", "ANTHROPIC_API_KEY",
                                       "ANTHROPIC_AUTH_TOKEN"};

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return SysError("open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (ss.str().size() > (size_t{1} << 20)) {
    return MakeError(Errc::kInvalidArgument, "'" + path + "' is over 1 MiB");
  }
  return ss.str();
}

std::string DefaultWorkerId() {
  char host[HOST_NAME_MAX + 1] = {};
  gethostname(host, sizeof host - 1);
  std::string h;
  for (char c : std::string(host)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    h += ok ? c : '-';
  }
  if (h.empty()) h = "worker";
  // The suffix only has to differ between workers on one host (std::random_device is
  // getrandom(2) here); the pid is mixed in so that two at once cannot collide either.
  std::random_device random;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%08x%08x", random(), random() ^ static_cast<unsigned>(getpid()));
  return h.substr(0, 100) + "-" + hex;
}

std::string FindToolbox(const PollerConfig& c) {
  if (c.toolbox_path) return *c.toolbox_path;
  std::string found = sys::FindHelper("srt-toolbox", SRT_TOOLBOX_INSTALL_PATH);
  // None found: the install path, which --check and the start-up probe then report as missing.
  return found.empty() ? std::string(SRT_TOOLBOX_INSTALL_PATH) : found;
}

Result<WorkQueueClient> CreateQueueClient(const PollerConfig& config, const std::string& key,
                                          std::shared_ptr<CancelToken> cancel);

// One read-only request with the key (the queue's stats): a revoked or mistyped key, a wrong
// environment id and an API that cannot be reached are told apart here, not at the first poll.
void CheckApi(const PollerConfig& c, const std::string& key,
              const std::function<void(bool, const std::string&, const std::string&)>& line) {
  const std::string what = "the API at " + c.base_url + " accepts the environment key";
  Result<WorkQueueClient> client = CreateQueueClient(c, key, nullptr);
  if (!client) {
    line(false, what, client.error().message());
    return;
  }
  ApiResult<QueueStats> stats = client->Stats();
  if (stats) {
    line(true, what,
         "queue depth " + std::to_string(stats->depth) + ", " + std::to_string(stats->pending) +
             " pending, " + std::to_string(stats->workers_polling) + " workers polling");
    return;
  }
  const ApiError& e = stats.error();
  std::string why;
  if (e.status() == 401) {
    why = "the key was refused (401): it is wrong, revoked, or not an environment key";
  } else if (e.status() == 403) {
    why = "the key may not use this environment (403)";
  } else if (e.status() == 404) {
    why = "no environment " + c.environment_id + " here (404)";
  } else if (e.kind() == ApiErrorKind::kTransport) {
    why = "the API cannot be reached";
  }
  line(false, what, why.empty() ? e.message() : why + ": " + e.message());
}

int Check(const PollerConfig& c, const PolicyStore& policy, const std::string& toolbox,
          const Result<std::string>& key_in_use, const std::string& worker_id_problem) {
  int failures = 0;
  auto line = [&](bool ok, const std::string& what, const std::string& detail) {
    std::printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what.c_str(), detail.empty() ? "" : ": ",
                detail.c_str());
    failures += ok ? 0 : 1;
  };
  line(true, "configuration", "environment " + c.environment_id + ", base URL " + c.base_url);
  line(worker_id_problem.empty(), "worker id",
       worker_id_problem.empty() ? c.worker_id : worker_id_problem);
  auto key = LoadEnvironmentKey(c.environment_key_file, std::nullopt);
  if (c.environment_key_file) {
    line(static_cast<bool>(key), "environment key file '" + *c.environment_key_file + "'",
         key ? "mode and owner fine" : key.error().message());
  } else if (c.environment_key_arg) {
    std::printf(
        "warn environment key from --environment-key: visible to every user of this "
        "host in ps and /proc/PID/cmdline (prefer --environment-key-file)\n");
  } else {
    line(true, "environment key", "from ANTHROPIC_ENVIRONMENT_KEY (prefer --environment-key-file)");
  }
  if (key_in_use) CheckApi(c, *key_in_use, line);
  line(access(toolbox.c_str(), X_OK) == 0, "srt-toolbox '" + toolbox + "'",
       access(toolbox.c_str(), X_OK) == 0 ? "" : ErrnoText(errno));
  if (c.on_work) {
    bool ok = access(c.on_work->c_str(), X_OK) == 0;
    line(ok, "--on-work script '" + *c.on_work + "'", ok ? "" : ErrnoText(errno));
  }
  if (!c.on_work) {
    if (std::string gap = ShellSignalScopeGap(); gap.empty()) {
      line(true, "the agent's shell cannot signal srt-toolbox", "Landlock signal scoping");
    } else {
      std::printf("warn %s\n", gap.c_str());  // a weaker host, not a broken one
    }
  }
  line(true, "session policy", c.policy_path.value_or("built-in policies/poller-session.json"));
  auto probe = ProbeSessionSandbox(c, *policy.Current());
  std::string limits =
      c.limits ? "with limits " + std::to_string(c.limits->memory_bytes >> 20) + " MiB, " +
                     std::to_string(c.limits->cpu_millis) + " milli-CPUs, " +
                     std::to_string(c.limits->pids) + " pids, " +
                     (c.limits->disk_bytes == 0
                          ? std::string("no disk limit (--disk 0)")
                          : std::to_string(c.limits->disk_bytes >> 20) + " MiB workspaces")
               : "without limits (--no-limits)";
  line(static_cast<bool>(probe), "a session sandbox starts here " + limits,
       probe ? "" : probe.error().message());
  std::printf(failures == 0 ? "srt-poller is ready\n" : "srt-poller is NOT ready\n");
  return failures == 0 ? 0 : 1;
}

// --help and --version: prints the answer and returns the exit code; nullopt for other actions.
std::optional<int> AnswerHelpOrVersion(const PollerConfig& config) {
  if (config.action == PollerConfig::Action::kHelp) {
    std::fputs(HelpText().c_str(), stdout);
    return 0;
  }
  if (config.action == PollerConfig::Action::kVersion) {
    std::printf("srt-poller %s\n", std::string(Version()).c_str());
    return 0;
  }
  return std::nullopt;
}

// Takes the key and the organisation credentials (kSecretVars) out of the process environment,
// warning about the credentials, then loads the key: from its file when there is one, else from
// --environment-key, else from the environment as it was at start (`env`).
Result<std::string> TakeEnvironmentKey(const PollerConfig& config,
                                       const std::map<std::string, std::string>& env,
                                       const Logger& log) {
  std::optional<std::string> env_key;
  if (auto it = env.find("ANTHROPIC_ENVIRONMENT_KEY"); it != env.end()) env_key = it->second;
  for (const char* v : kSecretVars) {
    if (getenv(v) != nullptr && std::string_view(v) != "ANTHROPIC_ENVIRONMENT_KEY") {
      log.Warn("removed an organisation credential from the environment: sessions never see it",
               {{"variable", v}});
    }
    unsetenv(v);  // NOLINT(concurrency-mt-unsafe): before any thread exists (see above)
  }
  if (config.environment_key_arg) {
    log.Warn(
        "the environment key was given with --environment-key: every user of this host can read "
        "a command line (ps, /proc/PID/cmdline), and srt-poller could blank it there only after "
        "its start; use --environment-key-file FILE (mode 0600)",
        {});
    return LoadEnvironmentKey(std::nullopt, config.environment_key_arg, "--environment-key");
  }
  return LoadEnvironmentKey(config.environment_key_file,
                            config.environment_key_file ? std::nullopt : env_key);
}

// Whether sessions can be served here: the --on-work script, or else srt-toolbox, is
// executable, and a session sandbox starts with its limits. Logs why not.
bool CanServeSessions(const PollerConfig& config, const PolicyStore& policy,
                      const std::string& toolbox, const Logger& log) {
  if (config.on_work && access(config.on_work->c_str(), X_OK) != 0) {
    log.Error("--on-work script is not executable",
              {{"script", *config.on_work}, {"error", ErrnoText(errno)}});
    return false;
  }
  if (!config.on_work && access(toolbox.c_str(), X_OK) != 0) {
    log.Error("srt-toolbox not found", {{"path", toolbox}, {"error", ErrnoText(errno)}});
    return false;
  }
  if (std::string gap = ShellSignalScopeGap(); !config.on_work && !gap.empty()) {
    log.Warn("the agent's shell is not kept from signalling srt-toolbox", {{"reason", gap}});
  }
  if (auto r = ProbeSessionSandbox(config, *policy.Current()); !r) {
    log.Error(
        "a session sandbox cannot start here (srt-poller --check explains; --no-limits "
        "runs without cgroup limits)",
        {{"error", r.error().message()}});
    return false;
  }
  return true;
}

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and ignores SIGPIPE; returns the
// blocked set, for the signal thread's sigwait.
sigset_t BlockPollerSignals() {
  // Signals go to one thread; every other thread (sessions, leases, proxies) inherits the mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Inherited through exec when ignored; every session's Sandbox::Start refuses it.
  signal(SIGCHLD, SIG_DFL);
  return set;
}

// What every session shares; it refers to `config`, `log` and `policy`, which must outlive it.
PollerContext MakeContext(const PollerConfig& config, const std::string& key, const Logger& log,
                          const std::string& toolbox, const PolicyStore& policy) {
  PollerContext ctx;
  ctx.config = &config;
  ctx.environment_key = key;
  ctx.worker_id = config.worker_id;
  ctx.log = &log;
  ctx.toolbox_path = toolbox;
  ctx.policy = &policy;
  // Only what the operator named: srt-poller's environment may hold anything (other services'
  // tokens, cloud credentials) and the script runs the session's code.
  for (const std::string& name : config.script_env_names) {
    if (const char* v = getenv(name.c_str())) ctx.script_env.push_back(name + "=" + v);
  }
  return ctx;
}

// The poller's work-queue client (poll, ack), its calls ended by `cancel`.
Result<WorkQueueClient> CreateQueueClient(const PollerConfig& config, const std::string& key,
                                          std::shared_ptr<CancelToken> cancel) {
  ClientOptions copts;
  if (config.ca_file) copts.ca_file = *config.ca_file;
  copts.cancel = std::move(cancel);
  return WorkQueueClient::Create(
      {config.base_url, config.environment_id, key, config.worker_id, copts});
}

// Runs `poller` to its end and returns its exit code, with a thread that takes the blocked
// `set`: SIGHUP reloads the policy, the first SIGTERM or SIGINT shuts down, a second one exits
// at once. That thread is left running, so `poller`, `set` and `log` are the caller's to keep
// until the process exits.
int RunPoller(Poller& poller, const sigset_t& set, const Logger& log) {
  // By reference to the objects themselves: the thread outlives these parameters.
  std::thread signals([&poller = poller, &set = set, &log = log] {
    int count = 0;
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (sig == SIGHUP) {
        poller.Reload();
        continue;
      }
      if (sig == 0) return;  // our own wake-up at exit
      if (++count == 1) {
        poller.Shutdown(std::string("signal ") + sigabbrev_np(sig));
      } else {
        log.Warn("second signal: exiting now (sandboxes die with us)", {});
        _exit(128 + sig);
      }
    }
  });
  int code = poller.Run();
  // Wake the signal thread to end it: SIGTERM to ourselves would be read as a request, so
  // detach it instead; the process is about to exit.
  signals.detach();
  log.Info("srt-poller exiting", {{"code", code}});
  return code;
}

int Main(int argc, char** argv) {
  // First: srt-poller holds the environment key and every session's proxy credentials, which no
  // sandbox may see. Non-dumpable, a crash leaves no core in the working directory and no other
  // process of its user (a session's, say) can ptrace it or read /proc/PID/{mem,environ}.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    std::fprintf(stderr, "srt-poller: prctl(PR_SET_DUMPABLE): %s\n", srt::ErrnoText(errno));
    return 1;
  }
  std::vector<std::string_view> args(argv + 1, argv + argc);
  std::map<std::string, std::string> env = Environment();
  auto parsed = ParseConfig(args, env, ReadFile);
  if (!parsed) {
    std::fprintf(stderr, "srt-poller: %s\n", parsed.error().message().c_str());
    return 2;
  }
  PollerConfig config = std::move(*parsed);
  // At once: the key leaves what `ps` shows of us (`args` points into argv, and is done with).
  BlankEnvironmentKeyArg(config, argc, argv);
  if (std::optional<int> code = AnswerHelpOrVersion(config)) return *code;

  Logger log(config.log_format);
  // First, while we are one thread: the workspace filesystems (--disk) are mounted in a mount
  // namespace of srt-poller's own.
  if (config.limits && config.limits->disk_bytes != 0) {
    // --check goes on without it, and reports the probe that then cannot mount.
    if (auto r = IsolateWorkspaceMounts(config.sessions_dir);
        !r && config.action != PollerConfig::Action::kCheck) {
      log.Error("workspace filesystems (--disk) need root; --disk 0 runs without them",
                {{"error", r.error().message()}});
      return 2;
    }
  }
  // The key leaves the process environment before anything else can copy it (threads, children).
  Result<std::string> key = TakeEnvironmentKey(config, env, log);
  if (!key && config.action != PollerConfig::Action::kCheck) {
    log.Error("environment key", {{"error", key.error().message()}});
    return 2;
  }
  // --check reads the kept worker id but writes nothing (the sessions directory may not exist).
  std::string worker_id_problem;
  if (config.worker_id.empty() && config.action == PollerConfig::Action::kCheck) {
    Result<std::string> id = LoadOrCreateWorkerId(config.sessions_dir, DefaultWorkerId(),
                                                  /*create=*/false);
    if (!id) worker_id_problem = id.error().message();
    config.worker_id = id ? *id : DefaultWorkerId();
  }

  PolicyStore policy;
  if (auto r = policy.Load(config.policy_path); !r) {
    std::fprintf(stderr, "srt-poller: %s\n", r.error().message().c_str());
    return 2;
  }
  std::string toolbox = FindToolbox(config);
  if (config.action == PollerConfig::Action::kCheck) {
    return Check(config, policy, toolbox, key, worker_id_problem);
  }
  // The sessions directory is ours alone from here to the exit (the descriptor is never closed
  // before it): only then are cgroups with our prefix an earlier run's, safe to sweep.
  Result<UniqueFd> sessions_lock = LockSessionsDir(config);
  if (!sessions_lock) {
    log.Error("sessions directory", {{"error", sessions_lock.error().message()}});
    return 2;
  }
  // Under the lock: the id this worker keeps across restarts (made by its first run).
  if (config.worker_id.empty()) {
    Result<std::string> id =
        LoadOrCreateWorkerId(config.sessions_dir, DefaultWorkerId(), /*create=*/true);
    if (!id) {
      log.Error("worker id", {{"error", id.error().message()}});
      return 2;
    }
    config.worker_id = std::move(*id);
  }
  // Before the sweep: it looks where the sessions' cgroups go, which this decides.
  TakeSessionCgroupDelegation(config, log);
  RemoveLeftoverSessionCgroups(config, log);
  UnmountLeftoverWorkspaceDisks(config, log);
  if (auto r = RemoveLeftoverMemory(config.sessions_dir); !r) {
    log.Warn("could not remove the memory stores an earlier run left",
             {{"error", r.error().message()}});
  }
  // Sessions must be able to start, with their limits, before we claim anything.
  if (!CanServeSessions(config, policy, toolbox, log)) return 2;
  WarnIfWorkspacesCannotFit(config, log);

  // Before the poller starts a thread, so that each of them inherits the mask.
  sigset_t signals = BlockPollerSignals();
  PollerContext ctx = MakeContext(config, *key, log, toolbox, policy);
  // With --disk, a workspace made and mounted ahead for the next new session (after the mask
  // above, which its thread inherits; it outlives the poller and so every session, and takes
  // the spare with it at the exit).
  std::unique_ptr<SpareWorkspaceMaker> spare_workspaces;
  if (config.limits && config.limits->disk_bytes != 0) {
    spare_workspaces = std::make_unique<SpareWorkspaceMaker>(
        config.sessions_dir, config.limits->disk_bytes, [&log](const Error& e) {
          log.Warn("no spare workspace; sessions make their own", {{"error", e.message()}});
        });
    ctx.spare_workspaces = spare_workspaces.get();
  }
  auto cancel = std::make_shared<CancelToken>();
  auto queue = CreateQueueClient(config, *key, cancel);
  if (!queue) {
    log.Error("work queue client", {{"error", queue.error().message()}});
    return 2;
  }
  Poller poller(ctx, policy, std::move(*queue), cancel);
  return RunPoller(poller, signals, log);
}

}  // namespace
}  // namespace srt::poller

int main(int argc, char** argv) {
  try {
    return srt::poller::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "srt-poller: %s\n", e.what());
    return 1;
  }
}
