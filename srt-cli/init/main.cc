// srt-init: srt's helper binary. `srt-init init ...` is PID 1 inside a sandbox; `srt-init agent
// ...` works on the host side of one. Both are started by srt only (see launch/init_wire.h).
#include "rt.h"

namespace srt::init {
int RunInit(int argc, char** argv, char** envp);
int RunAgent(int argc, char** argv);
}  // namespace srt::init

extern "C" int SrtInitMain(int argc, char** argv, char** envp) {
  if (argc >= 2 && argv[1][0] == 'i' && argv[1][1] == 'n' && argv[1][2] == 'i' &&
      argv[1][3] == 't' && argv[1][4] == 0) {
    return srt::init::RunInit(argc, argv, envp);
  }
  if (argc >= 2 && argv[1][0] == 'a' && argv[1][1] == 'g' && argv[1][2] == 'e' &&
      argv[1][3] == 'n' && argv[1][4] == 't' && argv[1][5] == 0) {
    return srt::init::RunAgent(argc, argv);
  }
  srt::rt::WriteStr(2,
                    "srt-init: this is srt's in-sandbox helper; it is started by srt, not by "
                    "hand\n");
  return 2;
}
