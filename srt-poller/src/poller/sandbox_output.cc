// SPDX-License-Identifier: Apache-2.0
#include "poller/sandbox_output.h"

#include <unistd.h>

#include <cerrno>

#include "sys/fd.h"

namespace srt::poller {

void OutputLines::EmitLine(const Emit& emit, bool ended) {
  const uint64_t newline = ended ? 1 : 0;
  if (full()) {
    dropped_ += line_.size() + newline;
  } else {
    kept_ += line_.size() + newline + per_record_;
    emit(line_, cutting_);
  }
  line_.clear();
  cutting_ = false;
}

void OutputLines::Feed(std::string_view chunk, const Emit& emit) {
  while (!chunk.empty()) {
    const size_t nl = chunk.find('\n');
    std::string_view part = chunk.substr(0, nl);
    // Keep at most max_line_ bytes of a line; the rest is only counted.
    const size_t room = max_line_ - line_.size();
    if (part.size() > room) {
      dropped_ += part.size() - room;
      part = part.substr(0, room);
      cutting_ = true;
    }
    line_.append(part);
    if (nl == std::string_view::npos) return;
    EmitLine(emit, /*ended=*/true);
    chunk.remove_prefix(nl + 1);
  }
}

void OutputLines::Finish(const Emit& emit) {
  if (!line_.empty() || cutting_) EmitLine(emit, /*ended=*/false);
}

Result<std::unique_ptr<SandboxOutput>> SandboxOutput::Start(Sink sink, Note note) {
  SRT_ASSIGN_OR_RETURN(auto ends, sys::Pipe());
  return std::unique_ptr<SandboxOutput>(new SandboxOutput(
      std::move(ends.first), std::move(ends.second), std::move(sink), std::move(note)));
}

SandboxOutput::SandboxOutput(UniqueFd read, UniqueFd write, Sink sink, Note note)
    : read_(std::move(read)),
      write_(std::move(write)),
      sink_(std::move(sink)),
      note_(std::move(note)),
      thread_([this] { Pump(); }) {}

SandboxOutput::~SandboxOutput() {
  // Our copy of the write end goes first, or the thread would never see EOF.
  CloseWriteEnd();
  Join();
}

void SandboxOutput::Join() {
  if (thread_.joinable()) thread_.join();
}

void SandboxOutput::Pump() {
  OutputLines lines(kMaxLineBytes, kMaxBytes, kRecordBytes);
  bool said_full = false;
  const OutputLines::Emit emit = [this](std::string_view line, bool cut) { sink_(line, cut); };
  char buf[16384];
  for (;;) {
    const ssize_t n = read(read_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: every process of the sandbox is gone (or a read error)
    lines.Feed(std::string_view(buf, static_cast<size_t>(n)), emit);
    if (lines.full() && !said_full) {
      said_full = true;
      note_("sandbox output over its limit; the rest is counted, not logged", 0);
    }
  }
  lines.Finish(emit);
  if (lines.dropped() > 0) note_("sandbox output not logged", lines.dropped());
}

}  // namespace srt::poller
