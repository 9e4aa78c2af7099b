// SPDX-License-Identifier: Apache-2.0
// Toolbox: the built-in toolset agent_toolset_20260401 (bash, read, write, edit, glob, grep)
// with the Go worker's semantics and texts (GO-SDK tools/agenttoolset/*.go).
//
// Usage: Create() once with the root the file tools are confined to; Run() one call at a time
// (the session contract is serial); destroying the Toolbox kills the shell. bash is not
// confined (it is one shell inside the sandbox); the file tools are, symlinks included.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"
#include "toolbox/bash_session.h"
#include "toolbox/confined_root.h"
#include "toolbox/interrupt.h"

namespace srt::poller::toolbox {

struct ToolResult {
  std::string text;
  bool is_error = false;
  bool interrupted = false;  // Interrupt::Check() stopped the tool; `text` is meaningless
  bool timed_out = false;    // the call's deadline stopped it; the caller words the message
};

struct ToolboxOptions {
  std::string root = "/workspace";
  // The shell's environment; unset = ShellEnvironment() at each (re)start.
  std::optional<std::vector<std::string>> shell_env;
  std::string shell = "/bin/bash";
  // Write-only cgroup.procs descriptors of the sandbox's inner cgroup (srt's
  // kInnerCgroupFdsVariable): the shell starts there, so that what it fills (the memory of /tmp
  // included) is its own to lose, and this process keeps room to answer.
  std::vector<int> work_cgroup_fds;
};

// The descriptors srt names in kInnerCgroupFdsVariable ("7" or "7,8"): at most 8, each a
// number from 3 to 1023, separated by ','. Pure; errors quote the value.
[[nodiscard]] Result<std::vector<int>> ParseDescriptorList(std::string_view text);

// Takes the inner cgroup's descriptors from kInnerCgroupFdsVariable, and removes the variable
// (the shell has no use for it): each must be open for writing only; each is made CLOEXEC.
// Unset: none (a sandbox without limits). Not thread-safe (it changes the environment): call it
// before any thread starts.
[[nodiscard]] Result<std::vector<int>> TakeWorkCgroupFds();

class Toolbox {
 public:
  // Opens the root. Fails when it is not a directory.
  [[nodiscard]] static Result<std::unique_ptr<Toolbox>> Create(ToolboxOptions options);
  ~Toolbox();

  // Runs one tool call. `input` is the tool_use input object; `tool_timeout` is the runner's
  // deadline for the whole call (on expiry: `tool "<name>" timed out after <d>`). Never throws.
  ToolResult Run(std::string_view tool, const nlohmann::json& input,
                 std::chrono::milliseconds tool_timeout, Interrupt& interrupt);

  // Kills the shell (if any); the next bash call starts a fresh one.
  // Starts the persistent shell now rather than at the first bash call (srt-toolbox does this
  // before it reports ready, so the first call does not pay for it). No-op if it runs.
  [[nodiscard]] Result<void> StartShell();
  void ResetShell() { shell_.reset(); }
  const ConfinedRoot& root() const { return root_; }
  // The shell's pid, or -1 when none is running (for tests).
  pid_t shell_pid() const { return shell_ ? shell_->pid() : -1; }

 private:
  Toolbox(ToolboxOptions options, ConfinedRoot root)
      : options_(std::move(options)), root_(std::move(root)) {}
  ToolResult Bash(const nlohmann::json& input, std::chrono::steady_clock::time_point deadline,
                  std::chrono::milliseconds tool_timeout, Interrupt& interrupt);

  // Kills every process in the shell's cgroup, when that is the work cgroup (not ours).
  void EndWorkProcesses();

  ToolboxOptions options_;
  ConfinedRoot root_;
  std::unique_ptr<BashSession> shell_;
  // /proc/PID/cgroup of the first shell, when it differs from ours: how the agent's processes
  // are told from ours (srt-init, this process) in the sandbox's /proc.
  std::string work_cgroup_;
};

}  // namespace srt::poller::toolbox
