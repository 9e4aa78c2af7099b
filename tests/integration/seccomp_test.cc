// SPDX-License-Identifier: Apache-2.0
// Integration tests for the seccomp filter: srt-probe runs under the filter exactly as srt-init
// will apply it (NO_NEW_PRIVS, seccomp(SECCOMP_SET_MODE_FILTER), execve), and each case is run
// again without a filter to prove that the filtered errno comes from the filter and not from
// the kernel refusing the call for some other reason.
//
// Needs no bwrap and no privileges beyond what seccomp itself needs (NO_NEW_PRIVS). A few
// "unfiltered" expectations assume CAP_SYS_ADMIN (root in the test environment); without it
// those comparisons are skipped, since the kernel's own EPERM looks like the filter's.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "seccomp/filter.h"

#ifndef SRT_PROBE_PATH
#error "SRT_PROBE_PATH must name the srt-probe binary"
#endif

extern char** environ;

namespace srt::seccomp {
namespace {

using ::testing::HasSubstr;

struct ProbeResult {
  int exit_code = -1;  // -1 if killed
  int signal = 0;      // the signal that killed it, or 0
  std::string output;  // stdout and stderr, interleaved
};

std::string Describe(const ProbeResult& r) {
  std::string s = r.signal != 0 ? "killed by signal " + std::to_string(r.signal)
                                : "exit " + std::to_string(r.exit_code);
  if (r.exit_code > 0 && r.exit_code < 200)
    s += std::string(" (") + strerrorname_np(r.exit_code) + ")";
  return s + ", output: " + r.output;
}

// Runs srt-probe with `args`, under `filter` when it is not null. Everything the child needs is
// prepared before fork(); the child only makes async-signal-safe calls.
ProbeResult RunProbe(const std::vector<std::byte>* filter, const std::vector<std::string>& args) {
  std::vector<std::string> storage = {SRT_PROBE_PATH};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);

  sock_fprog prog{};
  if (filter != nullptr) {
    prog.len = static_cast<unsigned short>(filter->size() / sizeof(sock_filter));
    prog.filter = reinterpret_cast<sock_filter*>(const_cast<std::byte*>(filter->data()));
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return {};

  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    if (filter != nullptr) {
      // srt-init's order: NO_NEW_PRIVS, then the filter, then nothing but execve.
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(250);
      if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) _exit(251);
    }
    execve(argv[0], argv.data(), environ);
    _exit(252);
  }
  close(out[1]);
  ProbeResult result;
  char buf[4096];
  while (true) {
    const ssize_t n = read(out[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, static_cast<std::size_t>(n));
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

const std::vector<std::byte>& Filter(const FilterOptions& options) {
  static std::vector<std::byte> filters[4];
  std::vector<std::byte>& f =
      filters[(options.allow_unix_sockets ? 1 : 0) + (options.allow_namespaces ? 2 : 0)];
  if (f.empty()) {
    Result<std::vector<std::byte>> built = BuildFilter(options);
    if (!built.has_value()) {
      ADD_FAILURE() << built.error().message();
    } else {
      f = std::move(built).value();
    }
  }
  return f;
}

// CAP_SYS_ADMIN in the effective set (uid 0 alone is not enough: inside a sandbox root may have
// no capabilities at all).
bool HaveCapSysAdmin() {
  std::FILE* f = std::fopen("/proc/self/status", "re");
  if (f == nullptr) return false;
  char line[256];
  unsigned long long eff = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "CapEff: %llx", &eff) == 1) break;
  }
  std::fclose(f);
  constexpr int kCapSysAdmin = 21;
  return ((eff >> kCapSysAdmin) & 1U) != 0;
}

// Whether `int $0x80` reaches the i386 syscall table here (CONFIG_IA32_EMULATION and not
// disabled with ia32_emulation=0).
bool HaveIa32() {
#if defined(__x86_64__)
  static const bool have = RunProbe(nullptr, {"raw-i386", "20"}).exit_code == 0;  // getpid
  return have;
#else
  return false;
#endif
}

// --- Every rule, one probe case each -----------------------------------------------------------

constexpr int kDiffers = -1;  // unfiltered: anything except the filtered result (env-dependent)

