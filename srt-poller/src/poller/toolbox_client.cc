// SPDX-License-Identifier: Apache-2.0
#include "poller/toolbox_client.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "base/scope_exit.h"
#include "runner/runner.h"
#include "sys/fd.h"
#include "toolbox_protocol/protocol.h"

namespace srt::poller {
namespace {

namespace protocol = toolbox_protocol;

ToolResult ErrorResult(const std::string& text) {
  ToolResult r;
  r.is_error = true;
  r.content_json = protocol::ContentJson(text);
  return r;
}

}  // namespace

ToolboxClient::ToolboxClient(UniqueFd to_toolbox, UniqueFd from_toolbox,
                             std::chrono::milliseconds cancel_grace)
    : cancel_grace_(cancel_grace), to_(std::move(to_toolbox)), from_(std::move(from_toolbox)) {
  // Our end of the pipe only (the toolbox's end is another open file); F_SETFL on a descriptor
  // we own cannot fail.
  if (to_) (void)fcntl(to_.get(), F_SETFL, fcntl(to_.get(), F_GETFL) | O_NONBLOCK);
}

std::optional<ToolboxClient::Clock::time_point> ToolboxClient::CancelDeadline() {
  std::lock_guard lock(call_mu_);
  return cancel_at_;
}

bool ToolboxClient::CancelExpired() {
  auto at = CancelDeadline();
  return at && Clock::now() >= *at;
}

ToolboxClient::Sent ToolboxClient::SendCall(uint64_t id, const std::string& frame) {
  std::lock_guard lock(write_mu_);
  if (CancelDeadline()) return Sent::kCancelled;
  if (!to_) return Sent::kFailed;
  running_id_ = id;
  auto r = sys::WriteAll(to_.get(), frame + "\n", "write to srt-toolbox",
                         [this] { return CancelExpired(); });
  return r ? Sent::kYes : Sent::kFailed;
}

Result<std::string> ToolboxClient::ReadLine(Clock::time_point deadline) {
  for (;;) {
    if (size_t nl = buffer_.find('\n', scanned_); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      scanned_ = 0;
      return line;
    }
    scanned_ = buffer_.size();
    if (buffer_.size() > protocol::kMaxLineBytes) {
      return MakeError(Errc::kProtocol, "srt-toolbox sent a line over 64 MiB");
    }
    const auto now = Clock::now();
    if (auto cancel = CancelDeadline(); cancel && now >= *cancel && *cancel < deadline) {
      return MakeError(Errc::kSystem, "srt-toolbox did not answer within " +
                                          FormatGoDuration(cancel_grace_) + " of a cancel");
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (left.count() <= 0) return MakeError(Errc::kSystem, "srt-toolbox did not answer in time");
    // Slices of 100 ms: a cancel (another thread's) shortens the wait.
    pollfd p{from_.get(), POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 100)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return SysError("poll srt-toolbox");
    if (r == 0) continue;
    char chunk[65536];
    ssize_t n = read(from_.get(), chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return SysError("read srt-toolbox");
    if (n == 0) return MakeError(Errc::kProtocol, "srt-toolbox exited");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void ToolboxClient::MarkBroken(const std::string& why) {
  bool was = healthy_.exchange(false);
  if (was && on_broken_) on_broken_(why);
}

Result<void> ToolboxClient::WaitReady(std::chrono::milliseconds timeout) {
  if (ready_) return {};
  auto line = ReadLine(std::chrono::steady_clock::now() + timeout);
  if (!line) return line.error().Wrap("waiting for srt-toolbox to start");
  SRT_RETURN_IF_ERROR(protocol::ParseReady(*line));
  ready_ = true;
  return {};
}

ToolResult ToolboxClient::Run(const ToolCall& call, std::chrono::milliseconds timeout) {
  {
    std::lock_guard lock(call_mu_);
    in_call_ = true;
    cancel_at_.reset();
  }
  // A Cancel after this Run must not reach the next one.
  const ScopeExit end_call([this] {
    std::lock_guard lock(call_mu_);
    in_call_ = false;
    cancel_at_.reset();
  });
  if (!healthy_) return ErrorResult("the session's sandbox is gone; the tool did not run");
  if (auto r = WaitReady(kReadyTimeout); !r) {
    MarkBroken(r.error().message());
    return ErrorResult("the session's sandbox did not start: " + r.error().message());
  }
  uint64_t id = next_id_++;
  nlohmann::json input = nlohmann::json::parse(call.input_json, nullptr, false);
  if (input.is_discarded() || !input.is_object()) {
    return ErrorResult("tool input is not a JSON object");
  }
  switch (SendCall(id, protocol::FormatCall(id, call.name, input, timeout))) {
    case Sent::kYes:
      break;
    case Sent::kCancelled:
      return ErrorResult("tool cancelled");
    case Sent::kFailed:
      // Perhaps half a frame: the channel is out of step for good.
      running_id_ = 0;
      MarkBroken("could not write to srt-toolbox");
      return ErrorResult("could not send the tool call to the session's sandbox");
  }
  auto deadline = std::chrono::steady_clock::now() + timeout + kAnswerGrace;
  for (;;) {
    auto line = ReadLine(deadline);
    if (!line) {
      running_id_ = 0;
      MarkBroken(line.error().message());
      ToolResult r = ErrorResult("tool \"" + call.name + "\" failed: " + line.error().message());
      r.timed_out = std::chrono::steady_clock::now() >= deadline;
      return r;
    }
    // Everything on this line comes from inside the session's sandbox: a line that is not an
    // answer the toolbox could have written breaks the toolbox, and the call fails.
    Result<protocol::Answer> answer = protocol::ParseAnswer(*line);
    if (!answer) {
      running_id_ = 0;
      MarkBroken(answer.error().message());
      return ErrorResult("tool \"" + call.name + "\" failed: " + answer.error().message());
    }
    if (answer->id != id) continue;  // a late answer to a cancelled call, or to a bad line
    running_id_ = 0;
    ToolResult r;
    r.is_error = answer->is_error;
    r.content_json = protocol::ContentJson(answer->text);
    return r;
  }
}

// The toolbox gets `{"cancel": id}` and cancel_grace_ to answer; past that Run gives up on it.
// Neither write nor wait here can outlast the grace, however the toolbox behaves (stopped, not
// reading): the runner calls this under its own lock.
void ToolboxClient::Cancel() {
  {
    std::lock_guard lock(call_mu_);
    if (!in_call_ || cancel_at_) return;
    cancel_at_ = Clock::now() + cancel_grace_;
  }
  std::lock_guard lock(write_mu_);
  uint64_t id = running_id_;
  if (id == 0 || !to_) return;  // not sent yet: SendCall sees the cancel
  (void)sys::WriteAll(to_.get(), protocol::FormatCancel(id) + "\n", "write to srt-toolbox",
                      [this] { return CancelExpired(); });
}

void ToolboxClient::Close() {
  std::lock_guard lock(write_mu_);
  to_.reset();
}

}  // namespace srt::poller
