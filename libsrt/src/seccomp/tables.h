// SPDX-License-Identifier: Apache-2.0
// seccomp/tables: the programs compiled when srt was built, for the native host. Defined by a
// source the generator (generate_tables.cc) writes into the build tree from compile.h's
// functions; served by filter.cc. Nothing else should read them.
#pragma once

#include <linux/filter.h>

#include <span>

#include "init_protocol/wire.h"
#include "seccomp/options.h"

namespace srt::seccomp::tables {

// CompileFilter(FilterOptionsOf(v), kNative), at index v.
extern const std::span<const sock_filter> kDenyPrograms[kFilterVariants];
// CompileDescription(FilterOptionsOf(v), kNative), at index v.
extern const std::span<const char* const> kDescriptions[kFilterVariants];
// CompileGuardFilter(kNative).
extern const std::span<const sock_filter> kGuardProgram;
// CompileGuardCalls(kNative).
extern const std::span<const wire::GuardCall> kGuardCalls;

}  // namespace srt::seccomp::tables
