// SPDX-License-Identifier: Apache-2.0
// Cgroup side effects: mkdir, limit writes, cgroup.procs descriptors, kill and rmdir.
#include "cgroup/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/path.h"
#include "base/strings.h"

namespace srt::cgroup {

namespace {

using strings::Quote;

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<void> WriteFile(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return SysError("open " + Quote(path));
  UniqueFd owned(fd);
  if (write(fd, value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
    return SysError("write " + Quote(value) + " to " + Quote(path));
  }
  return Ok();
}

std::optional<std::string> ReadXattr(const std::string& path, const std::string& name) {
  char value[64];
  const ssize_t n = getxattr(path.c_str(), name.c_str(), value, sizeof value);
  if (n < 0) return std::nullopt;
  return std::string(value, static_cast<size_t>(n));
}

std::string Hint(int err) {
  if (err == EACCES || err == EPERM || err == EROFS) {
    return " (creating cgroups needs root, or a delegated cgroup: run srt as root or under a "
           "service manager that delegates the controllers to it)";
  }
  return "";
}

std::vector<int> PidsIn(const std::string& dir) {
  std::vector<int> pids;
  std::optional<std::string> text = ReadFile(dir + "/cgroup.procs");
  if (!text) return pids;
  std::stringstream ss(*text);
  int pid;
  while (ss >> pid) pids.push_back(pid);
  return pids;
}

bool KillAndRemove(const std::string& dir, int depth = 0);

// Removes the cgroups below `dir` (a leaf's inner cgroup, for a leftover): rmdir needs them
// gone first. Our plans nest two deep; anything deeper is not ours and stays (rmdir then fails).
bool RemoveChildren(const std::string& dir, int depth) {
  constexpr int kMaxDepth = 2;
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return errno == ENOENT;
  DIR* d = fdopendir(fd.get());
  if (d == nullptr) return false;
  (void)fd.release();  // closedir closes it
  std::vector<std::string> children;
  while (const dirent* e = readdir(d)) {
    const std::string_view name = e->d_name;
    if (e->d_type == DT_DIR && name != "." && name != "..") children.emplace_back(name);
  }
  closedir(d);
  bool ok = true;
  for (const std::string& c : children) {
    ok = depth < kMaxDepth && KillAndRemove(dir + "/" + c, depth + 1) && ok;
  }
  return ok;
}

// Kills every process in the cgroup `dir` and below, and removes them; false (errno set) if
// one stays.
bool KillAndRemove(const std::string& dir, int depth) {
  if (!RemoveChildren(dir, depth)) return false;
  // cgroup.kill (v2, Linux 5.14) kills atomically, also processes forking meanwhile; elsewhere
  // SIGKILL every member until none is left.
  struct stat st;
  const bool has_kill = stat((dir + "/cgroup.kill").c_str(), &st) == 0;
  for (int attempt = 0; attempt < 500; ++attempt) {
    if (has_kill) {
      (void)WriteFile(dir + "/cgroup.kill", "1");
    } else {
      for (int pid : PidsIn(dir)) kill(pid, SIGKILL);
    }
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

Result<std::vector<std::string>> RemoveLeftovers(const std::vector<std::string>& parents,
                                                 std::string_view prefix) {
  std::vector<std::string> removed;
  std::optional<Error> first;
  if (prefix.empty()) {
    return MakeError(Errc::kInvalidArgument, "an empty prefix would match every sandbox's cgroup");
  }
  for (const std::string& parent : parents) {
    UniqueFd fd(open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
      if (errno == ENOENT) continue;  // no sandbox has had a cgroup here yet
      return SysError("open the cgroup directory " + Quote(parent));
    }
    DIR* d = fdopendir(fd.get());
    if (d == nullptr) return SysError("read the cgroup directory " + Quote(parent));
    (void)fd.release();  // closedir closes it
    std::vector<std::string> names;
    while (const dirent* e = readdir(d)) {
      const std::string_view name = e->d_name;
      if (e->d_type == DT_DIR && name.starts_with(prefix)) names.emplace_back(name);
    }
    closedir(d);
    for (const std::string& name : names) {
      const std::string dir = parent + "/" + name;
      if (KillAndRemove(dir)) {
        removed.push_back(dir);
      } else if (!first) {
        first = SysError("remove the leftover cgroup " + Quote(dir));
      }
    }
  }
  if (first) return *first;
  return removed;
}

Result<HostCgroups> ReadHostCgroups() {
  HostCgroups host;
  std::optional<std::string> cg = ReadFile("/proc/self/cgroup");
  if (!cg) return SysError("read '/proc/self/cgroup'");
  std::optional<std::string> mi = ReadFile("/proc/self/mountinfo");
  if (!mi) return SysError("read '/proc/self/mountinfo'");
  host.proc_self_cgroup = std::move(*cg);
  host.mountinfo = std::move(*mi);
  host.read_file = ReadFile;
  host.read_xattr = ReadXattr;
  return host;
}

Result<std::optional<std::string>> TakeDelegation(const HostCgroups& host, const Limits& limits) {
  SRT_ASSIGN_OR_RETURN(std::optional<Delegation> d, PlanDelegation(host, limits));
  if (!d) return std::optional<std::string>();
  // Ordered: v2 refuses to enable controllers for the children of a cgroup that holds
  // processes, so the caller leaves the delegated cgroup before the writes.
  if (!d->supervisor.empty()) {
    if (mkdir(d->supervisor.c_str(), 0755) < 0 && errno != EEXIST) {
      return SysError("create the cgroup " + Quote(d->supervisor));
    }
    SRT_RETURN_IF_ERROR(WriteFile(d->supervisor_procs, "0"));
  }
  for (const FileWrite& w : d->writes) SRT_RETURN_IF_ERROR(WriteFile(w.path, w.value));
  return std::optional<std::string>(d->parent);
}

Result<std::unique_ptr<Cgroups>> Cgroups::Create(Plan plan) {
  std::unique_ptr<Cgroups> cg(new Cgroups(std::move(plan)));
  const Plan& p = cg->plan_;
  for (const std::string& dir : p.mkdirs) {
    const bool leaf = std::find(p.leaves.begin(), p.leaves.end(), dir) != p.leaves.end();
    if (mkdir(dir.c_str(), 0755) < 0) {
      if (errno == EEXIST && !leaf) continue;
      const int err = errno;
      Error e = SysError("create the sandbox's cgroup " + Quote(dir)).Wrap("limits");
      return Error(err == EACCES || err == EPERM ? Errc::kPermissionDenied : e.code(),
                   e.message() + Hint(err), err);
    }
    if (leaf) cg->created_.push_back(dir);
  }
  for (const FileWrite& w : p.writes) {
    struct stat st;
    if (w.if_exists && stat(w.path.c_str(), &st) < 0 && errno == ENOENT) continue;
    Result<void> r = WriteFile(w.path, w.value);
    if (!r) {
      const int err = r.error().sys_errno();
      Error e = std::move(r).error().Wrap("limits");
      return Error(err == EACCES || err == EPERM ? Errc::kPermissionDenied : e.code(),
                   e.message() + Hint(err), err);
    }
  }
  for (const std::string& procs : p.procs_files) {
    int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return SysError("open " + Quote(procs)).Wrap("limits");
    cg->procs_.emplace_back(fd);
  }
  for (const std::string& procs : p.inner_procs_files) {
    int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return SysError("open " + Quote(procs)).Wrap("limits");
    cg->inner_procs_.emplace_back(fd);
  }
  return cg;
}

namespace {

std::vector<int> Numbers(const std::vector<UniqueFd>& fds) {
  std::vector<int> out;
  out.reserve(fds.size());
  for (const UniqueFd& fd : fds) out.push_back(fd.get());
  return out;
}

}  // namespace

std::vector<int> Cgroups::procs_fds() const { return Numbers(procs_); }

std::vector<int> Cgroups::inner_procs_fds() const { return Numbers(inner_procs_); }

// A write to any cgroup.procs file takes the kernel's global lock on the thread groups'
// cgroups for writing. The first such write after a quiet spell waits for an RCU grace period
// (5-20 ms on this 2-vCPU VM); writes that come during the grace periods just after it do not.
// A v1 leaf is joined through "tasks", which skips the lock (PlanCgroups), so without this the
// first write would be the inner cgroup's first join (srt-toolbox starting its shell, ~10 ms
// after bwrap starts, on the way to srt-poller's first tool call: srt-toolbox's start took
// 12-15 ms that way, 5-8 ms with this write made while bwrap sets up).
Result<void> Cgroups::Rejoin(pid_t member) const {
  if (plan_.procs_files.empty()) return Ok();
  const std::string procs = std::string(path::Parent(plan_.procs_files.front())) + "/cgroup.procs";
  return WriteFile(procs, std::to_string(member));
}

bool Cgroups::OomKilled() const {
  for (const std::string& file : plan_.oom_events) {
    std::optional<std::string> text = ReadFile(file);
    if (!text) continue;
    std::stringstream ss(*text);
    std::string key;
    long long value = 0;
    while (ss >> key >> value) {
      if (key == "oom_kill" && value > 0) return true;
    }
  }
  return false;
}

Result<void> Cgroups::Destroy() {
  if (destroyed_) return Ok();
  destroyed_ = true;
  procs_.clear();
  inner_procs_.clear();
  Result<void> result = Ok();
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (!KillAndRemove(*it) && result) {
      result = SysError("remove the sandbox's cgroup " + Quote(*it));
    }
  }
  created_.clear();
  return result;
}

Cgroups::~Cgroups() { (void)Destroy(); }

}  // namespace srt::cgroup
