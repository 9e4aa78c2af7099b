// SPDX-License-Identifier: Apache-2.0
// support/child_process.cc: starting, reading and reaping helper processes in tests.
#include "support/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "base/unique_fd.h"

extern char** environ;

namespace srt::testing {

bool IsExecutable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string ReadWholeFd(int fd) {
  std::string out;
  char buf[4096];
  off_t offset = 0;
  while (true) {
    ssize_t n = ::pread(fd, buf, sizeof(buf), offset);
    if (n <= 0) {
      break;
    }
    out.append(buf, static_cast<size_t>(n));
    offset += n;
  }
  return out;
}

// Between fork and exec the child only makes async-signal-safe system calls on memory prepared
// before the fork.
Result<pid_t> SpawnChild(const std::vector<std::string>& args, const std::vector<ChildFd>& fds) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    return SysError("pipe2");
  }
  UniqueFd err_read(p[0]);
  UniqueFd err_write(p[1]);
  // Keep every source above every target, so no dup2 is a no-op that would leave FD_CLOEXEC set
  // (or clobber a source before it is used). The copies close when we return.
  int max_target = 0;
  for (const ChildFd& f : fds) {
    max_target = std::max(max_target, f.target);
  }
  std::vector<UniqueFd> lifted;
  lifted.reserve(fds.size() + 1);
  auto lift = [&](int fd) -> Result<int> {
    if (fd > max_target) {
      return fd;
    }
    int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, max_target + 1);
    if (moved < 0) {
      return SysError("fcntl(F_DUPFD_CLOEXEC)");
    }
    lifted.emplace_back(moved);
    return moved;
  };
  std::vector<ChildFd> plan;
  plan.reserve(fds.size());
  for (const ChildFd& f : fds) {
    SRT_ASSIGN_OR_RETURN(int source, lift(f.source));
    plan.push_back({source, f.target});
  }
  SRT_ASSIGN_OR_RETURN(const int err_fd, lift(err_write.get()));

  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  sigset_t none;
  sigemptyset(&none);
  const pid_t parent = ::getpid();

  pid_t pid = ::fork();
  if (pid < 0) {
    return SysError("fork");
  }
  if (pid == 0) {
    // The test's threads may block signals (the proxy's loop thread blocks all); the child must
    // see our SIGTERM. (pthread_sigmask is async-signal-safe, and after fork this is the only
    // thread.)
    ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) == 0) {
      if (::getppid() != parent) {
        ::_exit(127);  // the parent died before prctl: nobody to serve
      }
      bool ok = true;
      for (const ChildFd& f : plan) {
        ok = ok && ::dup2(f.source, f.target) >= 0;
      }
      if (ok) {
        ::execve(argv[0], argv.data(), environ);
      }
    }
    int err = errno;
    [[maybe_unused]] ssize_t n = ::write(err_fd, &err, sizeof(err));
    ::_exit(127);
  }
  lifted.clear();
  err_write.reset();
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(err_read.get(), &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof(child_errno))) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return SysError("exec '" + args.at(0) + "'", child_errno);
  }
  return pid;  // EOF: exec succeeded
}

void TerminateChild(pid_t pid, std::chrono::milliseconds grace) {
  ::kill(pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    pid_t r = ::waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace srt::testing
