// SPDX-License-Identifier: Apache-2.0
// init_protocol/wire: the messages between srt and srt-init (its in-sandbox `init` role and its
// host-side `agent` role). Header-only and free of libc so the freestanding srt-init can use it.
//
// Plans travel in sealed memfds as a sequence of records: u16 tag, u16 zero, u32 length,
// `length` bytes of payload (strings carry their terminating NUL). Control messages travel on
// SOCK_SEQPACKET socketpairs, one message per packet: u32 type followed by a fixed payload.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace srt::wire {

inline constexpr uint32_t kPlanMagic = 0x50545253;  // "SRTP"
inline constexpr uint32_t kPlanVersion = 1;
inline constexpr size_t kMaxPlanBytes = 16u << 20;  // argv and paths; ARG_MAX is far below
inline constexpr size_t kMaxRecords = 1u << 20;

enum Tag : uint16_t {
  // init plan
  kTagStderrFd = 2,  // u32: the caller's stderr (bwrap's own stderr is a diagnostics pipe)
  kTagKeepFd = 3,    // u32, repeated: caller fds the command inherits, by number
  kTagArg = 4,       // string, repeated: the command's argv
  kTagNofile = 5,    // u64 soft, u64 hard: RLIMIT_NOFILE for the command (srt raises its own
                     // for the proxy; the command gets the limit srt started with)
  kTagReopen = 7,    // u32 fd, u32 open flags, string path: the command gets this device (one of
                     // /dev/null, zero, full, random, urandom), opened in the sandbox, as fd
  kTagTerminal = 6,  // u32: bit n set = standard descriptor n gets the sandbox's own terminal
                     // (a pty init opens in the sandbox's /dev/pts; its master goes to srt)
  kTagServe = 8,     // u32 1: a warm sandbox (srt --serve): no kTagArg; init runs the commands
                     // srt sends (kMsgExec) until kMsgStop
  // exec plan (kMsgExec): kTagArg, kTagReopen, kTagTerminal as above, and
  kTagEnv = 9,   // string "NAME=value", repeated: the command's whole environment
  kTagCwd = 10,  // string, absolute: the command's working directory in the sandbox (also in a
                 // plain run's init plan, where it is required)
  // agent plan
  kTagProc = 21,       // u32 ProcMode: what the agent does to the sandbox's /proc
  kTagPin = 22,        // string: bind a directory onto itself (rename/rmdir -> EBUSY)
  kTagProtect = 23,    // string: make a path read-only recursively; block it if missing
  kTagTmpdir = 24,     // string: create this directory, mount a private tmpfs on it inside the
                       // sandbox, remove it when the sandbox is gone (the command's TMPDIR)
  kTagTmpdirIn = 34,   // string, instead of kTagTmpdir: the command's TMPDIR, made inside a
                       // private tmpfs the agent mounts on its parent. The parent is kept for
                       // the user's next sandboxes: made if missing, refused unless it is a
                       // directory of the agent's user with mode 0700 (never a symlink), never
                       // removed, so no sandbox makes or removes anything on the host's disk
  kTagNetSocket = 25,  // NetSocket: create this socket inside the sandbox's network namespace
                       // and send it to srt (kMsgSocket), in plan order
  kTagHostPath = 26,   // string: where the path of the kTagProtect record just before is on the
                       // host, when that differs (a path inside a bind)
  // The write guard (see GuardOp): the system calls the command's second seccomp filter hands
  // to the agent, and what the agent's rules need to know.
  kTagGuardCall = 27,     // GuardCall (12 bytes): a notified (architecture, number) and its GuardOp
  kTagGuardRoot = 28,     // string, repeated: a sandbox path below which git's rules hold
  kTagGuardPrivate = 29,  // string, repeated: a sandbox path below which nothing reaches the host
                          // (the private TMPDIR): no rules there
  kTagGuardFlags = 30,    // u32 GuardFlags
  kTagCover = 31,  // string: put a read-only, nodev /dev/null over this file in the sandbox (a
                   // denied file: open fails with EACCES); nothing when the sandbox has no such
                   // file. srt-agent does these rather than bwrap, which re-reads the whole mount
                   // table after every bind (a thousand denied files took seconds). Also
                   // sent for a denied file that does not exist yet: the agent covers it once
                   // the host makes it (see kTagMask)
  kTagMask = 32,   // string: a masked credential file bwrap bound (--ro-bind-data). The agent
                   // watches the directories of kTagCover and kTagMask paths and puts the same
                   // cover back when the host replaces or makes one of them (a host-side rename
                   // detaches the sandbox's mount on the old entry)
  // u32 1..kMaxPtys (a warm sandbox): the agent makes a devpts instance of at most this many
  // ptys, mounted nowhere, and sends it to srt (kMsgPtys), which hands it to init (kMsgServePtys):
  // each command's terminal is a pty of that instance, which no path in the sandbox reaches
  kTagPtys = 35,
  kTagSpelled = 33,  // string, repeated, only right after a kTagCover or kTagMask (or another
                     // kTagSpelled): how the settings name that file through symlinks. The agent
                     // also watches the directories of those symlinks and, when the host points
                     // one elsewhere (a Kubernetes secret volume's rotation), follows the name
                     // again in the sandbox and covers (masks) what it reaches. An agent that
                     // predates it refuses the plan.
  // Host entries a root caller's agent shows read-only in the sandbox instead of bwrap, which
  // re-reads the whole mount table after every bind (~0.1-0.3 ms each: the 32 /etc entries of an
  // srt-poller session were a third of its sandbox's start). Only from an agent with
  // CAP_SYS_ADMIN over the host's mount namespace: it clones each entry there (with what is
  // mounted below it) before it joins the sandbox, then mounts the clones in plan order before
  // any other mount of its own. The launcher hands it only entries whose mount point bwrap would
  // have made in a tmpfs of bwrap's own and on which nothing of bwrap's goes later.
  kTagShow = 36,  // string, repeated: the host's entry at this path, shown at the same path
                  // read-only, nosuid, nodev, everything below it too; at most kMaxShows
  kTagSeal = 37,  // string, repeated: a synthetic directory (bwrap's tmpfs) the agent makes
                  // read-only once the entries it shows in it are in place (bwrap's
                  // --remount-ro, which would have come before them)
};

