// SPDX-License-Identifier: Apache-2.0
// bwrap/argv_builder: Policy -> the bubblewrap invocation. Pure: the same policy and layout give
// the same arguments, byte for byte (golden-tested, order included).
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"

namespace srt::bwrap {

// The host's device nodes bwrap's --dev binds into the sandbox's /dev. Through a writable bind,
// chmod, chown, utimes or setxattr on /dev/null would change the host's node, so srt-agent makes
// them read-only (which refuses those with EROFS and still lets the devices be read and written;
// bwrap's own --remount-ro would add nodev).
inline constexpr const char* kHostDeviceNodes[] = {"/dev/null",   "/dev/zero",    "/dev/full",
                                                   "/dev/random", "/dev/urandom", "/dev/tty"};

// Where the launcher put the descriptors bwrap and srt-init need (it chooses the numbers).
struct Layout {
  int args_fd = -1;       // bwrap reads its options from here (--args), NUL-separated
  int init_exe_fd = -1;   // srt-init, executed through /proc/self/fd
  int init_ctl_fd = -1;   // srt-init's control socket
  int init_plan_fd = -1;  // srt-init's plan
  bool caller_is_root = false;
  // Keep CAP_SETFCAP for a root caller's command (allowNestedUserNamespaces): the kernel lets a
  // process map the host's root into a new user namespace only if it held CAP_SETFCAP when it
  // made it, so `unshare -r`, nested bwrap and podman need it. The seccomp filter then refuses
  // xattr writes, which is what CAP_SETFCAP would otherwise allow.
  bool keep_setfcap = false;
  int resolv_conf_fd = -1;  // contents for policy.resolv_conf (--ro-bind-data), or -1
  // Contents for each of policy.masked_files (--ro-bind-data), same order; fewer: the rest
  // are not masked (the policy's masks are bound only with contents).
  std::vector<int> masked_file_fds;
  // The size of each tmpfs the command can write in (--size): those that stand for hidden
  // directories and a /dev/shm of its own, with /dev itself read-only; 0: the kernel's default
  // size, and bwrap's writable /dev.
  uint64_t tmpfs_bytes = 0;
  // srt-agent shows at most this many of the host entries AgentShows describes, instead of bwrap
  // (and never more than kMaxAgentShows): 0 unless the agent has CAP_SYS_ADMIN over the host's
  // mount namespace (a root caller's), where it clones them; fewer when its descriptors or its
  // plan's operations would run out.
  size_t agent_shows = 0;
};

// The host entries srt-agent mounts in bwrap's place (wire::kTagShow), and the synthetic
// directories it then makes read-only (wire::kTagSeal). bwrap re-reads and parses the whole
// mount table after each bind, which made an srt-poller session's 31 /etc entries a third of its
// sandbox's start; the agent's three calls per entry read no table. An entry qualifies only
// where the agent's later mount gives the same view as bwrap's: a read-only bind of the host's
// entry onto itself, directly in a tmpfs of bwrap's (a hidden or synthetic directory, not the
// root) that is the last mount above it, with no mount of bwrap's at, below or above it before
// or after (the agent's own, covers and protections, come after its shows, as they came after
// bwrap's mounts), and not where bwrap enters the working directory. At most
// Layout::agent_shows and kMaxAgentShows entries (bwrap binds the rest). In mount order.
inline constexpr size_t kMaxAgentShows = 256;  // wire::kMaxShows, which the launcher asserts
struct AgentShows {
  std::vector<std::string> paths;
  // Of the synthetic directories (Policy::remount_read_only), those holding one of `paths`: bwrap
  // leaves them writable, for the agent to create the mount points.
  std::vector<std::string> seals;
  bool operator==(const AgentShows&) const = default;
};

struct Invocation {
  // The options that go through the --args descriptor: every mount and namespace flag, so that
  // none of them shows in bwrap's command line (in the host's /proc) or counts against ARG_MAX.
  std::vector<std::string> args;
  // bwrap's own argv: {"bwrap", "--args", N, "--", "/proc/self/fd/E", "init", C, P}.
  std::vector<std::string> argv;
  // What srt-agent mounts instead (AgentShows): not in `args`.
  AgentShows agent_shows;
};

Invocation BuildInvocation(const policy::Policy& policy, const Layout& layout);

// `args` joined with NULs (and a trailing NUL), as bwrap's --args expects.
std::string SerializeArgs(const std::vector<std::string>& args);

}  // namespace srt::bwrap
