// SPDX-License-Identifier: Apache-2.0
// base/fd_message: the one way srt builds a sendmsg(2) message of bytes plus descriptors
// (SCM_RIGHTS). Pure: it fills a msghdr; the caller sends it.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace srt {

class FdMessage {
 public:
  // The most descriptors one message of srt's carries (an exec plan and stdin, stdout, stderr).
  static constexpr size_t kMaxFds = 4;

  // `bytes` must outlive the message; `fds` is copied. More than kMaxFds descriptors, or a
  // negative one, is a caller's bug: the message then carries none, and the peer, which checks
  // how many it got, refuses it.
  FdMessage(std::span<const uint8_t> bytes, std::span<const int> fds) {
    iov_.iov_base = const_cast<uint8_t*>(bytes.data());
    iov_.iov_len = bytes.size();
    msg_.msg_iov = &iov_;
    msg_.msg_iovlen = 1;
    if (fds.empty() || fds.size() > kMaxFds) return;
    for (int fd : fds) {
      if (fd < 0) return;
    }
    msg_.msg_control = control_;
    msg_.msg_controllen = CMSG_SPACE(fds.size() * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg_);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;

  const msghdr* get() const { return &msg_; }

 private:
  iovec iov_{};
  msghdr msg_{};
  alignas(cmsghdr) char control_[CMSG_SPACE(kMaxFds * sizeof(int))] = {};
};

}  // namespace srt