// The most host entries one agent shows (kTagShow); the launcher leaves the rest to bwrap.
inline constexpr size_t kMaxShows = 256;
// The descriptors srt-agent holds besides what it clones before it joins the sandbox (the
// entries it shows, the /proc masks' covers): its plan, control socket, namespaces, pidfds and
// a few more, with room to spare. The launcher gives the shows the open-file limit less this,
// and the agent readies the covers only with room for them beyond it.
inline constexpr size_t kAgentOwnFds = 32;
// The most operations one agent plan holds: kTagShow, kTagSeal, kTagPin, kTagProtect, kTagCover,
// kTagMask and kTagSpelled records together.
inline constexpr size_t kMaxAgentOps = size_t{1} << 14;

// The write guard: every system call of the command that creates, renames or links a name (a
// socket's bind included), or opens a file for writing, is handed by the kernel
// (SECCOMP_RET_USER_NOTIF) to srt-init's agent, which performs it itself on the command's behalf -
// so no path is resolved twice - unless the rules refuse it (protected paths that do not exist yet,
// git's metadata). The table comes from srt, whose build resolves the names with libseccomp for
// each architecture of the filter.
enum GuardOp : uint32_t {
  kGuardOpen = 1,         // open(path, flags, mode)
  kGuardOpenat = 2,       // openat(dirfd, path, flags, mode)
  kGuardCreat = 3,        // creat(path, mode)
  kGuardMkdir = 4,        // mkdir(path, mode)
  kGuardMkdirat = 5,      // mkdirat(dirfd, path, mode)
  kGuardMknod = 6,        // mknod(path, mode, dev)
  kGuardMknodat = 7,      // mknodat(dirfd, path, mode, dev)
  kGuardSymlink = 8,      // symlink(target, path)
  kGuardSymlinkat = 9,    // symlinkat(target, dirfd, path)
  kGuardLink = 10,        // link(old, new)
  kGuardLinkat = 11,      // linkat(olddirfd, old, newdirfd, new, flags)
  kGuardRename = 12,      // rename(old, new)
  kGuardRenameat = 13,    // renameat(olddirfd, old, newdirfd, new)
  kGuardRenameat2 = 14,   // renameat2(olddirfd, old, newdirfd, new, flags)
  kGuardTruncate = 15,    // truncate(path, length)
  kGuardTruncate64 = 16,  // 32-bit truncate64(path, length low, length high)
  kGuardChmod = 17,       // chmod(path, mode), only with an execute bit
  kGuardFchmod = 18,      // fchmod(fd, mode), only with an execute bit
  kGuardFchmodat = 19,    // fchmodat(dirfd, path, mode)
  kGuardFchmodat2 = 20,   // fchmodat2(dirfd, path, mode, flags)
  kGuardBind = 21,        // bind(fd, addr, len): an AF_UNIX name is a new entry in a directory
  kGuardOpMax = 21,
};
struct GuardCall {
  uint32_t arch = 0;  // AUDIT_ARCH_*
  uint32_t nr = 0;    // as seccomp_data.nr shows it (x32: with __X32_SYSCALL_BIT)
  uint32_t op = 0;    // GuardOp
};
inline constexpr uint32_t kGuardCallBytes = 12;
inline constexpr size_t kMaxGuardCalls = 128;
enum GuardFlags : uint32_t {
  kGuardAllowGitConfig = 1,  // allowGitConfig: config and config.worktree stay writable
  kGuardServe =
      2,  // a warm sandbox: each command's listener comes (kMsgGuardListener) as it starts
};

