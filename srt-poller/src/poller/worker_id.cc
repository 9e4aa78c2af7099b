// SPDX-License-Identifier: Apache-2.0
#include "poller/worker_id.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"
#include "sys/fd.h"

namespace srt::poller {
namespace {

constexpr size_t kMaxWorkerIdBytes = 128;

Error Refused(const std::string& path, const std::string& why) {
  return MakeError(Errc::kInvalidArgument,
                   "worker id file '" + path + "' " + why +
                       ": remove it (a new id is then made) or pass --worker-id");
}

// Reads the id from an open `fd` at `path`, or says why the file is not one.
Result<std::string> ReadId(int fd, const std::string& path) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return SysError("fstat worker id file '" + path + "'");
  if (!S_ISREG(st.st_mode)) return Refused(path, "is not a regular file");
  if (st.st_uid != geteuid()) {
    return Refused(path, "belongs to uid " + std::to_string(st.st_uid) + ", not to this user");
  }
  if ((st.st_mode & 022) != 0) return Refused(path, "is writable by group or others");
  std::string text(kMaxWorkerIdBytes + 2, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("read worker id file '" + path + "'");
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  if (text.ends_with('\n')) text.pop_back();
  if (!IsWorkerId(text)) {
    return Refused(path, "does not hold a worker id (1 to 128 of letters, digits, '_', '-', '.')");
  }
  return text;
}

}  // namespace

bool IsWorkerId(std::string_view s) {
  if (s.empty() || s.size() > kMaxWorkerIdBytes) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Result<std::string> LoadOrCreateWorkerId(const std::string& dir, const std::string& fresh,
                                         bool create) {
  const std::string path = dir + "/" + kWorkerIdFileName;
  // Twice at most: another process may create the file between our open and our create.
  for (int attempt = 0; attempt < 2; ++attempt) {
    // O_NONBLOCK: a FIFO at the name is refused by fstat, not waited on by open.
    UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (fd) return ReadId(fd.get(), path);
    if (errno == ELOOP) return Refused(path, "is a symbolic link");
    if (errno != ENOENT) return SysError("open worker id file '" + path + "'");
    if (!create) return fresh;
    if (!IsWorkerId(fresh)) {
      return MakeError(Errc::kInvalidArgument, "not a worker id: '" + fresh + "'");
    }
    // O_EXCL with O_CREAT never follows a symlink at the name (a dangling one fails EEXIST).
    UniqueFd out(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out) {
      if (errno == EEXIST) continue;  // made meanwhile, or a dangling symlink: read it
      return SysError("create worker id file '" + path + "'");
    }
    if (auto w = sys::WriteAll(out.get(), fresh + "\n", "worker id file '" + path + "'"); !w) {
      return w.error();
    }
    if (fsync(out.get()) != 0) return SysError("fsync worker id file '" + path + "'");
    return fresh;
  }
  return Refused(path, "keeps changing");
}

}  // namespace srt::poller
