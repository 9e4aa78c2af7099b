// SPDX-License-Identifier: Apache-2.0
// FsView backed by lstat(2), readlink(2) and getdents via opendir(3).
#include "policy/real_fs_view.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "base/strings.h"
#include "base/unique_fd.h"
#include "init_protocol/wire.h"

namespace srt::policy {

namespace {

FileType FromMode(mode_t mode) {
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISREG(mode)) return FileType::kRegular;
  if (S_ISLNK(mode)) return FileType::kSymlink;
  return FileType::kOther;
}

struct DirCloser {
  void operator()(DIR* d) const { closedir(d); }
};

}  // namespace

FileType RealFsView::TypeOf(const std::string& path) const {
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) return FromMode(st.st_mode);
  return (errno == ENOENT || errno == ENOTDIR) ? FileType::kMissing : FileType::kOther;
}

Result<std::string> RealFsView::ReadLink(const std::string& path) const {
  std::string buf(256, '\0');
  for (;;) {
    ssize_t n = readlink(path.c_str(), buf.data(), buf.size());
    if (n < 0) return SysError("readlink " + strings::Quote(path));
    if (static_cast<size_t>(n) < buf.size()) {
      buf.resize(static_cast<size_t>(n));
      return buf;
    }
    if (buf.size() > 65536) return MakeError(Errc::kInvalidArgument, "symlink target too long");
    buf.resize(buf.size() * 2);
  }
}

Result<std::vector<DirEntry>> RealFsView::List(const std::string& dir) const {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return SysError("open directory " + strings::Quote(dir));
  std::unique_ptr<DIR, DirCloser> d(fdopendir(fd));
  if (!d) {
    Error e = SysError("fdopendir " + strings::Quote(dir));
    close(fd);
    return e;
  }
  std::vector<DirEntry> out;
  errno = 0;
  while (struct dirent* e = readdir(d.get())) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    FileType type;
    switch (e->d_type) {
      case DT_DIR:
        type = FileType::kDirectory;
        break;
      case DT_REG:
        type = FileType::kRegular;
        break;
      case DT_LNK:
        type = FileType::kSymlink;
        break;
      case DT_UNKNOWN: {
        struct stat st;
        type = fstatat(dirfd(d.get()), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
                   ? FromMode(st.st_mode)
                   : FileType::kOther;
        break;
      }
      default:
        type = FileType::kOther;
        break;
    }
    out.push_back(DirEntry{std::string(name), type});
  }
  if (errno != 0) return SysError("readdir " + strings::Quote(dir));
  return out;
}

Result<FileId> RealFsView::IdOf(const std::string& path) const {
  struct stat st;
  if (lstat(path.c_str(), &st) < 0) return SysError("lstat " + strings::Quote(path));
  return FileId{static_cast<unsigned long long>(st.st_dev),
                static_cast<unsigned long long>(st.st_ino)};
}

Result<std::string> RealFsView::ReadSmallFile(const std::string& path, size_t max_bytes) const {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return SysError("open " + strings::Quote(path));
  std::string out(max_bytes, '\0');
  size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = read(fd.get(), out.data() + got, max_bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("read " + strings::Quote(path));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

bool RealFsView::IsPlaceholder(const std::string& path) const {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         (st.st_mode & 07777) == wire::kPlaceholderMode && st.st_uid == geteuid();
}

}  // namespace srt::policy
