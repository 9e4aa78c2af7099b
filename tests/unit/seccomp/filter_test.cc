// SPDX-License-Identifier: Apache-2.0
// Unit tests for seccomp/compile and seccomp/filter: the compiled program's shape, its verdicts
// for every rule on every architecture (through a small classic-BPF interpreter, so x32 and arm
// are covered on any host), and live runs of the built-in programs (BuildFilter, what srt loads)
// in a forked child under the real kernel.
#include "seccomp/filter.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/net.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "seccomp/compile.h"

namespace srt::seccomp {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr std::uint32_t kEperm = SECCOMP_RET_ERRNO | EPERM;
constexpr std::uint32_t kEnosys = SECCOMP_RET_ERRNO | ENOSYS;
constexpr std::uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr int kX32Bit = 0x40000000;  // __X32_SYSCALL_BIT
constexpr std::uint64_t kGarbageHigh = 0xdeadbeef00000000ULL;

const FilterOptions kDefault{};
const FilterOptions kAllowUnix{.allow_unix_sockets = true, .allow_namespaces = false};
const FilterOptions kAllowNs{.allow_unix_sockets = false, .allow_namespaces = true};
const FilterOptions kAllowBoth{.allow_unix_sockets = true, .allow_namespaces = true};

// ---------------------------------------------------------------------------------------------
// A classic-BPF interpreter for seccomp programs (the subset the kernel accepts for seccomp).

struct Verdict {
  bool ok;              // false: the program is malformed (bad opcode, jump, or load)
  std::uint32_t value;  // SECCOMP_RET_* when ok
};

Verdict Run(const std::vector<sock_filter>& prog, const seccomp_data& data) {
  std::uint32_t a = 0;
  std::uint32_t x = 0;
  std::array<std::uint32_t, BPF_MEMWORDS> mem{};
  std::size_t pc = 0;
  while (pc < prog.size()) {
    const sock_filter& in = prog[pc];
    const std::uint32_t src = BPF_SRC(in.code) == BPF_X ? x : in.k;
    switch (BPF_CLASS(in.code)) {
      case BPF_LD:
        if (in.code == (BPF_LD | BPF_W | BPF_ABS)) {
          if (in.k % 4 != 0 || in.k + 4 > sizeof(data)) return {false, 0};
          std::memcpy(&a, reinterpret_cast<const char*>(&data) + in.k, 4);
        } else if (in.code == (BPF_LD | BPF_IMM)) {
          a = in.k;
        } else if (in.code == (BPF_LD | BPF_MEM) && in.k < BPF_MEMWORDS) {
          a = mem[in.k];
        } else {
          return {false, 0};
        }
        break;
      case BPF_LDX:
        if (in.code == (BPF_LDX | BPF_IMM)) {
          x = in.k;
        } else if (in.code == (BPF_LDX | BPF_MEM) && in.k < BPF_MEMWORDS) {
          x = mem[in.k];
        } else {
          return {false, 0};
        }
        break;
      case BPF_ST:
        if (in.k >= BPF_MEMWORDS) return {false, 0};
        mem[in.k] = a;
        break;
      case BPF_STX:
        if (in.k >= BPF_MEMWORDS) return {false, 0};
        mem[in.k] = x;
        break;
      case BPF_ALU:
        switch (BPF_OP(in.code)) {
          case BPF_AND:
            a &= src;
            break;
          case BPF_OR:
            a |= src;
            break;
          case BPF_ADD:
            a += src;
            break;
          case BPF_SUB:
            a -= src;
            break;
          case BPF_LSH:
            a = src < 32 ? a << src : 0;
            break;
          case BPF_RSH:
            a = src < 32 ? a >> src : 0;
            break;
          case BPF_NEG:
            a = 0U - a;
            break;
          default:
            return {false, 0};
        }
        break;
      case BPF_JMP: {
        if (BPF_OP(in.code) == BPF_JA) {
          pc += 1 + in.k;
          continue;
        }
        bool cond = false;
        switch (BPF_OP(in.code)) {
          case BPF_JEQ:
            cond = a == src;
            break;
          case BPF_JGT:
            cond = a > src;
            break;
          case BPF_JGE:
            cond = a >= src;
            break;
          case BPF_JSET:
            cond = (a & src) != 0;
            break;
          default:
            return {false, 0};
        }
        pc += 1 + (cond ? in.jt : in.jf);
        continue;
      }
      case BPF_RET:
        if (BPF_RVAL(in.code) == BPF_K) return {true, in.k};
        if (BPF_RVAL(in.code) == BPF_A) return {true, a};
        return {false, 0};
      case BPF_MISC:
        if (BPF_MISCOP(in.code) == BPF_TAX) {
          x = a;
        } else if (BPF_MISCOP(in.code) == BPF_TXA) {
          a = x;
        } else {
          return {false, 0};
        }
        break;
      default:
        return {false, 0};
    }
    ++pc;
  }
  return {false, 0};  // fell off the end: the kernel's checker rejects such programs
}

std::vector<sock_filter> Decode(const std::vector<std::byte>& bytes) {
  std::vector<sock_filter> prog(bytes.size() / sizeof(sock_filter));
  std::memcpy(prog.data(), bytes.data(), prog.size() * sizeof(sock_filter));
  return prog;
}

std::vector<sock_filter> MustBuild(const FilterOptions& options, HostArch host) {
  Result<std::vector<std::byte>> bytes = CompileFilter(options, host);
  if (!bytes.has_value()) {
    ADD_FAILURE() << bytes.error().message();
    return {};
  }
  return Decode(*bytes);
}

// One simulated call: architecture, syscall number, up to six arguments.
struct Call {
  std::uint32_t arch;
  int nr;
  std::array<std::uint64_t, 6> args{};
};

std::uint32_t Eval(const std::vector<sock_filter>& prog, const Call& call) {
  seccomp_data data{};
  data.nr = call.nr;
  data.arch = call.arch;
  data.instruction_pointer = 0x400000;
  for (std::size_t i = 0; i < 6; ++i) data.args[i] = call.args[i];
  const Verdict v = Run(prog, data);
  EXPECT_TRUE(v.ok) << "malformed program for nr " << call.nr;
  return v.value;
}

// Hard-coded syscall numbers (they are ABI, and the test should not trust libseccomp's tables).
namespace x86_64 {
constexpr int kIoctl = 16, kSocket = 41, kSocketpair = 53, kClone = 56, kGetpid = 39,
              kPersonality = 135, kMount = 165, kUmount2 = 166, kUnshare = 272, kSetns = 308,
              kClone3 = 435, kIoUringSetup = 425, kKeyctl = 250, kPtrace = 101, kBpf = 321,
              kOpenTree = 428, kMountSetattr = 442;
}  // namespace x86_64
namespace i386 {
constexpr int kMount = 21, kUmount = 22, kGetpid = 20, kUmount2 = 52, kIoctl = 54,
              kSocketcall = 102, kClone = 120, kPersonality = 136, kUnshare = 310, kSetns = 346,
              kSocket = 359, kSocketpair = 360, kClone3 = 435;
}  // namespace i386
namespace x32 {
constexpr int kSocket = kX32Bit | 41, kSocketpair = kX32Bit | 53, kClone = kX32Bit | 56,
              kGetpid = kX32Bit | 39, kPersonality = kX32Bit | 135, kUnshare = kX32Bit | 272,
              kIoctl = kX32Bit | 514;  // x32 has its own ioctl entry (514), not 16
}  // namespace x32
namespace aarch64 {
constexpr int kIoctl = 29, kUmount2 = 39, kMount = 40, kPersonality = 92, kUnshare = 97,
              kGetpid = 172, kSocket = 198, kSocketpair = 199, kClone = 220, kClone3 = 435;
}  // namespace aarch64
namespace arm {
constexpr int kGetpid = 20, kMount = 21, kUmount2 = 52, kIoctl = 54, kClone = 120,
              kPersonality = 136, kSocket = 281, kSocketpair = 288, kUnshare = 337;
}  // namespace arm

// ---------------------------------------------------------------------------------------------
// Shape.

TEST(FilterShapeTest, BuildsForEveryOptionCombinationAndHost) {
  for (const HostArch host : {HostArch::kNative, HostArch::kX86_64, HostArch::kAarch64}) {
    for (const FilterOptions& options : {kDefault, kAllowUnix, kAllowNs, kAllowBoth}) {
      SCOPED_TRACE(testing::Message()
                   << "host " << static_cast<int>(host) << " unix " << options.allow_unix_sockets
                   << " ns " << options.allow_namespaces);
      Result<std::vector<std::byte>> bytes = CompileFilter(options, host);
      ASSERT_TRUE(bytes.has_value()) << bytes.error().message();
      ASSERT_FALSE(bytes->empty());
      EXPECT_EQ(bytes->size() % 8, 0U);
      const std::vector<sock_filter> prog = Decode(*bytes);
      EXPECT_LT(prog.size(), 4096U);
      // The first thing a seccomp filter must do is look at the architecture.
      EXPECT_EQ(prog[0].code, BPF_LD | BPF_W | BPF_ABS);
      EXPECT_EQ(prog[0].k, offsetof(seccomp_data, arch));
      EXPECT_TRUE(std::any_of(prog.begin(), prog.end(), [](const sock_filter& in) {
        return in.code == (BPF_RET | BPF_K) && in.k == kKill;
      })) << "no KILL_PROCESS return for foreign architectures";
    }
  }
}

TEST(FilterShapeTest, NativeIsOneOfTheNamedHosts) {
  Result<std::vector<std::byte>> native = CompileFilter(kDefault, HostArch::kNative);
  ASSERT_TRUE(native.has_value());
#if defined(__x86_64__)
  Result<std::vector<std::byte>> named = CompileFilter(kDefault, HostArch::kX86_64);
#elif defined(__aarch64__)
  Result<std::vector<std::byte>> named = CompileFilter(kDefault, HostArch::kAarch64);
#else
  GTEST_SKIP() << "no named host for this architecture";
  Result<std::vector<std::byte>> named = CompileFilter(kDefault, HostArch::kNative);
#endif
  ASSERT_TRUE(named.has_value());
  EXPECT_EQ(*native, *named);
}

TEST(FilterShapeTest, IsDeterministic) {
  Result<std::vector<std::byte>> a = CompileFilter(kDefault, HostArch::kNative);
  Result<std::vector<std::byte>> b = CompileFilter(kDefault, HostArch::kNative);
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(*a, *b);
}

// ---------------------------------------------------------------------------------------------
// Verdicts on an x86_64 host: x86_64, i386 and x32 entry points.

class X86HostTest : public ::testing::Test {
 protected:
  static std::uint32_t V(const FilterOptions& o, std::uint32_t arch, int nr,
                         std::array<std::uint64_t, 6> args = {}) {
    return Eval(Prog(o), Call{arch, nr, args});
  }
  static const std::vector<sock_filter>& Prog(const FilterOptions& o) {
    static const std::vector<sock_filter> progs[4] = {
        MustBuild(kDefault, HostArch::kX86_64), MustBuild(kAllowUnix, HostArch::kX86_64),
        MustBuild(kAllowNs, HostArch::kX86_64), MustBuild(kAllowBoth, HostArch::kX86_64)};
    return progs[(o.allow_unix_sockets ? 1 : 0) + (o.allow_namespaces ? 2 : 0)];
  }
  static constexpr std::uint32_t k64 = AUDIT_ARCH_X86_64;
  static constexpr std::uint32_t k32 = AUDIT_ARCH_I386;
};

TEST_F(X86HostTest, ForeignArchitectureIsKilled) {
  EXPECT_EQ(V(kDefault, AUDIT_ARCH_AARCH64, x86_64::kGetpid), kKill);
  EXPECT_EQ(V(kDefault, AUDIT_ARCH_ARM, 20), kKill);
  EXPECT_EQ(V(kAllowBoth, 0x12345678, 0), kKill);
}

TEST_F(X86HostTest, UnrelatedSyscallsAreAllowedOnEveryAbi) {
  EXPECT_EQ(V(kDefault, k64, x86_64::kGetpid), kAllow);
  EXPECT_EQ(V(kDefault, k32, i386::kGetpid), kAllow);
  EXPECT_EQ(V(kDefault, k64, x32::kGetpid), kAllow);
  // The -1 "skip" syscall that tracers use must not be trapped.
  EXPECT_EQ(V(kDefault, k64, -1), kAllow);
}

TEST_F(X86HostTest, SocketFamilies) {
  for (const std::uint64_t hi : {std::uint64_t{0}, kGarbageHigh}) {
    SCOPED_TRACE(hi);
    EXPECT_EQ(V(kDefault, k64, x86_64::kSocket, {hi | AF_UNIX, SOCK_STREAM}), kEperm);
    EXPECT_EQ(V(kDefault, k64, x86_64::kSocket, {hi | AF_VSOCK, SOCK_STREAM}), kEperm);
    EXPECT_EQ(V(kDefault, k64, x86_64::kSocket, {hi | AF_INET, SOCK_STREAM}), kAllow);
    EXPECT_EQ(V(kDefault, k64, x86_64::kSocket, {hi | AF_INET6, SOCK_DGRAM}), kAllow);
    EXPECT_EQ(V(kDefault, k64, x86_64::kSocket, {hi | AF_NETLINK, SOCK_RAW}), kAllow);
    EXPECT_EQ(V(kDefault, k32, i386::kSocket, {hi | AF_UNIX, SOCK_STREAM}), kEperm);
    EXPECT_EQ(V(kDefault, k32, i386::kSocket, {hi | AF_VSOCK, SOCK_STREAM}), kEperm);
    EXPECT_EQ(V(kDefault, k32, i386::kSocket, {hi | AF_INET, SOCK_STREAM}), kAllow);
    EXPECT_EQ(V(kDefault, k64, x32::kSocket, {hi | AF_UNIX, SOCK_STREAM}), kEperm);
    EXPECT_EQ(V(kDefault, k64, x32::kSocket, {hi | AF_VSOCK, SOCK_STREAM}), kEperm);
    EXPECT_EQ(V(kDefault, k64, x32::kSocket, {hi | AF_INET, SOCK_STREAM}), kAllow);

    EXPECT_EQ(V(kAllowUnix, k64, x86_64::kSocket, {hi | AF_UNIX, SOCK_STREAM}), kAllow);
    EXPECT_EQ(V(kAllowUnix, k64, x86_64::kSocket, {hi | AF_VSOCK, SOCK_STREAM}), kEperm);
    EXPECT_EQ(V(kAllowUnix, k32, i386::kSocket, {hi | AF_UNIX, SOCK_STREAM}), kAllow);
    EXPECT_EQ(V(kAllowUnix, k32, i386::kSocket, {hi | AF_VSOCK, SOCK_STREAM}), kEperm);
    EXPECT_EQ(V(kAllowUnix, k64, x32::kSocket, {hi | AF_UNIX, SOCK_STREAM}), kAllow);
    EXPECT_EQ(V(kAllowUnix, k64, x32::kSocket, {hi | AF_VSOCK, SOCK_STREAM}), kEperm);
  }
  // A family that merely shares the low bits of AF_UNIX in the upper half is not AF_UNIX.
  EXPECT_EQ(V(kDefault, k64, x86_64::kSocket, {std::uint64_t{AF_UNIX} << 32 | AF_INET}), kAllow);
}

TEST_F(X86HostTest, SocketpairAllowsOnlyUnixStream) {
  for (const int nr_arch : {0, 1, 2}) {
    const std::uint32_t arch = nr_arch == 1 ? k32 : k64;
    const int nr = nr_arch == 0   ? x86_64::kSocketpair
                   : nr_arch == 1 ? i386::kSocketpair
                                  : x32::kSocketpair;
    SCOPED_TRACE(nr);
    for (const std::uint64_t flags :
         {std::uint64_t{0}, std::uint64_t{SOCK_CLOEXEC}, std::uint64_t{SOCK_NONBLOCK}}) {
      for (std::uint64_t type = 0; type < 16; ++type) {
        const std::uint32_t expected = type == SOCK_STREAM ? kAllow : kEperm;
        EXPECT_EQ(V(kDefault, arch, nr, {AF_UNIX, type | flags}), expected) << type;
        EXPECT_EQ(V(kDefault, arch, nr, {kGarbageHigh | AF_UNIX, kGarbageHigh | type | flags}),
                  expected)
            << type;
        EXPECT_EQ(V(kAllowUnix, arch, nr, {AF_UNIX, type | flags}), kAllow) << type;
      }
    }
    EXPECT_EQ(V(kDefault, arch, nr, {AF_INET, SOCK_DGRAM}), kAllow);
  }
}

TEST_F(X86HostTest, I386SocketcallIsRefusedForSocketAndSocketpair) {
  // arg1 is a pointer to the real arguments; whatever it points at, the call is refused.
  for (const std::uint64_t ptr : {std::uint64_t{0x10000}, std::uint64_t{0x10002}}) {
    EXPECT_EQ(V(kDefault, k32, i386::kSocketcall, {SYS_SOCKET, ptr}), kEperm);
    EXPECT_EQ(V(kDefault, k32, i386::kSocketcall, {SYS_SOCKETPAIR, ptr}), kEperm);
    EXPECT_EQ(V(kDefault, k32, i386::kSocketcall, {SYS_CONNECT, ptr}), kAllow);
    EXPECT_EQ(V(kDefault, k32, i386::kSocketcall, {SYS_SENDMSG, ptr}), kAllow);
    // allow_unix_sockets lifts SYS_SOCKETPAIR but not SYS_SOCKET (AF_VSOCK stays denied).
    EXPECT_EQ(V(kAllowUnix, k32, i386::kSocketcall, {SYS_SOCKET, ptr}), kEperm);
    EXPECT_EQ(V(kAllowUnix, k32, i386::kSocketcall, {SYS_SOCKETPAIR, ptr}), kAllow);
    EXPECT_EQ(V(kAllowNs, k32, i386::kSocketcall, {SYS_SOCKET, ptr}), kEperm);
  }
}

TEST_F(X86HostTest, IoUringIsRefused) {
  for (const int nr : {x86_64::kIoUringSetup, 426, 427}) {
    EXPECT_EQ(V(kDefault, k64, nr), kEperm);
    EXPECT_EQ(V(kAllowBoth, k64, nr), kEperm);
    EXPECT_EQ(V(kDefault, k32, nr), kEperm);  // same numbers on i386
    EXPECT_EQ(V(kDefault, k64, kX32Bit | nr), kEperm);
  }
}

TEST_F(X86HostTest, NamespaceFlags) {
  const std::uint64_t ns_flags[] = {CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                    CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET};
  for (const std::uint64_t flag : ns_flags) {
    SCOPED_TRACE(flag);
    for (const std::uint64_t extra :
         {std::uint64_t{0}, std::uint64_t{SIGCHLD}, kGarbageHigh | CLONE_FILES}) {
      EXPECT_EQ(V(kDefault, k64, x86_64::kUnshare, {flag | extra}), kEperm);
      EXPECT_EQ(V(kDefault, k64, x86_64::kClone, {flag | extra}), kEperm);
      EXPECT_EQ(V(kDefault, k32, i386::kUnshare, {flag | extra}), kEperm);
      EXPECT_EQ(V(kDefault, k32, i386::kClone, {flag | extra}), kEperm);
      EXPECT_EQ(V(kDefault, k64, x32::kUnshare, {flag | extra}), kEperm);
      EXPECT_EQ(V(kDefault, k64, x32::kClone, {flag | extra}), kEperm);
      EXPECT_EQ(V(kAllowNs, k64, x86_64::kUnshare, {flag | extra}), kAllow);
      EXPECT_EQ(V(kAllowNs, k64, x86_64::kClone, {flag | extra}), kAllow);
      EXPECT_EQ(V(kAllowNs, k32, i386::kClone, {flag | extra}), kAllow);
    }
  }
  // CLONE_NEWTIME: refused for unshare; for clone 0x80 is part of the exit signal byte.
  EXPECT_EQ(V(kDefault, k64, x86_64::kUnshare, {CLONE_NEWTIME}), kEperm);
  EXPECT_EQ(V(kDefault, k64, x86_64::kClone, {0x80 | SIGCHLD}), kAllow);
  // Plain fork-like and thread-like clones, and unshare of non-namespace state, still work.
  EXPECT_EQ(V(kDefault, k64, x86_64::kClone, {SIGCHLD}), kAllow);
  EXPECT_EQ(V(kDefault, k64, x86_64::kClone,
              {CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
               CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID}),
            kAllow);
  EXPECT_EQ(V(kDefault, k64, x86_64::kUnshare, {CLONE_FILES | CLONE_FS}), kAllow);
  EXPECT_EQ(V(kDefault, k32, i386::kClone, {SIGCHLD}), kAllow);

  EXPECT_EQ(V(kDefault, k64, x86_64::kClone3), kEnosys);
  EXPECT_EQ(V(kDefault, k32, i386::kClone3), kEnosys);
  EXPECT_EQ(V(kDefault, k64, kX32Bit | 435), kEnosys);
  EXPECT_EQ(V(kAllowNs, k64, x86_64::kClone3), kAllow);

  EXPECT_EQ(V(kDefault, k64, x86_64::kSetns, {3, 0}), kEperm);
  EXPECT_EQ(V(kDefault, k32, i386::kSetns, {3, 0}), kEperm);
  EXPECT_EQ(V(kAllowNs, k64, x86_64::kSetns, {3, 0}), kAllow);
}

TEST_F(X86HostTest, MountFamily) {
  for (const int nr : {x86_64::kMount, x86_64::kUmount2, 155 /*pivot_root*/, 161 /*chroot*/,
                       x86_64::kOpenTree, 429, 430, 431, 432, 433, x86_64::kMountSetattr}) {
    EXPECT_EQ(V(kDefault, k64, nr), kEperm) << nr;
    EXPECT_EQ(V(kDefault, k64, kX32Bit | nr), kEperm) << nr;
    EXPECT_EQ(V(kAllowNs, k64, nr), kAllow) << nr;
    EXPECT_EQ(V(kAllowUnix, k64, nr), kEperm) << nr;
  }
  // umount exists on i386 only.
  for (const int nr :
       {i386::kMount, i386::kUmount, i386::kUmount2, 217 /*pivot_root*/, 61 /*chroot*/, 428, 442}) {
    EXPECT_EQ(V(kDefault, k32, nr), kEperm) << nr;
    EXPECT_EQ(V(kAllowNs, k32, nr), kAllow) << nr;
  }
}

TEST_F(X86HostTest, TerminalIoctls) {
  for (const std::uint64_t hi : {std::uint64_t{0}, kGarbageHigh}) {
    EXPECT_EQ(V(kDefault, k64, x86_64::kIoctl, {0, hi | TIOCSTI}), kEperm);
    EXPECT_EQ(V(kDefault, k64, x86_64::kIoctl, {0, hi | TIOCLINUX}), kEperm);
    EXPECT_EQ(V(kAllowBoth, k64, x86_64::kIoctl, {0, hi | TIOCSTI}), kEperm);
    EXPECT_EQ(V(kDefault, k32, i386::kIoctl, {0, hi | TIOCSTI}), kEperm);
    EXPECT_EQ(V(kDefault, k32, i386::kIoctl, {0, hi | TIOCLINUX}), kEperm);
    EXPECT_EQ(V(kDefault, k64, x32::kIoctl, {0, hi | TIOCSTI}), kEperm);
    EXPECT_EQ(V(kDefault, k64, x86_64::kIoctl, {0, hi | TIOCGWINSZ}), kAllow);
    EXPECT_EQ(V(kDefault, k64, x86_64::kIoctl, {0, hi | FIONREAD}), kAllow);
  }
}

TEST_F(X86HostTest, KernelSurfaceAndOtherProcesses) {
  // keyctl add_key request_key bpf perf_event_open userfaultfd ptrace process_vm_readv/writev
  const int nrs64[] = {x86_64::kKeyctl, 248, 249, x86_64::kBpf, 298, 323,
                       x86_64::kPtrace, 310, 311};
  const int nrs32[] = {288, 286, 287, 357, 336, 374, 26, 347, 348};
  for (const int nr : nrs64) {
    EXPECT_EQ(V(kDefault, k64, nr), kEperm) << nr;
    EXPECT_EQ(V(kAllowBoth, k64, nr), kEperm) << nr;
  }
  for (const int nr : nrs32) EXPECT_EQ(V(kAllowBoth, k32, nr), kEperm) << nr;
  // x32 has its own process_vm_* entries (539/540); ptrace is 521.
  for (const int nr : {250, 248, 249, 321, 298, 323, 521, 539, 540}) {
    EXPECT_EQ(V(kDefault, k64, kX32Bit | nr), kEperm) << nr;
  }
}

// Setuid and setgid bits, through every call that sets a mode, on every x86 ABI; the upper half
// of the register never matters (mode_t is 32 bits).
TEST_F(X86HostTest, SetuidAndSetgidBits) {
  struct ModeCall {
    std::uint32_t arch;
    int nr;
    unsigned mode_arg;
    int flags_arg = -1;  // open/openat: the mode counts only with O_CREAT or O_TMPFILE
  };
  const ModeCall calls[] = {
      {k64, 90, 1},
      {k64, 91, 1},
      {k64, 268, 2},
      {k64, 452, 2},  // chmod fchmod
      {k64, 85, 1},
      {k64, 133, 1},
      {k64, 259, 2},  // creat mknod
      {k64, 2, 2, 1},
      {k64, 257, 3, 2},  // open openat
      {k32, 15, 1},
      {k32, 94, 1},
      {k32, 306, 2},
      {k32, 452, 2},
      {k32, 8, 1},
      {k32, 14, 1},
      {k32, 297, 2},
      {k32, 5, 2, 1},
      {k32, 295, 3, 2},
      {k64, kX32Bit | 90, 1},
      {k64, kX32Bit | 257, 3, 2},
  };
  for (const ModeCall& c : calls) {
    for (const std::uint64_t mode :
         {std::uint64_t{04755}, std::uint64_t{02755}, std::uint64_t{06700}, kGarbageHigh | 04000}) {
      std::array<std::uint64_t, 6> args{};
      args[c.mode_arg] = mode;
      if (c.flags_arg >= 0) args[static_cast<size_t>(c.flags_arg)] = O_WRONLY | O_CREAT;
      EXPECT_EQ(V(kAllowBoth, c.arch, c.nr, args), kEperm) << c.nr << " mode " << mode;
      if (c.flags_arg >= 0) {
        args[static_cast<size_t>(c.flags_arg)] = O_WRONLY | __O_TMPFILE | O_DIRECTORY;
        EXPECT_EQ(V(kDefault, c.arch, c.nr, args), kEperm) << c.nr << " O_TMPFILE";
        // Without O_CREAT or O_TMPFILE the mode argument is ignored by the kernel.
        args[static_cast<size_t>(c.flags_arg)] = O_RDONLY;
        EXPECT_EQ(V(kDefault, c.arch, c.nr, args), kAllow) << c.nr << " no O_CREAT";
      }
    }
    std::array<std::uint64_t, 6> plain{};
    plain[c.mode_arg] = 01777;  // sticky and rwx are fine
    if (c.flags_arg >= 0) plain[static_cast<size_t>(c.flags_arg)] = O_WRONLY | O_CREAT;
    EXPECT_EQ(V(kDefault, c.arch, c.nr, plain), kAllow) << c.nr;
  }
  // openat2 hides flags and mode in memory.
  EXPECT_EQ(V(kDefault, k64, 437), kEnosys);
  EXPECT_EQ(V(kDefault, k32, 437), kEnosys);
  EXPECT_EQ(V(kDefault, k64, kX32Bit | 437), kEnosys);
}

// xattr writes: allowed by default (the kernel refuses security.capability without
// CAP_SETFCAP), refused as a whole with deny_xattr_writes, including setxattrat (463), which is
// newer than libseccomp and comes from srt's own prefix.
TEST_F(X86HostTest, XattrWritesWhenTheCallerIsRootWithNestedNamespaces) {
  const FilterOptions deny{
      .allow_unix_sockets = false, .allow_namespaces = true, .deny_xattr_writes = true};
  const std::vector<sock_filter> prog = MustBuild(deny, HostArch::kX86_64);
  const std::vector<sock_filter> plain = MustBuild(kAllowNs, HostArch::kX86_64);
  const std::pair<std::uint32_t, int>
      calls[] = {{k64, 188},          {k64, 189},           {k64, 190},
                 {k64, 463},  // setxattr lsetxattr fsetxattr setxattrat
                 {k32, 226},          {k32, 227},           {k32, 228},
                 {k32, 463},          {k64, kX32Bit | 188}, {k64, kX32Bit | 190},
                 {k64, kX32Bit | 463}};
  for (const auto& [arch, nr] : calls) {
    EXPECT_EQ(Eval(prog, {arch, nr}), kEperm) << nr;
    EXPECT_EQ(Eval(plain, {arch, nr}), kAllow) << nr;
  }
  // The prefix lets everything else through to libseccomp's program, architecture check first.
  EXPECT_EQ(Eval(prog, {k64, x86_64::kGetpid}), kAllow);
  EXPECT_EQ(Eval(prog, {k32, i386::kGetpid}), kAllow);
  EXPECT_EQ(Eval(prog, {k64, 191 /*getxattr*/}), kAllow);
  EXPECT_EQ(Eval(prog, {AUDIT_ARCH_AARCH64, 463}), SECCOMP_RET_KILL_PROCESS);
  EXPECT_EQ(Eval(prog, {k64, x86_64::kKeyctl}), kEperm);
}

bool PersonalityAllowed(std::uint32_t persona) {
  return persona == 0 || persona == PER_LINUX32 || persona == 0xffffffffU;
}

TEST_F(X86HostTest, PersonalityAllowsOnlyLinuxLinux32AndQuery) {
  std::vector<std::uint32_t> values = {
      0,         8,          0xffffffffU, 1,           7,          9,    0x0040000, 0x0400000,
      0x0800000, 0x8000008U, 0xfffffff7U, 0xfffffffeU, 0x7fffffff, 0x0c, 0x0e,      0x0f};
  for (unsigned i = 0; i < 32; ++i) {
    for (unsigned j = i; j < 32; ++j) {
      const std::uint32_t two = (1U << i) | (1U << j);
      values.push_back(two);
      values.push_back(~two);
      values.push_back(two | 8U);
    }
  }
  std::mt19937 rng(20240601);
  for (int i = 0; i < 2000; ++i) values.push_back(static_cast<std::uint32_t>(rng()));

  const std::vector<sock_filter>& prog = Prog(kDefault);
  for (const std::uint32_t v : values) {
    const std::uint32_t expected = PersonalityAllowed(v) ? kAllow : kEperm;
    for (const std::uint64_t hi : {std::uint64_t{0}, kGarbageHigh}) {
      ASSERT_EQ(Eval(prog, {k64, x86_64::kPersonality, {hi | v}}), expected) << std::hex << v;
      ASSERT_EQ(Eval(prog, {k32, i386::kPersonality, {hi | v}}), expected) << std::hex << v;
      ASSERT_EQ(Eval(prog, {k64, x32::kPersonality, {hi | v}}), expected) << std::hex << v;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Verdicts on an aarch64 host: aarch64 and arm entry points.

TEST(Aarch64HostTest, SetuidBitsAndXattrsOnBothAbis) {
  const FilterOptions deny{
      .allow_unix_sockets = false, .allow_namespaces = true, .deny_xattr_writes = true};
  const std::vector<sock_filter> prog = MustBuild(deny, HostArch::kAarch64);
  constexpr std::uint32_t a64 = AUDIT_ARCH_AARCH64, a32 = AUDIT_ARCH_ARM;
  // fchmod, fchmodat, fchmodat2; openat (aarch64 has no open/creat/chmod/mknod).
  EXPECT_EQ(Eval(prog, {a64, 52, {0, 04755}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, 53, {0, 0, 02755}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, 452, {0, 0, 04755}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, 56, {0, 0, O_CREAT | O_WRONLY, 04755}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, 56, {0, 0, O_CREAT | O_WRONLY, 0755}}), kAllow);
  EXPECT_EQ(Eval(prog, {a32, 15 /*chmod*/, {0, 04755}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, 5 /*setxattr*/}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, 463}), kEperm);
  EXPECT_EQ(Eval(prog, {a32, 463}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, 437}), kEnosys);
}

TEST(Aarch64HostTest, RulesHoldOnBothAbis) {
  const std::vector<sock_filter> prog = MustBuild(kDefault, HostArch::kAarch64);
  const std::vector<sock_filter> open = MustBuild(kAllowBoth, HostArch::kAarch64);
  constexpr std::uint32_t a64 = AUDIT_ARCH_AARCH64;
  constexpr std::uint32_t a32 = AUDIT_ARCH_ARM;

  EXPECT_EQ(Eval(prog, {AUDIT_ARCH_X86_64, 39}), kKill);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kGetpid}), kAllow);
  EXPECT_EQ(Eval(prog, {a32, arm::kGetpid}), kAllow);

  EXPECT_EQ(Eval(prog, {a64, aarch64::kSocket, {kGarbageHigh | AF_UNIX}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kSocket, {AF_INET}}), kAllow);
  EXPECT_EQ(Eval(prog, {a32, arm::kSocket, {AF_UNIX}}), kEperm);
  EXPECT_EQ(Eval(prog, {a32, arm::kSocket, {AF_VSOCK}}), kEperm);
  EXPECT_EQ(Eval(open, {a32, arm::kSocket, {AF_UNIX}}), kAllow);
  EXPECT_EQ(Eval(open, {a32, arm::kSocket, {AF_VSOCK}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kSocketpair, {AF_UNIX, SOCK_DGRAM}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kSocketpair, {AF_UNIX, SOCK_STREAM}}), kAllow);
  EXPECT_EQ(Eval(prog, {a32, arm::kSocketpair, {AF_UNIX, SOCK_SEQPACKET}}), kEperm);

  EXPECT_EQ(Eval(prog, {a64, aarch64::kUnshare, {CLONE_NEWUSER}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kClone, {CLONE_NEWNET | SIGCHLD}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kClone, {SIGCHLD}}), kAllow);
  EXPECT_EQ(Eval(prog, {a32, arm::kUnshare, {CLONE_NEWNS}}), kEperm);
  EXPECT_EQ(Eval(prog, {a32, arm::kClone, {CLONE_NEWPID}}), kEperm);
  EXPECT_EQ(Eval(open, {a32, arm::kClone, {CLONE_NEWPID}}), kAllow);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kClone3}), kEnosys);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kMount}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kUmount2}), kEperm);
  EXPECT_EQ(Eval(prog, {a32, arm::kMount}), kEperm);
  EXPECT_EQ(Eval(prog, {a32, arm::kUmount2}), kEperm);

  EXPECT_EQ(Eval(prog, {a64, aarch64::kIoctl, {1, kGarbageHigh | TIOCSTI}}), kEperm);
  EXPECT_EQ(Eval(prog, {a32, arm::kIoctl, {1, TIOCLINUX}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kPersonality, {0x0040000}}), kEperm);
  EXPECT_EQ(Eval(prog, {a64, aarch64::kPersonality, {0xffffffff}}), kAllow);
  EXPECT_EQ(Eval(prog, {a32, arm::kPersonality, {PER_LINUX32}}), kAllow);
  EXPECT_EQ(Eval(prog, {a32, arm::kPersonality, {0x0400000}}), kEperm);
}

