// SPDX-License-Identifier: Apache-2.0
// Pure text helpers for srt-toolbox: Go-compatible quoting and durations, terminal output
// cleanup, and errno -> the toolset's language-independent file error wording.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace srt::poller::toolbox {

// Go's %q for the strings the toolset quotes (paths, patterns): "a\"b\n".
std::string GoQuote(std::string_view s);

// Go's time.Duration.String() at millisecond precision: 120000 ms -> "2m0s", 250 ms -> "250ms".
std::string GoDuration(std::chrono::milliseconds d);

// What the Go bash tool does to PTY output: drops ANSI CSI sequences, turns "\r\n" into "\n",
// drops any other "\r", and trims leading newlines.
std::string CleanTerminalOutput(std::string_view raw);

// GO-SDK fsErrorMessage: ENOENT -> "no such file or directory", EACCES/EPERM -> "permission
// denied", ENOTDIR -> "not a directory", EISDIR -> "is a directory", else strerror, lower-cased.
std::string FsErrorMessage(int err);

}  // namespace srt::poller::toolbox
