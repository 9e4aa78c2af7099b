#include "poller/toolbox_client.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

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

ToolboxClient::ToolboxClient(UniqueFd to_toolbox, UniqueFd from_toolbox)
    : to_(std::move(to_toolbox)), from_(std::move(from_toolbox)) {}

bool ToolboxClient::WriteLine(const std::string& line) {
  std::lock_guard lock(write_mu_);
  if (!to_) return false;
  return sys::WriteAll(to_.get(), line + "\n", "write to srt-toolbox").has_value();
}

Result<std::string> ToolboxClient::ReadLine(std::chrono::steady_clock::time_point deadline) {
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
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return MakeError(Errc::kSystem, "srt-toolbox did not answer in time");
    pollfd p{from_.get(), POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
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
  running_id_ = id;
  if (!WriteLine(protocol::FormatCall(id, call.name, input, timeout))) {
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

void ToolboxClient::Cancel() {
  uint64_t id = running_id_;
  if (id == 0) return;
  WriteLine(protocol::FormatCancel(id));
}

void ToolboxClient::Close() {
  std::lock_guard lock(write_mu_);
  to_.reset();
}

}  // namespace srt::poller