enum class Needs {
  kNothing,
  kX86_64,        // the case uses the i386 or x32 entry points of an x86_64 kernel
  kRootToDiffer,  // without CAP_SYS_ADMIN the kernel itself says EPERM before looking further
};

struct Case {
  std::vector<std::string> args;
  int filtered;    // exit status under the default filter
  int unfiltered;  // exit status without any filter (as root), or kDiffers
  Needs needs = Needs::kNothing;
};

// i386/x32 numbers used with `raw-i386` / `raw` below.
#define X32(nr) std::to_string(0x40000000 | (nr))

const Case kCases[] = {
    // Sockets.
    {{"socket", "unix"}, EPERM, 0},
    {{"socket", "unix", "dgram"}, EPERM, 0},
    {{"socket", "unix", "seqpacket"}, EPERM, 0},
    {{"socket", "vsock"}, EPERM, kDiffers},  // 0, or EAFNOSUPPORT without the vsock module
    {{"socket", "inet"}, 0, 0},
    {{"socket", "inet6", "dgram"}, 0, 0},
    {{"socket", "netlink"}, 0, 0},
    {{"socket-hi32", "unix"}, EPERM, 0},
    {{"socket-hi32", "vsock"}, EPERM, kDiffers},
    {{"socket-hi32", "inet"}, 0, 0},
    {{"socketpair", "unix", "stream"}, 0, 0},
    {{"socketpair", "unix", "dgram"}, EPERM, 0},
    {{"socketpair", "unix", "seqpacket"}, EPERM, 0},
    {{"socketpair", "unix", "raw"}, EPERM, 0},  // af_unix turns SOCK_RAW into SOCK_DGRAM
    {{"socketpair-hi32", "unix", "stream"}, 0, 0},
    {{"socketpair-hi32", "unix", "dgram"}, EPERM, 0},
    {{"socketcall-i386", "socket", "unix"}, EPERM, 0, Needs::kX86_64},
    {{"socketcall-i386", "socket", "inet"}, EPERM, 0, Needs::kX86_64},  // family unreadable
    {{"socketcall-i386", "socketpair", "unix", "stream"}, EPERM, 0, Needs::kX86_64},
    {{"socketcall-i386", "socketpair", "unix", "dgram"}, EPERM, 0, Needs::kX86_64},
    {{"socket-i386", "unix"}, EPERM, 0, Needs::kX86_64},
    {{"socket-i386", "vsock"}, EPERM, kDiffers, Needs::kX86_64},
    {{"socket-i386", "inet"}, 0, 0, Needs::kX86_64},
    {{"socket-i386-hi32", "unix"}, EPERM, 0, Needs::kX86_64},
    {{"socketpair-i386", "unix", "stream"}, 0, 0, Needs::kX86_64},
    {{"socketpair-i386", "unix", "dgram"}, EPERM, 0, Needs::kX86_64},
    {{"socket-x32", "unix"}, EPERM, kDiffers, Needs::kX86_64},  // ENOSYS without x32 ABI
    {{"socket-x32", "vsock"}, EPERM, kDiffers, Needs::kX86_64},
    // io_uring.
    {{"io_uring_setup"}, EPERM, kDiffers},  // EINVAL unless kernel.io_uring_disabled=2
    {{"io_uring_enter"}, EPERM, EBADF},
    {{"io_uring_register"}, EPERM, EBADF},
    // Namespaces.
    {{"unshare", "user"}, EPERM, EINVAL},
    {{"unshare", "mnt"}, EPERM, EINVAL},
    {{"unshare", "net"}, EPERM, EINVAL},
    {{"unshare", "pid"}, EPERM, EINVAL},
    {{"unshare", "ipc"}, EPERM, EINVAL},
    {{"unshare", "uts"}, EPERM, EINVAL},
    {{"unshare", "cgroup"}, EPERM, EINVAL},
    {{"unshare", "time"}, EPERM, EINVAL},
    {{"unshare", "user", "real"}, EPERM, 0, Needs::kRootToDiffer},
    {{"clone-ns", "user"}, EPERM, EINVAL},
    {{"clone-ns", "mnt"}, EPERM, EINVAL},
    {{"clone-ns", "net"}, EPERM, EINVAL},
    {{"clone-ns", "pid"}, EPERM, EINVAL},
    {{"clone-ns", "ipc"}, EPERM, EINVAL},
    {{"clone-ns", "uts"}, EPERM, EINVAL},
    {{"clone-ns", "cgroup"}, EPERM, EINVAL},
    {{"clone-ns", "user", "real"}, EPERM, 0, Needs::kRootToDiffer},
    {{"clone-ns", "pid", "real"}, EPERM, 0, Needs::kRootToDiffer},
    {{"clone3"}, ENOSYS, EINVAL},
    {{"clone-plain"}, 0, 0},
    {{"setns"}, EPERM, EBADF},
    // Mounts.
    {{"mount"}, EPERM, ENOENT},
    {{"umount"}, EPERM, ENOENT},
    {{"pivot_root"}, EPERM, ENOENT, Needs::kRootToDiffer},
    {{"chroot"}, EPERM, ENOENT},
    {{"open_tree"}, EPERM, ENOENT},
    {{"move_mount"}, EPERM, ENOENT, Needs::kRootToDiffer},
    {{"fsopen"}, EPERM, ENODEV, Needs::kRootToDiffer},
    {{"fsconfig"}, EPERM, EINVAL},
    {{"fsmount"}, EPERM, EBADF, Needs::kRootToDiffer},
    {{"fspick"}, EPERM, ENOENT, Needs::kRootToDiffer},
    {{"mount_setattr"}, EPERM, EINVAL},
    // Terminal ioctls (fd -1: the filter does not look at the fd).
    {{"ioctl-tiocsti"}, EPERM, EBADF},
    {{"ioctl-tiocsti-hi32"}, EPERM, EBADF},
    {{"ioctl-tioclinux"}, EPERM, EBADF},
    {{"ioctl-tioclinux-hi32"}, EPERM, EBADF},
    // Kernel surface and other processes.
    {{"keyctl"}, EPERM, EOPNOTSUPP},
    {{"add_key"}, EPERM, EFAULT},
    {{"request_key"}, EPERM, EFAULT},
    {{"bpf"}, EPERM, kDiffers},  // EINVAL; EPERM on old kernels with unprivileged_bpf_disabled
    {{"perf_event_open"}, EPERM, EFAULT},
    {{"userfaultfd"}, EPERM, EINVAL},
    {{"ptrace"}, EPERM, ESRCH},
    {{"ptrace", "traceme"}, EPERM, 0},
    {{"process_vm_readv"}, EPERM, EINVAL},
    {{"process_vm_writev"}, EPERM, EINVAL},
    // personality: only 0, 8 and the 0xffffffff query, compared on the low 32 bits.
    {{"personality", "0xffffffff"}, 0, 0},
    {{"personality", "0xffffffffffffffff"}, 0, 0},
    {{"personality", "0"}, 0, 0},
    {{"personality", "0xdeadbeef00000000"}, 0, 0},
    {{"personality", "8"}, 0, 0},
    {{"personality", "0x0040000"}, EPERM, 0},  // ADDR_NO_RANDOMIZE
    {{"personality", "0x0400000"}, EPERM, 0},  // READ_IMPLIES_EXEC
    {{"personality", "0xdeadbeef00040000"}, EPERM, 0},
    {{"personality", "0x8000008"}, EPERM, 0},  // PER_LINUX32 | STICKY_TIMEOUTS
    // i386 entry points of the other rules (int $0x80; pointers NULL, numbers truncated).
    {{"raw-i386", "310", "0x10002000"}, EPERM, EINVAL, Needs::kX86_64},  // unshare(USER|PTRACE)
    {{"raw-i386", "120", "0x40010011"},
     EPERM,
     EINVAL,
     Needs::kX86_64},                                                 // clone(NET|THREAD|SIGCHLD)
    {{"raw-i386", "435", "0", "0"}, ENOSYS, EINVAL, Needs::kX86_64},  // clone3
    {{"raw-i386", "346", "-1", "0"}, EPERM, EBADF, Needs::kX86_64},   // setns
    {{"raw-i386", "21", "0", "0", "0", "0", "0"}, EPERM, EFAULT, Needs::kX86_64},  // mount
    {{"raw-i386", "22", "0"}, EPERM, EFAULT, Needs::kX86_64},                      // umount
    {{"raw-i386", "52", "0", "0"}, EPERM, EFAULT, Needs::kX86_64},                 // umount2
    {{"raw-i386", "61", "0"}, EPERM, EFAULT, Needs::kX86_64},                      // chroot
    {{"raw-i386", "54", "-1", "0x5412", "0"}, EPERM, EBADF, Needs::kX86_64},       // ioctl TIOCSTI
    {{"raw-i386", "54", "-1", "0x541c", "0"}, EPERM, EBADF, Needs::kX86_64},  // ioctl TIOCLINUX
    {{"raw-i386", "54", "-1", "0x5413", "0"}, EBADF, EBADF, Needs::kX86_64},  // TIOCGWINSZ
    {{"raw-i386", "136", "0x0040000"}, EPERM, 0, Needs::kX86_64},             // personality
    {{"raw-i386", "136", "0xffffffff"}, 0, 0, Needs::kX86_64},
    {{"raw-i386", "425", "0", "0"}, EPERM, kDiffers, Needs::kX86_64},            // io_uring_setup
    {{"raw-i386", "288", "0x7fffffff"}, EPERM, EOPNOTSUPP, Needs::kX86_64},      // keyctl
    {{"raw-i386", "26", "3", "0x7fffffff"}, EPERM, ESRCH, Needs::kX86_64},       // ptrace PEEKUSER
    {{"raw-i386", "357", "0x7fff", "0", "0"}, EPERM, kDiffers, Needs::kX86_64},  // bpf
    {{"raw-i386", "374", "3"}, EPERM, EINVAL, Needs::kX86_64},  // userfaultfd(MODE_ONLY|O_RDWR)
    // x32 entry points (ENOSYS unfiltered when the kernel lacks CONFIG_X86_X32_ABI).
    {{"raw", X32(272), "0x10002000"}, EPERM, kDiffers, Needs::kX86_64},             // unshare
    {{"raw", X32(56), "0x40010011"}, EPERM, kDiffers, Needs::kX86_64},              // clone
    {{"raw", X32(514), "-1", "0x5412", "0"}, EPERM, kDiffers, Needs::kX86_64},      // ioctl TIOCSTI
    {{"raw", X32(135), "0x0040000"}, EPERM, kDiffers, Needs::kX86_64},              // personality
    {{"raw", X32(308), "-1", "0"}, EPERM, kDiffers, Needs::kX86_64},                // setns
    {{"raw", X32(165), "0", "0", "0", "0", "0"}, EPERM, kDiffers, Needs::kX86_64},  // mount
    {{"raw", X32(250), "0x7fffffff"}, EPERM, kDiffers, Needs::kX86_64},             // keyctl
};

