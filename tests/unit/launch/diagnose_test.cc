// SPDX-License-Identifier: Apache-2.0
#include "launch/diagnose.h"

#include <gtest/gtest.h>

namespace srt::launch {
namespace {

TEST(DiagnoseTest, UnrecognisedFailureQuotesBwrap) {
  EXPECT_EQ(
      DiagnoseBwrapFailure("bwrap: Can't find source path /x: No such file or directory\n", 1, {}),
      "bubblewrap could not create the sandbox: bwrap: Can't find source path /x: No such "
      "file or directory");
  EXPECT_EQ(DiagnoseBwrapFailure("", 1, {}),
            "bubblewrap could not create the sandbox (bwrap exited with status 1 and said "
            "nothing)");
}

TEST(DiagnoseTest, AppArmorRestrictionGetsTheProfile) {
  HostFacts f;
  f.apparmor_restrict_unprivileged_userns = "1";
  std::string d = DiagnoseBwrapFailure("bwrap: setting up uid map: Permission denied", 1, f);
  EXPECT_NE(d.find("srt does not run commands unsandboxed"), std::string::npos);
  EXPECT_NE(d.find("kernel.apparmor_restrict_unprivileged_userns=1"), std::string::npos);
  EXPECT_NE(d.find("profile bwrap /usr/bin/bwrap flags=(unconfined)"), std::string::npos);
  EXPECT_NE(d.find("apparmor_parser -r /etc/apparmor.d/bwrap"), std::string::npos);
}

TEST(DiagnoseTest, SysctlsAndContainersAreNamed) {
  HostFacts f;
  f.unprivileged_userns_clone = "0";
  f.max_user_namespaces = "0";
  f.in_container = true;
  std::string d = DiagnoseBwrapFailure(
      "bwrap: No permissions to creating new namespace, likely because the kernel does not "
      "allow non-privileged user namespaces.",
      1, f);
  EXPECT_NE(d.find("sysctl -w kernel.unprivileged_userns_clone=1"), std::string::npos);
  EXPECT_NE(d.find("sysctl -w user.max_user_namespaces=15000"), std::string::npos);
  EXPECT_NE(d.find("inside a container"), std::string::npos);
}

TEST(DiagnoseTest, GenericUsernsHint) {
  std::string d =
      DiagnoseBwrapFailure("bwrap: Creating new namespace failed: Operation not permitted", 1, {});
  EXPECT_NE(d.find("Check that unprivileged user namespaces are enabled"), std::string::npos);
}

// Hostile review 8, P3: a clone that fails for want of processes (RLIMIT_NPROC, threads-max,
// pid_max) is EAGAIN, not a refused user namespace, and the advice says what to raise.
TEST(DiagnoseTest, ProcessLimitIsNotARefusedUserNamespace) {
  HostFacts f;
  f.in_container = true;
  std::string d = DiagnoseBwrapFailure(
      "bwrap: Creating new namespace failed: Resource temporarily unavailable\n", 1, f);
  EXPECT_EQ(d.find("refuses the user namespace"), std::string::npos) << d;
  EXPECT_EQ(d.find("seccomp=unconfined"), std::string::npos) << d;
  EXPECT_NE(d.find("could not start another process"), std::string::npos) << d;
  EXPECT_NE(d.find("ulimit -u"), std::string::npos) << d;
}

}  // namespace
}  // namespace srt::launch
