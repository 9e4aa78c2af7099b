// SPDX-License-Identifier: Apache-2.0
// Interrupt: how a long-running tool learns that it must stop (a cancel request, or EOF on the
// toolbox's stdin) without threads: the tool polls fd() with its own fds and calls Check().
#pragma once

namespace srt::poller::toolbox {

class Interrupt {
 public:
  virtual ~Interrupt() = default;
  // An fd to poll for POLLIN while the tool waits, or -1 when nothing can interrupt it.
  virtual int fd() const = 0;
  // Called when fd() is readable. Returns true when the running tool must stop now.
  virtual bool Check() = 0;
};

// For callers (and tests) that never interrupt.
class NoInterrupt final : public Interrupt {
 public:
  int fd() const override { return -1; }
  bool Check() override { return false; }
};

}  // namespace srt::poller::toolbox
