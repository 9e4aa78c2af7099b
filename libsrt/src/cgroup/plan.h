// SPDX-License-Identifier: Apache-2.0
// cgroup/plan: which cgroups a sandbox with resource limits gets and what srt writes in them.
// Pure: the host's /proc/self/cgroup, /proc/self/mountinfo and cgroup files come in as text
// (HostCgroups); cgroup/cgroup.h carries the plan out.
//
// Placement, per controller: cgroup v2 when the unified hierarchy offers the controller, else
// the controller's v1 hierarchy. v2: <own cgroup>/srt/<name> when the caller's own cgroup already
// delegates the controllers (its cgroup.subtree_control lists them), else <v2 root>/srt/<name>
// (the root may hold processes and enable controllers for its children). v1: <own cgroup in that
// hierarchy>/srt/<name>, so the sandbox stays inside whatever limits the caller is under.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"

namespace srt::cgroup {

struct Limits {
  uint64_t memory_bytes = 0;
  uint32_t cpu_millis = 0;
  uint32_t pids = 0;
  // The inner cgroup's (0: none), each below the sandbox's own: see Plan::inner_procs_files.
  uint64_t inner_memory_bytes = 0;
  uint32_t inner_pids = 0;
  // v2: the sandbox's cgroups go below this cgroup directory (absolute, inside the cgroup2 mount)
  // instead of the placement described at the top: a cgroup delegated to the caller, which it
  // made ready with PlanDelegation. Empty: the placement at the top.
  std::string v2_parent;
};

// One line of /proc/<pid>/cgroup: "ID:CONTROLLERS:PATH" (cgroups(7)). v2 is ID 0 with no
// controllers; "name=systemd" style entries are kept as controllers.
struct ProcCgroupEntry {
  int id = 0;
  std::vector<std::string> controllers;
  std::string path;
  bool operator==(const ProcCgroupEntry&) const = default;
};
[[nodiscard]] Result<std::vector<ProcCgroupEntry>> ParseProcCgroup(std::string_view text);

// A cgroup or cgroup2 mount from /proc/self/mountinfo (proc(5)): its mount point, the root of the
// hierarchy it shows, and (v1) the controllers named in its super options.
struct CgroupMount {
  bool v2 = false;
  std::string mount_point;
  std::string root;
  std::vector<std::string> controllers;  // v1 only
  bool operator==(const CgroupMount&) const = default;
};
[[nodiscard]] Result<std::vector<CgroupMount>> ParseMountinfo(std::string_view text);

// What planning reads from the host.
struct HostCgroups {
  std::string proc_self_cgroup;
  std::string mountinfo;
  // The content of a cgroup file (cgroup.controllers, cgroup.subtree_control), or nullopt when it
  // cannot be read.
  std::function<std::optional<std::string>(const std::string& path)> read_file;
  // The value of an extended attribute of a cgroup directory, or nullopt (PlanDelegation asks
  // for systemd's delegation mark).
  std::function<std::optional<std::string>(const std::string& path, const std::string& name)>
      read_xattr;
};

struct FileWrite {
  std::string path;
  std::string value;
  bool if_exists = false;  // skipped when the file does not exist (swap accounting is optional)
  bool operator==(const FileWrite&) const = default;
};

struct Plan {
  // Created in order; the "srt" parents may exist already (shared by every sandbox), the leaves
  // must not.
  std::vector<std::string> mkdirs;
  // Written in order, after the mkdirs: controller delegation, then the limits.
  std::vector<FileWrite> writes;
  // The spawned child writes "0" to each before it executes bwrap, so bwrap and everything it
  // starts are inside from the first instruction: "<leaf>/tasks" in a v1 hierarchy (see
  // PlanCgroups), "cgroup.procs" in v2.
  std::vector<std::string> procs_files;
  // With inner limits: the cgroup.procs files of the inner cgroup, "<leaf>/inner" in each
  // hierarchy that has one of its controllers. The command moves the processes it does not
  // trust there, so that the inner limits take them, and it keeps the rest to go on. (v2 lets no
  // cgroup that hands controllers to children hold processes: the sandbox's own then go to
  // "<leaf>/sandbox".)
  std::vector<std::string> inner_procs_files;
  // The sandbox's own cgroups: emptied (SIGKILL) and removed after the sandbox ends, last
  // first (a cgroup is listed after its parent).
  std::vector<std::string> leaves;
  // Where the OOM kill counts are ("oom_kill N"): the leaf's memory.events (v2, which counts the
  // inner cgroup's kills too), or the leaf's and the inner cgroup's memory.oom_control (v1,
  // which counts each cgroup's own).
  std::vector<std::string> oom_events;
  // One line per cgroup, for --debug.
  std::vector<std::string> notes;
};

// A cgroup v2 subtree systemd delegated to the caller (a unit with Delegate=yes): systemd marks
// the unit's cgroup with the extended attribute trusted.delegate (or user.delegate) = "1" and
// enables the controllers in it, but v2 lets no cgroup below the root both hold processes and
// hand controllers to children. So the caller moves itself into a leaf of its own,
// <delegated>/supervisor, and then enables the controllers for the delegated cgroup's children;
// its sandboxes go to <delegated>/srt/<name> (Limits::v2_parent), inside the unit, where
// `systemctl status` shows them and stopping the unit reaches them.
struct Delegation {
  std::string parent;      // the delegated cgroup: Limits::v2_parent from now on
  std::string supervisor;  // <parent>/supervisor: made if missing, then the caller moves there
  std::string supervisor_procs;  // its cgroup.procs: the caller writes "0"
  std::vector<FileWrite>
      writes;  // after the move: "+controller" to <parent>/cgroup.subtree_control
  bool operator==(const Delegation&) const = default;
};
// The delegation to take for `limits`, or nullopt when there is none: no controller the limits
// need is on cgroup v2, the caller's v2 cgroup is the root, it carries no delegation mark, or it
// does not offer every v2 controller needed (cgroup.controllers). When the caller already sits
// in <delegated>/supervisor and the delegated cgroup hands the controllers on (a second call),
// the delegation has nothing left to do: only `parent` is set.
[[nodiscard]] Result<std::optional<Delegation>> PlanDelegation(const HostCgroups& host,
                                                               const Limits& limits);

// `name` is the leaf directory's name (letters, digits, '.', '_', '-'). Errors name the missing
// controller and what the host offers.
[[nodiscard]] Result<Plan> PlanCgroups(const HostCgroups& host, const Limits& limits,
                                       std::string_view name);

// The directories PlanCgroups puts the leaves for `limits` in (each leaf's parent, ".../srt"),
// in plan order: where a sweep looks for the leaves of sandboxes whose owner died. Empty when
// `limits` sets nothing.
[[nodiscard]] Result<std::vector<std::string>> LeafParents(const HostCgroups& host,
                                                           const Limits& limits);

}  // namespace srt::cgroup
