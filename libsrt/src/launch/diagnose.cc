// SPDX-License-Identifier: Apache-2.0
// bwrap failure diagnosis.
#include "launch/diagnose.h"

#include "base/system_text.h"

namespace srt::launch {

namespace {

bool Has(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return std::string(s);
}

bool LooksLikeUsernsRefusal(std::string_view err) {
  return Has(err, "No permissions to creat") ||  // "creating" upstream, "create" in Debian
         Has(err, "Creating new namespace failed") || Has(err, "setting up uid map") ||
         Has(err, "uid map") || Has(err, "loopback: Failed RTM_NEWADDR") ||
         Has(err, "Failed to make / slave") || Has(err, "unshare user ns") ||
         Has(err, "No space left on device");
}

}  // namespace

std::string DiagnoseBwrapFailure(std::string_view bwrap_stderr, int bwrap_exit_code,
                                 const HostFacts& facts) {
  std::string said = Trim(bwrap_stderr);
  std::string out = "bubblewrap could not create the sandbox";
  if (!said.empty()) {
    out += ": " + said;
  } else {
    out += " (bwrap exited with status " + std::to_string(bwrap_exit_code) + " and said nothing)";
  }
  // A clone that fails for want of processes is EAGAIN, whichever namespaces it asked for.
  if (Has(bwrap_stderr, "Resource temporarily unavailable")) {
    return out + "\nbwrap could not start another process: " + ProcessLimitText() + ".";
  }
  if (!LooksLikeUsernsRefusal(bwrap_stderr)) return out;

  out +=
      "\nThis host refuses the user namespace the sandbox needs. srt does not run commands "
      "unsandboxed; to fix it:";
  bool specific = false;
  if (facts.apparmor_restrict_unprivileged_userns == "1") {
    specific = true;
    out +=
        "\n  - AppArmor restricts unprivileged user namespaces "
        "(kernel.apparmor_restrict_unprivileged_userns=1, the Ubuntu 24.04+ default). Allow "
        "bwrap with a profile, e.g. /etc/apparmor.d/bwrap containing:\n"
        "        abi <abi/4.0>,\n"
        "        include <tunables/global>\n"
        "        profile bwrap /usr/bin/bwrap flags=(unconfined) {\n"
        "          userns,\n"
        "        }\n"
        "    then run: sudo apparmor_parser -r /etc/apparmor.d/bwrap";
  }
  if (facts.unprivileged_userns_clone == "0") {
    specific = true;
    out +=
        "\n  - Unprivileged user namespaces are disabled "
        "(kernel.unprivileged_userns_clone=0): sudo sysctl -w kernel.unprivileged_userns_clone=1";
  }
  if (facts.max_user_namespaces == "0") {
    specific = true;
    out += "\n  - user.max_user_namespaces is 0: sudo sysctl -w user.max_user_namespaces=15000";
  }
  if (facts.in_container) {
    specific = true;
    out +=
        "\n  - srt is running inside a container whose seccomp profile or capabilities forbid "
        "namespaces. Run the container with a profile that allows unshare/clone of user "
        "namespaces (e.g. docker run --security-opt seccomp=unconfined), or set "
        "\"enableWeakerNestedSandbox\": true in the settings (weaker isolation).";
  }
  if (facts.caller_is_root && Has(bwrap_stderr, "uid map")) {
    specific = true;
    out +=
        "\n  - srt runs as root without CAP_SETFCAP, which the kernel requires to map uid 0 "
        "into a user namespace; keep CAP_SETFCAP in the capability bounding set.";
  }
  if (!specific) {
    out +=
        "\n  - Check that unprivileged user namespaces are enabled (sysctl "
        "user.max_user_namespaces, kernel.unprivileged_userns_clone) and that no LSM policy "
        "forbids them for bwrap.";
  }
  return out;
}

}  // namespace srt::launch
