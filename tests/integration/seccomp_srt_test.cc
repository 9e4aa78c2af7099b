// SPDX-License-Identifier: Apache-2.0
// The seccomp filter as srt applies it (the filter itself is covered rule by rule in
// seccomp_test.cc; this checks that srt really loads it, with the right options).
#include <gtest/gtest.h>

#include <cerrno>

#include "srt_fixture.h"

namespace srt::it {
namespace {

using SeccompThroughSrtTest = SrtTest;

TEST_P(SeccompThroughSrtTest, DefaultRules) {
  EXPECT_EQ(Errno("{}", {"socket", "unix"}), EPERM);
  EXPECT_EQ(Errno("{}", {"socket", "vsock"}), EPERM);
  EXPECT_EQ(Errno("{}", {"socket", "inet"}), 0);
  EXPECT_EQ(Errno("{}", {"socketpair", "unix", "stream"}), 0);
  EXPECT_EQ(Errno("{}", {"socketpair", "unix", "dgram"}), EPERM);
  EXPECT_EQ(Errno("{}", {"socketpair", "unix", "seqpacket"}), EPERM);
  EXPECT_EQ(Errno("{}", {"socket-x32", "unix"}), EPERM);
  EXPECT_EQ(Errno("{}", {"socket-hi32", "unix"}), EPERM);
  EXPECT_EQ(Errno("{}", {"io_uring_setup"}), EPERM);
  EXPECT_EQ(Errno("{}", {"unshare", "user", "real"}), EPERM);
  EXPECT_EQ(Errno("{}", {"unshare", "net", "real"}), EPERM);
  EXPECT_EQ(Errno("{}", {"clone3"}), ENOSYS);
  EXPECT_EQ(Errno("{}", {"clone-plain"}), 0);
  EXPECT_EQ(Errno("{}", {"setns"}), EPERM);
  EXPECT_EQ(Errno("{}", {"mount"}), EPERM);
  EXPECT_EQ(Errno("{}", {"open_tree"}), EPERM);
  EXPECT_EQ(Errno("{}", {"ioctl-tiocsti"}), EPERM);
  EXPECT_EQ(Errno("{}", {"ioctl-tioclinux"}), EPERM);
  EXPECT_EQ(Errno("{}", {"keyctl"}), EPERM);
  EXPECT_EQ(Errno("{}", {"bpf"}), EPERM);
  EXPECT_EQ(Errno("{}", {"perf_event_open"}), EPERM);
  EXPECT_EQ(Errno("{}", {"userfaultfd"}), EPERM);
  EXPECT_EQ(Errno("{}", {"ptrace"}), EPERM);
  EXPECT_EQ(Errno("{}", {"process_vm_readv"}), EPERM);
  EXPECT_EQ(Errno("{}", {"personality", "0x40000"}), EPERM);
  EXPECT_EQ(Errno("{}", {"personality", "0xffffffff"}), 0);
}

// The i386 entry points, on kernels that have them (without IA32 emulation `int $0x80` kills the
// probe before the filter sees the call).
TEST_P(SeccompThroughSrtTest, DefaultRulesOnI386) {
  if (!KernelRunsI386()) GTEST_SKIP() << "no IA32 emulation on this kernel: int $0x80 faults";
  EXPECT_EQ(Errno("{}", {"socketcall-i386", "socket", "unix"}), EPERM);
  EXPECT_EQ(Errno("{}", {"socket-i386", "unix"}), EPERM);
  EXPECT_EQ(Errno("{}", {"socket-i386", "inet"}), 0);
}

TEST_P(SeccompThroughSrtTest, AllowAllUnixSocketsLiftsOnlyTheUnixRule) {
  const char* s =
      R"({"network": {"allowedDomains": [], "deniedDomains": [], "allowAllUnixSockets": true}})";
  EXPECT_EQ(Errno(s, {"socket", "unix"}), 0);
  EXPECT_EQ(Errno(s, {"socketpair", "unix", "dgram"}), 0);
  EXPECT_EQ(Errno(s, {"socket", "vsock"}), EPERM);
  EXPECT_EQ(Errno(s, {"io_uring_setup"}), EPERM);
}

TEST_P(SeccompThroughSrtTest, AllowNestedUserNamespaces) {
  const char* s = R"({"allowNestedUserNamespaces": true})";
  if (root()) {  // refused for a root caller (NestedUserNamespacesWorkAsUpstreamsDo)
    EXPECT_EQ(Errno(s, {"unshare", "user", "real"}), 125) << last_.err;
    return;
  }
  EXPECT_EQ(Errno(s, {"unshare", "user", "real"}), 0) << last_.err;
  EXPECT_EQ(Errno(s, {"socket", "unix"}), EPERM);
  // Without it the kernel also refuses (bwrap --disable-userns), not just the filter.
  EXPECT_EQ(Errno("{}", {"unshare", "user", "real"}), EPERM);
}

// What allowNestedUserNamespaces is for: rootless containers and nested sandboxes, which map
// their user into a namespace of their own. Not for a root caller, whose command is the host's
// uid 0: in a namespace of its own it could mount a cgroup hierarchy (its limits, the host's
// cpuset) or an overlay that keeps setuid copies, so srt refuses to start (upstream runs it).
TEST_P(SeccompThroughSrtTest, NestedUserNamespacesWorkAsUpstreamsDo) {
  const char* s = R"({"allowNestedUserNamespaces": true})";
  if (root()) {
    RunResult refused = run().Srt(s, {"unshare", "-r", "id", "-u"});
    EXPECT_EQ(refused.exit_code, 125);
    EXPECT_NE(refused.err.find("allowNestedUserNamespaces is refused for a root caller"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(refused.out, "");
    return;
  }
  RunResult id = run().Srt(s, {"unshare", "-r", "id", "-u"});
  EXPECT_EQ(id.exit_code, 0) << id.err;
  EXPECT_EQ(id.out, "0\n");
  // A nested bwrap, with a /proc of its own.
  std::vector<std::string> nested = {
      "bwrap", "--unshare-user", "--unshare-pid", "--ro-bind", "/",    "/",
      "--dev", "/dev",           "--proc",        "/proc",     "echo", "nested"};
  RunResult bwrap = run().Srt(s, nested);
  EXPECT_EQ(bwrap.exit_code, 0) << bwrap.err;
  EXPECT_EQ(bwrap.out, "nested\n");
  // The Unix socket rules still hold inside the nested namespace.
  RunResult sock = run().Srt(s, {"unshare", "-r", ProbeBinary(), "socket", "unix"});
  EXPECT_EQ(sock.exit_code, EPERM) << sock.err;
  // Without the setting the kernel refuses it too.
  RunResult refused = run().Srt("{}", {"unshare", "-r", "id"});
  EXPECT_NE(refused.exit_code, 0);
}

SRT_INSTANTIATE(SeccompThroughSrtTest);

}  // namespace
}  // namespace srt::it
