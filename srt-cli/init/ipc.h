// SPDX-License-Identifier: Apache-2.0
// srt-init IPC: control messages on the SOCK_SEQPACKET socketpairs shared with srt.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "init_protocol/wire.h"

namespace srt::init {

// A pair of connected SOCK_SEQPACKET sockets, close-on-exec, for messages between srt-init's
// own processes. Returns 0 or -errno.
long MessagePair(int (&sockets)[2]);

// Sends one message: u32 type, then `payload`; `fd_to_pass` >= 0 rides along as SCM_RIGHTS.
// Returns 0 or -errno.
long SendMessage(int sock, uint32_t type, const void* payload, size_t len, int fd_to_pass = -1);
// The same with fds[0..nfds) (at most kMaxPassedFds) as SCM_RIGHTS, in order.
inline constexpr size_t kMaxPassedFds = 4;
long SendMessageFds(int sock, uint32_t type, const void* payload, size_t len, const int* fds,
                    size_t nfds);
// The same, dropped (-EAGAIN) rather than waiting when the socket's buffer is full: for reports
// nobody may be reading yet.
long TrySendMessage(int sock, uint32_t type, const void* payload, size_t len);
long SendInts(int sock, uint32_t type, int32_t a, int32_t b = 0);
// Reports a failure to srt and also prints it on `stderr_fd` (when >= 0).
void ReportFailure(int sock, int stderr_fd, wire::Stage stage, long neg_errno, const char* what);

// Receives one message into buf (<= kMaxMessageBytes). Returns its length, 0 on EOF, or -errno.
// A descriptor passed with it (SCM_RIGHTS, received CLOEXEC) goes to *fd, else *fd is -1.
long ReceiveMessage(int sock, void* buf, size_t cap, int* fd = nullptr);
// The same with up to `max_fds` (<= 4) descriptors, received CLOEXEC into fds[0..*count). A
// message that carried more (the kernel cut them off) is refused with -EPROTO, its descriptors
// closed.
long ReceiveMessageFds(int sock, void* buf, size_t cap, int* fds, size_t max_fds, size_t* count);

inline int32_t IntAt(const uint8_t* buf, size_t len, size_t index) {
  size_t at = 4 + index * 4;
  if (len < at + 4) return 0;
  int32_t v;
  __builtin_memcpy(&v, buf + at, 4);
  return v;
}
inline uint32_t TypeOf(const uint8_t* buf, size_t len) {
  if (len < 4) return 0;
  uint32_t t;
  __builtin_memcpy(&t, buf, 4);
  return t;
}

}  // namespace srt::init
