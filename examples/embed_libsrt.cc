// SPDX-License-Identifier: Apache-2.0
// embed_libsrt: runs a command in an srt sandbox from a C++ program, through libsrt's public API
// (the same path the `srt` command takes).
//
//   embed-libsrt [SETTINGS.json] -- COMMAND [ARG...]
//
// It captures the command's stdout through a pipe, passes one extra descriptor by number, sets
// the environment, and reports the exit status the way a shell would.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "srt/sandbox.h"
#include "srt/settings.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto dashes = std::find(args.begin(), args.end(), "--");
  if (dashes == args.end() || dashes + 1 == args.end()) {
    std::fprintf(stderr, "usage: embed-libsrt [SETTINGS.json] -- COMMAND [ARG...]\n");
    return 2;
  }

  srt::SandboxOptions options;
  if (dashes != args.begin()) {
    srt::Result<srt::LoadedSettings> loaded = srt::LoadSettingsFile(args.front());
    if (!loaded) {
      std::fprintf(stderr, "embed-libsrt: %s\n", loaded.error().message().c_str());
      return 125;
    }
    options.settings = std::move(loaded->settings);
  } else {
    // Settings can also be built in code: here, the working directory is writable.
    options.settings.filesystem.allow_write = {{".", false}};
  }
  options.argv.assign(dashes + 1, args.end());
#ifdef EMBED_SRT_INIT_PATH
  // Built against an installed libsrt (find_package(SrtSandbox) gives SrtSandbox_INIT_PATH, and
  // `pkg-config --variable=initpath srt-sandbox` the same): srt-init is not next to this program.
  options.init_path = EMBED_SRT_INIT_PATH;
#endif
  options.env = std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
                                         "GREETING=hello from the embedding program"};

  // The command's stdout comes back through a pipe; its stderr stays ours.
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return 125;
  options.stdout_fd = out[1];

  srt::Result<srt::Sandbox> sandbox = srt::Sandbox::Start(std::move(options));
  close(out[1]);
  if (!sandbox) {
    std::fprintf(stderr, "embed-libsrt: %s\n", sandbox.error().message().c_str());
    return 125;
  }
  std::string captured;
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0) captured.append(buf, static_cast<size_t>(n));
  close(out[0]);

  srt::Result<srt::ExitStatus> status = sandbox->Wait();
  if (!status) {
    std::fprintf(stderr, "embed-libsrt: %s\n", status.error().message().c_str());
    return 125;
  }
  std::printf("captured %zu bytes:\n%s", captured.size(), captured.c_str());
  if (status->signal) {
    std::printf("the command was killed by signal %d\n", status->signal);
  } else {
    std::printf("the command exited with status %d\n", status->code);
  }
  return status->code;
}
