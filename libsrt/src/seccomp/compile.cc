// SPDX-License-Identifier: Apache-2.0
// seccomp/compile: the rule table and its translation into one multi-architecture BPF program.
// Runs at build time (generate_tables.cc) and in tests; srt itself serves the result (filter.cc).
//
// Shape: one libseccomp context per architecture (native first, then its compat ABIs), each
// holding only the rules whose syscall exists on that architecture, merged into one context
// and exported with seccomp_export_bpf() into a memfd that we read back.
//
// Why one context per architecture instead of one context with every architecture added:
// a syscall that is missing on one architecture (socketcall on x86_64, umount on x86_64 and
// aarch64) must be skipped there and installed elsewhere; per-architecture contexts make that
// an explicit decision of ours (ExistsOn) rather than a side effect of libseccomp's translation.
//
// libseccomp quirk worth knowing (seen in 2.5.4's abi_rule_add): on i386 every rule on a socket
// syscall is also "multiplexed" onto socketcall(2) with arg0 replaced by the SYS_* call number,
// keeping the other argument comparisons. For socket() that yields an unconditional
// socketcall(SYS_SOCKET) rule (which we want anyway, see below); for socketpair() it yields a
// meaningless comparison of socketcall's *pointer* argument, which is harmless only because
// whenever socketpair rules are present, socketcall(SYS_SOCKETPAIR) is denied outright.
#include "seccomp/compile.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/net.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "base/system_text.h"
#include "base/unique_fd.h"
#include "init_protocol/wire.h"

