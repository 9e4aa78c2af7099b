// SPDX-License-Identifier: Apache-2.0
// poller/session_memory: the memory stores of one work item, on the host.
//
// Each store is fetched into <sessions>/.memory/<session_id>/<n>, a directory of srt-poller's
// (the sessions directory is hidden from every sandbox), and bound at the store's mount path in
// the sandbox: writable for read_write, read-only for read_only. A mount path must not exist
// when the item starts (the official workers refuse the item then); one below the workspace gets
// an empty directory there to mount on, removed again at the end, so no stale store is carried
// into the session's next item. After the sandbox has ended, Sync() writes the read_write stores
// back; the destructor removes the directories.
//
// With --disk the directories are a tmpfs of the session's, sized for full stores (what the
// agent writes there is charged to its memory cgroup, like /tmp): the sessions filesystem is
// every session's, and one must not fill it through a store.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/work.h"
#include "runner/memory_stores.h"
#include "srt/result.h"
#include "srt/sandbox.h"

namespace srt::poller {

// What a sync of one store did, for the log.
struct MemoryStoreSync {
  std::string store_id;
  Result<SyncReport> report;
};

class SessionMemory {
 public:
  // Places and fetches every store. Fails, naming the store, when one cannot be placed (its
  // mount path exists, is not clean, overlaps another's) or fetched: the item then fails.
  // `workspace` is the host directory bound at `workdir` in the sandbox. With `tmpfs_bytes`,
  // the stores' directories are on a tmpfs of that size (mounted in srt-poller's own mount
  // namespace), not on the sessions filesystem that every session shares.
  [[nodiscard]] static Result<std::unique_ptr<SessionMemory>> Mount(
      MemoryApi& api, const std::vector<MemoryStoreRef>& stores, const std::string& sessions_dir,
      const std::string& session_id, const std::string& workspace, const std::string& workdir,
      uint64_t tmpfs_bytes);
  ~SessionMemory();
  SessionMemory(const SessionMemory&) = delete;
  SessionMemory& operator=(const SessionMemory&) = delete;

  // The sandbox's binds, one per store.
  const std::vector<BindMount>& binds() const { return binds_; }

  // Writes back every read_write store, all of them by `deadline` (MemorySync says what a
  // sync of a running session leaves for the end). Thread-safe: one sync at a time.
  std::vector<MemoryStoreSync> Sync(MemoryApi& api, MemorySync mode,
                                    std::chrono::steady_clock::time_point deadline);
  // kPeriodic syncs every `interval` on a thread of its own, each bounded by the interval,
  // until StopPeriodic() (or the destructor); `report` gets each sync's outcome. `api` must
  // outlive StopPeriodic(); cancelling its calls is the caller's (StopPeriodic waits for the
  // call in flight).
  void StartPeriodic(MemoryApi& api, std::chrono::milliseconds interval,
                     std::function<void(const std::vector<MemoryStoreSync>&)> report);
  void StopPeriodic();

  // Fetch notes (memories skipped), one line each, for the log.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  struct Store {
    MemoryStoreRef ref;
    std::string dir;  // on the host
    MemoryBaseline baseline;
  };
  SessionMemory(std::string root, std::string workspace, std::string workdir)
      : root_(std::move(root)), workspace_(std::move(workspace)), workdir_(std::move(workdir)) {}
  [[nodiscard]] Result<void> Place(const std::string& mount_path);
  void RemoveMountPoints();

  std::string root_;    // <sessions>/.memory/<session_id>
  bool tmpfs_ = false;  // a tmpfs is mounted at root_
  std::string workspace_;
  std::string workdir_;
  std::vector<Store> stores_;
  std::vector<BindMount> binds_;
  std::vector<std::string> workspace_mount_points_;  // relative to the workspace
  std::vector<std::string> notes_;

  std::mutex sync_mu_;  // one sync at a time: the baselines are theirs
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;  // guarded by stop_mu_
  std::thread periodic_;
};

// Removes <sessions>/.memory, what a killed srt-poller's items left. Only for the holder of the
// sessions lock, before any session starts.
[[nodiscard]] Result<void> RemoveLeftoverMemory(const std::string& sessions_dir);

}  // namespace srt::poller
