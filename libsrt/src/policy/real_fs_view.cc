// SPDX-License-Identifier: Apache-2.0
// FsView backed by lstat(2), readlink(2) and getdents64(2).
#include "policy/real_fs_view.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

// getdents64 straight into a buffer: a walk over a large tree lists thousands of directories,
// and opendir(3) adds an fstat and two fcntl calls to each.
Result<std::vector<DirEntry>> RealFsView::List(const std::string& dir) const {
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return SysError("open directory " + strings::Quote(dir));
  // Records are 8-byte aligned (struct linux_dirent64); the buffer is too.
  alignas(8) char buf[32768];
  std::vector<DirEntry> out;
  for (;;) {
    const long n = syscall(SYS_getdents64, fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("readdir " + strings::Quote(dir));
    if (n == 0) break;
    for (long off = 0; off < n;) {
      // d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name (NUL-terminated).
      unsigned short reclen = 0;
      std::memcpy(&reclen, buf + off + 16, sizeof reclen);
      if (reclen == 0 || off + reclen > n) return MakeError(Errc::kInternal, "getdents64 record");
      const unsigned char d_type = static_cast<unsigned char>(buf[off + 18]);
      const char* name_ptr = buf + off + 19;
      const std::string_view name(name_ptr, strnlen(name_ptr, reclen - 19));
      off += reclen;
      if (name == "." || name == "..") continue;
      FileType type;
      switch (d_type) {
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
          const std::string z(name);
          type = fstatat(fd.get(), z.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? FromMode(st.st_mode)
                                                                             : FileType::kOther;
          break;
        }
        default:
          type = FileType::kOther;
          break;
      }
      out.push_back(DirEntry{std::string(name), type});
    }
  }
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
