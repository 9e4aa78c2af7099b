// SPDX-License-Identifier: Apache-2.0
// srt-mcp/protocol/sse.cc: SSE events and HTTP chunks.
#include "protocol/sse.h"

#include <cstdio>

namespace srt::mcp {

std::string SseEvent(std::string_view id, std::string_view data) {
  std::string out;
  out.reserve(data.size() + id.size() + 16);
  if (!id.empty()) {
    out += "id: ";
    out += id;
    out += '\n';
  }
  size_t start = 0;
  while (true) {
    size_t end = data.find_first_of("\r\n", start);
    out += "data: ";
    out += data.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    out += '\n';
    if (end == std::string_view::npos) break;
    start = end + 1;
    if (data[end] == '\r' && start < data.size() && data[start] == '\n') ++start;
  }
  out += '\n';
  return out;
}

std::string Chunk(std::string_view payload) {
  if (payload.empty()) return "";
  char size[24];
  int n = std::snprintf(size, sizeof size, "%zx\r\n", payload.size());
  std::string out(size, static_cast<size_t>(n));
  out += payload;
  out += "\r\n";
  return out;
}

}  // namespace srt::mcp
