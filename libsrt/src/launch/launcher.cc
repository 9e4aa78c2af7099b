// SPDX-License-Identifier: Apache-2.0
// Launch orchestration: bwrap, srt-init (init and agent roles), signals, exit status.
#include "launch/launcher.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "base/fd_message.h"
#include "base/start_thread.h"
#include "base/strings.h"
#include "base/system_text.h"
#include "bwrap/argv_builder.h"
#include "init_protocol/wire.h"
#include "launch/diagnose.h"
#include "launch/plan_writer.h"
#include "launch/stage_name.h"
#include "sys/fd.h"
#include "sys/spawn.h"

namespace srt::launch {

namespace {

constexpr size_t kMaxDiagnostics = size_t{64} * 1024;

static_assert(bwrap::kMaxAgentShows == wire::kMaxShows);

// Whether srt-agent can clone the host's entries (bwrap::Layout::agent_shows): it runs with
// srt's credentials and namespaces, and stays outside the sandbox's user namespace as root with
// CAP_SYS_ADMIN (it checks that itself); open_tree's clone then needs that capability over the
// mount namespace, i.e. srt's user namespace must own it. Not so for the root of a user
// namespace that shares an outer mount namespace (`unshare -r` without -m, a service's
// PrivateUsers=), nor for a root without CAP_SYS_ADMIN (a container's): bwrap binds for them.
bool AgentMountsOnTheHost() {
  if (geteuid() != 0) return false;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  if ((data[0].effective & (1u << CAP_SYS_ADMIN)) == 0) return false;
  UniqueFd mnt(open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC));
  UniqueFd owner(mnt ? ioctl(mnt.get(), NS_GET_USERNS) : -1);
  struct stat own = {};
  struct stat user = {};
  return owner && fstat(owner.get(), &own) == 0 && stat("/proc/self/ns/user", &user) == 0 &&
         own.st_dev == user.st_dev && own.st_ino == user.st_ino;
}

// Everything of srt-agent's plan but its shows, gathered once: SpawnBwrap counts it against
// wire::kMaxAgentOps, SpawnAgent sends it.
AgentOps GatherAgentOps(const policy::Policy& policy) {
  AgentOps ops;
  ops.protections = policy.protections;
  for (const char* node : bwrap::kHostDeviceNodes) {
    ops.protections.push_back(
        {policy::ProtectKind::kProtect, node, true, "a host device node", ""});
  }
  // Denied files: srt-agent covers them (bwrap::BuildInvocation leaves them out) ...
  for (const policy::MountRule& m : policy.mounts) {
    if (m.view == policy::View::kHiddenFile) ops.covers.push_back(m.path);
  }
  // ... and those that do not exist yet, once the host makes them; masked files (which bwrap
  // binds) it watches, to mask them again if the host replaces them.
  ops.covers.insert(ops.covers.end(), policy.missing_denied_files.begin(),
                    policy.missing_denied_files.end());
  for (const policy::MaskedFile& m : policy.masked_files) ops.masks.push_back(m.path);
  // Each cover or mask is one record, and one more per spelling (wire::kTagSpelled).
  std::unordered_map<std::string_view, size_t> named;
  for (const std::string& c : ops.covers) ++named[c];
  for (const std::string& m : ops.masks) ++named[m];
  ops.count = ops.protections.size() + ops.covers.size() + ops.masks.size();
  for (const policy::SymlinkedFile& f : policy.symlinked_files) {
    if (auto it = named.find(f.path); it != named.end()) ops.count += it->second;
  }
  return ops;
}

struct Message {
  uint32_t type = 0;
  std::vector<uint8_t> payload;
  UniqueFd fd;  // passed with SCM_RIGHTS, if any
};

// One message from a SOCK_SEQPACKET socket; an empty optional-like result (type 0) means EOF.
Result<Message> Receive(int sock) {
  uint8_t buf[wire::kMaxMessageBytes];
  iovec iov{buf, sizeof buf};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  bool reset_seen = false;
  for (;;) {
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n >= 0 || errno == EINTR) {
      if (n >= 0) break;
      continue;
    }
    // A peer that exits with messages of ours unread (a signal relayed as the command ended)
    // leaves ECONNRESET on this socket, and a datagram receive reports that error before the
    // messages the peer sent first (its exit status). Reading the error clears it, and the
    // peer releases its socket only once: read again, once, for what it said.
    if (errno == ECONNRESET && !reset_seen) {
      reset_seen = true;
      continue;
    }
    return SysError("recvmsg from srt-init");
  }
  Message m;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      m.fd.reset(fd);
    }
  }
  if (n == 0) return m;
  if (n < 4) return MakeError(Errc::kProtocol, "srt-init sent a truncated message");
  std::memcpy(&m.type, buf, 4);
  m.payload.assign(buf + 4, buf + n);
  return m;
}

int32_t IntAt(const Message& m, size_t index) {
  int32_t v = 0;
  if (m.payload.size() >= (index + 1) * 4) std::memcpy(&v, m.payload.data() + index * 4, 4);
  return v;
}

