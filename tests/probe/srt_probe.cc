// SPDX-License-Identifier: Apache-2.0
// srt-probe: a multi-call test probe whose exit status is the errno of one operation.
//
// Integration tests run it inside the sandbox (or under a bare seccomp filter) and assert the
// exact errno, in the style of bubblewrap's try-syscall.c and crun's tests/init.c.
//
//   srt-probe <command> [args...]
//
// EXIT STATUS (stable contract)
//   0            the operation succeeded
//   1..199       the operation failed with this errno (EPERM = 1, ENOENT = 2, ENOSYS = 38, ...)
//   200          usage error (unknown command, wrong argument count, unparsable argument)
//   201          the probe could not prepare the operation (e.g. mmap failed); nothing was tried
//   202          something impossible happened (a child died abnormally, a signal was survived)
//   203          the command does not exist on this architecture (i386/x32 cases off x86_64)
//   `exit N` exits N; `kill-self SIG` dies of SIG; `env NAME` exits 1 when NAME is unset.
// A failing operation also prints "srt-probe: <command>: <strerror>" on stderr; data goes to
// stdout. The probe is linked statically and uses no configuration, so it runs in any root.
//
// Every syscall goes through raw syscall(2) (or `int $0x80`) so glibc can neither emulate nor
// refuse it, and its arguments are chosen so that WITHOUT a seccomp filter the call succeeds or
// fails with an errno *different* from what srt's filter returns (EPERM; ENOSYS for clone3). The
// "unfiltered:" notes give that result for a caller with CAP_SYS_ADMIN (root in the test
// environment); "unpriv:" notes where an unprivileged caller would see EPERM from the kernel
// itself, which the filter cannot be told apart from.
//
// COMMANDS (unfiltered result in brackets)
//   socket <unix|inet|inet6|vsock|netlink> [stream|dgram|seqpacket|raw]     [0; vsock: 0 or
//                                        EAFNOSUPPORT without the vsock module]
//       default type: stream (dgram for netlink)
//   socket-hi32 <family> [type]          family with 0xdeadbeef in the upper 32 bits  [0]
//   socketpair <family> <type>           socketpair(family, type|SOCK_CLOEXEC)  [0]
//   socketpair-hi32 <family> <type>      garbage in the upper halves of family and type  [0]
//   socketcall-i386 <socket|socketpair> <family> [type]
//                                        i386 socketcall(2) via int $0x80, argument block
//                                        below 4 GiB (MAP_32BIT); default type stream  [0;
//                                        SIGSEGV if the kernel has no IA32 emulation]
//   socket-i386 <family> [type]          direct i386 socket (nr 359) via int $0x80  [0]
//   socket-i386-hi32 <family> [type]     same, garbage in the upper half of %rbx  [0]
//   socketpair-i386 <family> <type>      direct i386 socketpair (nr 360)  [0]
//   socket-x32 <family> [type]           x32 socket (__X32_SYSCALL_BIT|41)  [ENOSYS without
//                                        CONFIG_X86_X32_ABI, 0 with it]
//   io_uring_setup                       entries = 0  [EINVAL; EPERM if io_uring_disabled=2]
//   io_uring_enter | io_uring_register   fd = INT_MAX  [EBADF]
//   unshare <user|mnt|net|pid|ipc|uts|cgroup|time> [real]
//       default: flag|CLONE_PTRACE, an invalid unshare flag  [EINVAL for everyone]
//       real:    just the flag  [0 as root; unpriv: EPERM except user]
//   clone-ns <user|mnt|net|pid|ipc|uts|cgroup> [real]
//       default: raw clone(flag|CLONE_THREAD|SIGCHLD), invalid without CLONE_SIGHAND
//                [EINVAL for everyone; no child is created]
//       real:    raw clone(flag|SIGCHLD); the child exits 0, the parent waits
//                [0 as root; unpriv: EPERM except user]
//   clone3                               clone3(NULL, 0)  [EINVAL]
//   clone-plain                          raw clone(SIGCHLD), child exits 0, parent waits  [0]
//   setns                                setns(-1, 0)  [EBADF]
//   mount                                mount("none", MISSING, "tmpfs")  [ENOENT]
//   umount                               umount2(MISSING, 0) (x86_64 has no umount)  [ENOENT]
//   pivot_root                           pivot_root(MISSING, MISSING)  [ENOENT; unpriv: EPERM]
//   chroot                               chroot(MISSING)  [ENOENT]
//   open_tree                            open_tree(AT_FDCWD, MISSING, CLOEXEC)  [ENOENT]
//   move_mount                           move_mount(AT_FDCWD, MISSING, AT_FDCWD, MISSING)
//                                        [ENOENT; unpriv: EPERM]
//   fsopen                               fsopen("srt-probe-no-such-fs")  [ENODEV; unpriv: EPERM]
//   fsconfig                             fsconfig(-1, FSCONFIG_CMD_CREATE)  [EINVAL]
//   fsmount                              fsmount(-1, 0, 0)  [EBADF; unpriv: EPERM]
//   fspick                               fspick(AT_FDCWD, MISSING, 0)  [ENOENT; unpriv: EPERM]
//   mount_setattr                        mount_setattr(-1, "", 0, NULL, 0)  [EINVAL]
//   ioctl-tiocsti [FD|tty]               ioctl(FD, TIOCSTI, "x"); FD defaults to -1  [EBADF]
//   ioctl-tiocsti-hi32 [FD|tty]          request with garbage in the upper 32 bits  [EBADF]
//   ioctl-tioclinux [FD|tty]             ioctl(FD, TIOCLINUX, ...)  [EBADF]
//   ioctl-tioclinux-hi32 [FD|tty]        [EBADF]
//       The filter answers EPERM whatever the fd; the default -1 keeps an unfiltered run from
//       pushing a byte into the caller's terminal. `tty` opens /dev/tty.
//   keyctl                               keyctl(0x7fffffff)  [EOPNOTSUPP]
//   add_key | request_key                NULL type  [EFAULT]
//   bpf                                  bpf(0x7fff, NULL, 0)  [EINVAL]
//   perf_event_open                      NULL attr  [EFAULT]
//   userfaultfd                          UFFD_USER_MODE_ONLY|O_RDWR (invalid)  [EINVAL]
//   ptrace [traceme]                     PTRACE_PEEKUSER on pid 0x7fffffff  [ESRCH];
//                                        traceme: PTRACE_TRACEME  [0]
//   process_vm_readv | process_vm_writev flags = 1 (invalid)  [EINVAL]
//   personality <value>                  personality(value); value in C syntax (0x... for hex),
//                                        64 bits wide so the upper half can carry garbage  [0]
//   raw <nr> [a0..a5]                    syscall(nr, ...), numbers in C syntax; prints rc
//   raw-i386 <nr> [a0..a4]               the same through int $0x80
//   fds                                  prints the open fds, space separated  [0]
//   exit <n>                             exits n
//   kill-self <signal number or name>    dies of the signal (default action restored first)
//   sleep <seconds>                      sleeps (fractions allowed)  [0]
//   env <NAME>                           prints $NAME; exit 0 if set, 1 if not
//   uid                                  prints uid/gid and /proc/self/status Cap*, NoNewPrivs,
//                                        Seccomp* lines  [0]
//   help                                 lists the commands (exit 200)
//
// FILESYSTEM COMMANDS (plain libc calls; the result is the kernel's answer for this process)
//   read <path>                          open O_RDONLY and read it to the end, printing it
//   write <path> [text]                  open O_WRONLY|O_TRUNC an EXISTING file, write text
//   create <path> [text]                 open O_WRONLY|O_CREAT|O_EXCL, write text
//   append <path> [text]                 open O_WRONLY|O_APPEND|O_CREAT, write text
//   mkdir <path> | rmdir <path> | unlink <path>
//   rename <from> <to> | link <from> <to> | symlink <target> <path>
//   chmod <path> <octal>                 chmod(2)
//   setmode <call> <path> <octal>        sets a mode through one raw syscall: chmod, fchmod (of
//                                        the file opened O_RDONLY; path "-" = fd -1), fchmodat,
//                                        fchmodat2 (nr 452), or creates path with that mode:
//                                        open, openat, creat (O_CREAT|O_EXCL), mknod, mknodat
//                                        (S_IFREG), tmpfile (O_TMPFILE in the directory path)
//   setxattr <call> <path> <name>        setxattr, lsetxattr or fsetxattr (of the file opened
//                                        O_RDONLY) of `name`; security.capability gets a valid
//                                        VFS_CAP_REVISION_2 value granting CAP_NET_RAW, other
//                                        names the value "srt"
//   stat <path>                          lstat; prints the type (file, dir, symlink, char, ...)
//   ls <dir>                             prints the entries, sorted, one per line
//   chdir-ls <dir>                       chdir then ls "."
//   pids                                 prints the numeric entries of /proc, sorted
//   kill <pid> <signal>                  kill(2)
//   deny-userns-exec <program> [args]    exec program under a filter that refuses new user
//                                        namespaces (EPERM; clone3 ENOSYS): a host where
//                                        bwrap cannot create its sandbox
//
// MISSING is "/srt-probe-nonexistent/x". To add a command, write `int Foo(Args)` and add one
// row to kCommands.
#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/net.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr int kExitUsage = 200;
constexpr int kExitSetup = 201;
constexpr int kExitUnexpected = 202;
[[maybe_unused]] constexpr int kExitNoSuchArch = 203;  // used off x86_64 only

