// SPDX-License-Identifier: Apache-2.0
// api/sse.h: incremental parser for text/event-stream (WHATWG HTML §9.2.6), pure.
//
// Usage: make one SseParser per connection, Feed() it the bytes as they arrive (in any split),
// and act on the events it returns. Once Feed() fails the parser stays failed; drop the
// connection and make a new parser on reconnect. An event still pending at end of stream is
// discarded (the spec's rule), so nothing needs flushing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"

namespace srt::poller {

struct SseEvent {
  std::string type;  // the `event:` field, or "message" when the event had none
  std::string data;  // the `data:` lines joined with '\n' (no trailing newline)
  std::string id;    // the last event ID in effect when this event was dispatched
};

struct SseLimits {
  size_t max_line = size_t{1} << 20;    // one line, without its terminator
  size_t max_event = size_t{16} << 20;  // data + event type of one event
};

class SseParser {
 public:
  explicit SseParser(SseLimits limits = {}) : limits_(limits) {}

  // Consumes `bytes` and returns the events they complete, in order. Errors (kProtocol) when a
  // line or an event exceeds its limit; the events completed earlier in the same call are lost
  // with it, which is fine because the caller reconnects anyway.
  [[nodiscard]] srt::Result<std::vector<SseEvent>> Feed(std::string_view bytes);

  // The last `retry:` value seen (the server's reconnection time), if any.
  std::optional<uint64_t> retry_ms() const { return retry_ms_; }
  const std::string& last_event_id() const { return last_event_id_; }
  bool failed() const { return failed_; }

 private:
  srt::Result<void> ProcessLine(std::string_view line, std::vector<SseEvent>& out);

  SseLimits limits_;
  std::string line_;        // the current unterminated line
  bool skip_lf_ = false;    // the previous chunk ended in CR: a leading LF belongs to it
  size_t bom_checked_ = 0;  // bytes of the stream start compared with the UTF-8 BOM so far
  bool bom_done_ = false;
  std::string data_;  // each `data:` line plus '\n'; non-empty iff the event has data
  std::string event_type_;
  std::string id_buffer_;
  std::string last_event_id_;
  std::optional<uint64_t> retry_ms_;
  bool failed_ = false;
};

}  // namespace srt::poller
