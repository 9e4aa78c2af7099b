// SPDX-License-Identifier: Apache-2.0
// Landlock system calls. Debian 12's <linux/landlock.h> predates scopes, so the one structure
// and the constants used here are spelled out (include/uapi/linux/landlock.h of Linux 6.12).
#include "sys/landlock.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace srt::sys {
namespace {

#ifndef SYS_landlock_create_ruleset
constexpr long SYS_landlock_create_ruleset = 444;
#endif

constexpr uint32_t kCreateRulesetVersion = 1U << 0;  // LANDLOCK_CREATE_RULESET_VERSION
constexpr uint64_t kScopeSignal = 1U << 1;           // LANDLOCK_SCOPE_SIGNAL

// struct landlock_ruleset_attr as of ABI 6; the kernel accepts a shorter or equal size.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

}  // namespace

int LandlockAbi() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

Result<UniqueFd> SignalScopeRuleset() {
  if (LandlockAbi() < kLandlockSignalScopeAbi) return UniqueFd();
  RulesetAttr attr{0, 0, kScopeSignal};
  long fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0) return SysError("landlock_create_ruleset(LANDLOCK_SCOPE_SIGNAL)");
  return UniqueFd(static_cast<int>(fd));
}

}  // namespace srt::sys
