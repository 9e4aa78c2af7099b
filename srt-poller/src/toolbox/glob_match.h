// SPDX-License-Identifier: Apache-2.0
// Pure glob matching for the glob tool: '/'-separated segments, "**" matches zero or more
// whole segments, every other segment is an fnmatch(3) pattern (* ? [..]) on one segment.
#pragma once

#include <string_view>

namespace srt::poller::toolbox {

// True when `pattern` contains a ".." segment (refused: it could name something outside).
bool HasParentDirSegment(std::string_view pattern);

// Whether `rel` (a '/'-separated path relative to the search root) matches `pattern`.
// Memoised, so "**/**/**/x" cannot backtrack exponentially.
bool GlobMatch(std::string_view pattern, std::string_view rel);

}  // namespace srt::poller::toolbox
