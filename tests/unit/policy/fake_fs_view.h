// SPDX-License-Identifier: Apache-2.0
// FakeFsView: an in-memory policy::FsView for unit tests (policy, bwrap, glob), no syscalls.
//
// Build a tree from (path, node) pairs; parent directories are created implicitly:
//
//   using namespace srt::policy::fakefs;  // kDir, kFile, Symlink(), ... (or srt::policy itself)
//   srt::policy::FakeFsView fs({
//       {"/home/u/.aws/credentials", kFile},        // creates /home, /home/u, /home/u/.aws
//       {"/home/u/.ssh", kUnreadableDir},           // List -> EACCES; lookups below still work
//       {"/home/u/proj", Symlink("../../src/p")},   // stored as given, resolved like the kernel
//       {"/home/u/.gitconfig", File("[user]\n")},   // contents for ReadSmallFile
//       {"/run/agent.sock", kSpecial},              // a socket/fifo/device: FileType::kOther
//   });
//   fs.Add("/home/u/big/f1", kFile);                // or grow it programmatically
//
// Behaviour, modelled on Linux:
//   - Every path component but the last is resolved through symlinks (at most 40 links, then
//     ELOOP), as in a real lookup. TypeOf, ReadLink and IdOf do not follow the last component
//     (lstat); List and ReadSmallFile do (opendir/open).
//   - kUnreadableDir is mode -wx: List fails with EACCES, names below it still resolve.
//     kUnsearchableDir is mode 000: List fails with EACCES and every lookup below it fails with
//     EACCES too, so TypeOf of anything inside reports kOther (FsView's "could not inspect").
//     Unreadable(File("x")) makes ReadSmallFile fail with EACCES.
//   - TypeOf maps ENOENT and ENOTDIR to kMissing and every other failure to kOther.
//   - IdOf returns {dev 1, ino N} where N counts creations: "/" is 1, then each node (implicit
//     parents included) in the order it was first created. Stable for a given construction.
//   - List returns entries in name order (FsView promises no order; callers must not rely on it).
//   - Errors are SysError-style: "opendir '/x': Permission denied" with sys_errno set.
//   - ListCalls() records every List argument, so a test can assert a directory was not listed.
// Misuse (relative or non-normalised paths, a path below a file or symlink, redeclaring a path with
// another type) throws std::invalid_argument: a bug in the test, which gtest reports clearly.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "policy/fs_view.h"
#include "srt/result.h"

namespace srt::policy {

// What to create at a path. Use the constants and helpers in `fakefs` below.
struct FakeNode {
  FileType type = FileType::kRegular;
  std::string target;         // kSymlink: the link text, stored as given
  std::string content;        // kRegular: what ReadSmallFile returns
  bool unreadable = false;    // kDirectory: List fails; kRegular: ReadSmallFile fails
  bool unsearchable = false;  // kDirectory: lookups through it fail too (mode 000)
  bool placeholder = false;   // kDirectory: an srt placeholder (mode 0400, see IsPlaceholder)
};

inline namespace fakefs {
inline const FakeNode kDir{.type = FileType::kDirectory};
inline const FakeNode kFile{.type = FileType::kRegular};
inline const FakeNode kSpecial{.type = FileType::kOther};  // socket, fifo, device
inline const FakeNode kUnreadableDir{.type = FileType::kDirectory, .unreadable = true};
inline const FakeNode kPlaceholderDir{.type = FileType::kDirectory, .placeholder = true};
inline const FakeNode kUnsearchableDir{
    .type = FileType::kDirectory, .unreadable = true, .unsearchable = true};
inline FakeNode Symlink(std::string target) {
  return FakeNode{.type = FileType::kSymlink, .target = std::move(target)};
}
inline FakeNode File(std::string content) {
  return FakeNode{.type = FileType::kRegular, .content = std::move(content)};
}
inline FakeNode Unreadable(FakeNode node) {
  node.unreadable = true;
  return node;
}
}  // namespace fakefs

class FakeFsView final : public FsView {
 public:
  FakeFsView();  // just "/"
  explicit FakeFsView(const std::vector<std::pair<std::string, FakeNode>>& nodes);

  // Creates `path` (and missing parents as plain directories). Redeclaring an existing path is
  // allowed only with the same type (an implicit directory can so become kUnreadableDir).
  FakeFsView& Add(const std::string& path, const FakeNode& node);

  FileType TypeOf(const std::string& path) const override;
  Result<std::string> ReadLink(const std::string& path) const override;
  Result<std::vector<DirEntry>> List(const std::string& dir) const override;
  Result<FileId> IdOf(const std::string& path) const override;
  Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) const override;
  bool IsPlaceholder(const std::string& path) const override;

  // Every path List was called with, in call order.
  const std::vector<std::string>& ListCalls() const { return list_calls_; }
  void ClearListCalls() const { list_calls_.clear(); }

 private:
  struct Entry {
    FakeNode node;
    unsigned long long ino = 0;
    std::set<std::string> children;  // names, for directories
  };
  struct Lookup {
    int err = 0;       // 0 or an errno value
    std::string real;  // err == 0: the symlink-free path of the node found
  };

  Lookup Resolve(const std::string& path, bool follow_last) const;

  std::map<std::string, Entry> entries_;
  unsigned long long next_ino_ = 1;
  mutable std::vector<std::string> list_calls_;
};

}  // namespace srt::policy
