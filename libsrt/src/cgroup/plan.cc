// SPDX-License-Identifier: Apache-2.0
// Cgroup planning: /proc/self/cgroup + mountinfo -> the directories and files of a sandbox's
// cgroups.
#include "cgroup/plan.h"

#include <algorithm>
#include <map>

#include "base/path.h"
#include "base/strings.h"

namespace srt::cgroup {

namespace {

using strings::Quote;

// CFS period: 100 ms, the kernel's default; a quota of cpu_millis * 100 us per period.
constexpr uint64_t kCpuPeriodUs = 100000;
constexpr uint32_t kMinCpuMillis = 10;  // the kernel refuses quotas below 1 ms

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::string_view line : Split(text, '\n')) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// mountinfo escapes space, tab, newline and backslash as \ooo (octal).
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() &&
        std::all_of(s.begin() + static_cast<long>(i) + 1, s.begin() + static_cast<long>(i) + 4,
                    [](char c) { return c >= '0' && c <= '7'; })) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string Join(const std::vector<std::string>& words, std::string_view sep) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += sep;
    out += w;
  }
  return out;
}

bool Contains(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  for (std::string_view w : Split(s, ' ')) {
    while (!w.empty() && (w.back() == '\n' || w.back() == '\t')) w.remove_suffix(1);
    if (!w.empty()) out.emplace_back(w);
  }
  return out;
}

// The directory of a cgroup `path` (from /proc/self/cgroup) under a mount of the hierarchy. The
// path is relative to the cgroup namespace's root; a mount whose root is a sub-cgroup (a
// container without a cgroup namespace) shows the part below that root.
std::string DirOf(const CgroupMount& m, const std::string& cgroup_path) {
  std::string rel = cgroup_path;
  if (m.root != "/" && path::IsWithin(cgroup_path, m.root)) rel = cgroup_path.substr(m.root.size());
  rel = path::Normalize(rel.empty() ? "/" : rel);
  return rel == "/" ? m.mount_point : m.mount_point + rel;
}

const char* LimitName(std::string_view controller) {
  if (controller == "memory") return "memory";
  if (controller == "cpu") return "CPU";
  return "process-count";
}

}  // namespace

