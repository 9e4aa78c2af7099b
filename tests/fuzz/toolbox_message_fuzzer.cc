// libFuzzer target: the toolbox protocol's parsers (srt-poller/src/toolbox_protocol), both
// ends: the toolbox's decoder of what the poller sends, and the poller's decoders of what comes
// out of a session's sandbox (the ready line and answers). Properties: no crash, throw or stack
// exhaustion; a call has an id and a tool name; a bad line says why; an accepted answer is one
// the toolbox could have written (it formats back to a line that parses to the same answer);
// the answer for any id and text is one line of valid JSON that carries the id back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "toolbox_protocol/protocol.h"

namespace {

namespace protocol = srt::poller::toolbox_protocol;

void Require(bool condition) {
  if (!condition) std::abort();
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

  if (auto answer = protocol::ParseAnswer(line)) {
    nlohmann::json id = answer->id ? nlohmann::json(*answer->id) : nlohmann::json(nullptr);
    auto again = protocol::ParseAnswer(protocol::FormatAnswer(id, answer->text, answer->is_error));
    Require(again && again->id == answer->id && again->is_error == answer->is_error);
  } else {
    Require(!answer.error().message().empty());
  }
  (void)protocol::ParseReady(line);
  return 0;
}
