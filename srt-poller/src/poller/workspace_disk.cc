// SPDX-License-Identifier: Apache-2.0
// Workspace filesystems: ext4 images on loop devices (see workspace_disk.h).
#include "poller/workspace_disk.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "base/strings.h"
#include "base/unique_fd.h"
#include "poller/mountinfo.h"
#include "sys/fd.h"
#include "sys/spawn.h"

namespace srt::poller {
namespace {

using strings::Quote;

// Reads a small kernel file (sysfs, procfs) whole; empty when it cannot be read.
std::string ReadKernelFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return "";
  std::string out;
  char buf[4096];
  // mountinfo of a busy host is large; nothing below needs more than this.
  constexpr size_t kMax = size_t{16} << 20;
  for (ssize_t n; out.size() < kMax && (n = read(fd.get(), buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      return "";
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

const char* MkfsPath() {
  // Debian's merged /usr has both; an unmerged one only /sbin.
  for (const char* p : {"/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return nullptr;
}

// Runs mkfs.ext4 on `image`; the error carries what it printed (at most 4 KiB).
Result<void> MakeFilesystem(const std::string& image, uint64_t bytes) {
  const char* mkfs = MkfsPath();
  if (mkfs == nullptr) {
    return MakeError(Errc::kSystem,
                     "mkfs.ext4 not found (install e2fsprogs, or run with --disk 0)");
  }
  // A small journal: it is never trimmed, so it is what an idle workspace costs beyond its
  // files. -m 0: the sandbox's root may not dip into a reserve the agent cannot see.
  const uint64_t journal_mib = std::clamp<uint64_t>((bytes >> 20) / 64, 4, 64);
  SRT_ASSIGN_OR_RETURN(auto out, sys::Pipe());
  UniqueFd null(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!null) return SysError("open /dev/null");
  sys::SpawnRequest request;
  request.path = mkfs;
  request.argv = {mkfs,
                  "-q",
                  "-F",
                  "-m",
                  "0",
                  "-J",
                  "size=" + std::to_string(journal_mib),
                  "-E",
                  "nodiscard,lazy_itable_init=1,lazy_journal_init=1",
                  "-L",
                  "srt-workspace",
                  image};
  request.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"};
  request.fds = {{null.get(), 0}, {out.second.get(), 1}, {out.second.get(), 2}};
  SRT_ASSIGN_OR_RETURN(pid_t pid, sys::Spawn(request));
  out.second.reset();
  std::string said;
  char buf[1024];
  for (ssize_t n; (n = read(out.first.get(), buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (said.size() < 4096) said.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    return MakeError(Errc::kSystem, std::string(mkfs) + " " + Quote(image) + " failed" +
                                        (said.empty() ? "" : ": " + said));
  }
  return {};
}

// Makes the image at `image` (via a temporary name, so a crash leaves no half-made image).
Result<void> CreateImage(const std::string& image, uint64_t bytes) {
  const std::string tmp = image + ".new";
  unlink(tmp.c_str());  // an earlier crash's
  {
    UniqueFd fd(open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return SysError("create " + Quote(tmp));
    if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
      Error e = SysError("size " + Quote(tmp));
      unlink(tmp.c_str());
      return e;
    }
  }
  if (auto r = MakeFilesystem(tmp, bytes); !r) {
    unlink(tmp.c_str());
    return r;
  }
  if (rename(tmp.c_str(), image.c_str()) != 0) {
    Error e = SysError("rename " + Quote(tmp));
    unlink(tmp.c_str());
    return e;
  }
  return {};
}

// True when a loop device is backed by `image` (its sysfs backing_file names the path the
// kernel resolved: symbolic links in the sessions directory's path resolved too).
bool AttachedToALoopDevice(const std::string& image) {
  char resolved[PATH_MAX];
  if (realpath(image.c_str(), resolved) == nullptr) return false;
  const std::string real = resolved;
  DIR* d = opendir("/sys/block");
  if (d == nullptr) return false;
  bool found = false;
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, "loop", 4) != 0) continue;
    std::string backing =
        ReadKernelFile(std::string("/sys/block/") + e->d_name + "/loop/backing_file");
    while (!backing.empty() && backing.back() == '\n') backing.pop_back();
    if (backing == real || backing == real + " (deleted)") found = true;
  }
  closedir(d);
  return found;
}

// A free loop device configured on `image_fd` that detaches itself when its last user (the
// mount) goes. Returns its open descriptor and path.
Result<std::pair<UniqueFd, std::string>> AttachLoop(int image_fd, const std::string& image) {
  UniqueFd control(open("/dev/loop-control", O_RDWR | O_CLOEXEC));
  if (!control) return SysError("open /dev/loop-control (--disk needs loop devices)");
  // Another program may take the device between GET_FREE and CONFIGURE: then ask again.
  for (int attempt = 0; attempt < 16; ++attempt) {
    int n = ioctl(control.get(), LOOP_CTL_GET_FREE);
    if (n < 0) return SysError("find a free loop device");
    std::string path = "/dev/loop" + std::to_string(n);
    UniqueFd dev(open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!dev) return SysError("open " + Quote(path));
    loop_config config{};
    config.fd = static_cast<uint32_t>(image_fd);
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), image.c_str(),
                 LO_NAME_SIZE - 1);
    if (ioctl(dev.get(), LOOP_CONFIGURE, &config) == 0) return std::pair(std::move(dev), path);
    if (errno != EBUSY) return SysError("attach " + Quote(image) + " to " + Quote(path));
  }
  return MakeError(Errc::kSystem, "attach " + Quote(image) + ": every free loop device was taken");
}

// Whether `dir` is a mount point: a different device than its parent's, or the same mount
// (the parent's view) - statx's STATX_ATTR_MOUNT_ROOT answers both.
Result<bool> IsMountPoint(const std::string& dir) {
  struct statx st {};
  if (statx(AT_FDCWD, dir.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &st) != 0) {
    return SysError("stat " + Quote(dir));
  }
  if (!(st.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
    return MakeError(Errc::kSystem, "this kernel cannot tell mount points (statx)");
  }
  return (st.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

Result<bool> IsEmptyDir(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return SysError("open " + Quote(dir));
  bool empty = true;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
  }
  closedir(d);
  return empty;
}

// Unmounts `dir`, waiting up to 2 s for the last processes of a sandbox to let go; then lazily.
Result<void> Unmount(const std::string& dir) {
  for (int i = 0; i < 40; ++i) {
    if (umount2(dir.c_str(), UMOUNT_NOFOLLOW) == 0) return {};
    if (errno != EBUSY) return SysError("unmount " + Quote(dir));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (umount2(dir.c_str(), UMOUNT_NOFOLLOW | MNT_DETACH) != 0) {
    return SysError("unmount " + Quote(dir));
  }
  return MakeError(Errc::kSystem, Quote(dir) + " was still in use; detached it lazily");
}

// Gives the blocks no file of the workspace mounted at `dir` uses back to the sessions
// filesystem: ext4 discards them, and the loop device punches them out of the image. A failure
// costs disk space, not safety.
void GiveBackUnusedBlocks(const std::string& dir) {
  UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return;
  // The sync first: ext4 trims only blocks whose freeing its journal has committed, and the
  // session's last deletions are usually younger than the 5 s commit interval.
  (void)syncfs(fd.get());
  fstrim_range range{0, UINT64_MAX, 0};
  (void)ioctl(fd.get(), FITRIM, &range);
}

// The spare's fresh filesystem: a mount fd (fsmount) that no namespace holds.
Result<UniqueFd> MountDetached(const std::string& device) {
  UniqueFd fs(fsopen("ext4", FSOPEN_CLOEXEC));
  if (!fs) return SysError("fsopen ext4 (the spare workspace needs Linux 5.2)");
  if (fsconfig(fs.get(), FSCONFIG_SET_STRING, "source", device.c_str(), 0) != 0 ||
      fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) {
    return SysError("mount " + Quote(device) + " (the spare workspace)");
  }
  UniqueFd mnt(fsmount(fs.get(), FSMOUNT_CLOEXEC,
                       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOATIME));
  if (!mnt) return SysError("mount " + Quote(device) + " (the spare workspace)");
  return mnt;
}

constexpr unsigned long kExt4Magic = 0xEF53;  // EXT4_SUPER_MAGIC, linux/magic.h

}  // namespace

// The spare workspace: its image (at `path` until it is taken), the loop device backed by it and
// the detached mount of the filesystem on that device. Made by SpareWorkspaceMaker's thread;
// moved into one session's workspace by MountWorkspace, after Check().
struct SpareWorkspace {
  std::string path;  // SpareImagePath; empty once the image is a session's
  uint64_t bytes = 0;
  UniqueFd image;  // O_RDWR: the reservation uses it
  UniqueFd loop;
  std::string loop_path;
  UniqueFd mount;

  SpareWorkspace() = default;
  SpareWorkspace(const SpareWorkspace&) = delete;
  SpareWorkspace& operator=(const SpareWorkspace&) = delete;
  // Not taken: the mount goes (the last reference to a detached mount unmounts it), then the
  // loop device (it detaches itself once unused), then the image, if it is still this one.
  ~SpareWorkspace() {
    mount.reset();
    loop.reset();
    if (path.empty() || !image) return;
    struct stat mine {};
    struct stat there {};
    if (fstat(image.get(), &mine) == 0 && lstat(path.c_str(), &there) == 0 &&
        mine.st_dev == there.st_dev && mine.st_ino == there.st_ino) {
      unlink(path.c_str());
    }
  }

  // That it is still what was made: the image srt-poller's regular file, mode 0600, one link,
  // of its size, still at `path`; the loop device backed by exactly that inode; the mount ext4 on
  // that loop device, its root srt-poller's and empty (nothing was ever written there).
  Result<void> Check() const {
    const std::string what = "the spare workspace " + Quote(path);
    struct stat img {};
    struct stat there {};
    if (fstat(image.get(), &img) != 0) return SysError("stat " + Quote(path));
    if (lstat(path.c_str(), &there) != 0) return SysError("stat " + Quote(path));
    if (there.st_dev != img.st_dev || there.st_ino != img.st_ino) {
      return MakeError(Errc::kDenied, what + " was replaced since it was made");
    }
    if (!S_ISREG(img.st_mode) || img.st_uid != geteuid() || (img.st_mode & 07777) != 0600 ||
        img.st_nlink != 1 || static_cast<uint64_t>(img.st_size) != bytes) {
      return MakeError(Errc::kDenied, what +
                                          " is no longer the file that was made (owner, mode, "
                                          "links or size changed)");
    }
    loop_info64 info{};
    if (ioctl(loop.get(), LOOP_GET_STATUS64, &info) != 0) {
      return SysError("read the state of " + Quote(loop_path));
    }
    if (info.lo_inode != img.st_ino || info.lo_device != img.st_dev || info.lo_offset != 0 ||
        info.lo_sizelimit != 0 || (info.lo_flags & LO_FLAGS_AUTOCLEAR) == 0) {
      return MakeError(Errc::kDenied, Quote(loop_path) + " is no longer backed by " + what);
    }
    struct stat dev {};
    struct statfs fs {};
    struct stat root {};
    if (fstat(loop.get(), &dev) != 0 || fstatfs(mount.get(), &fs) != 0 ||
        fstat(mount.get(), &root) != 0) {
      return SysError("stat " + what);
    }
    if (!S_ISBLK(dev.st_mode) || static_cast<unsigned long>(fs.f_type) != kExt4Magic ||
        root.st_dev != dev.st_rdev || !S_ISDIR(root.st_mode) || root.st_uid != geteuid()) {
      return MakeError(Errc::kDenied, what + " is no longer mounted from " + Quote(loop_path));
    }
    UniqueFd dir(openat(mount.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return SysError("open " + what);
    DIR* d = fdopendir(dir.get());
    if (d == nullptr) return SysError("open " + what);
    (void)dir.release();  // closedir closes it
    bool empty = true;
    while (dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
    }
    closedir(d);
    if (!empty) return MakeError(Errc::kDenied, what + " is not empty");
    return {};
  }
};

namespace {

// Makes the spare: a fresh image at SpareImagePath (whatever was there is removed first, never
// taken), its loop device, and the detached mount of its filesystem.
Result<std::unique_ptr<SpareWorkspace>> MakeSpare(const std::string& sessions_dir, uint64_t bytes) {
  auto spare = std::make_unique<SpareWorkspace>();
  const std::string path = SpareImagePath(sessions_dir);
  const std::string disks = sessions_dir + "/.disks";
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return SysError("remove " + Quote(path));
  if (mkdir(disks.c_str(), 0700) != 0 && errno != EEXIST) return SysError("create " + Quote(disks));
  SRT_RETURN_IF_ERROR(CreateImage(path, bytes));
  spare->image.reset(open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  if (!spare->image) {
    Error e = SysError("open " + Quote(path));
    unlink(path.c_str());
    return e;
  }
  // From here on the destructor removes the image when anything fails.
  spare->path = path;
  spare->bytes = bytes;
  SRT_ASSIGN_OR_RETURN(auto loop, AttachLoop(spare->image.get(), path));
  spare->loop = std::move(loop.first);
  spare->loop_path = std::move(loop.second);
  SRT_ASSIGN_OR_RETURN(spare->mount, MountDetached(spare->loop_path));
  // mkfs's lost+found would make the new workspace look used (`git clone URL .` refuses a
  // directory that is not empty); e2fsck makes one again when it needs it.
  if (unlinkat(spare->mount.get(), "lost+found", AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return SysError("remove lost+found from the spare workspace " + Quote(path));
  }
  return spare;
}

// Moves the spare's filesystem into `mount_point` as the workspace whose image is `image`;
// returns the image's descriptor (for the reservation).
Result<UniqueFd> MountSpare(std::unique_ptr<SpareWorkspace> spare, const std::string& image,
                            const std::string& mount_point) {
  // RENAME_NOREPLACE: never over an image that appeared meanwhile.
  if (renameat2(AT_FDCWD, spare->path.c_str(), AT_FDCWD, image.c_str(), RENAME_NOREPLACE) != 0) {
    return SysError("rename the spare workspace " + Quote(spare->path) + " to " + Quote(image));
  }
  const std::string spare_path = std::exchange(spare->path, "");  // the session's image now
  struct stat mine {};
  struct stat there {};
  if (fstat(spare->image.get(), &mine) != 0 || lstat(image.c_str(), &there) != 0 ||
      mine.st_dev != there.st_dev || mine.st_ino != there.st_ino) {
    return MakeError(Errc::kDenied, "the spare workspace " + Quote(spare_path) +
                                        " was replaced while it was renamed to " + Quote(image));
  }
  if (move_mount(spare->mount.get(), "", AT_FDCWD, mount_point.c_str(), MOVE_MOUNT_F_EMPTY_PATH) !=
      0) {
    return SysError("mount the spare workspace (" + Quote(image) + ") at " + Quote(mount_point));
  }
  return std::move(spare->image);
}

}  // namespace

std::string WorkspaceImagePath(const std::string& sessions_dir, const std::string& session_id) {
  return sessions_dir + "/.disks/" + session_id + ".ext4";
}

std::string SpareImagePath(const std::string& sessions_dir) {
  return sessions_dir + "/.disks/.spare.ext4";
}

MountedWorkspace::~MountedWorkspace() {
  // Release() allocates (its messages); a destructor may not throw, so running out of memory
  // here leaves the mount to the namespace's end.
  try {
    (void)Release();
  } catch (...) {  // NOLINT(bugprone-empty-catch): nothing to tell, nowhere to tell it
  }
}

Result<void> MountedWorkspace::Release() {
  if (mount_point_.empty()) return {};
  const std::string dir = std::exchange(mount_point_, "");
  GiveBackUnusedBlocks(dir);
  Result<void> unmounted = Unmount(dir);
  // A mount propagated back from a peer namespace can stack another copy on the same point:
  // none may stay for the next item to mount over.
  for (int i = 0; i < 8; ++i) {
    Result<bool> still = IsMountPoint(dir);
    if (!still || !*still) break;
    if (umount2(dir.c_str(), UMOUNT_NOFOLLOW | MNT_DETACH) != 0) break;
  }
  return unmounted;
}

Result<void> MountedWorkspace::Reserve() {
  if (!image_) return {};
  const UniqueFd image = std::move(image_);
  // The whole image, reserved now: a session can then fill its own workspace, and nothing else.
  // The loop device may write meanwhile (srt-toolbox's start): fallocate leaves data alone.
  if (fallocate(image.get(), 0, 0, static_cast<off_t>(bytes_)) != 0) {
    Error e = SysError("reserve " + std::to_string(bytes_ >> 20) + " MiB for workspace " +
                       Quote(mount_point_) + " on the sessions filesystem");
    // A fallocate that fails keeps every block it got: the sessions filesystem would stay full,
    // for every other writer on it, until the failed item has ended (its sandbox stopped, the
    // API told). The blocks are used by no file of the workspace: give them back now.
    GiveBackUnusedBlocks(mount_point_);
    return e;
  }
  return {};
}

Result<std::unique_ptr<MountedWorkspace>> MountWorkspace(const std::string& image,
                                                         const std::string& mount_point,
                                                         uint64_t bytes,
                                                         SpareWorkspaceMaker* spares) {
  SRT_ASSIGN_OR_RETURN(bool mounted, IsMountPoint(mount_point));
  if (mounted)
    return MakeError(Errc::kSystem, "workspace " + Quote(mount_point) + " is already mounted");
  const std::string disks = image.substr(0, image.rfind('/'));
  if (mkdir(disks.c_str(), 0700) != 0 && errno != EEXIST) return SysError("create " + Quote(disks));
  struct stat st {};
  bool fresh = false;
  bool asks_spare = false;
  if (lstat(image.c_str(), &st) != 0) {
    if (errno != ENOENT) return SysError("stat " + Quote(image));
    SRT_ASSIGN_OR_RETURN(bool empty, IsEmptyDir(mount_point));
    if (!empty) {
      return MakeError(Errc::kSystem, "workspace " + Quote(mount_point) +
                                          " holds files from before --disk: move them away, or "
                                          "run with --disk 0");
    }
    // The spare, already made and mounted: only a rename and a move of its mount are left.
    if (std::unique_ptr<SpareWorkspace> spare = spares ? spares->Take() : nullptr) {
      const uint64_t size = spare->bytes;
      Result<UniqueFd> fd = MountSpare(std::move(spare), image, mount_point);
      if (!fd) {
        spares->Replenish();
        return fd.error();
      }
      return std::unique_ptr<MountedWorkspace>(
          new MountedWorkspace(mount_point, size, /*asks_spare=*/true, std::move(*fd)));
    }
    // No spare to take: this session asks for one too, or a spare that failed once (a moment
    // of ENOSPC) would never be made again.
    asks_spare = spares != nullptr;
    SRT_RETURN_IF_ERROR(CreateImage(image, bytes));
    fresh = true;
  }
  // The kernel detaches an auto-clearing loop device asynchronously after its unmount: an
  // item that follows the last one at once may find it still going.
  for (int i = 0; i < 100 && AttachedToALoopDevice(image); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (AttachedToALoopDevice(image)) {
    return MakeError(Errc::kSystem, "workspace image " + Quote(image) +
                                        " is still attached (an earlier item's processes hold it)");
  }
  UniqueFd fd(open(image.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return SysError("open " + Quote(image));
  if (fstat(fd.get(), &st) != 0) return SysError("stat " + Quote(image));
  if (!S_ISREG(st.st_mode))
    return MakeError(Errc::kSystem, Quote(image) + " is not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  SRT_ASSIGN_OR_RETURN(auto loop, AttachLoop(fd.get(), image));
  if (mount(loop.second.c_str(), mount_point.c_str(), "ext4", MS_NOSUID | MS_NODEV | MS_NOATIME,
            nullptr) != 0) {
    return SysError("mount " + Quote(loop.second) + " (" + Quote(image) + ") at " +
                    Quote(mount_point));
  }
  std::unique_ptr<MountedWorkspace> m(
      new MountedWorkspace(mount_point, size, asks_spare, std::move(fd)));
  // mkfs's lost+found would make the new workspace look used (`git clone URL .` refuses a
  // directory that is not empty); e2fsck makes one again when it needs it.
  if (fresh) rmdir((mount_point + "/lost+found").c_str());
  return m;
}

SpareWorkspaceMaker::SpareWorkspaceMaker(std::string sessions_dir, uint64_t bytes,
                                         std::function<void(const Error&)> on_error)
    : sessions_dir_(std::move(sessions_dir)),
      bytes_(bytes),
      on_error_(std::move(on_error)),
      thread_([this] { Loop(); }) {}

SpareWorkspaceMaker::~SpareWorkspaceMaker() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
  thread_.join();
  spare_.reset();  // unmounted, detached, its image removed
}

void SpareWorkspaceMaker::Replenish() {
  {
    std::lock_guard lock(mu_);
    wanted_ = true;
  }
  cv_.notify_all();
}

std::unique_ptr<SpareWorkspace> SpareWorkspaceMaker::Take() {
  std::unique_ptr<SpareWorkspace> spare;
  {
    std::unique_lock lock(mu_);
    // A spare being made is waited for, a bounded time: it is ready sooner than a workspace made
    // here would be, and without a second mkfs.ext4 competing with it.
    cv_.wait_for(lock, kSpareWait, [this] { return stopped_ || !making_; });
    spare = std::move(spare_);
    // Asked for meanwhile by a session that found none: its taker asks again once started.
    if (spare) wanted_ = false;
  }
  if (!spare) return nullptr;
  if (Result<void> ok = spare->Check(); !ok) {
    on_error_(std::move(ok).error().Wrap("refused the spare workspace"));
    spare.reset();  // its image too, if it is still the one made
    Replenish();
    return nullptr;
  }
  return spare;
}

void SpareWorkspaceMaker::Loop() {
  // The spare is made while sessions start: this thread and its mkfs.ext4 (which inherits both)
  // yield the CPU and the disk to them, at nice 10 and the lowest best-effort I/O level. Not
  // the idle classes: on a saturated host those could starve mkfs for good, and with it the
  // destructor's join, so srt-poller's exit. Best effort.
  (void)setpriority(PRIO_PROCESS, 0, 10);    // Linux: this thread only
  constexpr int kIoprioClassBestEffort = 2;  // linux/ioprio.h
  constexpr int kIoprioClassShift = 13;
  constexpr int kIoprioLowest = 7;
  constexpr int kIoprioWhoProcess = 1;  // a thread id; 0: this thread
  (void)syscall(SYS_ioprio_set, kIoprioWhoProcess, 0,
                (kIoprioClassBestEffort << kIoprioClassShift) | kIoprioLowest);
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopped_ || (wanted_ && !spare_); });
      if (stopped_) return;
      wanted_ = false;
      making_ = true;
    }
    Result<std::unique_ptr<SpareWorkspace>> made = MakeSpare(sessions_dir_, bytes_);
    {
      std::lock_guard lock(mu_);
      making_ = false;
      if (made) spare_ = std::move(*made);
    }
    cv_.notify_all();
    if (!made) on_error_(made.error());
  }
}

Result<void> IsolateWorkspaceMounts(const std::string& sessions_dir) {
  if (unshare(CLONE_NEWNS) != 0) return SysError("unshare(CLONE_NEWNS) for the workspace mounts");
  // Slave, not private: filesystems the host mounts later (a new disk under the sessions
  // directory's parent) still appear here, and nothing of ours goes back.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    return SysError("make the mount namespace a slave of the host's");
  }
  // The sessions directory, a mount of its own, private: each item's namespace makes its copy a
  // peer group of its own (EnterItemMountNamespace), which needs a mount there.
  mkdir(sessions_dir.c_str(), 0700);  // may exist; the bind below says if it cannot
  if (mount(sessions_dir.c_str(), sessions_dir.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return SysError("bind the sessions directory '" + sessions_dir + "' onto itself");
  }
  if (mount(nullptr, sessions_dir.c_str(), nullptr, MS_PRIVATE, nullptr) != 0) {
    return SysError("make the sessions directory '" + sessions_dir + "' a private mount");
  }
  return {};
}

Result<void> EnterItemMountNamespace(const std::string& sessions_dir) {
  // CLONE_FS: setns and unshare of a mount namespace need a filesystem context of this thread
  // alone; the kernel moves its root and working directory into the copy.
  if (unshare(CLONE_FS | CLONE_NEWNS) != 0) {
    return SysError("unshare(CLONE_NEWNS) for the item's workspace mounts");
  }
  // Private first: the copy would otherwise be a peer of srt-poller's mount (were it shared),
  // then shared, in a peer group of its own. Every sandbox this thread starts copies it as a
  // slave, so the item's unmount at its end reaches its sandbox's copy; no other namespace is
  // in the group, so nothing mounted here reaches any other namespace.
  if (mount(nullptr, sessions_dir.c_str(), nullptr, MS_PRIVATE, nullptr) != 0 ||
      mount(nullptr, sessions_dir.c_str(), nullptr, MS_SHARED, nullptr) != 0) {
    return SysError("make the sessions directory '" + sessions_dir +
                    "' a shared mount of the item's own");
  }
  return {};
}

Result<void> EnterProbeMountNamespace() {
  if (unshare(CLONE_FS | CLONE_NEWNS) != 0) {
    return SysError("unshare(CLONE_NEWNS) for the probe's workspace mounts");
  }
  // Slaves all: were the caller's namespace the host's (srt-poller --check, when it could not
  // isolate its mounts), the copy's mounts would be peers of the host's.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    return SysError("make the probe's mount namespace a slave of srt-poller's");
  }
  return {};
}

Result<std::vector<std::string>> UnmountLeftoverWorkspaces(const std::string& sessions_dir) {
  std::string mountinfo = ReadKernelFile("/proc/self/mountinfo");
  if (mountinfo.empty()) return SysError("read /proc/self/mountinfo");
  std::vector<std::string> done;
  for (const std::string& point : MountPointsBelow(mountinfo, sessions_dir)) {
    // Lazily: the sandboxes that used it died with the srt-poller that mounted it.
    if (umount2(point.c_str(), UMOUNT_NOFOLLOW | MNT_DETACH) != 0) {
      return SysError("unmount " + Quote(point));
    }
    done.push_back(point);
  }
  return done;
}

}  // namespace srt::poller
