// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the Host header check of terminated tunnels (server/host_match.h). The first
// byte picks the destination and port, the rest is the header value. Properties: no crash; the
// answer does not depend on the case of the value; a value that names the destination still
// does with an explicit port equal to the destination's, and never names another port.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/ascii.h"
#include "server/host_match.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kTargets[] = {"origin.test", "127.0.0.1", "[::1]", "a.b.c.d.example"};
  const srt::Host target = *srt::CanonicalizeHost(kTargets[data[0] % 4]);
  const uint16_t port = (data[0] & 0x10) != 0 ? 443 : 8443;
  const std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool named = srt::proxy::HostHeaderNames(value, target, port, 443);
  std::string upper = value;
  for (char& c : upper) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  Require(srt::proxy::HostHeaderNames(upper, target, port, 443) == named);
  if (named && value.find(':') == std::string::npos && !value.starts_with('[')) {
    Require(srt::proxy::HostHeaderNames(value + ":" + std::to_string(port), target, port, 443));
    Require(!srt::proxy::HostHeaderNames(value + ":1", target, port, 443));
  }
  return 0;
}