#undef X32

// Readable test parameters in ctest/gtest output.
void PrintTo(const Case& c, std::ostream* os) {
  *os << testing::PrintToString(c.args) << " filtered=" << c.filtered
      << " unfiltered=" << c.unfiltered;
}

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  std::string name = std::to_string(info.index);
  for (const std::string& a : info.param.args) {
    name += '_';
    for (const char c : a) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return name;
}

class SeccompProbeTest : public ::testing::TestWithParam<Case> {};

TEST_P(SeccompProbeTest, FilteredResultComesFromTheFilter) {
  const Case& c = GetParam();
#if !defined(__x86_64__)
  if (c.needs == Needs::kX86_64) GTEST_SKIP() << "x86_64 entry points only";
#endif
  const ProbeResult filtered = RunProbe(&Filter(FilterOptions{}), c.args);
  if (c.needs == Needs::kX86_64 && !HaveIa32() && c.args[0].find("i386") != std::string::npos &&
      filtered.signal != 0) {
    GTEST_SKIP() << "no IA32 emulation: int $0x80 " << Describe(filtered);
  }
  EXPECT_EQ(filtered.signal, 0) << Describe(filtered);
  EXPECT_EQ(filtered.exit_code, c.filtered) << Describe(filtered);

  const ProbeResult unfiltered = RunProbe(nullptr, c.args);
  if (c.needs == Needs::kRootToDiffer && !HaveCapSysAdmin()) return;
  if (c.needs == Needs::kX86_64 && !HaveIa32() && c.args[0].find("i386") != std::string::npos) {
    return;  // unfiltered, int $0x80 has nowhere to go
  }
  EXPECT_EQ(unfiltered.signal, 0) << Describe(unfiltered);
  if (c.unfiltered == kDiffers) {
    if (c.filtered != 0) {
      EXPECT_NE(unfiltered.exit_code, c.filtered) << Describe(unfiltered);
    }
  } else {
    EXPECT_EQ(unfiltered.exit_code, c.unfiltered) << Describe(unfiltered);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryRule, SeccompProbeTest, ::testing::ValuesIn(kCases), CaseName);

// --- Options -----------------------------------------------------------------------------------

struct OptionCase {
  FilterOptions options;
  std::vector<std::string> args;
  int expected;
};

const FilterOptions kAllowUnix{.allow_unix_sockets = true, .allow_namespaces = false};
const FilterOptions kAllowNs{.allow_unix_sockets = false, .allow_namespaces = true};

TEST(SeccompOptionsTest, AllowUnixSocketsLiftsOnlyTheUnixRules) {
  const OptionCase cases[] = {
    {kAllowUnix, {"socket", "unix"}, 0},
    {kAllowUnix, {"socket-hi32", "unix"}, 0},
    {kAllowUnix, {"socketpair", "unix", "dgram"}, 0},
    {kAllowUnix, {"socketpair", "unix", "seqpacket"}, 0},
    {kAllowUnix, {"socket", "vsock"}, EPERM},
    {kAllowUnix, {"socket-hi32", "vsock"}, EPERM},
#if defined(__x86_64__)
    {kAllowUnix, {"socket-x32", "vsock"}, EPERM},
#endif
    {kAllowUnix, {"unshare", "user"}, EPERM},
    {kAllowUnix, {"mount"}, EPERM},
    {kAllowUnix, {"ioctl-tiocsti"}, EPERM},
    {kAllowUnix, {"io_uring_setup"}, EPERM},
  };
  for (const OptionCase& c : cases) {
    const ProbeResult r = RunProbe(&Filter(c.options), c.args);
    EXPECT_EQ(r.exit_code, c.expected) << testing::PrintToString(c.args) << ": " << Describe(r);
  }
}

// The same through the i386 entry points, which only a kernel with IA32 emulation has: elsewhere
// `int $0x80` kills the probe before the filter ever sees the call.
TEST(SeccompOptionsTest, AllowUnixSocketsLiftsOnlyTheUnixRulesOnI386) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "i386 entry points exist only on x86_64";
#else
  if (!HaveIa32()) {
    GTEST_SKIP() << "no IA32 emulation on this kernel: int $0x80 "
                 << Describe(RunProbe(nullptr, {"raw-i386", "20"}));
  }
  const OptionCase cases[] = {
      {kAllowUnix, {"socket-i386", "unix"}, 0},
      {kAllowUnix, {"socket-i386", "vsock"}, EPERM},
      {kAllowUnix, {"socketpair-i386", "unix", "dgram"}, 0},
      {kAllowUnix, {"socketcall-i386", "socketpair", "unix", "dgram"}, 0},
      // socketcall(SYS_SOCKET) stays refused: AF_VSOCK must stay denied and the family of a
      // socketcall is behind a pointer.
      {kAllowUnix, {"socketcall-i386", "socket", "unix"}, EPERM},
  };
  for (const OptionCase& c : cases) {
    const ProbeResult r = RunProbe(&Filter(c.options), c.args);
    EXPECT_EQ(r.exit_code, c.expected) << testing::PrintToString(c.args) << ": " << Describe(r);
  }
#endif
}

