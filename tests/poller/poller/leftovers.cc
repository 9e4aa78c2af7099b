// SPDX-License-Identifier: Apache-2.0
#include "leftovers.h"

#include <sys/mman.h>
#include <unistd.h>

#include "base/unique_fd.h"
#include "poller/config.h"
#include "poller/log.h"
#include "poller/poller.h"
#include "poller/workspace_disk.h"

namespace srt::testing {

std::string SweepPollerLeftovers(const std::string& sessions_dir) {
  (void)poller::UnmountLeftoverWorkspaces(sessions_dir);
  UniqueFd log_fd(memfd_create("srt-test-sweep-log", MFD_CLOEXEC));
  if (!log_fd) return "memfd_create failed";
  poller::PollerConfig config;  // the default limits: memory, cpu and pids
  config.sessions_dir = sessions_dir;
  poller::RemoveLeftoverSessionCgroups(config,
                                       poller::Logger(poller::LogFormat::kText, log_fd.get()));
  std::string log;
  char buf[4096];
  for (off_t at = 0;;) {
    const ssize_t n = pread(log_fd.get(), buf, sizeof buf, at);
    if (n <= 0) break;
    log.append(buf, static_cast<size_t>(n));
    at += n;
  }
  return log;
}

}  // namespace srt::testing