constexpr std::uint64_t kGarbageHigh = 0xdeadbeef00000000ULL;
constexpr const char* kMissing = "/srt-probe-nonexistent/x";

// Kernel constants, spelled out so the probe does not depend on header versions.
constexpr long kX32SyscallBit = 0x40000000;  // __X32_SYSCALL_BIT
constexpr int kI386Socketcall = 102;
constexpr int kI386Socket = 359;
constexpr int kI386Socketpair = 360;
constexpr unsigned long kOpenTreeCloexec = O_CLOEXEC;
constexpr unsigned int kFsconfigCmdCreate = 6;
constexpr unsigned long kUffdUserModeOnly = 1;

using Args = std::span<char* const>;

const char* g_command = "srt-probe";

// The errno of a raw syscall result, printing it when it is not 0.
int Report(long rc) {
  if (rc >= 0) return 0;
  const int err = errno;
  std::fprintf(stderr, "srt-probe: %s: %s\n", g_command, std::strerror(err));
  return err;
}

// The same for a call that returns an fd on success, which is closed.
int ReportFd(long rc) {
  const int result = Report(rc);
  if (rc >= 0) close(static_cast<int>(rc));
  return result;
}

int Usage(const char* why) {
  std::fprintf(stderr, "srt-probe: %s: %s (see `srt-probe help`)\n", g_command, why);
  return kExitUsage;
}

