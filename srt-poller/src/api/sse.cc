// SPDX-License-Identifier: Apache-2.0
// api/sse.cc: the event-stream interpretation algorithm of WHATWG HTML §9.2.6, incrementally.
#include "api/sse.h"

#include <charconv>

namespace srt::poller {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

}  // namespace

srt::Result<std::vector<SseEvent>> SseParser::Feed(std::string_view bytes) {
  if (failed_) return MakeError(Errc::kProtocol, "event stream: parser already failed");
  std::vector<SseEvent> out;
  // §9.2.6: "The UTF-8 decode algorithm strips one leading UTF-8 Byte Order Mark (BOM), if any."
  // The BOM may arrive split across chunks, so hold back a prefix of it until it is decided.
  while (!bom_done_ && !bytes.empty()) {
    if (bytes.front() == kBom[bom_checked_]) {
      bytes.remove_prefix(1);
      if (++bom_checked_ == kBom.size()) bom_done_ = true;
    } else {
      // Not a BOM after all: the bytes held back are ordinary stream content.
      line_.assign(kBom.substr(0, bom_checked_));
      bom_done_ = true;
    }
  }
  while (!bytes.empty()) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (bytes.front() == '\n') {
        bytes.remove_prefix(1);
        continue;
      }
    }
    // §9.2.5: end-of-line = CRLF / LF / CR.
    const size_t eol = bytes.find_first_of("\r\n");
    const std::string_view chunk = bytes.substr(0, eol);
    if (line_.size() + chunk.size() > limits_.max_line) {
      failed_ = true;
      return MakeError(Errc::kProtocol, "event stream: a line is longer than " +
                                            std::to_string(limits_.max_line) + " bytes");
    }
    if (eol == std::string_view::npos) {
      line_.append(chunk);
      break;
    }
    srt::Result<void> r = Result<void>();
    if (line_.empty()) {
      r = ProcessLine(chunk, out);
    } else {
      line_.append(chunk);
      r = ProcessLine(line_, out);
      line_.clear();
    }
    if (!r) {
      failed_ = true;
      return std::move(r).error();
    }
    skip_lf_ = bytes[eol] == '\r';
    bytes.remove_prefix(eol + 1);
  }
  return out;
}

srt::Result<void> SseParser::ProcessLine(std::string_view line, std::vector<SseEvent>& out) {
  if (line.empty()) {
    // Dispatch. The last event ID is updated even when no event is dispatched.
    last_event_id_ = id_buffer_;
    if (data_.empty()) {
      event_type_.clear();
      return Ok();
    }
    SseEvent ev;
    ev.type = event_type_.empty() ? "message" : std::move(event_type_);
    ev.data = std::move(data_);
    if (!ev.data.empty() && ev.data.back() == '\n') ev.data.pop_back();
    ev.id = last_event_id_;
    out.push_back(std::move(ev));
    data_.clear();
    event_type_.clear();
    return Ok();
  }
  if (line.front() == ':') return Ok();  // a comment (servers send these as keep-alives)
  std::string_view field = line;
  std::string_view value;
  if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "event") {
    if (value.size() + data_.size() > limits_.max_event) {
      return MakeError(Errc::kProtocol, "event stream: an event is larger than " +
                                            std::to_string(limits_.max_event) + " bytes");
    }
    event_type_.assign(value);
  } else if (field == "data") {
    if (data_.size() + value.size() + 1 + event_type_.size() > limits_.max_event) {
      return MakeError(Errc::kProtocol, "event stream: an event is larger than " +
                                            std::to_string(limits_.max_event) + " bytes");
    }
    data_.append(value);
    data_.push_back('\n');  // so a `data:` line with an empty value still makes data_ non-empty
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) id_buffer_.assign(value);
  } else if (field == "retry") {
    // Only ASCII digits count; anything else is ignored.
    uint64_t ms = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
    if (!value.empty() && ec == std::errc() && p == value.data() + value.size()) retry_ms_ = ms;
  }
  // Any other field is ignored (§9.2.6).
  return Ok();
}

}  // namespace srt::poller
