// SPDX-License-Identifier: Apache-2.0
// The toolbox's end of the toolbox protocol (toolbox_protocol/protocol.h, docs/poller.md
// "Toolbox protocol"): one JSON object per line on the toolbox's stdin/stdout.
//
// Calls run one at a time, in arrival order. While one runs, the server reads further lines
// only to queue calls and to see cancels; a cancelled call is answered "tool cancelled" with
// is_error. A line that is not a valid call is answered with is_error (and "id":null when it has
// no usable id). EOF on stdin stops the running call, kills the shell, and ends Serve().
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "srt/result.h"
#include "toolbox/toolbox.h"
#include "toolbox_protocol/protocol.h"

namespace srt::poller::toolbox {

struct ServeOptions {
  size_t max_line_bytes = toolbox_protocol::kMaxLineBytes;
  size_t max_queued = toolbox_protocol::kMaxQueuedCalls;
};

// Serves the protocol on `in_fd`/`out_fd` until EOF on `in_fd` (Ok) or until `out_fd` breaks
// (error). The shell is killed before it returns.
[[nodiscard]] Result<void> Serve(int in_fd, int out_fd, Toolbox& toolbox,
                                 const ServeOptions& options = {});

}  // namespace srt::poller::toolbox
