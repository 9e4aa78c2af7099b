// SPDX-License-Identifier: Apache-2.0
#include "sandbox_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "base/path.h"
#include "base/strings.h"

namespace srt::facade {

void SetEnv(std::vector<std::string>& environment, const std::string& name,
            const std::string& value) {
  // No string is built per entry: srt calls this some twenty times on an environment of dozens.
  std::erase_if(environment, [&](const std::string& e) {
    return e.size() > name.size() && e[name.size()] == '=' && e.starts_with(name);
  });
  environment.push_back(name + "=" + value);
}

namespace {

// NAME's value in `environment`, if it is there.
std::optional<std::string_view> GetEnv(const std::vector<std::string>& environment,
                                       std::string_view name) {
  for (const std::string& e : environment) {
    if (e.size() > name.size() && e[name.size()] == '=' && e.starts_with(name)) {
      return std::string_view(e).substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

}  // namespace

void AddGitSafeDirectories(std::vector<std::string>& environment,
                           const std::vector<std::string>& directories) {
  const std::optional<std::string_view> inherited = GetEnv(environment, "GIT_CONFIG_COUNT");
  if (inherited == "0") return;
  // git's own reader takes a plain decimal count; nine digits keep the sum in range.
  size_t count = 0;
  if (inherited && !inherited->empty() && inherited->size() <= 9 &&
      std::all_of(inherited->begin(), inherited->end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    count = static_cast<size_t>(std::stoul(std::string(*inherited)));
  }
  std::vector<std::string> dirs;
  for (const std::string& d : directories) {
    std::string dir = d;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (dir.empty()) continue;
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(std::move(dir));
  }
  if (dirs.empty()) return;
  std::vector<std::string> values;
  if (dirs.size() > kMaxListedSafeDirectories) {
    values.emplace_back("*");
  } else {
    for (const std::string& dir : dirs) {
      values.push_back(dir);
      // "/" stays "/" ("" would reset git's list); its glob is "/*", not "//*".
      values.push_back(dir.back() == '/' ? dir + "*" : dir + "/*");
    }
  }
  for (const std::string& value : values) {
    SetEnv(environment, "GIT_CONFIG_KEY_" + std::to_string(count), "safe.directory");
    SetEnv(environment, "GIT_CONFIG_VALUE_" + std::to_string(count), value);
    ++count;
  }
  SetEnv(environment, "GIT_CONFIG_COUNT", std::to_string(count));
}

Result<std::string> VetExecutable(const ExecutableFact& fact, std::string_view what,
                                  const std::vector<std::string>& writable) {
  const std::string name = std::string(what) + " ";
  if (fact.stat_errno != 0) return SysError(name + strings::Quote(fact.path), fact.stat_errno);
  if (!fact.executable) {
    return MakeError(Errc::kPermissionDenied,
                     name + strings::Quote(fact.path) + " is not an executable file");
  }
  for (const std::string& root : writable) {
    if (path::IsWithin(fact.real, root)) {
      return MakeError(Errc::kInvalidArgument,
                       name + strings::Quote(fact.real) + " lies inside the write root " +
                           strings::Quote(root) +
                           ": a sandboxed command could replace it and run on the host next "
                           "time. Install it elsewhere or narrow allowWrite.");
    }
  }
  if (fact.group_or_other_writable) {
    return MakeError(
        Errc::kPermissionDenied,
        name + strings::Quote(fact.real) + " is writable by other users; refusing to run it");
  }
  return fact.real;
}

Result<void> VetNesting(const policy::Policy& policy, const HostFacts& facts) {
  if (!policy.allow_nested_user_namespaces || facts.euid != 0) return Ok();
  return MakeError(
      Errc::kPermissionDenied,
      "allowNestedUserNamespaces is refused for a root caller: the command would be the host's "
      "root (uid 0) in user namespaces of its own, where it can mount a cgroup hierarchy and "
      "lift its own limits or change the host's, and make setuid copies through overlayfs. Run "
      "srt as an unprivileged user to nest sandboxes or containers");
}

std::string KeptTmpdirParent(std::string_view tmpdir_parent, uid_t euid) {
  return std::string(tmpdir_parent) + "/srt-" + std::to_string(euid);
}

SandboxPlan PlanSandbox(const SandboxOptions& options, const HostFacts& facts,
                        const policy::Policy& policy) {
  SandboxPlan plan;
  plan.filter.allow_unix_sockets = policy.allow_all_unix_sockets;
  plan.filter.allow_namespaces = policy.allow_nested_user_namespaces;
  // A root caller's nested namespaces map the host's root (see bwrap::Layout::keep_setfcap).
  plan.filter.deny_xattr_writes = policy.allow_nested_user_namespaces && facts.euid == 0;

  plan.environment = options.env ? *options.env : facts.environment;
  SetEnv(plan.environment, "SANDBOX_RUNTIME", "1");
  // The tmpfs's mount point: the kept parent, or the run's own TMPDIR directory (the fallback).
  std::string tmpfs_root;
  if (!policy.tmpdir_parent.empty()) {
    const std::string kept = KeptTmpdirParent(policy.tmpdir_parent, facts.euid);
    // The tmpfs would hide a working directory at or below the kept parent (a nested srt started
    // in its outer sandbox's TMPDIR): the command enters its working directory by its path after
    // the mounts, and would find nothing there.
    const bool hides_cwd = path::IsWithin(policy.cwd, kept);
    if (!facts.kept_tmpdir_parent_unusable && !hides_cwd) {
      plan.tmpdir = {kept + "/" + facts.random_name, true};
      plan.notes.push_back("TMPDIR " + plan.tmpdir.path + ": in a private tmpfs on " + kept +
                           " (kept for the next sandboxes, mode 0700), gone afterwards");
    } else if (hides_cwd) {
      plan.tmpdir = {policy.tmpdir_parent + "/srt-" + facts.random_name, false};
      plan.notes.push_back("TMPDIR " + plan.tmpdir.path + ": in a private tmpfs on a directory " +
                           "made now and removed afterwards, not on " + kept +
                           ", which holds the working directory");
    } else {
      // Someone else's directory, a symlink, or a mode that lets others in: srt neither mounts
      // on it nor touches it, and says so every run (not only with --debug): until it is fixed,
      // another user may own the name every sandbox of this one's would use.
      plan.tmpdir = {policy.tmpdir_parent + "/srt-" + facts.random_name, false};
      plan.warnings.push_back(kept + " is not a directory of uid " + std::to_string(facts.euid) +
                              " with mode 0700, so srt does not use it: TMPDIR " +
                              plan.tmpdir.path +
                              " is a private tmpfs on a directory made now and removed "
                              "afterwards (remove " +
                              kept + ", or make it yours with mode 0700)");
    }
    SetEnv(plan.environment, "TMPDIR", plan.tmpdir.path);
    tmpfs_root = plan.tmpdir.in_kept_parent ? kept : plan.tmpdir.path;
  }

  plan.writable = policy.write_roots;
  plan.writable.insert(plan.writable.end(), policy.writable_bind_sources.begin(),
                       policy.writable_bind_sources.end());

  // The write guard, unless the filesystem is the host's anyway (filesystem.disabled).
  if (!policy.filesystem_disabled) {
    plan.guard.calls = seccomp::GuardCalls();
    plan.guard.roots = policy.guard_roots;
    // The whole tmpfs is the sandbox's own (the guard exempts only what is on it).
    if (!tmpfs_root.empty()) plan.guard.private_roots.push_back(tmpfs_root);
    if (policy.allow_git_config) plan.guard.flags |= wire::kGuardAllowGitConfig;
  }

  // Within the hard limit; root may raise that too (Start falls back to the hard limit where the
  // kernel refuses).
  if (facts.nofile) {
    const uint64_t target =
        facts.euid == 0 ? kProxyNofile : std::min(facts.nofile->second, kProxyNofile);
    if (facts.nofile->first < target) {
      plan.raise_nofile = target;
      plan.command_nofile = facts.nofile;
    }
  }
  return plan;
}

std::vector<std::string> ExecEnvironment(const std::vector<std::string>& given,
                                         const std::vector<std::string>& base,
                                         const std::vector<std::string>& planned,
                                         const std::vector<std::string>& pinned) {
  auto name_of = [](const std::string& e) { return e.substr(0, e.find('=')); };
  // NAME -> the sandbox's entry ("" when it has none).
  std::map<std::string, std::string> sandbox_has;
  for (const std::string& e : planned) sandbox_has[name_of(e)] = e;
  std::set<std::string> base_entries(base.begin(), base.end());
  std::set<std::string> srt_owned(pinned.begin(), pinned.end());
  for (const std::string& e : planned) {
    if (!base_entries.count(e)) srt_owned.insert(name_of(e));  // set or changed by srt
  }
  for (const std::string& e : base) {
    if (!sandbox_has.count(name_of(e))) srt_owned.insert(name_of(e));  // removed by srt
  }
  std::vector<std::string> out;
  for (const std::string& e : given) {
    if (!srt_owned.count(name_of(e))) out.push_back(e);
  }
  for (const std::string& name : srt_owned) {
    auto it = sandbox_has.find(name);
    if (it != sandbox_has.end()) out.push_back(it->second);
  }
  return out;
}

}  // namespace srt::facade
