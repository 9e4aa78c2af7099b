// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: srt-mcp's handling of what a server writes and a client POSTs. Each input
// is split at newlines like a server's stdout; every line is classified (ClassifyMessage) and
// routed through a session's streams (SessionStreams), with requests opened, abandoned and
// resumed on the way. Properties: nothing crashes, every delivery has an id naming its stream,
// a response ends its stream, and the in-flight count matches InFlight().
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "protocol/jsonrpc.h"
#include "protocol/sse.h"
#include "protocol/streams.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  srt::mcp::SessionStreams streams(4);
  size_t n = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? "" : text.substr(nl + 1);
    srt::Result<srt::mcp::Message> m = srt::mcp::ClassifyMessage(line);
    if (!m) continue;
    ++n;
    if (m->kind == srt::mcp::MessageKind::kRequest && n % 3 == 0) {
      // As if a client had POSTed it.
      srt::Result<uint64_t> s = streams.OpenRequest(m->id, m->progress_token);
      if (s && n % 2 == 0) (void)streams.Abandon(*s);
      continue;
    }
    auto d = streams.Route(*m, std::string(line));
    if (d) {
      Require(d->record.id.starts_with(std::to_string(d->stream) + "-"));
      Require(!d->ends_stream || m->kind == srt::mcp::MessageKind::kResponse);
      std::string event = srt::mcp::SseEvent(d->record.id, d->record.data);
      Require(event.ends_with("\n\n"));
      (void)streams.ResumeAfter(d->record.id);
    }
    streams.SetStandaloneAttached(n % 5 == 0);
  }
  Require(streams.inflight() == streams.InFlight().size());
  (void)streams.TakeStandalonePending();
  return 0;
}
