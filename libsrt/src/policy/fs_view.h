// SPDX-License-Identifier: Apache-2.0
// policy/fs_view: the questions policy resolution asks the filesystem, behind an interface so the
// policy and the bwrap argv builder stay pure (RealFsView, its own target, in real_fs_view.h;
// FakeFsView in tests).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"

namespace srt::policy {

enum class FileType { kMissing, kDirectory, kRegular, kSymlink, kOther };

struct DirEntry {
  std::string name;
  FileType type;  // of the entry itself (symlinks are not followed)
};

struct FileId {
  unsigned long long dev = 0;
  unsigned long long ino = 0;
  bool operator==(const FileId&) const = default;
};

class FsView {
 public:
  virtual ~FsView() = default;
  // The type of `path` itself (lstat): a symlink is kSymlink. Errors other than "does not
  // exist" (EACCES on a parent, ELOOP...) are reported as kOther so callers stay conservative.
  virtual FileType TypeOf(const std::string& path) const = 0;
  // The target of the symlink at `path`, as stored.
  virtual Result<std::string> ReadLink(const std::string& path) const = 0;
  // The entries of a directory, without "." and "..", in unspecified order.
  virtual Result<std::vector<DirEntry>> List(const std::string& dir) const = 0;
  // Device and inode of `path` itself (lstat).
  virtual Result<FileId> IdOf(const std::string& path) const = 0;
  // Up to `max_bytes` of a regular file (used for the "gitdir:" line of a worktree's .git file).
  virtual Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) const = 0;
  // True if `path` is a placeholder an earlier srt left there (init_protocol/wire.h
  // kPlaceholderMode): planning treats it as the missing path it stands for.
  virtual bool IsPlaceholder(const std::string& path) const = 0;
};

}  // namespace srt::policy