// Every unconditional rule (name -> errno), on every architecture where libseccomp says the
// syscall exists, using libseccomp's own numbering (a wide sweep; the hard-coded numbers above
// are the independent check).
TEST(FilterSweepTest, EveryUnconditionalRuleOnEveryArchitecture) {
  struct Host {
    HostArch host;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> arches;  // (libseccomp, audit)
  };
  const Host hosts[] = {
      {HostArch::kX86_64,
       {{SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64},
        {SCMP_ARCH_X86, AUDIT_ARCH_I386},
        {SCMP_ARCH_X32, AUDIT_ARCH_X86_64}}},
      {HostArch::kAarch64,
       {{SCMP_ARCH_AARCH64, AUDIT_ARCH_AARCH64}, {SCMP_ARCH_ARM, AUDIT_ARCH_ARM}}},
  };
  const std::pair<const char*, bool> always[] = {
      {"io_uring_setup", true},
      {"io_uring_enter", true},
      {"io_uring_register", true},
      {"keyctl", true},
      {"add_key", true},
      {"request_key", true},
      {"bpf", true},
      {"perf_event_open", true},
      {"userfaultfd", true},
      {"ptrace", true},
      {"process_vm_readv", true},
      {"process_vm_writev", true},
      {"setns", false},
      {"mount", false},
      {"umount", false},
      {"umount2", false},
      {"pivot_root", false},
      {"chroot", false},
      {"open_tree", false},
      {"move_mount", false},
      {"fsopen", false},
      {"fsconfig", false},
      {"fsmount", false},
      {"fspick", false},
      {"mount_setattr", false},
      {"clone3", false},
  };
  for (const Host& host : hosts) {
    const std::vector<sock_filter> prog = MustBuild(kDefault, host.host);
    const std::vector<sock_filter> ns_open = MustBuild(kAllowNs, host.host);
    int checked = 0;
    for (const auto& [scmp_arch, audit_arch] : host.arches) {
      for (const auto& [name, survives_allow_ns] : always) {
        const int nr = seccomp_syscall_resolve_name_arch(scmp_arch, name);
        if (nr < 0) continue;  // not on this architecture (umount on 64-bit, ...)
        const std::uint32_t denied = std::string_view(name) == "clone3" ? kEnosys : kEperm;
        EXPECT_EQ(Eval(prog, {audit_arch, nr}), denied) << name << " on " << scmp_arch;
        EXPECT_EQ(Eval(ns_open, {audit_arch, nr}), survives_allow_ns ? denied : kAllow)
            << name << " on " << scmp_arch;
        ++checked;
      }
    }
    EXPECT_GT(checked, 40);
  }
}

