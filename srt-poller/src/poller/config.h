// SPDX-License-Identifier: Apache-2.0
// srt-poller/poller/config: the command line, the environment and the optional config file ->
// PollerConfig. Pure: the caller passes the environment and a file reader, so every rule is
// unit-tested without touching the host. Precedence: flag > environment > config file > default.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"

namespace srt::poller {

enum class LogFormat { kText, kJson };

// What happens to <sessions>/<session_id> (the session's /workspace).
enum class WorkspaceCleanup {
  kKeep,        // never removed by srt-poller (the operator's job); the default, as the quickstart
  kTerminated,  // removed once the session is terminated or deleted (not after an idle exit:
                // the session's next message brings a new work item that needs the files)
};

struct SessionLimits {
  uint64_t memory_bytes = uint64_t{3} << 30;  // 3 GiB
  uint32_t cpu_millis = 2000;                 // 2 CPUs
  uint32_t pids = 512;
  // The workspace's filesystem size (poller/workspace_disk.h); 0: a plain directory, no limit.
  uint64_t disk_bytes = uint64_t{10} << 30;  // 10 GiB
  // Not a flag: where the sessions' cgroups go on cgroup v2 when systemd delegated the unit's
  // cgroup (TakeSessionCgroupDelegation); empty otherwise.
  std::string cgroup_parent;
};
inline constexpr uint64_t kMinDiskBytes = uint64_t{32} << 20;

struct PollerConfig {
  enum class Action { kRun, kCheck, kHelp, kVersion };
  Action action = Action::kRun;

  std::string environment_id;
  // The environment key itself is not part of the configuration (LoadEnvironmentKey reads it)
  // unless it was given on the command line.
  std::optional<std::string> environment_key_file;
  bool environment_key_from_env = false;  // ANTHROPIC_ENVIRONMENT_KEY was set
  // --environment-key KEY (`ant`'s flag). It works, but every user of the host can read a
  // command line: srt-poller warns, and blanks it in its own (BlankEnvironmentKeyArg).
  std::optional<std::string> environment_key_arg;
  // Where that key is in the arguments: args[index] (args as given to ParseConfig), from byte
  // `offset` (past "--environment-key=", or 0 when it is an argument of its own).
  struct ArgPosition {
    size_t index = 0;
    size_t offset = 0;
  };
  std::optional<ArgPosition> environment_key_at;

  std::string base_url = "https://api.anthropic.com";
  // Default: the one kept in <sessions_dir>/.worker-id, made as hostname-<16 hex> by the first
  // run (poller/worker_id.h; filled by the caller).
  std::string worker_id;
  std::string sessions_dir = "/var/lib/srt-poller/sessions";
  int concurrency = 1;
  std::optional<std::string> policy_path;      // default: the built-in poller-session policy
  std::chrono::milliseconds max_idle{60'000};  // 0 = no idle timeout
  // Memory stores are written back this often while a session runs; 0 = only at its end.
  std::chrono::milliseconds memory_sync_interval{15'000};
  std::optional<std::string> on_work;  // external runner mode
  LogFormat log_format = LogFormat::kText;
  std::optional<SessionLimits> limits = SessionLimits{};  // nullopt: --no-limits
  WorkspaceCleanup workspace_cleanup = WorkspaceCleanup::kKeep;
  // --on-work only: also give the script ANTHROPIC_ENVIRONMENT_KEY (off: it gets the item's
  // secret only).
  bool script_gets_environment_key = false;
  // --on-work only: srt-poller sends the item's first heartbeat and hands the lease to the
  // script in ANTHROPIC_WORK_LAST_HEARTBEAT (off: --no-lease-handoff).
  bool lease_handoff = true;
  // --on-work only: the variables of srt-poller's environment the script gets (--script-env);
  // it gets no others.
  std::vector<std::string> script_env_names;
  std::optional<std::string> ca_file;       // extra CA bundle for HTTPS (tests, corporate CAs)
  std::optional<std::string> config_path;   // --config
  std::optional<std::string> toolbox_path;  // srt-toolbox; default: next to srt-poller
};

// Reads a file's contents: the config file. Returns an Error naming the file when it cannot.
using FileReader = std::function<Result<std::string>(const std::string& path)>;

// `args` excludes argv[0]; `env` is the process environment.
[[nodiscard]] Result<PollerConfig> ParseConfig(const std::vector<std::string_view>& args,
                                               const std::map<std::string, std::string>& env,
                                               const FileReader& read_file);

// The environment key: from `path` (refused unless a regular file, owned by this user or root,
// with no group or other permission bits) or, without a path, from `value` (which errors call
// `value_origin`). Side effects: reads the file.
[[nodiscard]] Result<std::string> LoadEnvironmentKey(
    const std::optional<std::string>& path, const std::optional<std::string>& value,
    std::string_view value_origin = "ANTHROPIC_ENVIRONMENT_KEY");

// Overwrites the key of --environment-key in `argv` (main's, `argc` entries; argv[1] is
// args[0] of ParseConfig) with 'x's, so that /proc/PID/cmdline, which is read from this memory,
// no longer shows it. `config` must come from parsing exactly these arguments. Nothing happens
// without an --environment-key.
void BlankEnvironmentKeyArg(const PollerConfig& config, int argc, char** argv);

std::string HelpText();

}  // namespace srt::poller
