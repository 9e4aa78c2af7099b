// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the work-queue, session and memory JSON parsers (srt-poller/src/api/work.h).
// Properties: no crash or exception on any input; every id a parser accepts passes ValidateId;
// a parsed work item keeps its raw JSON; an encoded events body parses back; a memory write of
// any bytes encodes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/work.h"

namespace {

using namespace srt::poller;  // NOLINT(google-build-using-namespace)

void Require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (auto w = ParseWork(in)) {
    Require(ValidateId("id", w->id).has_value());
    if (w->is_session()) Require(ValidateId("id", w->data_id).has_value());
    Require(w->raw_json == in);
  }
  if (auto p = ParsePollResponse(200, in); p && p->has_value()) {
    Require(ValidateId("id", (*p)->id).has_value());
  }
  (void)DecodeWorkSecret(in);
  if (auto s = DecodeWorkSecret(in)) Require(!s->sessions_token.empty());
  (void)ParseHeartbeatResponse(in);
  if (auto e = ParseSessionEvent(in)) Require(!e->type.empty());
  (void)ParseEventPage(in);
  if (auto s = ParseSession(in)) {
    for (const auto& sk : s->skills) Require(ValidateId("id", sk.skill_id).has_value());
    for (const auto& m : s->memory_stores) {
      Require(ValidateId("id", m.memory_store_id).has_value());
    }
  }
  if (auto m = ParseMemory(in)) Require(ValidateId("id", m->id).has_value());
  if (auto page = ParseMemoryPage(in)) {
    for (const auto& m : page->data) Require(ValidateId("id", m.id).has_value());
  }
  // The input as a memory's path and content.
  (void)EncodeMemoryWrite(in, in, in);
  (void)ParseSkillVersionPage(in);
  (void)ParseApiErrorMessage(in);
  // The input as a tool's output text and as a content array.
  auto body = EncodeEventsBody({{.tool_use_id = "e1", .content_json = TextContent(in)}});
  Require(body.has_value());
  (void)EncodeEventsBody({{.tool_use_id = "e1", .content_json = std::string(in)}});
  return 0;
}
