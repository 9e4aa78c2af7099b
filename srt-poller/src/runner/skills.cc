// SPDX-License-Identifier: Apache-2.0
// runner/skills.cc: skill archives (libarchive, openat-based extraction) and skill setup.
#include "runner/skills.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "base/strings.h"
#include "base/unique_fd.h"
#include "runner/hostile_tree.h"
#include "sys/fd.h"

namespace srt::poller {
namespace {

constexpr size_t kNameMax = 255;

// Prepends context to a failed Result<void>.
Result<void> Context(Result<void> r, std::string_view context) {
  if (r) {
    return r;
  }
  return std::move(r).error().Wrap(context);
}

enum class MemberKind { kDir, kFile, kLink, kSpecial };

struct Member {
  std::string raw;
  std::vector<std::string> segments;
  MemberKind kind;
};

// Splits a member name into components, refusing anything that could leave the destination.
// "" and "." components are dropped, so "./pdf/x" reads as "pdf/x" (tar -C dir .).
Result<std::vector<std::string>> MemberSegments(std::string_view raw, const ArchiveLimits& lim) {
  auto refuse = [&](const std::string& why) {
    return MakeError(Errc::kDenied, "refusing archive member " + strings::Quote(raw) + ": " + why);
  };
  if (raw.size() > lim.max_path_length) {
    return refuse("path longer than " + std::to_string(lim.max_path_length) + " bytes");
  }
  if (!raw.empty() && raw.front() == '/') {
    return refuse("absolute path");
  }
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= raw.size()) {
    size_t end = raw.find('/', start);
    if (end == std::string_view::npos) {
      end = raw.size();
    }
    std::string_view seg = raw.substr(start, end - start);
    if (seg == "..") {
      return refuse("'..' component");
    }
    if (seg.size() > kNameMax) {
      return refuse("component longer than " + std::to_string(kNameMax) + " bytes");
    }
    if (!seg.empty() && seg != ".") {
      out.emplace_back(seg);
    }
    start = end + 1;
  }
  return out;
}

// Go's archiveTopDir: the one first component every member shares, provided at least one
// member is nested below it; else "".
std::string TopDir(const std::vector<Member>& members) {
  std::string top;
  bool seen = false;
  bool nested = false;
  for (const Member& m : members) {
    if (m.segments.empty() || m.kind == MemberKind::kLink || m.kind == MemberKind::kSpecial) {
      continue;
    }
    if (!seen) {
      top = m.segments.front();
      seen = true;
    } else if (m.segments.front() != top) {
      return "";
    }
    if (m.segments.size() > 1) {
      nested = true;
    }
  }
  return seen && nested ? top : "";
}

struct ArchiveDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveDeleter>;

Result<ArchivePtr> OpenArchive(std::string_view bytes) {
  ArchivePtr a(archive_read_new());
  if (!a) {
    return MakeError(Errc::kSystem, "archive_read_new failed");
  }
  // Only the formats skills come in: a smaller parser surface than archive_read_support_*_all.
  archive_read_support_format_zip(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_bzip2(a.get());
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    return MakeError(Errc::kInvalidArgument,
                     std::string("skill archive: ") + archive_error_string(a.get()));
  }
  return a;
}

// Next header, or nullptr at the end.
Result<archive_entry*> NextHeader(archive* a) {
  archive_entry* entry = nullptr;
  int r = archive_read_next_header(a, &entry);
  if (r == ARCHIVE_EOF) {
    return static_cast<archive_entry*>(nullptr);
  }
  if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
    const char* msg = archive_error_string(a);
    return MakeError(Errc::kInvalidArgument,
                     std::string("skill archive: ") + (msg != nullptr ? msg : "unreadable"));
  }
  return entry;
}

Result<Member> DescribeMember(archive_entry* entry, const ArchiveLimits& limits) {
  const char* name = archive_entry_pathname(entry);
  if (name == nullptr) {
    name = archive_entry_pathname_utf8(entry);
  }
  if (name == nullptr) {
    return MakeError(Errc::kInvalidArgument, "skill archive: a member has no usable name");
  }
  Member m;
  m.raw = name;
  SRT_ASSIGN_OR_RETURN(m.segments, MemberSegments(m.raw, limits));
  if (archive_entry_hardlink(entry) != nullptr) {
    m.kind = MemberKind::kLink;
  } else {
    switch (archive_entry_filetype(entry)) {
      case AE_IFREG:
        m.kind = MemberKind::kFile;
        break;
      case AE_IFDIR:
        m.kind = MemberKind::kDir;
        break;
      case AE_IFLNK:
        m.kind = MemberKind::kLink;
        break;
      default:
        m.kind = MemberKind::kSpecial;
        break;
    }
  }
  return m;
}