enum MessageType : uint32_t {
  // init -> srt
  kMsgHello = 1,       // + SCM_RIGHTS: a pidfd of init itself
  kMsgStarted = 2,     // i32 pid of the command inside the sandbox
  kMsgExecFailed = 3,  // i32 errno of execve
  kMsgExited = 4,      // i32 wait status of the command
  kMsgFailed = 5,      // i32 stage, i32 errno, then a NUL-terminated detail string
  kMsgGuard = 6,       // + SCM_RIGHTS: the listener of the command's write-guard filter
  kMsgTerminal = 7,    // + SCM_RIGHTS: the master of the sandbox's terminal (kTagTerminal),
                       // sent right after kMsgHello, before the command exists
  kMsgStopped = 8,     // i32 signal: the command was stopped (by its terminal: Ctrl-Z)
  kMsgServing = 9,     // (kTagServe) the warm sandbox is ready for kMsgExec
  // A warm sandbox's commands, each named by the u32 id srt gave it in kMsgExec:
  kMsgExecTerminal = 40,  // u32 id + SCM_RIGHTS: the master of its terminal (kMsgExecTerminalOpen)
  kMsgExecStarted = 41,   // u32 id, i32 pid in the sandbox
  kMsgExecRefused = 42,   // u32 id, i32 stage (0: execve), i32 errno: it never ran
  kMsgExecExited = 43,    // u32 id, i32 wait status
  // srt -> init
  kMsgGo = 10,  // srt-agent's work is done: start the command (a warm sandbox: serve)
  // i32 + SCM_RIGHTS: the seccomp filters, right after kMsgHello (a sealed memfd: the deny
  // filter's i32 bytes, then the write guard's, which is loaded with
  // SECCOMP_FILTER_FLAG_NEW_LISTENER; none when nothing follows). init forks the command, which
  // loads them and waits for kMsgGo.
  kMsgFilters = 17,
  kMsgSignal = 11,  // i32 signal to deliver to the command
  // (kTagServe) u32 id + SCM_RIGHTS: a sealed memfd with the exec plan (kTagArg, kTagEnv,
  // kTagCwd, kTagReopen, kTagTerminal), then its stdin, stdout and stderr: run it
  kMsgExec = 12,
  kMsgExecSignal = 13,        // u32 id, i32 signal: to that command's process group
  kMsgExecTerminalOpen = 14,  // u32 id: open a terminal for the command to come with this id
  kMsgStop = 15,              // end the warm sandbox: kill everything, exit
  // (kTagServe) + SCM_RIGHTS: the agent's devpts instance (kTagPtys), sent once, right
  // after kMsgGo: init opens each command's terminal from its ptmx
  kMsgServePtys = 16,
  // srt -> agent
  kMsgSandbox = 30,        // + SCM_RIGHTS: a pidfd of the sandbox's PID 1; apply the plan now
  kMsgGuardListener = 31,  // + SCM_RIGHTS: the write guard's listener (kMsgGuard, relayed)
  // agent -> srt
  kMsgAgentReady = 20,  // namespaces joined, /proc remounted, protections in place
  kMsgSocket = 22,      // i32 index in the plan + SCM_RIGHTS: a socket of the sandbox's netns
  kMsgPtys = 25,        // + SCM_RIGHTS: the devpts instance of kTagPtys (a detached mount)
  // u32 GuardOp, u32 errno, then the NUL-terminated sandbox path it refused (the first
  // kMaxGuardReports refusals; the rest are counted in kMsgGuardDone)
  kMsgGuardDenied = 23,
  kMsgGuardDone = 24,  // i32 calls handled, i32 refused: the guard's listener has hung up
};

