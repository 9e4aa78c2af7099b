// SPDX-License-Identifier: Apache-2.0
#include "control_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/start_thread.h"
#include "base/system_text.h"
#include "srt/settings.h"

namespace srt::cli {

Result<void> ControlChannel::Check(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_ACCMODE) == O_WRONLY) {
    const int err = flags < 0 ? errno : EBADF;
    return MakeError(Errc::kInvalidArgument,
                     "--control-fd " + std::to_string(fd) + " is not usable: " + ErrnoText(err) +
                         " (it must be open for reading). Refusing to run "
                         "the command without the control channel it asks for.");
  }
  return Ok();
}

Result<void> ControlChannel::Start(int fd, Sandbox& sandbox, Print print) {
  fd_ = fd;
  name_ = "control fd " + std::to_string(fd);
  sandbox_ = &sandbox;
  print_ = std::move(print);
  stop_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop_) return SysError("eventfd");
  SRT_ASSIGN_OR_RETURN(thread_,
                       StartThread("start the thread reading " + name_, [this] { Run(); }));
  return Ok();
}

void ControlChannel::Stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  (void)!write(stop_.get(), &one, sizeof one);
  thread_.join();
}

void ControlChannel::Run() {
  std::string buffer;
  bool skipping = false;  // inside a line longer than kMaxLineBytes
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return Broken(std::string("poll: ") + ErrnoText(errno));
    }
    if (fds[1].revents != 0) return;
    char chunk[64 * 1024];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Broken(ErrnoText(errno));
    }
    if (n == 0) {
      if (!buffer.empty() && !skipping) Apply(buffer);
      return;  // EOF: the command keeps the last lists
    }
    buffer.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (!skipping) Apply(std::string_view(buffer).substr(start, nl - start));
      skipping = false;
    }
    buffer.erase(0, start);
    if (buffer.size() > kMaxLineBytes) {
      if (!skipping) {
        print_("srt: a line on " + name_ +
               " is longer than 1 MiB: ignored, previous config still "
               "in force");
      }
      skipping = true;
      buffer.clear();
    }
  }
}

void ControlChannel::Apply(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank
  Result<LoadedSettings> settings = ParseSettings(line, name_);
  if (!settings) {
    print_("srt: invalid config on " + name_ + ": ignored, previous config still in force (" +
           settings.error().message() + ")");
    return;
  }
  if (Result<void> r = sandbox_->UpdateNetwork(settings->settings.network); !r) {
    print_("srt: invalid config on " + name_ + ": ignored, previous config still in force (" +
           r.error().message() + ")");
    return;
  }
  updated_ = true;
}

void ControlChannel::Broken(const std::string& why) {
  if (updated_) {
    print_("srt: error reading " + name_ + ": " + why +
           ". The control channel is closed; no further updates will be applied.");
    return;
  }
  // Upstream's rule: a command that asked for a control channel does not run without one.
  print_("srt: " + name_ + " failed before delivering an update: " + why +
         ". Refusing to run the command without the control channel it asks for.");
  failed_ = true;
  (void)sandbox_->Signal(SIGTERM);
  pollfd stop = {stop_.get(), POLLIN, 0};
  if (poll(&stop, 1, 2000) == 0) (void)sandbox_->Signal(SIGKILL);
}

}  // namespace srt::cli