std::optional<std::uint64_t> ParseNumber(const char* s) {
  if (s == nullptr || *s == '\0') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const bool negative = *s == '-';
  std::uint64_t v = 0;
  if (negative) {
    const long long n = std::strtoll(s, &end, 0);
    v = static_cast<std::uint64_t>(n);
  } else {
    v = std::strtoull(s, &end, 0);
  }
  if (errno != 0 || end == s || *end != '\0') return std::nullopt;
  return v;
}

// --- Name tables -------------------------------------------------------------------------------

struct Named {
  std::string_view name;
  long value;
};

constexpr Named kFamilies[] = {
    {"unix", AF_UNIX},   {"inet", AF_INET},       {"inet6", AF_INET6},
    {"vsock", AF_VSOCK}, {"netlink", AF_NETLINK},
};
constexpr Named kTypes[] = {
    {"stream", SOCK_STREAM},
    {"dgram", SOCK_DGRAM},
    {"seqpacket", SOCK_SEQPACKET},
    {"raw", SOCK_RAW},
};
constexpr Named kNamespaces[] = {
    {"user", CLONE_NEWUSER},     {"mnt", CLONE_NEWNS},    {"net", CLONE_NEWNET},
    {"pid", CLONE_NEWPID},       {"ipc", CLONE_NEWIPC},   {"uts", CLONE_NEWUTS},
    {"cgroup", CLONE_NEWCGROUP}, {"time", CLONE_NEWTIME},
};
constexpr Named kSignals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
    {"KILL", SIGKILL}, {"SEGV", SIGSEGV}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},
    {"TERM", SIGTERM}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"SYS", SIGSYS},
};

template <std::size_t N>
std::optional<long> Lookup(const Named (&table)[N], const char* name) {
  if (name == nullptr) return std::nullopt;
  for (const Named& n : table) {
    if (n.name == name) return n.value;
  }
  return std::nullopt;
}

// Family from args[0] and type from args[1] (or `default_type`).
struct SocketArgs {
  long family;
  long type;
};
std::optional<SocketArgs> ParseSocketArgs(Args args, bool type_required) {
  if (args.empty()) return std::nullopt;
  const std::optional<long> family = Lookup(kFamilies, args[0]);
  if (!family) return std::nullopt;
  long type = *family == AF_NETLINK ? SOCK_DGRAM : SOCK_STREAM;
  if (args.size() >= 2) {
    const std::optional<long> t = Lookup(kTypes, args[1]);
    if (!t) return std::nullopt;
    type = *t;
  } else if (type_required) {
    return std::nullopt;
  }
  return SocketArgs{*family, type};
}

// --- i386 entry from a 64-bit process ----------------------------------------------------------

#if defined(__x86_64__)
// `int $0x80` enters the kernel through the i386 syscall table (seccomp sees AUDIT_ARCH_I386)
// even from 64-bit code. Pointers must fit in 32 bits. Returns the raw %eax, sign-extended.
long Int80(std::uint64_t nr, std::uint64_t a0 = 0, std::uint64_t a1 = 0, std::uint64_t a2 = 0,
           std::uint64_t a3 = 0, std::uint64_t a4 = 0) {
  std::uint64_t ret = nr;
  asm volatile("int $0x80"
               : "+a"(ret)
               : "b"(a0), "c"(a1), "d"(a2), "S"(a3), "D"(a4)
               : "memory", "r8", "r9", "r10", "r11", "cc");
  return static_cast<long>(static_cast<std::int32_t>(static_cast<std::uint32_t>(ret)));
}

// Like Report() for an i386 return value (-errno in %eax); closes a returned fd.
int ReportI386(long rc) {
  if (rc < 0 && rc >= -4095) {
    errno = static_cast<int>(-rc);
    return Report(-1);
  }
  if (rc >= 0) close(static_cast<int>(rc));
  return 0;
}

// One page below 4 GiB for i386 argument blocks.
struct LowPage {
  void* addr = MAP_FAILED;
  LowPage() {
    addr =
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  }
  ~LowPage() {
    if (addr != MAP_FAILED) munmap(addr, 4096);
  }
  LowPage(const LowPage&) = delete;
  LowPage& operator=(const LowPage&) = delete;
  bool ok() const { return addr != MAP_FAILED; }
  std::uint32_t* words() const { return static_cast<std::uint32_t*>(addr); }
  std::uint64_t low(const void* p) const { return reinterpret_cast<std::uintptr_t>(p); }
};

void CloseI386Pair(long rc, const std::uint32_t* sv) {
  if (rc == 0) {
    close(static_cast<int>(sv[0]));
    close(static_cast<int>(sv[1]));
  }
}
#endif

// --- Commands: sockets -------------------------------------------------------------------------

int Socket(Args args) {
  const auto sa = ParseSocketArgs(args, /*type_required=*/false);
  if (!sa) return Usage("expected <family> [type]");
  return ReportFd(syscall(SYS_socket, sa->family, sa->type | SOCK_CLOEXEC, 0));
}

int SocketHi32(Args args) {
  const auto sa = ParseSocketArgs(args, /*type_required=*/false);
  if (!sa) return Usage("expected <family> [type]");
  // socket(2) takes an int: the kernel ignores the upper half, so must the filter.
  return ReportFd(syscall(SYS_socket, kGarbageHigh | static_cast<std::uint64_t>(sa->family),
                          sa->type | SOCK_CLOEXEC, 0));
}

