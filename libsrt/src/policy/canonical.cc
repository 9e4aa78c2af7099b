// SPDX-License-Identifier: Apache-2.0
// realpath(3) over FsView.
#include "policy/canonical.h"

#include <deque>

#include "base/path.h"
#include "base/strings.h"

namespace srt::policy {

namespace {
constexpr int kMaxLinks = 40;  // the kernel's MAXSYMLINKS

void PushFront(std::deque<std::string>& todo, std::string_view path) {
  std::vector<std::string_view> parts = path::Components(path);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.emplace_front(*it);
}
}  // namespace

Result<CanonicalPath> Canonicalize(const FsView& fs, std::string_view absolute) {
  if (!path::IsAbsolute(absolute)) {
    return MakeError(Errc::kInternal,
                     "canonicalize " + strings::Quote(absolute) + ": not absolute");
  }
  CanonicalPath out;
  std::string resolved = "/";
  std::deque<std::string> todo;
  PushFront(todo, absolute);
  int links = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      resolved = std::string(path::Parent(resolved));
      continue;
    }
    std::string candidate = path::Join(resolved, part);
    FileType type = fs.TypeOf(candidate);
    if (type == FileType::kSymlink) {
      if (++links > kMaxLinks) {
        return MakeError(Errc::kInvalidArgument,
                         strings::Quote(absolute) + ": too many levels of symbolic links");
      }
      SRT_ASSIGN_OR_RETURN(std::string target, fs.ReadLink(candidate));
      out.symlinks.push_back(candidate);
      if (path::IsAbsolute(target)) resolved = "/";
      PushFront(todo, target);
      continue;
    }
    if (type == FileType::kMissing) {
      std::string rest = candidate;
      for (const std::string& p : todo) rest = path::Join(rest, p);
      out.path = path::Normalize(rest);
      out.exists = false;
      return out;
    }
    resolved = std::move(candidate);
  }
  out.path = resolved;
  out.exists = true;
  return out;
}

}  // namespace srt::policy
