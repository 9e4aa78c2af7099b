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

std::string_view StatusPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 407:
      return "Proxy Authentication Required";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 421:
      return "Misdirected Request";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

std::string WithoutFields(std::string_view head,
                          const std::function<bool(std::string_view)>& drop) {
  std::string out;
  out.reserve(head.size());
  size_t start = 0;
  bool first = true;
  while (start < head.size()) {
    size_t end = head.find("\r\n", start);
    end = end == std::string_view::npos ? head.size() : end + 2;
    const std::string_view line = head.substr(start, end - start);
    start = end;
    if (!first) {
      const size_t colon = line.find(':');
      if (colon != std::string_view::npos && colon > 0 && drop(line.substr(0, colon))) continue;
    }
    first = false;
    out += line;
  }
  return out;
}

}  // namespace srt::proxy::http
