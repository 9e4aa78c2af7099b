// SPDX-License-Identifier: Apache-2.0
// poller/mountinfo: which of the host's mounts lie below a directory. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace srt::poller {

// The mount points in /proc/self/mountinfo text that are directly below `dir` (one path
// component deeper), unescaped (the kernel writes space, tab, newline and backslash as \ooo).
// Lines that are not mountinfo lines are skipped.
std::vector<std::string> MountPointsBelow(std::string_view mountinfo, std::string_view dir);

}  // namespace srt::poller
