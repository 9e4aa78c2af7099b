// SPDX-License-Identifier: Apache-2.0
// Policy -> bwrap arguments. Each phase is a function; their order is the order bubblewrap
// applies them in (it executes its options as a list of set-up operations, so argv order is mount
// order).
#include "bwrap/argv_builder.h"

#include <algorithm>

#include "base/path.h"

namespace srt::bwrap {

namespace {

using policy::Policy;
using policy::View;

void Add(std::vector<std::string>& a, std::initializer_list<std::string> words) {
  a.insert(a.end(), words);
}

// One of the two is at or below the other.
bool Related(const std::string& a, const std::string& b) {
  return path::IsWithin(a, b) || path::IsWithin(b, a);
}

// Whether p.mounts[i] qualifies for AgentShows (argv_builder.h).
bool AgentMayShow(const Policy& p, size_t i) {
  const policy::MountRule& m = p.mounts[i];
  if (m.view != View::kHostReadOnly || (!m.source.empty() && m.source != m.path)) return false;
  const std::string parent(path::Parent(m.path));
  if (parent == "/") return false;
  // The mount its mount point is made in: the last one before it at or above it, which must be
  // bwrap's tmpfs at its parent. Nothing before it at or below it (whose parents bwrap made).
  bool holder = false;
  for (size_t j = i; j-- > 0;) {
    const policy::MountRule& before = p.mounts[j];
    if (path::IsWithin(before.path, m.path)) return false;
    if (path::IsWithin(m.path, before.path)) {
      holder = before.path == parent &&
               (before.view == View::kHiddenDir || before.view == View::kSyntheticDir);
      break;
    }
  }
  if (!holder) return false;
  // Nothing of bwrap's later at, below or above it. Covers of denied files are srt-agent's,
  // after its shows.
  for (size_t j = i + 1; j < p.mounts.size(); ++j) {
    if (p.mounts[j].view != View::kHiddenFile && Related(p.mounts[j].path, m.path)) return false;
  }
  if (!p.resolv_conf.empty() && Related(p.resolv_conf, m.path)) return false;
  for (const policy::MaskedFile& f : p.masked_files) {
    if (Related(f.path, m.path)) return false;
  }
  for (const std::string& dir : p.remount_read_only) {
    if (path::IsWithin(dir, m.path)) return false;
  }
  // bwrap enters the working directory (--chdir) before the agent's mounts.
  return !path::IsWithin(p.cwd, m.path);
}

// The indexes in p.mounts of the entries srt-agent shows (AgentShows).
std::vector<size_t> AgentShowIndexes(const Policy& p, const Layout& l) {
  std::vector<size_t> out;
  if (p.filesystem_disabled) return out;
  const size_t most = std::min(l.agent_shows, kMaxAgentShows);
  for (size_t i = 0; i < p.mounts.size() && out.size() < most; ++i) {
    if (AgentMayShow(p, i)) out.push_back(i);
  }
  return out;
}

// Phase 1: process and namespaces. A new session blocks TIOCSTI-style injection into the
// caller's terminal; --die-with-parent ties the sandbox to srt; every namespace bwrap offers is
// private (the network one has only loopback until the proxy is bridged in). srt-init is PID 1
// (--as-pid-1) so it can reap, relay signals and report the command's exact status.
void Namespaces(const Policy& p, const Layout& l, std::vector<std::string>& a) {
  Add(a, {"--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid", "--unshare-net",
          "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--as-pid-1"});
  // Root callers keep capabilities inside bwrap's user namespace unless told otherwise.
  if (l.caller_is_root) Add(a, {"--cap-drop", "ALL"});
  if (l.caller_is_root && l.keep_setfcap) Add(a, {"--cap-add", "CAP_SETFCAP"});
  // No user namespaces inside: the seccomp filter refuses them too, this makes the kernel agree.
  if (!p.allow_nested_user_namespaces && !p.weaker_nested_sandbox) Add(a, {"--disable-userns"});
}

// Phase 2: the root, then bwrap's own /dev (a tmpfs with binds of the host's harmless device
// nodes) and /proc (of the sandbox's pid namespace), then the policy's mounts in policy order:
// shallow-first so that a deeper rule is mounted on top of the one it refines, the binds last.
void Filesystem(const Policy& p, const Layout& l, const std::vector<size_t>& shown,
                std::vector<std::string>& a) {
  if (p.filesystem_disabled) {
    Add(a, {"--bind", "/", "/"});
  } else if (p.synthetic_root) {
    // The host's top-level entries come as mounts: a bind target needs a new one, and bwrap
    // can create it only in a root of its own (made read-only by Phase 2c).
    Add(a, {"--tmpfs", "/"});
  } else {
    Add(a, {"--ro-bind", "/", "/"});
  }
  // Its device nodes are binds of the host's, which srt-agent makes read-only (kHostDeviceNodes).
  Add(a, {"--dev", "/dev"});
  // bwrap's /dev is a tmpfs the command may write in, /dev/shm with it. With sized tmpfs mounts,
  // /dev/shm gets one of its own and /dev is made read-only (Phase 2c; its device nodes still
  // open for writing, as nodes on a read-only filesystem do).
  if (l.tmpfs_bytes) Add(a, {"--size", std::to_string(l.tmpfs_bytes), "--tmpfs", "/dev/shm"});
  if (p.weaker_nested_sandbox) {
    Add(a, {"--bind", "/proc", "/proc"});
  } else {
    Add(a, {"--proc", "/proc"});
  }
  size_t next_shown = 0;
  for (size_t i = 0; i < p.mounts.size(); ++i) {
    const policy::MountRule& m = p.mounts[i];
    // srt-agent's (AgentShows): bwrap does not make the mount point either.
    if (next_shown < shown.size() && shown[next_shown] == i) {
      ++next_shown;
      continue;
    }
    const std::string& source = m.source.empty() ? m.path : m.source;
    switch (m.view) {
      case View::kHostReadOnly:
        Add(a, {"--ro-bind", source, m.path});
        break;
      case View::kHostWritable:
        Add(a, {"--bind", source, m.path});
        break;
      case View::kHiddenDir:
        // A hidden directory is an empty, writable tmpfs (a hidden /tmp is the command's /tmp),
        // whose files are memory that no process owns: the size keeps them from filling the
        // memory limit, where the OOM killer could only take processes.
        if (l.tmpfs_bytes) Add(a, {"--size", std::to_string(l.tmpfs_bytes)});
        Add(a, {"--tmpfs", m.path});
        break;
      case View::kSyntheticDir:
        Add(a, {"--tmpfs", m.path});
        break;
      case View::kHiddenFile:
        // srt-agent covers these after bwrap's mounts (the launcher hands it the list): bwrap
        // re-reads the whole mount table after each bind, so a thousand --ro-bind /dev/null
        // cost seconds. Nothing mounts below a file, so applying them last changes no view.
        break;
      case View::kSymlink:
        Add(a, {"--symlink", m.source, m.path});
        break;
    }
  }
}

// Phase 2b: a resolv.conf pointing at srt's DNS stub, on top of everything else.
void ResolvConf(const Policy& p, const Layout& l, std::vector<std::string>& a) {
  if (p.resolv_conf.empty() || l.resolv_conf_fd < 0) return;
  Add(a, {"--ro-bind-data", std::to_string(l.resolv_conf_fd), p.resolv_conf});
}

// Phase 2b': masked credential files, over whatever the rules put there (a masked file under a
// hidden or re-bound directory is still shown, masked).
void MaskedFiles(const Policy& p, const Layout& l, std::vector<std::string>& a) {
  for (size_t i = 0; i < p.masked_files.size() && i < l.masked_file_fds.size(); ++i) {
    Add(a, {"--ro-bind-data", std::to_string(l.masked_file_fds[i]), p.masked_files[i].path});
  }
}

// Phase 2c: srt's synthetic directories become read-only once every mount point in them exists
// (--remount-ro is not recursive: the mounts inside keep their own flags).
// Those srt-agent shows entries in, it makes read-only itself, once they are in place.
void RemountReadOnly(const Policy& p, const Layout& l, const std::vector<std::string>& sealed,
                     std::vector<std::string>& a) {
  for (const std::string& dir : p.remount_read_only) {
    if (std::find(sealed.begin(), sealed.end(), dir) == sealed.end()) {
      Add(a, {"--remount-ro", dir});
    }
  }
  if (l.tmpfs_bytes) Add(a, {"--remount-ro", "/dev"});
}

// Phase 3: where the command starts.
void WorkingDirectory(const Policy& p, std::vector<std::string>& a) { Add(a, {"--chdir", p.cwd}); }

// The paths at `indexes` of policy.mounts, and the synthetic directories holding them.
AgentShows ShowsAt(const Policy& policy, const std::vector<size_t>& indexes) {
  AgentShows out;
  for (size_t i : indexes) {
    const std::string& path = policy.mounts[i].path;
    out.paths.push_back(path);
    const std::string parent(path::Parent(path));
    const auto& dirs = policy.remount_read_only;
    if (std::find(dirs.begin(), dirs.end(), parent) != dirs.end() &&
        std::find(out.seals.begin(), out.seals.end(), parent) == out.seals.end()) {
      out.seals.push_back(parent);
    }
  }
  return out;
}

}  // namespace

Invocation BuildInvocation(const Policy& policy, const Layout& layout) {
  Invocation inv;
  const std::vector<size_t> shown = AgentShowIndexes(policy, layout);
  Namespaces(policy, layout, inv.args);
  Filesystem(policy, layout, shown, inv.args);
  ResolvConf(policy, layout, inv.args);
  MaskedFiles(policy, layout, inv.args);
  inv.agent_shows = ShowsAt(policy, shown);
  RemountReadOnly(policy, layout, inv.agent_shows.seals, inv.args);
  WorkingDirectory(policy, inv.args);
  inv.argv = {"bwrap",
              "--args",
              std::to_string(layout.args_fd),
              "--",
              "/proc/self/fd/" + std::to_string(layout.init_exe_fd),
              "init",
              std::to_string(layout.init_ctl_fd),
              std::to_string(layout.init_plan_fd)};
  return inv;
}

std::string SerializeArgs(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) {
    out += a;
    out += '\0';
  }
  return out;
}

}  // namespace srt::bwrap
