// SPDX-License-Identifier: Apache-2.0
// Pure string helpers shared by the CLI, debug output and error messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace srt::strings {

// Quotes for a POSIX shell when needed: "abc" stays, "a b" -> 'a b', "it's" -> 'it'"'"'s'.
std::string ShellQuote(std::string_view s);
// Joins ShellQuote()d words with spaces, for debug output of argv vectors.
std::string ShellJoin(const std::vector<std::string>& words);
// Quotes a user-controlled value for an error message: 'value' with control characters escaped.
std::string Quote(std::string_view s);
// A hostile value quoted for an error message: at most `max` bytes of it, with anything outside
// printable ASCII (and the quote and backslash) escaped as \xNN, and "..." when cut.
std::string QuoteForMessage(std::string_view s, size_t max = 64);
// Appends byte `c` as \xNN (lower-case hex): the one escape every quoting helper uses.
void AppendHexEscape(std::string& out, unsigned char c);
// `s` with every byte for which `escape` is true written as \xNN.
std::string EscapeBytes(std::string_view s, bool (*escape)(unsigned char));
// `s` with every byte outside printable ASCII (below 0x20, 0x7f and above) as \xNN.
std::string EscapeNonPrintable(std::string_view s);
// The length (1-4) of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF), or 0 when there is none there.
size_t Utf8SequenceLength(std::string_view text, size_t i);
// Whether all of `text` is well-formed UTF-8.
bool IsValidUtf8(std::string_view text);
// The optimal-string-alignment distance between `a` and `b` (insertions, deletions,
// substitutions and swaps of two neighbours count one each), ASCII case ignored: how far a
// typed name is from a known one.
size_t EditDistance(std::string_view a, std::string_view b);
// Whether no array or object in the JSON text `json` nests deeper than `max_depth` (brackets
// inside strings do not count). A linear scan, for text from a hostile peer before nlohmann's
// recursive parser (and its recursive destructor) sees it.
bool JsonNestingWithin(std::string_view json, int max_depth);

}  // namespace srt::strings
