// SPDX-License-Identifier: Apache-2.0
// ConfinedRoot: safe path resolution beneath the file tools' root (see confined_root.h).
#include "toolbox/confined_root.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <deque>
#include <vector>

#include "base/path.h"
#include "toolbox/limits.h"
#include "toolbox/text.h"

namespace srt::poller::toolbox {
namespace {

// Splits a path on '/' and drops empty and "." components; ".." is kept (lexical cleaning of a
// relative path happens in Clean()).
std::vector<std::string> Split(std::string_view p) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view c = p.substr(i, j - i);
    if (!c.empty() && c != ".") out.emplace_back(c);
    i = j + 1;
  }
  return out;
}

// Go's filepath.Clean on components: "a/../b" -> "b". Leading ".." stay (relative) or are
// dropped (absolute: "/.." is "/").
std::vector<std::string> Clean(const std::vector<std::string>& parts, bool absolute) {
  std::vector<std::string> out;
  for (const auto& c : parts) {
    if (c == "..") {
      if (!out.empty() && out.back() != "..") {
        out.pop_back();
      } else if (!absolute) {
        out.push_back(c);
      }
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& c : parts) {
    if (!s.empty()) s += '/';
    s += c;
  }
  return s;
}

// If `abs` (cleaned components of an absolute path) lies at or under `root` (a cleaned absolute
// path), returns true and the components below it.
bool StripRoot(const std::vector<std::string>& abs, const std::string& root,
               std::vector<std::string>& rel) {
  std::vector<std::string> r = Split(root);
  if (abs.size() < r.size()) return false;
  for (size_t i = 0; i < r.size(); ++i) {
    if (abs[i] != r[i]) return false;
  }
  rel.assign(abs.begin() + static_cast<long>(r.size()), abs.end());
  return true;
}

long OpenAt2(int dirfd, const char* path, int flags, mode_t mode, uint64_t resolve) {
  open_how how{};
  how.flags = static_cast<__u64>(static_cast<unsigned>(flags));
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? static_cast<__u64>(mode) : 0;
  how.resolve = resolve;
  return syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

Error Escapes(std::string_view input) {
  return MakeError(Errc::kDenied, "path " + GoQuote(input) + " escapes workdir");
}

Error FsError(int err) { return Error(Errc::kSystem, FsErrorMessage(err), err); }

}  // namespace

Result<ConfinedRoot> ConfinedRoot::Open(const std::string& dir) {
  std::string given = dir;
  if (given.empty() || given[0] != '/') {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return SysError("getcwd");
    given = std::string(cwd) + "/" + given;
  }
  given = path::Normalize(given);
  char real[PATH_MAX];
  if (!realpath(given.c_str(), real)) return SysError("realpath '" + dir + "'");
  int fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return SysError("open '" + std::string(real) + "'");
  return ConfinedRoot(real, given, UniqueFd(fd));
}

std::string ConfinedRoot::Absolute(const std::string& rel) const {
  if (rel.empty()) return path_;
  return path_ == "/" ? "/" + rel : path_ + "/" + rel;
}

Result<ResolvedPath> ConfinedRoot::Resolve(std::string_view input) const {
  if (input.size() > kMaxPathBytes) return FsError(ENAMETOOLONG);
  if (input.find('\0') != std::string_view::npos) return FsError(EINVAL);

  // Lexical step, as Go's resolvePath does: an absolute path must name the root or lie under
  // it; a relative one is joined to the root and must not climb out of it.
  std::vector<std::string> start;
  bool absolute = !input.empty() && input[0] == '/';
  std::vector<std::string> cleaned = Clean(Split(input), absolute);
  if (absolute) {
    if (!StripRoot(cleaned, path_, start) && !StripRoot(cleaned, given_, start)) {
      return Escapes(input);
    }
  } else {
    if (!cleaned.empty() && cleaned.front() == "..") return Escapes(input);
    start = std::move(cleaned);
  }

  // Walk one component at a time with O_PATH | O_NOFOLLOW handles, splicing in symlink targets,
  // and handling ".." ourselves on the resolved stack, so nothing outside the root is ever
  // looked up. Components past the first missing one are kept lexically (a path being created).
  std::deque<std::string> pending(start.begin(), start.end());
  std::vector<std::string> resolved;
  std::vector<UniqueFd> fds;  // fds[i] is resolved[i] while it exists
  int hops = 0;
  size_t total = 0;
  while (!pending.empty()) {
    std::string c = std::move(pending.front());
    pending.pop_front();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (resolved.empty()) return Escapes(input);
      resolved.pop_back();
      if (fds.size() > resolved.size()) fds.pop_back();
      continue;
    }
    if (fds.size() < resolved.size()) {  // below a missing component
      resolved.push_back(std::move(c));
      continue;
    }
    int parent = fds.empty() ? fd_.get() : fds.back().get();
    int fd = openat(parent, c.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno != ENOENT) return FsError(errno);
      resolved.push_back(std::move(c));
      continue;
    }
    UniqueFd handle(fd);
    struct stat st;
    if (fstat(handle.get(), &st) != 0) return FsError(errno);
    if (!S_ISLNK(st.st_mode)) {
      resolved.push_back(std::move(c));
      fds.push_back(std::move(handle));
      continue;
    }
    if (++hops > kMaxSymlinkHops) return FsError(ELOOP);
    char target[PATH_MAX];
    ssize_t n = readlinkat(handle.get(), "", target, sizeof target - 1);
    if (n < 0) return FsError(errno);
    std::string_view t(target, static_cast<size_t>(n));
    total += t.size();
    if (total > 64 * kMaxPathBytes) return FsError(ENAMETOOLONG);
    std::vector<std::string> parts = Split(t);
    if (!t.empty() && t[0] == '/') {
      // An absolute link is fine when it points inside the root (e.g. /workspace/a ->
      // /workspace/b); it restarts from the root. Anything else, /proc/self/root included, escapes.
      std::vector<std::string> below;
      std::vector<std::string> abs = Clean(parts, /*absolute=*/true);
      if (!StripRoot(abs, path_, below) && !StripRoot(abs, given_, below)) return Escapes(input);
      resolved.clear();
      fds.clear();
      parts = std::move(below);
    }
    pending.insert(pending.begin(), parts.begin(), parts.end());
  }

  ResolvedPath out;
  out.rel = Join(resolved);
  if (out.rel.size() > kMaxPathBytes) return FsError(ENAMETOOLONG);
  out.exists = fds.size() == resolved.size();
  if (out.exists) {
    if (fds.empty()) {
      int fd = openat(fd_.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) return FsError(errno);
      out.fd.reset(fd);
    } else {
      out.fd = std::move(fds.back());
    }
  }
  return out;
}

