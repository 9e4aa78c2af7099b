// SPDX-License-Identifier: Apache-2.0
// srt-init `agent`: srt's helper on the host side of a sandbox.
//
// bubblewrap cannot do four things srt needs, so the agent does them between bwrap's set-up and
// the start of the command:
//  1. hide the sandbox's PID 1 (srt-init) from the command: /proc is remounted with
//     hidepid=invisible, and PID 1 is non-dumpable;
//  2. make protected paths read-only without following symlinks (a protected dotfile that is a
//     symlink is covered itself, so it cannot be swapped), and pin their parent directories;
//  3. guard every write of the command (guard.h): a child of the agent, in the sandbox's user
//     and mount namespaces, performs each call that creates or renames a name or opens for
//     writing on the command's behalf, and refuses the protected paths (also those whose
//     read-only mount the host's rename detached) and git's metadata - without leaving
//     anything on the host; and a watcher puts back the covers of denied and masked files that
//     the host replaces while the sandbox runs;
//  4. make the private TMPDIR and remove it from the host once the sandbox is gone - also when
//     srt itself was killed, because the agent outlives srt in its own session. The teardown
//     of the sandbox's mounts is left to a child the agent leaves behind as it exits, so that
//     srt does not wait for it (HandOverTeardown).
// It also does one thing bwrap could, faster: for a root caller, it shows host entries
// read-only in a tmpfs of bwrap's (kTagShow), where bwrap would re-read the whole mount table
// after each bind. For that caller it also readies, while bwrap sets up, the covers of the
// procfs files only root may read (PrepareProcMasks), so that after the hand-over each is one
// move_mount.
// Mount work needs capabilities over the sandbox's namespaces, which the unprivileged caller has
// as the owner of the sandbox's user namespace; the in-sandbox helper never holds any.
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/inotify.h>
#include <linux/mman.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/signal.h>
#include <linux/stat.h>

#include "guard.h"
#include "init_protocol/wire.h"
#include "ipc.h"
#include "plan.h"
#include "rt.h"