std::string TooBig(const ArchiveLimits& limits) {
  return "skill archive exceeds " + std::to_string(limits.max_total_bytes) + " bytes decompressed";
}

// Creates (or opens) every directory of `segments` below root; returns the last one.
Result<UniqueFd> WalkDirs(int root_fd, const std::vector<std::string>& segments, size_t count,
                          const std::string& raw) {
  UniqueFd cur(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
  if (!cur) {
    return SysError("dup");
  }
  for (size_t i = 0; i < count; ++i) {
    auto next = OpenDirAt(cur.get(), segments[i], /*create=*/true);
    if (!next) {
      return std::move(next).error().Wrap("archive member " + strings::Quote(raw));
    }
    cur = std::move(*next);
  }
  return cur;
}

// Extracts into the (empty) directory root_fd.
Result<ExtractStats> ExtractInto(int root_fd, std::string_view bytes, const ArchiveLimits& limits) {
  ExtractStats stats;
  // Pass 1: headers only. Validates every name and bounds members and declared sizes before
  // anything is written, and finds the wrapper directory to strip.
  std::vector<Member> members;
  {
    SRT_ASSIGN_OR_RETURN(ArchivePtr a, OpenArchive(bytes));
    uint64_t declared = 0;
    for (;;) {
      SRT_ASSIGN_OR_RETURN(archive_entry * entry, NextHeader(a.get()));
      if (entry == nullptr) {
        break;
      }
      if (members.size() >= limits.max_members) {
        return MakeError(
            Errc::kInvalidArgument,
            "skill archive exceeds " + std::to_string(limits.max_members) + " members");
      }
      SRT_ASSIGN_OR_RETURN(Member m, DescribeMember(entry, limits));
      if (m.kind == MemberKind::kFile && archive_entry_size_is_set(entry)) {
        int64_t size = archive_entry_size(entry);
        declared += size > 0 ? static_cast<uint64_t>(size) : 0;
        if (declared > limits.max_total_bytes) {
          return MakeError(Errc::kInvalidArgument, TooBig(limits));
        }
      }
      members.push_back(std::move(m));
      // Reading the next header skips this member's data.
    }
  }
  stats.stripped_top_dir = TopDir(members);

  // Pass 2: extract. The archive is in memory, so it reads back identically.
  SRT_ASSIGN_OR_RETURN(ArchivePtr a, OpenArchive(bytes));
  uint64_t remaining = limits.max_total_bytes;
  std::vector<char> buf(size_t{64} * 1024);
  for (size_t index = 0;; ++index) {
    SRT_ASSIGN_OR_RETURN(archive_entry * entry, NextHeader(a.get()));
    if (entry == nullptr) {
      break;
    }
    if (index >= members.size()) {
      return MakeError(Errc::kInvalidArgument, "skill archive: changed between passes");
    }
    SRT_ASSIGN_OR_RETURN(Member m, DescribeMember(entry, limits));
    if (m.kind == MemberKind::kLink) {
      ++stats.skipped_links;  // never created: a link could point anywhere
      continue;
    }
    if (m.kind == MemberKind::kSpecial) {
      ++stats.skipped_special;
      continue;
    }
    std::vector<std::string> segs = m.segments;
    if (!stats.stripped_top_dir.empty() && !segs.empty() &&
        segs.front() == stats.stripped_top_dir) {
      segs.erase(segs.begin());
    }
    if (segs.empty()) {
      continue;  // the wrapper directory itself, or "./"
    }
    if (m.kind == MemberKind::kDir) {
      SRT_ASSIGN_OR_RETURN(UniqueFd dir, WalkDirs(root_fd, segs, segs.size(), m.raw));
      ++stats.directories;
      continue;
    }
    SRT_ASSIGN_OR_RETURN(UniqueFd parent, WalkDirs(root_fd, segs, segs.size() - 1, m.raw));
    // Only the execute bits survive: 0755 or 0644, never setuid/setgid/sticky (Go parity).
    mode_t mode = (archive_entry_mode(entry) & 0111) != 0 ? 0755 : 0644;
    // The sandbox runs while skills are extracted, so anything may be at this name by now. Only
    // a file this call creates is written: O_EXCL fails on whatever is there (a symlink, a
    // file of the agent's, a FIFO, whose open for writing would wait for a reader forever), and
    // O_NONBLOCK keeps any open from waiting.
    UniqueFd out(::openat(parent.get(), segs.back().c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
    if (!out) {
      return SysError("create archive member " + strings::Quote(m.raw));
    }
    if (::fchmod(out.get(), mode) != 0) {  // exact mode, whatever the umask
      return SysError("chmod archive member " + strings::Quote(m.raw));
    }
    for (;;) {
      la_ssize_t n = archive_read_data(a.get(), buf.data(), buf.size());
      if (n < 0) {
        return MakeError(Errc::kInvalidArgument, "skill archive: member " + strings::Quote(m.raw) +
                                                     ": " + archive_error_string(a.get()));
      }
      if (n == 0) {
        break;
      }
      auto len = static_cast<uint64_t>(n);
      if (len > remaining) {
        return MakeError(Errc::kInvalidArgument, TooBig(limits));
      }
      remaining -= len;
      stats.bytes += len;
      SRT_RETURN_IF_ERROR(Context(
          sys::WriteAll(out.get(), std::string_view(buf.data(), static_cast<size_t>(n)), "write"),
          "archive member " + strings::Quote(m.raw)));
    }
    ++stats.files;
  }
  return stats;
}

bool IsNumeric(std::string_view s) {
  if (s.empty()) {
    return false;
  }
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  return true;
}

std::string_view StripLeadingZeros(std::string_view s) {
  size_t i = s.find_first_not_of('0');
  return i == std::string_view::npos ? std::string_view("0") : s.substr(i);
}

bool NumericGreater(std::string_view a, std::string_view b) {
  a = StripLeadingZeros(a);
  b = StripLeadingZeros(b);
  if (a.size() != b.size()) {
    return a.size() > b.size();
  }
  return a > b;
}

// Splits "/a/b/c" into the parent path and the last component; trailing slashes ignored.
std::pair<std::string, std::string> SplitLast(std::string path) {
  while (path.size() > 1 && path.back() == '/') {
    path.pop_back();
  }
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    return {".", path};
  }
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

Result<void> MakeParents(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      std::string prefix = path.substr(0, i);
      if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
        return SysError("mkdir " + strings::Quote(prefix));
      }
    }
  }
  return Ok();
}

}  // namespace

