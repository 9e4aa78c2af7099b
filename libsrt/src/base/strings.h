// Pure string helpers shared by the CLI, debug output and error messages.
#pragma once

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

}  // namespace srt::strings
