// SPDX-License-Identifier: Apache-2.0
// How a caller's descriptor reaches the command (see passing.h).
#include "launch/passing.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <string>

namespace srt::launch {

// Opening them again grants nothing a descriptor of them does not.
const char* SandboxDevice(const DescriptorFacts& f) {
  if (f.type != S_IFCHR || f.rdev_major != 1) return nullptr;
  switch (f.rdev_minor) {
    case 3:
      return "/dev/null";
    case 5:
      return "/dev/zero";
    case 7:
      return "/dev/full";
    case 8:
      return "/dev/random";
    case 9:
      return "/dev/urandom";
    default:
      return nullptr;
  }
}

namespace {

Error Refuse(std::string_view name, const std::string& why) {
  return MakeError(Errc::kInvalidArgument, std::string(name) + " " + why);
}

}  // namespace

Result<Passing> DecidePassing(const DescriptorFacts& f, bool standard, std::string_view name) {
  if (!f.open) return standard ? Passing::kNull : Result<Passing>(Refuse(name, "is not open"));
  if ((f.status_flags & O_PATH) == O_PATH) {
    return Refuse(name,
                  "is an O_PATH descriptor: the command could open its file with any access, or "
                  "anything below it, whatever the policy says; srt does not pass it");
  }
  if (f.type == S_IFDIR) {
    return Refuse(name,
                  "is a directory: the command could open any file below it, whatever the "
                  "policy hides; srt does not pass it");
  }
  if (f.terminal) {
    if (standard) return Passing::kTerminal;
    return Refuse(name,
                  "is a terminal: the command could change its modes and size, so srt gives it a "
                  "terminal of its own, on standard input, output and error only");
  }
  // Neither a socket nor an anonymous inode can be opened again through /proc, and neither has
  // a host file behind it.
  if (f.type == S_IFSOCK || f.type == 0) return Passing::kAsIs;
  if (SandboxDevice(f)) return Passing::kDevice;
  const int access = f.status_flags & O_ACCMODE;
  if (access == O_RDONLY) return Passing::kInput;
  if (access == O_WRONLY) return Passing::kOutput;
  // A file with no name (a memfd, an O_TMPFILE, a removed file): no host program reaches it
  // by path, and reopening it grants what this descriptor does.
  if (access == O_RDWR && f.type == S_IFREG && f.links == 0) return Passing::kAsIs;
  if (access == O_RDWR) {
    return Refuse(name,
                  "is open for reading and writing: srt passes a file as input (a pipe srt "
                  "fills) or as output (one it empties), so that the command can neither reopen "
                  "it with more access nor change its mode; open it for one of them");
  }
  return Refuse(name, "has an access mode srt does not know");
}

}  // namespace srt::launch