// ---------------------------------------------------------------------------------------------
// DescribeFilter.

TEST(DescribeFilterTest, ListsTheActiveRules) {
  const std::vector<std::string> lines = DescribeFilter(kDefault);
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0], HasSubstr("architectures:"));
  EXPECT_THAT(lines[0], HasSubstr("KILL_PROCESS"));
  EXPECT_THAT(lines, Contains("socket(AF_UNIX) -> EPERM"));
  EXPECT_THAT(lines, Contains("socket(AF_VSOCK) -> EPERM"));
  EXPECT_THAT(lines, Contains("clone3 -> ENOSYS"));
  EXPECT_THAT(lines, Contains("setns -> EPERM"));
  EXPECT_THAT(lines, Contains("ioctl(TIOCSTI) -> EPERM"));
  EXPECT_THAT(lines, Contains("ioctl(TIOCLINUX) -> EPERM"));
  EXPECT_THAT(lines, Contains("ptrace -> EPERM"));
  EXPECT_THAT(lines, Contains(HasSubstr("unshare(any of CLONE_NEWNS|")));
  EXPECT_THAT(lines, Contains(HasSubstr("personality(x) unless")));
  EXPECT_THAT(lines, Contains(HasSubstr("socketcall(SYS_SOCKETPAIR)")));
}

