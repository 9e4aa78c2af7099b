// SPDX-License-Identifier: Apache-2.0
// launch/plan_writer: encodes the plans srt hands to srt-init (format in init_protocol/wire.h).
// Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "init_protocol/wire.h"
#include "policy/policy.h"

namespace srt::launch {

struct InitPlanSpec {
  int stderr_fd = -1;
  std::vector<int> keep_fds;
  std::vector<std::string> argv;
  // RLIMIT_NOFILE (soft, hard) for the command, when srt changed its own.
  std::optional<std::pair<uint64_t, uint64_t>> nofile;
  uint32_t terminal = 0;  // wire::kTagTerminal: the standard descriptors on the sandbox's terminal
  struct Reopen {
    int fd = -1;
    int flags = 0;     // O_ACCMODE, O_APPEND, O_NONBLOCK
    std::string path;  // a device of the sandbox's /dev
  };
  std::vector<Reopen> reopens;  // wire::kTagReopen
  bool serve = false;           // wire::kTagServe: a warm sandbox (argv empty)
  // wire::kTagCwd: the command's working directory, absolute, in the sandbox (a plain run's
  // only; each command of a warm sandbox brings its own).
  std::string cwd;
};

std::string EncodeInitPlan(const InitPlanSpec& spec);

// One command of a warm sandbox (init_protocol/exec_plan.h).
struct ExecPlanSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value"
  std::string cwd;               // absolute, in the sandbox
  uint32_t terminal = 0;
  std::vector<InitPlanSpec::Reopen> reopens;  // descriptors 0-2 only
};

std::string EncodeExecPlan(const ExecPlanSpec& spec);

// The command's private TMPDIR, which srt-agent makes and mounts a tmpfs for.
struct PrivateTmpdir {
  std::string path;  // "" = none
  // false: srt-agent makes `path` on the host, mounts the tmpfs on it and removes it afterwards
  // (wire::kTagTmpdir). true: the tmpfs goes on `path`'s parent, a directory kept for the user's
  // next sandboxes, and `path` is made inside it (wire::kTagTmpdirIn): nothing on the host's
  // disk is made or removed per sandbox.
  bool in_kept_parent = false;
};

// The agent's write guard (init_protocol/wire.h GuardOp); no calls: no guard.
struct GuardPlan {
  std::vector<wire::GuardCall> calls;
  std::vector<std::string> roots;          // sandbox paths where git's rules hold
  std::vector<std::string> private_roots;  // sandbox paths that never reach the host
  uint32_t flags = 0;                      // wire::GuardFlags
};

// `sockets`: what srt-agent creates inside the sandbox's network namespace for srt's proxy.
// `covers`: the denied files srt-agent puts /dev/null over (before the protections, which then
// see the covers as bwrap's binds were seen before). `masks`: the masked files bwrap binds, which
// srt-agent watches. `symlinked`: how the settings spell those of them they name through
// symlinks (each follows its cover or mask as a wire::kTagSpelled record). `ptys` (a warm
// sandbox): the most ptys of the commands' devpts instance (wire::kTagPtys), 0 for none.
// `shows`, `seals`: the host entries srt-agent mounts in bwrap's place, and the synthetic
// directories it then makes read-only (wire::kTagShow, kTagSeal; bwrap::AgentShows).
std::string EncodeAgentPlan(wire::ProcMode proc, const PrivateTmpdir& tmpdir,
                            const std::vector<policy::Protection>& protections,
                            const std::vector<wire::NetSocket>& sockets = {},
                            const GuardPlan& guard = {},
                            const std::vector<std::string>& covers = {},
                            const std::vector<std::string>& masks = {},
                            const std::vector<policy::SymlinkedFile>& symlinked = {},
                            uint32_t ptys = 0, const std::vector<std::string>& shows = {},
                            const std::vector<std::string>& seals = {});

}  // namespace srt::launch
