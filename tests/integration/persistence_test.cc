// Nothing a sandboxed command writes may act on the host later: privilege bits, git's
// configuration and programs, planted symlinks, moved deny rules, the files srt itself opens.
// Each test plays the hostile command of one run and checks what the host sees afterwards.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "srt_fixture.h"

namespace srt::it {
namespace {

using PersistenceTest = SrtTest;

const char* kWriteCwd = R"({"filesystem": {"allowWrite": ["."]}})";

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode;
}

// A setuid or setgid bit on anything the sandbox can write would run as its owner for every
// user of the host after the sandbox ends (a root caller's copy of a shell, chmod 4755).
TEST_P(PersistenceTest, NoSyscallSetsSetuidOrSetgidBits) {
  run().WriteFile("prog", "#!/bin/sh\n");
  chmod(run().Path("prog").c_str(), 0755);
  for (const char* call : {"chmod", "fchmod", "fchmodat", "fchmodat2"}) {
    for (const char* mode : {"4755", "2755", "6755"}) {
      EXPECT_EQ(Errno(kWriteCwd, {"setmode", call, "prog", mode}), EPERM) << call << " " << mode;
    }
  }
  for (const char* call : {"open", "openat", "creat", "mknod", "mknodat"}) {
    for (const char* mode : {"4755", "2755"}) {
      const std::string name = std::string("new-") + call + "-" + mode;
      EXPECT_EQ(Errno(kWriteCwd, {"setmode", call, name, mode}), EPERM) << call << " " << mode;
      EXPECT_FALSE(run().Exists(name)) << name;
    }
  }
  EXPECT_EQ(Errno(kWriteCwd, {"setmode", "tmpfile", ".", "4755"}), EPERM);
  EXPECT_EQ(ModeOf(run().Path("prog")) & 07777, 0755u);
  // Ordinary modes still work.
  EXPECT_EQ(Errno(kWriteCwd, {"setmode", "chmod", "prog", "0700"}), 0);
  EXPECT_EQ(Errno(kWriteCwd, {"setmode", "open", "plain", "0644"}), 0);
  EXPECT_EQ(ModeOf(run().Path("prog")) & 07777, 0700u);
}

TEST_P(PersistenceTest, ToolsCannotMakeASetuidCopy) {
  RunResult r =
      run().Srt(kWriteCwd, {"sh", "-c",
                            "cp /bin/sh ./sh1; chmod 4755 ./sh1; echo chmod=$?; "
                            "install -m 4755 /bin/sh ./sh2; echo install=$?; "
                            "python3 -c 'import os; os.chmod(\"sh1\", 0o6755)'; echo python=$?; "
                            "chmod u+s,g+s ./sh1; echo symbolic=$?"});
  EXPECT_NE(r.out.find("chmod=1"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("install=1"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("python=1"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("symbolic=1"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(ModeOf(run().Path("sh1")) & 06000, 0u);
  EXPECT_EQ(ModeOf(run().Path("sh2")) & 06000, 0u);
}

// File capabilities: without a nested user namespace the command has no CAP_SETFCAP, so the
// kernel refuses them; with allowNestedUserNamespaces a root caller's nested namespace maps the
// host's root, where they would be real, so srt refuses every xattr write there.
TEST_P(PersistenceTest, NoFileCapabilities) {
  run().WriteFile("prog", "#!/bin/sh\n");
  EXPECT_EQ(Errno(kWriteCwd, {"setxattr", "setxattr", "prog", "security.capability"}), EPERM);
  const char* nested =
      R"({"allowNestedUserNamespaces": true, "filesystem": {"allowWrite": ["."]}})";
  for (const char* call : {"setxattr", "lsetxattr", "fsetxattr"}) {
    RunResult r = run().Srt(
        nested, {"unshare", "-r", ProbeBinary(), "setxattr", call, "prog", "security.capability"});
    if (root()) {
      EXPECT_EQ(r.exit_code, EPERM) << call << ": " << r.err;
    } else {
      // An unprivileged caller's nested root is the caller: the kernel stores the capability
      // as valid only where that uid is root (a namespace of the caller's own), never for the
      // host. xattr writes stay allowed for it (rootless podman needs them).
      EXPECT_EQ(r.exit_code, 0) << call << ": " << r.err;
    }
  }
  uint32_t value[8] = {};
  ssize_t n = getxattr(run().Path("prog").c_str(), "security.capability", value, sizeof value);
  if (root()) {
    EXPECT_LT(n, 0) << "the file has capabilities on the host";
  } else {
    ASSERT_EQ(n, 24) << "expected a namespaced (revision 3) capability";
    EXPECT_EQ(value[0] >> 24, 3u);
    EXPECT_EQ(value[5], 65534u) << "the capability's root is not the caller";
  }
}

SRT_INSTANTIATE(PersistenceTest);

}  // namespace
}  // namespace srt::it
