// SPDX-License-Identifier: Apache-2.0
// policy/canonical: realpath over FsView, tolerant of a missing tail.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/fs_view.h"
#include "srt/result.h"

namespace srt::policy {

struct CanonicalPath {
  std::string path;     // symlink-free, normalised; missing components kept as spelled
  bool exists = false;  // the whole path exists
  std::vector<std::string> symlinks;  // every symlink traversed, as the (resolved) path of the link
};

// Resolves every symlink in an absolute path, like realpath(3), except that a missing component
// ends resolution and the rest is appended lexically. Fails on loops (more than 40 links).
[[nodiscard]] Result<CanonicalPath> Canonicalize(const FsView& fs, std::string_view absolute);

}  // namespace srt::policy
