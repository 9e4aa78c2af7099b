// SPDX-License-Identifier: Apache-2.0
// cgroup/cgroup: carries out a cgroup Plan - creates a sandbox's cgroups and writes its limits,
// holds the descriptors the spawned child joins them through, and after the sandbox
// ends reads the OOM kill count, kills what is left and removes the cgroups.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "cgroup/plan.h"
#include "srt/result.h"

namespace srt::cgroup {

// The host's view for planning: /proc/self/cgroup, /proc/self/mountinfo and real file reads.
[[nodiscard]] Result<HostCgroups> ReadHostCgroups();

// Carries out PlanDelegation(host, limits): moves the calling process (all its threads) into the
// supervisor leaf and enables the controllers for the delegated cgroup's children. Returns the
// delegated cgroup (Limits::v2_parent for every sandbox from now on), or nullopt when there is
// no delegation to take. Call it before the caller starts other processes: they would be left in
// the delegated cgroup, and v2 then refuses the controllers (EBUSY, returned as the error).
[[nodiscard]] Result<std::optional<std::string>> TakeDelegation(const HostCgroups& host,
                                                                const Limits& limits);

class Cgroups {
 public:
  // Creates the plan's cgroups and writes its limits; on failure nothing is left behind.
  // Errors name the file and suggest what is missing (root, delegation).
  [[nodiscard]] static Result<std::unique_ptr<Cgroups>> Create(Plan plan);
  ~Cgroups();  // Destroy() if not done yet
  Cgroups(const Cgroups&) = delete;
  Cgroups& operator=(const Cgroups&) = delete;

  // Write-only descriptors of every leaf's join file (Plan::procs_files; CLOEXEC): a child of
  // one thread writing "0" to each joins the sandbox's cgroups.
  std::vector<int> procs_fds() const;
  // The same for the inner cgroup (Plan::inner_procs_files), empty without one.
  std::vector<int> inner_procs_fds() const;
  const Plan& plan() const { return plan_; }
  // Moves `member`, a process that joined through procs_fds() and is not reaped yet (so its
  // pid names no other process), to the cgroup it is in: nothing changes, but the write waits
  // out the kernel's grace period that the inner cgroup's first join would otherwise wait out
  // later (see cgroup.cc). Blocks for that long: run it beside other work.
  [[nodiscard]] Result<void> Rejoin(pid_t member) const;

  // True if the OOM killer killed something in the sandbox's memory cgroup.
  bool OomKilled() const;
  // Kills every process left in the cgroups and removes them. Idempotent.
  [[nodiscard]] Result<void> Destroy();

 private:
  explicit Cgroups(Plan plan) : plan_(std::move(plan)) {}
  Plan plan_;
  std::vector<std::string> created_;  // leaves (and new parents are shared: never removed)
  std::vector<UniqueFd> procs_;
  std::vector<UniqueFd> inner_procs_;
  bool destroyed_ = false;
};

// Kills what is left in each cgroup directly below one of `parents` whose name starts with
// `prefix`, and removes it: the leaves of sandboxes whose owner died before it could (a
// SIGKILLed caller). Only the caller knows that no live sandbox of its own has that prefix.
// Returns the paths removed; a parent that does not exist is skipped. Errors name the first
// cgroup that could not be removed, after trying the others.
[[nodiscard]] Result<std::vector<std::string>> RemoveLeftovers(
    const std::vector<std::string>& parents, std::string_view prefix);

}  // namespace srt::cgroup