int SocketpairCommon(Args args, std::uint64_t garbage) {
  const auto sa = ParseSocketArgs(args, /*type_required=*/true);
  if (!sa) return Usage("expected <family> <type>");
  int sv[2] = {-1, -1};
  const long rc = syscall(SYS_socketpair, garbage | static_cast<std::uint64_t>(sa->family),
                          garbage | static_cast<std::uint64_t>(sa->type | SOCK_CLOEXEC), 0, sv);
  const int result = Report(rc);
  if (rc == 0) {
    close(sv[0]);
    close(sv[1]);
  }
  return result;
}
int Socketpair(Args args) { return SocketpairCommon(args, 0); }
int SocketpairHi32(Args args) { return SocketpairCommon(args, kGarbageHigh); }

int SocketcallI386(Args args) {
#if defined(__x86_64__)
  if (args.empty()) return Usage("expected <socket|socketpair> <family> [type]");
  const std::string_view call = args[0];
  const bool pair = call == "socketpair";
  if (!pair && call != "socket") return Usage("expected socket or socketpair");
  const auto sa = ParseSocketArgs(args.subspan(1), /*type_required=*/false);
  if (!sa) return Usage("expected <family> [type]");
  LowPage page;
  if (!page.ok()) return kExitSetup;
  // socketcall(call, args): args points at an array of 32-bit words holding the real arguments.
  std::uint32_t* block = page.words();
  std::uint32_t* sv = block + 8;
  block[0] = static_cast<std::uint32_t>(sa->family);
  block[1] = static_cast<std::uint32_t>(sa->type | SOCK_CLOEXEC);
  block[2] = 0;
  block[3] = static_cast<std::uint32_t>(page.low(sv));
  const long rc = Int80(kI386Socketcall, pair ? SYS_SOCKETPAIR : SYS_SOCKET, page.low(block));
  if (pair) {
    CloseI386Pair(rc, sv);
    return ReportI386(rc < 0 ? rc : 0);
  }
  return ReportI386(rc);
#else
  (void)args;
  return kExitNoSuchArch;
#endif
}

int SocketI386Common(Args args, std::uint64_t garbage) {
#if defined(__x86_64__)
  const auto sa = ParseSocketArgs(args, /*type_required=*/false);
  if (!sa) return Usage("expected <family> [type]");
  return ReportI386(Int80(kI386Socket, garbage | static_cast<std::uint64_t>(sa->family),
                          static_cast<std::uint64_t>(sa->type | SOCK_CLOEXEC), 0));
#else
  (void)args;
  (void)garbage;
  return kExitNoSuchArch;
#endif
}
int SocketI386(Args args) { return SocketI386Common(args, 0); }
int SocketI386Hi32(Args args) { return SocketI386Common(args, kGarbageHigh); }

int SocketpairI386(Args args) {
#if defined(__x86_64__)
  const auto sa = ParseSocketArgs(args, /*type_required=*/true);
  if (!sa) return Usage("expected <family> <type>");
  LowPage page;
  if (!page.ok()) return kExitSetup;
  std::uint32_t* sv = page.words();
  const long rc = Int80(kI386Socketpair, static_cast<std::uint64_t>(sa->family),
                        static_cast<std::uint64_t>(sa->type | SOCK_CLOEXEC), 0, page.low(sv));
  CloseI386Pair(rc, sv);
  return ReportI386(rc < 0 ? rc : 0);
#else
  (void)args;
  return kExitNoSuchArch;
#endif
}

int SocketX32(Args args) {
#if defined(__x86_64__)
  const auto sa = ParseSocketArgs(args, /*type_required=*/false);
  if (!sa) return Usage("expected <family> [type]");
  return ReportFd(syscall(kX32SyscallBit | SYS_socket, sa->family, sa->type | SOCK_CLOEXEC, 0));
#else
  (void)args;
  return kExitNoSuchArch;
#endif
}

// --- Commands: io_uring ------------------------------------------------------------------------

int IoUringSetup(Args) {
  unsigned char params[120] = {};  // struct io_uring_params, zeroed
  return ReportFd(syscall(SYS_io_uring_setup, 0, params));
}
int IoUringEnter(Args) { return Report(syscall(SYS_io_uring_enter, INT_MAX, 0, 0, 0, nullptr, 0)); }
int IoUringRegister(Args) { return Report(syscall(SYS_io_uring_register, INT_MAX, 0, nullptr, 0)); }

// --- Commands: namespaces and mounts -----------------------------------------------------------

bool IsReal(Args args, std::size_t index) {
  return args.size() > index && std::string_view(args[index]) == "real";
}

int Unshare(Args args) {
  const std::optional<long> flag = Lookup(kNamespaces, args.empty() ? nullptr : args[0]);
  if (!flag) return Usage("expected <user|mnt|net|pid|ipc|uts|cgroup|time> [real]");
  const unsigned long flags = static_cast<unsigned long>(*flag);
  return Report(syscall(SYS_unshare, IsReal(args, 1) ? flags : flags | CLONE_PTRACE));
}

