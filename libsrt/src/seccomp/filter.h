// SPDX-License-Identifier: Apache-2.0
// seccomp/filter: compiles the sandbox's syscall filter with libseccomp into classic BPF.
//
// Usage: BuildFilter(options) -> bytes; hand them to srt-init over an inherited fd; srt-init sets
// NO_NEW_PRIVS and calls seccomp(SECCOMP_SET_MODE_FILTER, 0, &prog) as the last step before
// execve (house style §2.5), so the filter covers the command only, never srt-init's bridges.
//
// The filter covers the native architecture and every compat architecture the native one can
// run (x86_64: i386 and x32; aarch64: arm), so a 32-bit entry point cannot bypass a rule; any
// other architecture is killed (SECCOMP_RET_KILL_PROCESS). Everything not listed by
// DescribeFilter() is allowed. Comparisons on `int` arguments look at the low 32 bits only, as
// the kernel does, so garbage in the upper half of a register neither bypasses nor confuses them.
//
// libseccomp is an implementation detail of filter.cc: nothing here needs its headers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "init_protocol/wire.h"
#include "srt/result.h"

namespace srt::seccomp {

struct FilterOptions {
  // network.allowAllUnixSockets: lift the AF_UNIX socket() and socketpair() rules and the i386
  // socketcall(SYS_SOCKETPAIR) rule. socket(AF_VSOCK) stays denied, and so does i386
  // socketcall(SYS_SOCKET): its family sits behind a pointer seccomp cannot read.
  bool allow_unix_sockets = false;
  // allowNestedUserNamespaces: lift the unshare/clone/clone3/setns and mount-family rules.
  bool allow_namespaces = false;
  // Refuse every xattr write (setxattr, lsetxattr, fsetxattr, setxattrat): for a root caller
  // with nested user namespaces, whose command holds CAP_SETFCAP over a namespace mapping the
  // host's root, where a security.capability it set would be real on the host. The name is
  // behind a pointer, so the family goes as a whole.
  bool deny_xattr_writes = false;
};

// Which host the filter is compiled for. kNative is what srt uses; the others let tests and
// tooling inspect another host's program (e.g. the aarch64+arm filter on an x86_64 build box).
enum class HostArch { kNative, kX86_64, kAarch64 };

// The filter program as raw `struct sock_filter` records (8 bytes each, host byte order), ready
// for seccomp(SECCOMP_SET_MODE_FILTER, 0, &(struct sock_fprog){size / 8, data}).
// Fails with Errc::kSystem (sys_errno = libseccomp's errno) if libseccomp rejects a rule,
// Errc::kUnsupported if libseccomp does not know a syscall the filter must name (too old), and
// Errc::kInternal if the program is empty or longer than the kernel's 4096 instructions.
[[nodiscard]] Result<std::vector<std::byte>> BuildFilter(const FilterOptions& options);
[[nodiscard]] Result<std::vector<std::byte>> BuildFilter(const FilterOptions& options,
                                                         HostArch host);

// The write guard's filter, loaded after BuildFilter's with SECCOMP_FILTER_FLAG_NEW_LISTENER: it
// hands srt-init's agent (SECCOMP_RET_USER_NOTIF) every call that creates, renames or links a
// name, opens with a write intent (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC), truncates, or sets an
// execute bit, on every architecture of the filter. The kernel takes the strictest of all
// filters, so what BuildFilter refuses stays refused.
[[nodiscard]] Result<std::vector<std::byte>> BuildGuardFilter();
[[nodiscard]] Result<std::vector<std::byte>> BuildGuardFilter(HostArch host);
// Which (architecture, number) of the guard's filter is which call, for the agent.
std::vector<wire::GuardCall> GuardCalls();
std::vector<wire::GuardCall> GuardCalls(HostArch host);

// One line per rule, for `srt --debug`: first the architectures, then e.g.
// "socket(AF_UNIX) -> EPERM". Pure: does not talk to the kernel.
std::vector<std::string> DescribeFilter(const FilterOptions& options);

}  // namespace srt::seccomp
