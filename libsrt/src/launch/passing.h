// SPDX-License-Identifier: Apache-2.0
// launch/passing: how a descriptor the caller hands to the command reaches it. Pure.
//
// A descriptor grants exactly the access it was opened with, and nothing more. Most open files
// can be opened again through /proc/self/fd/N - by path, with new flags - so handing the
// caller's own descriptor over would let the command reopen `< file` read-write or `>> log`
// without O_APPEND and read it; and through any descriptor of a host file the command could
// change the file's mode, owner or times (fchmod, fchown, futimens). So the command gets a
// pipe of srt's instead, which srt relays; a device that grants nothing (/dev/null, ...) is
// opened anew in the sandbox, where its node is read-only; only what has no host file behind
// it (sockets, anonymous inodes, a file with no name such as a memfd) is passed as it is.
#pragma once

#include <cstdint>
#include <string_view>

#include "srt/result.h"

namespace srt::launch {

// What fstat(2), fcntl(F_GETFL) and isatty(3) say about a descriptor.
struct DescriptorFacts {
  bool open = true;
  uint32_t type = 0;  // st_mode & S_IFMT (0: an anonymous inode - eventfd, epoll, pidfd, ...)
  uint32_t rdev_major = 0;
  uint32_t rdev_minor = 0;
  int status_flags = 0;  // F_GETFL
  uint64_t links = 1;    // st_nlink: 0 for a memfd, an O_TMPFILE or a removed file
  bool terminal = false;
};

enum class Passing {
  kAsIs,      // the caller's descriptor itself
  kDevice,    // the same device (SandboxDevice), opened in the sandbox with the same access
  kNull,      // not open: the command gets the sandbox's /dev/null in its place
  kInput,     // a pipe srt fills from the descriptor
  kOutput,    // a pipe srt empties into the descriptor
  kTerminal,  // the sandbox's own terminal, which srt relays to and from this one
};

// `name` says which descriptor it is in an error ("standard input", "descriptor 7");
// `standard` is true for 0-2, the only ones that can get the sandbox's terminal. Refuses (as
// kInvalidArgument) what would grant more than its access: a directory or an O_PATH
// descriptor (through it the command could open anything below, whatever the policy hides), a
// terminal beyond the standard three, and a file open for both reading and writing (no pipe
// can stand for it).
Result<Passing> DecidePassing(const DescriptorFacts& facts, bool standard, std::string_view name);

// For kDevice: the sandbox's node of the device (/dev/null, /dev/zero, /dev/full, /dev/random
// or /dev/urandom), or nullptr for any other.
const char* SandboxDevice(const DescriptorFacts& facts);

}  // namespace srt::launch