Result<UniqueFd> ConfinedRoot::OpenBeneath(const std::string& rel, int flags, mode_t mode) const {
  const char* path = rel.empty() ? "." : rel.c_str();
  flags |= O_NOFOLLOW | O_CLOEXEC;
  long fd = OpenAt2(fd_.get(), path, flags, mode,
                    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (fd >= 0) return UniqueFd(static_cast<int>(fd));
  if (errno != ENOSYS) return FsError(errno == EXDEV ? EACCES : errno);
  // FIXME: remove once Linux 5.6 (openat2) is the baseline. Component by component with
  // O_NOFOLLOW: `rel` is canonical (no "..", no symlinks), so this cannot leave the root.
  std::vector<std::string> parts = Split(rel);
  if (parts.empty()) {
    fd = openat(fd_.get(), ".", flags & ~O_NOFOLLOW, mode);
    if (fd < 0) return FsError(errno);
    return UniqueFd(static_cast<int>(fd));
  }
  UniqueFd dir;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int d = openat(dir ? dir.get() : fd_.get(), parts[i].c_str(),
                   O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0) return FsError(errno);
    dir.reset(d);
  }
  fd = openat(dir ? dir.get() : fd_.get(), parts.back().c_str(), flags, mode);
  if (fd < 0) return FsError(errno);
  return UniqueFd(static_cast<int>(fd));
}

Result<UniqueFd> ConfinedRoot::MakeDirs(const std::string& rel) const {
  std::vector<std::string> parts = Split(rel);
  std::string so_far;
  for (const auto& c : parts) {
    so_far = so_far.empty() ? c : so_far + "/" + c;
    auto dir = OpenBeneath(so_far, O_PATH | O_DIRECTORY);
    if (dir) continue;
    if (dir.error().sys_errno() != ENOENT) return std::move(dir).error();
    // mkdirat relative to the (already checked) parent's fd.
    size_t slash = so_far.rfind('/');
    std::string parent_rel = slash == std::string::npos ? "" : so_far.substr(0, slash);
    SRT_ASSIGN_OR_RETURN(UniqueFd parent, OpenBeneath(parent_rel, O_PATH | O_DIRECTORY));
    if (mkdirat(parent.get(), c.c_str(), 0755) != 0 && errno != EEXIST) return FsError(errno);
  }
  return OpenBeneath(rel, O_PATH | O_DIRECTORY);
}

}  // namespace srt::poller::toolbox
