// SPDX-License-Identifier: Apache-2.0
// srt-poller/poller/worker_id: the worker id that stays the same across restarts, kept in the
// sessions directory (docs/poller.md, "Configuration").
#pragma once

#include <string>
#include <string_view>

#include "srt/result.h"

namespace srt::poller {

// The file, in the sessions directory. It starts with a dot, which no session id has, so no
// session's workspace (<sessions>/<session id>) can be at its name; and the sessions directory
// is hidden from every sandbox.
inline constexpr char kWorkerIdFileName[] = ".worker-id";

// What --worker-id accepts: 1 to 128 of letters, digits, '_', '-', '.'.
[[nodiscard]] bool IsWorkerId(std::string_view s);

// The id in <dir>/.worker-id: a regular file (never followed when it is a symlink, never waited
// on when it is a FIFO), owned by this user, not writable by group or others, holding one valid
// id and at most a newline. Anything else there is an error naming the file and saying to
// remove it: srt-poller then refuses to start rather than report under an id nobody chose.
// Without the file: `fresh`, which is stored (created O_EXCL, mode 0600) when `create` is set;
// without `create` (srt-poller --check) nothing is written, and a missing `dir` is no error.
[[nodiscard]] Result<std::string> LoadOrCreateWorkerId(const std::string& dir,
                                                       const std::string& fresh, bool create);

}  // namespace srt::poller