// kTagProc: the sandbox's /proc, as the agent leaves it for the command.
enum ProcMode : uint32_t {
  kProcAsIs = 0,
  // bwrap mounted a /proc of the sandbox's pid namespace: remount it with hidepid=invisible.
  kProcHidePid = 1,
  // bwrap bound the host's /proc (enableWeakerNestedSandbox): mount a /proc of the sandbox's pid
  // namespace, hidepid=invisible, over it.
  kProcPrivate = 2,
};

// Stages named in kMsgFailed, so srt can say what went wrong.
enum Stage : int32_t {
  kStagePlan = 1,
  kStageFds = 2,
  kStageSignals = 3,
  kStagePidfd = 4,
  kStageFork = 5,
  kStageNoNewPrivs = 6,
  kStageSeccomp = 7,
  kStageJoinNamespaces = 8,
  kStageHidePid = 9,
  kStagePin = 10,
  kStageProtect = 11,
  kStageGuard = 12,
  kStageTmpdir = 13,
  kStageNetwork = 14,
  kStageNofile = 15,
  kStageTerminal = 16,
  kStageProcCover = 17,
  kStageCover = 18,
  kStageCwd = 19,
  kStageIsolate = 20,     // a warm sandbox's command's Landlock domain (serve_role.cc)
  kStageKeptTmpdir = 21,  // the TMPDIR's kept parent (kTagTmpdirIn) is not as it must be
  kStageShow = 22,        // a host entry the agent shows (kTagShow, kTagSeal)
};

// The descriptors a command inherits by number (kTagKeepFd): at most the caller's
// (srt::kMaxInheritFds in srt/sandbox.h, the same number) and the inner cgroup's cgroup.procs,
// one per hierarchy with an inner limit (memory, pids).
inline constexpr size_t kMaxInheritFds = 64;
inline constexpr size_t kMaxInnerCgroupFds = 2;
inline constexpr size_t kMaxKeepFds = kMaxInheritFds + kMaxInnerCgroupFds;

// A warm sandbox runs at most this many commands at once (and holds as many terminals).
inline constexpr uint32_t kMaxExecs = 256;
// The most ptys the commands' devpts instance (kTagPtys) may hold: one per command with a
// terminal, and those a process a command left behind still holds open.
inline constexpr uint32_t kMaxPtys = 2 * kMaxExecs;

