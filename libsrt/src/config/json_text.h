// SPDX-License-Identifier: Apache-2.0
// config/json_text: the one reader of JSON text for srt's configuration files - libsrt's
// settings (ParseSettings) and srt-mcp's configuration (JSON with comments). Pure.
//
// CheckJsonText is the first pass over a file: nlohmann's SAX parser, through an iterator that
// remembers how far the lexer read, finds syntax errors (with line:column), nesting deeper than
// a limit and the first key given twice in an object, and records where each key and array
// element starts, by JSON pointer, so that a schema error found later in the DOM can say
// line:column too. The caller then builds the DOM (nlohmann::ordered_json::parse, with the same
// `comments` flag) and decodes it; the reader's errors are values its caller words.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace srt::config {

struct JsonTextOptions {
  size_t max_depth = 64;  // objects and arrays nested deeper: kTooDeep
  bool comments = false;  // `//` and `/* */` comments are whitespace
};

struct JsonTextError {
  enum class Kind {
    kSyntax,        // not JSON: `reason` is nlohmann's, without its position prefix
    kTooDeep,       // nested deeper than max_depth
    kDuplicateKey,  // `key` appears twice in the object at `object_pointer`
  };
  Kind kind = Kind::kSyntax;
  // 1-based, bytes: kSyntax: the offending byte (one past the end for an early end);
  // kDuplicateKey: the opening quote of the key's second occurrence; kTooDeep: 0.
  size_t line = 0;
  size_t column = 0;
  std::string reason;  // kSyntax; printable ASCII (other bytes as \xNN)
  std::string object_pointer;
  std::string key;  // as written (unescaped)
};

// Byte offset of where each key or array element starts (the key's opening quote, the
// element's first byte), by JSON pointer ("/servers/files", "/routes/0").
using JsonPositions = std::unordered_map<std::string, size_t>;

// The first error in `text`, or nullopt when it is one JSON value within the limits.
// `positions`, if given, receives the start of every key and array element read.
[[nodiscard]] std::optional<JsonTextError> CheckJsonText(std::string_view text,
                                                         const JsonTextOptions& options,
                                                         JsonPositions* positions = nullptr);

// A JSON pointer's reference token for `key` (RFC 6901: '~' -> "~0", '/' -> "~1").
[[nodiscard]] std::string JsonPointerToken(std::string_view key);

// nlohmann's exception text without its "[json.exception...] parse error at line L, column C: "
// prefix (callers say line:column themselves), non-printable bytes as \xNN.
[[nodiscard]] std::string ShortJsonReason(std::string_view what);

// 1-based line and byte column of byte `index` (0-based) of `text`.
[[nodiscard]] std::pair<size_t, size_t> LineAndColumn(std::string_view text, size_t index);

}  // namespace srt::config
