// SPDX-License-Identifier: Apache-2.0
// seccomp/options: what a sandbox's deny filter depends on. Shared by the compiler (compile.h),
// which runs when srt is built, and the runtime (filter.h), which serves the programs it made.
//
// Every combination of these options is compiled at build time (tables.h), so an option added
// here is a new dimension of that table: FilterVariant() and FilterOptionsOf() below must learn
// it, and the static_assert on the struct's size makes sure they are not forgotten.
#pragma once

#include <cstddef>

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

static_assert(sizeof(FilterOptions) == 3 * sizeof(bool),
              "a new FilterOptions field needs its place in FilterVariant and FilterOptionsOf");

// How many distinct deny filters there are: one per combination of the options.
inline constexpr std::size_t kFilterVariants = 8;

// The options' place in the table of compiled filters, 0 .. kFilterVariants - 1.
constexpr std::size_t FilterVariant(const FilterOptions& options) {
  return (options.allow_unix_sockets ? 1U : 0U) | (options.allow_namespaces ? 2U : 0U) |
         (options.deny_xattr_writes ? 4U : 0U);
}

// The inverse of FilterVariant (variant < kFilterVariants).
constexpr FilterOptions FilterOptionsOf(std::size_t variant) {
  return FilterOptions{.allow_unix_sockets = (variant & 1U) != 0,
                       .allow_namespaces = (variant & 2U) != 0,
                       .deny_xattr_writes = (variant & 4U) != 0};
}

}  // namespace srt::seccomp
