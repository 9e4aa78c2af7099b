// SPDX-License-Identifier: Apache-2.0
// sandbox_plan: what Sandbox::Start decides, as a pure function of the caller's options, the
// resolved policy and the host facts it gathered first (home, working directory, effective
// uid, environment, a random name, the TMPDIRs' kept parent, RLIMIT_NOFILE, srt's proxy variables,
// the bwrap and srt-init it found). Start gathers the facts in one place (GatherHostFacts in
// sandbox.cc), plans, then carries the plan out; tests give facts of their own and check the plan
// (tests/unit/sandbox).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "launch/plan_writer.h"
#include "policy/policy.h"
#include "seccomp/filter.h"
#include "srt/sandbox.h"

namespace srt::facade {

// An executable srt runs on the host (bwrap, srt-init), as found and as stat(2) saw it.
struct ExecutableFact {
  std::string path;         // as found or configured
  std::string real;         // its realpath, or `path` when that failed
  int stat_errno = 0;       // stat's errno on `real`; 0: it succeeded
  bool executable = false;  // a regular file srt may execute (access X_OK)
  bool group_or_other_writable = false;
};

struct HostFacts {
  std::string home;  // the caller's home: options.home, $HOME or the passwd entry
  std::string cwd;   // options.cwd or the working directory
  uid_t euid = 0;    // who srt runs as
  std::vector<std::string> environment;  // srt's own (used when options.env is unset)
  std::string random_name;               // 16 random hex digits, for the private TMPDIR
  // Something other than a directory of euid's with mode 0700 is at
  // KeptTmpdirParent(policy.tmpdir_parent, euid) on the host (no symlink followed). Nothing there
  // is fine: srt-agent makes it.
  bool kept_tmpdir_parent_unusable = false;
  // RLIMIT_NOFILE as srt found it (soft, hard); unset when getrlimit failed.
  std::optional<std::pair<uint64_t, uint64_t>> nofile;
  // srt's own HTTP(S)_PROXY / NO_PROXY, the parents when the settings name none.
  policy::ProxyVariables proxy_variables;
  ExecutableFact bwrap;
  ExecutableFact init;
};

// The soft RLIMIT_NOFILE srt wants while its proxy runs: it holds two descriptors per
// connection, and 1024 (the usual soft limit) would cap it near 500.
inline constexpr uint64_t kProxyNofile = 65536;

// The directory below `tmpdir_parent` (the host's /tmp) that holds the private TMPDIRs of `euid`'s
// sandboxes: each mounts a tmpfs of its own on it and makes its TMPDIR inside, so that the
// directory is made once (mode 0700) and kept, and no sandbox makes or removes anything on the
// host's disk (on ext4 with `discard`, a removed directory cost 0.7-3 ms on srt's exit path).
std::string KeptTmpdirParent(std::string_view tmpdir_parent, uid_t euid);

struct SandboxPlan {
  seccomp::FilterOptions filter;
  // The command's environment before the network's variables are added.
  std::vector<std::string> environment;
  launch::PrivateTmpdir tmpdir;  // the command's private TMPDIR (path "" = none)
  launch::GuardPlan guard;       // no calls: no write guard (filesystem.disabled)
  // What the sandbox may modify (write roots, writable bind sources): no executable srt runs on
  // the host may lie below one.
  std::vector<std::string> writable;
  // Raise srt's soft RLIMIT_NOFILE to this; the command then gets `command_nofile` back.
  std::optional<uint64_t> raise_nofile;
  std::optional<std::pair<uint64_t, uint64_t>> command_nofile;
  std::vector<std::string> notes;     // for the debug stream
  std::vector<std::string> warnings;  // for the caller (SandboxOptions::warn)
};

// The path to execute if `fact` is an executable srt may run on the host: a regular executable
// file that no other user may write and that lies outside every `writable` root (the sandbox
// could replace it and have it run on the host next time). Errors name `what` ("bwrap").
[[nodiscard]] Result<std::string> VetExecutable(const ExecutableFact& fact, std::string_view what,
                                                const std::vector<std::string>& writable);

// allowNestedUserNamespaces for a root caller is refused: bwrap maps root to the host's uid 0,
// and a user namespace of the command's own may then mount filesystems whose files the host's
// root owns and the kernel judges by mode alone (a cgroup hierarchy: the sandbox's own limits
// and the host's top cpuset and devices cgroups become writable; an overlay whose copy-up
// keeps setuid bits and file capabilities on the host). No seccomp rule can tell those mounts
// apart (the file system type is behind a pointer).
[[nodiscard]] Result<void> VetNesting(const policy::Policy& policy, const HostFacts& facts);

[[nodiscard]] SandboxPlan PlanSandbox(const SandboxOptions& options, const HostFacts& facts,
                                      const policy::Policy& policy);

// git.safeDirectories as the GIT_CONFIG_COUNT / GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n>
// variables git reads: safe.directory=<dir> and <dir>/* (git 2.46+: every repository below) per
// directory, trailing slashes dropped and duplicates skipped, or one safe.directory=* for more than
// kMaxListedSafeDirectories. The numbering continues a GIT_CONFIG_COUNT already in `environment`
// (a value that is not a count is replaced); GIT_CONFIG_COUNT=0 there is the user's opt-out and
// nothing is added.
inline constexpr size_t kMaxListedSafeDirectories = 8;
void AddGitSafeDirectories(std::vector<std::string>& environment,
                           const std::vector<std::string>& directories);
// A warm sandbox's command's environment: `given` (its caller's), with every variable srt set,
// changed or removed when it planned the sandbox's (`base` -> `planned`: the proxy's, TMPDIR,
// masked credentials) and every name in `pinned` (credentials.envVars) as `planned` has it
// (or absent when it has none).
[[nodiscard]] std::vector<std::string> ExecEnvironment(const std::vector<std::string>& given,
                                                       const std::vector<std::string>& base,
                                                       const std::vector<std::string>& planned,
                                                       const std::vector<std::string>& pinned);

// Sets NAME=value in `environment`, replacing every earlier NAME=.
void SetEnv(std::vector<std::string>& environment, const std::string& name,
            const std::string& value);

}  // namespace srt::facade
