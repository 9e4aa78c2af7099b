// SPDX-License-Identifier: Apache-2.0
// sys/fd: descriptors srt creates, every one CLOEXEC from birth (house style §2.4).
#pragma once

#include <functional>
#include <string_view>
#include <utility>

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::sys {

// A sealed memfd holding `content` (no one can change it afterwards, not even through the fd).
[[nodiscard]] Result<UniqueFd> SealedMemfd(const char* name, std::string_view content);
// socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC).
[[nodiscard]] Result<std::pair<UniqueFd, UniqueFd>> SeqpacketPair();
// pipe2(O_CLOEXEC): {read end, write end}.
[[nodiscard]] Result<std::pair<UniqueFd, UniqueFd>> Pipe();
// F_DUPFD_CLOEXEC at or above `min`.
[[nodiscard]] Result<UniqueFd> DupAtLeast(int fd, int min);
// pidfd_open(pid, 0).
[[nodiscard]] Result<UniqueFd> PidfdOpen(int pid);
// True if `fd` is open in this process.
bool IsOpen(int fd);
// Writes all of `data` to `fd`: again after EINTR and short writes, waiting for POLLOUT when a
// non-blocking `fd` is full. The error names `what` and keeps errno (a zero-length write is
// EPIPE). The one write loop of every module; srt-init, freestanding, has rt::WriteAll.
// With `give_up`, a full non-blocking `fd` is waited for in slices of at most 100 ms, and the
// write fails with ETIMEDOUT as soon as give_up() says so (a reader that stopped reading).
[[nodiscard]] Result<void> WriteAll(int fd, std::string_view data, std::string_view what,
                                    const std::function<bool()>& give_up = {});

}  // namespace srt::sys
