// SPDX-License-Identifier: Apache-2.0
// srt-init IPC over SOCK_SEQPACKET.
#include "ipc.h"

#include <linux/errno.h>
#include <linux/socket.h>

#include "rt.h"

namespace srt::init {

namespace {

// The kernel's msghdr/cmsghdr layout for 64-bit Linux (no libc headers here).
struct IoVec {
  void* base;
  size_t len;
};
struct MsgHdr {
  void* name;
  int namelen;
  IoVec* iov;
  size_t iovlen;
  void* control;
  size_t controllen;
  unsigned flags;
};
struct CmsgHdr {
  size_t len;
  int level;
  int type;
};
constexpr int kSolSocket = 1;
constexpr int kScmRights = 1;
constexpr unsigned kMsgNoSignal = 0x4000;
constexpr unsigned kMsgCmsgCloexec = 0x40000000;

}  // namespace

namespace {
constexpr unsigned kMsgDontWait = 0x40;
long Send(int sock, uint32_t type, const void* payload, size_t len, const int* fds, size_t nfds,
          unsigned flags);
}  // namespace

long MessagePair(int (&sockets)[2]) {
  constexpr int kAfUnix = 1, kSockSeqpacket = 5, kSockCloexec = 02000000;
  return SRT_SYS(__NR_socketpair, kAfUnix, kSockSeqpacket | kSockCloexec, 0, sockets);
}

long SendMessage(int sock, uint32_t type, const void* payload, size_t len, int fd_to_pass) {
  return Send(sock, type, payload, len, &fd_to_pass, fd_to_pass >= 0 ? 1 : 0, 0);
}

long SendMessageFds(int sock, uint32_t type, const void* payload, size_t len, const int* fds,
                    size_t nfds) {
  if (nfds > kMaxPassedFds) return -EINVAL;
  return Send(sock, type, payload, len, fds, nfds, 0);
}

long TrySendMessage(int sock, uint32_t type, const void* payload, size_t len) {
  return Send(sock, type, payload, len, nullptr, 0, kMsgDontWait);
}

namespace {
long Send(int sock, uint32_t type, const void* payload, size_t len, const int* fds, size_t nfds,
          unsigned flags) {
  uint8_t buf[wire::kMaxMessageBytes];
  if (len > sizeof buf - 4) len = sizeof buf - 4;
  memcpy(buf, &type, 4);
  if (len) memcpy(buf + 4, payload, len);
  IoVec iov{buf, len + 4};
  // CMSG_SPACE: the header and the descriptors, rounded up to 8 bytes.
  alignas(CmsgHdr) uint8_t control[sizeof(CmsgHdr) + kMaxPassedFds * sizeof(int)] = {};
  MsgHdr msg{};
  msg.iov = &iov;
  msg.iovlen = 1;
  if (nfds > 0) {
    auto* c = reinterpret_cast<CmsgHdr*>(control);
    c->len = sizeof(CmsgHdr) + nfds * sizeof(int);
    c->level = kSolSocket;
    c->type = kScmRights;
    memcpy(control + sizeof(CmsgHdr), fds, nfds * sizeof(int));
    msg.control = control;
    msg.controllen = (c->len + 7) & ~static_cast<size_t>(7);
  }
  long r;
  do {
    r = SRT_SYS(__NR_sendmsg, sock, &msg, kMsgNoSignal | flags);
  } while (r == -EINTR);
  return r < 0 ? r : 0;
}
}  // namespace

long SendInts(int sock, uint32_t type, int32_t a, int32_t b) {
  int32_t v[2] = {a, b};
  return SendMessage(sock, type, v, sizeof v);
}

void ReportFailure(int sock, int stderr_fd, wire::Stage stage, long neg_errno, const char* what) {
  uint8_t payload[wire::kMaxMessageBytes - 4];
  int32_t s = stage;
  int32_t e = static_cast<int32_t>(-neg_errno);
  memcpy(payload, &s, 4);
  memcpy(payload + 4, &e, 4);
  size_t n = strlen(what);
  if (n > sizeof payload - 9) n = sizeof payload - 9;
  memcpy(payload + 8, what, n);
  payload[8 + n] = 0;
  if (sock >= 0) SendMessage(sock, wire::kMsgFailed, payload, 9 + n);
  if (stderr_fd >= 0 && sock < 0) {
    char scratch[32];
    rt::WriteStr(stderr_fd, "srt-init: ");
    rt::WriteStr(stderr_fd, what);
    rt::WriteStr(stderr_fd, ": ");
    rt::WriteStr(stderr_fd, rt::ErrnoName(e, scratch));
    rt::WriteStr(stderr_fd, "\n");
  }
}

long ReceiveMessage(int sock, void* buf, size_t cap, int* fd) {
  IoVec iov{buf, cap};
  alignas(CmsgHdr) uint8_t control[sizeof(CmsgHdr) + 8] = {};
  MsgHdr msg{};
  msg.iov = &iov;
  msg.iovlen = 1;
  msg.control = control;
  msg.controllen = sizeof control;
  long r;
  do {
    r = SRT_SYS(__NR_recvmsg, sock, &msg, kMsgCmsgCloexec);
  } while (r == -EINTR);
  int passed = -1;
  auto* c = reinterpret_cast<CmsgHdr*>(control);
  if (r >= 0 && msg.controllen >= sizeof(CmsgHdr) + sizeof(int) && c->level == kSolSocket &&
      c->type == kScmRights) {
    memcpy(&passed, control + sizeof(CmsgHdr), sizeof(int));
  }
  if (fd) {
    *fd = passed;
  } else if (passed >= 0) {
    SRT_SYS(__NR_close, passed);  // nobody asked for it
  }
  return r;
}

long ReceiveMessageFds(int sock, void* buf, size_t cap, int* fds, size_t max_fds, size_t* count) {
  constexpr size_t kMaxFds = 4;
  constexpr unsigned kMsgCtrunc = 0x8;
  *count = 0;
  if (max_fds > kMaxFds) max_fds = kMaxFds;
  IoVec iov{buf, cap};
  alignas(CmsgHdr) uint8_t control[sizeof(CmsgHdr) + kMaxFds * sizeof(int)] = {};
  MsgHdr msg{};
  msg.iov = &iov;
  msg.iovlen = 1;
  msg.control = control;
  msg.controllen = sizeof(CmsgHdr) + max_fds * sizeof(int);
  long r;
  do {
    r = SRT_SYS(__NR_recvmsg, sock, &msg, kMsgCmsgCloexec);
  } while (r == -EINTR);
  if (r < 0) return r;
  auto* c = reinterpret_cast<CmsgHdr*>(control);
  size_t n = 0;
  if (msg.controllen >= sizeof(CmsgHdr) && c->level == kSolSocket && c->type == kScmRights &&
      c->len >= sizeof(CmsgHdr)) {
    n = (c->len - sizeof(CmsgHdr)) / sizeof(int);
    if (n > max_fds) n = max_fds;
    memcpy(fds, control + sizeof(CmsgHdr), n * sizeof(int));
  }
  if (msg.flags & kMsgCtrunc) {
    for (size_t i = 0; i < n; ++i) SRT_SYS(__NR_close, fds[i]);
    return -EPROTO;
  }
  *count = n;
  return r;
}

}  // namespace srt::init
