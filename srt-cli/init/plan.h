// SPDX-License-Identifier: Apache-2.0
// srt-init plans: the pure, bounds-checked decoding of the plans srt hands to srt-init.
// Freestanding (no libc); unit-tested and fuzzed from the hosted test suite.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "init_protocol/exec_plan.h"
#include "init_protocol/wire.h"

namespace srt::init {

inline constexpr size_t kMaxKeepFds = wire::kMaxKeepFds;
inline constexpr size_t kMaxArgs = 1u << 17;
inline constexpr size_t kMaxOps = wire::kMaxAgentOps;

struct InitPlan {
  int stderr_fd = -1;
  int keep_fds[kMaxKeepFds] = {};
  size_t keep_count = 0;
  size_t argc = 0;              // number of kTagArg records
  const char** argv = nullptr;  // caller-provided array of argc + 1 entries (filled by pass 2)
  bool set_nofile = false;      // kTagNofile given
  uint64_t nofile[2] = {};      // soft, hard
  uint32_t terminal = 0;        // kTagTerminal: bit n = standard descriptor n
  struct Reopen {
    int fd;
    int flags;
    const char* path;
  };
  Reopen reopens[kMaxKeepFds + 3] = {};  // kTagReopen
  size_t reopen_count = 0;
  bool serve = false;  // kTagServe: a warm sandbox, no argv
  // kTagCwd: the command's working directory (required unless serve), which it enters after
  // srt-agent's protections: see RunCommand.
  const char* cwd = nullptr;
};

// What a kTagReopen may carry and name: one rule for a sandbox's command and a warm sandbox's
// (init_protocol/exec_plan.h).
inline constexpr uint32_t kReopenFlags = wire::kExecReopenFlags;
inline bool IsReopenableDevice(const char* p) { return wire::IsExecReopenDevice(p); }

// kShow, kSeal (wire::kTagShow, kTagSeal) come before every other op in a plan.
enum class OpKind : uint8_t { kPin, kProtect, kCover, kMask, kShow, kSeal };
struct AgentOp {
  OpKind kind;
  const char* path;       // in the sandbox
  const char* host_path;  // on the host (kProtect: where a placeholder goes); usually `path`
  // kCover, kMask from a kTagSpelled: the settings' name of `path` through symlinks, which the
  // cover watcher follows again when the host repoints one of them; nullptr otherwise.
  const char* spelled = nullptr;
};

inline constexpr size_t kMaxNetSockets = 256;
inline constexpr size_t kMaxGuardRoots = 256;

struct AgentPlan {
  wire::ProcMode proc = wire::kProcAsIs;
  const char* tmpdir = nullptr;        // absolute; none when null
  bool tmpdir_in_kept_parent = false;  // kTagTmpdirIn: the tmpfs goes on tmpdir's parent
  wire::NetSocket sockets[kMaxNetSockets] = {};
  size_t socket_count = 0;
  size_t op_count = 0;
  AgentOp* ops = nullptr;  // caller-provided array of op_count entries (filled by pass 2)
  // The write guard: no calls, no guard.
  wire::GuardCall guard_calls[wire::kMaxGuardCalls] = {};
  size_t guard_call_count = 0;
  const char* guard_roots[kMaxGuardRoots] = {};
  size_t guard_root_count = 0;
  const char* guard_private[kMaxGuardRoots] = {};
  size_t guard_private_count = 0;
  uint32_t guard_flags = 0;
  uint32_t ptys = 0;      // kTagPtys: 0, or the most ptys of the commands' hidden devpts instance
  size_t show_count = 0;  // kTagShow records (at most wire::kMaxShows)
};

// Pass 1 (argv == nullptr) validates the plan and counts arguments; pass 2 fills plan.argv.
// Returns false on any malformed, unknown or out-of-range record.
inline bool DecodeInitPlan(const uint8_t* data, size_t size, InitPlan& plan) {
  wire::PlanReader r(data, size);
  if (!r.Begin()) return false;
  uint16_t tag;
  const uint8_t* payload;
  uint32_t len;
  size_t args = 0;
  uint32_t v = 0;
  plan.keep_count = 0;
  plan.set_nofile = false;  // pass 2 reads the same records again
  plan.terminal = 0;
  plan.reopen_count = 0;
  plan.serve = false;
  plan.cwd = nullptr;
  while (r.Next(tag, payload, len)) {
    switch (tag) {
      case wire::kTagServe:
        if (!wire::PlanReader::AsU32(payload, len, v) || v != 1 || plan.serve) return false;
        plan.serve = true;
        break;
      case wire::kTagStderrFd:
        if (!wire::PlanReader::AsU32(payload, len, v) || v > 0x7fffffff) return false;
        plan.stderr_fd = static_cast<int>(v);
        break;
      case wire::kTagKeepFd:
        if (!wire::PlanReader::AsU32(payload, len, v) || v > 0x7fffffff ||
            plan.keep_count == kMaxKeepFds) {
          return false;
        }
        plan.keep_fds[plan.keep_count++] = static_cast<int>(v);
        break;
      case wire::kTagNofile:
        if (len != 16 || plan.set_nofile) return false;
        for (int i = 0; i < 2; ++i) {
          uint64_t x = 0;
          for (int b = 7; b >= 0; --b) x = (x << 8) | payload[i * 8 + b];  // little-endian
          plan.nofile[i] = x;
        }
        if (plan.nofile[0] > plan.nofile[1]) return false;
        plan.set_nofile = true;
        break;
      case wire::kTagReopen: {
        uint32_t fd = 0, flags = 0;
        const char* path;
        if (len < 9 || plan.reopen_count == kMaxKeepFds + 3 ||
            !wire::PlanReader::AsU32(payload, 4, fd) ||
            !wire::PlanReader::AsU32(payload + 4, 4, flags) || fd > 0x7fffffff ||
            (flags & ~kReopenFlags) != 0 ||
            !wire::PlanReader::AsString(payload + 8, len - 8, path) || !IsReopenableDevice(path)) {
          return false;
        }
        plan.reopens[plan.reopen_count++] = {static_cast<int>(fd), static_cast<int>(flags), path};
        break;
      }
      case wire::kTagTerminal:
        if (!wire::PlanReader::AsU32(payload, len, v) || v == 0 || v > 7) return false;
        plan.terminal = v;
        break;
      case wire::kTagCwd:
        if (!wire::ReadCwdRecord(payload, len, plan.cwd)) return false;
        break;
      case wire::kTagArg: {
        const char* s;
        if (!wire::PlanReader::AsString(payload, len, s)) return false;  // "" is a lone NUL
        if (args == kMaxArgs) return false;
        if (plan.argv) plan.argv[args] = reinterpret_cast<const char*>(payload);
        ++args;
        break;
      }
      default:
        return false;
    }
  }
  // A warm sandbox gets its commands later, each with its own terminal.
  if (r.error() || (args == 0) != plan.serve || plan.stderr_fd < 0) return false;
  if (plan.serve ? plan.terminal != 0 || plan.cwd != nullptr : plan.cwd == nullptr) return false;
  if (plan.argv) plan.argv[args] = nullptr;
  plan.argc = args;
  return true;
}

inline bool DecodeAgentPlan(const uint8_t* data, size_t size, AgentPlan& plan) {
  wire::PlanReader r(data, size);
  if (!r.Begin()) return false;
  uint16_t tag;
  const uint8_t* payload;
  uint32_t len;
  size_t ops = 0;
  size_t sockets = 0;
  uint32_t v = 0;
  bool seen_tmpdir = false;
  plan.guard_call_count = plan.guard_root_count = plan.guard_private_count = 0;
  plan.ptys = 0;
  plan.show_count = 0;
  bool seen_other_op = false;      // a kTagShow or kTagSeal after any other op: malformed
  bool host_path_allowed = false;  // the previous record was a kTagProtect
  // The previous record was a kTagCover or kTagMask (or a kTagSpelled after one): that file.
  const char* spelled_of = nullptr;
  OpKind spelled_kind = OpKind::kCover;
  while (r.Next(tag, payload, len)) {
    const bool follows_protect = host_path_allowed;
    host_path_allowed = false;
    const char* follows_cover = spelled_of;
    spelled_of = nullptr;
    switch (tag) {
      case wire::kTagProc:
        if (!wire::PlanReader::AsU32(payload, len, v) || v > wire::kProcPrivate) return false;
        plan.proc = static_cast<wire::ProcMode>(v);
        break;
      case wire::kTagTmpdir: {
        const char* t;
        if (!wire::PlanReader::AsString(payload, len, t) || t[0] != '/' || seen_tmpdir) {
          return false;
        }
        seen_tmpdir = true;
        plan.tmpdir = t;
        break;
      }
      case wire::kTagTmpdirIn: {
        // "/parent/name": a parent below the root (never "/" itself) and a plain name in it.
        const char* t;
        if (!wire::PlanReader::AsString(payload, len, t) || t[0] != '/' || seen_tmpdir) {
          return false;
        }
        const size_t end = len - 1;  // the NUL
        size_t name = end;
        while (name > 0 && t[name - 1] != '/') --name;
        const size_t name_len = end - name;
        if (name <= 1 || name_len == 0 || (name_len == 1 && t[name] == '.') ||
            (name_len == 2 && t[name] == '.' && t[name + 1] == '.')) {
          return false;
        }
        seen_tmpdir = true;
        plan.tmpdir = t;
        plan.tmpdir_in_kept_parent = true;
        break;
      }
      case wire::kTagNetSocket: {
        if (len != wire::kNetSocketBytes || sockets == kMaxNetSockets) return false;
        wire::NetSocket ns;
        uint32_t port = 0;
        wire::PlanReader::AsU32(payload, 4, ns.kind);
        wire::PlanReader::AsU32(payload + 4, 4, ns.family);
        wire::PlanReader::AsU32(payload + 8, 4, port);
        for (int b = 0; b < 16; ++b) ns.address[b] = payload[12 + b];
        if (ns.kind < wire::kNetTcpListen || ns.kind > wire::kNetRoute || port > 65535 ||
            (ns.kind != wire::kNetRoute && ns.family != 2 && ns.family != 10)) {
          return false;
        }
        ns.port = port;
        plan.sockets[sockets++] = ns;
        break;
      }
      case wire::kTagShow:
      case wire::kTagSeal: {
        // An absolute path below the root (never the root itself), before any other op.
        const char* s;
        if (!wire::PlanReader::AsString(payload, len, s) || s[0] != '/' || s[1] == 0 ||
            seen_other_op || ops == kMaxOps) {
          return false;
        }
        const bool show = tag == wire::kTagShow;
        if (show && plan.show_count == wire::kMaxShows) return false;
        if (show) ++plan.show_count;
        if (plan.ops) plan.ops[ops] = AgentOp{show ? OpKind::kShow : OpKind::kSeal, s, s};
        ++ops;
        break;
      }
      case wire::kTagPin:
      case wire::kTagProtect:
      case wire::kTagCover:
      case wire::kTagMask: {
        const char* s;
        if (!wire::PlanReader::AsString(payload, len, s) || s[0] != '/' || ops == kMaxOps) {
          return false;
        }
        seen_other_op = true;
        const OpKind kind = tag == wire::kTagPin       ? OpKind::kPin
                            : tag == wire::kTagProtect ? OpKind::kProtect
                            : tag == wire::kTagCover   ? OpKind::kCover
                                                       : OpKind::kMask;
        if (plan.ops) plan.ops[ops] = AgentOp{kind, s, s};
        ++ops;
        host_path_allowed = tag == wire::kTagProtect;
        if (kind == OpKind::kCover || kind == OpKind::kMask) {
          spelled_of = s;
          spelled_kind = kind;
        }
        break;
      }
      case wire::kTagSpelled: {
        // One more op: the same file, followed by that name.
        const char* s;
        if (follows_cover == nullptr || !wire::PlanReader::AsString(payload, len, s) ||
            s[0] != '/' || ops == kMaxOps) {
          return false;
        }
        if (plan.ops) plan.ops[ops] = AgentOp{spelled_kind, follows_cover, follows_cover, s};
        ++ops;
        spelled_of = follows_cover;
        break;
      }
      case wire::kTagGuardCall: {
        wire::GuardCall c;
        if (len != wire::kGuardCallBytes || plan.guard_call_count == wire::kMaxGuardCalls) {
          return false;
        }
        wire::PlanReader::AsU32(payload, 4, c.arch);
        wire::PlanReader::AsU32(payload + 4, 4, c.nr);
        wire::PlanReader::AsU32(payload + 8, 4, c.op);
        if (c.op == 0 || c.op > wire::kGuardOpMax) return false;
        plan.guard_calls[plan.guard_call_count++] = c;
        break;
      }
      case wire::kTagGuardRoot:
      case wire::kTagGuardPrivate: {
        const char* s;
        const bool root = tag == wire::kTagGuardRoot;
        size_t& count = root ? plan.guard_root_count : plan.guard_private_count;
        if (!wire::PlanReader::AsString(payload, len, s) || s[0] != '/' ||
            count == kMaxGuardRoots) {
          return false;
        }
        (root ? plan.guard_roots : plan.guard_private)[count++] = s;
        break;
      }
      case wire::kTagPtys:
        if (!wire::PlanReader::AsU32(payload, len, v) || v == 0 || v > wire::kMaxPtys ||
            plan.ptys != 0) {
          return false;
        }
        plan.ptys = v;
        break;
      case wire::kTagGuardFlags:
        if (!wire::PlanReader::AsU32(payload, len, v) ||
            (v & ~uint32_t{wire::kGuardAllowGitConfig | wire::kGuardServe})) {
          return false;
        }
        plan.guard_flags = v;
        break;
      case wire::kTagHostPath: {
        // Only once, right after a kTagProtect.
        const char* s;
        if (!follows_protect || !wire::PlanReader::AsString(payload, len, s) || s[0] != '/') {
          return false;
        }
        if (plan.ops) plan.ops[ops - 1].host_path = s;
        host_path_allowed = false;
        break;
      }
      default:
        return false;
    }
  }
  if (r.error()) return false;
  plan.op_count = ops;
  plan.socket_count = sockets;
  return true;
}

}  // namespace srt::init
