// SPDX-License-Identifier: Apache-2.0
// runner/hostile_tree.cc: see hostile_tree.h.
#include "runner/hostile_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "base/strings.h"

namespace srt::poller {

// Opens (optionally creating) the directory `name` below `dirfd` without following a symlink.
Result<UniqueFd> OpenDirAt(int dirfd, const std::string& name, bool create) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      return UniqueFd(fd);
    }
    if (errno == ELOOP || errno == ENOTDIR) {
      return MakeError(Errc::kPermissionDenied,
                       "open " + strings::Quote(name) + ": not a directory (or a symlink)");
    }
    if (errno != ENOENT || !create || attempt > 0) {
      return SysError("open " + strings::Quote(name));
    }
    if (::mkdirat(dirfd, name.c_str(), 0755) != 0 && errno != EEXIST) {
      return SysError("mkdir " + strings::Quote(name));
    }
  }
  return MakeError(Errc::kInternal, "open " + strings::Quote(name));
}

namespace {

// Descriptors a removal holds at once, one per level: a directory deeper than this below the
// top of the tree is moved up to the top and removed from there, so the depth the agent gave
// its tree does not matter (it can nest directories without end, by openat).
constexpr int kMaxRemoveDepth = 128;
// Names a removal holds at once, per level: a directory is emptied in batches.
constexpr size_t kRemoveBatch = 4096;

// Opens a directory we may have no read permission on (the sandbox can chmod 000 things in
// the workspace): gets an O_PATH handle first, then chmods through /proc/self/fd, which acts on
// the directory itself and never on a symlink.
Result<UniqueFd> OpenDirForRemoval(int dirfd, const std::string& name) {
  int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    return UniqueFd(fd);
  }
  if (errno != EACCES) {
    return SysError("open " + strings::Quote(name));
  }
  UniqueFd path(::openat(dirfd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!path) {
    return SysError("open " + strings::Quote(name));
  }
  std::string proc = "/proc/self/fd/" + std::to_string(path.get());
  if (::chmod(proc.c_str(), 0700) != 0) {
    return SysError("chmod " + strings::Quote(name));
  }
  fd = ::openat(path.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return SysError("open " + strings::Quote(name));
  }
  return UniqueFd(fd);
}

// Up to kRemoveBatch names of `dir_fd`'s entries, from its start.
Result<std::vector<std::string>> SomeEntries(int dir_fd, const std::string& what) {
  int dup = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return SysError("dup");
  DIR* d = ::fdopendir(dup);
  if (d == nullptr) {
    Error e = SysError("opendir " + strings::Quote(what));
    ::close(dup);
    return e;
  }
  // The duplicate shares the offset of `dir_fd`, which an earlier batch left further on.
  ::rewinddir(d);
  std::vector<std::string> names;
  while (names.size() < kRemoveBatch) {
    dirent* ent = ::readdir(d);
    if (ent == nullptr) break;
    std::string name = ent->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);
  return names;
}

// Unlinks `name` below `dirfd` unless it is a directory (a symlink itself, never its target).
// True when nothing is left there.
Result<bool> RemoveUnlessDirectory(int dirfd, const std::string& name) {
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    return SysError("stat " + strings::Quote(name));
  }
  if (S_ISDIR(st.st_mode)) return false;
  if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) {
    return SysError("unlink " + strings::Quote(name));
  }
  return true;
}

class Remover {
 public:
  explicit Remover(int top_fd) : top_fd_(top_fd) {}

  // Removes every entry of `dir_fd` (`depth` levels below the top), until none is left: also
  // those moved up into the top while it ran.
  Result<void> Empty(int dir_fd, const std::string& what, int depth) {
    while (true) {
      SRT_ASSIGN_OR_RETURN(std::vector<std::string> names, SomeEntries(dir_fd, what));
      if (names.empty()) return Ok();
      for (const std::string& name : names) {
        if (auto r = Remove(dir_fd, name, depth); !r) {
          return std::move(r).error().Wrap(strings::Quote(what));
        }
      }
    }
  }

  Result<void> Remove(int dirfd, const std::string& name, int depth) {
    SRT_ASSIGN_OR_RETURN(bool gone, RemoveUnlessDirectory(dirfd, name));
    if (gone) return Ok();
    if (depth >= kMaxRemoveDepth) {
      // Moved up, within the tree (no name outside it is touched), never over an entry there.
      while (true) {
        const std::string up = ".srt-removing-" + std::to_string(++moved_);
        if (::renameat2(dirfd, name.c_str(), top_fd_, up.c_str(), RENAME_NOREPLACE) == 0) {
          return Ok();
        }
        if (errno != EEXIST) return SysError("move " + strings::Quote(name) + " up to remove it");
      }
    }
    SRT_ASSIGN_OR_RETURN(UniqueFd dir, OpenDirForRemoval(dirfd, name));
    SRT_RETURN_IF_ERROR(Empty(dir.get(), name, depth + 1));
    if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return SysError("rmdir " + strings::Quote(name));
    }
    return Ok();
  }

 private:
  int top_fd_;
  uint64_t moved_ = 0;
};

}  // namespace

Result<void> RemoveTreeAt(int dirfd, const std::string& name) {
  SRT_ASSIGN_OR_RETURN(bool gone, RemoveUnlessDirectory(dirfd, name));
  if (gone) return Ok();
  SRT_ASSIGN_OR_RETURN(UniqueFd top, OpenDirForRemoval(dirfd, name));
  Remover remover(top.get());
  SRT_RETURN_IF_ERROR(remover.Empty(top.get(), name, 1));
  if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return SysError("rmdir " + strings::Quote(name));
  }
  return Ok();
}

}  // namespace srt::poller
