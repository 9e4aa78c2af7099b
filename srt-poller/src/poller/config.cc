// SPDX-License-Identifier: Apache-2.0
#include "poller/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "api/work.h"
#include "base/strings.h"
#include "base/unique_fd.h"
#include "base/units.h"
#include "poller/worker_id.h"

namespace srt::poller {
namespace {

constexpr int kMaxConcurrency = 4096;  // a sanity bound: each session is a sandbox and threads
constexpr size_t kMaxKeyBytes = 4096;

Error Bad(std::string message) { return MakeError(Errc::kInvalidArgument, std::move(message)); }

using strings::Quote;

// Every option, once: its flag, its environment variable (when `ant` has one) and its
// config-file key (the flag without dashes).
enum class Opt {
  kEnvironmentId,
  kEnvironmentKeyFile,
  kBaseUrl,
  kWorkerId,
  kSessionsDir,
  kConcurrency,
  kPolicy,
  kMaxIdle,
  kMemorySyncInterval,
  kOnWork,
  kLogFormat,
  kMemory,
  kCpus,
  kPids,
  kDisk,
  kNoLimits,
  kWorkspaceCleanup,
  kScriptGetsKey,
  kNoLeaseHandoff,
  kScriptEnv,
  kCaFile,
  kToolbox,
  // `ant beta:worker poll`'s flags that srt-poller maps or refuses (docs/poller.md, "Where
  // srt-poller differs from ant beta:worker poll").
  kWorkdir,
  kUnrestrictedPaths,
};

struct OptSpec {
  std::string_view flag;  // without "--"; also the config file's key
  std::string_view env;   // "" = none
  Opt opt;
  bool takes_value;
};

constexpr OptSpec kOpts[] = {
    {"environment-id", "ANTHROPIC_ENVIRONMENT_ID", Opt::kEnvironmentId, true},
    {"environment-key-file", "", Opt::kEnvironmentKeyFile, true},
    {"base-url", "ANTHROPIC_BASE_URL", Opt::kBaseUrl, true},
    {"worker-id", "ANTHROPIC_WORKER_ID", Opt::kWorkerId, true},
    {"sessions-dir", "", Opt::kSessionsDir, true},
    {"concurrency", "", Opt::kConcurrency, true},
    {"policy", "", Opt::kPolicy, true},
    {"max-idle", "", Opt::kMaxIdle, true},
    {"memory-sync-interval", "", Opt::kMemorySyncInterval, true},
    {"on-work", "", Opt::kOnWork, true},
    {"log-format", "", Opt::kLogFormat, true},
    {"memory", "", Opt::kMemory, true},
    {"cpus", "", Opt::kCpus, true},
    {"pids", "", Opt::kPids, true},
    {"disk", "", Opt::kDisk, true},
    {"no-limits", "", Opt::kNoLimits, false},
    {"workspace-cleanup", "", Opt::kWorkspaceCleanup, true},
    {"script-gets-environment-key", "", Opt::kScriptGetsKey, false},
    {"script-env", "", Opt::kScriptEnv, true},
    {"no-lease-handoff", "", Opt::kNoLeaseHandoff, false},
    {"ca-file", "", Opt::kCaFile, true},
    {"toolbox", "", Opt::kToolbox, true},
    {"workdir", "", Opt::kWorkdir, true},
    {"unrestricted-paths", "", Opt::kUnrestrictedPaths, false},
};

const OptSpec* FindOpt(std::string_view flag) {
  for (const auto& o : kOpts) {
    if (o.flag == flag) return &o;
  }
  return nullptr;
}

Result<uint32_t> ParseCount(std::string_view what, std::string_view text, uint32_t min,
                            uint32_t max) {
  std::optional<uint32_t> v = ParseWholeNumber(text, min, max);
  if (!v) {
    return Bad(std::string(what) + ": " + Quote(text) + " is not a whole number from " +
               std::to_string(min) + " to " + std::to_string(max));
  }
  return *v;
}

// Why `name` cannot be passed to an --on-work script with --script-env, or nullopt: it must be
// a variable name, and neither a credential (the key has --script-gets-environment-key) nor one
// srt-poller sets itself.
std::optional<std::string> ScriptEnvNameProblem(std::string_view name) {
  auto head = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  auto tail = [&](char c) { return head(c) || (c >= '0' && c <= '9'); };
  if (name.empty() || name.size() > 128 || !head(name[0]) ||
      !std::all_of(name.begin() + 1, name.end(), tail)) {
    return "is not a variable name";
  }
  for (std::string_view taken :
       {"ANTHROPIC_ENVIRONMENT_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_WORK_ID", "ANTHROPIC_SESSION_ID", "ANTHROPIC_ENVIRONMENT_ID",
        "ANTHROPIC_BASE_URL"}) {
    if (name == taken) return "is set by srt-poller itself, or never passed";
  }
  return std::nullopt;
}

// The key file and the config file are hidden from every session's sandbox by a deny rule on
// their path, which only an absolute path can be (SessionSandboxOptions).
constexpr const char* kHiddenByItsPath =
    "must be an absolute path (every session's sandbox hides the file by its path)";

// Applies one option's value (`origin` says where it came from, for messages).
Result<void> Apply(PollerConfig& c, Opt opt, const std::string& value, std::string_view origin) {
  auto fail = [&](const std::string& why) {
    return Bad(std::string(origin) + ": " + Quote(value) + ": " + why);
  };
  switch (opt) {
    case Opt::kEnvironmentId:
      // The work-queue client's own check (api/work.h), so a bad id fails here, not at start-up.
      if (!ValidateId("environment id", value)) {
        return fail("not an environment id (letters, digits, '_', '-')");
      }
      c.environment_id = value;
      return {};
    case Opt::kEnvironmentKeyFile:
      if (value.empty()) return fail("empty path");
      if (!value.starts_with('/')) return fail(kHiddenByItsPath);
      c.environment_key_file = value;
      return {};
    case Opt::kBaseUrl: {
      if (!value.starts_with("https://") && !value.starts_with("http://")) {
        return fail("the base URL must start with https:// (or http:// for a local test server)");
      }
      std::string v = value;
      while (v.ends_with('/')) v.pop_back();
      if (v.find_first_of(" \t\r\n?#") != std::string::npos) return fail("not a base URL");
      c.base_url = v;
      return {};
    }
    case Opt::kWorkerId:
      if (!IsWorkerId(value)) return fail("not a worker id (letters, digits, '_', '-', '.')");
      c.worker_id = value;
      return {};
    case Opt::kSessionsDir:
      if (!value.starts_with('/')) return fail("the sessions directory must be an absolute path");
      c.sessions_dir = value;
      return {};
    case Opt::kConcurrency: {
      auto n = ParseCount(origin, value, 1, kMaxConcurrency);
      if (!n) return n.error();
      c.concurrency = static_cast<int>(*n);
      return {};
    }
    case Opt::kPolicy:
      if (value.empty()) return fail("empty path");
      c.policy_path = value;
      return {};
    case Opt::kMaxIdle: {
      auto d = ParseGoDuration(value);
      if (!d) return fail(d.error().message());
      c.max_idle = *d;
      return {};
    }
    case Opt::kMemorySyncInterval: {
      // The official workers' bounds: at least 5 s; 0 (theirs: negative) writes back only at
      // the end of an item.
      auto d = ParseGoDuration(value);
      if (!d) return fail(d.error().message());
      if (d->count() != 0 && *d < std::chrono::seconds(5)) return fail("must be 0 or at least 5s");
      c.memory_sync_interval = *d;
      return {};
    }
    case Opt::kOnWork:
      if (value.empty()) return fail("empty path");
      // `ant`'s name for its built-in runner, which is srt-poller's default.
      if (value == "in-process") {
        c.on_work.reset();
        return {};
      }
      c.on_work = value;
      return {};
    case Opt::kLogFormat:
      if (value == "text") {
        c.log_format = LogFormat::kText;
      } else if (value == "json") {
        c.log_format = LogFormat::kJson;
      } else {
        return fail("expected text or json");
      }
      return {};
    case Opt::kMemory: {
      auto b = ParseByteSize(value);
      if (!b) return fail(b.error().message());
      if (*b < (uint64_t{16} << 20)) return fail("below the 16 MiB floor");
      if (c.limits) c.limits->memory_bytes = *b;
      return {};
    }
    case Opt::kCpus: {
      auto m = ParseCpus(value);
      if (!m) return fail(m.error().message());
      if (c.limits) c.limits->cpu_millis = *m;
      return {};
    }
    case Opt::kPids: {
      auto n = ParseCount(origin, value, 16, 1 << 22);
      if (!n) return n.error();
      if (c.limits) c.limits->pids = *n;
      return {};
    }
    case Opt::kDisk: {
      auto b = ParseByteSize(value);
      if (!b) return fail(b.error().message());
      if (*b != 0 && *b < kMinDiskBytes) return fail("below the 32 MiB floor (0 turns it off)");
      if (*b > (uint64_t{16} << 40)) return fail("above the 16 TiB ceiling");
      if (c.limits) c.limits->disk_bytes = *b;
      return {};
    }
    case Opt::kNoLimits:
      c.limits.reset();
      return {};
    case Opt::kWorkspaceCleanup:
      if (value == "keep") {
        c.workspace_cleanup = WorkspaceCleanup::kKeep;
      } else if (value == "terminated") {
        c.workspace_cleanup = WorkspaceCleanup::kTerminated;
      } else {
        return fail("expected keep or terminated");
      }
      return {};
    case Opt::kScriptGetsKey:
      c.script_gets_environment_key = true;
      return {};
    case Opt::kNoLeaseHandoff:
      c.lease_handoff = false;
      return {};
    case Opt::kScriptEnv:
      // NAME[,NAME...]; repeated flags add up.
      for (std::string_view rest = value; !rest.empty();) {
        const size_t comma = rest.find(',');
        const std::string_view name = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        if (auto why = ScriptEnvNameProblem(name)) return fail(Quote(name) + " " + *why);
        c.script_env_names.emplace_back(name);
      }
      if (c.script_env_names.empty()) return fail("expected NAME[,NAME...]");
      return {};
    case Opt::kCaFile:
      if (value.empty()) return fail("empty path");
      c.ca_file = value;
      return {};
    case Opt::kToolbox:
      if (value.empty()) return fail("empty path");
      c.toolbox_path = value;
      return {};
    case Opt::kWorkdir: {
      // `ant`'s --workdir is the one directory its tools work in (docs: pass /workspace). Here
      // every session has its own /workspace, and nothing else is the tools' directory.
      std::string_view w = value;
      while (w.size() > 1 && w.ends_with('/')) w.remove_suffix(1);
      if (w == "/workspace") return {};
      return fail(
          "srt-poller's tools always work in /workspace, which is every session's own (ant's "
          "--workdir /workspace); on the host it is <sessions-dir>/<session id>: choose where "
          "with --sessions-dir");
    }
    case Opt::kUnrestrictedPaths:
      return Bad(std::string(origin) +
                 ": not supported: srt-poller's file tools stay in the session's /workspace "
                 "(the agent's bash sees only what the session's sandbox shows). To give sessions "
                 "more of the host, add the paths to the session policy (--policy: allowRead, "
                 "allowWrite)");
  }
  return {};
}

// A flag value seen on the command line, kept to apply after the config file and environment.
struct FlagValue {
  Opt opt;
  std::string value;
  std::string flag;
};

Result<void> ApplyConfigFile(PollerConfig& c, const std::string& path, const FileReader& read) {
  auto text = read(path);
  if (!text) return text.error().Wrap("config file '" + path + "'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    return Bad("config file '" + path + "': not JSON: " + e.what());
  }
  if (!j.is_object()) return Bad("config file '" + path + "': expected a JSON object");
  // Limits are applied after no-limits so that the order of keys does not matter.
  std::vector<std::pair<const OptSpec*, std::string>> values;
  for (auto& [key, v] : j.items()) {
    const OptSpec* spec = FindOpt(key);
    std::string origin = "config file '" + path + "': key '" + key + "'";
    if (key == "environment-key") {
      return Bad(origin +
                 ": the key itself does not go in the config file; put it in a file of mode "
                 "0600 and name that with environment-key-file");
    }
    if (spec == nullptr) return Bad(origin + ": unknown key (keys are the long flag names)");
    if (!spec->takes_value) {
      if (!v.is_boolean()) return Bad(origin + ": expected true or false");
      if (v.get<bool>()) values.emplace_back(spec, "");
      continue;
    }
    std::string s;
    if (v.is_string()) {
      s = v.get<std::string>();
    } else if (v.is_number_unsigned()) {
      s = std::to_string(v.get<uint64_t>());
    } else if (v.is_number_float() &&
               (spec->opt == Opt::kCpus)) {  // "cpus": 0.5 is natural in JSON
      s = v.dump();
    } else {
      return Bad(origin + ": expected a string, got " + v.dump());
    }
    values.emplace_back(spec, s);
  }
  for (auto& [spec, s] : values) {
    if (spec->opt != Opt::kNoLimits) continue;
    if (auto r = Apply(c, spec->opt, s, "config file '" + path + "'"); !r) return r;
  }
  for (auto& [spec, s] : values) {
    if (spec->opt == Opt::kNoLimits) continue;
    if (auto r = Apply(c, spec->opt, s,
                       "config file '" + path + "': key '" + std::string(spec->flag) + "'");
        !r) {
      return r;
    }
  }
  return {};
}

}  // namespace

Result<PollerConfig> ParseConfig(const std::vector<std::string_view>& args,
                                 const std::map<std::string, std::string>& env,
                                 const FileReader& read_file) {
  PollerConfig c;
  std::vector<FlagValue> flags;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "-h" || a == "--help") {
      c.action = PollerConfig::Action::kHelp;
      return c;
    }
    if (a == "-V" || a == "--version") {
      c.action = PollerConfig::Action::kVersion;
      return c;
    }
    if (a == "--check") {
      c.action = PollerConfig::Action::kCheck;
      continue;
    }
    if (!a.starts_with("--")) {
      return Bad("unexpected argument " + Quote(a) +
                 " (srt-poller takes options only; see --help)");
    }
    std::string_view name = a.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string_view::npos) {
      value = std::string(name.substr(eq + 1));
      name = name.substr(0, eq);
    }
    if (name == "config") {
      if (!value) {
        if (i + 1 >= args.size()) return Bad("--config needs a file");
        value = std::string(args[++i]);
      }
      if (!value->starts_with('/'))
        return Bad("--config: " + Quote(*value) + ": " + kHiddenByItsPath);
      c.config_path = *value;
      continue;
    }
    if (name == "environment-key") {
      // Only here: the value is the key itself, whose place main blanks.
      size_t offset = 0;
      if (value) {
        offset = a.size() - value->size();
      } else if (i + 1 < args.size()) {
        value = std::string(args[++i]);
      }
      if (!value || value->empty()) return Bad("--environment-key needs a value");
      c.environment_key_arg = *value;
      c.environment_key_at = PollerConfig::ArgPosition{i, offset};
      continue;
    }
    const OptSpec* spec = FindOpt(name);
    if (spec == nullptr) return Bad("unknown option " + Quote(a) + " (see --help)");
    if (!spec->takes_value) {
      if (value) return Bad("--" + std::string(name) + " takes no value");
      flags.push_back({spec->opt, "", "--" + std::string(name)});
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) return Bad("--" + std::string(name) + " needs a value");
      value = std::string(args[++i]);
    }
    flags.push_back({spec->opt, *value, "--" + std::string(name)});
  }

  if (c.config_path) {
    if (auto r = ApplyConfigFile(c, *c.config_path, read_file); !r) return r.error();
  }
  for (const auto& o : kOpts) {
    if (o.env.empty()) continue;
    auto it = env.find(std::string(o.env));
    if (it == env.end() || it->second.empty()) continue;
    if (auto r = Apply(c, o.opt, it->second, "environment variable " + std::string(o.env)); !r) {
      return r.error();
    }
  }
  // --no-limits first, so `--memory 1G --no-limits` and `--no-limits --memory 1G` agree.
  for (const auto& f : flags) {
    if (f.opt == Opt::kNoLimits) c.limits.reset();
  }
  for (const auto& f : flags) {
    if (f.opt == Opt::kNoLimits) continue;
    if (auto r = Apply(c, f.opt, f.value, f.flag); !r) return r.error();
  }
  if (auto it = env.find("ANTHROPIC_ENVIRONMENT_KEY"); it != env.end() && !it->second.empty()) {
    c.environment_key_from_env = true;
  }

  if (c.environment_id.empty()) {
    return Bad("no environment id: pass --environment-id or set ANTHROPIC_ENVIRONMENT_ID");
  }
  if (c.environment_key_arg && c.environment_key_file) {
    return Bad(
        "--environment-key and --environment-key-file both give the key: keep one (the file: a "
        "command line is visible to every user of the host)");
  }
  if (!c.environment_key_file && !c.environment_key_from_env && !c.environment_key_arg) {
    return Bad(
        "no environment key: pass --environment-key-file FILE (mode 0600) or set "
        "ANTHROPIC_ENVIRONMENT_KEY");
  }
  if (!c.script_env_names.empty() && !c.on_work) return Bad("--script-env needs --on-work");
  if (c.script_gets_environment_key && !c.on_work) {
    return Bad("--script-gets-environment-key needs --on-work");
  }
  if (!c.lease_handoff && !c.on_work) return Bad("--no-lease-handoff needs --on-work");
  return c;
}

