// SPDX-License-Identifier: Apache-2.0
// srt-init: srt's helper binary. `srt-init init ...` is PID 1 inside a sandbox; `srt-init agent
// ...` works on the host side of one. Both are started by srt only (see init_protocol/wire.h).
#include "rt.h"

namespace srt::init {
int RunInit(int argc, char** argv, char** envp);
int RunAgent(int argc, char** argv);
int RunConnect(int argc, char** argv, char** envp);
}  // namespace srt::init

namespace {
bool Is(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
}  // namespace

extern "C" int SrtInitMain(int argc, char** argv, char** envp) {
  if (argc >= 2 && Is(argv[1], "init")) return srt::init::RunInit(argc, argv, envp);
  if (argc >= 2 && Is(argv[1], "agent")) return srt::init::RunAgent(argc, argv);
  if (argc >= 2 && Is(argv[1], "connect")) return srt::init::RunConnect(argc, argv, envp);
  srt::rt::WriteStr(2,
                    "srt-init: this is srt's in-sandbox helper; it is started by srt, not by "
                    "hand\n");
  return 2;
}