TEST(DescribeFilterTest, OptionsRemoveTheirRules) {
  const std::vector<std::string> unix_open = DescribeFilter(kAllowUnix);
  EXPECT_THAT(unix_open, Not(Contains("socket(AF_UNIX) -> EPERM")));
  EXPECT_THAT(unix_open, Not(Contains(HasSubstr("socketpair("))));
  EXPECT_THAT(unix_open, Not(Contains(HasSubstr("socketcall(SYS_SOCKETPAIR)"))));
  EXPECT_THAT(unix_open, Contains("socket(AF_VSOCK) -> EPERM"));
  EXPECT_THAT(unix_open, Contains(HasSubstr("socketcall(SYS_SOCKET)")));
  EXPECT_THAT(unix_open, Contains("setns -> EPERM"));

  const std::vector<std::string> ns_open = DescribeFilter(kAllowNs);
  for (const char* gone : {"unshare(", "clone(", "clone3", "setns", "mount ->", "umount2",
                           "pivot_root", "chroot", "open_tree", "fsopen", "mount_setattr"}) {
    EXPECT_THAT(ns_open, Not(Contains(HasSubstr(gone)))) << gone;
  }
  EXPECT_THAT(ns_open, Contains("socket(AF_UNIX) -> EPERM"));
  EXPECT_THAT(ns_open, Contains("ptrace -> EPERM"));
  EXPECT_THAT(ns_open, Contains("io_uring_setup -> EPERM"));
}