namespace srt::init {

namespace {

using rt::Failed;
using rt::kPollIn;
using rt::PollFd;

constexpr size_t kPathMax = 4096;

long OpenNoSymlinks(const char* path, int flags) {
  open_how how{};
  how.flags = static_cast<__u64>(flags | O_PATH | O_NOFOLLOW | O_CLOEXEC);
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return SRT_SYS(__NR_openat2, AT_FDCWD, path, &how, sizeof how);
}

// statx of `name` in `dirfd` (or of dirfd itself when name is ""), not following a symlink.
long StatAt(int dirfd, const char* name, struct statx& st) {
  int flags = AT_SYMLINK_NOFOLLOW | (name[0] ? 0 : AT_EMPTY_PATH);
  return SRT_SYS(__NR_statx, dirfd, name, flags, STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO,
                 &st);
}

bool IsPlaceholder(const struct statx& st, uint32_t euid) {
  return (st.stx_mode & S_IFMT) == S_IFDIR && (st.stx_mode & 07777) == wire::kPlaceholderMode &&
         st.stx_uid == euid;
}

// Whether a protected path is missing on the host (`host_path`: where it would be created).
// An empty placeholder an earlier srt left there (wire::kPlaceholderMode) is removed and counts
// as missing. Any doubt (a parent that cannot be looked at) also counts as missing: the guard
// then refuses its creation, which costs nothing if it cannot be created anyway.
bool Missing(const char* host_path, uint32_t euid) {
  size_t len = strlen(host_path);
  if (len >= kPathMax) return true;
  char parent[kPathMax];
  memcpy(parent, host_path, len + 1);
  size_t slash = len;
  while (slash > 0 && parent[slash] != '/') --slash;
  const char* name = host_path + slash + 1;
  parent[slash == 0 ? 1 : slash] = 0;
  long dir = OpenNoSymlinks(parent, O_DIRECTORY);
  if (Failed(dir)) return true;
  struct statx st {};
  long r = StatAt(static_cast<int>(dir), name, st);
  bool missing = Failed(r);
  if (!missing && IsPlaceholder(st, euid) &&
      !Failed(SRT_SYS(__NR_unlinkat, dir, name, AT_REMOVEDIR))) {
    missing = true;
  }
  SRT_SYS(__NR_close, dir);
  return missing;
}

// Reads the pid of a pidfd from /proc/self/fdinfo (the "Pid:" line).
long PidOfPidfd(int pidfd) {
  char path[64] = "/proc/self/fdinfo/";
  rt::FormatInt(pidfd, path + strlen(path));
  long fd = SRT_SYS(__NR_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (Failed(fd)) return fd;
  char buf[1024];
  long n = SRT_SYS(__NR_read, fd, buf, sizeof buf - 1);
  SRT_SYS(__NR_close, fd);
  if (Failed(n)) return n;
  buf[n] = 0;
  for (char* line = buf; *line;) {
    if (memcmp(line, "Pid:", 4) == 0) {
      const char* p = line + 4;
      while (*p == ' ' || *p == '\t') ++p;
      long pid = 0;
      while (*p >= '0' && *p <= '9') pid = pid * 10 + (*p++ - '0');
      return pid > 0 ? pid : -ESRCH;
    }
    while (*line && *line != '\n') ++line;
    if (*line) ++line;
  }
  return -ESRCH;
}

long OpenNs(long pid, const char* kind) {
  char path[64] = "/proc/";
  size_t len = strlen(path);
  len += rt::FormatInt(pid, path + len);
  const char* rest = "/ns/";
  memcpy(path + len, rest, 5);
  len += 4;
  memcpy(path + len, kind, strlen(kind) + 1);
  return SRT_SYS(__NR_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
}

// Whether two namespace descriptors name the same namespace (nsfs: one device, an inode each).
bool SameNamespace(int a, int b) {
  struct statx x = {};
  struct statx y = {};
  return !Failed(StatAt(a, "", x)) && !Failed(StatAt(b, "", y)) && x.stx_ino == y.stx_ino &&
         x.stx_dev_major == y.stx_dev_major && x.stx_dev_minor == y.stx_dev_minor;
}

bool Alive(int pidfd) {
  PollFd p{pidfd, kPollIn, 0};
  timespec zero{0, 0};
  return SRT_SYS(__NR_ppoll, &p, 1, &zero, 0, 0) == 0;
}

// Bind a path onto itself through fds (no path is resolved twice, no symlink followed); with
// `read_only` every mount of the copied tree becomes read-only.
long BindOntoItself(int target, bool read_only) {
  long tree = SRT_SYS(__NR_open_tree, target, "",
                      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
  if (Failed(tree)) return tree;
  long r = 0;
  if (read_only) {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    r = SRT_SYS(__NR_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr);
  }
  if (!Failed(r)) {
    r = SRT_SYS(__NR_move_mount, tree, "", target, "",
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
  }
  SRT_SYS(__NR_close, tree);
  return r;
}

// A clone of the mount at `path` (relative to `dirfd`), read-only, nodev, nosuid and noexec,
// moved onto the file `target` (a descriptor, so nothing is looked up by name there). 0 or
// -errno.
long BindReadOnly(int dirfd, const char* path, int target) {
  long tree = SRT_SYS(__NR_open_tree, dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (Failed(tree)) return tree;
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;
  long r = SRT_SYS(__NR_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr);
  if (!Failed(r)) {
    r = SRT_SYS(__NR_move_mount, tree, "", target, "",
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
  }
  SRT_SYS(__NR_close, tree);
  return r;
}

// Mounts a copy of the sandbox's /dev/null, read-only and nodev (so open fails with EACCES, as
// it does for bwrap's --ro-bind /dev/null), on the file `target`.
long CoverWithNull(int target) { return BindReadOnly(AT_FDCWD, "/dev/null", target); }

// Copies the parent directory of the absolute `path` into `parent` (kPathMax bytes) and returns
// the last component (a pointer into `path`); null when `path` is too long or has no parent
// below the root.
const char* SplitParent(const char* path, char* parent) {
  const size_t len = strlen(path);
  size_t slash = len;
  while (slash > 0 && path[slash] != '/') --slash;
  if (len >= kPathMax || slash == 0 || path[slash + 1] == 0) return nullptr;
  memcpy(parent, path, slash);
  parent[slash] = 0;
  return path + slash + 1;
}

// kTagShow, on the host (in the namespace bwrap copied for the sandbox), while bwrap sets up: a
// clone of the entry at `path` and of everything mounted below it, as bwrap's --ro-bind would
// bind it: read-only, nosuid and nodev throughout, each mount a slave of the one it copies (as
// bwrap makes every mount of the sandbox), so that what the sandbox mounts below it never
// reaches the host. `path` is canonical (the policy resolved it): a symlink on the way now is
// one swapped in since (by a command of another sandbox, in a directory it may write), and
// fails with ELOOP rather than show what it points to. Returns the clone's descriptor
// (CLOEXEC), mounted nowhere yet, or -errno.
long CloneHostEntry(const char* path) {
  long entry = OpenNoSymlinks(path, 0);
  if (Failed(entry)) return entry;
  long tree = SRT_SYS(__NR_open_tree, entry, "",
                      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
  SRT_SYS(__NR_close, entry);
  if (Failed(tree)) return tree;
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  attr.propagation = MS_SLAVE;
  long r = SRT_SYS(__NR_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr);
  if (Failed(r)) {
    SRT_SYS(__NR_close, tree);
    return r;
  }
  return tree;
}

// kTagShow, in the sandbox: the mount point `path` made in its parent (bwrap's tmpfs, where
// nothing is at that name: bwrap::AgentShows), as bwrap makes one (a directory 0755, any other
// entry an empty file 0444), and the clone `tree` mounted on it. 0 or -errno.
long ShowHostEntry(const char* path, int tree) {
  char parent[kPathMax];
  const char* name = SplitParent(path, parent);
  if (!name) return -EINVAL;
  struct statx st {};
  long r = StatAt(tree, "", st);
  if (Failed(r)) return r;
  long dir = OpenNoSymlinks(parent, O_DIRECTORY);
  if (Failed(dir)) return dir;
  r = (st.stx_mode & S_IFMT) == S_IFDIR ? SRT_SYS(__NR_mkdirat, dir, name, 0755)
                                        : SRT_SYS(__NR_mknodat, dir, name, S_IFREG | 0444, 0);
  // Relative to the parent, not following a symlink there (none can be: the command has not
  // started, and nothing else writes in bwrap's tmpfs).
  if (!Failed(r)) r = SRT_SYS(__NR_move_mount, tree, "", dir, name, MOVE_MOUNT_F_EMPTY_PATH);
  SRT_SYS(__NR_close, dir);
  return r;
}

// kTagSeal: the synthetic directory `path` (bwrap's tmpfs) read-only, nosuid and nodev, as
// bwrap's --remount-ro makes it: that mount only, not those in it. 0 or -errno.
long SealDirectory(const char* path) {
  long dir = OpenNoSymlinks(path, O_DIRECTORY);
  if (Failed(dir)) return dir;
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  long r = SRT_SYS(__NR_mount_setattr, dir, "", AT_EMPTY_PATH, &attr, sizeof attr);
  SRT_SYS(__NR_close, dir);
  return r;
}

// Every kTagShow of the plan (their clones in `trees`, in plan order), then every kTagSeal.
// Returns 0, or -errno with the path at fault in `failed`.
long ShowHostEntries(const AgentPlan& plan, const long* trees, const char** failed) {
  size_t shown = 0;
  for (size_t i = 0; i < plan.op_count; ++i) {
    if (plan.ops[i].kind != OpKind::kShow) continue;
    *failed = plan.ops[i].path;
    long r = ShowHostEntry(plan.ops[i].path, static_cast<int>(trees[shown++]));
    if (Failed(r)) return r;
  }
  for (size_t i = 0; i < plan.op_count; ++i) {
    if (plan.ops[i].kind != OpKind::kSeal) continue;
    *failed = plan.ops[i].path;
    long r = SealDirectory(plan.ops[i].path);
    if (Failed(r)) return r;
  }
  return 0;
}

// A directory of `euid`'s with mode 0700: the kept parent of the TMPDIR (kTagTmpdirIn).
bool IsKeptTmpdirParent(const struct statx& st, uint32_t euid) {
  return (st.stx_mode & S_IFMT) == S_IFDIR && (st.stx_mode & 07777) == 0700 && st.stx_uid == euid;
}

// The host side of kTagTmpdirIn: makes the kept parent `kept` (mode 0700) if it is missing and
// checks that it is a directory of `euid`'s with mode 0700, not a symlink; anything else (another
// user's directory in a shared /tmp, a symlink a command with write access to /tmp left) fails
// with EPERM rather than be mounted on. Nothing is ever removed: the next sandbox uses it too.
long KeepTmpdirParent(const char* kept, uint32_t euid) {
  char grand[kPathMax];
  const char* leaf = SplitParent(kept, grand);
  if (!leaf) return -EINVAL;
  long dir = OpenNoSymlinks(grand, O_DIRECTORY);
  if (Failed(dir)) return dir;
  long r = SRT_SYS(__NR_mkdirat, dir, leaf, 0700);
  if (!Failed(r)) {
    // Made now: its mode is 0700 whatever the umask (0377 would leave 0400, refused below).
    long made = SRT_SYS(__NR_openat, dir, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    r = Failed(made) ? made : SRT_SYS(__NR_fchmod, made, 0700);
    if (!Failed(made)) SRT_SYS(__NR_close, made);
  } else if (r == -EEXIST) {
    r = 0;
  }
  struct statx st {};
  if (!Failed(r)) r = StatAt(static_cast<int>(dir), leaf, st);
  if (!Failed(r) && !IsKeptTmpdirParent(st, euid)) r = -EPERM;
  // Used now: a tmp cleaner that goes by age (where srt's tmpfiles.d rule is not installed)
  // must not find it old and remove it under a running sandbox. Not following a symlink, and
  // only once it is known to be the user's own directory.
  if (!Failed(r)) SRT_SYS(__NR_utimensat, dir, leaf, nullptr, AT_SYMLINK_NOFOLLOW);
  SRT_SYS(__NR_close, dir);
  return r;
}

// A fresh tmpfs of mode `mode`, as a detached mount (no path leads to it until it is moved) with
// the mount attributes `attrs`. Returns the mount's fd (CLOEXEC) or -errno.
long DetachedTmpfs(const char* mode, uint64_t attrs) {
  long fs = SRT_SYS(__NR_fsopen, "tmpfs", FSOPEN_CLOEXEC);
  if (Failed(fs)) return fs;
  long r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0);
  if (!Failed(r)) r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_CMD_CREATE, 0, 0, 0);
  long mnt = Failed(r) ? r : SRT_SYS(__NR_fsmount, fs, FSMOUNT_CLOEXEC, attrs);
  SRT_SYS(__NR_close, fs);
  return mnt;
}

// The device of the sandbox's private tmpfs, for the guard (GuardSetup::private_dev_*).
struct TmpfsDevice {
  bool known = false;
  uint32_t major = 0, minor = 0;
};

// Mounts a fresh tmpfs (mode 0700, owned by the caller, nosuid, nodev) on the directory `path`
// of the sandbox, creating the directory first where the sandbox does not see the one made on the
// host (a hidden /tmp). With `name`, the directory `name` (mode 0700) is made in the tmpfs before
// it is mounted, so that the command's TMPDIR is there the moment the mount is, and `path` must
// then be the kept parent (IsKeptTmpdirParent for `euid`, looked at in the sandbox, where the mount
// goes). `device` gets the new tmpfs's device.
long MountPrivateTmpfs(const char* path, const char* name, uint32_t euid, TmpfsDevice& device) {
  long r = SRT_SYS(__NR_mkdirat, AT_FDCWD, path, 0700);
  if (Failed(r) && r != -EEXIST) return r;
  long target = OpenNoSymlinks(path, O_DIRECTORY);
  if (Failed(target)) return target;
  if (name) {
    struct statx st {};
    r = StatAt(static_cast<int>(target), "", st);
    if (!Failed(r) && !IsKeptTmpdirParent(st, euid)) r = -EPERM;
    if (Failed(r)) {
      SRT_SYS(__NR_close, target);
      return r;
    }
  }
  long mnt = DetachedTmpfs("0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (!Failed(mnt)) {
    struct statx st {};
    r = StatAt(static_cast<int>(mnt), "", st);
    if (!Failed(r)) device = {true, st.stx_dev_major, st.stx_dev_minor};
    if (!Failed(r) && name) r = SRT_SYS(__NR_mkdirat, mnt, name, 0700);
    if (!Failed(r)) {
      r = SRT_SYS(__NR_move_mount, mnt, "", target, "",
                  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
    }
    SRT_SYS(__NR_close, mnt);
  } else {
    r = mnt;
  }
  SRT_SYS(__NR_close, target);
  return r;
}

// CAP_SYS_ADMIN in this process's effective set.
bool HasSysAdmin() {
  constexpr uint32_t kCapabilityVersion3 = 0x20080522;  // _LINUX_CAPABILITY_VERSION_3
  constexpr uint32_t kCapSysAdmin = 21;
  struct {
    uint32_t version;
    int pid;
  } header{kCapabilityVersion3, 0};
  struct {
    uint32_t effective, permitted, inheritable;
  } data[2] = {};
  if (Failed(SRT_SYS(__NR_capget, &header, data))) return false;
  return (data[0].effective & (1u << kCapSysAdmin)) != 0;
}

// hidepid=invisible on a procfs context (fsopen or fspick): the command sees only processes it
// may ptrace, so never srt's PID 1. hidepid exempts members of the mount's `gid` (default 0): a
// root caller's command is in group 0, so point it at a group no process in the sandbox has
// (unprivileged callers leave the default: their sandbox has no group 0).
long SetHidePid(long fs, bool root) {
  long r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_SET_STRING, "hidepid", "invisible", 0);
  if (!Failed(r) && root)
    r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_SET_STRING, "gid", "2147483646", 0);
  return r;
}

// Runs fn in a child and returns what it returned (0 or -errno): work whose side effects must
// not stay with this process.
template <typename Fn>
long InChild(Fn fn) {
  long child = SRT_SYS(__NR_clone, SIGCHLD, 0, 0, 0, 0);
  if (Failed(child)) return child;
  if (child == 0) {
    long r = fn();
    rt::Exit(Failed(r) ? static_cast<int>(-r) : 0);
  }
  int status = 0;
  long r;
  while ((r = SRT_SYS(__NR_wait4, child, &status, 0, 0)) == -EINTR) {
  }
  if (Failed(r)) return r;
  if ((status & 0x7f) != 0) return -ECHILD;  // killed: nothing to say but that it failed
  return -static_cast<long>((status >> 8) & 0xff);
}

// A procfs of this process's pid namespace (hidepid as in SetHidePid), mounted on /proc.
long MountProcHere(bool root) {
  long fs = SRT_SYS(__NR_fsopen, "proc", FSOPEN_CLOEXEC);
  long r = Failed(fs) ? fs : SRT_SYS(__NR_fsconfig, fs, FSCONFIG_SET_STRING, "source", "proc", 0);
  if (!Failed(r)) r = SetHidePid(fs, root);
  if (!Failed(r)) r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_CMD_CREATE, 0, 0, 0);
  long mnt = Failed(r) ? r
                       : SRT_SYS(__NR_fsmount, fs, FSMOUNT_CLOEXEC,
                                 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (Failed(mnt)) return mnt;
  return SRT_SYS(__NR_move_mount, mnt, "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH);
}

// Mounts a procfs of the sandbox's pid namespace over the host's /proc that bwrap bound
// (enableWeakerNestedSandbox). A procfs shows the pid namespace of the process that creates it,
// so a grandchild made in the sandbox's pid namespace does it; before the command starts it is
// alone there with PID 1, and it is gone before the command starts. (The child in between keeps
// this process's children out of that namespace: the guard's must not be seen there.) Returns 0
// or -errno.
long MountPrivateProc(int pidns, bool root) {
  return InChild([&] {
    long r = SRT_SYS(__NR_setns, pidns, CLONE_NEWPID);  // for the children only
    return Failed(r) ? r : InChild([&] { return MountProcHere(root); });
  });
}

// The entries of a procfs that set the whole host, not the sandbox: sysctls (kernel.*,
// vm.*, fs.*), the magic SysRq key, IRQ affinity, bus, ACPI, SCSI and driver
// settings. A root caller's command runs as the host's uid 0 (bwrap maps 0 to 0 and has no other
// id to map), and the kernel lets uid 0 write many of these by their mode bits alone, with no
// capability: kernel.core_pattern would then run a program of the command's choosing as the
// host's root. bwrap's --proc covers some of them, but only where access(W_OK) succeeds, which
// it does not for /proc/sys. The command's own /proc/self stays writable.
//
// /proc/fs is emptied instead: its ext4/<dev> and jbd2/<dev>-8 name every mounted filesystem of
// the host by its device, with its free blocks and journal commits, live; with a loop device per
// workspace (srt-poller's --disk), when each other session starts and ends and how much it
// writes (hostile review 6, F1). Nothing in a sandbox needs them.
struct ProcHostWide {
  const char* name;
  bool emptied;  // an empty read-only tmpfs over it, not a read-only bind of itself
};
constexpr ProcHostWide kProcHostWide[] = {
    {"sys", false}, {"sysrq-trigger", false}, {"irq", false},  {"bus", false},
    {"fs", true},   {"acpi", false},          {"scsi", false}, {"driver", false},
};

// Mounts an empty, read-only tmpfs on the directory `target` (an fd). 0 or -errno.
long CoverWithEmptyDirectory(int target) {
  long mnt = DetachedTmpfs(
      "0555", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (Failed(mnt)) return mnt;
  long r = SRT_SYS(__NR_move_mount, mnt, "", target, "",
                   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
  SRT_SYS(__NR_close, mnt);
  return r;
}

// Covers each of kProcHostWide that this kernel has in the sandbox's /proc. Returns 0 or -errno,
// with `failed` naming the entry.
long CoverProcHostWide(const char** failed) {
  for (const ProcHostWide& entry : kProcHostWide) {
    char path[32] = "/proc/";
    memcpy(path + 6, entry.name, strlen(entry.name) + 1);
    long fd = OpenNoSymlinks(path, 0);
    if (fd == -ENOENT) continue;  // not built into this kernel
    long r = Failed(fd)      ? fd
             : entry.emptied ? CoverWithEmptyDirectory(static_cast<int>(fd))
                             : BindOntoItself(static_cast<int>(fd), /*read_only=*/true);
    if (!Failed(fd)) SRT_SYS(__NR_close, fd);
    if (Failed(r)) {
      *failed = entry.name;
      return r;
    }
  }
  return 0;
}

// A getdents64 record (the kernel's struct linux_dirent64, which no UAPI header defines).
struct Dirent64 {
  uint64_t ino;
  int64_t off;
  uint16_t reclen;
  uint8_t type;
  char name[1];
};
constexpr uint8_t kDtReg = 8;

// Top-level files of a procfs that anyone may read but that count the I/O of every block
// device of the host, by name: with a loop device per workspace (srt-poller's --disk), what one
// session reads and writes, live, and when, to any other session run by the same root caller.
// Nothing in a sandbox needs them (its /dev has no block device, its /sys none either).
constexpr const char* kProcHostBlockIo[] = {"diskstats", "partitions"};

// Copies `name` into `failed`, cut to fit.
void Name(char (&failed)[64], const char* name) {
  const size_t len = strlen(name) < sizeof failed - 1 ? strlen(name) : sizeof failed - 1;
  memcpy(failed, name, len);
  failed[len] = '\0';
}

// A read-only clone of the /dev/null `null` (bwrap's bind of the host's node, or the host's
// node itself), mounted nowhere yet: nosuid as bwrap's binds are. Its descriptor, or -errno.
long ReadOnlyNullClone(int null) {
  long tree =
      SRT_SYS(__NR_open_tree, null, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (Failed(tree)) return tree;
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID;
  long r = SRT_SYS(__NR_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr);
  if (Failed(r)) {
    SRT_SYS(__NR_close, tree);
    return r;
  }
  return tree;
}

bool SameName(const char* a, const char* b) {
  const size_t n = strlen(a);
  return n == strlen(b) && memcmp(a, b, n) == 0;
}

// Whether a top-level file of procfs gets a read-only /dev/null over it in a root caller's
// sandbox: one that only its owner, root, may read (kpageflags and kpagecount: every page of
// the host; vmallocinfo: kernel and physical addresses; slabinfo, timer_list and the like),
// found by mode so that what a newer kernel adds is covered too, and kProcHostBlockIo. A root
// caller's command is that owner (see kProcHostWide), and reading them tells it about the host,
// not the sandbox.
bool MaskedProcFile(const char* name, uint16_t mode) {
  if ((mode & 0004) == 0) return true;
  for (const char* io : kProcHostBlockIo) {
    if (SameName(name, io)) return true;
  }
  return false;
}

// What PrepareProcMasks learnt from the host's /proc while bwrap set the sandbox up. A mode
// belongs to procfs's entry, which every procfs instance shares, so the host's is the
// sandbox's; an entry the host's /proc does not show as procfs's own (covered there, say, or
// beyond these limits) is not known, and the sandbox's /proc is asked instead.
struct ProcMasks {
  static constexpr size_t kMax = 96;
  static constexpr size_t kNameMax = 32;
  struct Entry {
    char name[kNameMax];
    bool masked;
    long cover;  // masked: a ReadOnlyNullClone of the host's /dev/null, or -errno
  };
  Entry entries[kMax];
  size_t count = 0;

  const Entry* Find(const char* name) const {
    for (size_t i = 0; i < count; ++i) {
      if (SameName(entries[i].name, name)) return &entries[i];
    }
    return nullptr;
  }
  void Close() {
    for (size_t i = 0; i < count; ++i) {
      if (entries[i].masked && !Failed(entries[i].cover)) SRT_SYS(__NR_close, entries[i].cover);
    }
    count = 0;
  }
};

// Calls `each(name)` for every regular file at the top of the procfs `proc`. Returns 0, the
// first failure of `each`, or getdents64's -errno. With `before_pids`, stops at the first
// process's directory: procfs lists its own entries first, then "self", "thread-self" and the
// processes (proc_root_readdir), and listing a host's processes costs far more than the rest.
template <typename Each>
long ForEachProcFile(int proc, bool before_pids, Each&& each) {
  alignas(8) char buf[4096] = {};  // getdents64 fills it (the analyzer cannot see that)
  for (;;) {
    long n = SRT_SYS(__NR_getdents64, proc, buf, sizeof buf);
    if (n <= 0) return n;
    for (long at = 0; at < n;) {
      const auto* d = reinterpret_cast<const Dirent64*>(buf + at);
      at += d->reclen;
      if (before_pids && d->name[0] >= '0' && d->name[0] <= '9') return 0;
      if (d->type != kDtReg) continue;
      long r = each(d->name);
      if (Failed(r)) return r;
    }
  }
}

// On the host, for a root caller's agent that can clone the host's mounts (root with
// CAP_SYS_ADMIN), while bwrap sets the sandbox up: which top-level files of procfs are masked
// (MaskedProcFile), from the host's /proc, and a cover ready for each, so that the sandbox's
// are covered by one move_mount each once the agent has joined it (MaskProcFiles). Whatever
// cannot be learnt here is left out of `masks`; nothing fails.
void PrepareProcMasks(ProcMasks& masks) {
  long proc = SRT_SYS(__NR_openat, AT_FDCWD, "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (Failed(proc)) return;
  constexpr long kProcSuperMagic = 0x9fa0;
  long statfs[16] = {};  // struct statfs starts with f_type
  struct statx self {};
  long null = -EBADF;
  // The host's /proc must be procfs, and its /dev/null the null device, or nothing is learnt.
  if (!Failed(SRT_SYS(__NR_fstatfs, proc, statfs)) && statfs[0] == kProcSuperMagic &&
      !Failed(SRT_SYS(__NR_statx, proc, "", AT_EMPTY_PATH, STATX_MNT_ID, &self)) &&
      (self.stx_mask & STATX_MNT_ID) != 0) {
    null = OpenNoSymlinks("/dev/null", 0);
    struct statx st {};
    if (!Failed(null) &&
        (Failed(StatAt(static_cast<int>(null), "", st)) || (st.stx_mode & S_IFMT) != S_IFCHR ||
         st.stx_rdev_major != 1 || st.stx_rdev_minor != 3)) {
      SRT_SYS(__NR_close, null);
      null = -ENODEV;
    }
  }
  if (!Failed(null)) {
    long clone = 0;
    // What a reordered listing would leave out is only not known (MaskProcFiles asks the
    // sandbox's /proc, which it reads whole).
    ForEachProcFile(static_cast<int>(proc), /*before_pids=*/true, [&](const char* name) -> long {
      struct statx st {};
      const size_t len = strlen(name);
      // Known only if it is procfs's own entry: not something mounted over it on the host.
      if (masks.count == ProcMasks::kMax || len >= ProcMasks::kNameMax ||
          Failed(SRT_SYS(__NR_statx, proc, name, AT_SYMLINK_NOFOLLOW, STATX_MODE | STATX_MNT_ID,
                         &st)) ||
          (st.stx_mask & (STATX_MODE | STATX_MNT_ID)) != (STATX_MODE | STATX_MNT_ID) ||
          st.stx_mnt_id != self.stx_mnt_id) {
        return 0;
      }
      ProcMasks::Entry& e = masks.entries[masks.count++];
      memcpy(e.name, name, len + 1);
      e.masked = MaskedProcFile(name, st.stx_mode);
      // After a clone fails (EPERM: the host's mounts are not this root's), none is tried again;
      // the modes still count, and the sandbox's /dev/null is cloned for those instead.
      e.cover = !e.masked ? -1 : Failed(clone) ? clone : ReadOnlyNullClone(static_cast<int>(null));
      if (e.masked && Failed(e.cover)) clone = e.cover;
      return 0;
    });
    SRT_SYS(__NR_close, null);
  }
  SRT_SYS(__NR_close, proc);
}

// Covers each top-level file of the sandbox's /proc that MaskedProcFile says, with a read-only
// /dev/null: the one `prepared` has for it (the host's), or else a clone of the sandbox's. The
// modes are `prepared`'s where it knows the file, else the sandbox's. Returns 0 or -errno, with
// `failed` naming the file.
long MaskProcFiles(const ProcMasks& prepared, char (&failed)[64]) {
  long proc = SRT_SYS(__NR_openat, AT_FDCWD, "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (Failed(proc)) return proc;
  long null = OpenNoSymlinks("/dev/null", 0);
  auto mask = [&](const char* name) -> long {
    const ProcMasks::Entry* known = prepared.Find(name);
    struct statx st {};
    const bool masked = known ? known->masked
                              : !Failed(StatAt(static_cast<int>(proc), name, st)) &&
                                    MaskedProcFile(name, st.stx_mode);
    if (!masked) return 0;
    // The prepared cover stays open (ProcMasks::Close); a clone made here is closed here.
    const bool ready = known && !Failed(known->cover);
    long cover = ready ? known->cover : ReadOnlyNullClone(static_cast<int>(null));
    long r = Failed(cover)
                 ? cover
                 : SRT_SYS(__NR_move_mount, cover, "", proc, name, MOVE_MOUNT_F_EMPTY_PATH);
    if (!ready && !Failed(cover)) SRT_SYS(__NR_close, cover);
    if (Failed(r)) Name(failed, name);
    return r;
  };
  long r =
      Failed(null) ? null : ForEachProcFile(static_cast<int>(proc), /*before_pids=*/false, mask);
  if (!Failed(null)) SRT_SYS(__NR_close, null);
  SRT_SYS(__NR_close, proc);
  return r;
}

// Creates one socket of the plan inside the sandbox's network namespace (the calling process has
// joined it): srt's proxy serves it from the host side. Returns the fd or -errno.
long MakeNetSocket(const wire::NetSocket& ns) {
  constexpr int kSockStream = 1, kSockDgram = 2, kSockRaw = 3, kSockNonblock = 04000;
  constexpr int kSockCloexec = 02000000, kSolSocket = 1, kSoReuseaddr = 2, kIpprotoIpv6 = 41;
  constexpr int kIpv6V6only = 26, kAfNetlink = 16, kNetlinkRoute = 0;
  if (ns.kind == wire::kNetRoute) {
    return SRT_SYS(__NR_socket, kAfNetlink, kSockRaw | kSockCloexec, kNetlinkRoute);
  }
  int type = (ns.kind == wire::kNetUdp ? kSockDgram : kSockStream) | kSockCloexec | kSockNonblock;
  long fd = SRT_SYS(__NR_socket, static_cast<int>(ns.family), type, 0);
  if (Failed(fd)) return fd;
  int one = 1;
  long r = SRT_SYS(__NR_setsockopt, fd, kSolSocket, kSoReuseaddr, &one, sizeof one);
  // An IPv6 listener must not also take the IPv4 port: a separate IPv4 socket serves that.
  if (!Failed(r) && ns.family == 10) {
    r = SRT_SYS(__NR_setsockopt, fd, kIpprotoIpv6, kIpv6V6only, &one, sizeof one);
  }
  uint8_t addr[28] = {};  // sockaddr_in or sockaddr_in6
  uint32_t addr_len;
  uint16_t family16 = static_cast<uint16_t>(ns.family);
  memcpy(addr, &family16, 2);
  addr[2] = static_cast<uint8_t>(ns.port >> 8);  // sin_port / sin6_port, network order
  addr[3] = static_cast<uint8_t>(ns.port & 0xff);
  if (ns.family == 2) {
    memcpy(addr + 4, ns.address, 4);
    addr_len = 16;
  } else {
    memcpy(addr + 8, ns.address, 16);
    addr_len = 28;
  }
  if (!Failed(r)) r = SRT_SYS(__NR_bind, fd, addr, addr_len);
  if (!Failed(r) && ns.kind == wire::kNetTcpListen) r = SRT_SYS(__NR_listen, fd, 4096);
  if (Failed(r)) {
    SRT_SYS(__NR_close, fd);
    return r;
  }
  return fd;
}

// ---------------------------------------------------------------------------------------------
// The cover watcher. A cover (and bwrap's mount of a masked file) is a mount on a directory
// entry, and when the host renames over or unlinks that entry (an editor's save, `sed -i`, a CLI
// refreshing a token) the kernel detaches the mount in every other mount namespace: the sandbox
// would see the host's new file. A child of the agent, in the sandbox's mount namespace and with
// the capabilities the covers took, watches the directories that hold covered, masked and
// not-yet-existing denied files (inotify: it sees the host's changes, the inodes are the same)
// and puts the cover back on whatever new entry appears there. What it cannot cover again stops
// the sandbox (SIGKILL to its PID 1), with a message naming the file.

constexpr size_t kMaxWalkDirs = 128;
constexpr size_t kLinkDirReserve = 8;  // of kMaxWalkDirs, kept for directories holding a link
constexpr int kMaxSymlinkHops = 40;    // the kernel's own limit (MAXSYMLINKS)
// Names a walk of a spelled item looked up, by hash, for its events' filter; a walk that looks
// up more is followed again on every event in its directories.
constexpr size_t kMaxLookedUpNames = 128;

struct Watched {
  const char* path;   // in the sandbox
  OpKind kind;        // kCover or kMask
  int dir_wd;         // the watch on its directory (or on `above`), or -1
  size_t above;       // while its directory is missing: the length of the path of the nearest
                      // directory above it that exists, which is watched instead; else 0
  int mask;           // kMask: the mount of its private copy (PrivateCopyOf), -1 before
  uint64_t mask_ino;  // bwrap's masked copy
  uint32_t mask_dev_major, mask_dev_minor;
  uint64_t copy_ino;  // the private copy
  uint32_t copy_dev_major, copy_dev_minor;
  // A kTagSpelled item: the settings' name through symlinks, followed again (FollowSpelled)
  // whenever the host changes a directory that holds one of its links; `path` is then `target`,
  // what the name reaches now. nullptr for the others.
  const char* spelled;
  char* target;                // kPathMax bytes
  int walk_wds[kMaxWalkDirs];  // the watches on the directories its walk looked names up in
  size_t walk_wd_count;
  // The names the last walk looked up, each with the watch on its directory (LookUpKey): only
  // an event naming one of them in that directory can change what the walk reaches.
  // Unbounded: more than kMaxLookedUpNames.
  uint64_t looked_up[kMaxLookedUpNames];
  size_t looked_up_count;
  bool looked_up_unbounded;
};

constexpr uint32_t kWatchEvents = IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM |
                                  IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;
constexpr uint32_t kNullMajor = 1, kNullMinor = 3;

const char* BaseName(const char* path) {
  const char* base = path;
  for (const char* c = path; *c; ++c) {
    if (*c == '/') base = c + 1;
  }
  return base;
}
bool StrEqual(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
// FNV-1a over a directory's watch and a name in it. The command can make two keys collide,
// which costs it only a walk more.
uint64_t LookUpKey(int wd, const char* name, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (int shift = 0; shift < 32; shift += 8) {
    h = (h ^ ((static_cast<uint32_t>(wd) >> shift) & 0xffu)) * 1099511628211ull;
  }
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(name[i])) * 1099511628211ull;
  return h;
}
// Takes the directory watched as `wd` into `w`'s walk, if it is there already or the walk has
// fewer than `room` directories, and records `name` (n bytes) as looked up in it. False when
// the directory is not the walk's: its events are not looked at for `w`.
bool TrackLookUp(Watched& w, int wd, const char* name, size_t n, size_t room) {
  bool tracked = false;
  for (size_t k = 0; k < w.walk_wd_count; ++k) tracked = tracked || w.walk_wds[k] == wd;
  if (!tracked && w.walk_wd_count >= room) return false;
  if (!tracked) w.walk_wds[w.walk_wd_count++] = wd;
  if (w.looked_up_count == kMaxLookedUpNames) {
    w.looked_up_unbounded = true;
  } else {
    w.looked_up[w.looked_up_count++] = LookUpKey(wd, name, n);
  }
  return true;
}
// Whether an event naming `name` in the directory watched as `wd` can change what `w`'s walk
// reaches.
bool WalkLookedUp(const Watched& w, int wd, const char* name) {
  if (w.looked_up_unbounded) return true;
  const uint64_t h = LookUpKey(wd, name, strlen(name));
  for (size_t i = 0; i < w.looked_up_count; ++i) {
    if (w.looked_up[i] == h) return true;
  }
  return false;
}

// Watches the directory of `w` (by path: inotify follows nothing with IN_DONT_FOLLOW) or, while
// that is missing (the host moved or deleted it, or it is yet to come), the nearest directory
// above it that exists: the event of a directory made or moved in there leads back here. 0, or
// -errno: the user's watches used up (ENOSPC) or any other failure but a missing directory or a
// search permission the user lacks (which the command lacks as well) fails the caller closed,
// since an item without a watch would never be covered again.
long WatchDirectoryOf(int inotify, Watched& w) {
  char dir[kPathMax];
  const size_t len = strlen(w.path);
  if (len >= kPathMax) return -ENAMETOOLONG;
  for (int attempt = 0; attempt < 64; ++attempt) {
    memcpy(dir, w.path, len + 1);
    size_t end = len;
    bool own = true;  // the item's own directory, not one above it
    long wd = -ENOENT;
    for (;; own = false) {
      while (end > 0 && dir[end] != '/') --end;
      dir[end == 0 ? 1 : end] = 0;
      wd = SRT_SYS(__NR_inotify_add_watch, inotify, dir, kWatchEvents);
      if ((wd != -ENOENT && wd != -ENOTDIR) || end == 0) break;
    }
    w.dir_wd = Failed(wd) ? -1 : static_cast<int>(wd);
    w.above = 0;
    if (wd == -EACCES) return 0;  // as before: nothing the command could search either
    if (Failed(wd)) return wd;
    if (own) return 0;
    // Watching a directory above the missing one: if the next one down was made between its
    // failed watch and this one, its event came too early - look again.
    const size_t watched = end == 0 ? 1 : end;
    size_t next = watched + 1;
    while (next < len && w.path[next] != '/') ++next;
    memcpy(dir, w.path, next);
    dir[next] = 0;
    struct statx st {};
    long r = SRT_SYS(__NR_statx, AT_FDCWD, dir, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &st);
    if (Failed(r) || (st.stx_mode & S_IFMT) != S_IFDIR) {
      w.above = watched;
      return 0;
    }
  }
  return -EAGAIN;  // the host keeps making and removing it: fail closed
}

// Whether `path` is /proc or below it.
bool InProc(const char* path) {
  return memcmp(path, "/proc", 5) == 0 && (path[5] == 0 || path[5] == '/');
}

// Follows `w.spelled` in the sandbox, one name at a time without ever letting the kernel follow
// a link (so a magic link of /proc is read as the text it shows, and a name may not lead into
// /proc at all), into `w.target`; watches every directory it looks a name up in (w.walk_wds):
// the host may point a link there elsewhere, or move a directory on the way out of it (to where
// nothing is watched) and put a link in its place. A name missing on the way ends the walk: the
// rest is kept as spelled (nothing is there to cover, and the watches see it come). 0, or
// -errno: more than kMaxSymlinkHops links (ELOOP), links in more than kLinkDirReserve
// directories past the first ones watched, or leading into /proc (ELOOP), a name too long, a
// directory holding a link that cannot be watched (one the user may not read is not watched
// otherwise, as before).
long FollowSpelled(int inotify, Watched& w) {
  static char rest[kPathMax], link[kPathMax];
  const size_t spelled_len = strlen(w.spelled);
  if (spelled_len >= kPathMax) return -ENAMETOOLONG;
  memcpy(rest, w.spelled, spelled_len + 1);
  char* done = w.target;  // what is resolved so far: no links in it
  size_t done_len = 0;
  done[0] = 0;
  size_t pos = 0;
  int hops = 0;
  w.walk_wd_count = 0;
  w.looked_up_count = 0;
  w.looked_up_unbounded = false;
  for (;;) {
    while (rest[pos] == '/') ++pos;
    if (rest[pos] == 0) break;
    size_t end = pos;
    while (rest[end] != 0 && rest[end] != '/') ++end;
    const size_t n = end - pos;
    if (n == 1 && rest[pos] == '.') {
      pos = end;
      continue;
    }
    if (n == 2 && rest[pos] == '.' && rest[pos + 1] == '.') {
      while (done_len > 0 && done[done_len - 1] != '/') --done_len;
      if (done_len > 0) --done_len;
      done[done_len] = 0;
      pos = end;
      continue;
    }
    if (done_len + 1 + n >= kPathMax) return -ENAMETOOLONG;
    // The directory the name is looked up in (`done`, no links in it), watched. The last
    // kLinkDirReserve places are kept for directories holding a link, which must be (below);
    // beyond the others a directory is watched but its events are not looked at for this walk.
    const long wd =
        SRT_SYS(__NR_inotify_add_watch, inotify, done_len == 0 ? "/" : done, kWatchEvents);
    if (Failed(wd) && wd != -EACCES) return wd;
    const bool tracked = !Failed(wd) && TrackLookUp(w, static_cast<int>(wd), rest + pos, n,
                                                    kMaxWalkDirs - kLinkDirReserve);
    done[done_len] = '/';
    memcpy(done + done_len + 1, rest + pos, n);
    const size_t next_len = done_len + 1 + n;
    done[next_len] = 0;
    if (hops > 0 && InProc(done)) return -ELOOP;
    struct statx st {};
    long r = SRT_SYS(__NR_statx, AT_FDCWD, done, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &st);
    if (r == -ENOENT || r == -ENOTDIR) {
      // Missing: the rest as spelled.
      const size_t tail = strlen(rest + end);
      if (next_len + tail >= kPathMax) return -ENAMETOOLONG;
      memcpy(done + next_len, rest + end, tail + 1);
      return 0;
    }
    if (Failed(r)) return r;
    if ((st.stx_mode & S_IFMT) != S_IFLNK) {
      done_len = next_len;
      pos = end;
      continue;
    }
    // A link's directory must be watched, for the host to point the link elsewhere.
    if (Failed(wd)) return wd;
    if (!tracked && !TrackLookUp(w, static_cast<int>(wd), rest + pos, n, kMaxWalkDirs)) {
      return -ELOOP;
    }
    if (++hops > kMaxSymlinkHops) return -ELOOP;
    long got = SRT_SYS(__NR_readlinkat, AT_FDCWD, done, link, kPathMax - 1);
    if (Failed(got)) return got;
    if (got == 0) return -ENOENT;
    link[got] = 0;
    done[done_len] = 0;
    // The rest of the name now: the link's text, then what came after the link.
    const size_t tail = strlen(rest + end);
    if (static_cast<size_t>(got) + tail >= kPathMax) return -ENAMETOOLONG;
    memmove(rest + got, rest + end, tail + 1);
    memcpy(rest, link, static_cast<size_t>(got));
    pos = 0;
    if (link[0] == '/') {
      done_len = 0;
      done[0] = 0;
    }
  }
  if (done_len == 0) memcpy(done, "/", 2);
  return 0;
}

// The masked copy bwrap made, copied once more into a tmpfs of the watcher's own (detached: no
// path leads to it), from which a read-only bind goes on a new entry. (bwrap's own copy cannot
// be bound again: its file is unlinked, and the kernel mounts no unlinked file.) Returns the
// tmpfs's mount fd (the copy is its file "m"), or -errno.
constexpr size_t kMaxMaskedBytes = 64u << 20;
long PrivateCopyOf(int masked) {  // `masked`: open for reading
  struct statx st {};
  long r = SRT_SYS(__NR_statx, masked, "", AT_EMPTY_PATH, STATX_SIZE | STATX_MODE, &st);
  if (Failed(r)) return r;
  if (st.stx_size > kMaxMaskedBytes) return -EFBIG;
  long mnt = DetachedTmpfs("0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (Failed(mnt)) return mnt;
  long in = SRT_SYS(__NR_fcntl, masked, F_DUPFD_CLOEXEC, 0);
  long out = Failed(in) ? in
                        : SRT_SYS(__NR_openat, mnt, "m",
                                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  // With the mode of bwrap's copy (a tool that checks a key file's mode sees no change).
  r = Failed(out) ? out : SRT_SYS(__NR_fchmod, out, st.stx_mode & 0777);
  static char buf[65536];
  while (!Failed(r)) {
    long n = SRT_SYS(__NR_read, in, buf, sizeof buf);
    if (n == -EINTR) continue;
    if (n <= 0) {
      r = n;
      break;
    }
    for (long at = 0; at < n && !Failed(r);) {
      long w = SRT_SYS(__NR_write, out, buf + at, static_cast<size_t>(n - at));
      if (w == -EINTR) continue;
      r = w;
      if (!Failed(w)) at += w;
    }
  }
  if (!Failed(in)) SRT_SYS(__NR_close, in);
  if (!Failed(out)) SRT_SYS(__NR_close, out);
  if (Failed(r)) {
    SRT_SYS(__NR_close, mnt);
    return r;
  }
  return mnt;
}

// Binds the private copy (PrivateCopyOf's mount `copy`) read-only onto `target`. 0 or -errno.
long BindMaskedCopy(int copy, int target) { return BindReadOnly(copy, "m", target); }

// Puts the cover of `w` back if the entry at its path is not covered. 0, or -errno.
long CoverOnce(Watched& w) {
  long fd = OpenNoSymlinks(w.path, 0);
  if (fd == -ENOENT) return 0;  // nothing there to show
  if (Failed(fd)) return fd;
  struct statx st {};
  long r =
      SRT_SYS(__NR_statx, fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO, &st);
  if (!Failed(r)) {
    const bool covered =
        w.kind == OpKind::kCover
            ? (st.stx_mode & S_IFMT) == S_IFCHR && st.stx_rdev_major == kNullMajor &&
                  st.stx_rdev_minor == kNullMinor
            : (st.stx_ino == w.mask_ino && st.stx_dev_major == w.mask_dev_major &&
               st.stx_dev_minor == w.mask_dev_minor) ||
                  (st.stx_ino == w.copy_ino && st.stx_dev_major == w.copy_dev_major &&
                   st.stx_dev_minor == w.copy_dev_minor);
    if (!covered && w.kind == OpKind::kCover) {
      r = CoverWithNull(static_cast<int>(fd));
    } else if (!covered) {
      // The same masked content again.
      r = w.mask < 0 ? w.mask : BindMaskedCopy(w.mask, static_cast<int>(fd));
    }
  }
  SRT_SYS(__NR_close, fd);
  return r;
}

// CoverOnce until it holds. ENOENT from move_mount means the entry found was being replaced or
// removed (the kernel marks it before it moves the new one in): looked up again, the name shows
// the new entry - and the rename's or unlink's own event follows anyway.
long EnsureCovered(Watched& w) {
  long r = -ENOENT;
  for (int attempt = 0; attempt < 64 && r == -ENOENT; ++attempt) r = CoverOnce(w);
  return r == -ENOENT ? 0 : r;
}

// Follows a spelled item's name again (FollowSpelled), watches its directory and covers what it
// reaches. The cover looks the walk's result up following no link, so a link the host makes on
// the way between the walk and the cover (a directory moved away, then a link put in its place)
// fails it with ELOOP: the name is walked again then, a few times, before that counts.
long FollowAndCover(int inotify, Watched& w) {
  long r = -ELOOP;
  for (int attempt = 0; attempt < 8 && r == -ELOOP; ++attempt) {
    r = FollowSpelled(inotify, w);
    if (!Failed(r)) r = WatchDirectoryOf(inotify, w);
    if (!Failed(r)) r = EnsureCovered(w);
  }
  return r;
}

// Stops the sandbox: a file it must not see could not be covered again. srt reports it (the
// error names the file) once the sandbox is gone.
[[noreturn]] void FailClosed(int ctl, int init_pidfd, const Watched& w, long err) {
  constexpr int kSigkill = 9;
  ReportFailure(ctl, -1, wire::kStageCover, err, w.spelled ? w.spelled : w.path);
  SRT_SYS(__NR_pidfd_send_signal, init_pidfd, kSigkill, 0, 0);
  rt::Exit(1);
}

// A failure of the watch's set-up (SetUpCoverWatch): reported, naming the file; no command has
// run, and srt stops the sandbox. Returns `err`.
long CoverSetUpFailed(int ctl, const Watched& w, long err) {
  ReportFailure(ctl, -1, wire::kStageCover, err, w.spelled ? w.spelled : w.path);
  return err;
}

// Sets up the watch of `items` in this process, in the sandbox's namespaces: the masks' private
// copies, an inotify instance (`*inotify_out`, or -1) with every directory watched, then each
// item covered again where the host changed it between the covers and the watches. Everything
// the host changes from now on is queued in the instance, for ServeCoverWatch. 0, or -errno
// once reported.
long SetUpCoverWatch(Watched* items, size_t count, int ctl, long* inotify_out) {
  long inotify = SRT_SYS(__NR_inotify_init1, IN_CLOEXEC | IN_NONBLOCK);
  *inotify_out = inotify;
  for (size_t i = 0; i < count; ++i) {
    Watched& w = items[i];
    if (w.spelled && w.kind == OpKind::kMask) {
      // The masked copy of the file it names (items[i - 1] or an item before it, in plan order).
      size_t of = i;
      while (of > 0 && items[of].spelled) --of;
      if (items[of].spelled) return CoverSetUpFailed(ctl, w, -EINVAL);
      const Watched& m = items[of];
      w.mask = m.mask;
      w.mask_ino = m.mask_ino;
      w.mask_dev_major = m.mask_dev_major;
      w.mask_dev_minor = m.mask_dev_minor;
      w.copy_ino = m.copy_ino;
      w.copy_dev_major = m.copy_dev_major;
      w.copy_dev_minor = m.copy_dev_minor;
    } else if (w.kind == OpKind::kMask) {
      // bwrap's masked copy: a file of its tmpfs, already unlinked there. Anything else means
      // the host replaced the file before now, and that is no copy to put back.
      open_how how{};
      how.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
      how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
      long fd = SRT_SYS(__NR_openat2, AT_FDCWD, w.path, &how, sizeof how);
      struct statx st {};
      long r = Failed(fd) ? fd
                          : SRT_SYS(__NR_statx, fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
                                    STATX_TYPE | STATX_INO | STATX_NLINK, &st);
      if (!Failed(r) && st.stx_nlink != 0) r = -ESTALE;
      if (!Failed(r)) r = PrivateCopyOf(static_cast<int>(fd));
      if (!Failed(fd)) SRT_SYS(__NR_close, fd);
      if (Failed(r)) return CoverSetUpFailed(ctl, w, r);
      w.mask = static_cast<int>(r);
      w.mask_ino = st.stx_ino;
      w.mask_dev_major = st.stx_dev_major;
      w.mask_dev_minor = st.stx_dev_minor;
      struct statx copy {};
      r = SRT_SYS(__NR_statx, w.mask, "m", AT_SYMLINK_NOFOLLOW, STATX_INO, &copy);
      if (Failed(r)) return CoverSetUpFailed(ctl, w, r);
      w.copy_ino = copy.stx_ino;
      w.copy_dev_major = copy.stx_dev_major;
      w.copy_dev_minor = copy.stx_dev_minor;
    }
    if (!Failed(inotify)) {
      long r = w.spelled ? FollowSpelled(static_cast<int>(inotify), w) : 0;
      if (!Failed(r)) r = WatchDirectoryOf(static_cast<int>(inotify), w);
      if (Failed(r)) return CoverSetUpFailed(ctl, w, r);
    }
  }
  // What the host changed between the covers and the watches.
  for (size_t i = 0; i < count; ++i) {
    long r = Failed(inotify) ? inotify : EnsureCovered(items[i]);
    if (r == -ELOOP && items[i].spelled) r = FollowAndCover(static_cast<int>(inotify), items[i]);
    if (Failed(r)) return CoverSetUpFailed(ctl, items[i], r);
  }
  return 0;
}

// The watcher's life once SetUpCoverWatch is done: serve the queued and coming changes until
// the sandbox's PID 1 is gone.
[[noreturn]] void ServeCoverWatch(Watched* items, size_t count, long inotify, int ctl,
                                  int init_pidfd) {
  SRT_SYS(__NR_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0);
  // The window between a host's rename and the new cover is the watcher's wake-up delay, on a
  // busy machine mostly the scheduler's: a real-time priority shortens it where the caller may
  // have one (root); elsewhere the call fails and nothing changes. The watcher sleeps in ppoll
  // but for a few system calls per host-side change.
  constexpr int kSchedFifo = 1;
  const int priority = 1;
  SRT_SYS(__NR_sched_setscheduler, 0, kSchedFifo, &priority);
  alignas(8) static uint8_t buf[16384];
  for (;;) {
    PollFd p[2] = {{static_cast<int>(inotify), kPollIn, 0}, {init_pidfd, kPollIn, 0}};
    long n = SRT_SYS(__NR_ppoll, p, 2, 0, 0, 0);
    if (n == -EINTR) continue;
    if (Failed(n) || p[1].revents) rt::Exit(0);  // the sandbox is gone
    long got = SRT_SYS(__NR_read, inotify, buf, sizeof buf);
    if (got == -EAGAIN || got == -EINTR) continue;
    if (Failed(got)) rt::Exit(1);
    // Each entry an event names is looked at again, as it is now (a name can be moved away and
    // back within one batch); an event on a directory itself, or a lost one, has every entry
    // of that directory looked at. Work per event stays bounded by the entries of that name,
    // whatever the command does in a watched directory of a write root.
    for (long at = 0; at + static_cast<long>(sizeof(inotify_event)) <= got;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
      at += static_cast<long>(sizeof(inotify_event) + e->len);
      const bool overflow = (e->mask & IN_Q_OVERFLOW) != 0;
      const bool lost = (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) != 0;
      for (size_t i = 0; i < count; ++i) {
        Watched& w = items[i];
        if (w.spelled) {
          // A link on the way may point elsewhere now: the name is followed again when the
          // host changes those directories (the work is bounded by kMaxSymlinkHops, times
          // FollowAndCover's attempts).
          bool hit = w.dir_wd == e->wd;
          for (size_t k = 0; k < w.walk_wd_count; ++k) hit = hit || w.walk_wds[k] == e->wd;
          // In those directories only the names the walk looked up matter, besides the
          // directory itself (an event without a name) and, while the walk's end is missing,
          // anything in the directory above it: what the command makes and removes there
          // under other names costs a comparison, not a walk (as for the items below).
          if (hit && !lost && e->len > 0 && !(w.dir_wd == e->wd && w.above != 0)) {
            hit = WalkLookedUp(w, e->wd, e->name);
          }
          if (!overflow && !hit) continue;
          const long r = FollowAndCover(static_cast<int>(inotify), w);
          if (Failed(r)) FailClosed(ctl, init_pidfd, w, r);
          continue;
        }
        if (!overflow && w.dir_wd != e->wd) continue;
        if (!overflow && !lost && w.above == 0 && e->len > 0 &&
            !StrEqual(BaseName(w.path), e->name)) {
          continue;
        }
        long r = 0;
        if (lost || overflow || w.above != 0) {
          // The directory itself was replaced, or (watching a directory above it) may have come
          // back: watch the one at its path now.
          if (w.dir_wd >= 0 && lost) SRT_SYS(__NR_inotify_rm_watch, inotify, w.dir_wd);
          r = WatchDirectoryOf(static_cast<int>(inotify), w);
        }
        if (!Failed(r)) r = EnsureCovered(w);
        if (Failed(r)) FailClosed(ctl, init_pidfd, w, r);
      }
    }
  }
}

// Starts the watcher for the plan's covers and masks, if it has any. It watches before this
// returns: the set-up is this process's, only the serving is the watcher's, so nothing waits for
// the watcher to be scheduled. False once a failure is reported.
bool StartCoverWatcher(const AgentPlan& plan, int ctl, int init_pidfd) {
  auto failed = [ctl](long err) {
    ReportFailure(ctl, -1, wire::kStageCover, err, "watch the covered files");
    return false;
  };
  size_t count = 0, spelled = 0;
  for (size_t i = 0; i < plan.op_count; ++i) {
    if (plan.ops[i].kind == OpKind::kCover || plan.ops[i].kind == OpKind::kMask) ++count;
    if (plan.ops[i].spelled) ++spelled;
  }
  if (count == 0) return true;
  // The items, then a name's worth of room for each that has a spelling.
  const size_t bytes = count * sizeof(Watched) + spelled * kPathMax;
  long mem =
      SRT_SYS(__NR_mmap, 0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (Failed(mem)) return failed(mem);
  auto* items = reinterpret_cast<Watched*>(mem);
  char* targets = reinterpret_cast<char*>(items + count);
  size_t n = 0, room = 0;
  for (size_t i = 0; i < plan.op_count; ++i) {
    const AgentOp& op = plan.ops[i];
    if (op.kind == OpKind::kCover || op.kind == OpKind::kMask) {
      Watched& w = items[n];
      w = Watched{op.path, op.kind, -1,         0,       -1, 0, 0,  0, 0,
                  0,       0,       op.spelled, nullptr, {}, 0, {}, 0, false};
      if (op.spelled) {
        const size_t len = strlen(op.path);
        if (len >= kPathMax) {
          SRT_SYS(__NR_munmap, mem, bytes);
          return failed(-ENAMETOOLONG);
        }
        w.target = targets + room++ * kPathMax;
        memcpy(w.target, op.path, len + 1);
        w.path = w.target;
      }
      ++n;
    }
  }
  long inotify = -1;
  bool ok = !Failed(SetUpCoverWatch(items, count, ctl, &inotify));
  long child = ok ? SRT_SYS(__NR_clone, SIGCHLD, 0, 0, 0, 0) : -1;
  if (child == 0) ServeCoverWatch(items, count, inotify, ctl, init_pidfd);
  // The watcher has its own copies of the instance and the masks' private copies.
  if (!Failed(inotify)) SRT_SYS(__NR_close, inotify);
  for (size_t i = 0; i < count; ++i) {
    if (items[i].mask >= 0 && !items[i].spelled) SRT_SYS(__NR_close, items[i].mask);
  }
  SRT_SYS(__NR_munmap, mem, bytes);
  if (ok && Failed(child)) return failed(child);
  return ok;
}

// The sandbox's /dev/pts (bubblewrap's --dev: its own devpts instance, "ptmxmode=0666,mode=620"),
// where a command makes its own ptys (script, tmux, ssh -t), gets the limit a devpts has no
// default for: without it, a command could take every pty the host's kernel.pty.max leaves to
// devpts instances other than the host's own (shared with every container and sandbox). A
// remount resets the options it does not name, so bubblewrap's are named again. Nothing when the
// sandbox has no devpts there. Returns 0 or -errno.
long LimitSandboxPtys() {
  constexpr long kDevptsSuperMagic = 0x1cd1;
  constexpr const char* kMaxSandboxPtys = "256";
  long dir = OpenNoSymlinks("/dev/pts", O_DIRECTORY);
  if (dir == -ENOENT) return 0;
  if (Failed(dir)) return dir;
  long statfs[16] = {};  // struct statfs starts with f_type
  long r = SRT_SYS(__NR_fstatfs, dir, statfs);
  if (Failed(r) || statfs[0] != kDevptsSuperMagic) {
    SRT_SYS(__NR_close, dir);
    return Failed(r) ? r : 0;
  }
  long fs =
      SRT_SYS(__NR_fspick, dir, "",
              FSPICK_CLOEXEC | FSPICK_NO_AUTOMOUNT | FSPICK_SYMLINK_NOFOLLOW | FSPICK_EMPTY_PATH);
  SRT_SYS(__NR_close, dir);
  if (Failed(fs)) return fs;
  r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0);
  if (!Failed(r)) r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0620", 0);
  if (!Failed(r)) r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_SET_STRING, "max", kMaxSandboxPtys, 0);
  if (!Failed(r)) r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_CMD_RECONFIGURE, 0, 0, 0);
  SRT_SYS(__NR_close, fs);
  return r;
}

// kTagPtys: a devpts instance of at most `max` ptys, made in the sandbox's user namespace and
// mounted nowhere (never move_mount'ed): a detached mount, whose only handle is the descriptor
// returned. srt hands it to the sandbox's PID 1, which opens each attached command's terminal
// from its ptmx; no process in the sandbox has a path to that instance, so no other command (nor
// what one left behind) can open another's pty by name, as any could in the sandbox's /dev/pts.
// `max` also bounds what the commands' terminals take of the host's kernel.pty.max. Returns the
// mount's descriptor (CLOEXEC) or -errno.
long MakePtys(uint32_t max) {
  char value[16];
  rt::FormatInt(max, value);
  long fs = SRT_SYS(__NR_fsopen, "devpts", FSOPEN_CLOEXEC);
  if (Failed(fs)) return fs;
  // ptmx only for its owner (the sandbox's user, as PID 1 is); each pty for its opener (PID 1),
  // as a login's terminal is.
  long r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_SET_STRING, "ptmxmode", "0600", 0);
  if (!Failed(r)) r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0600", 0);
  if (!Failed(r)) r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_SET_STRING, "max", value, 0);
  if (!Failed(r)) r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_CMD_CREATE, 0, 0, 0);
  long mnt =
      Failed(r) ? r
                : SRT_SYS(__NR_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  SRT_SYS(__NR_close, fs);
  return mnt;
}

// Joins the sandbox's network namespace (`netns`) and makes the plan's sockets there, each
// handed to srt on `ctl` as it is made: srt serves them from the host side (no relay process
// runs inside the sandbox). Returns false once a failure is reported.
bool MakeNetSockets(int ctl, const AgentPlan& plan, long netns) {
  long r = SRT_SYS(__NR_setns, netns, CLONE_NEWNET);
  if (Failed(r)) {
    ReportFailure(ctl, -1, wire::kStageNetwork, r, "setns into the sandbox's network namespace");
    return false;
  }
  for (size_t i = 0; i < plan.socket_count; ++i) {
    long fd = MakeNetSocket(plan.sockets[i]);
    if (Failed(fd)) {
      char what[48] = "socket for port ";
      rt::FormatInt(plan.sockets[i].port, what + strlen(what));
      ReportFailure(ctl, -1, wire::kStageNetwork, fd, what);
      return false;
    }
    int32_t index = static_cast<int32_t>(i);
    r = SendMessage(ctl, wire::kMsgSocket, &index, sizeof index, static_cast<int>(fd));
    SRT_SYS(__NR_close, fd);
    if (Failed(r)) return false;
  }
  return true;
}

// Joins the sandbox's user, network (for the proxy's sockets, made first) and mount namespaces
// and applies the plan. A process cannot leave those namespaces again, so this runs in a child
// when the agent still has host work to do afterwards (removing placeholders). Returns 0, or
// reports the failure and returns 1.
int JoinAndApply(int ctl, const AgentPlan& plan, const bool* skip, const long* show_trees,
                 ProcMasks& proc_masks, int init_pidfd, TmpfsDevice& tmpfs) {
  long pid = PidOfPidfd(init_pidfd);
  if (Failed(pid)) {
    ReportFailure(ctl, -1, wire::kStageJoinNamespaces, pid, "find the sandbox's init");
    return 1;
  }
  long pidns = OpenNs(pid, "pid");
  long mntns = OpenNs(pid, "mnt");
  // Opened now: once in the sandbox's mount namespace, /proc is the sandbox's.
  long command_userns = plan.guard_call_count ? OpenNs(pid, "user") : 0;
  long netns = plan.socket_count ? OpenNs(pid, "net") : 0;
  if (Failed(netns)) {
    ReportFailure(ctl, -1, wire::kStageJoinNamespaces, netns,
                  "open the sandbox's network namespace");
    return 1;
  }
  if (Failed(pidns) || Failed(mntns)) {
    ReportFailure(ctl, -1, wire::kStageJoinNamespaces, Failed(pidns) ? pidns : mntns,
                  "open the sandbox's namespaces");
    return 1;
  }
  // The pid was read before the namespace files were opened; if init is still alive now, the pid
  // cannot have been reused in between.
  if (!Alive(init_pidfd)) {
    ReportFailure(ctl, -1, wire::kStageJoinNamespaces, -ESRCH, "the sandbox ended during set-up");
    return 1;
  }
  // The user namespace that owns the sandbox's pid namespace also owns its mount namespace
  // (bwrap may run the command in a nested one, which owns nothing).
  long userns = SRT_SYS(__NR_ioctl, pidns, NS_GET_USERNS, 0);
  if (Failed(userns)) {
    ReportFailure(ctl, -1, wire::kStageJoinNamespaces, userns, "NS_GET_USERNS");
    return 1;
  }
  // An unprivileged caller has capabilities over the sandbox's namespaces only from inside its
  // user namespace; root has them already, and must stay outside to name a group below. Root
  // without CAP_SYS_ADMIN (a container's root) is unprivileged here and joins too.
  const bool root = SRT_SYS(__NR_geteuid) == 0;
  const bool join = !root || !HasSysAdmin();
  long r = join ? SRT_SYS(__NR_setns, userns, CLONE_NEWUSER) : 0;
  if (Failed(r)) {
    ReportFailure(ctl, -1, wire::kStageJoinNamespaces, r, "setns into the sandbox");
    return 1;
  }
  // The proxy's sockets before any mount: srt installs their routes and serves them while the
  // mounts below are made, rather than after them (the command waits for both). The network
  // namespace is independent of the mount namespace joined next.
  if (plan.socket_count && !MakeNetSockets(ctl, plan, netns)) return 1;
  r = SRT_SYS(__NR_setns, mntns, CLONE_NEWNS);
  if (Failed(r)) {
    ReportFailure(ctl, -1, wire::kStageJoinNamespaces, r, "setns into the sandbox");
    return 1;
  }
  // The host's entries first, where bwrap's binds would have been: before every other mount of
  // the agent's, some of which may go below them (covers, protections).
  const char* show_failed = "";
  r = ShowHostEntries(plan, show_trees, &show_failed);
  if (Failed(r)) {
    ReportFailure(ctl, -1, wire::kStageShow, r, show_failed);
    return 1;
  }
  if (plan.proc == wire::kProcHidePid) {
    long fs = SRT_SYS(__NR_fspick, AT_FDCWD, "/proc", FSPICK_CLOEXEC | FSPICK_NO_AUTOMOUNT);
    r = Failed(fs) ? fs : SetHidePid(fs, root);
    if (!Failed(r)) r = SRT_SYS(__NR_fsconfig, fs, FSCONFIG_CMD_RECONFIGURE, 0, 0, 0);
    if (Failed(r)) {
      ReportFailure(ctl, -1, wire::kStageHidePid, r,
                    "remount the sandbox's /proc with hidepid=invisible");
      return 1;
    }
    SRT_SYS(__NR_close, fs);
  } else if (plan.proc == wire::kProcPrivate) {
    // Where even this fails (a /proc with parts covered, as in unprivileged containers), srt
    // stops rather than show the command every process of the host, as upstream does.
    r = MountPrivateProc(static_cast<int>(pidns), root);
    if (Failed(r)) {
      ReportFailure(ctl, -1, wire::kStageHidePid, r,
                    "mount a /proc of the sandbox's own processes over the host's "
                    "(enableWeakerNestedSandbox)");
      return 1;
    }
  }
  r = LimitSandboxPtys();
  if (Failed(r)) {
    ReportFailure(ctl, -1, wire::kStageTerminal, r, "limit the ptys of the sandbox's /dev/pts");
    return 1;
  }
  if (plan.ptys) {
    // Made as the owner of the sandbox's user namespace (mount-owning), where PID 1 is.
    long ptys = MakePtys(plan.ptys);
    if (Failed(ptys)) {
      ReportFailure(ctl, -1, wire::kStageTerminal, ptys,
                    "make a devpts instance for the commands' terminals");
      return 1;
    }
    r = SendMessage(ctl, wire::kMsgPtys, nullptr, 0, static_cast<int>(ptys));
    SRT_SYS(__NR_close, ptys);
    if (Failed(r)) return 1;
  }
  // After the /proc the command will see is in place (a private one is mounted over the host's
  // above), so that the covers are on that one. Only for a root caller, whose command is the
  // host's uid 0: any other uid is refused these by their modes, and a covered /proc is not
  // "fully visible", so the kernel would then refuse an unprivileged command's nested
  // sandboxes (allowNestedUserNamespaces) a /proc of their own, as it refuses a root caller's.
  const char* uncovered = "";
  r = root ? CoverProcHostWide(&uncovered) : 0;
  char unmasked[64] = "";
  if (!Failed(r) && root) {
    r = MaskProcFiles(proc_masks, unmasked);
    uncovered = unmasked;
  }
  // Mounted or not needed: the cover watcher forked below must not hold them.
  proc_masks.Close();
  if (Failed(r)) {
    char what[80] = "/proc/";
    const size_t len = strlen(uncovered) < sizeof what - 7 ? strlen(uncovered) : sizeof what - 7;
    memcpy(what + 6, uncovered, len);
    what[6 + len] = '\0';
    ReportFailure(ctl, -1, wire::kStageProcCover, r, what);
    return 1;
  }
  if (plan.tmpdir) {
    // kTagTmpdirIn: the tmpfs goes on the TMPDIR's kept parent, the TMPDIR is made inside it.
    char parent[kPathMax];
    const char* name = nullptr;
    const char* mount_point = plan.tmpdir;
    if (plan.tmpdir_in_kept_parent) {
      name = SplitParent(plan.tmpdir, parent);
      if (!name) {
        ReportFailure(ctl, -1, wire::kStageTmpdir, -EINVAL, plan.tmpdir);
        return 1;
      }
      mount_point = parent;
    }
    // In the sandbox the agent has the user namespace's ids (an unprivileged caller joined it
    // above), so the parent's owner is compared with those.
    r = MountPrivateTmpfs(mount_point, name, static_cast<uint32_t>(SRT_SYS(__NR_geteuid)), tmpfs);
    if (Failed(r)) {
      ReportFailure(ctl, -1, wire::kStageTmpdir, r, mount_point);
      return 1;
    }
  }
  for (size_t i = 0; i < plan.op_count; ++i) {
    if (skip[i]) continue;
    const AgentOp& op = plan.ops[i];
    if (op.kind == OpKind::kMask) continue;  // bwrap's; only watched (StartCoverWatcher)
    if (op.kind == OpKind::kShow || op.kind == OpKind::kSeal) continue;  // ShowHostEntries
    if (op.spelled) continue;  // the watcher follows the name (FollowSpelled)
    if (op.kind == OpKind::kCover) {
      long fd = OpenNoSymlinks(op.path, 0);
      if (fd == -ENOENT) continue;  // not in the sandbox (below a hidden directory, say)
      r = Failed(fd) ? fd : CoverWithNull(static_cast<int>(fd));
      if (!Failed(fd)) SRT_SYS(__NR_close, fd);
      if (Failed(r)) {
        ReportFailure(ctl, -1, wire::kStageCover, r, op.path);
        return 1;
      }
      continue;
    }
    bool pin = op.kind == OpKind::kPin;
    long fd = OpenNoSymlinks(op.path, pin ? O_DIRECTORY : 0);
    if (pin && fd == -ENOENT) continue;  // nothing left to pin
    if (!Failed(fd)) {
      r = BindOntoItself(static_cast<int>(fd), /*read_only=*/!pin);
      SRT_SYS(__NR_close, fd);
    }
    if (Failed(fd) || Failed(r)) {
      ReportFailure(ctl, -1, pin ? wire::kStagePin : wire::kStageProtect, Failed(fd) ? fd : r,
                    op.path);
      return 1;
    }
  }
  if (!StartCoverWatcher(plan, ctl, init_pidfd)) return 1;
  // The guard acts as the sandbox's user, inside the user namespace the command runs in (where
  // it drops every effective capability): PID 1's, which with --disable-userns is one bwrap
  // nests inside the namespace that owns the mounts. (Root stayed outside both so far, for the
  // hidepid group above.) Without the nesting (enableWeakerNestedSandbox) an agent that joined
  // above is in it already, where setns would fail with EINVAL.
  if (plan.guard_call_count) {
    r = Failed(command_userns) ? command_userns
        : join && SameNamespace(static_cast<int>(command_userns), static_cast<int>(userns))
            ? 0
            : SRT_SYS(__NR_setns, command_userns, CLONE_NEWUSER);
    if (Failed(r)) {
      ReportFailure(ctl, -1, wire::kStageJoinNamespaces, r, "setns into the command's users");
      return 1;
    }
    SRT_SYS(__NR_close, command_userns);
  }
  return 0;
}

// Opens the mount namespace of the sandbox whose PID 1 `init_pidfd` is, or returns -1 (then the
// last of the sandbox's processes to exit tears it down, as without this).
long HoldMountNamespace(int init_pidfd) {
  long pid = PidOfPidfd(init_pidfd);
  long ns = Failed(pid) ? pid : OpenNs(pid, "mnt");
  if (Failed(ns)) return -1;
  // Read before the namespace was opened: if PID 1 is still alive, the pid was not reused.
  if (!Alive(init_pidfd)) {
    SRT_SYS(__NR_close, ns);
    return -1;
  }
  return ns;
}

// Called once the sandbox and the guard are gone and the TMPDIR removed, with nothing left for
// the host but to drop the sandbox's mount namespace (`mntns`, or -1): the kernel then tears its
// mounts down, one by one after an RCU grace period, several ms with a hundred write roots. That
// is handed to a child that drops the namespace once the agent has exited, so that srt reaps
// the agent and reports the command's status without waiting for it. The child runs nothing of
// the sandbox's and holds nothing of srt's; it ignores every signal but SIGKILL, which ends it
// the same way. Nothing can enter the namespace meanwhile: no process is left in it. Returns
// false if there is no such child: the caller then drops the namespace itself.
bool HandOverTeardown(long mntns) {
  if (mntns < 0) return false;
  int lifeline[2] = {-1, -1};
  long r = SRT_SYS(__NR_pipe2, lifeline, O_CLOEXEC);
  // SIGCHLD: whoever inherits the child (init, or a subreaper) reaps it as any other.
  long child = Failed(r) ? r : SRT_SYS(__NR_clone, SIGCHLD, 0, 0, 0, 0);
  if (child == 0) {
    SRT_SYS(__NR_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0);
    // srt's socket above all: srt must not wait for this child.
    int keep[2] = {static_cast<int>(mntns), lifeline[0]};
    rt::CloseAllExcept(0, keep, 2);
    char byte = 0;
    while (SRT_SYS(__NR_read, lifeline[0], &byte, 1) == -EINTR) {
    }
    rt::Exit(0);  // drops the last reference: the mounts are torn down here
  }
  if (Failed(child)) {
    if (!Failed(r)) {
      SRT_SYS(__NR_close, lifeline[0]);
      SRT_SYS(__NR_close, lifeline[1]);
    }
    return false;
  }
  // The write end closes as the agent exits.
  SRT_SYS(__NR_close, lifeline[0]);
  SRT_SYS(__NR_close, mntns);
  return true;
}

// The guard's child, once JoinAndApply has put it in the sandbox's namespaces: waits for the
// command's filter listener (srt relays it from PID 1) and serves it until the command and
// everything it started are gone. Returns when there is nothing (more) to guard.
int Guard(int ctl, const AgentPlan& plan, const char* const* blocked, size_t blocked_count,
          size_t mounted_count, int init_pidfd, int host_proc, long self_pid,
          const TmpfsDevice& tmpfs) {
  // Nothing in the sandbox may read the guard's memory or take its descriptors.
  SRT_SYS(__NR_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0);
  int listener = -1;
  uint8_t msg[wire::kMaxMessageBytes];
  while (listener < 0) {
    PollFd p[2] = {{ctl, kPollIn, 0}, {init_pidfd, kPollIn, 0}};
    long r = SRT_SYS(__NR_ppoll, p, 2, 0, 0, 0);
    if (r == -EINTR) continue;
    if (Failed(r) || p[1].revents) return 0;  // the sandbox ended before the command ran
    int fd = -1;
    long n = ReceiveMessage(ctl, msg, sizeof msg, &fd);
    if (n <= 0) return 0;  // srt is gone: PID 1 takes the sandbox down
    if (TypeOf(msg, static_cast<size_t>(n)) == wire::kMsgGuardListener && fd >= 0) {
      listener = fd;
    } else if (fd >= 0) {
      SRT_SYS(__NR_close, fd);
    }
  }
  GuardSetup setup;
  setup.listener = listener;
  setup.ctl = ctl;
  setup.host_proc = host_proc;
  setup.self_pid = self_pid;
  setup.serve = (plan.guard_flags & wire::kGuardServe) != 0;
  setup.init_pidfd = init_pidfd;
  setup.calls = plan.guard_calls;
  setup.call_count = plan.guard_call_count;
  for (size_t i = 0; i < plan.guard_root_count; ++i) {
    setup.config.git_roots[setup.config.git_root_count++] = plan.guard_roots[i];
  }
  for (size_t i = 0; i < plan.guard_private_count; ++i) {
    setup.config.private_roots[setup.config.private_root_count++] = plan.guard_private[i];
  }
  setup.config.blocked = blocked;
  setup.config.blocked_count = blocked_count;
  setup.config.mounted = blocked + blocked_count;
  setup.config.mounted_count = mounted_count;
  setup.config.allow_git_config = (plan.guard_flags & wire::kGuardAllowGitConfig) != 0;
  setup.private_dev_known = tmpfs.known;
  setup.private_dev_major = tmpfs.major;
  setup.private_dev_minor = tmpfs.minor;
  return RunGuard(setup);
}

// Waits for the sandbox: srt sends a pidfd of its PID 1 once bwrap is done. Returns it, or -1
// on EOF (srt gave up or died before that: no command ever ran).
int AwaitSandbox(int ctl) {
  uint8_t msg[wire::kMaxMessageBytes];
  for (;;) {
    int init_pidfd = -1;
    long n = ReceiveMessage(ctl, msg, sizeof msg, &init_pidfd);
    if (n <= 0) return -1;
    if (TypeOf(msg, static_cast<size_t>(n)) == wire::kMsgSandbox && init_pidfd >= 0) {
      return init_pidfd;
    }
    if (init_pidfd >= 0) SRT_SYS(__NR_close, init_pidfd);
  }
}

}  // namespace

int RunAgent(int argc, char** argv) {
  int ctl = -1, plan_fd = -1;
  if (argc != 4 || !rt::ParseInt(argv[2], ctl) || !rt::ParseInt(argv[3], plan_fd)) {
    ReportFailure(-1, 2, wire::kStagePlan, -EINVAL, "usage: srt-init agent CTL-FD PLAN-FD");
    return 125;
  }
  // The agent must outlive srt to clean up: the session of its own srt spawns it in (from
  // before its execve) keeps the terminal's SIGINT/SIGHUP for srt's process group away from it,
  // and the other signals stay blocked (only SIGKILL ends it early).
  uint64_t all = ~0ULL;
  SRT_SYS(__NR_rt_sigprocmask, SIG_BLOCK, &all, 0, sizeof all);

  size_t size = 0;
  long map = rt::MapPlan(plan_fd, wire::kMaxPlanBytes, size);
  AgentPlan plan;
  const auto* data = reinterpret_cast<const uint8_t*>(map);
  if (Failed(map) || !DecodeAgentPlan(data, size, plan)) {
    ReportFailure(ctl, -1, wire::kStagePlan, -EINVAL, "malformed agent plan");
    return 125;
  }
  size_t slots = plan.op_count ? plan.op_count : 1;
  long ops_mem = SRT_SYS(__NR_mmap, 0, slots * (sizeof(AgentOp) + sizeof(char*) + sizeof(bool)),
                         PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (Failed(ops_mem)) {
    ReportFailure(ctl, -1, wire::kStagePlan, ops_mem, "memory for the plan");
    return 125;
  }
  plan.ops = reinterpret_cast<AgentOp*>(ops_mem);
  if (!DecodeAgentPlan(data, size, plan)) {
    ReportFailure(ctl, -1, wire::kStagePlan, -EINVAL, "malformed agent plan");
    return 125;
  }
  auto* blocked = reinterpret_cast<const char**>(plan.ops + slots);
  bool* skip = reinterpret_cast<bool*>(blocked + slots);
  int keep[1] = {ctl};
  rt::CloseAllExcept(3, keep, 1);
  const auto euid = static_cast<uint32_t>(SRT_SYS(__NR_geteuid));

  // The private TMPDIR's directory on the host. A kept parent (kTagTmpdirIn) is made if missing
  // and checked, and stays; otherwise the TMPDIR is a fresh name srt chose, created here so that
  // the agent removes it afterwards whatever happens to srt.
  int tmp_parent = -1;
  const char* tmp_name = nullptr;
  if (plan.tmpdir && plan.tmpdir_in_kept_parent) {
    char kept[kPathMax];
    const bool split = SplitParent(plan.tmpdir, kept) != nullptr;
    long r = split ? KeepTmpdirParent(kept, euid) : -EINVAL;
    if (Failed(r)) {
      ReportFailure(ctl, -1, wire::kStageKeptTmpdir, r, split ? kept : plan.tmpdir);
      return 1;
    }
  } else if (plan.tmpdir) {
    char parent[kPathMax];
    tmp_name = SplitParent(plan.tmpdir, parent);
    long dir = tmp_name ? OpenNoSymlinks(parent, O_DIRECTORY) : -EINVAL;
    long r = Failed(dir) ? dir : SRT_SYS(__NR_mkdirat, dir, tmp_name, 0700);
    if (Failed(r)) {
      if (!Failed(dir)) SRT_SYS(__NR_close, dir);
      ReportFailure(ctl, -1, wire::kStageTmpdir, r, plan.tmpdir);
      return 1;
    }
    tmp_parent = static_cast<int>(dir);
  }
  auto remove_tmpdir = [&] {
    if (tmp_parent < 0) return;
    SRT_SYS(__NR_unlinkat, tmp_parent, tmp_name, AT_REMOVEDIR);
    SRT_SYS(__NR_close, tmp_parent);
    tmp_parent = -1;
  };

  // A protected path that exists gets a read-only mount; one that does not is the guard's to
  // keep from being created. Looked at on the host (inside a bind: in its source) while bwrap is
  // still setting the sandbox up.
  // The ones that exist are refused by the guard's rules too, for the mount does not outlast the
  // host's replacing the entry (they are listed after the missing ones, in `blocked`).
  size_t blocked_count = 0;
  for (size_t i = 0; i < plan.op_count; ++i) {
    if (plan.ops[i].kind != OpKind::kProtect || !Missing(plan.ops[i].host_path, euid)) continue;
    skip[i] = true;
    blocked[blocked_count++] = plan.ops[i].path;
  }
  size_t mounted_count = 0;
  for (size_t i = 0; i < plan.op_count; ++i) {
    if (plan.ops[i].kind != OpKind::kProtect || skip[i]) continue;
    blocked[blocked_count + mounted_count++] = plan.ops[i].path;
  }

  // kTagShow: the host's entries cloned here, in the namespace bwrap copies, while it sets up;
  // mounted once the agent is in the sandbox's (JoinAndApply). Only an agent that can (root with
  // CAP_SYS_ADMIN, which stays outside the sandbox's user namespace) is sent any.
  const bool clones_host_mounts = euid == 0 && HasSysAdmin();
  long show_trees[wire::kMaxShows];
  size_t show_count = 0;
  for (size_t i = 0; i < plan.op_count; ++i) {
    if (plan.ops[i].kind != OpKind::kShow) continue;
    long tree = clones_host_mounts ? CloneHostEntry(plan.ops[i].path) : -EPERM;
    if (Failed(tree)) {
      ReportFailure(ctl, -1, wire::kStageShow, tree, plan.ops[i].path);
      remove_tmpdir();
      return 1;
    }
    show_trees[show_count++] = tree;
  }
  // The same agent learns which of procfs's files a root caller's command must not read, and
  // readies their covers, here too (MaskProcFiles then only mounts them); only with room under
  // the open-file limit for them beside the clones above and its own: else as before.
  ProcMasks proc_masks;
  uint64_t nofile[2] = {0, 0};  // soft, hard
  if (clones_host_mounts &&
      !Failed(SRT_SYS(__NR_prlimit64, 0, rt::kRlimitNofile, nullptr, nofile)) &&
      nofile[0] >= show_count + wire::kAgentOwnFds + ProcMasks::kMax) {
    PrepareProcMasks(proc_masks);
  }

  const bool guard = plan.guard_call_count > 0;
  if (!guard && tmp_parent < 0) {
    // Nothing to guard or clean up afterwards: no need to keep a host-side process.
    int init_pidfd = AwaitSandbox(ctl);
    if (init_pidfd < 0) return 1;
    TmpfsDevice tmpfs;
    if (JoinAndApply(ctl, plan, skip, show_trees, proc_masks, init_pidfd, tmpfs) != 0) return 1;
    SendMessage(ctl, wire::kMsgAgentReady, nullptr, 0);
    return 0;
  }
  // The host's /proc, for the guard (the pids it is told are the host's): opened before the
  // child joins the sandbox's mount namespace, where /proc is the sandbox's.
  long host_proc = SRT_SYS(__NR_openat, AT_FDCWD, "/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  // The child that joins the sandbox is forked now, while bwrap still sets up, so that the
  // sandbox's hand-over finds it waiting: it takes srt's message itself, then passes PID 1's
  // pidfd, and a reference to the sandbox's mount namespace (HoldMountNamespace: so that
  // neither PID 1 nor the guard is the last to leave it; tearing its mounts down, an RCU grace
  // period, several ms on a busy machine, is then left to HandOverTeardown's child, after srt has
  // the command's status) on to this process over `relay`. The reference is taken before the
  // child joins: it cannot come too late (after a short command has ended).
  int relay[2] = {-1, -1};
  long r = MessagePair(relay);
  const long agent_pid = SRT_SYS(__NR_getpid);
  long child = Failed(r) ? r : SRT_SYS(__NR_clone, SIGCHLD, 0, 0, 0, 0);
  if (child == 0) {
    // Until it has passed the sandbox on, this child dies with the agent: an agent killed
    // meanwhile (only SIGKILL gets through its mask) fails the launch, as it did before the
    // child existed, rather than leave the sandbox to a child whose host-side half is gone.
    SRT_SYS(__NR_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (SRT_SYS(__NR_getppid) != agent_pid) rt::Exit(1);  // it died before the prctl
    SRT_SYS(__NR_close, relay[0]);
    int init_pidfd = AwaitSandbox(ctl);
    if (init_pidfd < 0) rt::Exit(1);
    long held = HoldMountNamespace(init_pidfd);
    const int pass[2] = {init_pidfd, static_cast<int>(held)};
    SendMessageFds(relay[1], wire::kMsgSandbox, nullptr, 0, pass, held >= 0 ? 2 : 1);
    SRT_SYS(__NR_close, relay[1]);
    if (held >= 0) SRT_SYS(__NR_close, held);
    SRT_SYS(__NR_prctl, PR_SET_PDEATHSIG, 0, 0, 0, 0);
    TmpfsDevice tmpfs;
    if (JoinAndApply(ctl, plan, skip, show_trees, proc_masks, init_pidfd, tmpfs) != 0) {
      rt::Exit(1);
    }
    SendMessage(ctl, wire::kMsgAgentReady, nullptr, 0);
    if (!guard) rt::Exit(0);
    if (Failed(host_proc)) {
      ReportFailure(ctl, -1, wire::kStageGuard, host_proc, "open /proc");
      rt::Exit(1);
    }
    rt::Exit(Guard(ctl, plan, blocked, blocked_count, mounted_count, init_pidfd,
                   static_cast<int>(host_proc), SRT_SYS(__NR_getpid), tmpfs));
  }
  // The child mounts the clones (or fails): the copies here would only pin those mounts.
  for (size_t i = 0; i < show_count; ++i) SRT_SYS(__NR_close, show_trees[i]);
  proc_masks.Close();
  if (!Failed(r)) SRT_SYS(__NR_close, relay[1]);
  if (Failed(child)) {
    if (!Failed(r)) SRT_SYS(__NR_close, relay[0]);
    ReportFailure(ctl, -1, wire::kStageFork, child, "fork");
    remove_tmpdir();
    return 1;
  }
  // The sandbox's PID 1 and the mount namespace's reference (or none: PID 1 was gone), from the
  // child. EOF means srt gave up or died before handing the sandbox over (or the child failed);
  // no command ever ran.
  int init_pidfd = -1;
  long mntns = -1;
  {
    uint8_t msg[wire::kMaxMessageBytes];
    int fds[2] = {-1, -1};
    size_t got = 0;
    long n = ReceiveMessageFds(relay[0], msg, sizeof msg, fds, 2, &got);
    SRT_SYS(__NR_close, relay[0]);
    if (n > 0 && got >= 1) init_pidfd = fds[0];
    if (n > 0 && got == 2) mntns = fds[1];
    if (init_pidfd < 0) {
      int status = 0;
      while (SRT_SYS(__NR_wait4, child, &status, 0, 0) == -EINTR) {
      }
      remove_tmpdir();
      return 1;
    }
  }
  // The sandbox's PID 1 exits only after every process in the sandbox is gone; the guard then
  // has nothing left to serve either.
  PollFd p{init_pidfd, kPollIn, 0};
  while (SRT_SYS(__NR_ppoll, &p, 1, 0, 0, 0) == -EINTR) {
  }
  // The guard's listener hangs up now and it reports; one that is stuck (in a call the kernel
  // will not finish) is not waited for: the TMPDIR must go, and nothing may stay behind.
  long guard_pidfd = SRT_SYS(__NR_pidfd_open, child, 0);
  if (!Failed(guard_pidfd)) {
    PollFd g{static_cast<int>(guard_pidfd), kPollIn, 0};
    timespec grace{2, 0};
    while (SRT_SYS(__NR_ppoll, &g, 1, &grace, 0, 0) == -EINTR) {
    }
    if (!g.revents) SRT_SYS(__NR_kill, child, SIGKILL);
    SRT_SYS(__NR_close, guard_pidfd);
  }
  int status = 0;
  while (SRT_SYS(__NR_wait4, child, &status, 0, 0) == -EINTR) {
  }
  // Before srt hears that the agent is done: the TMPDIR's tmpfs is detached from the directory
  // in the namespace still held here (one RCU grace period), the directory removed.
  remove_tmpdir();
  if (!HandOverTeardown(mntns) && mntns >= 0) SRT_SYS(__NR_close, mntns);
  return 0;
}

}  // namespace srt::init
