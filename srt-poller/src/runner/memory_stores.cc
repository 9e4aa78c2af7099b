// SPDX-License-Identifier: Apache-2.0
// runner/memory_stores.cc: see memory_stores.h.
#include "runner/memory_stores.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <utility>

#include "base/strings.h"
#include "base/system_text.h"
#include "base/unique_fd.h"
#include "runner/hostile_tree.h"
#include "sys/fd.h"

namespace srt::poller {
namespace {

constexpr size_t kSegmentMax = 255;
// A walk of a store visits at most this many entries (files, directories, anything): the tree
// is the agent's, and most of what it can put there is not a memory. A full store whose paths
// have 32 segments fits. Deeper than a memory's path can be (512 levels of "/a") it never goes.
constexpr size_t kMaxWalkEntries = 32 * kMaxMemories;

bool HasControl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// The segments of a clean absolute path ("/a/b"), or an error naming what is wrong with it.
Result<std::vector<std::string>> CleanSegments(std::string_view what, const std::string& path,
                                               size_t max_bytes) {
  auto bad = [&](std::string_view why) {
    return MakeError(
        Errc::kInvalidArgument,
        std::string(what) + " " + strings::QuoteForMessage(path) + ": " + std::string(why));
  };
  if (path.size() < 2 || path[0] != '/') return bad("not an absolute path below /");
  if (path.size() > max_bytes) return bad("longer than " + std::to_string(max_bytes) + " bytes");
  if (HasControl(path)) return bad("has a control character");
  std::vector<std::string> segments;
  size_t start = 1;
  while (true) {
    const size_t slash = path.find('/', start);
    std::string seg = path.substr(start, slash == std::string::npos ? slash : slash - start);
    if (seg.empty()) return bad("has an empty segment");
    if (seg == "." || seg == "..") return bad("has a '.' or '..' segment");
    if (seg.size() > kSegmentMax) return bad("has a segment longer than 255 bytes");
    segments.push_back(std::move(seg));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return segments;
}

// The directory of the memory at `segments` below `root_fd`, made when `create`.
Result<UniqueFd> OpenParentOf(int root_fd, const std::vector<std::string>& segments, bool create) {
  UniqueFd dir(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
  if (!dir) return SysError("dup");
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    SRT_ASSIGN_OR_RETURN(dir, OpenDirAt(dir.get(), segments[i], create));
  }
  return dir;
}

// The content of the regular file `name` below `dirfd`: nullopt, with `why` set, when it is
// not one (a symlink is not followed; a FIFO is not waited on), is larger than a memory may
// be, or is not UTF-8 text.
Result<std::optional<std::string>> ReadMemoryFile(int dirfd, const std::string& name,
                                                  std::string* why) {
  UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    if (errno == ELOOP) {
      *why = "a symlink";
      return std::optional<std::string>();
    }
    // The agent is writing while we read (an editor's remove-and-write): this one, not the
    // sync, waits for the next.
    if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) {
      *why = std::string("could not be opened: ") + ErrnoText(errno);
      return std::optional<std::string>();
    }
    return SysError("open " + strings::Quote(name));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return SysError("stat " + strings::Quote(name));
  if (!S_ISREG(st.st_mode)) {
    *why = "not a regular file";
    return std::optional<std::string>();
  }
  std::string content;
  char buf[16384];
  while (content.size() <= kMemoryMaxBytes) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("read " + strings::Quote(name));
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
  }
  if (content.size() > kMemoryMaxBytes) {
    *why = "larger than " + std::to_string(kMemoryMaxBytes) + " bytes";
    return std::optional<std::string>();
  }
  if (!strings::IsValidUtf8(content)) {
    *why = "not UTF-8 text";
    return std::optional<std::string>();
  }
  return std::optional<std::string>(std::move(content));
}

// What a walk of the store's directory found.
struct LocalState {
  explicit LocalState(const MemoryBaseline& b) : baseline(b) {}
  const MemoryBaseline& baseline;
  std::map<std::string, std::string> sha_by_path;  // the memories, by path
  std::set<std::string> present;                   // the baseline's paths that exist, memory or not
  SkipNotes skipped;
  size_t visited = 0;
  // Some of the tree was not seen (too many entries, a directory that would not open): what
  // the walk did not find may still be there, so nothing may be deleted.
  bool incomplete = false;
};

// A path of the agent's in a note: escaped, and cut.
std::string Quoted(const std::string& path) { return strings::QuoteForMessage(path, 200); }

Result<void> Walk(int dirfd, const std::string& prefix, int depth, LocalState& state) {
  std::vector<std::string> names;
  {
    int dup = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return SysError("dup");
    DIR* d = ::fdopendir(dup);
    if (d == nullptr) {
      Error e = SysError("opendir " + strings::Quote(prefix.empty() ? "/" : prefix));
      ::close(dup);
      return e;
    }
    // The duplicate shares the offset of `dirfd`, which an earlier walk left at the end.
    ::rewinddir(d);
    while (dirent* ent = ::readdir(d)) {
      std::string name = ent->d_name;
      if (name == "." || name == "..") continue;
      if (++state.visited > kMaxWalkEntries) {
        state.incomplete = true;
        break;
      }
      names.push_back(std::move(name));
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = prefix + "/" + name;
    if (depth == 0 && name == kMemoryMarkerFile) continue;
    // Nothing at or below a longer path can be a memory: neither held nor walked.
    if (path.size() > kMemoryMaxPathBytes) {
      state.skipped.Add(Quoted(path) + ": longer than " + std::to_string(kMemoryMaxPathBytes) +
                        " bytes");
      continue;
    }
    // A memory's path is UTF-8 text: a name that is not would reach the server changed.
    if (!strings::IsValidUtf8(name)) {
      state.skipped.Add(Quoted(path) + ": its name is not UTF-8");
      continue;
    }
    if (state.baseline.by_path.count(path) != 0) state.present.insert(path);
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      auto sub = OpenDirAt(dirfd, name, /*create=*/false);
      if (!sub) {
        state.skipped.Add(Quoted(path) + ": " + sub.error().message());
        state.incomplete = true;
        continue;
      }
      SRT_RETURN_IF_ERROR(Walk(sub->get(), path, depth + 1, state));
      continue;
    }
    if (auto valid = ValidateMemoryPath(path); !valid) {
      state.skipped.Add(valid.error().message());
      continue;
    }
    if (state.sha_by_path.size() == kMaxMemories) {
      state.skipped.Add(Quoted(path) + ": past the store's " + std::to_string(kMaxMemories) +
                        " memories");
      continue;
    }
    std::string why;
    SRT_ASSIGN_OR_RETURN(std::optional<std::string> content, ReadMemoryFile(dirfd, name, &why));
    if (!content) {
      state.skipped.Add(Quoted(path) + ": " + why);
      continue;
    }
    state.sha_by_path[path] = Sha256Hex(*content);
  }
  if (depth == 0 && state.visited > kMaxWalkEntries) {
    state.skipped.Add("the walk stopped after " + std::to_string(kMaxWalkEntries) + " entries");
  }
  return Ok();
}

// The content of the memory at `path` again, as long as it still hashes to `sha256`.
Result<std::optional<std::string>> Reread(int root_fd, const std::string& path,
                                          const std::string& sha256, std::string* why) {
  SRT_ASSIGN_OR_RETURN(auto segments, CleanSegments("memory path", path, kMemoryMaxPathBytes));
  auto parent = OpenParentOf(root_fd, segments, /*create=*/false);
  if (!parent) {
    *why = parent.error().message();
    return std::optional<std::string>();
  }
  SRT_ASSIGN_OR_RETURN(std::optional<std::string> content,
                       ReadMemoryFile(parent->get(), segments.back(), why));
  if (content && Sha256Hex(*content) != sha256) {
    *why = "changed while it was read";
    return std::optional<std::string>();
  }
  return content;
}

}  // namespace

