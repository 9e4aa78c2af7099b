// SPDX-License-Identifier: Apache-2.0
// poller/session_memory.cc: see session_memory.h.
#include "poller/session_memory.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/strings.h"
#include "base/unique_fd.h"
#include "runner/hostile_tree.h"

namespace srt::poller {
namespace {

constexpr char kMemoryDir[] = ".memory";  // below the sessions directory; no session id has a '.'

std::vector<std::string> Split(const std::string& rel) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= rel.size()) {
    const size_t slash = rel.find('/', start);
    out.push_back(rel.substr(start, slash == std::string::npos ? slash : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

bool Overlap(const std::string& a, const std::string& b) {
  auto below = [](const std::string& x, const std::string& y) {
    return x.size() > y.size() && x.compare(0, y.size(), y) == 0 && x[y.size()] == '/';
  };
  return a == b || below(a, b) || below(b, a);
}

Error Exists(const std::string& path) {
  return MakeError(Errc::kInvalidArgument, "something already exists at the memory store's path " +
                                               strings::Quote(path) +
                                               "; it must not exist when the session starts");
}

Result<UniqueFd> OpenOwnDir(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return SysError("open " + strings::Quote(path));
  return fd;
}

}  // namespace

Result<void> RemoveLeftoverMemory(const std::string& sessions_dir) {
  SRT_ASSIGN_OR_RETURN(UniqueFd sessions, OpenOwnDir(sessions_dir));
  return RemoveTreeAt(sessions.get(), kMemoryDir);
}

Result<std::unique_ptr<SessionMemory>> SessionMemory::Mount(
    MemoryApi& api, const std::vector<MemoryStoreRef>& stores, const std::string& sessions_dir,
    const std::string& session_id, const std::string& workspace, const std::string& workdir,
    uint64_t tmpfs_bytes) {
  std::unique_ptr<SessionMemory> m(
      new SessionMemory(sessions_dir + "/" + kMemoryDir + "/" + session_id, workspace, workdir));
  SRT_ASSIGN_OR_RETURN(UniqueFd sessions, OpenOwnDir(sessions_dir));
  SRT_ASSIGN_OR_RETURN(UniqueFd all, OpenDirAt(sessions.get(), kMemoryDir, /*create=*/true));
  if (::fchmod(all.get(), 0700) != 0) return SysError("chmod " + strings::Quote(kMemoryDir));
  // What an item of this session left when srt-poller was killed: never carried over.
  SRT_RETURN_IF_ERROR(RemoveTreeAt(all.get(), session_id));
  SRT_ASSIGN_OR_RETURN(UniqueFd root, OpenDirAt(all.get(), session_id, /*create=*/true));
  if (tmpfs_bytes != 0) {
    // Through the descriptor: the directory just made, whatever its path names by now.
    const std::string target = "/proc/self/fd/" + std::to_string(root.get());
    const std::string data = "size=" + std::to_string(tmpfs_bytes) +
                             ",nr_inodes=" + std::to_string(stores.size() * 64 * kMaxMemories) +
                             ",mode=0700";
    if (::mount("srt-memory", target.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                data.c_str()) != 0) {
      return SysError("mount a tmpfs for the memory stores at " + strings::Quote(m->root_));
    }
    m->tmpfs_ = true;
    SRT_ASSIGN_OR_RETURN(root, OpenDirAt(all.get(), session_id, /*create=*/false));
  }
  std::vector<std::string> placed;
  for (size_t i = 0; i < stores.size(); ++i) {
    const MemoryStoreRef& ref = stores[i];
    const std::string what = "memory store " + ref.memory_store_id;
    auto path = MemoryMountPath(ref, workdir);
    if (!path) return std::move(path).error();
    for (const std::string& other : placed) {
      if (Overlap(*path, other)) {
        return MakeError(Errc::kInvalidArgument, what + ": its path " + strings::Quote(*path) +
                                                     " overlaps " + strings::Quote(other));
      }
    }
    if (auto r = m->Place(*path); !r) return std::move(r).error().Wrap(what);
    placed.push_back(*path);
    const std::string name = std::to_string(i);
    SRT_ASSIGN_OR_RETURN(UniqueFd dir, OpenDirAt(root.get(), name, /*create=*/true));
    auto fetched = FetchMemoryStore(api, ref.memory_store_id, dir.get());
    if (!fetched) return std::move(fetched).error().Wrap(what);
    for (std::string& note : fetched->skipped) m->notes_.push_back(what + ": " + std::move(note));
    m->stores_.push_back({ref, m->root_ + "/" + name, std::move(fetched->baseline)});
    m->binds_.push_back({m->root_ + "/" + name, *path, /*writable=*/!ref.read_only});
  }
  return m;
}

// A path below the workdir gets an empty directory in the workspace to mount on (libsrt mounts
// nothing new into a write root); one elsewhere must be missing on the host, whose tree the
// sandbox shows.
Result<void> SessionMemory::Place(const std::string& mount_path) {
  if (mount_path == workdir_) return Exists(mount_path);
  if (mount_path.compare(0, workdir_.size() + 1, workdir_ + "/") != 0) {
    struct stat st {};
    if (::lstat(mount_path.c_str(), &st) == 0) return Exists(mount_path);
    if (errno != ENOENT) return SysError("stat " + strings::Quote(mount_path));
    return Ok();
  }
  const std::string rel = mount_path.substr(workdir_.size() + 1);
  const std::vector<std::string> segments = Split(rel);
  SRT_ASSIGN_OR_RETURN(UniqueFd dir, OpenOwnDir(workspace_));
  // The workspace is the agent's: a symlink it planted on the way is refused, never followed.
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    SRT_ASSIGN_OR_RETURN(dir, OpenDirAt(dir.get(), segments[i], /*create=*/true));
  }
  if (::mkdirat(dir.get(), segments.back().c_str(), 0755) != 0) {
    if (errno == EEXIST) return Exists(mount_path);
    return SysError("mkdir " + strings::Quote(mount_path));
  }
  workspace_mount_points_.push_back(rel);
  return Ok();
}

std::vector<MemoryStoreSync> SessionMemory::Sync(MemoryApi& api, MemorySync mode,
                                                 std::chrono::steady_clock::time_point deadline) {
  std::lock_guard lock(sync_mu_);
  std::vector<MemoryStoreSync> out;
  for (Store& s : stores_) {
    if (s.ref.read_only) continue;
    auto dir = OpenOwnDir(s.dir);
    if (!dir) {
      out.push_back({s.ref.memory_store_id, std::move(dir).error()});
      continue;
    }
    out.push_back({s.ref.memory_store_id, SyncMemoryStore(api, s.ref.memory_store_id, dir->get(),
                                                          s.baseline, mode, deadline)});
  }
  return out;
}

void SessionMemory::StartPeriodic(MemoryApi& api, std::chrono::milliseconds interval,
                                  std::function<void(const std::vector<MemoryStoreSync>&)> report) {
  if (periodic_.joinable() || interval.count() <= 0) return;
  periodic_ = std::thread([this, &api, interval, report = std::move(report)] {
    std::unique_lock lock(stop_mu_);
    while (!stop_cv_.wait_for(lock, interval, [this] { return stop_; })) {
      lock.unlock();
      report(Sync(api, MemorySync::kPeriodic, std::chrono::steady_clock::now() + interval));
      lock.lock();
    }
  });
}

void SessionMemory::StopPeriodic() {
  {
    std::lock_guard lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (periodic_.joinable()) periodic_.join();
}

void SessionMemory::RemoveMountPoints() {
  auto ws = OpenOwnDir(workspace_);
  if (!ws) return;
  for (const std::string& rel : workspace_mount_points_) {
    const std::vector<std::string> segments = Split(rel);
    Result<UniqueFd> dir = UniqueFd(::fcntl(ws->get(), F_DUPFD_CLOEXEC, 0));
    for (size_t i = 0; dir && *dir && i + 1 < segments.size(); ++i) {
      dir = OpenDirAt(dir->get(), segments[i], /*create=*/false);
    }
    // Only the empty directory we made: anything else there is the agent's, and stays.
    if (dir && *dir) (void)::unlinkat(dir->get(), segments.back().c_str(), AT_REMOVEDIR);
  }
}

SessionMemory::~SessionMemory() {
  StopPeriodic();
  RemoveMountPoints();
  // Lazily: nothing of the sandbox that used it is left, and nothing else ever held it.
  if (tmpfs_) (void)::umount2(root_.c_str(), UMOUNT_NOFOLLOW | MNT_DETACH);
  const size_t slash = root_.rfind('/');
  auto parent = OpenOwnDir(root_.substr(0, slash));
  if (parent) (void)RemoveTreeAt(parent->get(), root_.substr(slash + 1));
}

}  // namespace srt::poller
