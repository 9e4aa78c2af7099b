// SPDX-License-Identifier: Apache-2.0
// srt-init agent's write guard (see guard.h): the notification loop, path resolution as the
// kernel does it from the command's point of view, and each call performed on its behalf.
#include "guard.h"

#include <linux/capability.h>
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/ioctl.h>
#include <linux/openat2.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/signal.h>
#include <linux/stat.h>
#include <linux/wait.h>

#include "ipc.h"
#include "rt.h"

namespace srt::init {

namespace {

using rt::Failed;

constexpr size_t kPathMax = 4096;  // the kernel's PATH_MAX, with the NUL
constexpr size_t kNameMax = 255;
constexpr int kMaxLinks = 40;  // the kernel's MAXSYMLINKS
constexpr long kProcSuperMagic = 0x9fa0;
constexpr unsigned long long kProcRootIno = 1;
constexpr unsigned kAtEmptyPath = 0x1000;
constexpr unsigned kAtSymlinkFollow = 0x400;
constexpr unsigned kRenameExchange = 2;
constexpr uint32_t kAuditArchArm = 0x40000028;
constexpr uint32_t kAuditArchI386 = 0x40000003;

struct IoVec {
  void* base;
  size_t len;
};

// ---------------------------------------------------------------------------------------------
// Capabilities: none effective; CAP_SYS_PTRACE raised only to read a non-dumpable command,
// CAP_DAC_READ_SEARCH only to look at a directory the command made unreadable (so that it cannot
// hide what the rules look at), CAP_NET_BIND_SERVICE only to bind a port for a command that has
// it itself.

constexpr uint32_t kRaisePtrace = 1u << CAP_SYS_PTRACE;
constexpr uint32_t kRaiseDacRead = 1u << CAP_DAC_READ_SEARCH;
constexpr uint32_t kRaiseBindService = 1u << CAP_NET_BIND_SERVICE;

void SetEffective(uint32_t caps) {
  __user_cap_header_struct head{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (SRT_SYS(__NR_capget, &head, data) < 0) return;
  data[0].effective = caps & data[0].permitted;
  data[1].effective = 0;
  data[0].inheritable = data[1].inheritable = 0;
  SRT_SYS(__NR_capset, &head, data);
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(long r) : fd(Failed(r) ? -1 : static_cast<int>(r)) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd = o.fd;
      o.fd = -1;
    }
    return *this;
  }
  ~Fd() { Reset(); }
  void Reset() {
    if (fd >= 0) SRT_SYS(__NR_close, fd);
    fd = -1;
  }
  int Release() {
    int f = fd;
    fd = -1;
    return f;
  }
  explicit operator bool() const { return fd >= 0; }
};

size_t Append(char* buf, size_t at, size_t cap, const char* s) {
  while (*s && at + 1 < cap) buf[at++] = *s++;
  buf[at] = 0;
  return at;
}
size_t AppendInt(char* buf, size_t at, size_t cap, long v) {
  char num[24];
  rt::FormatInt(v, num);
  return Append(buf, at, cap, num);
}
bool StrEq(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

long StatxAt(int dirfd, const char* name, unsigned flags, struct statx& st) {
  return SRT_SYS(__NR_statx, dirfd, name, flags | AT_SYMLINK_NOFOLLOW,
                 STATX_TYPE | STATX_MODE | STATX_INO | STATX_MNT_ID, &st);
}
unsigned TypeOf(const struct statx& st) { return st.stx_mode & S_IFMT; }

bool OnProcfs(int fd, bool* is_root = nullptr) {
  long buf[16] = {};  // struct statfs starts with f_type
  if (Failed(SRT_SYS(__NR_fstatfs, fd, buf)) || buf[0] != kProcSuperMagic) return false;
  if (is_root) {
    struct statx st {};
    *is_root = !Failed(StatxAt(fd, "", AT_EMPTY_PATH, st)) && st.stx_ino == kProcRootIno;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// One notification: the command's thread, its arguments and the descriptors opened for it.

class Call {
 public:
  Call(const GuardSetup& s, const seccomp_notif& req) : s_(s), req_(req) {}

  long tid() const { return req_.pid; }
  uint64_t Arg(int i) const { return req_.data.args[i]; }
  // An `int` argument (a descriptor, flags): the low 32 bits, as the kernel reads it (a 32-bit
  // command's AT_FDCWD arrives zero-extended).
  int IntArg(int i) const { return static_cast<int>(static_cast<uint32_t>(req_.data.args[i])); }
  uint32_t arch() const { return req_.data.arch; }

  // Whether the notification still stands for the same live thread: checked after every look
  // at /proc/<tid>, so that a reused pid cannot lend another process's files.
  bool Valid() const {
    uint64_t id = req_.id;
    return SRT_SYS(__NR_ioctl, s_.listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
  }

  // /proc/<tid>/<what> on the host (root, cwd, fd/N, ns/mnt, ...), following the magic link;
  // O_PATH unless `access` says otherwise.
  long OpenProc(const char* what, unsigned flags = 0, unsigned access = O_PATH) const {
    char p[64];
    size_t n = AppendInt(p, 0, sizeof p, tid());
    n = Append(p, n, sizeof p, "/");
    Append(p, n, sizeof p, what);
    long fd = SRT_SYS(__NR_openat, s_.host_proc, p, access | O_CLOEXEC | flags);
    if (fd == -EACCES || fd == -EPERM) {  // a command that made itself non-dumpable
      SetEffective(kRaisePtrace);
      fd = SRT_SYS(__NR_openat, s_.host_proc, p, access | O_CLOEXEC | flags);
      SetEffective(0);
    }
    return fd;
  }

  // The command's descriptor `fd` for a base or a metadata call: /proc/<tid>/fd/<fd> opened
  // O_PATH, or, when the command made itself non-dumpable and that directory (root's then, mode
  // 0500) is closed to an unprivileged guard, the descriptor itself through pidfd_getfd. Its
  // users never read or write through it, so sharing the command's open file changes nothing.
  long OpenFd(int fd) const {
    char what[32] = "fd/";
    AppendInt(what, 3, sizeof what, fd);
    long got = OpenProc(what);
    if (got == -EACCES || got == -EPERM) got = TakeDescriptor(fd);
    return got;
  }

  // The command's root (absolute paths and symlinks start there).
  int Root() {
    if (!root_) root_ = Fd(OpenProc("root", O_DIRECTORY));
    if (root_ && root_ino_ == 0) {
      struct statx st {};
      if (!Failed(StatxAt(root_.fd, "", AT_EMPTY_PATH, st))) {
        root_ino_ = st.stx_ino;
        root_mnt_ = st.stx_mnt_id;
      }
    }
    return root_.fd;
  }
  bool IsRoot(int fd) {
    if (Root() < 0) return false;
    struct statx st {};
    return !Failed(StatxAt(fd, "", AT_EMPTY_PATH, st)) && st.stx_ino == root_ino_ &&
           st.stx_mnt_id == root_mnt_;
  }

  // Where a relative path starts: the working directory, or the descriptor `dirfd` (which must
  // then be a directory). Returns a new O_PATH fd or -errno.
  long Base(int dirfd) const {
    if (dirfd == AT_FDCWD) return OpenProc("cwd", O_DIRECTORY);
    if (dirfd < 0) return -EBADF;
    long fd = OpenFd(dirfd);
    if (fd == -ENOENT) return -EBADF;
    if (Failed(fd)) return fd;
    struct statx st {};
    if (Failed(StatxAt(static_cast<int>(fd), "", AT_EMPTY_PATH, st)) || TypeOf(st) != S_IFDIR) {
      SRT_SYS(__NR_close, fd);
      return -ENOTDIR;
    }
    return fd;
  }

  // process_vm_readv of one range; a command that made itself non-dumpable needs
  // CAP_SYS_PTRACE raised for it.
  long VmRead(IoVec& local, IoVec& remote) const {
    long n = SRT_SYS(__NR_process_vm_readv, tid(), &local, 1, &remote, 1, 0);
    if (n == -EPERM) {
      SetEffective(kRaisePtrace);
      n = SRT_SYS(__NR_process_vm_readv, tid(), &local, 1, &remote, 1, 0);
      SetEffective(0);
    }
    return n;
  }

  // A NUL-terminated string of the command's memory, read once into `buf` (kPathMax bytes).
  long ReadString(uint64_t addr, char* buf) const {
    IoVec local{buf, kPathMax};
    IoVec remote{reinterpret_cast<void*>(addr), kPathMax};
    long n = VmRead(local, remote);
    // A string that ends just before unmapped memory: read up to the page it ends in.
    if (n == -EFAULT) {
      size_t first = kPathMax - (addr & (kPathMax - 1));
      remote.len = local.len = first;
      n = SRT_SYS(__NR_process_vm_readv, tid(), &local, 1, &remote, 1, 0);
    }
    if (Failed(n)) return n == -ESRCH ? -ESRCH : -EFAULT;
    for (long i = 0; i < n; ++i) {
      if (buf[i] == 0) return i;
    }
    return n == static_cast<long>(kPathMax) ? -ENAMETOOLONG : -EFAULT;
  }

  // `len` bytes of the command's memory at `addr`; false unless all could be read.
  bool ReadMemory(uint64_t addr, void* buf, size_t len) const {
    IoVec local{buf, len};
    IoVec remote{reinterpret_cast<void*>(addr), len};
    return VmRead(local, remote) == static_cast<long>(len);
  }

  // The command's descriptor `fd` itself (pidfd_getfd), or -errno.
  long TakeDescriptor(int fd) const {
    constexpr unsigned kPidfdThread = O_EXCL;  // Linux 6.9: a pidfd of a thread
    long pidfd = SRT_SYS(__NR_pidfd_open, tid(), kPidfdThread);
    if (pidfd == -EINVAL) pidfd = SRT_SYS(__NR_pidfd_open, tid(), 0);
    if (Failed(pidfd)) return -ESRCH;
    long got = SRT_SYS(__NR_pidfd_getfd, pidfd, fd, 0);
    if (got == -EPERM) {
      SetEffective(kRaisePtrace);
      got = SRT_SYS(__NR_pidfd_getfd, pidfd, fd, 0);
      SetEffective(0);
    }
    SRT_SYS(__NR_close, pidfd);
    if (!Failed(got) && !Valid()) {
      SRT_SYS(__NR_close, got);
      return -ESRCH;
    }
    return got;
  }

  // Whether the command holds CAP_NET_BIND_SERVICE (CapEff in /proc/<tid>/status).
  bool MayBindServicePorts() const {
    char buf[kStatusBytes];
    const char* c = StatusValue(buf, "CapEff:");
    if (!c) return false;
    unsigned long long v = 0;
    for (; *c; ++c) {
      int d = *c >= '0' && *c <= '9' ? *c - '0' : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10 : -1;
      if (d < 0) break;
      v = v * 16 + static_cast<unsigned>(d);
    }
    return (v >> CAP_NET_BIND_SERVICE) & 1;
  }

  // The umask the command would create with (fs_struct is per process; the guard sets its own
  // to this before creating anything, so that default ACLs apply as they would).
  long Umask() const {
    char buf[kStatusBytes];
    const char* c = StatusValue(buf, "Umask:");
    if (!c) return 022;
    long v = 0;
    while (*c >= '0' && *c <= '7') v = v * 8 + (*c++ - '0');
    return v & 0777;
  }

  // The command's controlling terminal as /proc/<tid>/stat has it (tty_nr: major, minor), or
  // false if it has none.
  bool ControllingTerminal(unsigned& major, unsigned& minor) const {
    char buf[1024];
    long n = ReadProc("/stat", buf, sizeof buf);
    if (n <= 0) return false;
    // "pid (comm) state ppid pgrp session tty_nr ...": comm may hold anything, ')' included.
    const char* c = nullptr;
    for (long i = 0; i < n; ++i) {
      if (buf[i] == ')') c = buf + i + 1;
    }
    if (!c) return false;
    long tty_nr = -1;
    for (int field = 0; field < 5; ++field) {
      while (*c == ' ') ++c;
      if (field == 0) {  // the state, a letter
        if (!*c) return false;
        ++c;
        continue;
      }
      long v = 0;
      if (*c == '-') ++c;
      if (*c < '0' || *c > '9') return false;
      while (*c >= '0' && *c <= '9') v = v * 10 + (*c++ - '0');
      tty_nr = v;
    }
    if (tty_nr <= 0) return false;
    major = static_cast<unsigned>((tty_nr >> 8) & 0xfff);
    minor = static_cast<unsigned>((tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00));
    return Valid();
  }

  // The command's pid (or "tgid/task/tid") in the pid namespace of the sandbox's /proc, for
  // /proc/self and /proc/thread-self: the guard is not in that namespace.
  bool SelfInSandbox(bool thread, char* out, size_t cap) const {
    char buf[kStatusBytes];
    // NSpid/NStgid list the ids from the host's namespace inwards; the second is the sandbox's.
    auto second = [&](const char* key) {
      const char* c = StatusValue(buf, key);
      long ids[2] = {-1, -1};
      for (int i = 0; c && i < 2; ++i) {
        while (*c == ' ' || *c == '\t') ++c;
        if (*c < '0' || *c > '9') break;
        long v = 0;
        while (*c >= '0' && *c <= '9') v = v * 10 + (*c++ - '0');
        ids[i] = v;
      }
      return ids[1];
    };
    const long tgid = second("NStgid:");
    const long pid = second("NSpid:");
    if (tgid < 0 || pid < 0) return false;
    size_t at = AppendInt(out, 0, cap, tgid);
    if (thread) {
      at = Append(out, at, cap, "/task/");
      AppendInt(out, at, cap, pid);
    }
    return true;
  }

  const GuardSetup& setup() const { return s_; }

  // Whether the command's mount namespace is not the guard's (`own_ino`); true when it cannot
  // be told.
  bool ForeignMounts(unsigned long long own_ino) const {
    const long fd = OpenProc("ns/mnt");
    if (Failed(fd)) return true;
    struct statx st {};
    const bool same = !Failed(StatxAt(static_cast<int>(fd), "", AT_EMPTY_PATH, st)) &&
                      st.stx_ino == own_ino && Valid();
    SRT_SYS(__NR_close, fd);
    return !same;
  }

  // The command's user namespace, opened for setns(2), when it is not the guard's own (a
  // namespace the command made with allowNestedUserNamespaces); -1 when it is the guard's.
  long ForeignUserns(unsigned long long own_ino) const {
    const long fd = OpenProc("ns/user", 0, O_RDONLY);  // setns(2) takes no O_PATH
    if (Failed(fd)) return -1;
    struct statx st {};
    if (!Failed(StatxAt(static_cast<int>(fd), "", AT_EMPTY_PATH, st)) && st.stx_ino == own_ino) {
      SRT_SYS(__NR_close, fd);
      return -1;
    }
    return fd;
  }

 private:
  static constexpr size_t kStatusBytes = 2048;

  // /proc/<tid><what> read into `buf` (NUL-terminated): its length, or <= 0.
  long ReadProc(const char* what, char* buf, size_t cap) const {
    char p[48];
    Append(p, rt::FormatInt(tid(), p), sizeof p, what);
    Fd f(SRT_SYS(__NR_openat, s_.host_proc, p, O_RDONLY | O_CLOEXEC));
    if (!f) return -1;
    long n = SRT_SYS(__NR_read, f.fd, buf, cap - 1);
    buf[n > 0 ? n : 0] = 0;
    return n;
  }
  // The value of `key` ("Umask:") in /proc/<tid>/status, read into `buf` (kStatusBytes), its
  // leading blanks skipped; nullptr when there is none.
  const char* StatusValue(char* buf, const char* key) const {
    if (ReadProc("/status", buf, kStatusBytes) <= 0) return nullptr;
    const size_t klen = strlen(key);
    for (char* line = buf; *line;) {
      if (memcmp(line, key, klen) == 0) {
        const char* c = line + klen;
        while (*c == ' ' || *c == '\t') ++c;
        return c;
      }
      while (*line && *line != '\n') ++line;
      if (*line) ++line;
    }
    return nullptr;
  }

  const GuardSetup& s_;
  const seccomp_notif& req_;
  Fd root_;
  unsigned long long root_ino_ = 0, root_mnt_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Path resolution from the command's point of view.

// Where a path leads: the directory holding its last component and that component. When the
// path ends in a procfs magic link (/proc/self/fd/3, /proc/1234/cwd), `magic` holds an O_PATH
// of what the link points at and `parent`/`name` are that link's.
struct Place {
  Fd parent;
  char name[kNameMax + 1] = {};
  bool trailing_slash = false;
  Fd magic;
};

// `follow_final`: a final symlink is followed, to the place its target names (the kernel's
// LOOKUP_FOLLOW). Components are looked up one at a time with O_PATH|O_NOFOLLOW, symlinks read
// and spliced in, ".." kept at the command's root, and /proc/self and /proc/thread-self mean
// the command's; magic links are followed by the kernel. Returns 0 or -errno.
long Resolve(Call& call, int dirfd, const char* path, bool follow_final, Place& out) {
  static char rest[2 * kPathMax];
  static char scratch[2 * kPathMax];
  size_t rlen = strlen(path);
  if (rlen == 0) return -ENOENT;
  if (rlen >= kPathMax) return -ENAMETOOLONG;
  memcpy(rest, path, rlen + 1);
  out.trailing_slash = rest[rlen - 1] == '/';
  Fd cur;
  if (rest[0] == '/') {
    if (call.Root() < 0) return -ESRCH;
    cur = Fd(SRT_SYS(__NR_openat, call.Root(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  } else {
    long base = call.Base(dirfd);
    if (Failed(base)) return base;
    cur = Fd(base);
  }
  if (!cur) return -ESRCH;
  int links = 0;
  size_t at = 0;
  for (;;) {
    while (at < rlen && rest[at] == '/') ++at;
    size_t end = at;
    while (end < rlen && rest[end] != '/') ++end;
    if (end == at) {
      // Nothing after the last slash: the place is the directory itself ("/", "dir/").
      out.parent = static_cast<Fd&&>(cur);
      memcpy(out.name, ".", 2);
      return 0;
    }
    const size_t clen = end - at;
    if (clen > kNameMax) return -ENAMETOOLONG;
    char comp[kNameMax + 1];
    memcpy(comp, rest + at, clen);
    comp[clen] = 0;
    size_t next = end;
    while (next < rlen && rest[next] == '/') ++next;
    const bool last = next == rlen;
    const bool dot = StrEq(comp, ".");
    const bool dotdot = StrEq(comp, "..");

    if (last && (dot || dotdot)) {
      if (dotdot && call.IsRoot(cur.fd)) memcpy(comp, ".", 2);  // ".." of the root is the root
      out.parent = static_cast<Fd&&>(cur);
      memcpy(out.name, comp, strlen(comp) + 1);
      return 0;
    }
    if (dot) {
      at = next;
      continue;
    }
    if (dotdot) {
      if (!call.IsRoot(cur.fd)) {
        Fd up(SRT_SYS(__NR_openat, cur.fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!up) return -ENOENT;
        cur = static_cast<Fd&&>(up);
      }
      at = next;
      continue;
    }
    // /proc/self and /proc/thread-self name the caller, which the guard is not.
    bool proc_root = false;
    if (OnProcfs(cur.fd, &proc_root) && proc_root &&
        (StrEq(comp, "self") || StrEq(comp, "thread-self"))) {
      char self[64];
      if (!call.SelfInSandbox(comp[0] == 't', self, sizeof self)) return -ENOENT;
      size_t slen = strlen(self);
      size_t tail = rlen - end;
      if (slen + tail >= sizeof scratch) return -ENAMETOOLONG;
      // NOLINTNEXTLINE(bugprone-not-null-terminated-result): the next copy brings the NUL
      memcpy(scratch, self, slen);
      memcpy(scratch + slen, rest + end, tail + 1);
      memcpy(rest, scratch, slen + tail + 1);
      rlen = slen + tail;
      at = 0;
      continue;
    }
    struct statx st {};
    long r = StatxAt(cur.fd, comp, 0, st);
    if (last && (r == -ENOENT || (!Failed(r) && TypeOf(st) != S_IFLNK) ||
                 (!follow_final && !out.trailing_slash))) {
      out.parent = static_cast<Fd&&>(cur);
      memcpy(out.name, comp, clen + 1);
      return 0;
    }
    if (Failed(r)) return r;
    if (TypeOf(st) == S_IFLNK) {
      char target[kPathMax];
      long n = SRT_SYS(__NR_readlinkat, cur.fd, comp, target, sizeof target - 1);
      if (Failed(n)) return n;
      target[n] = 0;
      // A procfs link that is not textual (fd/N, cwd, root, exe...): the kernel follows it.
      if (OnProcfs(cur.fd) &&
          !(memcmp(target, "self", 4) == 0 || memcmp(target, "thread-self", 11) == 0)) {
        Fd followed(SRT_SYS(__NR_openat, cur.fd, comp, O_PATH | O_CLOEXEC));
        if (!followed) {
          SetEffective(
              kRaisePtrace);  // another process's link: the command may trace it, we may too
          followed = Fd(SRT_SYS(__NR_openat, cur.fd, comp, O_PATH | O_CLOEXEC));
          SetEffective(0);
        }
        if (!followed) return -ENOENT;
        if (last) {
          out.parent = static_cast<Fd&&>(cur);
          memcpy(out.name, comp, clen + 1);
          out.magic = static_cast<Fd&&>(followed);
          return 0;
        }
        cur = static_cast<Fd&&>(followed);
        at = next;
        continue;
      }
      if (++links > kMaxLinks) return -ELOOP;
      // The link's text, then what followed it.
      size_t tlen = static_cast<size_t>(n);
      size_t tail = rlen - end;
      if (tlen + tail >= sizeof scratch) return -ENAMETOOLONG;
      memcpy(scratch, target, tlen);
      memcpy(scratch + tlen, rest + end, tail + 1);
      memcpy(rest, scratch, tlen + tail + 1);
      rlen = tlen + tail;
      at = 0;
      if (target[0] == '/') {
        if (call.Root() < 0) return -ESRCH;
        cur = Fd(SRT_SYS(__NR_openat, call.Root(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!cur) return -ESRCH;
      }
      continue;
    }
    if (TypeOf(st) != S_IFDIR) return -ENOTDIR;
    Fd sub(SRT_SYS(__NR_openat, cur.fd, comp, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC));
    if (!sub) return SRT_SYS(__NR_openat, cur.fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    cur = static_cast<Fd&&>(sub);
    at = next;
  }
}

// What PathOf found.
enum class Named { kPath, kNoPath, kDeleted, kUnknown };

// The sandbox path of an open descriptor of ours. kNoPath: it has none (a pipe, a socket, an
// anonymous inode); kDeleted: its name is gone; kUnknown: the kernel would not say (a path
// longer than kPathMax). `out` is "" unless kPath.
Named PathOf(const GuardSetup& s, int fd, char* out) {
  char p[64];
  size_t n = AppendInt(p, 0, sizeof p, s.self_pid);
  n = Append(p, n, sizeof p, "/fd/");
  AppendInt(p, n, sizeof p, fd);
  long len = SRT_SYS(__NR_readlinkat, s.host_proc, p, out, kPathMax - 1);
  const bool whole = !Failed(len) && len > 0 && len < static_cast<long>(kPathMax) - 1;
  if (!whole) {
    out[0] = 0;
    return Named::kUnknown;
  }
  if (out[0] != '/') {
    out[0] = 0;
    return Named::kNoPath;
  }
  out[len] = 0;
  const char* deleted = " (deleted)";
  size_t dlen = strlen(deleted);
  if (static_cast<size_t>(len) > dlen && memcmp(out + len - dlen, deleted, dlen) == 0) {
    out[0] = 0;
    return Named::kDeleted;
  }
  return Named::kPath;
}

// A look that failed for want of permission is tried again with CAP_DAC_READ_SEARCH: a
// directory the command made unreadable (chmod 000) must not hide what is in it.
long StatxSeeing(int dirfd, const char* name, struct statx& st) {
  long r = StatxAt(dirfd, name, 0, st);
  if (r == -EACCES || r == -EPERM) {
    SetEffective(kRaiseDacRead);
    r = StatxAt(dirfd, name, 0, st);
    SetEffective(0);
  }
  return r;
}
long OpenDirSeeing(int dirfd, const char* name) {
  long r = SRT_SYS(__NR_openat, dirfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (r == -EACCES || r == -EPERM) {
    SetEffective(kRaiseDacRead);
    r = SRT_SYS(__NR_openat, dirfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
    SetEffective(0);
  }
  return r;
}

// The rules' questions, answered through the directory's descriptor. What cannot be looked at
// counts as there: the rules then refuse rather than allow.
class DirProbe final : public guard::Probe {
 public:
  DirProbe(int dir, const GuardSetup& setup) : setup_(setup) { level_[0] = dir; }
  bool Has(int up, const char* name) override {
    int fd = Level(up);
    if (fd < 0) return true;
    struct statx st {};
    return StatxSeeing(fd, name, st) != -ENOENT;
  }
  bool OnPrivateFileSystem() override {
    struct statx st {};
    return setup_.private_dev_known && !Failed(StatxAt(level_[0], "", AT_EMPTY_PATH, st)) &&
           st.stx_dev_major == setup_.private_dev_major &&
           st.stx_dev_minor == setup_.private_dev_minor;
  }

 private:
  int Level(int up) {
    if (up < 0 || up > 2) return -1;
    if (up == 0) return level_[0];
    if (!opened_[up - 1]) {
      int below = Level(up - 1);
      if (below >= 0) opened_[up - 1] = Fd(OpenDirSeeing(below, ".."));
    }
    return opened_[up - 1].fd;
  }
  const GuardSetup& setup_;
  int level_[1] = {-1};
  Fd opened_[2];
};

guard::Kind KindOf(unsigned type) {
  switch (type) {
    case S_IFREG:
      return guard::Kind::kFile;
    case S_IFDIR:
      return guard::Kind::kDirectory;
    case S_IFLNK:
      return guard::Kind::kSymlink;
    default:
      return guard::Kind::kOther;
  }
}

// ---------------------------------------------------------------------------------------------
// The guard's state across calls.

struct Counts {
  int32_t handled = 0;
  int32_t refused = 0;
};

class Guard {
 public:
  explicit Guard(const GuardSetup& s) : s_(s) {}

  // A command in a mount namespace of its own (allowNestedUserNamespaces) sees the sandbox's
  // directories at paths of its choosing (`mount --rbind W /mnt`): its paths say nothing of
  // where a change lands, so directories are placed by identity instead (PlaceByIdentity).
  bool foreign_mounts = false;

  // The rules' verdict on `change` of `name` in `dir`; a refusal is reported and becomes EPERM.
  long Judge(guard::Change change, guard::Kind kind, int dir, const char* name, uint32_t op) {
    char where[kPathMax];
    Named named = PathOf(s_, dir, where);
    if (named == Named::kPath && foreign_mounts) {
      char seen[kPathMax];
      memcpy(seen, where, strlen(where) + 1);
      named = PlaceByIdentity(dir, seen, where);
      if (named == Named::kNoPath) return 0;  // a file system of the command's own making
    }
    switch (named) {
      case Named::kPath:
        break;
      case Named::kDeleted:
        return -ENOENT;  // nothing can be made in a removed directory
      default:
        // Where it is decides the rules: a place the guard cannot name is refused.
        Report(op, "?", name, guard::Verdict::kProtectedPath);
        return -ENAMETOOLONG;
    }
    DirProbe probe(dir, s_);
    guard::Verdict v = guard::Judge(s_.config, change, kind, where, name, probe);
    if (v == guard::Verdict::kAllow) return 0;
    Report(op, where, name, v);
    if (v == guard::Verdict::kReadOnly) {
      struct statx st {};
      return ReadOnlyErrno(change, StatxSeeing(dir, name, st) != -ENOENT);
    }
    return -EPERM;
  }
  // The same for a file the guard holds no directory of (reached through a magic link, a
  // descriptor): judged by where it is now.
  long JudgeFile(guard::Change change, int file, uint32_t op) {
    char where[kPathMax];
    if (foreign_mounts) {
      // No directory to walk up from: refused on the file systems of the guard's roots.
      struct statx st {};
      if (Failed(StatxAt(file, "", AT_EMPTY_PATH, st)) || OnRootDevice(st)) {
        Report(op, "?", "", guard::Verdict::kProtectedPath);
        return -EPERM;
      }
      return 0;
    }
    switch (PathOf(s_, file, where)) {
      case Named::kPath:
        break;
      case Named::kNoPath:
      case Named::kDeleted:
        return 0;  // no name in any tree (a pipe), or none any more: nothing git could read
      case Named::kUnknown:
        Report(op, "?", "", guard::Verdict::kProtectedPath);
        return -ENAMETOOLONG;
    }
    size_t slash = strlen(where);
    while (slash > 0 && where[slash] != '/') --slash;
    char name[kNameMax + 1];
    size_t nlen = strlen(where + slash + 1);
    if (nlen > kNameMax) return -ENAMETOOLONG;
    memcpy(name, where + slash + 1, nlen + 1);
    if (slash == 0) {
      memcpy(where, "/", 2);
    } else {
      where[slash] = 0;
    }
    Fd dir(OpenDirSeeing(AT_FDCWD, where));
    if (!dir) {
      // Gone or moved meanwhile, or hidden: refused, never judged blind.
      Report(op, where, name, guard::Verdict::kProtectedPath);
      return -EACCES;
    }
    DirProbe probe(dir.fd, s_);
    guard::Verdict v = guard::Judge(s_.config, change, guard::Kind::kFile, where, name, probe);
    if (v == guard::Verdict::kAllow) return 0;
    Report(op, where, name, v);
    return v == guard::Verdict::kReadOnly ? ReadOnlyErrno(change, /*exists=*/true) : -EPERM;
  }

  Counts counts;

 private:
  // What the kernel answers `change` of a path under its read-only mount (which the host may
  // have detached meanwhile by replacing the entry): the guard gives the same answer.
  static long ReadOnlyErrno(guard::Change change, bool exists) {
    switch (change) {
      case guard::Change::kCreate:
      case guard::Change::kLinkIn:
        return exists ? -EEXIST : -EROFS;
      case guard::Change::kMoveIn:
        return exists ? -EBUSY : -EROFS;  // a mount point cannot be renamed over
      case guard::Change::kMoveOut:
        return -EBUSY;  // nor renamed away
      case guard::Change::kLinkSource:
        return -EXDEV;  // a hard link never crosses mounts
      case guard::Change::kWrite:
      case guard::Change::kExecutable:
        break;
    }
    return -EROFS;
  }

  struct Identity {
    uint32_t dev_major, dev_minor;
    uint64_t ino;
    const char* path;
  };

  void LearnRoots() {
    if (roots_known_) return;
    roots_known_ = true;
    auto learn = [&](const char* path) {
      struct statx st {};
      if (root_count_ == kMaxIdentities || Failed(StatxAt(AT_FDCWD, path, 0, st))) return;
      roots_[root_count_++] = {st.stx_dev_major, st.stx_dev_minor, st.stx_ino, path};
    };
    for (size_t i = 0; i < s_.config.git_root_count; ++i) learn(s_.config.git_roots[i]);
    for (size_t i = 0; i < s_.config.private_root_count; ++i) learn(s_.config.private_roots[i]);
  }

  bool OnRootDevice(const struct statx& st) {
    LearnRoots();
    for (size_t i = 0; i < root_count_; ++i) {
      if (roots_[i].dev_major == st.stx_dev_major && roots_[i].dev_minor == st.stx_dev_minor) {
        return true;
      }
    }
    return false;
  }

  // Where `dir` is in the sandbox's tree: walking up from it to a guard root (the same device
  // and inode), with the names below that root taken from `seen`, the command's path of it.
  // kNoPath: on none of the roots' file systems (nothing reaches the host through the guard's
  // view of it); kUnknown: on one of them, but below no root it can be placed under (a
  // subdirectory of a root mounted elsewhere) - refused.
  Named PlaceByIdentity(int dir, const char* seen, char* out) {
    LearnRoots();
    Fd cur(SRT_SYS(__NR_openat, dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
    struct statx first {};
    if (!cur || Failed(StatxAt(cur.fd, "", AT_EMPTY_PATH, first))) return Named::kUnknown;
    for (int up = 0; up < 1024; ++up) {
      struct statx st {};
      if (Failed(StatxAt(cur.fd, "", AT_EMPTY_PATH, st))) break;
      for (size_t i = 0; i < root_count_; ++i) {
        const Identity& r = roots_[i];
        if (r.dev_major != st.stx_dev_major || r.dev_minor != st.stx_dev_minor ||
            r.ino != st.stx_ino) {
          continue;
        }
        // The last `up` components of `seen` are the names from the root down to `dir`.
        size_t at = strlen(seen);
        for (int k = 0; k < up; ++k) {
          while (at > 0 && seen[at - 1] != '/') --at;
          if (at == 0) return Named::kUnknown;
          --at;
        }
        size_t rlen = strlen(r.path);
        size_t tail = strlen(seen + at);
        if (rlen + tail + 1 >= kPathMax) return Named::kUnknown;
        memcpy(out, r.path, rlen);
        if (rlen == 1 && tail > 0) rlen = 0;  // the root "/"
        memcpy(out + rlen, seen + at, tail + 1);
        return Named::kPath;
      }
      if (st.stx_attributes & STATX_ATTR_MOUNT_ROOT) break;  // no root, and ".." leaves its tree
      Fd parent(OpenDirSeeing(cur.fd, ".."));
      if (!parent) break;
      cur = static_cast<Fd&&>(parent);
    }
    return OnRootDevice(first) ? Named::kUnknown : Named::kNoPath;
  }

  static constexpr size_t kMaxIdentities = 2 * guard::kMaxRoots;
  Identity roots_[kMaxIdentities] = {};
  size_t root_count_ = 0;
  bool roots_known_ = false;

  void Report(uint32_t op, const char* dir, const char* name, guard::Verdict v) {
    ++counts.refused;
    if (static_cast<uint32_t>(counts.refused) > wire::kMaxGuardReports) return;
    uint8_t msg[wire::kMaxMessageBytes - 4];
    uint32_t head[2] = {op, static_cast<uint32_t>(v)};
    memcpy(msg, head, sizeof head);
    size_t at = sizeof head;
    auto put = [&](const char* s) {
      while (*s && at + 1 < sizeof msg) msg[at++] = static_cast<uint8_t>(*s++);
    };
    put(dir[0] ? dir : "?");
    if (!(dir[0] == '/' && dir[1] == 0)) put("/");
    put(name);
    msg[at++] = 0;
    TrySendMessage(s_.ctl, wire::kMsgGuardDenied, msg, at);
  }

  const GuardSetup& s_;
};

// A descriptor for the command: installed in its table, which completes its call (the kernel
// answers with the new number). Closes ours.
long Inject(const GuardSetup& s, uint64_t id, int fd, bool cloexec) {
  seccomp_notif_addfd add{};
  add.id = id;
  add.flags = SECCOMP_ADDFD_FLAG_SEND;
  add.srcfd = static_cast<uint32_t>(fd);
  add.newfd_flags = cloexec ? O_CLOEXEC : 0;
  long r = SRT_SYS(__NR_ioctl, s.listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
  SRT_SYS(__NR_close, fd);
  return r;
}

// Opens `place` for the command with its flags. An open of a FIFO for reading or writing alone
// waits for the other end, so it is done by a child of the guard (which answers the call
// itself) while the guard goes on serving. `magic`: the FIFO is the guard's descriptor `dir`
// (reached through a magic link), reopened through the child's own /proc entry. Returns
// kAnswered or -errno.
constexpr long kAnswered = 1L << 40;

bool OpenWaits(unsigned type, int flags) {
  return type == S_IFIFO && (flags & O_NONBLOCK) == 0 && (flags & O_ACCMODE) != O_RDWR;
}

long OpenFifo(const GuardSetup& s, uint64_t id, int dir, const char* name, int flags,
              bool magic = false) {
  long child = SRT_SYS(__NR_clone, SIGCHLD, 0, 0, 0, 0);
  if (Failed(child)) return child;
  if (child == 0) {
    SRT_SYS(__NR_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    long fd;
    if (magic) {
      char p[64];
      size_t n = AppendInt(p, 0, sizeof p, SRT_SYS(__NR_getpid));
      n = Append(p, n, sizeof p, "/fd/");
      AppendInt(p, n, sizeof p, dir);
      fd = SRT_SYS(__NR_openat, s.host_proc, p, (flags & ~(O_CREAT | O_EXCL)) | O_CLOEXEC, 0);
    } else {
      fd = SRT_SYS(__NR_openat, dir, name, flags | O_NOFOLLOW | O_CLOEXEC, 0);
    }
    if (Failed(fd)) {
      seccomp_notif_resp resp{};
      resp.id = id;
      resp.error = static_cast<int32_t>(fd);
      SRT_SYS(__NR_ioctl, s.listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    } else {
      Inject(s, id, static_cast<int>(fd), (flags & O_CLOEXEC) != 0);
    }
    rt::Exit(0);
  }
  return kAnswered;
}

// /dev/tty is its opener's controlling terminal, which the guard (no process of the command's
// session) does not have; /proc/<tid>/stat names it only by its device number (tty_nr).
//
// A plain run's only terminals are ptys of the sandbox's own /dev/pts (srt-init makes the
// command's there): the guard opens the entry there that the caller's controlling terminal is,
// checked to be that device.
//
// A warm sandbox's commands get ptys of a devpts instance no path reaches (serve_role.cc), whose
// numbers the sandbox's /dev/pts repeats: its entry of the same number is another pty, perhaps
// one a hostile command made to be found here. So the terminal is taken from the caller's own
// standard descriptors instead: the first of 0-2 that is a character device of that number is
// reopened (the same open file's inode, through its O_PATH descriptor), which gives the caller
// nothing it does not hold. A caller whose terminal is none of them gets ENXIO, as the kernel
// answers one without a terminal.
long OpenControllingTerminal(Call& call, int flags) {
  unsigned major = 0, minor = 0;
  if (!call.ControllingTerminal(major, minor)) return -ENXIO;
  constexpr unsigned kPtySlaveMajor = 136, kPtySlaveMajors = 8;  // UNIX98 pty replicas
  if (major < kPtySlaveMajor || major >= kPtySlaveMajor + kPtySlaveMajors) return -ENXIO;
  const auto reopen_flags = static_cast<uint64_t>((flags & ~(O_CREAT | O_EXCL | O_TRUNC)) |
                                                  O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
  auto is_it = [&](int fd) {
    struct statx st {};
    return !Failed(StatxAt(fd, "", AT_EMPTY_PATH, st)) && TypeOf(st) == S_IFCHR &&
           st.stx_rdev_major == major && st.stx_rdev_minor == minor;
  };
  Fd fd;
  if (call.setup().serve) {
    for (int slot = 0; slot < 3 && !fd; ++slot) {
      Fd held(call.OpenFd(slot));
      if (!held || !is_it(held.fd) || !call.Valid()) continue;
      char p[64];
      size_t n = AppendInt(p, 0, sizeof p, call.setup().self_pid);
      n = Append(p, n, sizeof p, "/fd/");
      AppendInt(p, n, sizeof p, held.fd);
      fd = Fd(SRT_SYS(__NR_openat, call.setup().host_proc, p,
                      static_cast<int>(reopen_flags & ~uint64_t{O_NOFOLLOW}), 0));
    }
  } else {
    char name[32] = "dev/pts/";
    AppendInt(name, 8, sizeof name,
              static_cast<long>(major - kPtySlaveMajor) * 256 + static_cast<long>(minor));
    open_how how{};
    how.flags = reopen_flags;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    fd = Fd(SRT_SYS(__NR_openat2, call.Root(), name, &how, sizeof how));
  }
  if (!fd || !is_it(fd.fd)) return -ENXIO;
  if ((flags & O_CLOEXEC) == 0) {
    long r = SRT_SYS(__NR_fcntl, fd.fd, F_SETFD, 0);
    if (Failed(r)) return r;
  }
  return fd.Release();
}

// open, openat and creat. `id` lets a FIFO's open answer on its own.
long DoOpen(Guard& g, Call& call, uint64_t id, int dirfd, const char* path, int flags, long mode,
            uint32_t op) {
  if ((flags & __O_TMPFILE) == __O_TMPFILE) {
    // An unnamed file in a directory: nothing gets a name (a later linkat is judged).
    Place place;
    long r = Resolve(call, dirfd, path, /*follow_final=*/true, place);
    if (Failed(r)) return r;
    SRT_SYS(__NR_umask, call.Umask());
    return SRT_SYS(__NR_openat, place.parent.fd, place.name, flags, mode);
  }
  const bool creat = (flags & O_CREAT) != 0;
  const bool excl = creat && (flags & O_EXCL) != 0;
  // O_CREAT|O_EXCL never follows a final symlink (EEXIST), O_NOFOLLOW refuses one (ELOOP).
  const bool follow = !excl && (flags & O_NOFOLLOW) == 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    Place place;
    long r = Resolve(call, dirfd, path, follow, place);
    if (Failed(r)) return r;
    if (place.magic) {
      // Reopening what a magic link points at (/proc/self/fd/N): judged where it is now.
      r = g.JudgeFile(guard::Change::kWrite, place.magic.fd, op);
      if (Failed(r)) return r;
      struct statx st {};
      if (!Failed(StatxAt(place.magic.fd, "", AT_EMPTY_PATH, st)) && OpenWaits(TypeOf(st), flags)) {
        return OpenFifo(call.setup(), id, place.magic.fd, nullptr, flags, /*magic=*/true);
      }
      char p[64];
      size_t n = AppendInt(p, 0, sizeof p, call.setup().self_pid);
      n = Append(p, n, sizeof p, "/fd/");
      AppendInt(p, n, sizeof p, place.magic.fd);
      return SRT_SYS(__NR_openat, call.setup().host_proc, p, flags & ~(O_CREAT | O_EXCL), mode);
    }
    if (creat && place.trailing_slash) return -EISDIR;
    struct statx st {};
    r = StatxAt(place.parent.fd, place.name, 0, st);
    if (r == -ENOENT) {
      if (!creat) return -ENOENT;
      r = g.Judge(guard::Change::kCreate, guard::Kind::kFile, place.parent.fd, place.name, op);
      if (Failed(r)) return r;
      SRT_SYS(__NR_umask, call.Umask());
      long fd = SRT_SYS(__NR_openat, place.parent.fd, place.name,
                        flags | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
      if (fd == -EEXIST && !excl) continue;  // made meanwhile from outside: open that one
      return fd;
    }
    if (Failed(r)) return r;
    if (excl) return -EEXIST;
    const unsigned type = TypeOf(st);
    if (type == S_IFCHR && st.stx_rdev_major == 5 && st.stx_rdev_minor == 0) {
      return OpenControllingTerminal(call, flags);
    }
    if (type == S_IFREG || type == S_IFDIR) {
      r = g.Judge(guard::Change::kWrite, KindOf(type), place.parent.fd, place.name, op);
      if (Failed(r)) return r;
    }
    const int open_flags = (flags & ~(O_CREAT | O_EXCL)) | O_NOFOLLOW;
    if (OpenWaits(type, flags)) {
      return OpenFifo(call.setup(), id, place.parent.fd, place.name, open_flags);
    }
    long fd = SRT_SYS(__NR_openat, place.parent.fd, place.name, open_flags, mode);
    if (fd == -ENOENT) continue;  // removed meanwhile: as if it had not been there
    return fd;
  }
  return -EAGAIN;
}

// mkdir, mknod and symlink: a new entry at `path` (a final symlink is not followed).
long DoCreate(Guard& g, Call& call, int dirfd, const char* path, guard::Kind kind, uint32_t op,
              long mode, uint64_t dev, const char* link_target) {
  Place place;
  long r = Resolve(call, dirfd, path, /*follow_final=*/false, place);
  if (Failed(r)) return r;
  r = g.Judge(guard::Change::kCreate, kind, place.parent.fd, place.name, op);
  if (Failed(r)) return r;
  if (kind == guard::Kind::kSymlink) {
    return SRT_SYS(__NR_symlinkat, link_target, place.parent.fd, place.name);
  }
  SRT_SYS(__NR_umask, call.Umask());
  if (kind == guard::Kind::kDirectory) {
    return SRT_SYS(__NR_mkdirat, place.parent.fd, place.name, mode);
  }
  return SRT_SYS(__NR_mknodat, place.parent.fd, place.name, mode, dev);
}

long DoLink(Guard& g, Call& call, int olddirfd, const char* oldpath, int newdirfd,
            const char* newpath, unsigned flags, uint32_t op) {
  if (flags & ~(kAtEmptyPath | kAtSymlinkFollow)) return -EINVAL;
  Place from;
  Fd source;  // an O_PATH of the file itself (AT_EMPTY_PATH, or through a magic link)
  if ((flags & kAtEmptyPath) && oldpath[0] == 0) {
    source = Fd(call.OpenFd(olddirfd));
    if (!source) return olddirfd == AT_FDCWD ? -ENOENT : -EBADF;
  } else {
    long r = Resolve(call, olddirfd, oldpath, (flags & kAtSymlinkFollow) != 0, from);
    if (Failed(r)) return r;
    if (from.magic) source = static_cast<Fd&&>(from.magic);
  }
  long r = source ? g.JudgeFile(guard::Change::kLinkSource, source.fd, op)
                  : g.Judge(guard::Change::kLinkSource, guard::Kind::kFile, from.parent.fd,
                            from.name, op);
  if (Failed(r)) return r;
  Place to;
  r = Resolve(call, newdirfd, newpath, /*follow_final=*/false, to);
  if (Failed(r)) return r;
  r = g.Judge(guard::Change::kLinkIn, guard::Kind::kFile, to.parent.fd, to.name, op);
  if (Failed(r)) return r;
  if (source) {
    char p[64];
    size_t n = AppendInt(p, 0, sizeof p, call.setup().self_pid);
    n = Append(p, n, sizeof p, "/fd/");
    AppendInt(p, n, sizeof p, source.fd);
    return SRT_SYS(__NR_linkat, call.setup().host_proc, p, to.parent.fd, to.name, kAtSymlinkFollow);
  }
  return SRT_SYS(__NR_linkat, from.parent.fd, from.name, to.parent.fd, to.name, 0);
}

long DoRename(Guard& g, Call& call, int olddirfd, const char* oldpath, int newdirfd,
              const char* newpath, unsigned flags, uint32_t op) {
  Place from, to;
  long r = Resolve(call, olddirfd, oldpath, /*follow_final=*/false, from);
  if (Failed(r)) return r;
  r = Resolve(call, newdirfd, newpath, /*follow_final=*/false, to);
  if (Failed(r)) return r;
  struct statx src {
  }, dst{};
  r = StatxAt(from.parent.fd, from.name, 0, src);
  if (Failed(r)) return r;
  r = g.Judge(guard::Change::kMoveOut, KindOf(TypeOf(src)), from.parent.fd, from.name, op);
  if (Failed(r)) return r;
  r = g.Judge(guard::Change::kMoveIn, KindOf(TypeOf(src)), to.parent.fd, to.name, op);
  if (Failed(r)) return r;
  if (flags & kRenameExchange) {
    // Both names get the other's entry.
    r = StatxAt(to.parent.fd, to.name, 0, dst);
    if (Failed(r)) return r;
    r = g.Judge(guard::Change::kMoveIn, KindOf(TypeOf(dst)), from.parent.fd, from.name, op);
    if (Failed(r)) return r;
  }
  return SRT_SYS(__NR_renameat2, from.parent.fd, from.name, to.parent.fd, to.name, flags);
}

long DoTruncate(Guard& g, Call& call, const char* path, uint64_t length, uint32_t op) {
  Place place;
  long r = Resolve(call, AT_FDCWD, path, /*follow_final=*/true, place);
  if (Failed(r)) return r;
  Fd target;
  if (place.magic) {
    r = g.JudgeFile(guard::Change::kWrite, place.magic.fd, op);
    if (Failed(r)) return r;
    char p[64];
    size_t n = AppendInt(p, 0, sizeof p, call.setup().self_pid);
    n = Append(p, n, sizeof p, "/fd/");
    AppendInt(p, n, sizeof p, place.magic.fd);
    target = Fd(SRT_SYS(__NR_openat, call.setup().host_proc, p, O_WRONLY | O_CLOEXEC | O_NONBLOCK));
  } else {
    struct statx st {};
    r = StatxAt(place.parent.fd, place.name, 0, st);
    if (Failed(r)) return r;
    if (TypeOf(st) == S_IFDIR) return -EISDIR;
    if (TypeOf(st) != S_IFREG) return -EINVAL;
    r = g.Judge(guard::Change::kWrite, guard::Kind::kFile, place.parent.fd, place.name, op);
    if (Failed(r)) return r;
    target = Fd(SRT_SYS(__NR_openat, place.parent.fd, place.name,
                        O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  }
  if (!target) return -EACCES;
  return SRT_SYS(__NR_ftruncate, target.fd, length);
}

// chmod, fchmodat(2) and fchmod with an execute bit: only a hook made runnable is refused.
long DoChmod(Guard& g, Call& call, int dirfd, const char* path, long mode, unsigned flags,
             uint32_t op, int fd_arg) {
  Fd file;
  if (fd_arg >= 0 || ((flags & kAtEmptyPath) && path[0] == 0)) {
    file = Fd(call.OpenFd(fd_arg >= 0 ? fd_arg : dirfd));
    if (!file) return -EBADF;
  } else {
    Place place;
    long r = Resolve(call, dirfd, path, (flags & AT_SYMLINK_NOFOLLOW) == 0, place);
    if (Failed(r)) return r;
    if (place.magic) {
      file = static_cast<Fd&&>(place.magic);
    } else {
      r = g.Judge(guard::Change::kExecutable, guard::Kind::kFile, place.parent.fd, place.name, op);
      if (Failed(r)) return r;
      if (flags & AT_SYMLINK_NOFOLLOW) {
        return SRT_SYS(452 /* fchmodat2 */, place.parent.fd, place.name, mode, AT_SYMLINK_NOFOLLOW);
      }
      return SRT_SYS(__NR_fchmodat, place.parent.fd, place.name, mode);
    }
  }
  long r = g.JudgeFile(guard::Change::kExecutable, file.fd, op);
  if (Failed(r)) return r;
  char p[64];
  size_t n = AppendInt(p, 0, sizeof p, call.setup().self_pid);
  n = Append(p, n, sizeof p, "/fd/");
  AppendInt(p, n, sizeof p, file.fd);
  return SRT_SYS(__NR_fchmodat, call.setup().host_proc, p, mode);
}

// bind: an AF_UNIX socket's name in the filesystem is a new entry, judged and made where the
// command's path leads; every other bind is done as the command would (no name appears). The
// guard binds the socket it took from the command, with the address it read once: neither can
// change under it.
long DoBind(Guard& g, Call& call, int sockfd, uint64_t addr, uint32_t addrlen, uint32_t op) {
  constexpr int kAfUnix = 1, kSolSocket = 1, kSoDomain = 39;
  constexpr size_t kSunPathOffset = 2, kSunPathMax = 108;
  if (addrlen > 128) return -EINVAL;  // sizeof(struct sockaddr_storage)
  uint8_t sa[128] = {};
  if (addrlen > 0 && !call.ReadMemory(addr, sa, addrlen)) return -EFAULT;
  if (!call.Valid()) return -ESRCH;
  Fd sock(call.TakeDescriptor(sockfd));
  if (!sock) return -EBADF;
  int domain = 0;
  uint32_t dlen = sizeof domain;
  const bool is_socket =
      !Failed(SRT_SYS(__NR_getsockopt, sock.fd, kSolSocket, kSoDomain, &domain, &dlen));
  const int family = addrlen >= 2 ? sa[0] | sa[1] << 8 : -1;
  if (is_socket && domain == kAfUnix && family == kAfUnix && addrlen > kSunPathOffset &&
      sa[kSunPathOffset] != 0) {
    // A name in the filesystem (not abstract, not unnamed): up to its NUL or the address's end.
    char path[kSunPathMax + 1] = {};
    size_t plen = 0;
    while (kSunPathOffset + plen < addrlen && plen < kSunPathMax && sa[kSunPathOffset + plen]) {
      path[plen] = static_cast<char>(sa[kSunPathOffset + plen]);
      ++plen;
    }
    Place place;
    long r = Resolve(call, AT_FDCWD, path, /*follow_final=*/false, place);
    if (Failed(r)) return r;
    struct statx st {};
    if (StatxAt(place.parent.fd, place.name, 0, st) != -ENOENT) return -EADDRINUSE;
    r = g.Judge(guard::Change::kCreate, guard::Kind::kOther, place.parent.fd, place.name, op);
    if (Failed(r)) return r;
    // The name, relative to its directory: bind(2) takes no directory descriptor.
    uint8_t local[kSunPathOffset + kSunPathMax] = {kAfUnix, 0};
    size_t nlen = strlen(place.name);
    if (nlen >= kSunPathMax) return -ENAMETOOLONG;
    memcpy(local + kSunPathOffset, place.name, nlen + 1);
    r = SRT_SYS(__NR_fchdir, place.parent.fd);
    if (Failed(r)) return r;
    SRT_SYS(__NR_umask, call.Umask());
    return SRT_SYS(__NR_bind, sock.fd, local, kSunPathOffset + nlen + 1);
  }
  const bool raise = call.MayBindServicePorts();
  if (raise) SetEffective(kRaiseBindService);
  long r = SRT_SYS(__NR_bind, sock.fd, sa, addrlen);
  if (raise) SetEffective(0);
  return r;
}

// Performs one call. Returns its result (>= 0), -errno, an fd to inject as `*inject`, or
// kAnswered when a child answers it.
long Serve(Guard& g, Call& call, uint64_t id, uint32_t op, int* inject, bool* cloexec) {
  static char a[kPathMax];
  static char b[kPathMax];
  auto str = [&](int arg, char* buf) { return call.ReadString(call.Arg(arg), buf); };
  long r;
  switch (op) {
    case wire::kGuardOpen:
    case wire::kGuardOpenat:
    case wire::kGuardCreat: {
      const int path_arg = op == wire::kGuardOpenat ? 1 : 0;
      if (Failed(r = str(path_arg, a))) return r;
      int flags = op == wire::kGuardCreat ? O_CREAT | O_WRONLY | O_TRUNC
                                          : call.IntArg(op == wire::kGuardOpenat ? 2 : 1);
      long mode = static_cast<long>(call.Arg(op == wire::kGuardOpenat  ? 3
                                             : op == wire::kGuardCreat ? 1
                                                                       : 2) &
                                    07777);
      int dirfd = op == wire::kGuardOpenat ? call.IntArg(0) : AT_FDCWD;
      if (!call.Valid()) return -ESRCH;
      long fd = DoOpen(g, call, id, dirfd, a, flags, mode, op);
      if (fd == kAnswered || Failed(fd)) return fd;
      *inject = static_cast<int>(fd);
      *cloexec = (flags & O_CLOEXEC) != 0;
      return 0;
    }
    case wire::kGuardMkdir:
    case wire::kGuardMkdirat: {
      const bool at = op == wire::kGuardMkdirat;
      if (Failed(r = str(at ? 1 : 0, a))) return r;
      if (!call.Valid()) return -ESRCH;
      return DoCreate(g, call, at ? call.IntArg(0) : AT_FDCWD, a, guard::Kind::kDirectory, op,
                      static_cast<long>(call.Arg(at ? 2 : 1) & 07777), 0, nullptr);
    }
    case wire::kGuardMknod:
    case wire::kGuardMknodat: {
      const bool at = op == wire::kGuardMknodat;
      if (Failed(r = str(at ? 1 : 0, a))) return r;
      if (!call.Valid()) return -ESRCH;
      const long mode = static_cast<long>(static_cast<uint32_t>(call.Arg(at ? 2 : 1)));
      const guard::Kind kind = KindOf(static_cast<unsigned>(mode) & S_IFMT);
      return DoCreate(g, call, at ? call.IntArg(0) : AT_FDCWD, a,
                      kind == guard::Kind::kDirectory ? guard::Kind::kOther : kind, op, mode,
                      call.Arg(at ? 3 : 2), nullptr);
    }
    case wire::kGuardSymlink:
    case wire::kGuardSymlinkat: {
      const bool at = op == wire::kGuardSymlinkat;
      if (Failed(r = str(0, b))) return r;
      if (Failed(r = str(at ? 2 : 1, a))) return r;
      if (!call.Valid()) return -ESRCH;
      return DoCreate(g, call, at ? call.IntArg(1) : AT_FDCWD, a, guard::Kind::kSymlink, op, 0, 0,
                      b);
    }
    case wire::kGuardLink:
    case wire::kGuardLinkat: {
      const bool at = op == wire::kGuardLinkat;
      if (Failed(r = str(at ? 1 : 0, a))) return r;
      if (Failed(r = str(at ? 3 : 1, b))) return r;
      if (!call.Valid()) return -ESRCH;
      return DoLink(g, call, at ? call.IntArg(0) : AT_FDCWD, a, at ? call.IntArg(2) : AT_FDCWD, b,
                    at ? static_cast<unsigned>(call.IntArg(4)) : 0, op);
    }
    case wire::kGuardRename:
    case wire::kGuardRenameat:
    case wire::kGuardRenameat2: {
      const bool at = op != wire::kGuardRename;
      if (Failed(r = str(at ? 1 : 0, a))) return r;
      if (Failed(r = str(at ? 3 : 1, b))) return r;
      if (!call.Valid()) return -ESRCH;
      const unsigned flags =
          op == wire::kGuardRenameat2 ? static_cast<unsigned>(call.IntArg(4)) : 0;
      return DoRename(g, call, at ? call.IntArg(0) : AT_FDCWD, a, at ? call.IntArg(2) : AT_FDCWD, b,
                      flags, op);
    }
    case wire::kGuardTruncate:
    case wire::kGuardTruncate64: {
      if (Failed(r = str(0, a))) return r;
      uint64_t length = call.Arg(1);
      if (op == wire::kGuardTruncate64) {
        // A 64-bit length in two 32-bit registers; ARM EABI first skips one to align the pair.
        const int lo = call.arch() == kAuditArchArm ? 2 : 1;
        length = (call.Arg(lo) & 0xffffffffULL) | (call.Arg(lo + 1) << 32);
      } else if (call.arch() == kAuditArchI386 || call.arch() == kAuditArchArm) {
        length = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(call.Arg(1))));
      }
      if (!call.Valid()) return -ESRCH;
      if (static_cast<int64_t>(length) < 0) return -EINVAL;
      return DoTruncate(g, call, a, length, op);
    }
    case wire::kGuardChmod: {
      if (Failed(r = str(0, a))) return r;
      if (!call.Valid()) return -ESRCH;
      return DoChmod(g, call, AT_FDCWD, a, static_cast<long>(call.Arg(1) & 07777), 0, op, -1);
    }
    case wire::kGuardFchmod:
      if (!call.Valid()) return -ESRCH;
      return DoChmod(g, call, AT_FDCWD, "", static_cast<long>(call.Arg(1) & 07777), 0, op,
                     call.IntArg(0));
    case wire::kGuardFchmodat:
    case wire::kGuardFchmodat2: {
      if (Failed(r = str(1, a))) return r;
      if (!call.Valid()) return -ESRCH;
      // fchmodat has no flags argument (its fourth register is whatever the caller left there).
      const unsigned flags =
          op == wire::kGuardFchmodat2 ? static_cast<unsigned>(call.IntArg(3)) : 0;
      if (flags & ~(AT_SYMLINK_NOFOLLOW | kAtEmptyPath)) return -EINVAL;
      return DoChmod(g, call, call.IntArg(0), a, static_cast<long>(call.Arg(2) & 07777), flags, op,
                     -1);
    }
    case wire::kGuardBind:
      return DoBind(g, call, call.IntArg(0), call.Arg(1), static_cast<uint32_t>(call.IntArg(2)),
                    op);
    default:
      return -ENOSYS;
  }
}

// Answers one call: its result, or the descriptor it returns installed in the command.
void Answer(const GuardSetup& setup, uint64_t id, long result, int inject, bool cloexec) {
  if (result == kAnswered) return;
  if (inject >= 0) {
    long r = Inject(setup, id, inject, cloexec);
    if (!Failed(r) || r == -ENOENT) return;
    result = r;
  }
  seccomp_notif_resp resp{};
  resp.id = id;
  if (Failed(result)) {
    resp.error = static_cast<int32_t>(result);
  } else {
    resp.val = result;
  }
  SRT_SYS(__NR_ioctl, setup.listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

// The guard's own namespace of a kind ("user", "mnt"): its inode number.
unsigned long long OwnNamespace(const GuardSetup& setup, const char* kind) {
  char p[48];
  size_t n = Append(p, rt::FormatInt(setup.self_pid, p), sizeof p, "/ns/");
  Append(p, n, sizeof p, kind);
  struct statx st {};
  Fd fd(SRT_SYS(__NR_openat, setup.host_proc, p, O_PATH | O_CLOEXEC));
  if (!fd || Failed(StatxAt(fd.fd, "", AT_EMPTY_PATH, st))) return 0;
  return st.stx_ino;
}

}  // namespace

int RunGuard(const GuardSetup& setup) {
  // The agent kills the guard if it outstays the sandbox; its own children (a FIFO's open,
  // a call of a nested namespace) go with it.
  SRT_SYS(__NR_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  seccomp_notif_sizes sizes{};
  if (Failed(SRT_SYS(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes))) return 1;
  const unsigned long long own_userns = OwnNamespace(setup, "user");
  const unsigned long long own_mntns = OwnNamespace(setup, "mnt");
  alignas(8) static uint8_t req_buf[1024];
  if (sizes.seccomp_notif > sizeof req_buf ||
      sizes.seccomp_notif_resp > sizeof(seccomp_notif_resp)) {
    return 1;
  }
  SetEffective(0);
  // The listener the current notification came from: a warm sandbox has one per command.
  GuardSetup current = setup;
  Guard guard(current);
  constexpr size_t kMaxListeners = wire::kMaxExecs;
  int listeners[kMaxListeners];
  size_t count = 0;
  listeners[count++] = setup.listener;
  bool more = setup.serve;
  for (;;) {
    if (count == 0 && !more) break;
    rt::PollFd p[kMaxListeners + 2];
    for (size_t i = 0; i < count; ++i) p[i] = {listeners[i], rt::kPollIn, 0};
    size_t np = count;
    if (more) {
      p[np++] = {setup.ctl, rt::kPollIn, 0};
      p[np++] = {setup.init_pidfd, rt::kPollIn, 0};
    }
    long n = SRT_SYS(__NR_ppoll, p, np, 0, 0, 0);
    // Reap the children that answered FIFO opens.
    while (SRT_SYS(__NR_wait4, -1, 0, WNOHANG, 0) > 0) {
    }
    if (n == -EINTR) continue;
    if (Failed(n)) break;
    const size_t polled = count;  // p[polled], p[polled + 1]: srt's socket, PID 1
    // One notification of the first listener that has one; hung-up listeners go.
    int ready = -1;
    for (size_t i = 0; i < count;) {
      if (p[i].revents & rt::kPollIn) {
        if (ready < 0) ready = listeners[i];
        ++i;
      } else if (p[i].revents) {  // POLLHUP: no process is left under this filter
        if (listeners[i] != setup.listener) SRT_SYS(__NR_close, listeners[i]);
        listeners[i] = listeners[count - 1];
        p[i] = p[count - 1];
        --count;
      } else {
        ++i;
      }
    }
    if (more && p[polled + 1].revents) more = false;  // the sandbox has ended
    if (more && p[polled].revents) {
      uint8_t msg[wire::kMaxMessageBytes];
      int fd = -1;
      long got = ReceiveMessage(setup.ctl, msg, sizeof msg, &fd);
      if (got <= 0) {
        more = false;
      } else if (TypeOf(msg, static_cast<size_t>(got)) == wire::kMsgGuardListener && fd >= 0 &&
                 count < kMaxListeners) {
        listeners[count++] = fd;
        fd = -1;
      }
      // Past kMaxListeners the command's guarded calls fail (ENOSYS) once its listener closes.
      if (fd >= 0) SRT_SYS(__NR_close, fd);
    }
    if (ready < 0) continue;
    current.listener = ready;
    memset(req_buf, 0, sizeof req_buf);
    auto* req = reinterpret_cast<seccomp_notif*>(req_buf);
    long r = SRT_SYS(__NR_ioctl, current.listener, SECCOMP_IOCTL_NOTIF_RECV, req);
    if (r == -EINTR || r == -ENOENT) continue;  // the caller died before we got to it
    if (Failed(r)) {
      for (size_t i = 0; i < count; ++i) {
        if (listeners[i] != ready) continue;
        if (ready != setup.listener) SRT_SYS(__NR_close, ready);
        listeners[i] = listeners[--count];
        break;
      }
      continue;
    }
    ++guard.counts.handled;
    uint32_t op = 0;
    for (size_t i = 0; i < setup.call_count; ++i) {
      if (setup.calls[i].arch == req->data.arch &&
          setup.calls[i].nr == static_cast<uint32_t>(req->data.nr)) {
        op = setup.calls[i].op;
        break;
      }
    }
    Call call(current, *req);
    int inject = -1;
    bool cloexec = false;
    // A command in a user namespace of its own (allowNestedUserNamespaces): some files check
    // the credentials of whoever opened them (a namespace's uid_map that the guard would open
    // for it), so the call is served by a child that joins the command's namespace.
    if (long userns = op ? call.ForeignUserns(own_userns) : -1; userns >= 0) {
      long child = SRT_SYS(__NR_clone, SIGCHLD, 0, 0, 0, 0);
      if (child == 0) {
        SRT_SYS(__NR_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        GuardSetup mine = current;
        mine.self_pid = SRT_SYS(__NR_getpid);  // the child reads its own descriptors' paths
        Guard child_guard(mine);
        Call child_call(mine, *req);
        child_guard.foreign_mounts = child_call.ForeignMounts(own_mntns);
        long result = SRT_SYS(__NR_setns, userns, CLONE_NEWUSER);
        if (!Failed(result))
          result = Serve(child_guard, child_call, req->id, op, &inject, &cloexec);
        Answer(mine, req->id, result, inject, cloexec);
        rt::Exit(0);
      }
      SRT_SYS(__NR_close, userns);
      if (Failed(child)) {
        Answer(current, req->id, child, -1, false);
        continue;
      }
      // One call at a time, as for every other: judging two at once (`HEAD` and `refs` made
      // side by side) would let both see a directory that is no repository yet. Whatever could
      // wait (a FIFO's open) the child hands to a child of its own.
      while (SRT_SYS(__NR_wait4, child, 0, 0, 0) == -EINTR) {
      }
      continue;
    }
    long result = op ? Serve(guard, call, req->id, op, &inject, &cloexec) : -ENOSYS;
    Answer(current, req->id, result, inject, cloexec);
  }
  SendInts(setup.ctl, wire::kMsgGuardDone, guard.counts.handled, guard.counts.refused);
  return 0;
}

}  // namespace srt::init
