// SPDX-License-Identifier: Apache-2.0
// CLOEXEC descriptor constructors.
#include "sys/fd.h"

#include <fcntl.h>
#include <linux/memfd.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace srt::sys {

Result<UniqueFd> SealedMemfd(const char* name, std::string_view content) {
  UniqueFd fd(memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return SysError(std::string("memfd_create '") + name + "'");
  SRT_RETURN_IF_ERROR(WriteAll(fd.get(), content, std::string("write memfd '") + name + "'"));
  if (lseek(fd.get(), 0, SEEK_SET) < 0) return SysError("lseek memfd");
  if (fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
    return SysError(std::string("seal memfd '") + name + "'");
  }
  return fd;
}

Result<void> WriteAll(int fd, std::string_view data, std::string_view what,
                      const std::function<bool()>& give_up) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (give_up && give_up()) {
        errno = ETIMEDOUT;
        return SysError(what);
      }
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, give_up ? 100 : -1) < 0 && errno != EINTR) return SysError(what);
      continue;
    }
    if (n == 0) errno = EPIPE;
    if (n <= 0) return SysError(what);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Ok();
}

Result<std::pair<UniqueFd, UniqueFd>> SeqpacketPair() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    return SysError("socketpair(AF_UNIX, SOCK_SEQPACKET)");
  }
  return std::make_pair(UniqueFd(sv[0]), UniqueFd(sv[1]));
}

Result<std::pair<UniqueFd, UniqueFd>> Pipe() {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return SysError("pipe2");
  return std::make_pair(UniqueFd(p[0]), UniqueFd(p[1]));
}

Result<UniqueFd> DupAtLeast(int fd, int min) {
  int r = fcntl(fd, F_DUPFD_CLOEXEC, min);
  if (r < 0) return SysError("dup fd " + std::to_string(fd));
  return UniqueFd(r);
}

Result<UniqueFd> PidfdOpen(int pid) {
  long r = syscall(SYS_pidfd_open, pid, 0);
  if (r < 0) return SysError("pidfd_open(" + std::to_string(pid) + ")");
  return UniqueFd(static_cast<int>(r));
}

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) >= 0; }

}  // namespace srt::sys