Result<ExtractStats> ExtractSkillArchive(std::string_view bytes, const std::string& dest_dir,
                                         const ArchiveLimits& limits) {
  auto [parent, base] = SplitLast(dest_dir);
  if (base.empty() || base == "." || base == ".." || base == "/") {
    return MakeError(Errc::kInvalidArgument,
                     "extract skill: bad destination " + strings::Quote(dest_dir));
  }
  SRT_RETURN_IF_ERROR(MakeParents(parent));
  UniqueFd parent_fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd) {
    return SysError("open " + strings::Quote(parent));
  }
  auto root = OpenDirAt(parent_fd.get(), base, /*create=*/true);
  if (!root) {
    return std::move(root).error().Wrap("extract skill into " + strings::Quote(dest_dir));
  }
  Result<ExtractStats> stats = ExtractInto(root->get(), bytes, limits);
  if (!stats) {
    // The destination is a complete extraction or absent (Go parity).
    (void)RemoveTreeAt(parent_fd.get(), base);
    return std::move(stats).error().Wrap("extract skill into " + strings::Quote(dest_dir));
  }
  return stats;
}

Result<std::string> ResolveSkillVersion(const std::string& skill_id, const std::string& version,
                                        const std::vector<std::string>& available) {
  if (IsNumeric(version)) {
    return version;
  }
  std::string newest;
  for (const std::string& v : available) {
    if (IsNumeric(v) && (newest.empty() || NumericGreater(v, newest))) {
      newest = v;
    }
  }
  if (newest.empty()) {
    return MakeError(Errc::kNotFound, "skill " + strings::Quote(skill_id) +
                                          " has no concrete version to resolve " +
                                          strings::Quote(version) + " against");
  }
  return newest;
}

