// SPDX-License-Identifier: Apache-2.0
// /proc/self/mountinfo lines (see mountinfo.h). Pure.
#include "poller/mountinfo.h"

#include <algorithm>

namespace srt::poller {

std::vector<std::string> MountPointsBelow(std::string_view mountinfo, std::string_view dir) {
  std::vector<std::string> out;
  while (!mountinfo.empty()) {
    size_t eol = mountinfo.find('\n');
    std::string_view line = mountinfo.substr(0, eol);
    mountinfo = eol == std::string_view::npos ? std::string_view() : mountinfo.substr(eol + 1);
    // "36 35 98:0 /root /mnt/point rw,... - ext4 ..." : the mount point is the fifth field.
    size_t start = 0;
    for (int field = 0; field < 4 && start != std::string_view::npos; ++field) {
      start = line.find(' ', start);
      if (start != std::string_view::npos) ++start;
    }
    if (start == std::string_view::npos) continue;
    std::string_view raw = line.substr(start, line.find(' ', start) - start);
    std::string point;
    auto octal = [](char c) { return c >= '0' && c <= '7'; };
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\' && i + 3 < raw.size() && octal(raw[i + 1]) && octal(raw[i + 2]) &&
          octal(raw[i + 3])) {
        point += static_cast<char>(((raw[i + 1] - '0') << 6) | ((raw[i + 2] - '0') << 3) |
                                   (raw[i + 3] - '0'));
        i += 3;
      } else {
        point += raw[i];
      }
    }
    if (point.size() <= dir.size() + 1 || point.compare(0, dir.size(), dir) != 0 ||
        point[dir.size()] != '/' || point.find('/', dir.size() + 1) != std::string::npos) {
      continue;
    }
    out.push_back(std::move(point));
  }
  return out;
}

}  // namespace srt::poller