TEST(DescribeFilterTest, DescribesTheNamedHostsArchitectures) {
  const std::vector<std::string> x86 = CompileDescription(kDefault, HostArch::kX86_64);
  ASSERT_FALSE(x86.empty());
  EXPECT_THAT(x86[0], HasSubstr("architectures: x86_64 x86 x32 "));
  EXPECT_THAT(x86, Contains(HasSubstr("socketcall(SYS_SOCKETPAIR)")));
  // aarch64 and arm have no socketcall: no line for a rule that cannot match there.
  const std::vector<std::string> arm = CompileDescription(kDefault, HostArch::kAarch64);
  ASSERT_FALSE(arm.empty());
  EXPECT_THAT(arm[0], HasSubstr("architectures: aarch64 arm "));
  EXPECT_THAT(arm, Not(Contains(HasSubstr("socketcall("))));
  EXPECT_THAT(arm, Contains("socket(AF_UNIX) -> EPERM"));
}

// ---------------------------------------------------------------------------------------------
// The real kernel: install the filter in a forked child and exercise the rules directly.
// The child never touches gtest; it writes one errno (0 = success) per case into a pipe.

enum LiveCase {
  kSocketUnix,
  kSocketInet,
  kSocketVsock,
  kSocketpairStream,
  kSocketpairDgram,
  kSocketpairSeqpacket,
  kUnshareUser,
  kUnshareNet,
  kClone3,
  kSetns,
  kPersonalityNoRandomize,
  kPersonalityQuery,
  kIoctlTiocsti,
  kIoctlTioclinux,
  kIoctlTiocgwinsz,
  kIoUringSetup,
  kKeyctl,
  kPtrace,
  kLiveCaseCount,
};

