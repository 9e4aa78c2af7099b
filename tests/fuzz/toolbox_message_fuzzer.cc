// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the toolbox protocol's parsers (srt-poller/src/toolbox_protocol), both
// ends: the toolbox's decoder of what the poller sends, and the poller's decoders of what comes
// out of a session's sandbox (the ready line and answers). Properties: no crash, throw or stack
// exhaustion; a call has an id and a tool name; a bad line says why; an accepted answer is one
// the toolbox could have written (it formats back to a line that parses to the same answer);
// the answer for any id and text is one line of valid JSON that carries the id back; and the
// answer reader, which walks the line without building it, accepts exactly what a check of the
// whole parsed document (the reference below) accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "toolbox_protocol/protocol.h"

namespace {

namespace protocol = srt::poller::toolbox_protocol;

void Require(bool condition) {
  if (!condition) std::abort();
}

// The answer's shape, judged on the whole document: {"id": unsigned or null, "is_error": bool,
// "content": [{"type": "text", "text": string}]} and nothing else.
// A key twice in one object is refused too (the document keeps only the last one).
bool ReferenceAccepts(std::string_view line) {
  std::vector<std::set<std::string>> keys;
  bool duplicate = false;
  auto watch = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) keys.emplace_back();
    if (event == Event::object_end && !keys.empty()) keys.pop_back();
    if (event == Event::key && !keys.empty() &&
        !keys.back().insert(parsed.get<std::string>()).second) {
      duplicate = true;
    }
    return true;
  };
  const nlohmann::json j = nlohmann::json::parse(line, watch, false);
  if (duplicate) return false;
  if (!j.is_object() || j.size() != 3) return false;
  const auto id = j.find("id");
  const auto is_error = j.find("is_error");
  const auto content = j.find("content");
  if (id == j.end() || !(id->is_number_unsigned() || id->is_null())) return false;
  if (is_error == j.end() || !is_error->is_boolean()) return false;
  if (content == j.end() || !content->is_array() || content->size() != 1) return false;
  const nlohmann::json& block = content->front();
  return block.is_object() && block.size() == 2 && block.contains("type") &&
         block["type"] == "text" && block.contains("text") && block["text"].is_string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  using protocol::Message;
  Message m = protocol::ParseMessage(line);
  switch (m.kind) {
    case Message::Kind::kCall:
      Require(!m.tool.empty());
      Require(m.id.is_number_integer() || m.id.is_string());
      Require(m.timeout_ms >= 0);
      break;
    case Message::Kind::kCancel:
      break;
    case Message::Kind::kBad:
      Require(!m.error.empty());
      break;
  }
  // Whatever text a tool produced (here: the raw input, invalid UTF-8 included), the answer is
  // one parseable JSON line with the same id.
  std::string out = protocol::FormatAnswer(m.id, std::string(line), true);
  Require(out.find('\n') == std::string::npos);
  auto j = nlohmann::json::parse(out, nullptr, false);
  Require(!j.is_discarded() && j.is_object());
  Require(j["id"] == m.id);

  auto answer = protocol::ParseAnswer(line);
  // Within the nesting limit, where the reference's recursive parser is safe to run.
  if (srt::strings::JsonNestingWithin(line, protocol::kMaxNesting)) {
    Require(answer.has_value() == ReferenceAccepts(line));
  }
  if (answer) {
    nlohmann::json id = answer->id ? nlohmann::json(*answer->id) : nlohmann::json(nullptr);
    auto again = protocol::ParseAnswer(protocol::FormatAnswer(id, answer->text, answer->is_error));
    Require(again && again->id == answer->id && again->is_error == answer->is_error);
  } else {
    Require(!answer.error().message().empty());
  }
  (void)protocol::ParseReady(line);
  return 0;
}