// Raw clone(2) without a new stack: the child runs on a copy of ours, like fork(2).
int CloneAndWait(unsigned long flags) {
  const long pid = syscall(SYS_clone, flags, 0, nullptr, nullptr, 0);
  if (pid == 0) _exit(0);
  if (pid < 0) return Report(pid);
  int status = 0;
  if (waitpid(static_cast<pid_t>(pid), &status, 0) < 0) return kExitUnexpected;
  return (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? 0 : kExitUnexpected;
}

int CloneNs(Args args) {
  const std::optional<long> flag = Lookup(kNamespaces, args.empty() ? nullptr : args[0]);
  if (!flag || *flag == CLONE_NEWTIME) {
    return Usage("expected <user|mnt|net|pid|ipc|uts|cgroup> [real]");
  }
  const unsigned long flags = static_cast<unsigned long>(*flag) | SIGCHLD;
  if (IsReal(args, 1)) return CloneAndWait(flags);
  // CLONE_THREAD without CLONE_SIGHAND: copy_process() says EINVAL before looking at anything
  // else, so no child can come of it.
  const long rc = syscall(SYS_clone, flags | CLONE_THREAD, 0, nullptr, nullptr, 0);
  if (rc == 0) _exit(0);
  if (rc > 0) return kExitUnexpected;
  return Report(rc);
}

int Clone3(Args) { return Report(syscall(SYS_clone3, nullptr, 0)); }
int ClonePlain(Args) { return CloneAndWait(SIGCHLD); }
int Setns(Args) { return Report(syscall(SYS_setns, -1, 0)); }
int Mount(Args) { return Report(syscall(SYS_mount, "none", kMissing, "tmpfs", 0, nullptr)); }
int Umount(Args) { return Report(syscall(SYS_umount2, kMissing, 0)); }
int PivotRoot(Args) { return Report(syscall(SYS_pivot_root, kMissing, kMissing)); }
int Chroot(Args) { return Report(syscall(SYS_chroot, kMissing)); }
int OpenTree(Args) {
  return ReportFd(syscall(SYS_open_tree, AT_FDCWD, kMissing, kOpenTreeCloexec));
}
int MoveMount(Args) {
  return Report(syscall(SYS_move_mount, AT_FDCWD, kMissing, AT_FDCWD, kMissing, 0));
}
int Fsopen(Args) { return ReportFd(syscall(SYS_fsopen, "srt-probe-no-such-fs", 0)); }
int Fsconfig(Args) {
  return Report(syscall(SYS_fsconfig, -1, kFsconfigCmdCreate, nullptr, nullptr, 0));
}
int Fsmount(Args) { return ReportFd(syscall(SYS_fsmount, -1, 0, 0)); }
int Fspick(Args) { return ReportFd(syscall(SYS_fspick, AT_FDCWD, kMissing, 0)); }
int MountSetattr(Args) { return Report(syscall(SYS_mount_setattr, -1, "", 0, nullptr, 0)); }

// --- Commands: terminal ioctls -----------------------------------------------------------------

// The fd for the tty ioctls: -1 by default, a number, or "tty" for /dev/tty (opened here).
std::optional<int> TtyFd(Args args) {
  if (args.empty()) return -1;
  if (std::string_view(args[0]) == "tty") return open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  const std::optional<std::uint64_t> n = ParseNumber(args[0]);
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

int TtyIoctl(Args args, std::uint64_t request) {
  const std::optional<int> fd = TtyFd(args);
  if (!fd) return Usage("expected [FD|tty]");
  // TIOCSTI reads the char to push; TIOCLINUX reads a subcode byte, and 0xff is no subcode, so
  // even a real console would refuse it with EINVAL.
  char byte = request == TIOCSTI ? 'x' : static_cast<char>(0xff);
  return Report(syscall(SYS_ioctl, *fd, request, &byte));
}
int IoctlTiocsti(Args args) { return TtyIoctl(args, TIOCSTI); }
int IoctlTiocstiHi32(Args args) { return TtyIoctl(args, kGarbageHigh | TIOCSTI); }
int IoctlTioclinux(Args args) { return TtyIoctl(args, TIOCLINUX); }
int IoctlTioclinuxHi32(Args args) { return TtyIoctl(args, kGarbageHigh | TIOCLINUX); }

// --- Commands: kernel surface, other processes, personality -------------------------------------

int Keyctl(Args) { return Report(syscall(SYS_keyctl, 0x7fffffff, 0, 0, 0, 0)); }
int AddKey(Args) { return Report(syscall(SYS_add_key, nullptr, nullptr, nullptr, 0, 0)); }
int RequestKey(Args) { return Report(syscall(SYS_request_key, nullptr, nullptr, nullptr, 0)); }
int Bpf(Args) { return ReportFd(syscall(SYS_bpf, 0x7fff, nullptr, 0)); }
int PerfEventOpen(Args) { return ReportFd(syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0)); }
int Userfaultfd(Args) { return ReportFd(syscall(SYS_userfaultfd, kUffdUserModeOnly | O_RDWR)); }
int Ptrace(Args args) {
  if (!args.empty() && std::string_view(args[0]) == "traceme") {
    return Report(syscall(SYS_ptrace, PTRACE_TRACEME, 0, nullptr, nullptr));
  }
  return Report(syscall(SYS_ptrace, PTRACE_PEEKUSER, 0x7fffffff, nullptr, nullptr));
}
int ProcessVmReadv(Args) {
  return Report(syscall(SYS_process_vm_readv, getpid(), nullptr, 0, nullptr, 0, 1));
}
int ProcessVmWritev(Args) {
  return Report(syscall(SYS_process_vm_writev, getpid(), nullptr, 0, nullptr, 0, 1));
}
int Personality(Args args) {
  const std::optional<std::uint64_t> v = ParseNumber(args.empty() ? nullptr : args[0]);
  if (!v) return Usage("expected <value>");
  return Report(syscall(SYS_personality, *v));
}

// --- Commands: raw syscalls --------------------------------------------------------------------

std::optional<std::array<std::uint64_t, 7>> ParseRaw(Args args, std::size_t max_args) {
  if (args.empty() || args.size() > max_args + 1) return std::nullopt;
  std::array<std::uint64_t, 7> v{};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::optional<std::uint64_t> n = ParseNumber(args[i]);
    if (!n) return std::nullopt;
    v[i] = *n;
  }
  return v;
}

