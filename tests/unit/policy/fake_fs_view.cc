// SPDX-License-Identifier: Apache-2.0
// FakeFsView: an in-memory FsView with kernel-like path resolution.
#include "fake_fs_view.h"

#include <cerrno>
#include <deque>
#include <stdexcept>

#include "base/path.h"
#include "base/strings.h"

namespace srt::policy {
namespace {

constexpr size_t kMaxSymlinks = 40;  // MAXSYMLINKS

std::string Op(std::string_view op, const std::string& path) {
  return std::string(op) + " " + strings::Quote(path);
}

}  // namespace

FakeFsView::FakeFsView() { entries_["/"] = Entry{.node = kDir, .ino = next_ino_++}; }

FakeFsView::FakeFsView(const std::vector<std::pair<std::string, FakeNode>>& nodes) : FakeFsView() {
  for (const auto& [p, node] : nodes) Add(p, node);
}

FakeFsView& FakeFsView::Add(const std::string& p, const FakeNode& node) {
  if (!path::IsAbsolute(p) || path::Normalize(p) != p) {
    throw std::invalid_argument("FakeFsView: " + strings::Quote(p) +
                                " is not an absolute normalised path");
  }
  if (p == "/") {
    if (node.type != FileType::kDirectory) {
      throw std::invalid_argument("FakeFsView: '/' must be a directory");
    }
    entries_["/"].node = node;
    return *this;
  }
  // Create the missing parents, shallowest first, so inode numbers follow depth.
  std::string parent = "/";
  for (std::string_view c : path::Components(path::Parent(p))) {
    std::string child = path::Join(parent, c);
    auto it = entries_.find(child);
    if (it == entries_.end()) {
      entries_[child] = Entry{.node = kDir, .ino = next_ino_++};
      entries_[parent].children.insert(std::string(c));
    } else if (it->second.node.type != FileType::kDirectory) {
      throw std::invalid_argument("FakeFsView: " + strings::Quote(p) + " is below " +
                                  strings::Quote(child) + ", which is not a directory");
    }
    parent = std::move(child);
  }
  auto it = entries_.find(p);
  if (it != entries_.end()) {
    if (it->second.node.type != node.type) {
      throw std::invalid_argument("FakeFsView: " + strings::Quote(p) +
                                  " redeclared with another type");
    }
    it->second.node = node;
    return *this;
  }
  entries_[p] = Entry{.node = node, .ino = next_ino_++};
  entries_[parent].children.insert(std::string(path::Basename(p)));
  return *this;
}

FakeFsView::Lookup FakeFsView::Resolve(const std::string& p, bool follow_last) const {
  if (!path::IsAbsolute(p)) return {ENOENT, {}};
  std::deque<std::string> pending;
  for (std::string_view c : path::Components(p)) pending.emplace_back(c);
  std::string resolved = "/";
  size_t links = 0;
  while (!pending.empty()) {
    std::string c = std::move(pending.front());
    pending.pop_front();
    const Entry& dir = entries_.at(resolved);
    if (dir.node.type != FileType::kDirectory) return {ENOTDIR, {}};
    if (dir.node.unsearchable) return {EACCES, {}};
    if (c == ".") continue;
    if (c == "..") {
      resolved = std::string(path::Parent(resolved));
      continue;
    }
    std::string candidate = path::Join(resolved, c);
    auto it = entries_.find(candidate);
    if (it == entries_.end()) return {ENOENT, {}};
    const bool last = pending.empty();
    if (it->second.node.type == FileType::kSymlink && (!last || follow_last)) {
      if (++links > kMaxSymlinks) return {ELOOP, {}};
      const std::string& target = it->second.node.target;
      if (target.empty()) return {ENOENT, {}};
      if (path::IsAbsolute(target)) resolved = "/";
      std::vector<std::string_view> parts = path::Components(target);
      for (auto part = parts.rbegin(); part != parts.rend(); ++part) pending.emplace_front(*part);
      continue;
    }
    resolved = std::move(candidate);
  }
  return {0, std::move(resolved)};
}

FileType FakeFsView::TypeOf(const std::string& p) const {
  Lookup l = Resolve(p, /*follow_last=*/false);
  if (l.err == ENOENT || l.err == ENOTDIR) return FileType::kMissing;
  if (l.err != 0) return FileType::kOther;
  return entries_.at(l.real).node.type;
}

bool FakeFsView::IsPlaceholder(const std::string& p) const {
  Lookup l = Resolve(p, /*follow_last=*/false);
  return l.err == 0 && entries_.at(l.real).node.placeholder;
}

Result<std::string> FakeFsView::ReadLink(const std::string& p) const {
  Lookup l = Resolve(p, /*follow_last=*/false);
  if (l.err != 0) return SysError(Op("readlink", p), l.err);
  const FakeNode& node = entries_.at(l.real).node;
  if (node.type != FileType::kSymlink) return SysError(Op("readlink", p), EINVAL);
  return node.target;
}

Result<std::vector<DirEntry>> FakeFsView::List(const std::string& dir) const {
  list_calls_.push_back(dir);
  Lookup l = Resolve(dir, /*follow_last=*/true);
  if (l.err != 0) return SysError(Op("opendir", dir), l.err);
  const Entry& e = entries_.at(l.real);
  if (e.node.type != FileType::kDirectory) return SysError(Op("opendir", dir), ENOTDIR);
  if (e.node.unreadable || e.node.unsearchable) return SysError(Op("opendir", dir), EACCES);
  std::vector<DirEntry> out;
  out.reserve(e.children.size());
  for (const std::string& name : e.children) {
    out.push_back(DirEntry{name, entries_.at(path::Join(l.real, name)).node.type});
  }
  return out;
}

Result<FileId> FakeFsView::IdOf(const std::string& p) const {
  Lookup l = Resolve(p, /*follow_last=*/false);
  if (l.err != 0) return SysError(Op("lstat", p), l.err);
  return FileId{1, entries_.at(l.real).ino};
}

Result<std::string> FakeFsView::ReadSmallFile(const std::string& p, size_t max_bytes) const {
  Lookup l = Resolve(p, /*follow_last=*/true);
  if (l.err != 0) return SysError(Op("open", p), l.err);
  const FakeNode& node = entries_.at(l.real).node;
  if (node.type == FileType::kDirectory) return SysError(Op("read", p), EISDIR);
  if (node.unreadable) return SysError(Op("open", p), EACCES);
  return node.content.substr(0, max_bytes);
}

}  // namespace srt::policy
