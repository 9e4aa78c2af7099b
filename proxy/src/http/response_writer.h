// SPDX-License-Identifier: Apache-2.0
// http/response_writer.h: the exact bytes of the responses the proxy itself sends (403, 407, 400,
// 502, ...). Pure. Emit conservatively: CRLF everywhere, Content-Length computed, nothing a client
// could read two ways.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace srt::proxy::http {

// "HTTP/1.1 <status> <reason>\r\n", each header as "Name: value\r\n" in order, then
// "Content-Length: <body size>\r\n\r\n" and the body. Content-Length is left out where RFC 9110
// forbids it (1xx, 204; §8.6) and for 304; a caller's own Content-Length or Transfer-Encoding is
// dropped (the computed one is the only one). So that a deny reason or a header value can never
// split the response, every control character in `reason`, names and values is replaced by a
// space, and a name that is not a token is dropped. `status` is clamped to 100..999 (3 digits).
[[nodiscard]] std::string FormatResponse(
    int status, std::string_view reason,
    const std::vector<std::pair<std::string, std::string>>& headers, std::string_view body);

// "HTTP/1.1 200 Connection Established\r\n\r\n": the answer to an allowed CONNECT. RFC 9110
// §9.3.6: a 2xx to CONNECT carries neither Content-Length nor Transfer-Encoding.
[[nodiscard]] std::string FormatConnectEstablished();

// The standard reason phrase of a status srt's proxy or srt-mcp sends ("Bad Request" for 400,
// ...); "Error" for one neither sends.
[[nodiscard]] std::string_view StatusPhrase(int status);

// `head` (a whole head the parser accepted: CRLF lines, no obs-fold, ending in an empty line)
// without the field lines whose name `drop` says yes to; the start line and the rest as they
// were (network.stripResponseHeaders).
[[nodiscard]] std::string WithoutFields(std::string_view head,
                                        const std::function<bool(std::string_view)>& drop);

}  // namespace srt::proxy::http
