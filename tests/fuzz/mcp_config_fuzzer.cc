// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: srt-mcp's ParseMcpConfig on arbitrary bytes (libsrt's JSON text reader,
// config/json_text, with comments and positions; the decoder; libsrt's settings parser for each
// `srt` block). settings_fuzzer drives the same reader without comments.
// Besides "never crashes, never throws": every message names the origin, and an accepted
// configuration never listens beyond loopback without tokens.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/config.h"

namespace {

constexpr std::string_view kOrigin = "fuzz.json";

void Require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  srt::Result<srt::mcp::McpConfig> c = srt::mcp::ParseMcpConfig(text, kOrigin);
  if (!c) {
    Require(c.error().message().starts_with(kOrigin));
    Require(c.error().code() == srt::Errc::kInvalidArgument);
    return 0;
  }
  Require(!c->bearer_token_files.empty() || srt::mcp::IsLoopbackHost(c->listen_host));
  for (const auto& [name, server] : c->servers) {
    Require(!name.empty() && name.size() <= 64);
    Require(!server.argv.empty() && !server.argv[0].empty());
  }
  return 0;
}
