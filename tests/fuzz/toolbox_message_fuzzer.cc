// libFuzzer target: srt-toolbox's protocol decoder (srt-poller/src/toolbox/server.h), which
// reads what the poller sends into the sandbox. Properties: no crash or throw; a call has an
// id and a tool name (its input is each tool's to check); a bad line says why; the response for any
// id and text is one line of valid JSON that carries the id back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "toolbox/server.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  using srt::poller::toolbox::Message;
  Message m = srt::poller::toolbox::ParseMessage(line);
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
  std::string out = srt::poller::toolbox::FormatResponse(m.id, std::string(line), true);
  Require(out.find('\n') == std::string::npos);
  auto j = nlohmann::json::parse(out, nullptr, false);
  Require(!j.is_discarded() && j.is_object());
  Require(j["id"] == m.id);
  return 0;
}
