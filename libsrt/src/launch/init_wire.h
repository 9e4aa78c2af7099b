// launch/init_wire: the messages between srt and srt-init (its in-sandbox `init` role and its
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
  // agent plan
  kTagProc = 21,       // u32 ProcMode: what the agent does to the sandbox's /proc
  kTagPin = 22,        // string: bind a directory onto itself (rename/rmdir -> EBUSY)
  kTagProtect = 23,    // string: make a path read-only recursively; block it if missing
  kTagTmpdir = 24,     // string: create this directory, mount a private tmpfs on it inside the
                       // sandbox, remove it when the sandbox is gone (the command's TMPDIR)
  kTagNetSocket = 25,  // NetSocket: create this socket inside the sandbox's network namespace
                       // and send it to srt (kMsgSocket), in plan order
  kTagHostPath = 26,   // string: where the path of the kTagProtect record just before is on the
                       // host, when that differs (a path inside a bind): placeholders go there
};

enum MessageType : uint32_t {
  // init -> srt
  kMsgHello = 1,       // + SCM_RIGHTS: a pidfd of init itself
  kMsgStarted = 2,     // i32 pid of the command inside the sandbox
  kMsgExecFailed = 3,  // i32 errno of execve
  kMsgExited = 4,      // i32 wait status of the command
  kMsgFailed = 5,      // i32 stage, i32 errno, then a NUL-terminated detail string
  // srt -> init
  kMsgGo = 10,      // + SCM_RIGHTS: the seccomp filter (a sealed memfd); start the command
  kMsgSignal = 11,  // i32 signal to deliver to the command
  // srt -> agent
  kMsgSandbox = 30,  // + SCM_RIGHTS: a pidfd of the sandbox's PID 1; apply the plan now
  // agent -> srt
  kMsgAgentReady = 20,    // namespaces joined, /proc remounted, protections in place
  kMsgAgentCleaned = 21,  // i32 placeholders removed, i32 placeholders left behind
  kMsgSocket = 22,        // i32 index in the plan + SCM_RIGHTS: a socket of the sandbox's netns
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
  kStagePlaceholder = 12,
  kStageTmpdir = 13,
  kStageNetwork = 14,
  kStageNofile = 15,
};

inline constexpr size_t kMaxMessageBytes = 4096;

// A placeholder is the empty directory srt-agent puts where a protected path does not exist, so
// that the path cannot be created while a sandbox runs. Its mode is r-------- (no directory is
// made like that on purpose), which is how every srt - the policy planner and every agent - tells
// a placeholder from a real directory: sandboxes sharing a write root share its placeholders,
// each agent holding a shared flock(2) on it while its sandbox runs, and only the last one out
// (the one that gets the lock exclusively) removes it.
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

}  // namespace srt::wire
