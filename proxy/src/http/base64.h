// SPDX-License-Identifier: Apache-2.0
// http/base64.h: strict base64 decoding (RFC 4648 §4) for Basic credentials (RFC 7617).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace srt::proxy::http {

// Decodes standard-alphabet base64 with padding. Strict: the length must be a multiple of 4, '='
// may only end the text (one or two of them), the bits a final quantum leaves unused must be zero
// (RFC 4648 §3.5: so each byte string has one spelling), and no whitespace or other characters.
// nullopt on any violation. The empty text decodes to the empty string.
[[nodiscard]] std::optional<std::string> DecodeBase64(std::string_view text);

// Encodes with padding; used by tests and by clients built in tests.
[[nodiscard]] std::string EncodeBase64(std::string_view bytes);

}  // namespace srt::proxy::http
