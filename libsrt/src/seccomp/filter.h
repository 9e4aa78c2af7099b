// seccomp/filter: compiles the sandbox's syscall filter with libseccomp into classic BPF.
//
// The filter covers the native architecture and every compat architecture the native one can
// run (x86_64: i386 and x32; aarch64: arm), so a 32-bit entry point cannot bypass a rule.
// It is applied by srt-init to the command only, after NO_NEW_PRIVS, as the last step before
// execve (house style §2.5).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "srt/result.h"

namespace srt::seccomp {

struct FilterOptions {
  bool allow_unix_sockets = false;  // network.allowAllUnixSockets: lift the AF_UNIX rules
  bool allow_namespaces = false;    // allowNestedUserNamespaces: lift the namespace/mount rules
};

// The filter program as raw `struct sock_filter` records, ready for
// seccomp(SECCOMP_SET_MODE_FILTER, 0, &(struct sock_fprog){len, data}).
[[nodiscard]] Result<std::vector<std::byte>> BuildFilter(const FilterOptions& options);

// One line per rule, for `srt --debug`.
std::vector<std::string> DescribeFilter(const FilterOptions& options);

}  // namespace srt::seccomp
