// SPDX-License-Identifier: Apache-2.0
// seccomp/compile: compiles the sandbox's syscall filters with libseccomp into classic BPF.
//
// Runs when srt is built, not when it runs: the generator (generate_tables.cc) compiles every
// program the runtime may need for the native host and writes them into a C++ source that
// srt_seccomp (filter.h) serves. srt, srt-poller and srt-mcp do not link libseccomp; only the
// generator and the tests do (the tests also compile the programs of other hosts).
//
// The filter covers the native architecture and every compat architecture the native one can
// run (x86_64: i386 and x32; aarch64: arm), so a 32-bit entry point cannot bypass a rule; any
// other architecture is killed (SECCOMP_RET_KILL_PROCESS). Everything not listed by
// CompileDescription() is allowed. Comparisons on `int` arguments look at the low 32 bits only,
// as the kernel does, so garbage in the upper half of a register neither bypasses nor confuses
// them.
//
// libseccomp is an implementation detail of compile.cc: nothing here needs its headers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "init_protocol/wire.h"
#include "seccomp/options.h"
#include "srt/result.h"

namespace srt::seccomp {

// Which host a program is compiled for. kNative is the host the compiler runs on (what the
// generator uses); the others let tests and tooling inspect another host's program (e.g. the
// aarch64+arm filter on an x86_64 build box).
enum class HostArch { kNative, kX86_64, kAarch64 };

// The deny filter as raw `struct sock_filter` records (8 bytes each, host byte order), ready
// for seccomp(SECCOMP_SET_MODE_FILTER, 0, &(struct sock_fprog){size / 8, data}).
// Fails with Errc::kSystem (sys_errno = libseccomp's errno) if libseccomp rejects a rule,
// Errc::kUnsupported if libseccomp does not know a syscall the filter must name (too old), and
// Errc::kInternal if the program is empty or longer than the kernel's 4096 instructions.
[[nodiscard]] Result<std::vector<std::byte>> CompileFilter(const FilterOptions& options,
                                                           HostArch host);

// The write guard's filter (see filter.h BuildGuardFilter), with the same failures.
[[nodiscard]] Result<std::vector<std::byte>> CompileGuardFilter(HostArch host);

// Which (architecture, number) of the guard's filter is which call, for the agent.
std::vector<wire::GuardCall> CompileGuardCalls(HostArch host);

// One line per rule, for `srt --debug`: first the architectures, then e.g.
// "socket(AF_UNIX) -> EPERM"; a rule on calls that none of the host's architectures has (i386's
// socketcall on aarch64) is left out. Pure: does not talk to the kernel.
std::vector<std::string> CompileDescription(const FilterOptions& options, HostArch host);

// Which compiler this is, e.g. "libseccomp 2.5.4" (for the generated source's header).
std::string CompilerVersion();

}  // namespace srt::seccomp
