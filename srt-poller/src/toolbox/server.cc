// SPDX-License-Identifier: Apache-2.0
// The toolbox protocol server (see server.h).
#include "toolbox/server.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <deque>

#include "sys/fd.h"
#include "toolbox/interrupt.h"

namespace srt::poller::toolbox {
namespace {

using toolbox_protocol::Message;
using toolbox_protocol::ParseMessage;

constexpr char kCancelled[] = "tool cancelled";

class Server final : public Interrupt {
 public:
  Server(int in_fd, int out_fd, Toolbox& toolbox, const ServeOptions& options)
      : in_fd_(in_fd), out_fd_(out_fd), toolbox_(toolbox), options_(options) {}

  Result<void> Run() {
    Send(toolbox_protocol::FormatReady());
    while (!eof_ && !broken_) {
      if (queue_.empty()) {
        ReadSome();
        continue;
      }
      Message call = std::move(queue_.front());
      queue_.pop_front();
      current_ = call.id;
      stop_ = false;
      ToolResult r =
          toolbox_.Run(call.tool, call.input, std::chrono::milliseconds(call.timeout_ms), *this);
      current_.reset();
      if (eof_) break;
      if (r.interrupted) {
        Respond(call.id, kCancelled, true);
      } else {
        Respond(call.id, r.text, r.is_error);
      }
    }
    toolbox_.ResetShell();
    if (broken_) return MakeError(Errc::kSystem, "write to the runner: broken pipe");
    return Ok();
  }

  // Interrupt: the running tool polls stdin and calls us when a line (or EOF) arrives.
  int fd() const override { return eof_ ? -1 : in_fd_; }
  bool Check() override {
    ReadSome();
    return stop_ || eof_;
  }

 private:
  // One read(2) of stdin; complete lines are handled at once.
  void ReadSome() {
    char chunk[65536];
    ssize_t n = read(in_fd_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      eof_ = true;
      return;
    }
    std::string_view data(chunk, static_cast<size_t>(n));
    while (!data.empty()) {
      size_t nl = data.find('\n');
      std::string_view piece = data.substr(0, nl);
      if (skipping_) {
        // The rest of an oversized line: dropped.
      } else if (buf_.size() + piece.size() > options_.max_line_bytes) {
        buf_.clear();
        skipping_ = true;
        Respond(nullptr,
                "invalid request: line exceeds " + std::to_string(options_.max_line_bytes) +
                    " bytes, ignoring",
                true);
      } else {
        buf_.append(piece);
      }
      if (nl == std::string_view::npos) break;
      if (!skipping_) Handle(buf_);
      buf_.clear();
      skipping_ = false;
      data.remove_prefix(nl + 1);
    }
  }

  void Handle(std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank line
    Message m = ParseMessage(line);
    switch (m.kind) {
      case Message::Kind::kBad:
        Respond(m.id, "invalid request: " + m.error, true);
        return;
      case Message::Kind::kCancel:
        if (current_ && *current_ == m.id) {
          stop_ = true;
          return;
        }
        for (auto it = queue_.begin(); it != queue_.end(); ++it) {
          if (it->id == m.id) {
            queue_.erase(it);
            Respond(m.id, kCancelled, true);
            return;
          }
        }
        return;  // already answered or unknown: nothing to stop
      case Message::Kind::kCall:
        if (queue_.size() >= options_.max_queued) {
          Respond(
              m.id,
              "invalid request: more than " + std::to_string(options_.max_queued) + " calls queued",
              true);
          return;
        }
        queue_.push_back(std::move(m));
        return;
    }
  }

  void Respond(const nlohmann::json& id, const std::string& text, bool is_error) {
    Send(toolbox_protocol::FormatAnswer(id, text, is_error));
  }

  void Send(std::string line) {
    if (broken_) return;
    line += '\n';
    if (!sys::WriteAll(out_fd_, line, "write to the runner")) broken_ = true;
  }

  int in_fd_;
  int out_fd_;
  Toolbox& toolbox_;
  ServeOptions options_;
  std::string buf_;
  bool skipping_ = false;
  bool eof_ = false;
  bool broken_ = false;
  bool stop_ = false;
  std::optional<nlohmann::json> current_;
  std::deque<Message> queue_;
};

}  // namespace

Result<void> Serve(int in_fd, int out_fd, Toolbox& toolbox, const ServeOptions& options) {
  return Server(in_fd, out_fd, toolbox, options).Run();
}

}  // namespace srt::poller::toolbox
