// SPDX-License-Identifier: Apache-2.0
// policy/policy: Settings + the caller's environment -> a resolved, immutable Policy.
//
// Resolution expands `~`, relative paths and globs, resolves symlinks, drops what cannot apply
// (with a note saying why), decides the view of every path a rule names, and lists the paths
// that must be protected from writes. Everything downstream (the bwrap argv builder, the
// launcher, srt-agent) consumes this data and never re-reads user input.
#pragma once

#include <string>
#include <vector>

#include "network_policy/network_policy.h"
#include "policy/fs_view.h"
#include "policy/network.h"
#include "srt/result.h"
#include "srt/settings.h"

namespace srt::policy {

// What the sandbox sees at a path and below it (until a deeper mount).
enum class View {
  kHostReadOnly,  // the host's file or directory, read-only
  kHostWritable,  // the host's file or directory, writable
  kHiddenDir,     // an empty, private tmpfs in place of a directory
  kHiddenFile,    // /dev/null in place of a file (open fails with EACCES)
  // An empty tmpfs that srt fills with the host's entries (bound read-only, symlinks copied) and
  // makes read-only at the end (Policy::remount_read_only): the parent of a bind target that does
  // not exist on the host, which bwrap could not create on the read-only root.
  kSyntheticDir,
  kSymlink,  // a symlink whose target is MountRule::source (an entry of a kSyntheticDir)
};
const char* ViewName(View v);

struct MountRule {
  std::string path;  // canonical, absolute
  View view;
  std::string reason;  // the rule that asked for it, for --debug
  // kHostReadOnly/kHostWritable: the host path shown at `path` when it is not `path` itself (a
  // bind, SandboxOptions::binds); kSymlink: the link's target. "" otherwise.
  std::string source;
  bool operator==(const MountRule&) const = default;
};
// For test failure messages: {path, view, reason} or {path <- source, view, reason}.
inline std::string ToString(const MountRule& m) {
  return "{" + m.path + (m.source.empty() ? "" : " <- " + m.source) + ", " + ViewName(m.view) +
         ", " + m.reason + "}";
}

enum class ProtectKind {
  kPin,      // bind the directory onto itself so it cannot be renamed or removed (EBUSY)
  kProtect,  // make it read-only, with everything below; if missing, block its creation with an
             // empty read-only directory that srt-agent creates and removes afterwards
};

struct Protection {
  ProtectKind kind;
  std::string path;    // canonical, absolute, inside a write root (or a writable bind's target)
  bool exists = true;  // as seen during resolution (srt-agent re-checks)
  std::string reason;
  // Where `path` is on the host when that differs (a path inside a bind: srt-agent looks there
  // to see whether it exists); "" = `path` itself.
  std::string host_path;
  bool operator==(const Protection&) const = default;
};

// A host file or directory shown at another path in the sandbox (SandboxOptions::binds).
struct BindRequest {
  std::string source;  // host path; must exist
  std::string target;  // absolute, normalised path in the sandbox; need not exist on the host
  bool writable = false;
  bool own_repositories = false;  // SandboxOptions' BindMount::own_repositories
};

// Inputs from the caller's process that resolution depends on.
struct Environment {
  std::string home;  // absolute
  std::string cwd;   // absolute
  std::vector<BindRequest> binds;
  ProxyVariables proxy_variables;  // srt's own HTTP(S)_PROXY / NO_PROXY
};

// A credential file shown masked (credentials.files mode "mask").
struct MaskedFile {
  std::string path;  // canonical; a regular file on the host
  size_t entry = 0;  // its credentials.files index
  bool operator==(const MaskedFile&) const = default;
};

// A denied or masked file the settings name through symlinks (a Kubernetes secret volume's
// `token -> ..data/token`, `..data -> ..v1`): srt-agent follows `spelled` again whenever the
// host points a link on the way elsewhere, and covers what it reaches then.
struct SymlinkedFile {
  std::string path;     // canonical, as resolved now (a MountRule's or MaskedFile's path)
  std::string spelled;  // absolute and normalised, as the settings name it
  bool operator==(const SymlinkedFile&) const = default;
};

struct Policy {
  bool filesystem_disabled = false;  // filesystem.disabled: the host root, writable
  // The root is srt's tmpfs holding the host's top-level entries (see View::kSyntheticDir)
  // instead of the host's root bound read-only: a bind target needs a new top-level directory.
  bool synthetic_root = false;
  // Mounts on top of the root, in order: the settings' rules shallow first (equal depth sorted
  // by path) with the synthetic directories among them, then the binds and the settings' rules
  // mirrored into them, shallow first.
  std::vector<MountRule> mounts;
  // kSyntheticDir paths (and "/" for a synthetic root), made read-only after every mount.
  std::vector<std::string> remount_read_only;
  // The canonical host sources of writable binds: like write_roots, what the command may modify.
  std::vector<std::string> writable_bind_sources;
  // Applied by srt-agent after bwrap's own setup: pins first, then protections, shallow first.
  std::vector<Protection> protections;
  std::vector<std::string> write_roots;  // canonical; what the command may modify
  // Sandbox paths below which the write guard's git rules hold: the write roots and the targets
  // of writable directory binds (but those with own_repositories). Empty: no write guard (the
  // filesystem is disabled).
  std::vector<std::string> guard_roots;
  bool allow_git_config = false;  // filesystem.allowGitConfig
  std::string cwd;                // canonical; where the command starts
  // Where the sandbox's private TMPDIR (a fresh tmpfs, removed afterwards) is put: "/tmp", or ""
  // for no TMPDIR (filesystem.disabled, or no /tmp on the host).
  std::string tmpdir_parent;
  bool weaker_nested_sandbox = false;  // enableWeakerNestedSandbox: host /proc bound
  bool allow_nested_user_namespaces = false;
  bool allow_all_unix_sockets = false;
  NetworkPolicy network;  // enforced by the proxy
  // Where the sandbox's resolv.conf is (canonical; /etc/resolv.conf may be a symlink), replaced
  // by one naming srt's DNS stub when the proxy captures traffic; "" when there is none.
  std::string resolv_conf;
  // Masked credential files, bound over with their fakes after every other mount.
  std::vector<MaskedFile> masked_files;
  // Denied files (denyRead, credentials.files deny) that did not exist: covered once the host
  // makes one while the sandbox runs.
  std::vector<std::string> missing_denied_files;
  // Denied (denyRead, credentials.files) and masked files named through symlinks.
  std::vector<SymlinkedFile> symlinked_files;
  std::vector<std::string> notes;  // every decision, for --debug
  // What the user should hear about even without --debug: rules that were skipped.
  std::vector<std::string> warnings;
};

[[nodiscard]] Result<Policy> ResolvePolicy(const Settings& settings, const Environment& env,
                                           const FsView& fs);

}  // namespace srt::policy
