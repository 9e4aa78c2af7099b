// SPDX-License-Identifier: Apache-2.0
// read, write and edit: file tools confined to the root (GO-SDK tools/agenttoolset/fs.go).
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "sys/fd.h"
#include "toolbox/limits.h"
#include "toolbox/text.h"
#include "toolbox/tools.h"

namespace srt::poller::toolbox {
namespace {

ToolResult Fail(std::string text) { return {std::move(text), true, false}; }
ToolResult Ok(std::string text) { return {std::move(text), false, false}; }

// "read: <escape>" for a path that leaves the root, "read <path>: <fs error>" otherwise (the Go
// tool's two shapes).
ToolResult PathError(const char* op, const std::string& path, const Error& e) {
  if (e.code() == Errc::kDenied) return Fail(std::string(op) + ": " + e.message());
  return Fail(std::string(op) + " " + path + ": " + e.message());
}

std::string Dirname(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? "" : rel.substr(0, slash);
}
std::string Basename(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

struct Loaded {
  std::string data;
  std::string error;  // set on failure: the whole tool result text
};

// Loads a regular file of at most kMaxFileBytes. `op` is "read" or "edit"; `hint` ends the
// too-large message.
Loaded LoadFile(const ConfinedRoot& root, const std::string& path, const char* op,
                const char* hint) {
  Loaded out;
  auto resolved = root.Resolve(path);
  if (!resolved) {
    out.error = PathError(op, path, resolved.error()).text;
    return out;
  }
  if (!resolved->exists) {
    out.error = std::string(op) + " " + path + ": " + FsErrorMessage(ENOENT);
    return out;
  }
  auto too_big = [&](long long size) {
    return std::string(op) + ": " + path + " is " + std::to_string(size) + " bytes, exceeds " +
           std::to_string(kMaxFileBytes) + "-byte limit. " + hint;
  };
  // Look before opening: a FIFO or a device must not even be opened (open can block or have
  // side effects), and the size cap stops a huge file before it is read.
  struct stat st;
  if (fstat(resolved->fd.get(), &st) != 0) {
    out.error = std::string(op) + " " + path + ": " + FsErrorMessage(errno);
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.error = std::string(op) + ": " + path + " is not a regular file";
    return out;
  }
  if (static_cast<unsigned long long>(st.st_size) > kMaxFileBytes) {
    out.error = too_big(st.st_size);
    return out;
  }
  // O_NONBLOCK: should the file be swapped for a FIFO after the check, open does not block.
  auto fd = root.OpenBeneath(resolved->rel, O_RDONLY | O_NONBLOCK);
  if (!fd) {
    out.error = std::string(op) + " " + path + ": " + fd.error().message();
    return out;
  }
  struct stat again;
  if (fstat(fd->get(), &again) != 0 || !S_ISREG(again.st_mode) || again.st_ino != st.st_ino ||
      again.st_dev != st.st_dev) {
    out.error = std::string(op) + ": " + path + " is not a regular file";
    return out;
  }
  std::string data;
  data.resize(kMaxFileBytes + 1);
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = read(fd->get(), data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.error = std::string(op) + " " + path + ": " + FsErrorMessage(errno);
      return out;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMaxFileBytes) {  // it grew since fstat
    struct stat now;
    out.error = too_big(fstat(fd->get(), &now) == 0 ? now.st_size : static_cast<long long>(got));
    return out;
  }
  data.resize(got);
  out.data = std::move(data);
  return out;
}

// Writes `data` to a temporary file next to `name` in `dir` and renames it over `name`, so a
// reader never sees half a file and a failed write leaves the old one (Go's atomicWriteFile).
// Returns 0 or an errno.
int AtomicWrite(int dir, const std::string& name, std::string_view data) {
  unsigned char rnd[6] = {};
  if (getrandom(rnd, sizeof rnd, 0) < 0) return errno;
  char tmp[32];
  std::snprintf(tmp, sizeof tmp, ".agenttoolset-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
                rnd[3], rnd[4], rnd[5]);
  UniqueFd fd(openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return errno;
  int err = 0;
  if (Result<void> written = sys::WriteAll(fd.get(), data, "write"); !written) {
    err = written.error().sys_errno();
  }
  if (err == 0 && fchmod(fd.get(), 0644) != 0) err = errno;
  int fd_num = fd.release();
  if (close(fd_num) != 0 && err == 0 && errno != EINTR) err = errno;
  if (err == 0 && renameat(dir, tmp, dir, name.c_str()) != 0) err = errno;
  if (err != 0) unlinkat(dir, tmp, 0);
  return err;
}

}  // namespace

Result<std::string> InputString(const nlohmann::json& in, const char* field) {
  auto it = in.find(field);
  if (it == in.end() || it->is_null()) return std::string();
  if (!it->is_string())
    return MakeError(Errc::kInvalidArgument, std::string(field) + " must be a string");
  return it->get<std::string>();
}

Result<bool> InputBool(const nlohmann::json& in, const char* field) {
  auto it = in.find(field);
  if (it == in.end() || it->is_null()) return false;
  if (!it->is_boolean())
    return MakeError(Errc::kInvalidArgument, std::string(field) + " must be a boolean");
  return it->get<bool>();
}

Result<long long> InputInt(const nlohmann::json& in, const char* field) {
  auto it = in.find(field);
  if (it == in.end() || it->is_null()) return 0LL;
  if (!it->is_number_integer()) {
    return MakeError(Errc::kInvalidArgument, std::string(field) + " must be an integer");
  }
  if (it->is_number_unsigned() && it->get<unsigned long long>() > 0x7fffffffffffffffULL) {
    return MakeError(Errc::kInvalidArgument, std::string(field) + " is out of range");
  }
  return it->get<long long>();
}

ToolResult ReadTool(const ConfinedRoot& root, const nlohmann::json& in) {
  auto path = InputString(in, "file_path");
  if (!path) return Fail("invalid read input: " + path.error().message());
  std::vector<long long> range;
  if (auto it = in.find("view_range"); it != in.end() && !it->is_null()) {
    if (!it->is_array()) return Fail("invalid read input: view_range must be an array of integers");
    for (const auto& v : *it) {
      if (!v.is_number_integer() ||
          (v.is_number_unsigned() && v.get<unsigned long long>() > 0x7fffffffffffffffULL)) {
        return Fail("invalid read input: view_range must be an array of integers");
      }
      range.push_back(v.get<long long>());
    }
  }
  if (path->empty()) return Fail("read: file_path is required");
  Loaded file = LoadFile(root, *path, "read", "Use bash (head/tail/sed) to read a slice.");
  if (!file.error.empty()) return Fail(file.error);
  if (range.empty()) return Ok(std::move(file.data));
  if (range.size() != 2) return Fail("read: view_range must be [start_line, end_line]");

  // 1-indexed inclusive lines, split on "\n" exactly as the Go tool does.
  std::vector<std::string_view> lines;
  std::string_view data = file.data;
  size_t i = 0;
  for (;;) {
    size_t j = data.find('\n', i);
    if (j == std::string_view::npos) {
      lines.push_back(data.substr(i));
      break;
    }
    lines.push_back(data.substr(i, j - i));
    i = j + 1;
  }
  long long n = static_cast<long long>(lines.size());
  long long start = std::max(0LL, range[0] - 1);
  if (start >= n) return Ok("");
  long long end = n;
  if (range[1] > 0 && range[1] < end) end = range[1];
  if (end < start) {
    return Fail("read: view_range end line " + std::to_string(range[1]) + " is before start line " +
                std::to_string(range[0]));
  }
  std::string out;
  for (long long k = start; k < end; ++k) {
    if (k > start) out += '\n';
    out.append(lines[static_cast<size_t>(k)]);
  }
  return Ok(std::move(out));
}

ToolResult WriteTool(const ConfinedRoot& root, const nlohmann::json& in) {
  auto path = InputString(in, "file_path");
  if (!path) return Fail("invalid write input: " + path.error().message());
  auto content = InputString(in, "content");
  if (!content) return Fail("invalid write input: " + content.error().message());
  if (path->empty()) return Fail("write: file_path is required");
  if (content->size() > kMaxWriteBytes) {
    return Fail("write " + *path + ": content is " + std::to_string(content->size()) +
                " bytes, exceeds " + std::to_string(kMaxWriteBytes) + "-byte limit");
  }
  auto resolved = root.Resolve(*path);
  if (!resolved) return PathError("write", *path, resolved.error());
  if (resolved->rel.empty()) return Fail("write " + *path + ": " + FsErrorMessage(EISDIR));
  auto dir = root.MakeDirs(Dirname(resolved->rel));
  if (!dir) return Fail("write " + *path + ": mkdir: " + dir.error().message());
  if (int err = AtomicWrite(dir->get(), Basename(resolved->rel), *content); err != 0) {
    return Fail("write " + *path + ": " + FsErrorMessage(err));
  }
  return Ok("wrote " + std::to_string(content->size()) + " bytes to " + *path);
}

ToolResult EditTool(const ConfinedRoot& root, const nlohmann::json& in) {
  auto path = InputString(in, "file_path");
  if (!path) return Fail("invalid edit input: " + path.error().message());
  auto old_s = InputString(in, "old_string");
  if (!old_s) return Fail("invalid edit input: " + old_s.error().message());
  auto new_s = InputString(in, "new_string");
  if (!new_s) return Fail("invalid edit input: " + new_s.error().message());
  auto all = InputBool(in, "replace_all");
  if (!all) return Fail("invalid edit input: " + all.error().message());
  if (path->empty()) return Fail("edit: file_path is required");
  if (old_s->empty()) return Fail("edit: old_string is required");

  Loaded file = LoadFile(root, *path, "edit", "Use bash (sed/awk) to modify a large file.");
  if (!file.error.empty()) return Fail(file.error);
  const std::string& content = file.data;
  // Non-overlapping occurrences, like strings.Count / strings.ReplaceAll.
  size_t count = 0;
  for (size_t pos = content.find(*old_s); pos != std::string::npos;
       pos = content.find(*old_s, pos + old_s->size())) {
    ++count;
  }
  if (count == 0) return Fail("edit: old_string not found in " + *path);
  if (count > 1 && !*all) {
    return Fail("edit: old_string appears " + std::to_string(count) + " times in " + *path +
                " (must be unique)");
  }
  std::string updated;
  updated.reserve(content.size());
  size_t from = 0;
  for (size_t pos = content.find(*old_s); pos != std::string::npos;
       pos = content.find(*old_s, from)) {
    updated.append(content, from, pos - from);
    updated += *new_s;
    from = pos + old_s->size();
    if (!*all) break;
  }
  updated.append(content, from, std::string::npos);
  if (updated.size() > kMaxWriteBytes) {
    return Fail("edit " + *path + ": result exceeds " + std::to_string(kMaxWriteBytes) +
                "-byte limit");
  }

  auto resolved = root.Resolve(*path);
  if (!resolved) return PathError("edit", *path, resolved.error());
  auto dir = root.OpenBeneath(Dirname(resolved->rel), O_PATH | O_DIRECTORY);
  if (!dir) return Fail("edit " + *path + ": " + dir.error().message());
  if (int err = AtomicWrite(dir->get(), Basename(resolved->rel), updated); err != 0) {
    return Fail("edit " + *path + ": " + FsErrorMessage(err));
  }
  return Ok("edited " + *path + " (" + std::to_string(count) + " replacement(s))");
}

}  // namespace srt::poller::toolbox
