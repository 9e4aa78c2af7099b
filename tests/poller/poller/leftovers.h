// SPDX-License-Identifier: Apache-2.0
// What an srt-poller that was killed, or exited at a second signal, leaves behind for its
// sessions directory, swept after a test as srt-poller's next start would sweep it.
#pragma once

#include <string>

namespace srt::testing {

// Unmounts the workspaces left mounted (--disk) and removes the sessions' cgroups left behind
// (their sandboxes died with srt-poller), with srt-poller's own sweeps: a test's sessions
// directory has no next start to do it. Returns the sweep's log ("" when nothing was left).
std::string SweepPollerLeftovers(const std::string& sessions_dir);

}  // namespace srt::testing
