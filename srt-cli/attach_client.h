// SPDX-License-Identifier: Apache-2.0
// srt-cli/attach_client: `srt --attach SOCKET CMD...` and `srt-attach SOCKET CMD...`, the
// client of a warm sandbox (serve.h). It links nothing but base, the frames and the exec plan's
// encoder, so that the small srt-attach executable it is also part of starts in a fraction of
// srt's time (every attached command pays that start).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace srt::cli {

using Print = std::function<void(const std::string&)>;

// Runs `argv` in the warm sandbox at `socket_path`: stdio, environment and working directory
// are the caller's, signals are relayed; returns the exit status a plain `srt` run of `argv`
// would (srt's codes: 128+N for a relayed SIGINT/SIGTERM/SIGHUP/SIGQUIT, 127/126 when it could
// not be executed, kExitSetupFailure when it could not be run at all).
int Attach(const std::string& socket_path, const std::vector<std::string>& argv, bool debug,
           const Print& print);

}  // namespace srt::cli
