// SPDX-License-Identifier: Apache-2.0
// loop/loop_thread.h: an EventLoop running on its own thread, with every signal blocked there.
//
// Usage: LoopThread t; SRT_RETURN_IF_ERROR(t.Start()); t.loop().RunInLoop(...); ... t.Stop();
// From Start() on, the owner talks to the loop with RunInLoop() (the loop is bound to its thread
// before Start() returns, even if that thread has not run yet; AssertInLoopThread() enforces
// it). Start() does not wait for the thread: on a busy machine that wait was a scheduler round
// trip on srt's way to starting bwrap (7 ms in a traced run at load 16). After Stop() has joined
// the thread, the owner may use loop() directly again, e.g. to tear down what lives on it.
//
// Signals: srt's main thread reads them from a signalfd, which only works while no other thread
// leaves them unblocked (the kernel delivers a process-directed signal to any thread that does not
// block it). The loop thread therefore starts with all signals blocked; it inherits the mask from
// Start(), which blocks everything just around thread creation, so there is no window.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "loop/event_loop.h"
#include "srt/result.h"

namespace srt::proxy {

class LoopThread {
 public:
  // `name` becomes the thread's name (pthread_setname_np; at most 15 bytes are kept).
  explicit LoopThread(std::string name = "srt-proxy");
  // Stops and joins the thread, then destroys the loop.
  ~LoopThread();
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

  // Creates the loop, starts the thread, binds the loop to it and returns (without waiting for
  // the thread to run). `before_run`, if given, runs on the new thread before its loop (tests
  // hold the thread there). Fails if the loop or the thread cannot be created, or if it was
  // started before (kInvalidArgument).
  [[nodiscard]] Result<void> Start(std::function<void()> before_run = {});
  // Stops the loop (queued functors still run, see EventLoop::Run) and joins the thread.
  // Idempotent. Must not be called from the loop thread itself (it would join itself): aborts.
  void Stop();
  [[nodiscard]] bool running() const { return thread_.joinable(); }

  // Valid after a successful Start(), until destruction (also after Stop()).
  EventLoop& loop() { return *loop_; }

 private:
  std::string name_;
  std::unique_ptr<EventLoop> loop_;
  std::thread thread_;
};

}  // namespace srt::proxy