int Raw(Args args) {
  const auto v = ParseRaw(args, 6);
  if (!v) return Usage("expected <nr> [up to 6 numeric args]");
  const long rc =
      syscall(static_cast<long>((*v)[0]), (*v)[1], (*v)[2], (*v)[3], (*v)[4], (*v)[5], (*v)[6]);
  const int result = Report(rc);
  std::printf("%ld\n", rc);
  return result;
}

int RawI386(Args args) {
#if defined(__x86_64__)
  const auto v = ParseRaw(args, 5);
  if (!v) return Usage("expected <nr> [up to 5 numeric args]");
  const long rc = Int80((*v)[0], (*v)[1], (*v)[2], (*v)[3], (*v)[4], (*v)[5]);
  std::printf("%ld\n", rc);
  if (rc < 0 && rc >= -4095) {
    errno = static_cast<int>(-rc);
    return Report(-1);
  }
  return 0;
#else
  (void)args;
  return kExitNoSuchArch;
#endif
}

// --- Commands: process state -------------------------------------------------------------------

int Fds(Args) {
  std::string out;
  DIR* dir = opendir("/proc/self/fd");
  if (dir != nullptr) {
    const int own = dirfd(dir);
    while (const dirent* e = readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      const int fd = std::atoi(e->d_name);
      if (fd == own) continue;
      if (!out.empty()) out += ' ';
      out += e->d_name;
    }
    closedir(dir);
  } else {
    // No /proc: ask every possible fd.
    rlimit lim{};
    int max = 4096;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 65536) {
      max = static_cast<int>(lim.rlim_cur);
    }
    for (int fd = 0; fd < max; ++fd) {
      if (fcntl(fd, F_GETFD) < 0) continue;
      if (!out.empty()) out += ' ';
      out += std::to_string(fd);
    }
  }
  std::printf("%s\n", out.c_str());
  return 0;
}

int Exit(Args args) {
  const std::optional<std::uint64_t> n = ParseNumber(args.empty() ? nullptr : args[0]);
  if (!n || *n > 255) return Usage("expected <0..255>");
  std::fflush(stdout);
  _exit(static_cast<int>(*n));
}

int KillSelf(Args args) {
  std::optional<long> sig = Lookup(kSignals, args.empty() ? nullptr : args[0]);
  if (!sig && !args.empty()) {
    const std::optional<std::uint64_t> n = ParseNumber(args[0]);
    if (n && *n > 0 && *n < 65) sig = static_cast<long>(*n);
  }
  if (!sig) return Usage("expected <signal number or name>");
  const int s = static_cast<int>(*sig);
  std::fflush(stdout);
  std::signal(s, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, s);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  kill(getpid(), s);
  return kExitUnexpected;  // the signal's default action did not end us (e.g. SIGCHLD)
}

int Sleep(Args args) {
  if (args.empty()) return Usage("expected <seconds>");
  char* end = nullptr;
  const double seconds = std::strtod(args[0], &end);
  if (end == args[0] || *end != '\0' || seconds < 0) return Usage("expected <seconds>");
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
  while (nanosleep(&ts, &ts) != 0) {
    if (errno != EINTR) return Report(-1);
  }
  return 0;
}

int Env(Args args) {
  if (args.empty()) return Usage("expected <NAME>");
  const char* v = std::getenv(args[0]);
  if (v == nullptr) return 1;
  std::printf("%s\n", v);
  return 0;
}

int Uid(Args) {
  std::printf("uid=%u gid=%u euid=%u egid=%u\n", getuid(), getgid(), geteuid(), getegid());
  std::FILE* f = std::fopen("/proc/self/status", "re");
  if (f == nullptr) return Report(-1);
  char line[512];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    const std::string_view l(line);
    if (l.starts_with("Cap") || l.starts_with("NoNewPrivs") || l.starts_with("Seccomp")) {
      std::fputs(line, stdout);
    }
  }
  std::fclose(f);
  return 0;
}

// --- Filesystem ----------------------------------------------------------------------------------

int WriteText(int fd, const char* text) {
  const size_t n = std::strlen(text);
  const long w = write(fd, text, n);
  const int rc = w < 0 ? Report(-1) : 0;
  close(fd);
  return rc;
}

