// SPDX-License-Identifier: Apache-2.0
// srt-poller/poller/sandbox_output: what a session's sandbox writes (srt-toolbox's stderr, an
// --on-work script's stdout and stderr) reaches srt-poller's log through a pipe of its own, one
// record per line, with the session's ids, never srt-poller's own descriptors: a session must
// not read other sessions' records, truncate the log, or write records that look like ours.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::poller {

// Splits a byte stream into lines for the log (pure). A line longer than `max_line` bytes is
// cut there (the rest of it up to its newline is dropped and counted). Each line kept costs its
// bytes, its newline and `per_record` more, the record it becomes; once `max_total` is spent
// nothing more is kept, only counted, so neither long lines nor empty ones log without end. The
// sandbox controls every byte, so nothing here grows with its output.
class OutputLines {
 public:
  // `line` without its '\n'; `cut` when the line was longer than max_line.
  using Emit = std::function<void(std::string_view line, bool cut)>;

  OutputLines(size_t max_line, uint64_t max_total, uint64_t per_record)
      : max_line_(max_line), max_total_(max_total), per_record_(per_record) {}

  void Feed(std::string_view chunk, const Emit& emit);
  // The end of the stream: a last line without a newline is emitted.
  void Finish(const Emit& emit);

  // Bytes not logged: the cut parts of long lines and everything past max_total (newlines
  // included).
  uint64_t dropped() const { return dropped_; }
  // Whether max_total was reached (the caller says so once).
  bool full() const { return kept_ >= max_total_; }

 private:
  // `ended`: the line came with its newline (the stream's last one may not).
  void EmitLine(const Emit& emit, bool ended);

  size_t max_line_;
  uint64_t max_total_;
  uint64_t per_record_;
  std::string line_;
  bool cutting_ = false;  // the current line passed max_line_: drop up to its newline
  uint64_t kept_ = 0;
  uint64_t dropped_ = 0;
};

// The pipe and the thread that logs it. Start() makes the pipe; the sandbox gets write_end()
// (as stdout and/or stderr); CloseWriteEnd() once the sandbox has its copy; Join() after the
// sandbox has ended (every copy of the write end is then gone, so the thread sees EOF).
class SandboxOutput {
 public:
  static constexpr size_t kMaxLineBytes = 4096;
  static constexpr uint64_t kMaxBytes = uint64_t{1} << 20;  // per sandbox, records included
  // What a line's record adds to the log besides its text (time, level, msg, the session's ids):
  // charged to kMaxBytes with every line.
  static constexpr uint64_t kRecordBytes = 128;

  // Called on the thread: one line of the sandbox's, and srt-poller's notes about its output
  // (the limit reached, the bytes dropped); both to be logged with the session's fields.
  using Sink = std::function<void(std::string_view line, bool cut)>;
  using Note = std::function<void(std::string_view note, uint64_t dropped)>;

  [[nodiscard]] static Result<std::unique_ptr<SandboxOutput>> Start(Sink sink, Note note);
  ~SandboxOutput();
  SandboxOutput(const SandboxOutput&) = delete;
  SandboxOutput& operator=(const SandboxOutput&) = delete;

  int write_end() const { return write_.get(); }
  void CloseWriteEnd() { write_.reset(); }
  void Join();

 private:
  SandboxOutput(UniqueFd read, UniqueFd write, Sink sink, Note note);
  void Pump();

  UniqueFd read_;
  UniqueFd write_;
  Sink sink_;
  Note note_;
  std::thread thread_;  // last: it starts once the rest exists
};

}  // namespace srt::poller
