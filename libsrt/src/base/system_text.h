// SPDX-License-Identifier: Apache-2.0
// The text of an errno value or a signal number, as strerror and strsignal give it but safe from
// any thread: those two may share one buffer between threads (glibc: "MT-Unsafe race"), and the
// proxy, srt-poller's sessions and the launcher's relay threads all format errors at once.
#pragma once

#include <string>
#include <string_view>

#include "srt/result.h"

namespace srt {

// "No such file or directory" for ENOENT, "unknown error" for a value libc has no text for; the
// text is a constant that outlives every caller.
const char* ErrnoText(int err);

// "Killed" for SIGKILL, "unknown signal" for a number libc has no text for; a constant.
const char* SignalText(int sig);

// What a fork, clone or thread start that failed with EAGAIN means, and which limit to raise
// (without a leading capital or a final stop: it follows the errno text). A constant.
const char* ProcessLimitText();

// ErrnoText(err) for a process or thread that could not be started: after an EAGAIN, with
// ProcessLimitText() in parentheses.
std::string StartErrnoText(int err);

// SysError(what, err) with StartErrnoText.
[[nodiscard]] Error StartError(std::string_view what, int err);

}  // namespace srt
