// SPDX-License-Identifier: Apache-2.0
// sys/helper_path: where srt's helper programs are (see helper_path.h).
#include "sys/helper_path.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/path.h"

#ifndef SRT_HELPERS_FROM_BINDIR
#error "SRT_HELPERS_FROM_BINDIR (the helpers' folder relative to bin/) comes from the build"
#endif

namespace srt::sys {

std::vector<std::string> HelperCandidates(std::string_view name, std::string_view install_path) {
  std::vector<std::string> candidates;
  char self[PATH_MAX];
  if (realpath("/proc/self/exe", self) != nullptr) {
    const std::string dir(path::Parent(self));
    candidates.push_back(path::Join(dir, name));
    candidates.push_back(
        path::Normalize(path::Join(path::Join(dir, SRT_HELPERS_FROM_BINDIR), name)));
  }
  candidates.emplace_back(install_path);
  return candidates;
}

std::string FindHelper(std::string_view name, std::string_view install_path) {
  for (const std::string& c : HelperCandidates(name, install_path)) {
    if (access(c.c_str(), X_OK) == 0) return c;
  }
  return "";
}

}  // namespace srt::sys
