// SPDX-License-Identifier: Apache-2.0
// http/response_writer.cc: the bytes of the proxy's own responses.
#include "http/response_writer.h"

#include <cstdint>

#include "wire/ascii.h"

namespace srt::proxy::http {
namespace {

// Control characters (CR and LF above all) become spaces: a value can never end a line.
void AppendSanitised(std::string& out, std::string_view text) {
  for (char c : text) {
    auto u = static_cast<uint8_t>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
}

}  // namespace

std::string FormatResponse(int status, std::string_view reason,
                           const std::vector<std::pair<std::string, std::string>>& headers,
                           std::string_view body) {
  if (status < 100) {
    status = 100;
  } else if (status > 999) {
    status = 999;
  }
  std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
  AppendSanitised(out, reason);
  out += "\r\n";
  for (const auto& [name, value] : headers) {
    if (!ascii::IsToken(name) || ascii::EqualsIgnoreCase(name, "Content-Length") ||
        ascii::EqualsIgnoreCase(name, "Transfer-Encoding")) {
      continue;
    }
    out += name;
    out += ": ";
    AppendSanitised(out, value);
    out += "\r\n";
  }
  if (status >= 200 && status != 204 && status != 304) {
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  out += "\r\n";
  out += body;
  return out;
}

std::string FormatConnectEstablished() { return "HTTP/1.1 200 Connection Established\r\n\r\n"; }

}  // namespace srt::proxy::http
