// SPDX-License-Identifier: Apache-2.0
// launch/stdio_relay: what the command gets for the standard descriptors and the passed ones,
// as launch/passing decides, and the threads that carry the bytes: one per relayed direction,
// each between a descriptor of the caller's and one of srt's own (a pipe end, or the master of
// the sandbox's terminal).
//
// Usage: Prepare() before bwrap is spawned (it refuses what cannot be passed), hand bwrap
// CommandFd(i); Started() once it runs; AttachTerminal() when srt-init sends the terminal's
// master, CommandInForeground() once the command runs; Finish() once the sandbox has ended.
// Destroying it stops everything at once.
#pragma once

#include <termios.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "launch/passing.h"
#include "launch/plan_writer.h"
#include "srt/result.h"

namespace srt::launch {

class StdioRelay {
 public:
  // Descriptors in order: stdin, stdout, stderr, then `keep` (passed under their own numbers).
  [[nodiscard]] static Result<std::unique_ptr<StdioRelay>> Prepare(int stdin_fd, int stdout_fd,
                                                                   int stderr_fd,
                                                                   const std::vector<int>& keep);
  ~StdioRelay();
  StdioRelay(const StdioRelay&) = delete;
  StdioRelay& operator=(const StdioRelay&) = delete;

  // What bwrap gets in place of descriptor `index` (the order of Prepare).
  int CommandFd(size_t index) const { return entries_[index].command; }
  // Bit n set: standard descriptor n gets the sandbox's terminal (wire::kTagTerminal).
  uint32_t terminal_slots() const { return terminal_slots_; }
  // The devices srt-init opens in the sandbox in place of the caller's (wire::kTagReopen).
  const std::vector<InitPlanSpec::Reopen>& reopens() const { return reopens_; }

  // bwrap holds the command's ends: srt's copies are closed and the pipes' threads start.
  [[nodiscard]] Result<void> Started();
  // The sandbox's terminal: it takes the caller's terminal's modes and size, and what the
  // command writes there is passed on from now; when the command reads the caller's terminal,
  // that one is put in raw mode (its keys, Ctrl-C included, are the command's terminal's to
  // interpret) until Suspend() or Finish().
  [[nodiscard]] Result<void> AttachTerminal(UniqueFd master);
  // The command leads the foreground job of the sandbox's terminal (srt-init makes it so before
  // the command's execve): the caller's keys go to that terminal from now. Keys typed earlier
  // wait in the caller's terminal: a Ctrl-C typed before would make the sandbox's terminal
  // signal whatever job was in its foreground then (none, or PID 1, which ignores it), and the
  // command would run on as if it had never been typed. No-op without a terminal to read.
  [[nodiscard]] Result<void> CommandInForeground();
  void Resize();   // the caller's terminal changed its size (SIGWINCH)
  void Suspend();  // the command was stopped: the caller's terminal back in its own modes
  void Resume();   // ... and continued
  // The sandbox has ended: passes on all the command wrote, stops reading for it, moves an input
  // file's offset back to what the command consumed, restores the caller's terminal.
  void Finish();

 private:
  struct Entry {
    int caller = -1;
    Passing passing = Passing::kAsIs;
    int command = -1;  // what bwrap gets
  };
  struct Pump;

  StdioRelay() = default;
  [[nodiscard]] Result<void> StartPump(Pump& pump);
  void Run(Pump& pump);
  static void Ended(Pump& pump);
  void Stop(bool abandon_output);

  std::vector<Entry> entries_;
  std::vector<UniqueFd> command_ends_;  // held until bwrap has them
  UniqueFd null_;                       // /dev/null, for closed streams and terminal slots
  std::vector<std::unique_ptr<Pump>> pumps_;
  UniqueFd stop_inputs_;   // eventfd: input pumps stop reading
  UniqueFd stop_outputs_;  // eventfd: output pumps give up what they hold
  UniqueFd resume_;        // eventfd: srt was continued (a background terminal reader waits)
  uint32_t terminal_slots_ = 0;
  std::vector<InitPlanSpec::Reopen> reopens_;
  UniqueFd master_;
  UniqueFd terminal_in_fd_, terminal_out_fd_;  // srt's copies of the caller's terminal
  int terminal_in_ = -1;                       // the caller's terminal the command reads (-1: none)
  int terminal_out_ = -1;                      // the caller's terminal it writes to
  termios saved_{};                            // terminal_in_'s modes before srt changed them
  bool raw_ = false;                           // terminal_in_ is in raw mode
  bool finished_ = false;
};

}  // namespace srt::launch
