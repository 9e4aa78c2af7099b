// SPDX-License-Identifier: Apache-2.0
// poller/workspace_disk: a session's workspace as a filesystem of its own, of a fixed size
// (--disk), so that one session that fills its workspace cannot take the space of another.
//
// Each session's workspace lives in an ext4 image, <sessions>/.disks/<session_id>.ext4, made at
// the session's first item (or taken, made and mounted ahead, from SpareWorkspaceMaker) and kept
// with the workspace. For each item the image is attached to a loop device and mounted
// nosuid,nodev at <sessions>/<session_id> in the item's own mount namespace
// (EnterItemMountNamespace), which the sandbox binds at /workspace, and reserved in full on the
// sessions filesystem (fallocate: a full host disk refuses the item, not a write of
// another session later). When the item ends the unused blocks are given back (FITRIM punches
// them out of the image) and the filesystem is unmounted, so an idle workspace takes only the
// space its files use.
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

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::poller {

// <sessions>/.disks/<session_id>.ext4
std::string WorkspaceImagePath(const std::string& sessions_dir, const std::string& session_id);

// <sessions>/.disks/.spare.ext4: the image of the spare workspace (SpareWorkspaceMaker), which
// the next session without an image of its own takes by a rename. No session id starts with '.',
// so it is no session's image.
std::string SpareImagePath(const std::string& sessions_dir);

class SpareWorkspaceMaker;
struct SpareWorkspace;

// A mounted workspace filesystem. The destructor gives its unused blocks back and unmounts it.
class MountedWorkspace {
 public:
  ~MountedWorkspace();
  MountedWorkspace(const MountedWorkspace&) = delete;
  MountedWorkspace& operator=(const MountedWorkspace&) = delete;

  // Reserves the whole image on the sessions filesystem (fallocate), so that the session can fill
  // its own workspace and nothing else. Separate from the mount so that it can run beside the
  // sandbox's start; the caller lets no tool run before it has succeeded. Fails, naming the
  // workspace, when the sessions filesystem has no room for it, having given back what the
  // failed attempt took (a failed fallocate keeps its blocks).
  [[nodiscard]] Result<void> Reserve();
  // Trims and unmounts now. An error says what is left (a lazily detached mount whose last
  // user is still exiting); the mount point is unmounted either way.
  [[nodiscard]] Result<void> Release();
  const std::string& mount_point() const { return mount_point_; }
  uint64_t bytes() const { return bytes_; }
  // A new session's workspace, made with MountWorkspace's `spares`: it took the spare (gone
  // now), or there was none to take (none ready, or the last one could not be made). Either way
  // the caller asks for the next one (SpareWorkspaceMaker::Replenish) once its sandbox has
  // started, so that a spare that failed once is tried again.
  bool asks_spare() const { return asks_spare_; }

 private:
  friend Result<std::unique_ptr<MountedWorkspace>> MountWorkspace(const std::string&,
                                                                  const std::string&, uint64_t,
                                                                  SpareWorkspaceMaker*);
  MountedWorkspace(std::string mount_point, uint64_t bytes, bool asks_spare, UniqueFd image)
      : mount_point_(std::move(mount_point)),
        bytes_(bytes),
        asks_spare_(asks_spare),
        image_(std::move(image)) {}
  std::string mount_point_;  // empty once released
  uint64_t bytes_;
  bool asks_spare_;
  UniqueFd image_;  // until Reserve()
};

// Mounts the workspace image at `mount_point` (an existing, empty directory of srt-poller's),
// making the image of `bytes` first if there is none: the spare workspace when `spares` has one
// ready (already made and mounted: it is moved into place), else a new one. An image made
// earlier keeps its size. Reserves nothing (MountedWorkspace::Reserve). Refuses, naming the
// path: a mount point that is already a mount or holds files (a workspace from before --disk),
// and an image that is still attached to a loop device (an earlier item's processes hold it).
[[nodiscard]] Result<std::unique_ptr<MountedWorkspace>> MountWorkspace(
    const std::string& image, const std::string& mount_point, uint64_t bytes,
    SpareWorkspaceMaker* spares = nullptr);

// Keeps one spare workspace of `bytes` ready for the next new session, on a thread of its own at
// nice 10 and the lowest best-effort I/O priority, so that neither mkfs.ext4 nor the mount is on
// the path of a session's start. The spare is a fresh image at SpareImagePath(sessions_dir),
// attached to a loop device and mounted as a *detached* mount (fsmount(2)): it is in no mount
// namespace, so no sandbox's namespace holds it and nothing can reach it until MountWorkspace
// moves it into one session's workspace (move_mount(2), in that item's namespace). It is
// handed out once, after a check that it is still what was made (the image: srt-poller's, mode
// 0600, one link, its size, the inode the loop device is backed by; the mount: ext4 on that loop
// device, an empty root). One that fails the check is thrown away and the session makes its own.
// An image found at the path when a spare is made (an earlier run's) is never taken: it is
// replaced. A spare costs the host what an empty workspace's image does (it is sparse and
// reserves nothing) and a loop device. Failures go to `on_error`, and the sessions make their own.
class SpareWorkspaceMaker {
 public:
  SpareWorkspaceMaker(std::string sessions_dir, uint64_t bytes,
                      std::function<void(const Error&)> on_error);
  // Stops the thread (after the spare it is making, if any), unmounts the spare and removes its
  // image: nothing of it is left behind.
  ~SpareWorkspaceMaker();
  SpareWorkspaceMaker(const SpareWorkspaceMaker&) = delete;
  SpareWorkspaceMaker& operator=(const SpareWorkspaceMaker&) = delete;

  // A session took the spare and has started: make the next one. Thread-safe.
  void Replenish();

 private:
  friend Result<std::unique_ptr<MountedWorkspace>> MountWorkspace(const std::string&,
                                                                  const std::string&, uint64_t,
                                                                  SpareWorkspaceMaker*);
  // The spare, checked, or null when none is ready or it failed its check (then it is thrown
  // away, `on_error` says why and the next is made at once). Each spare is handed out once; the
  // next is made when the taker asks (Replenish), not before. A spare being made is waited for,
  // at most kSpareWait.
  std::unique_ptr<SpareWorkspace> Take();
  void Loop();

  const std::string sessions_dir_;
  const uint64_t bytes_;
  const std::function<void(const Error&)> on_error_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<SpareWorkspace> spare_;  // guarded by mu_
  static constexpr std::chrono::milliseconds kSpareWait{2'000};
  bool wanted_ = true;    // guarded by mu_
  bool making_ = false;   // guarded by mu_
  bool stopped_ = false;  // guarded by mu_
  std::thread thread_;    // last: it starts once the rest exists
};

// Moves this process into a mount namespace of its own, a slave of the host's: the host's
// mounts still reach it, its mounts reach nothing else. Without it, any mount namespace created
// on the host while a workspace is mounted (a service's, an `unshare -m`) keeps a copy of that
// mount alive, and with it the loop device: the workspace's next item would have to be refused
// (two mounts of one image corrupt it). No session's workspace is mounted here (each item's is
// in a namespace of that item's own: EnterItemMountNamespace), nor the probe's
// (EnterProbeMountNamespace). `sessions_dir` becomes a private mount of its own here (a bind onto
// itself), whose propagation each item's namespace sets. It also means the kernel unmounts
// everything when srt-poller dies, however it dies. Must run before any thread starts, so that
// every thread inherits it; needs CAP_SYS_ADMIN.
[[nodiscard]] Result<void> IsolateWorkspaceMounts(const std::string& sessions_dir);

// Moves the calling thread (its filesystem context: root, working directory, umask) into a
// mount namespace of its own, a copy of srt-poller's, for one session's item: its workspace and
// memory stores are mounted there, and its sandbox's namespace is a copy of it. So no other
// session's sandbox holds a copy of them, nor lists them in its mount table (their session
// ids, when each item starts and ends, their loop devices), and no other namespace keeps their
// loop devices attached. `sessions_dir` is a shared mount there, in a peer group of this thread
// alone: the item's unmounts reach its own sandbox's copies (bwrap makes them slaves), nothing
// else. Threads and processes the caller starts afterwards inherit the namespace; it goes with
// the thread and the last of them. Only after IsolateWorkspaceMounts; needs CAP_SYS_ADMIN.
[[nodiscard]] Result<void> EnterItemMountNamespace(const std::string& sessions_dir);

// Moves the calling thread (its filesystem context) into a mount namespace of its own, a copy
// of the caller's whose every mount is a slave: for the health check's probe, which mounts a
// workspace filesystem of its own (--disk) and starts a sandbox on it. Done on srt-poller's
// own namespace, an item thread that entered its namespace while the probe's workspace was
// mounted would keep a copy of that mount, and with it the probe's loop device, until the item
// ended. Nothing mounted there reaches any other namespace; it goes with the thread and the
// processes it starts. Needs CAP_SYS_ADMIN.
[[nodiscard]] Result<void> EnterProbeMountNamespace();

// Unmounts every filesystem mounted directly below `sessions_dir` (a killed srt-poller's
// workspaces) and returns their mount points. Only for the holder of the sessions lock.
[[nodiscard]] Result<std::vector<std::string>> UnmountLeftoverWorkspaces(
    const std::string& sessions_dir);

}  // namespace srt::poller
