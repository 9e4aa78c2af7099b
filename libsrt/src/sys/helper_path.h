// SPDX-License-Identifier: Apache-2.0
// sys/helper_path: where srt's helper programs (srt-init, srt-toolbox) are, for the program that
// runs them (srt, srt-poller, a program embedding libsrt).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace srt::sys {

// The places a helper called `name` is looked for, in order:
//   1. next to the running program (a build tree, or an install that keeps them together);
//   2. in the helpers' folder relative to the running program's folder, as installed
//      (`../libexec/srt/NAME` from `bin/`), so that an install moved or made with
//      `cmake --install --prefix P` finds its own helpers;
//   3. `install_path`, where the build was configured to install it.
// The running program is /proc/self/exe with its symlinks resolved.
[[nodiscard]] std::vector<std::string> HelperCandidates(std::string_view name,
                                                        std::string_view install_path);

// The first of HelperCandidates that is executable (access X_OK), or "" when none is.
[[nodiscard]] std::string FindHelper(std::string_view name, std::string_view install_path);

}  // namespace srt::sys