constexpr int kChildCannotInstall = 1000;

// Runs in the child: async-signal-safe calls only, results in `out` as errno values.
int Errno(long rc) { return rc < 0 ? errno : 0; }
int CloseIfFd(long rc) {
  if (rc >= 0) close(static_cast<int>(rc));
  return Errno(rc);
}

void ClosePair(int rc, const int (&sv)[2]) {
  if (rc == 0) {
    close(sv[0]);
    close(sv[1]);
  }
}

void RunLiveCases(std::array<int, kLiveCaseCount>& out) {
  int sv[2];
  out[kSocketUnix] = CloseIfFd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  out[kSocketInet] = CloseIfFd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  out[kSocketVsock] = CloseIfFd(socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int rc = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
  out[kSocketpairStream] = Errno(rc);
  ClosePair(rc, sv);
  rc = socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv);
  out[kSocketpairDgram] = Errno(rc);
  ClosePair(rc, sv);
  rc = socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv);
  out[kSocketpairSeqpacket] = Errno(rc);
  ClosePair(rc, sv);
  // CLONE_PTRACE is not a valid unshare flag: unfiltered, the kernel says EINVAL before it
  // checks any privilege; the filter answers EPERM first.
  out[kUnshareUser] = Errno(syscall(SYS_unshare, CLONE_NEWUSER | CLONE_PTRACE));
  out[kUnshareNet] = Errno(syscall(SYS_unshare, CLONE_NEWNET | CLONE_PTRACE));
  out[kClone3] = Errno(syscall(SYS_clone3, nullptr, 0));  // unfiltered: EINVAL
  out[kSetns] = Errno(syscall(SYS_setns, -1, 0));         // unfiltered: EBADF
  out[kPersonalityNoRandomize] = Errno(syscall(SYS_personality, 0x0040000UL));
  out[kPersonalityQuery] = Errno(syscall(SYS_personality, 0xffffffffUL));
  char c = 'x';
  out[kIoctlTiocsti] = Errno(syscall(SYS_ioctl, -1, TIOCSTI, &c));  // unfiltered: EBADF
  out[kIoctlTioclinux] = Errno(syscall(SYS_ioctl, -1, TIOCLINUX, &c));
  out[kIoctlTiocgwinsz] = Errno(syscall(SYS_ioctl, -1, TIOCGWINSZ, &c));
  out[kIoUringSetup] = Errno(syscall(SYS_io_uring_setup, 0, nullptr));  // unfiltered: EINVAL
  out[kKeyctl] = Errno(syscall(SYS_keyctl, 0x7fffffff, 0, 0, 0, 0));    // unfiltered: EOPNOTSUPP
  out[kPtrace] = Errno(syscall(SYS_ptrace, PTRACE_PEEKUSER, 0x7fffffff, 0, 0));  // ESRCH
}

