// SPDX-License-Identifier: Apache-2.0
// init_protocol/exec_plan: one command of a warm sandbox (srt --serve), as a plan of records
// (wire.h's format): its argv (kTagArg), whole environment (kTagEnv), working directory
// (kTagCwd), the devices srt-init opens for it (kTagReopen) and the standard descriptors that
// get a terminal of the sandbox (kTagTerminal). The same bounds-checked decoder serves srt's
// server (a plan `srt --attach` sends) and the sandbox's PID 1 (the plan srt forwards).
// Header-only and free of libc, for the freestanding srt-init.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "init_protocol/wire.h"

namespace srt::wire {

inline constexpr size_t kMaxExecArgs = 1u << 17;
inline constexpr size_t kMaxExecEnv = 1u << 17;
inline constexpr size_t kMaxExecReopens = 3;
// An exec plan's size: argv and environment together stay below the kernel's ARG_MAX anyway.
inline constexpr size_t kMaxExecPlanBytes = 4u << 20;

struct ExecPlan {
  size_t argc = 0;              // kTagArg records (at least one, the first non-empty)
  const char** argv = nullptr;  // caller-provided, argc + 1 entries (filled when non-null)
  size_t envc = 0;              // kTagEnv records ("NAME=value", NAME non-empty)
  const char** envp = nullptr;  // caller-provided, envc + 1 entries (filled when non-null)
  const char* cwd = nullptr;    // absolute; required
  uint32_t terminal = 0;        // bit n: standard descriptor n gets the command's terminal
  struct Reopen {
    int fd;
    int flags;
    const char* path;
  };
  Reopen reopens[kMaxExecReopens] = {};  // only for descriptors 0-2
  size_t reopen_count = 0;
};

// The flags a kTagReopen may carry: O_ACCMODE, O_APPEND, O_NONBLOCK (nothing that creates or
// truncates), and the devices it may name (nothing opened again grants more).
inline constexpr uint32_t kExecReopenFlags = 03 | 02000 | 04000;
inline bool IsExecReopenDevice(const char* p) {
  static const char* const kDevices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                         "/dev/urandom"};
  for (const char* d : kDevices) {
    size_t i = 0;
    while (d[i] && d[i] == p[i]) ++i;
    if (!d[i] && !p[i]) return true;
  }
  return false;
}

// Pass 1 (argv and envp null) validates and counts; pass 2 fills argv and envp. Returns false
// on any malformed, unknown, repeated or out-of-range record.
inline bool DecodeExecPlan(const uint8_t* data, size_t size, ExecPlan& plan) {
  if (size > kMaxExecPlanBytes) return false;
  PlanReader r(data, size);
  if (!r.Begin()) return false;
  uint16_t tag;
  const uint8_t* payload;
  uint32_t len;
  size_t args = 0, envs = 0;
  uint32_t v = 0;
  bool seen_terminal = false;
  plan.cwd = nullptr;
  plan.terminal = 0;
  plan.reopen_count = 0;
  while (r.Next(tag, payload, len)) {
    switch (tag) {
      case kTagArg: {
        const char* s;
        if (!PlanReader::AsString(payload, len, s) || args == kMaxExecArgs) return false;
        if (args == 0 && s[0] == 0) return false;  // no command name
        if (plan.argv) plan.argv[args] = s;
        ++args;
        break;
      }
      case kTagEnv: {
        const char* s;
        if (!PlanReader::AsString(payload, len, s) || envs == kMaxExecEnv || s[0] == '=') {
          return false;
        }
        bool has_equals = false;
        for (const char* c = s; *c; ++c) has_equals |= *c == '=';
        if (!has_equals) return false;
        if (plan.envp) plan.envp[envs] = s;
        ++envs;
        break;
      }
      case kTagCwd:
        if (!ReadCwdRecord(payload, len, plan.cwd)) return false;
        break;
      case kTagTerminal:
        if (seen_terminal || !PlanReader::AsU32(payload, len, v) || v == 0 || v > 7) return false;
        seen_terminal = true;
        plan.terminal = v;
        break;
      case kTagReopen: {
        uint32_t fd = 0, flags = 0;
        const char* path;
        if (len < 9 || plan.reopen_count == kMaxExecReopens || !PlanReader::AsU32(payload, 4, fd) ||
            !PlanReader::AsU32(payload + 4, 4, flags) || fd > 2 ||
            (flags & ~kExecReopenFlags) != 0 || !PlanReader::AsString(payload + 8, len - 8, path) ||
            !IsExecReopenDevice(path)) {
          return false;
        }
        for (size_t i = 0; i < plan.reopen_count; ++i) {
          if (plan.reopens[i].fd == static_cast<int>(fd)) return false;
        }
        plan.reopens[plan.reopen_count++] = {static_cast<int>(fd), static_cast<int>(flags), path};
        break;
      }
      default:
        return false;
    }
  }
  if (r.error() || args == 0 || !plan.cwd) return false;
  for (size_t i = 0; i < plan.reopen_count; ++i) {
    if (plan.terminal & (1u << plan.reopens[i].fd)) return false;  // one or the other
  }
  if (plan.argv) plan.argv[args] = nullptr;
  if (plan.envp) plan.envp[envs] = nullptr;
  plan.argc = args;
  plan.envc = envs;
  return true;
}

}  // namespace srt::wire