Result<std::string> MemoryMountPath(const MemoryStoreRef& store, const std::string& workdir) {
  if (!store.mount_path.empty()) {
    SRT_RETURN_IF_ERROR(CleanSegments("memory store " + store.memory_store_id + ": mount_path",
                                      store.mount_path, 4096));
    return store.mount_path;
  }
  const std::string& name = store.name;
  const bool safe = !name.empty() && name != "." && name != ".." && name.size() <= kSegmentMax &&
                    name.find('/') == std::string::npos && !HasControl(name);
  return workdir + "/memory/" + (safe ? name : store.memory_store_id);
}

Result<void> ValidateMemoryPath(const std::string& path) {
  SRT_ASSIGN_OR_RETURN(auto segments, CleanSegments("memory path", path, kMemoryMaxPathBytes));
  // Nor below it: a directory of that name would keep the marker from being written.
  if (segments[0] == kMemoryMarkerFile) {
    return MakeError(Errc::kInvalidArgument,
                     "memory path " + strings::Quote(path) + ": the store's marker file");
  }
  return Ok();
}

std::string Sha256Hex(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 0xf];
  }
  return out;
}

Result<FetchReport> FetchMemoryStore(MemoryApi& api, const std::string& store_id, int dir_fd) {
  SRT_ASSIGN_OR_RETURN(std::vector<Memory> memories, api.List(store_id));
  FetchReport report;
  for (const Memory& m : memories) {
    auto skip = [&](const std::string& why) {
      report.skipped.push_back("memory " + m.id + " at " + strings::QuoteForMessage(m.path) + ": " +
                               why);
    };
    if (auto valid = ValidateMemoryPath(m.path); !valid) {
      skip(valid.error().message());
      continue;
    }
    if (!m.content) return MakeError(Errc::kProtocol, "memory " + m.id + " came without content");
    if (Sha256Hex(*m.content) != m.content_sha256) {
      skip("its content does not hash to its content_sha256");
      continue;
    }
    SRT_ASSIGN_OR_RETURN(auto segments, CleanSegments("memory path", m.path, kMemoryMaxPathBytes));
    auto parent = OpenParentOf(dir_fd, segments, /*create=*/true);
    if (!parent) {
      skip(parent.error().message());  // a file where this one needs a directory
      continue;
    }
    UniqueFd fd(::openat(parent->get(), segments.back().c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd && errno == EEXIST) {
      skip("another memory is there");
      continue;
    }
    if (!fd) return SysError("create the memory file for " + strings::Quote(m.path));
    SRT_RETURN_IF_ERROR(
        sys::WriteAll(fd.get(), *m.content, "the memory file for " + strings::Quote(m.path)));
    report.baseline.by_path[m.path] = {m.id, m.content_sha256};
    ++report.baseline.fetched;
    ++report.written;
  }
  UniqueFd marker(::openat(dir_fd, kMemoryMarkerFile,
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444));
  if (!marker) return SysError(std::string("create the marker file ") + kMemoryMarkerFile);
  SRT_RETURN_IF_ERROR(sys::WriteAll(marker.get(), "version 1\n" + store_id, kMemoryMarkerFile));
  return report;
}

void SkipNotes::Add(std::string note) {
  ++count;
  if (first.size() < kFirst) first.push_back(std::move(note));
}

size_t MemoryDeleteCap(size_t memories) {
  return std::max<size_t>(8, std::min<size_t>(50, memories / 4));
}

Result<SyncReport> SyncMemoryStore(MemoryApi& api, const std::string& store_id, int dir_fd,
                                   MemoryBaseline& baseline, MemorySync mode,
                                   std::chrono::steady_clock::time_point deadline) {
  LocalState local(baseline);
  SRT_RETURN_IF_ERROR(Walk(dir_fd, "", 0, local));
  SyncReport report;
  report.skipped = std::move(local.skipped);
  auto late = [&] {
    if (std::chrono::steady_clock::now() < deadline) return false;
    report.out_of_time = true;
    return true;
  };
  for (const auto& [path, sha] : local.sha_by_path) {
    auto base = baseline.by_path.find(path);
    if (base != baseline.by_path.end() && base->second.sha256 == sha) continue;
    if (base != baseline.by_path.end() && base->second.id.empty()) continue;  // the server's
    if (late()) return report;
    std::string why;
    SRT_ASSIGN_OR_RETURN(std::optional<std::string> content, Reread(dir_fd, path, sha, &why));
    if (!content) {
      report.skipped.Add(Quoted(path) + ": " + why);
      continue;
    }
    const bool create = base == baseline.by_path.end();
    Result<MemoryApi::Written> w =
        create ? api.Create(store_id, path, *content)
               : api.Update(store_id, base->second.id, *content, base->second.sha256);
    if (!w) return std::move(w).error();
    if (w->outcome == MemoryApi::Write::kRefused) {
      report.skipped.Add(Quoted(path) + ": refused by the server: " + w->why);
      continue;
    }
    MemoryBaseline::Entry& entry = baseline.by_path[path];
    if (w->outcome == MemoryApi::Write::kDone) {
      ++(create ? report.created : report.updated);
      entry = {w->id, sha};
    } else {
      // The server's version wins, and stays the server's for this item: no more writes of
      // this path (a later sync would meet the same conflict), and never a delete.
      ++report.conflicts;
      entry = {"", sha};
    }
  }
  if (mode == MemorySync::kPeriodic) return report;
  report.incomplete_walk = local.incomplete;
  if (local.incomplete) return report;
  // Of what was fetched: memories the agent made since do not raise it.
  const size_t cap = MemoryDeleteCap(baseline.fetched);
  size_t deletes = 0;
  for (auto it = baseline.by_path.begin(); it != baseline.by_path.end();) {
    const auto& [path, entry] = *it;
    // There (as a memory, written by this sync maybe, or as something else), or the server's:
    // kept.
    if (local.sha_by_path.count(path) != 0 || local.present.count(path) != 0 || entry.id.empty()) {
      ++it;
      continue;
    }
    if (deletes == cap) {
      report.skipped.Add(Quoted(path) + ": not deleted, past the " + std::to_string(cap) +
                         " deletes of one sync");
      ++it;
      continue;
    }
    if (late()) return report;
    ++deletes;
    SRT_ASSIGN_OR_RETURN(MemoryApi::Write w, api.Delete(store_id, entry.id, entry.sha256));
    ++(w == MemoryApi::Write::kDone ? report.deleted : report.conflicts);  // kRefused: no delete
    it = baseline.by_path.erase(it);
  }
  return report;
}

}  // namespace srt::poller