TEST(SeccompOptionsTest, AllowNamespacesLiftsOnlyTheNamespaceAndMountRules) {
  const OptionCase cases[] = {
      {kAllowNs, {"unshare", "user"}, EINVAL}, {kAllowNs, {"unshare", "mnt"}, EINVAL},
      {kAllowNs, {"unshare", "time"}, EINVAL}, {kAllowNs, {"clone-ns", "net"}, EINVAL},
      {kAllowNs, {"clone3"}, EINVAL},          {kAllowNs, {"setns"}, EBADF},
      {kAllowNs, {"mount"}, ENOENT},           {kAllowNs, {"umount"}, ENOENT},
      {kAllowNs, {"chroot"}, ENOENT},          {kAllowNs, {"open_tree"}, ENOENT},
      {kAllowNs, {"mount_setattr"}, EINVAL},   {kAllowNs, {"fsconfig"}, EINVAL},
      {kAllowNs, {"socket", "unix"}, EPERM},   {kAllowNs, {"socketpair", "unix", "dgram"}, EPERM},
      {kAllowNs, {"ioctl-tiocsti"}, EPERM},    {kAllowNs, {"keyctl"}, EPERM},
      {kAllowNs, {"ptrace"}, EPERM},           {kAllowNs, {"personality", "0x0040000"}, EPERM},
      {kAllowNs, {"io_uring_enter"}, EPERM},
  };
  for (const OptionCase& c : cases) {
    const ProbeResult r = RunProbe(&Filter(c.options), c.args);
    EXPECT_EQ(r.exit_code, c.expected) << testing::PrintToString(c.args) << ": " << Describe(r);
  }
  if (HaveCapSysAdmin()) {
    // The real thing works again (for root; an unprivileged caller gets the kernel's answer).
    for (const char* ns : {"user", "mnt", "net", "pid"}) {
      EXPECT_EQ(RunProbe(&Filter(kAllowNs), {"unshare", ns, "real"}).exit_code, 0) << ns;
      EXPECT_EQ(RunProbe(&Filter(kAllowNs), {"clone-ns", ns, "real"}).exit_code, 0) << ns;
    }
  }
}

