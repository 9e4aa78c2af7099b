// runner/hostile_tree.cc: see hostile_tree.h.
#include "runner/hostile_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

constexpr int kMaxRemoveDepth = 256;

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

}  // namespace

Result<void> RemoveTreeAt(int dirfd, const std::string& name, int depth) {
  if (depth > kMaxRemoveDepth) {
    return MakeError(Errc::kInvalidArgument, "remove " + strings::Quote(name) + ": deeper than " +
                                                 std::to_string(kMaxRemoveDepth));
  }
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) {
      return Ok();
    }
    return SysError("stat " + strings::Quote(name));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) {
      return SysError("unlink " + strings::Quote(name));
    }
    return Ok();
  }
  SRT_ASSIGN_OR_RETURN(UniqueFd dir, OpenDirForRemoval(dirfd, name));
  std::vector<std::string> children;
  {
    int dup = ::fcntl(dir.get(), F_DUPFD_CLOEXEC, 0);
    if (dup < 0) {
      return SysError("dup");
    }
    DIR* d = ::fdopendir(dup);
    if (d == nullptr) {
      Error e = SysError("opendir " + strings::Quote(name));
      ::close(dup);
      return e;
    }
    // The duplicate shares the offset of `dirfd`, which an earlier walk left at the end.
    ::rewinddir(d);
    while (dirent* ent = ::readdir(d)) {
      std::string child = ent->d_name;
      if (child != "." && child != "..") {
        children.push_back(std::move(child));
      }
    }
    ::closedir(d);
  }
  for (const std::string& child : children) {
    if (auto r = RemoveTreeAt(dir.get(), child, depth + 1); !r) {
      return std::move(r).error().Wrap(strings::Quote(name));
    }
  }
  if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return SysError("rmdir " + strings::Quote(name));
  }
  return Ok();
}

}  // namespace srt::poller