inline constexpr size_t kMaxMessageBytes = 4096;
inline constexpr uint32_t kMaxGuardReports = 256;

// Earlier versions of srt blocked a missing protected path with an empty directory of this mode
// (r--------) on the host, removed when the sandbox ended. Planning still treats one left by a
// killed srt as the missing path it stood for, and the agent removes it.
inline constexpr unsigned kPlaceholderMode = 0400;

// A socket srt-agent creates in the sandbox's network namespace (kTagNetSocket payload, 28 bytes,
// little-endian). Listening sockets are bound and listening (backlog 4096) when srt gets them.
enum NetSocketKind : uint32_t {
  kNetTcpListen = 1,  // SOCK_STREAM, SO_REUSEADDR, IPV6_V6ONLY for AF_INET6, bind, listen
  kNetUdp = 2,        // SOCK_DGRAM, bound
  kNetRoute = 3,      // a NETLINK_ROUTE socket (family and address ignored)
};
struct NetSocket {
  uint32_t kind = 0;
  uint32_t family = 0;  // AF_INET (2) or AF_INET6 (10)
  uint32_t port = 0;
  uint8_t address[16] = {};  // network byte order; IPv4 in the first 4 bytes
};
inline constexpr uint32_t kNetSocketBytes = 28;

// Bounds-checked reader over a plan; never reads past `size`.
class PlanReader {
 public:
  PlanReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  // Checks the header; false if the plan is not ours or of another version.
  bool Begin() {
    uint32_t magic = 0, version = 0;
    if (!U32At(0, magic) || !U32At(4, version)) return false;
    pos_ = 8;
    return magic == kPlanMagic && version == kPlanVersion;
  }

  // Advances to the next record. Returns false at the end, or on a malformed record (then
  // error() is true).
  bool Next(uint16_t& tag, const uint8_t*& payload, uint32_t& length) {
    if (pos_ == size_) return false;
    uint32_t head = 0;
    if (++records_ > kMaxRecords || !U32At(pos_, head) || !U32At(pos_ + 4, length) ||
        (head >> 16) != 0 || length > size_ - pos_ - 8) {
      error_ = true;
      return false;
    }
    tag = static_cast<uint16_t>(head & 0xffff);
    payload = data_ + pos_ + 8;
    pos_ += 8 + static_cast<size_t>(length);
    return true;
  }

  bool error() const { return error_; }

  static bool AsU32(const uint8_t* payload, uint32_t length, uint32_t& out) {
    if (length != 4) return false;
    out = static_cast<uint32_t>(payload[0]) | static_cast<uint32_t>(payload[1]) << 8 |
          static_cast<uint32_t>(payload[2]) << 16 | static_cast<uint32_t>(payload[3]) << 24;
    return true;
  }
  // A string payload: non-empty, NUL-terminated, no NUL before the end.
  static bool AsString(const uint8_t* payload, uint32_t length, const char*& out) {
    if (length == 0 || payload[length - 1] != 0) return false;
    for (uint32_t i = 0; i + 1 < length; ++i) {
      if (payload[i] == 0) return false;
    }
    out = reinterpret_cast<const char*>(payload);
    return true;
  }

 private:
  bool U32At(size_t at, uint32_t& out) const {
    if (at > size_ || size_ - at < 4) return false;
    return AsU32(data_ + at, 4, out);
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  size_t records_ = 0;
  bool error_ = false;
};

// A kTagCwd record, the one rule for an init plan's and an exec plan's: an absolute path, given
// once. False (and `cwd` unchanged) when `cwd` is already set or the payload is not an absolute
// path; else `cwd` points into the payload.
inline bool ReadCwdRecord(const uint8_t* payload, uint32_t length, const char*& cwd) {
  const char* s;
  if (cwd != nullptr || !PlanReader::AsString(payload, length, s) || s[0] != '/') return false;
  cwd = s;
  return true;
}

}  // namespace srt::wire