Result<std::string> LoadEnvironmentKey(const std::optional<std::string>& path,
                                       const std::optional<std::string>& value,
                                       std::string_view value_origin) {
  std::string key;
  if (path) {
    UniqueFd fd(open(path->c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (!fd) return SysError("environment key file '" + *path + "'");
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) return SysError("fstat '" + *path + "'");
    if (!S_ISREG(st.st_mode)) {
      return Bad("environment key file '" + *path + "' is not a regular file");
    }
    if ((st.st_mode & 077) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
      return Bad("environment key file '" + *path + "' has mode " + mode +
                 ": it must not be readable or writable by group or others (chmod 600 '" + *path +
                 "')");
    }
    if (st.st_uid != geteuid() && st.st_uid != 0) {
      return Bad("environment key file '" + *path + "' belongs to uid " +
                 std::to_string(st.st_uid) + ", not to this user or root");
    }
    if (st.st_size > static_cast<off_t>(kMaxKeyBytes)) {
      return Bad("environment key file '" + *path + "' is larger than 4 KiB: not a key");
    }
    key.resize(kMaxKeyBytes);
    ssize_t n = read(fd.get(), key.data(), key.size());
    if (n < 0) return SysError("read '" + *path + "'");
    key.resize(static_cast<size_t>(n));
  } else if (value) {
    key = *value;
  }
  // Trim surrounding whitespace (a trailing newline from `echo key > file`).
  while (!key.empty() &&
         (key.back() == '\n' || key.back() == '\r' || key.back() == ' ' || key.back() == '\t')) {
    key.pop_back();
  }
  size_t start = key.find_first_not_of(" \t\r\n");
  key.erase(0, start == std::string::npos ? key.size() : start);
  std::string_view origin = path ? std::string_view("the environment key file") : value_origin;
  if (key.empty()) return Bad(std::string(origin) + " is empty");
  for (char c : key) {
    auto ch = static_cast<unsigned char>(c);
    if (ch <= 0x20 || ch >= 0x7f) {
      return Bad(std::string(origin) + " holds a control, space or non-ASCII character: not a key");
    }
  }
  return key;
}

void BlankEnvironmentKeyArg(const PollerConfig& config, int argc, char** argv) {
  if (!config.environment_key_at || argc < 1) return;
  const size_t index = config.environment_key_at->index + 1;  // past argv[0]
  if (index >= static_cast<size_t>(argc) || argv[index] == nullptr) return;
  char* arg = argv[index];
  const size_t len = std::strlen(arg);
  for (size_t i = config.environment_key_at->offset; i < len; ++i) arg[i] = 'x';
}

std::string HelpText() {
  return R"(Usage: srt-poller [OPTIONS]

Claims Claude Managed Agents work items from a self-hosted environment's queue and serves every
session in its own srt sandbox (bubblewrap, seccomp, the allowlist proxy, cgroup limits).
The environment key stays in srt-poller: it never enters a sandbox.

Options (flag > environment variable > --config file > default):
  --environment-id ID        (ANTHROPIC_ENVIRONMENT_ID) required
  --environment-key-file F   the environment key, a file of mode 0600 (an absolute path);
                             else the variable ANTHROPIC_ENVIRONMENT_KEY, which srt-poller
                             removes from its environment at start
  --environment-key KEY      (ant's flag) works, with a warning: every user of the host can
                             read a command line; srt-poller blanks it in its own at start
  --base-url URL             (ANTHROPIC_BASE_URL) default https://api.anthropic.com
  --worker-id ID             (ANTHROPIC_WORKER_ID) default: the one kept in
                             DIR/.worker-id (--sessions-dir), made as hostname-<16 hex> by
                             the first run
  --sessions-dir DIR         where each session's /workspace lives, as DIR/<session id>
                             (default /var/lib/srt-poller/sessions)
  --concurrency N            sessions served at once (default 1)
  --policy FILE              srt settings for session sandboxes (default: the built-in
                             policies/poller-session.json); re-read on SIGHUP
  --max-idle DURATION        end a session this long after the agent's end_turn (default 60s;
                             0 = never); Go syntax: 90s, 1m30s, 500ms
  --memory-sync-interval DURATION
                             write what the agent changed in its memory stores back this often
                             while a session runs (default 15s, at least 5s; 0 = only when the
                             item ends, as it always is too)
  --on-work SCRIPT           run SCRIPT in the session's sandbox for every item instead of the
                             built-in runner (the `ant beta:worker poll --on-work` contract:
                             work JSON with `secret` on stdin, ANTHROPIC_WORK_ID,
                             ANTHROPIC_SESSION_ID, ANTHROPIC_ENVIRONMENT_ID, ANTHROPIC_BASE_URL);
                             `--on-work in-process` is the built-in runner, as in ant
  --script-gets-environment-key
                             --on-work only: also set ANTHROPIC_ENVIRONMENT_KEY for the script
  --script-env NAME[,NAME...]
                             --on-work only: pass these variables of srt-poller's environment
                             to the script (it gets no others; repeatable)
  --no-lease-handoff         --on-work only: do not take the item's lease before the script
                             and pass it on in ANTHROPIC_WORK_LAST_HEARTBEAT; the script's
                             worker starts the lease (SDKs from before the hand-off)
  --log-format text|json     (default text) logs go to stderr
  --memory SIZE              per-session memory limit (default 3G)
  --cpus N                   per-session CPU limit (default 2)
  --pids N                   per-session process limit (default 512)
  --disk SIZE                per-session workspace size, a filesystem of its own reserved in
                             full while the session runs (default 10G; 0 turns it off)
  --no-limits                run sessions without these limits (otherwise srt-poller refuses
                             to start where they cannot be enforced)
  --workspace-cleanup keep|terminated
                             keep workspaces (default), or remove one when its session is
                             terminated or deleted
  --workdir /workspace       (ant's flag) accepted: every session's tools work in its own
                             /workspace; any other DIR is refused (see --sessions-dir)
  --unrestricted-paths       (ant's flag) refused: the file tools stay in /workspace; give
                             sessions more of the host with --policy
  --ca-file FILE             extra CA certificates for HTTPS
  --toolbox PATH             srt-toolbox (default: next to srt-poller)
  --config FILE              (an absolute path) a JSON object whose keys are the long flag
                             names, e.g.
                             {"environment-id": "env_1", "concurrency": 4, "max-idle": "90s"}
  --check                    validate the configuration, the key file's permissions and that a
                             session sandbox starts here, then exit (0 = ready)
  -h, --help                 this text
  -V, --version              srt-poller's version

Signals: SIGTERM/SIGINT cancel the running tools, post their error results, stop the work items
and exit within 30 s. SIGHUP re-reads --policy for new sessions (running sessions get its network
lists at once).
)";
}

}  // namespace srt::poller
