// SPDX-License-Identifier: Apache-2.0
// Attach frames on the socket (see attach_socket.h).
#include "attach_socket.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/fd_message.h"

namespace srt::cli {

Result<void> SendFrame(int sock, const AttachFrame& frame, const std::vector<int>& fds) {
  const std::vector<uint8_t> bytes = EncodeAttachFrame(frame);
  const FdMessage msg(bytes, fds);
  for (;;) {
    if (sendmsg(sock, msg.get(), MSG_NOSIGNAL) >= 0) return Ok();
    if (errno != EINTR) return SysError("send");
  }
}

Result<ReceivedFrame> ReceiveFrame(int sock) {
  ReceivedFrame r;
  r.bytes.resize(kMaxAttachFrameBytes + 1);
  iovec iov{r.bytes.data(), r.bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return SysError("receive");
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      r.fds.emplace_back(fd);
    }
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    return MakeError(Errc::kProtocol, "a frame longer than " +
                                          std::to_string(kMaxAttachFrameBytes) +
                                          " bytes or with too many descriptors");
  }
  r.bytes.resize(static_cast<size_t>(n));
  r.eof = n == 0;
  return r;
}

Result<uid_t> PeerUid(int sock) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return SysError("SO_PEERCRED");
  }
  return cred.uid;
}

}  // namespace srt::cli
