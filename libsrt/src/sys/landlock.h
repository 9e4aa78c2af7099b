// SPDX-License-Identifier: Apache-2.0
// sys/landlock: the Landlock scopes srt puts between a process it starts and everything outside it.
#pragma once

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::sys {

// The kernel's Landlock ABI version: 0 when Landlock is absent or disabled at boot.
int LandlockAbi();

// The first ABI with LANDLOCK_SCOPE_SIGNAL (Linux 6.12).
inline constexpr int kLandlockSignalScopeAbi = 6;

// A ruleset (O_CLOEXEC) that restricts nothing but signals: a process that enforces it, and all it
// starts, can signal (kill, tgkill, pidfd_send_signal, F_SETOWN's SIGIO/SIGURG) only processes in
// its own Landlock domain or below. Ptrace of processes outside the domain is refused by every
// Landlock domain. An empty UniqueFd when the kernel has no signal scoping (LandlockAbi() < 6).
[[nodiscard]] Result<UniqueFd> SignalScopeRuleset();

}  // namespace srt::sys