// Returns the child's results, or nullopt with a reason if the filter could not be installed.
std::optional<std::array<int, kLiveCaseCount>> RunLive(const std::vector<std::byte>* bytes,
                                                       std::string& why) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    why = "pipe2 failed";
    return std::nullopt;
  }
  sock_fprog prog{};
  if (bytes != nullptr) {
    prog.len = static_cast<unsigned short>(bytes->size() / sizeof(sock_filter));
    prog.filter = reinterpret_cast<sock_filter*>(const_cast<std::byte*>(bytes->data()));
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::array<int, kLiveCaseCount> out{};
    if (bytes != nullptr) {
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
          syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        out.fill(kChildCannotInstall);
        out[0] = kChildCannotInstall + errno;
        (void)!write(fds[1], out.data(), sizeof(out));
        _exit(1);
      }
    }
    RunLiveCases(out);
    const ssize_t n = write(fds[1], out.data(), sizeof(out));
    _exit(n == static_cast<ssize_t>(sizeof(out)) ? 0 : 2);
  }
  close(fds[1]);
  std::array<int, kLiveCaseCount> out{};
  ssize_t n = 0;
  while (true) {
    n = read(fds[0], out.data(), sizeof(out));
    if (!(n < 0 && errno == EINTR)) break;
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n != static_cast<ssize_t>(sizeof(out))) {
    why = "child died without reporting, wait status " + std::to_string(status);
    return std::nullopt;
  }
  if (out[0] >= kChildCannotInstall) {
    why = "cannot install a seccomp filter here: " +
          std::string(std::strerror(out[0] - kChildCannotInstall));
    return std::nullopt;
  }
  return out;
}