Result<std::vector<ProcCgroupEntry>> ParseProcCgroup(std::string_view text) {
  std::vector<ProcCgroupEntry> out;
  for (std::string_view line : Lines(text)) {
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) {
      return MakeError(Errc::kProtocol, "/proc/self/cgroup: malformed line " + Quote(line));
    }
    ProcCgroupEntry e;
    std::string_view id = line.substr(0, first);
    if (id.empty() ||
        !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return MakeError(Errc::kProtocol, "/proc/self/cgroup: malformed line " + Quote(line));
    }
    e.id = std::stoi(std::string(id));
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    if (!controllers.empty()) {
      for (std::string_view c : Split(controllers, ',')) e.controllers.emplace_back(c);
    }
    e.path = std::string(line.substr(second + 1));
    if (!path::IsAbsolute(e.path)) {
      return MakeError(Errc::kProtocol, "/proc/self/cgroup: malformed line " + Quote(line));
    }
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<CgroupMount>> ParseMountinfo(std::string_view text) {
  std::vector<CgroupMount> out;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string_view> f = Split(line, ' ');
    auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 10 || dash == f.end() || dash - f.begin() < 6 || f.end() - dash < 4) {
      return MakeError(Errc::kProtocol, "/proc/self/mountinfo: malformed line " + Quote(line));
    }
    std::string_view fstype = *(dash + 1);
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    CgroupMount m;
    m.v2 = fstype == "cgroup2";
    m.root = Unescape(f[3]);
    m.mount_point = Unescape(f[4]);
    if (!m.v2) {
      for (std::string_view opt : Split(*(dash + 3), ',')) {
        if (opt != "rw" && opt != "ro" && opt.find('=') == std::string_view::npos &&
            opt != "relatime" && opt != "noprefix" && opt != "clone_children" && opt != "xattr" &&
            opt != "cpuset_v2_mode" && opt != "none") {
          m.controllers.emplace_back(opt);
        }
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

// The controllers `limits` need, in plan order.
std::vector<std::string> Needed(const Limits& limits) {
  std::vector<std::string> needed;
  if (limits.memory_bytes) needed.emplace_back("memory");
  if (limits.cpu_millis) needed.emplace_back("cpu");
  if (limits.pids) needed.emplace_back("pids");
  return needed;
}

constexpr char kSupervisor[] = "supervisor";

// The host's cgroups as planning sees them: the entries of /proc/self/cgroup, the cgroup mounts,
// the cgroup2 mount (if any) and this process's entry in it. The pointers point into the vectors'
// own storage, which moving the struct keeps.
struct ParsedHost {
  std::vector<ProcCgroupEntry> entries;
  std::vector<CgroupMount> mounts;
  const CgroupMount* v2 = nullptr;
  const ProcCgroupEntry* own_v2 = nullptr;
};

Result<ParsedHost> ParseHost(const HostCgroups& host) {
  ParsedHost out;
  SRT_ASSIGN_OR_RETURN(out.entries, ParseProcCgroup(host.proc_self_cgroup));
  SRT_ASSIGN_OR_RETURN(out.mounts, ParseMountinfo(host.mountinfo));
  for (const CgroupMount& m : out.mounts) {
    if (m.v2) {
      out.v2 = &m;
      break;
    }
  }
  for (const ProcCgroupEntry& e : out.entries) {
    if (e.id == 0 && e.controllers.empty()) out.own_v2 = &e;
  }
  // Moved, never copied: a copy's pointers would name the original's elements.
  return Result<ParsedHost>(std::move(out));
}

}  // namespace

Result<std::optional<Delegation>> PlanDelegation(const HostCgroups& host, const Limits& limits) {
  const std::vector<std::string> needed = Needed(limits);
  if (needed.empty()) return std::optional<Delegation>();
  SRT_ASSIGN_OR_RETURN(const ParsedHost parsed, ParseHost(host));
  const CgroupMount* v2 = parsed.v2;
  const ProcCgroupEntry* own_v2 = parsed.own_v2;
  auto read = [&](const std::string& p) -> std::optional<std::string> {
    return host.read_file ? host.read_file(p) : std::nullopt;
  };
  if (!v2 || !own_v2) return std::optional<Delegation>();
  std::vector<std::string> on_v2;
  if (auto c = read(v2->mount_point + "/cgroup.controllers")) {
    const std::vector<std::string> offers = Words(*c);
    for (const std::string& n : needed) {
      if (Contains(offers, n)) on_v2.push_back(n);
    }
  }
  if (on_v2.empty()) return std::optional<Delegation>();

  std::string own = DirOf(*v2, own_v2->path);
  // A second call: the caller is in the supervisor leaf already.
  const std::string suffix = std::string("/") + kSupervisor;
  const bool moved = own.size() > suffix.size() && own.ends_with(suffix);
  const std::string parent = moved ? own.substr(0, own.size() - suffix.size()) : own;
  if (parent == v2->mount_point) return std::optional<Delegation>();
  auto marked = [&](const char* name) {
    if (!host.read_xattr) return false;
    std::optional<std::string> v = host.read_xattr(parent, name);
    return v && (*v == "1" || *v == "1\n");
  };
  if (!marked("trusted.delegate") && !marked("user.delegate")) return std::optional<Delegation>();
  std::vector<std::string> offered, enabled;
  if (auto c = read(parent + "/cgroup.controllers")) offered = Words(*c);
  if (auto c = read(parent + "/cgroup.subtree_control")) enabled = Words(*c);
  Delegation d;
  d.parent = parent;
  for (const std::string& c : on_v2) {
    if (!Contains(offered, c)) return std::optional<Delegation>();
    if (!Contains(enabled, c)) d.writes.push_back({parent + "/cgroup.subtree_control", "+" + c});
  }
  if (!moved) {
    d.supervisor = parent + suffix;
    d.supervisor_procs = d.supervisor + "/cgroup.procs";
  }
  return std::optional<Delegation>(std::move(d));
}

Result<Plan> PlanCgroups(const HostCgroups& host, const Limits& limits, std::string_view name) {
  Plan plan;
  const std::vector<std::string> needed = Needed(limits);
  if (limits.inner_memory_bytes && !(limits.inner_memory_bytes < limits.memory_bytes)) {
    return MakeError(Errc::kInvalidArgument,
                     "limits.inner_memory_bytes " + std::to_string(limits.inner_memory_bytes) +
                         " must be below limits.memory_bytes " +
                         std::to_string(limits.memory_bytes) + " (0 sets no memory limit)");
  }
  if (limits.inner_pids && !(limits.inner_pids < limits.pids)) {
    return MakeError(Errc::kInvalidArgument, "limits.inner_pids " +
                                                 std::to_string(limits.inner_pids) +
                                                 " must be below limits.pids " +
                                                 std::to_string(limits.pids) + " (0 sets none)");
  }
  if (needed.empty()) return plan;
  if (limits.cpu_millis && limits.cpu_millis < kMinCpuMillis) {
    return MakeError(Errc::kInvalidArgument,
                     "limits.cpu_millis " + std::to_string(limits.cpu_millis) +
                         " is below the smallest CPU quota the kernel takes (" +
                         std::to_string(kMinCpuMillis) + ", 1% of a CPU)");
  }
  SRT_ASSIGN_OR_RETURN(const ParsedHost parsed, ParseHost(host));
  const std::vector<ProcCgroupEntry>& entries = parsed.entries;
  const std::vector<CgroupMount>& mounts = parsed.mounts;
  const CgroupMount* v2 = parsed.v2;
  const ProcCgroupEntry* own_v2 = parsed.own_v2;
  auto read = [&](const std::string& p) -> std::optional<std::string> {
    return host.read_file ? host.read_file(p) : std::nullopt;
  };
  std::vector<std::string> v2_offers;
  if (v2 && own_v2) {
    if (auto c = read(v2->mount_point + "/cgroup.controllers")) v2_offers = Words(*c);
  }

  std::vector<std::string> on_v2;
  std::map<size_t, std::vector<std::string>> on_v1;  // by index of the hierarchy's mount
  std::map<size_t, const ProcCgroupEntry*> v1_entry;
  for (const std::string& c : needed) {
    if (Contains(v2_offers, c)) {
      on_v2.push_back(c);
      continue;
    }
    const CgroupMount* mount = nullptr;
    size_t index = 0;
    for (size_t i = 0; i < mounts.size(); ++i) {
      if (!mounts[i].v2 && Contains(mounts[i].controllers, c)) {
        mount = &mounts[i];
        index = i;
        break;
      }
    }
    const ProcCgroupEntry* entry = nullptr;
    for (const ProcCgroupEntry& e : entries) {
      if (e.id != 0 && Contains(e.controllers, c)) entry = &e;
    }
    if (!mount || !entry) {
      std::string offered =
          v2 ? "cgroup v2 at " + Quote(v2->mount_point) + " offers " +
                   (v2_offers.empty() ? std::string("no controllers") : Quote(Join(v2_offers, " ")))
             : std::string("no cgroup v2 hierarchy is mounted");
      return MakeError(Errc::kUnsupported,
                       std::string("cannot enforce the ") + LimitName(c) +
                           " limit: no cgroup hierarchy offers the '" + c + "' controller (" +
                           offered + ", and no cgroup v1 '" + c + "' hierarchy is " +
                           (mount ? "joined by this process" : "mounted") + ")");
    }
    on_v1[index].push_back(c);
    v1_entry[index] = entry;
  }

  // The limit files of one cgroup; cpu is the sandbox's alone.
  auto write_limits = [&](const std::string& dir, const std::vector<std::string>& controllers,
                          bool is_v2, uint64_t memory_bytes, uint32_t pids) {
    for (const std::string& c : controllers) {
      if (c == "memory") {
        const std::string bytes = std::to_string(memory_bytes);
        if (is_v2) {
          plan.writes.push_back({dir + "/memory.max", bytes});
          plan.writes.push_back({dir + "/memory.swap.max", "0", /*if_exists=*/true});
        } else {
          plan.writes.push_back({dir + "/memory.limit_in_bytes", bytes});
          // memory+swap: no swap on top of the memory limit (needs swap accounting).
          plan.writes.push_back({dir + "/memory.memsw.limit_in_bytes", bytes, true});
        }
      } else if (c == "cpu") {
        const std::string quota = std::to_string(uint64_t{limits.cpu_millis} * kCpuPeriodUs / 1000);
        if (is_v2) {
          plan.writes.push_back({dir + "/cpu.max", quota + " " + std::to_string(kCpuPeriodUs)});
        } else {
          plan.writes.push_back({dir + "/cpu.cfs_period_us", std::to_string(kCpuPeriodUs)});
          plan.writes.push_back({dir + "/cpu.cfs_quota_us", quota});
        }
      } else if (c == "pids") {
        plan.writes.push_back({dir + "/pids.max", std::to_string(pids)});
      }
    }
  };
  // The leaf (made by the caller), its limits, and its inner cgroup where this hierarchy has one
  // of the inner limits' controllers.
  auto add_limits = [&](const std::string& leaf, const std::vector<std::string>& controllers,
                        bool is_v2) {
    write_limits(leaf, controllers, is_v2, limits.memory_bytes, limits.pids);
    if (Contains(controllers, "memory")) {
      plan.oom_events.push_back(leaf + (is_v2 ? "/memory.events" : "/memory.oom_control"));
    }
    plan.leaves.push_back(leaf);
    std::vector<std::string> inner;
    for (const std::string& c : controllers) {
      if ((c == "memory" && limits.inner_memory_bytes) || (c == "pids" && limits.inner_pids)) {
        inner.push_back(c);
      }
    }
    // A v1 leaf is joined through its "tasks" file, which moves the writing thread alone. The
    // one writer is srt's spawned child, a process of one thread that writes "0" between clone
    // and exec, so that moves all of it, and without what "cgroup.procs" costs: a write there
    // takes the kernel's global lock on every thread group's cgroups, and when no such write
    // ran in the last few milliseconds that waits for an RCU grace period (5-20 ms on a 2-vCPU
    // VM, in front of bwrap's start). v2 has no such file for a domain cgroup
    // ("cgroup.threads" refuses it). The inner cgroup keeps "cgroup.procs": its writers are the
    // command's, and the command moves whole processes.
    std::string procs = leaf + (is_v2 ? "/cgroup.procs" : "/tasks");
    if (!inner.empty()) {
      if (is_v2) {
        // Handing the controllers to children first (the writes run in order), and the
        // sandbox's processes to a child of their own: v2 keeps processes in leaves only.
        for (const std::string& c : inner) {
          plan.writes.push_back({leaf + "/cgroup.subtree_control", "+" + c});
        }
        const std::string own = leaf + "/sandbox";
        plan.mkdirs.push_back(own);
        plan.leaves.push_back(own);
        procs = own + "/cgroup.procs";
      }
      const std::string dir = leaf + "/inner";
      plan.mkdirs.push_back(dir);
      plan.leaves.push_back(dir);
      write_limits(dir, inner, is_v2, limits.inner_memory_bytes, limits.inner_pids);
      plan.inner_procs_files.push_back(dir + "/cgroup.procs");
      if (!is_v2 && Contains(inner, "memory"))
        plan.oom_events.push_back(dir + "/memory.oom_control");
    }
    plan.procs_files.push_back(procs);
    plan.notes.push_back(std::string("cgroup ") + (is_v2 ? "v2 " : "v1 ") + Quote(leaf) + ": " +
                         Join(controllers, ", ") +
                         (inner.empty() ? "" : "; inner cgroup: " + Join(inner, ", ")));
  };

  if (!on_v2.empty()) {
    // The caller's own cgroup, or the delegated one it named.
    const std::string own =
        limits.v2_parent.empty() ? DirOf(*v2, own_v2->path) : path::Normalize(limits.v2_parent);
    if (!limits.v2_parent.empty() &&
        (own == v2->mount_point || !path::IsWithin(own, v2->mount_point))) {
      return MakeError(Errc::kInvalidArgument, "limits: the delegated cgroup " + Quote(own) +
                                                   " is not below the cgroup2 mount " +
                                                   Quote(v2->mount_point));
    }
    std::vector<std::string> own_enabled;
    if (auto s = read(own + "/cgroup.subtree_control")) own_enabled = Words(*s);
    const bool delegated = own != v2->mount_point &&
                           std::all_of(on_v2.begin(), on_v2.end(),
                                       [&](const auto& c) { return Contains(own_enabled, c); });
    if (!limits.v2_parent.empty() && !delegated) {
      return MakeError(Errc::kUnsupported, "limits: the delegated cgroup " + Quote(own) +
                                               " does not hand the controllers " +
                                               Quote(Join(on_v2, " ")) +
                                               " to its children (cgroup.subtree_control)");
    }
    std::string parent = v2->mount_point;
    if (delegated) {
      parent = own;
    } else {
      // The root may hold processes and still hand controllers to its children.
      std::vector<std::string> root_enabled;
      if (auto s = read(v2->mount_point + "/cgroup.subtree_control")) root_enabled = Words(*s);
      for (const std::string& c : on_v2) {
        if (!Contains(root_enabled, c)) {
          plan.writes.push_back({v2->mount_point + "/cgroup.subtree_control", "+" + c});
        }
      }
    }
    const std::string srt = parent + "/srt";
    const std::string leaf = srt + "/" + std::string(name);
    plan.mkdirs.push_back(srt);
    plan.mkdirs.push_back(leaf);
    for (const std::string& c : on_v2) {
      plan.writes.push_back({srt + "/cgroup.subtree_control", "+" + c});
    }
    add_limits(leaf, on_v2, true);
  }
  for (const auto& [index, controllers] : on_v1) {
    const std::string srt = DirOf(mounts[index], v1_entry[index]->path) + "/srt";
    const std::string leaf = srt + "/" + std::string(name);
    plan.mkdirs.push_back(srt);
    plan.mkdirs.push_back(leaf);
    add_limits(leaf, controllers, false);
  }
  return plan;
}

Result<std::vector<std::string>> LeafParents(const HostCgroups& host, const Limits& limits) {
  // The placement is PlanCgroups' alone: ask it for a leaf and take the leaf's parent.
  // Without inner limits: their cgroups are the leaves' children, not leaves of their own.
  Limits outer = limits;
  outer.inner_memory_bytes = 0;
  outer.inner_pids = 0;
  SRT_ASSIGN_OR_RETURN(Plan plan, PlanCgroups(host, outer, "leaf"));
  std::vector<std::string> parents;
  for (const std::string& leaf : plan.leaves) {
    parents.push_back(leaf.substr(0, leaf.rfind('/')));
  }
  return parents;
}

}  // namespace srt::cgroup
