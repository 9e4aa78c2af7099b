// SPDX-License-Identifier: Apache-2.0
// srt-toolbox: runs the agent_toolset_20260401 tools for one session, INSIDE its srt sandbox,
// speaking the toolbox protocol (toolbox/server.h) on stdin/stdout.
#include <signal.h>
#include <sys/prctl.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "toolbox/server.h"
#include "toolbox/toolbox.h"

// srt-toolbox runs under the sandbox's seccomp filter, which forbids ptrace: LeakSanitizer,
// which needs it, would fail every sanitized run at exit ("LeakSanitizer has encountered a
// fatal error"). Address and UB checks stay on; the tools' code is leak-checked by the unit
// tests, which run it in an unsandboxed process. Read only by sanitizer builds.
// NOLINTNEXTLINE(bugprone-reserved-identifier): the runtime's name
extern "C" const char* __lsan_default_options() { return "detect_leaks=0"; }

namespace {

constexpr char kUsage[] =
    "usage: srt-toolbox [--root DIR]\n"
    "Runs bash, read, write, edit, glob and grep for one session; the file tools are confined\n"
    "to DIR (default /workspace). Speaks one JSON object per line on stdin/stdout.\n";

}  // namespace

int main(int argc, char** argv) {
  // First: the agent's shell is our child with our uid. Non-dumpable, we are invisible in the
  // sandbox's /proc (hidepid=invisible) and refuse pidfd_getfd and /proc/PID/{fd,mem,environ},
  // so the shell cannot take the channel (stdin/stdout) to forge answers or steal calls, nor
  // our stderr (srt-poller's). The shell itself is dumpable again after its execve.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    std::perror("srt-toolbox: prctl(PR_SET_DUMPABLE)");
    return 1;
  }
  try {
    srt::poller::toolbox::ToolboxOptions options;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--root" && i + 1 < argc) {
        options.root = argv[++i];
      } else if (a.rfind("--root=", 0) == 0) {
        options.root = a.substr(7);
      } else if (a == "-h" || a == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      } else {
        std::fprintf(stderr, "srt-toolbox: unknown argument '%s'\n%s", argv[i], kUsage);
        return 2;
      }
    }
    // A runner that goes away must surface as EPIPE on write, not kill us mid-cleanup.
    signal(SIGPIPE, SIG_IGN);
    // Before anything reads the environment for the shell's.
    auto work_cgroup = srt::poller::toolbox::TakeWorkCgroupFds();
    if (!work_cgroup) {
      std::fprintf(stderr, "srt-toolbox: %s\n", work_cgroup.error().message().c_str());
      return 1;
    }
    options.work_cgroup_fds = std::move(*work_cgroup);
    auto toolbox = srt::poller::toolbox::Toolbox::Create(options);
    if (!toolbox) {
      std::fprintf(stderr, "srt-toolbox: %s\n", toolbox.error().message().c_str());
      return 1;
    }
    // The shell starts before we report ready, while the poller is still opening the session's
    // event stream: the first bash call then finds it running. A failure here is reported by
    // that call (it tries again).
    (void)(*toolbox)->StartShell();
    auto served = srt::poller::toolbox::Serve(0, 1, **toolbox);
    if (!served) {
      std::fprintf(stderr, "srt-toolbox: %s\n", served.error().message().c_str());
      return 1;
    }
    return 0;
  } catch (const std::bad_alloc&) {
    std::fputs("srt-toolbox: out of memory\n", stderr);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "srt-toolbox: %s\n", e.what());
    return 1;
  }
}