namespace srt::seccomp {
namespace {

// ---------------------------------------------------------------------------------------------
// The rule table (pure data).

// (args[arg] & mask) == value. The only comparison the table uses: with a mask whose upper 32
// bits are zero, libseccomp compares the low word only, which is exactly what the kernel sees of
// an `int`/`unsigned int` argument.
struct ArgMatch {
  unsigned int arg;
  std::uint64_t mask;
  std::uint64_t value;
};

// One libseccomp rule: the call matches if every ArgMatch holds (no ArgMatch: every call).
struct SyscallRule {
  const char* name;
  std::vector<ArgMatch> match;
  // For syscalls newer than libseccomp knows: the number of the generic table every
  // architecture shares since Linux 5.1 (x32 adds __X32_SYSCALL_BIT); 0 = resolve by name.
  int generic_nr = 0;
};

// One logical rule: a call matching any of `calls` gets `action` (SECCOMP_RET_* encoding, which
// libseccomp's SCMP_ACT_* share: an errno, or SECCOMP_RET_USER_NOTIF for the write guard).
struct Rule {
  std::string description;
  std::uint32_t action;
  std::vector<SyscallRule> calls;
};

constexpr std::uint64_t kLow32 = 0xffffffffULL;
// SOCK_TYPE_MASK from include/linux/net.h: the type without SOCK_CLOEXEC/SOCK_NONBLOCK.
constexpr std::uint64_t kSockTypeMask = 0xf;

// Namespace flags that unshare(2) may be refused. clone(2) gets the same list minus CLONE_NEWTIME:
// 0x80 lies inside CSIGNAL, the exit-signal byte of clone's flags, so clone(SIGxxx=0x80|...) would
// be misread; a new time namespace is only reachable through unshare or clone3 anyway.
struct NsFlag {
  std::uint64_t bit;
  const char* name;
};
constexpr NsFlag kNsFlags[] = {
    {CLONE_NEWNS, "CLONE_NEWNS"},     {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"},
    {CLONE_NEWUTS, "CLONE_NEWUTS"},   {CLONE_NEWIPC, "CLONE_NEWIPC"},
    {CLONE_NEWUSER, "CLONE_NEWUSER"}, {CLONE_NEWPID, "CLONE_NEWPID"},
    {CLONE_NEWNET, "CLONE_NEWNET"},   {CLONE_NEWTIME, "CLONE_NEWTIME"},
};

std::string JoinNsFlags(bool with_time) {
  std::string out;
  for (const NsFlag& f : kNsFlags) {
    if (!with_time && f.bit == CLONE_NEWTIME) continue;
    if (!out.empty()) out += '|';
    out += f.name;
  }
  return out;
}

Rule Deny(std::string description, int err, std::vector<SyscallRule> calls) {
  return Rule{std::move(description), SCMP_ACT_ERRNO(static_cast<std::uint32_t>(err)),
              std::move(calls)};
}

Rule DenyAll(const char* name, int err = EPERM) {
  std::string description = std::string(name) + " -> " + (err == ENOSYS ? "ENOSYS" : "EPERM");
  return Deny(std::move(description), err, {SyscallRule{name, {}}});
}

// personality(2) takes an `unsigned int`; only PER_LINUX (0), PER_LINUX32 (8) and the query
// value 0xffffffff are allowed. libseccomp has no masked "not equal" and allows one comparison
// per argument per rule, so "x not in {0, 8, 0xffffffff}" is written as a union of masked
// equalities over the low 32 bits:
//   A_i = { bit i set, bit (i+1) mod 32 clear }   for i != 3      (31 rules)
//   B   = { bits 2 and 3 set, bit 4 clear }                       (1 rule)
// Every A_i and B excludes 0 (a bit must be set), 0xffffffff (a bit must be clear) and 8 (A_i
// needs a bit other than 3, B needs bit 2). Conversely any x other than 0 and 0xffffffff has a
// cyclic "1 then 0" step at some bit i; if some such i != 3, x is in A_i; otherwise x is one
// cyclic run of ones ending at bit 3: either 8 itself or a run of length >= 2, which is in B.
std::vector<SyscallRule> PersonalityDenyRules() {
  std::vector<SyscallRule> rules;
  for (unsigned int i = 0; i < 32; ++i) {
    if (i == 3) continue;
    const std::uint64_t set = std::uint64_t{1} << i;
    const std::uint64_t clear = std::uint64_t{1} << ((i + 1) % 32);
    rules.push_back({"personality", {{0, set | clear, set}}});
  }
  rules.push_back({"personality", {{0, 0x1c, 0x0c}}});
  return rules;
}

// clone(2)'s flags argument: arg0 everywhere we build filters, arg1 on s390 (kept for the
// native-only fallback on such hosts).
unsigned int CloneFlagsArg(std::uint32_t arch) {
  return (arch == SCMP_ARCH_S390 || arch == SCMP_ARCH_S390X) ? 1U : 0U;
}

std::vector<Rule> MakeRules(const FilterOptions& options, std::uint32_t arch) {
  std::vector<Rule> rules;
  const ArgMatch family_unix{0, kLow32, AF_UNIX};

  // --- Sockets. AF_UNIX reaches host daemons (docker.sock, D-Bus, ssh-agent); AF_VSOCK reaches
  // the hypervisor (WSL2 interop). Sockets that already exist (inherited fds) are not affected.
  if (!options.allow_unix_sockets) {
    rules.push_back(Deny("socket(AF_UNIX) -> EPERM", EPERM, {{"socket", {family_unix}}}));
  }
  rules.push_back(Deny("socket(AF_VSOCK) -> EPERM", EPERM, {{"socket", {{0, kLow32, AF_VSOCK}}}}));
  if (!options.allow_unix_sockets) {
    // A connected AF_UNIX SOCK_STREAM pair reaches nobody outside, and plenty of programs need
    // one; every other type is refused. Written as "type & 0xf != SOCK_STREAM" (four masked
    // equalities) rather than a list of DGRAM and SEQPACKET, because af_unix silently turns
    // SOCK_RAW into SOCK_DGRAM.
    static_assert(SOCK_STREAM == 1 && (0x1 | 0x2 | 0x4 | 0x8) == kSockTypeMask);
    rules.push_back(Deny("socketpair(AF_UNIX, type & 0xf != SOCK_STREAM) -> EPERM", EPERM,
                         {
                             {"socketpair", {family_unix, {1, 0x2, 0x2}}},
                             {"socketpair", {family_unix, {1, 0x4, 0x4}}},
                             {"socketpair", {family_unix, {1, 0x8, 0x8}}},
                             {"socketpair", {family_unix, {1, 0x1, 0x0}}},
                         }));
  }
  // i386 socketcall(2): the family and type live in memory behind arg1, which seccomp cannot
  // read, so the whole call is refused. 32-bit programs whose libc uses socketcall (glibc on
  // i386 does unless built for kernel >= 4.3) cannot create sockets at all; the direct i386
  // socket/socketpair syscalls are filtered by family like the native ones.
  // SYS_SOCKET stays refused with allow_unix_sockets: AF_VSOCK must stay denied and only the
  // pointer-free direct syscall can tell the families apart. (libseccomp would add the same rule
  // on its own when multiplexing the AF_VSOCK rule, see the top of this file.)
  static_assert(SYS_SOCKET == 1 && SYS_SOCKETPAIR == 8);
  rules.push_back(Deny("socketcall(SYS_SOCKET) -> EPERM [i386; family unreadable]", EPERM,
                       {{"socketcall", {{0, kLow32, SYS_SOCKET}}}}));
  if (!options.allow_unix_sockets) {
    rules.push_back(Deny("socketcall(SYS_SOCKETPAIR) -> EPERM [i386; type unreadable]", EPERM,
                         {{"socketcall", {{0, kLow32, SYS_SOCKETPAIR}}}}));
  }

  // --- io_uring: its SOCKET/CONNECT/OPENAT operations run without passing through seccomp.
  for (const char* name : {"io_uring_setup", "io_uring_enter", "io_uring_register"}) {
    rules.push_back(DenyAll(name));
  }

  // --- Namespaces and mounts: a nested user+mount namespace could remount or unmask paths.
  if (!options.allow_namespaces) {
    Rule unshare_rule =
        Deny("unshare(any of " + JoinNsFlags(/*with_time=*/true) + ") -> EPERM", EPERM, {});
    Rule clone_rule =
        Deny("clone(any of " + JoinNsFlags(/*with_time=*/false) + ") -> EPERM", EPERM, {});
    for (const NsFlag& f : kNsFlags) {
      // unsigned long flags; a set bit is a set bit whatever the rest of the word holds.
      unshare_rule.calls.push_back({"unshare", {{0, f.bit, f.bit}}});
      if (f.bit != CLONE_NEWTIME) {
        clone_rule.calls.push_back({"clone", {{CloneFlagsArg(arch), f.bit, f.bit}}});
      }
    }
    rules.push_back(std::move(unshare_rule));
    rules.push_back(std::move(clone_rule));
    // clone3 passes its flags in memory; ENOSYS makes glibc (>= 2.34) fall back to clone, whose
    // flags the rule above can read.
    rules.push_back(DenyAll("clone3", ENOSYS));
    rules.push_back(DenyAll("setns"));
    for (const char* name :
         {"mount", "umount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen",
          "fsconfig", "fsmount", "fspick", "mount_setattr"}) {
      rules.push_back(DenyAll(name));
    }
    // open_tree with mount attributes (Linux 6.15), newer than libseccomp.
    rules.push_back(Deny("open_tree_attr -> EPERM", EPERM, {{"open_tree_attr", {}, 467}}));
  }

  // --- Privilege that would outlive the sandbox: a setuid or setgid bit on a file the command
  // may write (a root caller's copy of a shell) runs as the file's owner for every user of the
  // host afterwards. Every call that sets a mode is covered: the chmod family, and the calls
  // that create a file with a mode (open and openat only with O_CREAT or O_TMPFILE, where the
  // mode argument means something). mkdir needs no rule: it ignores both bits.
  {
    Rule setid = Deny(
        "setting S_ISUID or S_ISGID (chmod, fchmod, fchmodat, fchmodat2; creat, "
        "mknod, mknodat; open and openat with O_CREAT or O_TMPFILE) -> EPERM",
        EPERM, {});
    for (const std::uint64_t bit : {std::uint64_t{S_ISUID}, std::uint64_t{S_ISGID}}) {
      const auto mode = [bit](unsigned int arg) { return ArgMatch{arg, bit, bit}; };
      setid.calls.push_back({"chmod", {mode(1)}});
      setid.calls.push_back({"fchmod", {mode(1)}});
      setid.calls.push_back({"fchmodat", {mode(2)}});
      setid.calls.push_back({"fchmodat2", {mode(2)}, 452});
      setid.calls.push_back({"creat", {mode(1)}});
      setid.calls.push_back({"mknod", {mode(1)}});
      setid.calls.push_back({"mknodat", {mode(2)}});
      for (const std::uint64_t creating : {std::uint64_t{O_CREAT}, std::uint64_t{__O_TMPFILE}}) {
        setid.calls.push_back({"open", {{1, creating, creating}, mode(2)}});
        setid.calls.push_back({"openat", {{2, creating, creating}, mode(3)}});
      }
    }
    rules.push_back(std::move(setid));
  }
  // openat2 carries its flags and mode in memory, out of the filter's sight; ENOSYS makes its
  // few users (glibc's open never calls it) fall back to openat, which the rule above reads.
  rules.push_back(DenyAll("openat2", ENOSYS));
  if (options.deny_xattr_writes) {
    Rule xattr = Deny("setxattr, lsetxattr, fsetxattr, setxattrat -> EPERM", EPERM,
                      {{"setxattr", {}}, {"lsetxattr", {}}, {"fsetxattr", {}}});
    xattr.calls.push_back({"setxattrat", {}, 463});
    rules.push_back(std::move(xattr));
  }

  // --- Terminal injection: push keystrokes into the controlling tty (CVE-2017-5226) or use the
  // console's selection/paste (CVE-2023-28100). The request is an `unsigned int`: compared on
  // 32 bits, as the 64-bit compare was bypassable (CVE-2019-7303).
  rules.push_back(Deny("ioctl(TIOCSTI) -> EPERM", EPERM, {{"ioctl", {{1, kLow32, TIOCSTI}}}}));
  rules.push_back(Deny("ioctl(TIOCLINUX) -> EPERM", EPERM, {{"ioctl", {{1, kLow32, TIOCLINUX}}}}));

  // --- Kernel attack surface that is not namespaced, and other processes' memory.
  for (const char* name : {"keyctl", "add_key", "request_key", "bpf", "perf_event_open",
                           "userfaultfd", "ptrace", "process_vm_readv", "process_vm_writev"}) {
    rules.push_back(DenyAll(name));
  }

  // --- personality: READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE and friends weaken the process.
  static_assert(PER_LINUX == 0 && PER_LINUX32 == 8);
  rules.push_back(
      Deny("personality(x) unless x is 0 (PER_LINUX), 0x8 (PER_LINUX32) or "
           "0xffffffff (query) -> EPERM",
           EPERM, PersonalityDenyRules()));
  return rules;
}

// ---------------------------------------------------------------------------------------------
// The write guard's filter: the calls srt-init's agent judges and performs for the command.

struct GuardedCall {
  const char* name;
  wire::GuardOp op;
  // Notified only when one of these holds (empty: always); each is a single masked test.
  std::vector<ArgMatch> only_if;
  int generic_nr = 0;  // see SyscallRule::generic_nr
};

// A write intent (O_WRONLY or O_RDWR, O_CREAT, O_TRUNC) in an open flags argument; O_TMPFILE
// needs a write mode, so it is among them.
std::vector<ArgMatch> WriteIntent(unsigned int arg) {
  return {{arg, O_WRONLY, O_WRONLY},
          {arg, O_RDWR, O_RDWR},
          {arg, O_CREAT, O_CREAT},
          {arg, O_TRUNC, O_TRUNC}};
}
// An execute bit in a mode argument (the only chmod the guard judges: a hook made runnable).
std::vector<ArgMatch> ExecuteBit(unsigned int arg) {
  return {{arg, 0100, 0100}, {arg, 0010, 0010}, {arg, 0001, 0001}};
}

// Built on first use, not at load: a static initializer that throws (bad_alloc) cannot be caught.
const std::vector<GuardedCall>& GuardedCalls() {
  static const std::vector<GuardedCall> calls = {
      {"open", wire::kGuardOpen, WriteIntent(1)},
      {"openat", wire::kGuardOpenat, WriteIntent(2)},
      {"creat", wire::kGuardCreat, {}},
      {"mkdir", wire::kGuardMkdir, {}},
      {"mkdirat", wire::kGuardMkdirat, {}},
      {"mknod", wire::kGuardMknod, {}},
      {"mknodat", wire::kGuardMknodat, {}},
      {"symlink", wire::kGuardSymlink, {}},
      {"symlinkat", wire::kGuardSymlinkat, {}},
      {"link", wire::kGuardLink, {}},
      {"linkat", wire::kGuardLinkat, {}},
      {"rename", wire::kGuardRename, {}},
      {"renameat", wire::kGuardRenameat, {}},
      {"renameat2", wire::kGuardRenameat2, {}},
      {"truncate", wire::kGuardTruncate, {}},
      {"truncate64", wire::kGuardTruncate64, {}},
      {"chmod", wire::kGuardChmod, ExecuteBit(1)},
      {"fchmod", wire::kGuardFchmod, ExecuteBit(1)},
      {"fchmodat", wire::kGuardFchmodat, ExecuteBit(2)},
      {"fchmodat2", wire::kGuardFchmodat2, ExecuteBit(2), 452},
      // bind(2) makes a name in the filesystem for an AF_UNIX socket (git takes a socket named
      // `refs` for a directory). Every bind is the guard's: the address is in the command's
      // memory and the socket behind the number may change, so the guard binds the socket itself.
      {"bind", wire::kGuardBind, {}},
  };
  return calls;
}

std::vector<Rule> GuardRules() {
  Rule notify{"the write guard", SCMP_ACT_NOTIFY, {}};
  for (const GuardedCall& g : GuardedCalls()) {
    if (g.only_if.empty()) {
      notify.calls.push_back({g.name, {}, g.generic_nr});
      continue;
    }
    for (const ArgMatch& m : g.only_if) notify.calls.push_back({g.name, {m}, g.generic_nr});
  }
  return {notify};
}

// ---------------------------------------------------------------------------------------------
// Architectures.

struct ArchInfo {
  std::uint32_t token;
  const char* name;
};

constexpr ArchInfo kArchNames[] = {
    {SCMP_ARCH_X86_64, "x86_64"},   {SCMP_ARCH_X86, "x86"},     {SCMP_ARCH_X32, "x32"},
    {SCMP_ARCH_AARCH64, "aarch64"}, {SCMP_ARCH_ARM, "arm"},     {SCMP_ARCH_RISCV64, "riscv64"},
    {SCMP_ARCH_PPC64LE, "ppc64le"}, {SCMP_ARCH_S390X, "s390x"},
};

std::string ArchName(std::uint32_t token) {
  for (const ArchInfo& a : kArchNames) {
    if (a.token == token) return a.name;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "arch 0x%08x", token);
  return buf;
}

// The native architecture first (the common case is checked first), then its compat ABIs.
std::vector<std::uint32_t> ArchesFor(HostArch host) {
  std::uint32_t native = SCMP_ARCH_NATIVE;
  switch (host) {
    case HostArch::kNative:
      native = seccomp_arch_native();
      break;
    case HostArch::kX86_64:
      native = SCMP_ARCH_X86_64;
      break;
    case HostArch::kAarch64:
      native = SCMP_ARCH_AARCH64;
      break;
  }
  if (native == SCMP_ARCH_X86_64) return {SCMP_ARCH_X86_64, SCMP_ARCH_X86, SCMP_ARCH_X32};
  if (native == SCMP_ARCH_AARCH64) return {SCMP_ARCH_AARCH64, SCMP_ARCH_ARM};
  return {native};
}

// Whether a syscall name, resolved for one architecture, names a real entry point there.
// Real numbers are >= 0. libseccomp's pseudo numbers <= -10000 mean "not on this architecture",
// except its multiplexed ones (socket calls -101..-120, SysV IPC calls -201..-224): on i386
// those stand for a direct syscall *and* a socketcall/ipc call, and both exist.
bool ExistsOn(int arch_nr) {
  if (arch_nr >= 0) return true;
  return (arch_nr <= -101 && arch_nr >= -120) || (arch_nr <= -201 && arch_nr >= -224);
}

// ---------------------------------------------------------------------------------------------
// libseccomp plumbing.

struct SeccompCtxDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
// scmp_filter_ctx is `void*`; this owns one.
using SeccompCtx = std::unique_ptr<void, SeccompCtxDeleter>;

// libseccomp returns -errno.
Error LibError(std::string what, int rc) {
  const int err = -rc;
  what += ": ";
  what += ErrnoText(err);
  return Error(Errc::kSystem, std::move(what), err);
}

std::string DescribeCall(const SyscallRule& call) {
  std::string out = call.name;
  out += '(';
  bool first = true;
  for (const ArgMatch& m : call.match) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%sarg%u & 0x%llx == 0x%llx", first ? "" : ", ", m.arg,
                  static_cast<unsigned long long>(m.mask),
                  static_cast<unsigned long long>(m.value));
    out += buf;
    first = false;
  }
  out += ')';
  return out;
}

Result<void> SetAttr(void* ctx, scmp_filter_attr attr, std::uint32_t value, const char* what,
                     bool optional = false) {
  const int rc = seccomp_attr_set(ctx, attr, value);
  if (rc == 0) return Ok();
  if (optional && (rc == -EINVAL || rc == -EOPNOTSUPP)) return Ok();
  return LibError(std::string("seccomp_attr_set(") + what + ")", rc);
}

// A context holding `arch` only, with the attributes every part of the filter shares.
Result<SeccompCtx> NewArchCtx(std::uint32_t arch) {
  SeccompCtx ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return MakeError(Errc::kSystem, "seccomp_init(SCMP_ACT_ALLOW) failed");
  SRT_RETURN_IF_ERROR(SetAttr(ctx.get(), SCMP_FLTATR_API_SYSRAWRC, 1, "API_SYSRAWRC",
                              /*optional=*/true));
  SRT_RETURN_IF_ERROR(
      SetAttr(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS, "ACT_BADARCH"));
  // The filter is exported, never loaded here; TSYNC would only matter for seccomp_load().
  SRT_RETURN_IF_ERROR(SetAttr(ctx.get(), SCMP_FLTATR_CTL_TSYNC, 0, "CTL_TSYNC"));
  // Binary search over syscall numbers instead of a linear chain: the per-syscall cost of the
  // filter stays a handful of instructions. Optional: needs libseccomp >= 2.5.
  SRT_RETURN_IF_ERROR(SetAttr(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2, "CTL_OPTIMIZE=2",
                              /*optional=*/true));
  const std::uint32_t native = seccomp_arch_native();
  if (arch != native) {
    int rc = seccomp_arch_add(ctx.get(), arch);
    if (rc < 0) return LibError("seccomp_arch_add(" + ArchName(arch) + ")", rc);
    rc = seccomp_arch_remove(ctx.get(), native);
    if (rc < 0) return LibError("seccomp_arch_remove(" + ArchName(native) + ")", rc);
  }
  return ctx;
}

Result<void> AddRules(void* ctx, std::uint32_t arch, const std::vector<Rule>& rules) {
  for (const Rule& rule : rules) {
    for (const SyscallRule& call : rule.calls) {
      std::vector<scmp_arg_cmp> cmps;
      cmps.reserve(call.match.size());
      for (const ArgMatch& m : call.match) {
        cmps.push_back(scmp_arg_cmp{m.arg, SCMP_CMP_MASKED_EQ, m.mask, m.value});
      }
      const std::uint32_t action = rule.action;
      // seccomp_rule_add() takes the number in the *native* numbering (possibly a pseudo number)
      // and translates it by name for each architecture of the context.
      const int native_nr = seccomp_syscall_resolve_name(call.name);
      // Unknown to this libseccomp, which also refuses its number on other architectures: the
      // rule goes into the prefix that NewSyscallPrefix() writes by hand.
      if (native_nr == __NR_SCMP_ERROR && call.generic_nr != 0) continue;
      if (native_nr == __NR_SCMP_ERROR) {
        return MakeError(Errc::kUnsupported, std::string("libseccomp does not know the syscall '") +
                                                 call.name + "' (rule '" + rule.description +
                                                 "'); libseccomp is too old");
      }
      if (!ExistsOn(seccomp_syscall_resolve_name_arch(arch, call.name))) continue;
      const int rc =
          seccomp_rule_add_array(ctx, action, native_nr, static_cast<unsigned int>(cmps.size()),
                                 cmps.empty() ? nullptr : cmps.data());
      if (rc < 0) {
        return LibError("seccomp_rule_add(" + DescribeCall(call) + ") for " + ArchName(arch) +
                            " (rule '" + rule.description + "')",
                        rc);
      }
    }
  }
  return Ok();
}

// seccomp_export_bpf() writes the program to an fd; a memfd keeps it off the filesystem.
Result<std::vector<std::byte>> ExportBpf(void* ctx) {
  UniqueFd fd(memfd_create("srt-seccomp-bpf", MFD_CLOEXEC));
  if (!fd) return SysError("memfd_create('srt-seccomp-bpf')");
  const int rc = seccomp_export_bpf(ctx, fd.get());
  if (rc < 0) return LibError("seccomp_export_bpf", rc);

  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return SysError("fstat(seccomp memfd)");
  std::vector<std::byte> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        pread(fd.get(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("pread(seccomp memfd)");
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

// The rules on syscalls newer than libseccomp (SyscallRule::generic_nr, whole-call denials
// only), as hand-written BPF that runs before libseccomp's program: for each architecture of the
// filter, a matching number returns the rule's errno, anything else falls through to
// libseccomp's first instruction (which loads what it needs itself). Empty when libseccomp knows
// every such syscall.
using RulesFor = std::function<std::vector<Rule>(std::uint32_t arch)>;

Result<std::vector<sock_filter>> NewSyscallPrefix(const RulesFor& rules_for, HostArch host) {
  struct Entry {
    std::uint32_t arch;
    std::uint32_t nr;
    std::uint32_t action;
  };
  std::vector<Entry> entries;
  for (const std::uint32_t arch : ArchesFor(host)) {
    for (const Rule& rule : rules_for(arch)) {
      for (const SyscallRule& call : rule.calls) {
        if (call.generic_nr == 0 || seccomp_syscall_resolve_name(call.name) != __NR_SCMP_ERROR) {
          continue;
        }
        // Handing the guard more calls than it asked for is harmless; denying more is not.
        if (!call.match.empty() && rule.action != SCMP_ACT_NOTIFY) {
          return MakeError(Errc::kInternal, std::string("rule on '") + call.name +
                                                "', newer than libseccomp, compares arguments");
        }
        // x32 calls arrive with the x86_64 architecture and __X32_SYSCALL_BIT in the number.
        constexpr std::uint32_t kX32SyscallBit = 0x40000000;
        const bool x32 = arch == SCMP_ARCH_X32;
        entries.push_back({x32 ? std::uint32_t{SCMP_ARCH_X86_64} : arch,
                           static_cast<std::uint32_t>(call.generic_nr) | (x32 ? kX32SyscallBit : 0),
                           rule.action});
      }
    }
  }
  std::vector<sock_filter> prog;
  if (entries.empty()) return prog;
  std::vector<std::uint32_t> arches;
  for (const Entry& e : entries) {
    if (std::find(arches.begin(), arches.end(), e.arch) == arches.end()) arches.push_back(e.arch);
  }
  // Layout: for each architecture A: "A? no: skip to the next A" / "load nr" / "nr == n? return
  // errno" per entry; then the end (libseccomp's program). Jumps are forward and relative.
  const auto load = [](std::uint32_t offset) {
    return sock_filter{BPF_LD | BPF_W | BPF_ABS, 0, 0, offset};
  };
  constexpr std::uint32_t kArchOffset = offsetof(seccomp_data, arch);
  constexpr std::uint32_t kNrOffset = offsetof(seccomp_data, nr);
  for (const std::uint32_t arch : arches) {
    std::vector<sock_filter> block;
    block.push_back(load(kNrOffset));
    for (const Entry& e : entries) {
      if (e.arch != arch) continue;
      block.push_back(sock_filter{BPF_JMP | BPF_JEQ | BPF_K, 0, 1, e.nr});
      block.push_back(sock_filter{BPF_RET | BPF_K, 0, 0, e.action});
    }
    if (block.size() > 250) return MakeError(Errc::kInternal, "syscall prefix too long");
    prog.push_back(load(kArchOffset));
    prog.push_back(
        sock_filter{BPF_JMP | BPF_JEQ | BPF_K, 0, static_cast<std::uint8_t>(block.size()), arch});
    prog.insert(prog.end(), block.begin(), block.end());
  }
  return prog;
}

// struct sock_filter is 8 bytes; the kernel takes at most BPF_MAXINSNS (4096) of them.
constexpr std::size_t kInsnSize = 8;
constexpr std::size_t kMaxInsns = 4096;

// One program for every architecture of `host`, from each architecture's rules.
Result<std::vector<std::byte>> Compile(const RulesFor& rules_for, HostArch host) {
  SeccompCtx merged;
  for (const std::uint32_t arch : ArchesFor(host)) {
    SRT_ASSIGN_OR_RETURN(SeccompCtx ctx, NewArchCtx(arch));
    SRT_RETURN_IF_ERROR(AddRules(ctx.get(), arch, rules_for(arch)));
    if (!merged) {
      merged = std::move(ctx);
      continue;
    }
    // On success seccomp_merge() frees the source context; on failure it is still ours.
    const int rc = seccomp_merge(merged.get(), ctx.get());
    if (rc < 0) return LibError("seccomp_merge(" + ArchName(arch) + ")", rc);
    (void)ctx.release();
  }

  SRT_ASSIGN_OR_RETURN(std::vector<std::byte> program, ExportBpf(merged.get()));
  SRT_ASSIGN_OR_RETURN(std::vector<sock_filter> prefix, NewSyscallPrefix(rules_for, host));
  if (!prefix.empty()) {
    const auto* bytes = reinterpret_cast<const std::byte*>(prefix.data());
    program.insert(program.begin(), bytes, bytes + prefix.size() * sizeof(sock_filter));
  }
  if (program.empty() || program.size() % kInsnSize != 0 ||
      program.size() / kInsnSize > kMaxInsns) {
    return MakeError(Errc::kInternal, "seccomp_export_bpf produced " +
                                          std::to_string(program.size()) +
                                          " bytes, not 1..4096 BPF instructions");
  }
  return program;
}

}  // namespace

Result<std::vector<std::byte>> CompileFilter(const FilterOptions& options, HostArch host) {
  return Compile([&](std::uint32_t arch) { return MakeRules(options, arch); }, host);
}

Result<std::vector<std::byte>> CompileGuardFilter(HostArch host) {
  return Compile([](std::uint32_t) { return GuardRules(); }, host);
}

std::vector<wire::GuardCall> CompileGuardCalls(HostArch host) {
  std::vector<wire::GuardCall> out;
  for (const std::uint32_t arch : ArchesFor(host)) {
    // x32 calls reach seccomp as x86_64 ones with __X32_SYSCALL_BIT in the number.
    const std::uint32_t audit_arch = arch == SCMP_ARCH_X32 ? std::uint32_t{SCMP_ARCH_X86_64} : arch;
    for (const GuardedCall& g : GuardedCalls()) {
      int nr = seccomp_syscall_resolve_name_arch(arch, g.name);
      if (nr == __NR_SCMP_ERROR && g.generic_nr != 0) {
        nr = g.generic_nr | (arch == SCMP_ARCH_X32 ? 0x40000000 : 0);
      }
      if (nr < 0) continue;  // not on this architecture
      out.push_back(wire::GuardCall{audit_arch, static_cast<std::uint32_t>(nr), g.op});
    }
  }
  return out;
}

std::vector<std::string> CompileDescription(const FilterOptions& options, HostArch host) {
  const std::vector<std::uint32_t> arches = ArchesFor(host);
  std::string header = "architectures:";
  for (const std::uint32_t arch : arches) header += " " + ArchName(arch);
  header += " (default ALLOW; any other architecture -> KILL_PROCESS)";

  std::vector<std::string> lines{std::move(header)};
  for (Rule& rule : MakeRules(options, arches.front())) {
    // Only rules that exist on this host (no socketcall line on aarch64).
    const bool exists =
        std::any_of(rule.calls.begin(), rule.calls.end(), [&](const SyscallRule& c) {
          return std::any_of(arches.begin(), arches.end(), [&](std::uint32_t arch) {
            return c.generic_nr != 0 || ExistsOn(seccomp_syscall_resolve_name_arch(arch, c.name));
          });
        });
    if (exists) lines.push_back(std::move(rule.description));
  }
  return lines;
}

std::string CompilerVersion() {
  const scmp_version* v = seccomp_version();
  if (v == nullptr) return "libseccomp (unknown version)";
  return "libseccomp " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->micro);
}

}  // namespace srt::seccomp
