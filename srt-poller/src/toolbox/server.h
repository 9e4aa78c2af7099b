// The toolbox protocol (docs/poller.md "Toolbox protocol"): one JSON object per line on
// the toolbox's stdin/stdout.
//
//   <- {"ready":true,"version":1}                                   once, first
//   -> {"id":7,"tool":"bash","input":{...},"timeout_ms":120000}      a call
//   -> {"cancel":7}                                                  stop call 7 now
//   <- {"id":7,"is_error":false,"content":[{"type":"text","text":"..."}]}
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
#include "toolbox/limits.h"
#include "toolbox/toolbox.h"

namespace srt::poller::toolbox {

inline constexpr int kProtocolVersion = 1;

// A decoded protocol line. Exactly one of call/cancel/bad is meaningful, by `kind`.
struct Message {
  enum class Kind { kCall, kCancel, kBad };
  Kind kind = Kind::kBad;
  nlohmann::json id;  // the call's (or cancel's) id; null when unknown
  std::string tool;
  nlohmann::json input;
  long long timeout_ms = 0;  // 0 = the default per-call deadline
  std::string error;         // kBad: what is wrong
};

// Pure: parses one line (without its newline). Never throws.
Message ParseMessage(std::string_view line);

// Pure: the response line (without newline); invalid UTF-8 in `text` becomes U+FFFD.
std::string FormatResponse(const nlohmann::json& id, const std::string& text, bool is_error);

struct ServeOptions {
  size_t max_line_bytes = kMaxRequestLineBytes;
  size_t max_queued = kMaxQueuedRequests;
};

// Serves the protocol on `in_fd`/`out_fd` until EOF on `in_fd` (Ok) or until `out_fd` breaks
// (error). The shell is killed before it returns.
[[nodiscard]] Result<void> Serve(int in_fd, int out_fd, Toolbox& toolbox,
                                 const ServeOptions& options = {});

}  // namespace srt::poller::toolbox