int Read(Args args) {
  if (args.size() != 1) return Usage("expected <path>");
  const int fd = open(args[0], O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Report(-1);
  char buf[4096];
  long n;
  while ((n = read(fd, buf, sizeof buf)) > 0) std::fwrite(buf, 1, static_cast<size_t>(n), stdout);
  const int rc = n < 0 ? Report(-1) : 0;
  close(fd);
  return rc;
}

int OpenAndWrite(Args args, int flags) {
  if (args.empty() || args.size() > 2) return Usage("expected <path> [text]");
  const int fd = open(args[0], flags | O_CLOEXEC, 0644);
  if (fd < 0) return Report(-1);
  return WriteText(fd, args.size() == 2 ? args[1] : "srt-probe\n");
}
int Write(Args args) { return OpenAndWrite(args, O_WRONLY | O_TRUNC); }
// Opens <path> for writing and writes nothing: whether a host-wide setting (a sysctl, the SysRq
// trigger) could be changed, asked without changing it.
int OpenWrite(Args args) {
  if (args.size() != 1) return Usage("expected <path>");
  return ReportFd(open(args[0], O_WRONLY | O_CLOEXEC));
}
int Create(Args args) { return OpenAndWrite(args, O_WRONLY | O_CREAT | O_EXCL); }
int Append(Args args) { return OpenAndWrite(args, O_WRONLY | O_APPEND | O_CREAT); }

// Makes itself non-dumpable (as srt-toolbox does), then creates <name> relative to an O_PATH
// descriptor of <dir>: the write guard must judge a call whose descriptor it can only take
// with pidfd_getfd.
int NondumpableCreateAt(Args args) {
  if (args.size() != 2) return Usage("expected <dir> <name>");
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return Report(-1);
  const int dir = open(args[0], O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return Report(-1);
  return ReportFd(openat(dir, args[1], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
}

int Mkdir(Args args) {
  if (args.size() != 1) return Usage("expected <path>");
  return Report(mkdir(args[0], 0755));
}
int Rmdir(Args args) {
  if (args.size() != 1) return Usage("expected <path>");
  return Report(rmdir(args[0]));
}
int Unlink(Args args) {
  if (args.size() != 1) return Usage("expected <path>");
  return Report(unlink(args[0]));
}
int Rename(Args args) {
  if (args.size() != 2) return Usage("expected <from> <to>");
  return Report(rename(args[0], args[1]));
}
int Link(Args args) {
  if (args.size() != 2) return Usage("expected <from> <to>");
  return Report(link(args[0], args[1]));
}
int MakeSymlink(Args args) {
  if (args.size() != 2) return Usage("expected <target> <path>");
  return Report(symlink(args[0], args[1]));
}
int Chmod(Args args) {
  if (args.size() != 2) return Usage("expected <path> <octal>");
  return Report(chmod(args[0], static_cast<mode_t>(std::strtoul(args[1], nullptr, 8))));
}

int SetMode(Args args) {
  if (args.size() != 3) return Usage("expected <call> <path> <octal>");
  const std::string_view call = args[0];
  const char* path = args[1];
  const unsigned long mode = std::strtoul(args[2], nullptr, 8);
  if (call == "chmod") return Report(syscall(SYS_chmod, path, mode));
  if (call == "fchmodat") return Report(syscall(SYS_fchmodat, AT_FDCWD, path, mode));
  if (call == "fchmodat2") return Report(syscall(452, AT_FDCWD, path, mode, 0));
  if (call == "fchmod") {
    int fd = std::string_view(path) == "-" ? -1 : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && std::string_view(path) != "-") return Report(-1);
    const int rc = Report(syscall(SYS_fchmod, fd, mode));
    if (fd >= 0) close(fd);
    return rc;
  }
  constexpr long kCreate = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
  if (call == "open") return ReportFd(syscall(SYS_open, path, kCreate, mode));
  if (call == "openat") return ReportFd(syscall(SYS_openat, AT_FDCWD, path, kCreate, mode));
  if (call == "creat") return ReportFd(syscall(SYS_creat, path, mode));
  if (call == "mknod") return Report(syscall(SYS_mknod, path, S_IFREG | mode, 0));
  if (call == "mknodat") return Report(syscall(SYS_mknodat, AT_FDCWD, path, S_IFREG | mode, 0));
  if (call == "tmpfile") {
    return ReportFd(syscall(SYS_openat, AT_FDCWD, path, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode));
  }
  return Usage("unknown call");
}

int SetXattr(Args args) {
  if (args.size() != 3) return Usage("expected <call> <path> <name>");
  const std::string_view call = args[0];
  const char* path = args[1];
  const char* name = args[2];
  // struct vfs_cap_data, revision 2: magic_etc, then {permitted, inheritable} low and high.
  const uint32_t cap[5] = {0x02000000 | 0x1 /* effective */, 1u << 13 /* CAP_NET_RAW */, 0, 0, 0};
  const bool is_cap = std::string_view(name) == "security.capability";
  const void* value = is_cap ? static_cast<const void*>(cap) : "srt";
  const size_t size = is_cap ? sizeof cap : 3;
  if (call == "setxattr") return Report(syscall(SYS_setxattr, path, name, value, size, 0));
  if (call == "lsetxattr") return Report(syscall(SYS_lsetxattr, path, name, value, size, 0));
  if (call == "fsetxattr") {
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Report(-1);
    const int rc = Report(syscall(SYS_fsetxattr, fd, name, value, size, 0));
    close(fd);
    return rc;
  }
  return Usage("unknown call");
}

int Stat(Args args) {
  if (args.size() != 1) return Usage("expected <path>");
  struct stat st;
  if (lstat(args[0], &st) < 0) return Report(-1);
  const char* type = S_ISREG(st.st_mode)    ? "file"
                     : S_ISDIR(st.st_mode)  ? "dir"
                     : S_ISLNK(st.st_mode)  ? "symlink"
                     : S_ISCHR(st.st_mode)  ? "char"
                     : S_ISBLK(st.st_mode)  ? "block"
                     : S_ISFIFO(st.st_mode) ? "fifo"
                                            : "socket";
  std::printf("%s\n", type);
  return 0;
}

int ListDir(const char* dir) {
  DIR* d = opendir(dir);
  if (d == nullptr) return Report(-1);
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) std::printf("%s\n", n.c_str());
  return 0;
}
int Ls(Args args) {
  if (args.size() != 1) return Usage("expected <dir>");
  return ListDir(args[0]);
}
int ChdirLs(Args args) {
  if (args.size() != 1) return Usage("expected <dir>");
  if (chdir(args[0]) < 0) return Report(-1);
  return ListDir(".");
}

int Pids(Args) {
  DIR* d = opendir("/proc");
  if (d == nullptr) return Report(-1);
  std::vector<long> pids;
  while (const dirent* e = readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0') pids.push_back(pid);
  }
  closedir(d);
  std::sort(pids.begin(), pids.end());
  for (long p : pids) std::printf("%ld\n", p);
  return 0;
}

int KillPid(Args args) {
  if (args.size() != 2) return Usage("expected <pid> <signal>");
  return Report(kill(static_cast<pid_t>(std::atol(args[0])), std::atoi(args[1])));
}

int DenyUsernsExec(Args args) {
  if (args.empty()) return Usage("expected <program> [args]");
#if defined(__x86_64__)
  constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#endif
  sock_filter prog[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog fprog{static_cast<unsigned short>(sizeof prog / sizeof prog[0]), prog};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Report(-1);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) return Report(-1);
  execv(args[0], args.data());
  return Report(-1);
}

// --- The table ---------------------------------------------------------------------------------

struct Command {
  std::string_view name;
  int (*run)(Args);
  std::string_view usage;
};

int Help(Args);

constexpr Command kCommands[] = {
    {"socket", Socket, "<unix|inet|inet6|vsock|netlink> [stream|dgram|seqpacket|raw]"},
    {"socket-hi32", SocketHi32, "<family> [type]"},
    {"socketpair", Socketpair, "<family> <type>"},
    {"socketpair-hi32", SocketpairHi32, "<family> <type>"},
    {"socketcall-i386", SocketcallI386, "<socket|socketpair> <family> [type]"},
    {"socket-i386", SocketI386, "<family> [type]"},
    {"socket-i386-hi32", SocketI386Hi32, "<family> [type]"},
    {"socketpair-i386", SocketpairI386, "<family> <type>"},
    {"socket-x32", SocketX32, "<family> [type]"},
    {"io_uring_setup", IoUringSetup, ""},
    {"io_uring_enter", IoUringEnter, ""},
    {"io_uring_register", IoUringRegister, ""},
    {"unshare", Unshare, "<user|mnt|net|pid|ipc|uts|cgroup|time> [real]"},
    {"clone-ns", CloneNs, "<user|mnt|net|pid|ipc|uts|cgroup> [real]"},
    {"clone3", Clone3, ""},
    {"clone-plain", ClonePlain, ""},
    {"setns", Setns, ""},
    {"mount", Mount, ""},
    {"umount", Umount, ""},
    {"pivot_root", PivotRoot, ""},
    {"chroot", Chroot, ""},
    {"open_tree", OpenTree, ""},
    {"move_mount", MoveMount, ""},
    {"fsopen", Fsopen, ""},
    {"fsconfig", Fsconfig, ""},
    {"fsmount", Fsmount, ""},
    {"fspick", Fspick, ""},
    {"mount_setattr", MountSetattr, ""},
    {"ioctl-tiocsti", IoctlTiocsti, "[FD|tty]"},
    {"ioctl-tiocsti-hi32", IoctlTiocstiHi32, "[FD|tty]"},
    {"ioctl-tioclinux", IoctlTioclinux, "[FD|tty]"},
    {"ioctl-tioclinux-hi32", IoctlTioclinuxHi32, "[FD|tty]"},
    {"keyctl", Keyctl, ""},
    {"add_key", AddKey, ""},
    {"request_key", RequestKey, ""},
    {"bpf", Bpf, ""},
    {"perf_event_open", PerfEventOpen, ""},
    {"userfaultfd", Userfaultfd, ""},
    {"ptrace", Ptrace, "[traceme]"},
    {"process_vm_readv", ProcessVmReadv, ""},
    {"process_vm_writev", ProcessVmWritev, ""},
    {"personality", Personality, "<value>"},
    {"raw", Raw, "<nr> [a0..a5]"},
    {"raw-i386", RawI386, "<nr> [a0..a4]"},
    {"fds", Fds, ""},
    {"exit", Exit, "<n>"},
    {"kill-self", KillSelf, "<signal>"},
    {"sleep", Sleep, "<seconds>"},
    {"env", Env, "<NAME>"},
    {"uid", Uid, ""},
    {"read", Read, "<path>"},
    {"write", Write, "<path> [text]"},
    {"open-write", OpenWrite, "<path>"},
    {"create", Create, "<path> [text]"},
    {"append", Append, "<path> [text]"},
    {"nondumpable-createat", NondumpableCreateAt, "<dir> <name>"},
    {"mkdir", Mkdir, "<path>"},
    {"rmdir", Rmdir, "<path>"},
    {"unlink", Unlink, "<path>"},
    {"rename", Rename, "<from> <to>"},
    {"link", Link, "<from> <to>"},
    {"symlink", MakeSymlink, "<target> <path>"},
    {"chmod", Chmod, "<path> <octal>"},
    {"setmode", SetMode, "<call> <path> <octal>"},
    {"setxattr", SetXattr, "<call> <path> <name>"},
    {"stat", Stat, "<path>"},
    {"ls", Ls, "<dir>"},
    {"chdir-ls", ChdirLs, "<dir>"},
    {"pids", Pids, ""},
    {"kill", KillPid, "<pid> <signal>"},
    {"deny-userns-exec", DenyUsernsExec, "<program> [args]"},
    {"help", Help, ""},
};

int Help(Args) {
  std::fprintf(stderr, "usage: srt-probe <command> [args...]; exit status = errno\n");
  for (const Command& c : kCommands) {
    std::fprintf(stderr, "  %.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.usage.size()), c.usage.data());
  }
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Help({});
  g_command = argv[1];
  const Args args(argv + 2, static_cast<std::size_t>(argc - 2));
  for (const Command& c : kCommands) {
    if (c.name == argv[1]) {
      const int rc = c.run(args);
      std::fflush(stdout);
      return rc;
    }
  }
  return Usage("unknown command");
}