// --- What the process sees ----------------------------------------------------------------------

TEST(SeccompProcessTest, StatusShowsOneFilterAndNoNewPrivs) {
  const ProbeResult r = RunProbe(&Filter(FilterOptions{}), {"uid"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.output, HasSubstr("NoNewPrivs:\t1"));
  EXPECT_THAT(r.output, HasSubstr("Seccomp:\t2"));
  EXPECT_THAT(r.output, HasSubstr("Seccomp_filters:\t1"));
}

TEST(SeccompProcessTest, OrdinaryWorkStillWorks) {
  // fork via clone, exit status passthrough, signals, environment: all untouched.
  EXPECT_EQ(RunProbe(&Filter(FilterOptions{}), {"clone-plain"}).exit_code, 0);
  EXPECT_EQ(RunProbe(&Filter(FilterOptions{}), {"exit", "42"}).exit_code, 42);
  EXPECT_EQ(RunProbe(&Filter(FilterOptions{}), {"kill-self", "TERM"}).signal, SIGTERM);
  EXPECT_EQ(RunProbe(&Filter(FilterOptions{}), {"sleep", "0.01"}).exit_code, 0);
  EXPECT_EQ(RunProbe(&Filter(FilterOptions{}), {"fds"}).exit_code, 0);
}

#if defined(__x86_64__)
TEST(SeccompProcessTest, Ia32AndX32AvailabilityIsReported) {
  // Not an assertion about the kernel, a record of it: the filter must not depend on either.
  const ProbeResult i386 = RunProbe(nullptr, {"raw-i386", "20"});
  const ProbeResult x32 = RunProbe(nullptr, {"raw", std::to_string(0x40000000 | 39)});
  RecordProperty("ia32", i386.exit_code == 0 ? "available" : Describe(i386));
  RecordProperty("x32", x32.exit_code == 0 ? "available" : Describe(x32));
  std::printf("IA32 emulation: %s\nx32 ABI: %s\n",
              i386.exit_code == 0 ? "available" : Describe(i386).c_str(),
              x32.exit_code == 0 ? "available" : Describe(x32).c_str());
  // An x32 call under the filter is judged by the x32 rules even when the kernel would answer
  // ENOSYS: seccomp runs before the syscall table lookup.
  const ProbeResult filtered = RunProbe(&Filter(FilterOptions{}), {"socket-x32", "unix"});
  EXPECT_EQ(filtered.exit_code, EPERM) << Describe(filtered);
  const ProbeResult allowed =
      RunProbe(&Filter(FilterOptions{}), {"raw", std::to_string(0x40000000 | 39)});
  EXPECT_EQ(allowed.exit_code, x32.exit_code) << Describe(allowed);
}
#endif

}  // namespace
}  // namespace srt::seccomp