// Sends u32 type + i32 value, with `fd` as SCM_RIGHTS when it is >= 0, to `peer` (named in
// the error).
Result<void> Send(const char* peer, int sock, uint32_t type, int32_t value = 0, int fd = -1) {
  uint8_t buf[8];
  std::memcpy(buf, &type, 4);
  std::memcpy(buf + 4, &value, 4);
  FdMessage msg(buf, fd >= 0 ? std::span<const int>(&fd, 1) : std::span<const int>());
  if (sendmsg(sock, msg.get(), MSG_NOSIGNAL) < 0) return SysError(std::string("send to ") + peer);
  return Ok();
}

// Whether a Send failed because its peer is gone: EPIPE, or ECONNRESET when the peer left
// messages unread.
bool PeerGone(const Error& e) { return e.sys_errno() == EPIPE || e.sys_errno() == ECONNRESET; }

Error AgentExited() {
  return MakeError(Errc::kSystem, "srt-agent exited before the sandbox was ready");
}

const char* GuardOpName(uint32_t op) {
  switch (op) {
    case wire::kGuardOpen:
    case wire::kGuardOpenat:
    case wire::kGuardCreat:
      return "open";
    case wire::kGuardMkdir:
    case wire::kGuardMkdirat:
      return "mkdir";
    case wire::kGuardMknod:
    case wire::kGuardMknodat:
      return "mknod";
    case wire::kGuardSymlink:
    case wire::kGuardSymlinkat:
      return "symlink";
    case wire::kGuardLink:
    case wire::kGuardLinkat:
      return "link";
    case wire::kGuardRename:
    case wire::kGuardRenameat:
    case wire::kGuardRenameat2:
      return "rename";
    case wire::kGuardTruncate:
    case wire::kGuardTruncate64:
      return "truncate";
    case wire::kGuardBind:
      return "bind";
    default:
      return "chmod";
  }
}

// "the write guard refused mkdir '/w/sub/.git': git metadata" (kMsgGuardDenied).
std::string GuardRefusal(const Message& m) {
  uint32_t op = 0, verdict = 0;
  if (m.payload.size() >= 8) {
    std::memcpy(&op, m.payload.data(), 4);
    std::memcpy(&verdict, m.payload.data() + 4, 4);
  }
  std::string path;
  if (m.payload.size() > 8) {
    path.assign(reinterpret_cast<const char*>(m.payload.data() + 8), m.payload.size() - 8);
    path = path.c_str();  // up to the NUL
  }
  static const char* const kWhy[] = {"allowed", "a protected path", "a new git repository",
                                     "git metadata", "a read-only path"};
  return std::string("the write guard refused ") + GuardOpName(op) + " " + strings::Quote(path) +
         ": " + (verdict < std::size(kWhy) ? kWhy[verdict] : "?");
}

Error FailureFrom(const Message& m, std::string_view who) {
  int32_t stage = IntAt(m, 0);
  int32_t err = IntAt(m, 1);
  std::string detail;
  if (m.payload.size() > 8) {
    detail.assign(reinterpret_cast<const char*>(m.payload.data() + 8), m.payload.size() - 8);
    detail = detail.c_str();  // up to the NUL
  }
  return Error(err == EPERM || err == EACCES ? Errc::kPermissionDenied : Errc::kSystem,
               FailedStageText(who, stage, detail, err), err);
}

std::string ReadSysctl(const char* path) {
  std::ifstream in(path);
  std::string v;
  in >> v;
  return v;
}

// Blocks until one of `fds` is readable (POLLIN/POLLHUP/POLLERR); returns revents per fd.
Result<std::vector<short>> PollAll(const std::vector<int>& fds) {
  std::vector<pollfd> p;
  p.reserve(fds.size());
  for (int fd : fds) p.push_back(pollfd{fd, POLLIN, 0});
  for (;;) {
    int r = poll(p.data(), p.size(), -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return SysError("poll");
    break;
  }
  std::vector<short> out;
  out.reserve(p.size());
  for (const pollfd& x : p) out.push_back(x.revents);
  return out;
}

}  // namespace

void Launch::Debug(std::string_view line) const {
  if (spec_.debug) spec_.debug(line);
}

Result<std::unique_ptr<Launch>> Launch::Start(LaunchSpec spec) {
  std::unique_ptr<Launch> l(new Launch(std::move(spec)));
  // The agent starts right after bwrap so that its start-up and its look at the host overlap
  // bwrap's set-up; it applies its plan once srt hands it the sandbox (AwaitAgent).
  Result<void> r = l->SpawnBwrap();
  if (r) r = l->SpawnAgent();
  if (r && l->spec_.beside_bwrap) r = l->spec_.beside_bwrap();
  if (r) {
    Result<SeccompPrograms> filters = l->spec_.build_seccomp_filter();
    if (filters) {
      // One memfd: the deny filter, then the guard's. Made now, while bwrap sets up: PID 1
      // gets it right after its hello, and the command loads it while the agent works.
      const SeccompPrograms& f = *filters;
      std::string bytes(reinterpret_cast<const char*>(f.deny.data()), f.deny.size());
      bytes.append(reinterpret_cast<const char*>(f.guard.data()), f.guard.size());
      l->deny_bytes_ = f.deny.size();
      Result<UniqueFd> fd = sys::SealedMemfd("srt-seccomp", bytes);
      if (fd) {
        l->filters_fd_ = std::move(fd).value();
      } else {
        r = std::move(fd).error();
      }
    } else {
      r = std::move(filters).error().Wrap("the seccomp filter");
    }
  }
  if (r) r = l->AwaitHello();
  if (r) r = l->AwaitAgent();
  if (r) r = l->AwaitStart();
  if (!r) {
    l->Abort();
    return std::move(r).error();
  }
  return l;
}

