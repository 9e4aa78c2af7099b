// SPDX-License-Identifier: Apache-2.0
// launch/diagnose: turns bubblewrap's complaints into what the user should do about them. Pure.
#pragma once

#include <string>
#include <string_view>

namespace srt::launch {

// What this host says about user namespaces (read by the launcher from /proc/sys; "" = absent).
struct HostFacts {
  std::string unprivileged_userns_clone;  // kernel.unprivileged_userns_clone (Debian)
  std::string max_user_namespaces;        // user.max_user_namespaces
  std::string
      apparmor_restrict_unprivileged_userns;  // kernel.apparmor_restrict_unprivileged_userns
  bool in_container = false;                  // /.dockerenv or /run/.containerenv exists
  bool caller_is_root = false;
};

// The full error text for a bwrap that failed before the sandbox started: bwrap's own words,
// then an explanation and the fix when the cause is recognised. Never suggests running
// unsandboxed.
std::string DiagnoseBwrapFailure(std::string_view bwrap_stderr, int bwrap_exit_code,
                                 const HostFacts& facts);

}  // namespace srt::launch
