// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the SSE parser (srt-poller/src/api/sse.h). Properties: no crash; an input
// fed whole and fed in pieces (sizes taken from the first byte) gives the same events, or both
// fail; no event exceeds the event limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "api/sse.h"

namespace {

using srt::poller::SseEvent;
using srt::poller::SseLimits;
using srt::poller::SseParser;

void Require(bool condition) {
  if (!condition) std::abort();
}

struct Outcome {
  bool ok = true;
  std::vector<SseEvent> events;
};

Outcome Run(std::string_view in, size_t piece, const SseLimits& limits) {
  SseParser p(limits);
  Outcome o;
  for (size_t i = 0; i < in.size(); i += piece) {
    auto r = p.Feed(in.substr(i, piece));
    if (!r) {
      o.ok = false;
      return o;
    }
    for (auto& e : *r) o.events.push_back(std::move(e));
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 7;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  const SseLimits limits{.max_line = 64, .max_event = 256};
  Outcome whole = Run(in, in.size() + 1, limits);
  Outcome split = Run(in, piece, limits);
  Require(whole.ok == split.ok);
  if (whole.ok) {
    Require(whole.events.size() == split.events.size());
    for (size_t i = 0; i < whole.events.size(); ++i) {
      Require(whole.events[i].type == split.events[i].type);
      Require(whole.events[i].data == split.events[i].data);
      Require(whole.events[i].id == split.events[i].id);
      Require(whole.events[i].data.size() + whole.events[i].type.size() <= limits.max_event);
    }
  }
  return 0;
}