Result<std::string> SkillDirName(const std::string& name, const std::string& skill_id) {
  size_t b = name.find_first_not_of(" \t\r\n\v\f");
  size_t e = name.find_last_not_of(" \t\r\n\v\f");
  std::string dir = b == std::string::npos ? "" : name.substr(b, e - b + 1);
  while (dir.size() > 1 && dir.back() == '/') {
    dir.pop_back();
  }
  if (size_t slash = dir.rfind('/'); slash != std::string::npos && dir != "/") {
    dir = dir.substr(slash + 1);
  }
  if (dir.empty() || dir == "." || dir == ".." || dir.find_first_of("/\\") != std::string::npos) {
    dir = skill_id;
  }
  if (dir.empty() || dir == "." || dir == ".." || dir.find('/') != std::string::npos ||
      dir.find('\0') != std::string::npos || dir.size() > kNameMax) {
    return MakeError(Errc::kInvalidArgument, "skill name " + strings::Quote(name) + " (id " +
                                                 strings::Quote(skill_id) +
                                                 ") is not a safe directory name");
  }
  return dir;
}

Result<std::vector<SkillOutcome>> SetupSkills(SkillsApi& api, const std::vector<SkillRef>& skills,
                                              const std::string& workspace_dir,
                                              const ArchiveLimits& limits) {
  UniqueFd ws(::open(workspace_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!ws) {
    return SysError("open workspace " + strings::Quote(workspace_dir));
  }
  auto skills_dir = OpenDirAt(ws.get(), "skills", /*create=*/true);
  if (!skills_dir) {
    // Something that is not a directory (a symlink the sandbox planted?): remove it itself.
    SRT_RETURN_IF_ERROR(RemoveTreeAt(ws.get(), "skills"));
    skills_dir = OpenDirAt(ws.get(), "skills", /*create=*/true);
    if (!skills_dir) {
      return std::move(skills_dir).error().Wrap("skills dir in " + strings::Quote(workspace_dir));
    }
  }
  const std::string root = workspace_dir + "/skills";
  std::vector<SkillOutcome> outcomes;
  for (const SkillRef& ref : skills) {
    SkillOutcome o;
    o.skill_id = ref.skill_id;
    o.requested_version = ref.version;
    auto step = [&]() -> Result<void> {
      std::string version = ref.version;
      if (!IsNumeric(version)) {
        auto versions = api.ListVersions(ref.skill_id);
        if (!versions) {
          return std::move(versions).error().Wrap("list skill versions");
        }
        SRT_ASSIGN_OR_RETURN(version, ResolveSkillVersion(ref.skill_id, version, *versions));
      }
      o.resolved_version = version;
      auto name = api.GetVersionName(ref.skill_id, version);
      if (!name) {
        return std::move(name).error().Wrap("retrieve skill version");
      }
      SRT_ASSIGN_OR_RETURN(std::string dir, SkillDirName(*name, ref.skill_id));
      o.directory = root + "/" + dir;
      auto bytes = api.Download(ref.skill_id, version);
      if (!bytes) {
        return std::move(bytes).error().Wrap("download skill");
      }
      SRT_RETURN_IF_ERROR(
          Context(RemoveTreeAt(skills_dir->get(), dir), "clear " + strings::Quote(o.directory)));
      auto dest = OpenDirAt(skills_dir->get(), dir, /*create=*/true);
      if (!dest) {
        return std::move(dest).error().Wrap("create " + strings::Quote(o.directory));
      }
      Result<ExtractStats> stats = ExtractInto(dest->get(), *bytes, limits);
      if (!stats) {
        (void)RemoveTreeAt(skills_dir->get(), dir);
        return std::move(stats).error().Wrap("extract skill");
      }
      o.stats = *stats;
      return Ok();
    };
    Result<void> r = step();
    o.ok = r.has_value();
    if (!r) {
      o.error = r.error().message();
    }
    outcomes.push_back(std::move(o));
  }
  return outcomes;
}

Result<void> CleanupSkills(const std::string& workspace_dir) {
  UniqueFd ws(::open(workspace_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!ws) {
    if (errno == ENOENT) {
      return Ok();
    }
    return SysError("open workspace " + strings::Quote(workspace_dir));
  }
  return Context(RemoveTreeAt(ws.get(), "skills"),
                 "remove skills in " + strings::Quote(workspace_dir));
}

}  // namespace srt::poller
