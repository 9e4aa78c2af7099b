// SPDX-License-Identifier: Apache-2.0
// srt-limits-probe: resource-limit probes run inside a sandbox by limits_binds_test.cc.
//   fork-until-fail       forks sleeping children until fork fails; kills them; exits with the
//                         errno of the failed fork (EAGAIN = 11), or 0 if 4096 forks succeeded
//   alloc MIB             allocates and touches MIB MiB; exits 0 if it survives
// Static, so it runs in any sandbox root.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "fork-until-fail") == 0) {
    std::vector<pid_t> kids;
    int err = 0;
    for (int i = 0; i < 4096; ++i) {
      pid_t pid = fork();
      if (pid < 0) {
        err = errno;
        break;
      }
      if (pid == 0) {
        pause();
        _exit(0);
      }
      kids.push_back(pid);
    }
    for (pid_t k : kids) kill(k, SIGKILL);
    for (pid_t k : kids) waitpid(k, nullptr, 0);
    return err;
  }
  if (argc == 3 && std::strcmp(argv[1], "alloc") == 0) {
    const size_t mib = std::strtoul(argv[2], nullptr, 10);
    for (size_t i = 0; i < mib; ++i) {
      auto* p = static_cast<char*>(std::malloc(1 << 20));
      if (!p) return ENOMEM;
      std::memset(p, 1, 1 << 20);
    }
    return 0;
  }
  return 200;
}
