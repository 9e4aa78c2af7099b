// SPDX-License-Identifier: Apache-2.0
// poller/workspace_disk: a session's workspace as a filesystem of its own, of a fixed size
// (--disk), so that one session that fills its workspace cannot take the space of another.
//
// Each session's workspace lives in an ext4 image, <sessions>/.disks/<session_id>.ext4, made at
// the session's first item and kept with the workspace. For each item the image is reserved in
// full on the sessions filesystem (fallocate: a full host disk refuses the item, not a write of
// another session later), attached to a loop device and mounted nosuid,nodev at
// <sessions>/<session_id>, which the sandbox binds at /workspace. When the item ends the unused
// blocks are given back (FITRIM punches them out of the image) and the filesystem is unmounted,
// so an idle workspace takes only the space its files use.
//
// The image is written only through the kernel's ext4 driver: the sandbox sees the mounted
// filesystem, never the image file (the sessions directory is hidden from every sandbox).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "srt/result.h"

namespace srt::poller {

// <sessions>/.disks/<session_id>.ext4
std::string WorkspaceImagePath(const std::string& sessions_dir, const std::string& session_id);

// <sessions>/.disks/.spare.ext4: an image made ahead of time (SpareImageMaker), which the next
// session without an image of its own takes by a rename, so that mkfs.ext4 is not on the path
// of its start. No session id starts with '.', so it is no session's image.
std::string SpareImagePath(const std::string& sessions_dir);

// A mounted workspace filesystem. The destructor gives its unused blocks back and unmounts it.
class MountedWorkspace {
 public:
  ~MountedWorkspace();
  MountedWorkspace(const MountedWorkspace&) = delete;
  MountedWorkspace& operator=(const MountedWorkspace&) = delete;

  // Trims and unmounts now. An error says what is left (a lazily detached mount whose last
  // user is still exiting); the mount point is unmounted either way.
  [[nodiscard]] Result<void> Release();
  const std::string& mount_point() const { return mount_point_; }
  uint64_t bytes() const { return bytes_; }
  // The image was the spare (MountWorkspace's `spare`), which is gone now.
  bool took_spare() const { return took_spare_; }

 private:
  friend Result<std::unique_ptr<MountedWorkspace>> MountWorkspace(const std::string&,
                                                                  const std::string&, uint64_t,
                                                                  const std::string&);
  MountedWorkspace(std::string mount_point, uint64_t bytes, bool took_spare)
      : mount_point_(std::move(mount_point)), bytes_(bytes), took_spare_(took_spare) {}
  std::string mount_point_;  // empty once released
  uint64_t bytes_;
  bool took_spare_;
};

// Mounts the workspace image at `mount_point` (an existing, empty directory of srt-poller's),
// making the image of `bytes` first if there is none: the image at `spare` (in the same
// directory) when there is one of that size, else a new one. An image made earlier keeps its
// size. Refuses, naming the path: a mount point that is already a mount or holds files (a
// workspace from before --disk), an image that is still attached to a loop device (an earlier
// item's processes still hold it), and a sessions filesystem without room for the reservation.
[[nodiscard]] Result<std::unique_ptr<MountedWorkspace>> MountWorkspace(
    const std::string& image, const std::string& mount_point, uint64_t bytes,
    const std::string& spare = "");

// Keeps a spare image of `bytes` at SpareImagePath(sessions_dir), on a thread of its own: it
// makes one at once (unless one of that size is there; one of another size, an earlier run's
// with another --disk, is replaced) and another `delay` after each time Replenish() says the
// spare was taken (so that mkfs.ext4 does not compete with the start of the session that took
// it; a new session meanwhile makes its own image). A spare costs the host what an empty
// workspace's image does (its metadata; it is sparse and reserves nothing). Failures go to
// `on_error`, and the sessions make their own.
class SpareImageMaker {
 public:
  static constexpr std::chrono::milliseconds kReplenishDelay{1000};
  SpareImageMaker(std::string sessions_dir, uint64_t bytes,
                  std::function<void(const Error&)> on_error,
                  std::chrono::milliseconds delay = kReplenishDelay);
  // Stops the thread, after the image it is making, if any.
  ~SpareImageMaker();
  SpareImageMaker(const SpareImageMaker&) = delete;
  SpareImageMaker& operator=(const SpareImageMaker&) = delete;

  // A session took the spare: make the next one. Thread-safe.
  void Replenish();

 private:
  void Loop();

  const std::string sessions_dir_;
  const uint64_t bytes_;
  const std::function<void(const Error&)> on_error_;
  const std::chrono::milliseconds delay_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool wanted_ = true;    // guarded by mu_
  bool delayed_ = false;  // guarded by mu_: wait delay_ before making it
  bool stopped_ = false;  // guarded by mu_
  std::thread thread_;    // last: it starts once the rest exists
};

// Moves this process into a mount namespace of its own, a slave of the host's: the host's
// mounts still reach it, its workspace mounts reach nothing else. Without it, any mount
// namespace created on the host while a workspace is mounted (a service's, an `unshare -m`)
// keeps a copy of that mount alive, and with it the loop device: the workspace's next item
// would have to be refused (two mounts of one image corrupt it). `sessions_dir` becomes a
// shared mount there, so that unmounts reach the sandboxes' copies too. It also means the kernel
// unmounts everything when srt-poller dies, however it dies. Must run before any thread
// starts (unshare(CLONE_NEWNS) refuses a multi-threaded process); needs CAP_SYS_ADMIN.
[[nodiscard]] Result<void> IsolateWorkspaceMounts(const std::string& sessions_dir);

// Unmounts every filesystem mounted directly below `sessions_dir` (a killed srt-poller's
// workspaces) and returns their mount points. Only for the holder of the sessions lock.
[[nodiscard]] Result<std::vector<std::string>> UnmountLeftoverWorkspaces(
    const std::string& sessions_dir);

}  // namespace srt::poller
