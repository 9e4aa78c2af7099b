// SPDX-License-Identifier: Apache-2.0
// runner/hostile_tree.h: directories in a tree the sandbox can write (the workspace, a memory
// store), opened and removed from the host without ever following a symlink the sandbox planted.
#pragma once

#include <string>

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::poller {

// Opens (with `create`, making it first, mode 0755) the directory `name` below `dirfd`. A
// symlink or a non-directory there is kPermissionDenied.
[[nodiscard]] Result<UniqueFd> OpenDirAt(int dirfd, const std::string& name, bool create);

// rm -rf of `name` below `dirfd`: a symlink is unlinked itself, never followed; a directory the
// sandbox made unreadable is chmodded (itself, through its O_PATH handle) first. Missing is
// fine. Any depth and any number of entries, in bounded memory and descriptors: directories
// more than 128 levels down are moved up within the tree first, and each directory is emptied
// 4096 names at a time.
[[nodiscard]] Result<void> RemoveTreeAt(int dirfd, const std::string& name);

}  // namespace srt::poller