// Start() counts the caller's descriptors against the public limit; srt-init's plan decoder
// holds those and the inner cgroup's.
static_assert(kMaxInheritFds == wire::kMaxInheritFds);

Result<void> Launch::SpawnBwrap() {
  int exe = open(spec_.init_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (exe < 0) return SysError("open srt-init " + strings::Quote(spec_.init_path));
  init_exe_.reset(exe);

  // First, as it may refuse a descriptor (and nothing has started yet).
  SRT_ASSIGN_OR_RETURN(relay_, StdioRelay::Prepare(spec_.stdin_fd, spec_.stdout_fd, spec_.stderr_fd,
                                                   spec_.keep_fds));
  SRT_ASSIGN_OR_RETURN(auto ctl, sys::SeqpacketPair());
  SRT_ASSIGN_OR_RETURN(auto diag, sys::Pipe());

  // Our descriptors go above every descriptor the caller passes by number.
  int next = 3;
  for (int fd : spec_.keep_fds) next = std::max(next, fd + 1);
  const int stderr_target = next++;
  const int plan_target = next++;
  const int ctl_target = next++;
  const int exe_target = next++;
  const int args_target = next++;
  const bool resolv = !spec_.resolv_conf.empty() && !spec_.policy.resolv_conf.empty();
  const int resolv_target = resolv ? next++ : -1;
  std::vector<int> masked_targets;
  for (size_t i = 0; i < spec_.masked_file_contents.size(); ++i) masked_targets.push_back(next++);
  // The inner cgroup's cgroup.procs files go to the command as they are (no relay: the command
  // writes to them to move its untrusted children there), numbered in its environment.
  std::vector<sys::FdMapping> inner;
  std::vector<int> keep = spec_.keep_fds;
  std::string inner_numbers;
  if (spec_.cgroups) {
    for (int fd : spec_.cgroups->inner_procs_fds()) {
      inner.push_back({fd, next});
      keep.push_back(next);
      inner_numbers += (inner_numbers.empty() ? "" : ",") + std::to_string(next++);
    }
  }

  InitPlanSpec plan_spec{
      stderr_target,    keep, spec_.argv, spec_.command_nofile, relay_->terminal_slots(),
      relay_->reopens()};
  plan_spec.serve = spec_.serve;
  if (!spec_.serve) plan_spec.cwd = spec_.policy.cwd;
  SRT_ASSIGN_OR_RETURN(UniqueFd plan, sys::SealedMemfd("srt-init-plan", EncodeInitPlan(plan_spec)));
  bwrap::Layout layout;
  layout.args_fd = args_target;
  layout.init_exe_fd = exe_target;
  layout.init_ctl_fd = ctl_target;
  layout.init_plan_fd = plan_target;
  layout.caller_is_root = geteuid() == 0;
  layout.resolv_conf_fd = resolv_target;
  layout.masked_file_fds = masked_targets;
  layout.tmpfs_bytes = spec_.tmpfs_bytes;
  // srt-agent's plan, but for its shows, within its limit (a policy of some 16,000 denied files).
  agent_ops_ = GatherAgentOps(spec_.policy);
  if (agent_ops_.count > wire::kMaxAgentOps) {
    return MakeError(Errc::kInvalidArgument,
                     "the policy needs " + std::to_string(agent_ops_.count) +
                         " operations of srt-agent (denied and masked files, protected paths), "
                         "more than its limit of " +
                         std::to_string(wire::kMaxAgentOps));
  }
  if (AgentMountsOnTheHost()) {
    // As many as its plan (a show and at most one seal each) and its descriptors have room for.
    rlimit nofile{};
    const size_t fds = getrlimit(RLIMIT_NOFILE, &nofile) != 0 ? 0
                       : nofile.rlim_cur == RLIM_INFINITY     ? wire::kMaxShows
                       : nofile.rlim_cur > wire::kAgentOwnFds ? nofile.rlim_cur - wire::kAgentOwnFds
                                                              : 0;
    layout.agent_shows = std::min(fds, (wire::kMaxAgentOps - agent_ops_.count) / 2);
  }
  // bwrap can only keep a capability srt's bounding set still has (a container may have
  // dropped it; then `unshare -r` fails inside as the kernel wants).
  layout.keep_setfcap = layout.caller_is_root && spec_.policy.allow_nested_user_namespaces &&
                        prctl(PR_CAPBSET_READ, CAP_SETFCAP, 0, 0, 0) == 1;
  UniqueFd resolv_fd;
  if (resolv) {
    SRT_ASSIGN_OR_RETURN(resolv_fd, sys::SealedMemfd("srt-resolv-conf", spec_.resolv_conf));
  }
  // Masked credential files: bwrap copies each into a file of its own and binds it read-only
  // over the real one, so nothing on the host holds the fake and nothing there can be swapped.
  std::vector<UniqueFd> masked_fds;
  for (const std::string& content : spec_.masked_file_contents) {
    SRT_ASSIGN_OR_RETURN(UniqueFd fd, sys::SealedMemfd("srt-masked-file", content));
    masked_fds.push_back(std::move(fd));
  }
  bwrap::Invocation inv = bwrap::BuildInvocation(spec_.policy, layout);
  agent_shows_ = std::move(inv.agent_shows.paths);
  agent_seals_ = std::move(inv.agent_shows.seals);
  SRT_ASSIGN_OR_RETURN(UniqueFd args,
                       sys::SealedMemfd("srt-bwrap-args", bwrap::SerializeArgs(inv.args)));
  if (spec_.debug) {
    std::vector<std::string> shown(inv.argv.begin(), inv.argv.begin() + 1);
    shown.insert(shown.end(), inv.args.begin(), inv.args.end());
    shown.insert(shown.end(), inv.argv.begin() + 3, inv.argv.end());
    Debug("bwrap command (options passed through --args " + std::to_string(args_target) +
          "): " + strings::ShellJoin(shown));
    if (!agent_shows_.empty()) {
      Debug("srt-agent shows " + std::to_string(agent_shows_.size()) +
            " host entries read-only in bwrap's place: " + strings::ShellJoin(agent_shows_));
    }
    Debug("command: " + strings::ShellJoin(spec_.argv));
  }

  sys::SpawnRequest req;
  req.path = spec_.bwrap_path;
  req.argv = inv.argv;
  req.env = spec_.env;
  if (!inner.empty()) req.env.push_back(std::string(kInnerCgroupFdsVariable) + "=" + inner_numbers);
  req.fds = {{relay_->CommandFd(0), 0},     {relay_->CommandFd(1), 1},
             {diag.second.get(), 2},        {relay_->CommandFd(2), stderr_target},
             {plan.get(), plan_target},     {ctl.second.get(), ctl_target},
             {init_exe_.get(), exe_target}, {args.get(), args_target}};
  if (resolv_fd) req.fds.push_back({resolv_fd.get(), resolv_target});
  for (size_t i = 0; i < masked_fds.size(); ++i) {
    req.fds.push_back({masked_fds[i].get(), masked_targets[i]});
  }
  for (size_t i = 0; i < spec_.keep_fds.size(); ++i) {
    req.fds.push_back({relay_->CommandFd(3 + i), spec_.keep_fds[i]});
  }
  for (const sys::FdMapping& m : inner) req.fds.push_back(m);
  // A terminal sends Ctrl-C, Ctrl-\\ and hang-ups to the caller's whole foreground process
  // group. bwrap (and with it the sandbox, by --die-with-parent) must not die of them: srt
  // takes them and relays them to the command, which then gets each exactly once.
  req.new_process_group = true;
  // bwrap joins the sandbox's cgroups before it executes, so every process it forks (srt-init,
  // the command) is born inside: moving it afterwards would leave early children behind.
  if (spec_.cgroups) req.join_cgroup_fds = spec_.cgroups->procs_fds();
  SRT_ASSIGN_OR_RETURN(bwrap_pid_, sys::Spawn(req));
  SRT_ASSIGN_OR_RETURN(bwrap_pidfd_, sys::PidfdOpen(bwrap_pid_));
  if (spec_.cgroups && !spec_.cgroups->inner_procs_fds().empty()) StartRejoin();
  ctl_ = std::move(ctl.first);
  diag_ = std::move(diag.first);
  return relay_->Started();
}

void Launch::ReadDiagnostics() {
  char buf[4096];
  ssize_t n = read(diag_.get(), buf, sizeof buf);
  if (n <= 0) {
    diag_.reset();
    return;
  }
  if (diagnostics_.size() < kMaxDiagnostics) diagnostics_.append(buf, static_cast<size_t>(n));
}

// With an inner cgroup: Cgroups::Rejoin(bwrap) while bwrap sets up, so that the command's first
// move into the inner cgroup finds the kernel's grace period already waited out. A thread of
// its own, since the write blocks for that grace period; with all signals blocked, as the
// relay's pumps. Without the thread nothing is lost but the time.
void Launch::StartRejoin() {
  cgroup::Cgroups* cgroups = spec_.cgroups.get();
  const pid_t member = bwrap_pid_;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  Result<std::thread> thread = StartThread("start a thread", [cgroups, member] {
    // Its outcome changes nothing the sandbox has: bwrap is in its cgroups either way.
    (void)cgroups->Rejoin(member);
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (thread) rejoin_ = std::move(*thread);
}

void Launch::ReapBwrap() {
  if (bwrap_pid_ < 0 || bwrap_status_ >= 0) return;
  // Before bwrap is reaped: until then its pid, which the rejoin writes, names no other process.
  if (rejoin_.joinable()) rejoin_.join();
  int st = 0;
  while (waitpid(bwrap_pid_, &st, 0) < 0 && errno == EINTR) {
  }
  bwrap_status_ = st;
  bwrap_pidfd_.reset();
}

void Launch::ReapAgent() {
  if (agent_pid_ < 0 || agent_status_ >= 0) return;
  int st = 0;
  while (waitpid(agent_pid_, &st, 0) < 0 && errno == EINTR) {
  }
  agent_status_ = st;
  agent_pidfd_.reset();
}

Error Launch::BwrapFailure() {
  ReapBwrap();
  while (diag_) ReadDiagnostics();
  HostFacts facts;
  facts.unprivileged_userns_clone = ReadSysctl("/proc/sys/kernel/unprivileged_userns_clone");
  facts.max_user_namespaces = ReadSysctl("/proc/sys/user/max_user_namespaces");
  facts.apparmor_restrict_unprivileged_userns =
      ReadSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  struct stat st;
  facts.in_container = stat("/.dockerenv", &st) == 0 || stat("/run/.containerenv", &st) == 0;
  facts.caller_is_root = geteuid() == 0;
  int code = WIFEXITED(bwrap_status_) ? WEXITSTATUS(bwrap_status_) : 128 + WTERMSIG(bwrap_status_);
  return MakeError(Errc::kUnsupported, DiagnoseBwrapFailure(diagnostics_, code, facts));
}

Result<void> Launch::SpawnAgent() {
  SRT_ASSIGN_OR_RETURN(auto actl, sys::SeqpacketPair());
  constexpr int kCtl = 3, kPlan = 4, kExe = 5;
  // Either way the command sees only its own pid namespace, srt's PID 1 hidden in it.
  const wire::ProcMode proc =
      spec_.policy.weaker_nested_sandbox ? wire::kProcPrivate : wire::kProcHidePid;
  std::string plan =
      EncodeAgentPlan(proc, spec_.tmpdir, agent_ops_.protections, spec_.net_sockets, spec_.guard,
                      agent_ops_.covers, agent_ops_.masks, spec_.policy.symlinked_files,
                      spec_.serve ? wire::kMaxPtys : 0, agent_shows_, agent_seals_);
  SRT_ASSIGN_OR_RETURN(UniqueFd plan_fd, sys::SealedMemfd("srt-agent-plan", plan));
  sys::SpawnRequest req;
  req.path = "/proc/self/fd/" + std::to_string(kExe);
  req.name = "srt-init agent";
  req.argv = {"srt-init", "agent", std::to_string(kCtl), std::to_string(kPlan)};
  req.fds = {{actl.second.get(), kCtl}, {plan_fd.get(), kPlan}, {init_exe_.get(), kExe}};
  // A session of its own from before its execve: a Ctrl-C at the caller's terminal (or a
  // hang-up) in the moment before it could call setsid itself killed it, and the launch failed
  // with "srt-agent exited before the sandbox was ready" rather than as interrupted.
  req.new_session = true;
  SRT_ASSIGN_OR_RETURN(agent_pid_, sys::Spawn(req));
  SRT_ASSIGN_OR_RETURN(agent_pidfd_, sys::PidfdOpen(agent_pid_));
  agent_ctl_ = std::move(actl.first);
  return Ok();
}

// What srt sends PID 1 and the agent while the sandbox starts. A busy srt can find a message and
// the end of the other peer at once (PID 1's hello and the agent's exit): it takes the message,
// and the peer that is gone refuses what srt sends next (EPIPE, ECONNRESET). The launch then fails
// as it does when srt sees that end first, never as "send to srt-agent: Broken pipe".
Result<void> Launch::SendInit(uint32_t type, int32_t value, int fd) {
  Result<void> sent = Send("srt-init", ctl_.get(), type, value, fd);
  if (!sent && PeerGone(sent.error())) return BwrapFailure();  // PID 1 never started or died
  return sent;
}

Result<void> Launch::SendAgent(uint32_t type, int fd) {
  Result<void> sent = Send("srt-agent", agent_ctl_.get(), type, 0, fd);
  if (!sent && PeerGone(sent.error())) return AgentExited();
  return sent;
}

Result<void> Launch::AwaitHello() {
  for (;;) {
    std::vector<int> fds = {ctl_.get(), bwrap_pidfd_.get(), diag_ ? diag_.get() : -1,
                            agent_ctl_.get()};
    SRT_ASSIGN_OR_RETURN(std::vector<short> ev, PollAll(fds));
    if (ev[2]) ReadDiagnostics();
    if (ev[0]) {
      SRT_ASSIGN_OR_RETURN(Message m, Receive(ctl_.get()));
      if (m.type == wire::kMsgHello && m.fd && !init_pidfd_) {
        init_pidfd_ = std::move(m.fd);
        Debug("srt-init is running as the sandbox's PID 1");
        if (!relay_->terminal_slots()) return Ok();
        continue;  // the terminal's master comes next
      }
      if (m.type == wire::kMsgTerminal && m.fd && init_pidfd_) {
        // Its modes and size are set before the go-ahead: the command may look at once.
        SRT_RETURN_IF_ERROR(relay_->AttachTerminal(std::move(m.fd)));
        Debug("the command has a terminal of its own, relayed to and from the caller's");
        return Ok();
      }
      if (m.type == wire::kMsgFailed) return FailureFrom(m, "srt-init");
      if (m.type == 0) return BwrapFailure();  // init never started or died: bwrap says why
      return MakeError(Errc::kProtocol, "srt-init sent an unexpected message before hello");
    }
    if (ev[1]) return BwrapFailure();
    if (ev[3]) {
      // The agent speaks before the sandbox is handed over only to report a failure.
      SRT_ASSIGN_OR_RETURN(Message m, Receive(agent_ctl_.get()));
      if (m.type == wire::kMsgFailed) return FailureFrom(m, "srt-agent");
      return AgentExited();
    }
  }
}

Result<void> Launch::AwaitAgent() {
  SRT_RETURN_IF_ERROR(SendAgent(wire::kMsgSandbox, init_pidfd_.get()));
  // The agent first (its work is the longer); PID 1 meanwhile forks the command, which loads
  // these and waits for the go-ahead. The message says where the deny filter ends in the memfd.
  SRT_RETURN_IF_ERROR(
      SendInit(wire::kMsgFilters, static_cast<int32_t>(deny_bytes_), filters_fd_.get()));
  filters_fd_.reset();
  // The agent makes the proxy's sockets first: they are served (routes installed, listeners
  // added) as soon as the last one is in, while the agent is still mounting.
  std::vector<UniqueFd> sockets(spec_.net_sockets.size());
  size_t sockets_in = 0;  // all in: attached
  for (;;) {
    std::vector<int> fds = {agent_ctl_.get(), agent_pidfd_.get(), bwrap_pidfd_.get(), ctl_.get()};
    SRT_ASSIGN_OR_RETURN(std::vector<short> ev, PollAll(fds));
    if (ev[3]) {
      // PID 1 speaks now only to pass on the waiting command's listener, or to report a failure.
      SRT_ASSIGN_OR_RETURN(Message m, Receive(ctl_.get()));
      if (m.type == wire::kMsgGuard) {
        SRT_RETURN_IF_ERROR(ForwardGuardListener(std::move(m.fd)));
        continue;
      }
      if (m.type == wire::kMsgFailed) return FailureFrom(m, "srt-init");
      if (m.type == 0) return BwrapFailure();
      return MakeError(Errc::kProtocol, "srt-init sent an unexpected message before the go-ahead");
    }
    if (ev[0]) {
      SRT_ASSIGN_OR_RETURN(Message m, Receive(agent_ctl_.get()));
      if (m.type == wire::kMsgSocket) {
        int32_t index = IntAt(m, 0);
        if (!m.fd || index < 0 || static_cast<size_t>(index) >= sockets.size() ||
            sockets[static_cast<size_t>(index)]) {
          return MakeError(Errc::kProtocol, "srt-agent sent an unexpected socket");
        }
        sockets[static_cast<size_t>(index)] = std::move(m.fd);
        if (++sockets_in == sockets.size()) {
          // Emptied: a socket sent after the last is unexpected.
          std::vector<UniqueFd> all = std::exchange(sockets, {});
          if (spec_.on_network) SRT_RETURN_IF_ERROR(spec_.on_network(std::move(all)));
          Debug("the proxy serves the " + std::to_string(sockets_in) +
                " sockets made in the sandbox's network namespace");
        }
        continue;
      }
      if (m.type == wire::kMsgPtys && spec_.serve && m.fd && !ptys_) {
        ptys_ = std::move(m.fd);
        continue;
      }
      if (m.type == wire::kMsgAgentReady) {
        if (spec_.serve && !ptys_) {
          return MakeError(Errc::kProtocol, "srt-agent did not make the commands' terminals");
        }
        if (sockets_in != spec_.net_sockets.size()) {
          return MakeError(Errc::kProtocol, "srt-agent did not make every socket");
        }
        Debug("srt-agent: /proc hidden, " + std::to_string(spec_.policy.protections.size()) +
              " protections applied");
        return Ok();
      }
      if (m.type == wire::kMsgFailed) return FailureFrom(m, "srt-agent");
      if (m.type == 0) return AgentExited();
    } else if (ev[1]) {
      return AgentExited();
    }
    if (ev[2]) return BwrapFailure();
  }
}

Result<void> Launch::ForwardGuardListener(UniqueFd listener) {
  if (!listener) return MakeError(Errc::kProtocol, "srt-init sent no guard listener");
  Result<void> sent =
      Send("srt-agent", agent_ctl_.get(), wire::kMsgGuardListener, 0, listener.get());
  if (sent) {
    Debug("the write guard is serving the command's filter");
    return Ok();
  }
  // A command that ends before its first guarded call (a setuid chmod refused by the filter
  // itself) takes PID 1 down with it, and the guard, seeing PID 1 gone, stops before the
  // listener reaches it. Nothing is left to guard then; were the command still running, its
  // guarded calls fail with ENOSYS once the listener's last copy (this one) closes, so going on
  // fails closed either way.
  if (!PeerGone(sent.error())) return std::move(sent).error();
  Debug("the write guard ended before the command's filter reached it");
  return Ok();
}

Result<void> Launch::AwaitStart() {
  SRT_RETURN_IF_ERROR(SendInit(wire::kMsgGo));
  if (spec_.serve) {
    // Before any command's kMsgExecTerminalOpen, which comes on the same socket.
    SRT_RETURN_IF_ERROR(SendInit(wire::kMsgServePtys, 0, ptys_.get()));
    ptys_.reset();
  }
  for (;;) {
    std::vector<int> fds = {ctl_.get(), bwrap_pidfd_.get()};
    SRT_ASSIGN_OR_RETURN(std::vector<short> ev, PollAll(fds));
    if (ev[0]) {
      SRT_ASSIGN_OR_RETURN(Message m, Receive(ctl_.get()));
      switch (m.type) {
        case wire::kMsgStarted:
          Debug("command started (pid " + std::to_string(IntAt(m, 0)) + " in the sandbox)");
          // It leads the foreground job of its terminal since before its execve.
          return relay_->CommandInForeground();
        case wire::kMsgServing:
          if (!spec_.serve) break;
          Debug("the warm sandbox is ready for commands");
          return Ok();
        case wire::kMsgGuard:
          SRT_RETURN_IF_ERROR(ForwardGuardListener(std::move(m.fd)));
          continue;
        case wire::kMsgExecFailed:
          exec_errno_ = IntAt(m, 0);
          Debug(std::string("command could not be executed: ") + ErrnoText(exec_errno_));
          return Ok();
        case wire::kMsgFailed:
          return FailureFrom(m, "srt-init");
        case 0:
          return BwrapFailure();
        default:
          return MakeError(Errc::kProtocol, "srt-init sent an unexpected message at start");
      }
      return MakeError(Errc::kProtocol, "srt-init sent an unexpected message at start");
    }
    if (ev[1]) return BwrapFailure();
  }
}

Result<void> Launch::Signal(int signal) {
  // A warm sandbox has no command of its own: a signal for it ends it.
  if (spec_.serve) return signal == SIGCONT || signal == SIGWINCH ? Ok() : Stop();
  // Another thread may be inside Wait(), which closes ctl_ when srt-init is done.
  std::lock_guard<std::mutex> lock(ctl_mu_);
  if (finished_ || !ctl_) return Ok();
  return Send("srt-init", ctl_.get(), wire::kMsgSignal, signal);
}

Result<ExitStatus> Launch::Wait(int forward_signals_fd) {
  if (finished_) return MakeError(Errc::kInvalidArgument, "Wait() called twice");
  SRT_RETURN_IF_ERROR(RelayUntilSandboxEnds(forward_signals_fd));
  {
    // Ended: Signal(), from any thread, no longer sends to srt-init; ~Launch aborts nothing.
    std::lock_guard<std::mutex> lock(ctl_mu_);
    finished_ = true;
  }
  // A warm sandbox's commands ended with it. srt-init's end of the socket may not have been
  // read yet (bwrap's exit can end the loop first), and every Execution still waiting would
  // otherwise wait until ~Launch: srt --serve joins its sessions before that, and hung.
  if (spec_.serve) EndExecs();
  // Everything the command wrote is passed on before srt says anything more.
  relay_->Finish();
  PassOnDiagnostics();
  ExitStatus status = CommandExitStatus();
  // Last: the sandbox's processes are all gone, so the cgroups can be emptied and removed.
  if (spec_.cgroups) status.oom_killed = RemoveCgroups();
  if (agent_failure_) return std::move(*agent_failure_);
  return status;
}

// Serves the running sandbox until srt-init is done (or bwrap, whose monitor outlives the
// sandbox's PID 1, exited) and bwrap and the agent are reaped: srt-init's and the agent's
// reports, bwrap's diagnostics, and the caller's signals relayed to the command. Fails only
// when polling or srt-init's socket fails (then ~Launch aborts the sandbox).
Result<void> Launch::RelayUntilSandboxEnds(int forward_signals_fd) {
  bool init_done = false;
  while (!(init_done && bwrap_status_ >= 0 && (agent_pid_ < 0 || agent_status_ >= 0))) {
    std::vector<int> fds = {ctl_ ? ctl_.get() : -1,
                            bwrap_pidfd_ ? bwrap_pidfd_.get() : -1,
                            diag_ ? diag_.get() : -1,
                            agent_ctl_ ? agent_ctl_.get() : -1,
                            agent_pidfd_ ? agent_pidfd_.get() : -1,
                            init_done ? -1 : forward_signals_fd};
    SRT_ASSIGN_OR_RETURN(std::vector<short> ev, PollAll(fds));
    if (ev[0]) {
      SRT_ASSIGN_OR_RETURN(bool closed, ReadInitReport());
      if (closed) init_done = true;
    }
    if (ev[2]) ReadDiagnostics();
    if (ev[1]) {
      ReapBwrap();
      Debug("bwrap exited");
      init_done = true;  // bwrap's monitor exits only after the sandbox's PID 1
    }
    if (ev[3]) ReadAgentReport();
    if (ev[4]) {
      ReapAgent();
      Debug("srt-agent exited");
    }
    if (ev[5]) RelayCallerSignal(forward_signals_fd);
  }
  return Ok();
}

// Reads one message of srt-init's while the command runs: its exit status, a terminal stop
// (handed to on_terminal_stop, then the command is continued) or a failure (debug only).
// Returns true once srt-init has closed its end (ctl_ is then closed too).
Result<bool> Launch::ReadInitReport() {
  SRT_ASSIGN_OR_RETURN(Message m, Receive(ctl_.get()));
  if (spec_.serve && m.type != 0 && HandleExecReport(m.type, m.payload, std::move(m.fd))) {
    return false;
  }
  if (m.type == wire::kMsgExited) {
    init_reported_exit_ = true;
    command_status_ = IntAt(m, 0);
    Debug("the command ended; the sandbox is empty (wait status " +
          std::to_string(command_status_) + ")");
    if (spec_.on_sandbox_empty) spec_.on_sandbox_empty();
  } else if (m.type == wire::kMsgStopped) {
    // Ctrl-Z on the command's terminal: the caller's shell gets its terminal back (the
    // srt command stops itself), and the command goes on once srt is continued.
    Debug("the command was stopped by signal " + std::to_string(IntAt(m, 0)));
    relay_->Suspend();
    if (spec_.on_terminal_stop) spec_.on_terminal_stop();
    relay_->Resume();
    (void)Signal(SIGCONT);
  } else if (m.type == wire::kMsgFailed) {
    Debug(FailureFrom(m, "srt-init").message());
  } else if (m.type == 0) {
    {
      std::lock_guard<std::mutex> lock(ctl_mu_);
      ctl_.reset();
    }
    if (spec_.serve) EndExecs();
    return true;
  }
  return false;
}

// Reads one message of the agent's (the write guard's refusals and its summary, shown at debug
// level); closes agent_ctl_ at its end or when it cannot be read.
void Launch::ReadAgentReport() {
  Result<Message> m = Receive(agent_ctl_.get());
  if (!m || m->type == 0) {
    agent_ctl_.reset();
  } else if (m->type == wire::kMsgGuardDenied) {
    Debug(GuardRefusal(*m));
  } else if (m->type == wire::kMsgFailed) {
    if (!agent_failure_) agent_failure_ = FailureFrom(*m, "srt-agent");
  } else if (m->type == wire::kMsgGuardDone) {
    Debug("the write guard handled " + std::to_string(IntAt(*m, 0)) + " calls and refused " +
          std::to_string(IntAt(*m, 1)));
  }
}

// Reads one signal from the caller's signalfd and relays it to the command (SIGWINCH resizes
// the command's own terminal instead). Remembers the first relayed signal for the exit status.
void Launch::RelayCallerSignal(int forward_signals_fd) {
  signalfd_siginfo info;
  if (read(forward_signals_fd, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) return;
  int sig = static_cast<int>(info.ssi_signo);
  if (spec_.serve) {
    // A warm sandbox's own signals end it; its commands get theirs through Execution::Signal.
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
      if (!relayed_signal_) relayed_signal_ = sig;
      Debug("signal " + std::to_string(sig) + ": ending the warm sandbox");
      (void)Stop();
    }
    return;
  }
  if (sig == SIGWINCH && relay_->terminal_slots()) {
    relay_->Resize();  // the kernel tells the command's foreground job
    return;
  }
  // SIGCONT: srt was continued (`fg`); the terminal goes back to raw mode.
  if (sig == SIGCONT) relay_->Resume();
  if (!relayed_signal_ && sig != SIGCONT && sig != SIGWINCH) relayed_signal_ = sig;
  Debug("relaying signal " + std::to_string(sig) + " to the command");
  (void)Signal(sig);
}

// bwrap spoke after the sandbox started; pass it on rather than swallow it.
void Launch::PassOnDiagnostics() {
  if (diagnostics_.empty()) return;
  (void)!write(spec_.stderr_fd, diagnostics_.data(), diagnostics_.size());
}

// The command's exit status as srt-init reported it, or else bwrap's (a sandbox that ended
// without a word from srt-init is a set-up failure, never a success).
ExitStatus Launch::CommandExitStatus() const {
  ExitStatus status;
  status.relayed_signal = relayed_signal_;
  status.exec_errno = exec_errno_;
  int st = init_reported_exit_ ? command_status_ : bwrap_status_;
  if (WIFSIGNALED(st)) {
    status.signal = WTERMSIG(st);
    status.code = 128 + status.signal;
  } else {
    status.code = WEXITSTATUS(st);
  }
  if (!init_reported_exit_ && status.code == 0) status.code = kExitSetupFailure;
  return status;
}

// Empties and removes the sandbox's cgroups (a failure is only a debug line); returns whether
// the OOM killer killed one of its processes, which must be read before they go.
bool Launch::RemoveCgroups() {
  bool oom_killed = spec_.cgroups->OomKilled();
  if (oom_killed) Debug("the OOM killer killed a process of the sandbox (memory limit)");
  Result<void> removed = spec_.cgroups->Destroy();
  if (!removed) Debug(removed.error().message() + ", ignoring");
  return oom_killed;
}

void Launch::Abort() {
  if (bwrap_pidfd_) syscall(SYS_pidfd_send_signal, bwrap_pidfd_.get(), SIGKILL, nullptr, 0);
  // bwrap's own child may still be in its set-up, waiting for bwrap before it arms its death
  // signal: it would wait forever. It is in bwrap's process group until it starts the sandbox's
  // session, and that group cannot have been reused while bwrap is not reaped.
  if (bwrap_pid_ > 0 && bwrap_status_ < 0) kill(-bwrap_pid_, SIGKILL);
  std::lock_guard<std::mutex> lock(ctl_mu_);
  ctl_.reset();        // srt-init exits on EOF if it is still waiting for its go-ahead
  agent_ctl_.reset();  // the agent removes the TMPDIR on EOF if it has no sandbox yet
  ReapBwrap();
  ReapAgent();     // it removes the TMPDIR once the sandbox's PID 1 is gone
  relay_.reset();  // the sandbox is gone: its pumps end, the caller's terminal is restored
  finished_ = true;
  if (spec_.serve) EndExecs();
  if (spec_.cgroups) (void)spec_.cgroups->Destroy();
}

Launch::~Launch() {
  if (!finished_) Abort();
  // ReapBwrap joins it on every way out; this only keeps std::thread from ending srt.
  if (rejoin_.joinable()) rejoin_.join();
}

}  // namespace srt::launch