bool MustWork() {
  const char* v = std::getenv("SRT_MUST_WORK");
  return v != nullptr && std::string_view(v) == "1";
}

TEST(FilterLiveTest, TheKernelAppliesTheRules) {
  Result<std::vector<std::byte>> bytes = BuildFilter(kDefault);
  ASSERT_TRUE(bytes.has_value()) << bytes.error().message();
  std::string why;
  const auto filtered = RunLive(&*bytes, why);
  if (!filtered) {
    if (MustWork()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  const auto& r = *filtered;
  EXPECT_EQ(r[kSocketUnix], EPERM);
  EXPECT_EQ(r[kSocketInet], 0);
  EXPECT_EQ(r[kSocketVsock], EPERM);
  EXPECT_EQ(r[kSocketpairStream], 0);
  EXPECT_EQ(r[kSocketpairDgram], EPERM);
  EXPECT_EQ(r[kSocketpairSeqpacket], EPERM);
  EXPECT_EQ(r[kUnshareUser], EPERM);
  EXPECT_EQ(r[kUnshareNet], EPERM);
  EXPECT_EQ(r[kClone3], ENOSYS);
  EXPECT_EQ(r[kSetns], EPERM);
  EXPECT_EQ(r[kPersonalityNoRandomize], EPERM);
  EXPECT_EQ(r[kPersonalityQuery], 0);
  EXPECT_EQ(r[kIoctlTiocsti], EPERM);
  EXPECT_EQ(r[kIoctlTioclinux], EPERM);
  EXPECT_EQ(r[kIoctlTiocgwinsz], EBADF);
  EXPECT_EQ(r[kIoUringSetup], EPERM);
  EXPECT_EQ(r[kKeyctl], EPERM);
  EXPECT_EQ(r[kPtrace], EPERM);
}

TEST(FilterLiveTest, WithoutTheFilterTheSameCallsFailDifferently) {
  // Proves the cases above are meaningful: none of them is EPERM/ENOSYS for another reason.
  std::string why;
  const auto unfiltered = RunLive(nullptr, why);
  ASSERT_TRUE(unfiltered.has_value()) << why;
  const auto& r = *unfiltered;
  EXPECT_EQ(r[kSocketUnix], 0);
  EXPECT_EQ(r[kSocketpairDgram], 0);
  EXPECT_EQ(r[kSocketpairSeqpacket], 0);
  EXPECT_NE(r[kSocketVsock], EPERM);  // 0, or EAFNOSUPPORT without the vsock module
  EXPECT_EQ(r[kUnshareUser], EINVAL);
  EXPECT_EQ(r[kUnshareNet], EINVAL);
  EXPECT_EQ(r[kClone3], EINVAL);
  EXPECT_EQ(r[kSetns], EBADF);
  EXPECT_EQ(r[kPersonalityNoRandomize], 0);
  EXPECT_EQ(r[kIoctlTiocsti], EBADF);
  EXPECT_EQ(r[kIoctlTioclinux], EBADF);
  EXPECT_NE(r[kIoUringSetup], EPERM);  // EINVAL, unless kernel.io_uring_disabled=2
  EXPECT_EQ(r[kKeyctl], EOPNOTSUPP);
  EXPECT_EQ(r[kPtrace], ESRCH);
}

TEST(FilterLiveTest, OptionsLiftTheirRulesInTheKernelToo) {
  Result<std::vector<std::byte>> bytes = BuildFilter(kAllowBoth);
  ASSERT_TRUE(bytes.has_value()) << bytes.error().message();
  std::string why;
  const auto r = RunLive(&*bytes, why);
  if (!r) {
    if (MustWork()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  EXPECT_EQ((*r)[kSocketUnix], 0);
  EXPECT_EQ((*r)[kSocketVsock], EPERM);
  EXPECT_EQ((*r)[kSocketpairDgram], 0);
  EXPECT_EQ((*r)[kUnshareUser], EINVAL);
  EXPECT_EQ((*r)[kClone3], EINVAL);
  EXPECT_EQ((*r)[kSetns], EBADF);
  EXPECT_EQ((*r)[kIoctlTiocsti], EPERM);
  EXPECT_EQ((*r)[kKeyctl], EPERM);
  EXPECT_EQ((*r)[kPersonalityNoRandomize], EPERM);
}

}  // namespace
}  // namespace srt::seccomp
