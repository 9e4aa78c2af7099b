// SPDX-License-Identifier: Apache-2.0
// seccomp/filter: the sandbox's syscall filters, compiled when srt was built.
//
// Usage: BuildFilter(options) -> bytes; hand them to srt-init over an inherited fd; srt-init sets
// NO_NEW_PRIVS and calls seccomp(SECCOMP_SET_MODE_FILTER, 0, &prog) as the last step before
// execve (house style §2.5), so the filter covers the command only, never srt-init's bridges.
//
// The programs depend only on FilterOptions and the host's architecture, so the build compiles
// every one of them with libseccomp (compile.h, through the generator generate_tables.cc) into
// a table (tables.h) that this module serves: srt does no libseccomp work per run and does not
// link libseccomp. What the programs hold (every architecture of the host, foreign ones killed,
// the rules) is described in compile.h.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "init_protocol/wire.h"
#include "seccomp/options.h"
#include "srt/result.h"

namespace srt::seccomp {

// The deny filter as raw `struct sock_filter` records (8 bytes each, host byte order), ready
// for seccomp(SECCOMP_SET_MODE_FILTER, 0, &(struct sock_fprog){size / 8, data}).
// Fails with Errc::kInternal only if the built-in table is damaged (empty, or longer than the
// kernel's 4096 instructions), which the build already refuses.
[[nodiscard]] Result<std::vector<std::byte>> BuildFilter(const FilterOptions& options);

// The write guard's filter, loaded after BuildFilter's with SECCOMP_FILTER_FLAG_NEW_LISTENER: it
// hands srt-init's agent (SECCOMP_RET_USER_NOTIF) every call that creates, renames or links a
// name, opens with a write intent (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC), truncates, or sets an
// execute bit, on every architecture of the filter. The kernel takes the strictest of all
// filters, so what BuildFilter refuses stays refused. Fails as BuildFilter does.
[[nodiscard]] Result<std::vector<std::byte>> BuildGuardFilter();

// Which (architecture, number) of the guard's filter is which call, for the agent.
std::vector<wire::GuardCall> GuardCalls();

// One line per rule, for `srt --debug`: first the architectures, then e.g.
// "socket(AF_UNIX) -> EPERM". Pure: does not talk to the kernel.
std::vector<std::string> DescribeFilter(const FilterOptions& options);

}  // namespace srt::seccomp
