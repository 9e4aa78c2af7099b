// SPDX-License-Identifier: Apache-2.0
// ConfinedRoot: the directory the file tools are confined to, and safe path resolution beneath
// it (no `..` or symlink, absolute or relative, in the input or in a link, may leave it).
//
// Usage: Open() the root once at start; Resolve() each tool path to its canonical location
// beneath the root (every symlink followed, also a dangling leaf, like the Go toolset's
// resolvePath); then act on it only through OpenBeneath()/MakeDirs(), which open the canonical
// path relative to the root's fd with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS), so a component swapped for a symlink after Resolve() fails instead
// of being followed.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::poller::toolbox {

struct ResolvedPath {
  std::string rel;  // canonical, relative to the root, no symlinks; "" is the root itself
  bool exists = false;
  UniqueFd fd;  // O_PATH of the final component when it exists
};

class ConfinedRoot {
 public:
  // Opens `dir` (made absolute and canonical). Fails when it is not a directory.
  [[nodiscard]] static Result<ConfinedRoot> Open(const std::string& dir);

  // The canonical absolute path of the root.
  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }
  // The absolute path of a canonical relative path: path()/rel.
  std::string Absolute(const std::string& rel) const;

  // Resolves a tool's path (relative to the root, or absolute inside it). Errors:
  // Errc::kDenied "path \"<input>\" escapes workdir" when the path or a symlink on it leaves
  // the root; Errc::kSystem with the errno (ENOTDIR, EACCES, ELOOP, ENAMETOOLONG) otherwise.
  [[nodiscard]] Result<ResolvedPath> Resolve(std::string_view input) const;

  // Opens the canonical `rel` beneath the root; O_NOFOLLOW and O_CLOEXEC are always added.
  [[nodiscard]] Result<UniqueFd> OpenBeneath(const std::string& rel, int flags,
                                             mode_t mode = 0) const;

  // Creates the canonical directory `rel` and its missing parents (mode 0755) beneath the root
  // and returns an fd of it (O_DIRECTORY). Errors carry the errno.
  [[nodiscard]] Result<UniqueFd> MakeDirs(const std::string& rel) const;

 private:
  ConfinedRoot(std::string path, std::string given, UniqueFd fd)
      : path_(std::move(path)), given_(std::move(given)), fd_(std::move(fd)) {}

  std::string path_;   // canonical
  std::string given_;  // as given on the command line, made absolute and cleaned lexically
  UniqueFd fd_;        // O_PATH | O_DIRECTORY
};

}  // namespace srt::poller::toolbox
