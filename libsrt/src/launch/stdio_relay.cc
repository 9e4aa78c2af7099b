// SPDX-License-Identifier: Apache-2.0
// The command's standard and passed descriptors, relayed (see stdio_relay.h).
#include "launch/stdio_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <string>

#include "base/start_thread.h"
#include "sys/fd.h"

namespace srt::launch {

namespace {

constexpr size_t kBufferBytes = size_t{64} * 1024;
// After POLLOUT a pipe has room for one page at least: a write no larger never blocks, so a
// stalled reader cannot hold a pump that is told to stop.
constexpr size_t kAtomicBytes = 4096;

std::string NameOf(size_t index, int number) {
  switch (index) {
    case 0:
      return "standard input";
    case 1:
      return "standard output";
    case 2:
      return "standard error";
    default:
      return "descriptor " + std::to_string(number);
  }
}

struct Inspected {
  DescriptorFacts facts;
  dev_t dev = 0;
  ino_t ino = 0;
};

Inspected Inspect(int fd) {
  Inspected in;
  int flags = fcntl(fd, F_GETFL);
  struct stat st {};
  if (flags < 0 || fstat(fd, &st) != 0) {
    in.facts.open = false;
    return in;
  }
  in.facts.status_flags = flags;
  in.facts.type = st.st_mode & S_IFMT;
  in.facts.rdev_major = major(st.st_rdev);
  in.facts.rdev_minor = minor(st.st_rdev);
  in.facts.links = st.st_nlink;
  in.facts.terminal = isatty(fd) == 1;
  in.dev = st.st_dev;
  in.ino = st.st_ino;
  return in;
}

void Notify(const UniqueFd& event) {
  uint64_t one = 1;
  if (event) (void)!write(event.get(), &one, sizeof one);
}

// Waits for `events` on `fd` or for `stop`; false once `stop` fires.
bool Await(int fd, short events, int stop) {
  for (;;) {
    pollfd p[2] = {{fd, events, 0}, {stop, POLLIN, 0}};
    int r = poll(p, 2, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (p[1].revents) return false;
    if (p[0].revents) return true;
  }
}

// Writes data[*done..n) to `fd`, in `chunk`s after POLLOUT; false on an error (EPIPE: the
// reader is gone) or once `stop` fires.
bool WriteAll(int fd, const char* data, size_t n, size_t chunk, int stop, size_t* done) {
  while (*done < n) {
    if (!Await(fd, POLLOUT, stop)) return false;
    ssize_t w = write(fd, data + *done, std::min(n - *done, chunk));
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0) return false;
    *done += static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

struct StdioRelay::Pump {
  bool input = false;     // from the caller's descriptor to the command
  bool terminal = false;  // the caller's terminal and the sandbox's
  int src = -1;
  int dst = -1;
  // srt's copy of the caller's descriptor (the caller may close its own once Start returns):
  // an output's is closed when the pump ends, so the caller's reader sees EOF; an input's is
  // kept for Finish (the offset).
  UniqueFd caller;
  UniqueFd own;          // srt's pipe end, closed when the pump ends (EOF or EPIPE for the command)
  UniqueFd reader_copy;  // input from a file: srt's copy of the pipe's read end, for FIONREAD
  size_t chunk = kAtomicBytes;
  size_t held = 0;  // input read from `src` that never reached the command
  std::thread thread;
  // The caller's keys for the sandbox's terminal: started by CommandInForeground alone.
  bool keys() const { return input && terminal; }
};

Result<std::unique_ptr<StdioRelay>> StdioRelay::Prepare(int stdin_fd, int stdout_fd, int stderr_fd,
                                                        const std::vector<int>& keep) {
  std::unique_ptr<StdioRelay> r(new StdioRelay());
  std::vector<int> fds = {stdin_fd, stdout_fd, stderr_fd};
  fds.insert(fds.end(), keep.begin(), keep.end());
  std::vector<Inspected> seen;
  for (size_t i = 0; i < fds.size(); ++i) {
    seen.push_back(Inspect(fds[i]));
    const int number = i < 3 ? static_cast<int>(i) : fds[i];
    SRT_ASSIGN_OR_RETURN(Passing p, DecidePassing(seen.back().facts, i < 3, NameOf(i, number)));
    r->entries_.push_back(Entry{fds[i], p, -1});
  }
  r->stop_inputs_ = UniqueFd(eventfd(0, EFD_CLOEXEC));
  r->stop_outputs_ = UniqueFd(eventfd(0, EFD_CLOEXEC));
  r->resume_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!r->stop_inputs_ || !r->stop_outputs_ || !r->resume_) return SysError("eventfd");

  for (size_t i = 0; i < r->entries_.size(); ++i) {
    Entry& e = r->entries_[i];
    switch (e.passing) {
      case Passing::kAsIs:
        e.command = e.caller;
        break;
      case Passing::kDevice:
      case Passing::kNull:
      case Passing::kTerminal: {
        // A place-holder: srt-init puts the sandbox's terminal or device there before the
        // command runs.
        if (!r->null_) {
          r->null_ = UniqueFd(open("/dev/null", O_RDWR | O_CLOEXEC));
          if (!r->null_) return SysError("open /dev/null");
        }
        e.command = r->null_.get();
        const int number = i < 3 ? static_cast<int>(i) : e.caller;
        if (e.passing == Passing::kTerminal) {
          r->terminal_slots_ |= 1u << i;
        } else if (e.passing == Passing::kNull) {
          r->reopens_.push_back({number, i == 0 ? O_RDONLY : O_WRONLY, "/dev/null"});
        } else {
          const int flags = seen[i].facts.status_flags & (O_ACCMODE | O_APPEND | O_NONBLOCK);
          r->reopens_.push_back({number, flags, SandboxDevice(seen[i].facts)});
        }
        break;
      }
      case Passing::kOutput: {
        // Descriptors of one file (`> log 2>&1`) share one pipe, which keeps their order.
        int shared = -1;
        for (size_t j = 0; j < i && shared < 0; ++j) {
          if (r->entries_[j].passing == Passing::kOutput && seen[j].dev == seen[i].dev &&
              seen[j].ino == seen[i].ino) {
            shared = r->entries_[j].command;
          }
        }
        if (shared >= 0) {
          e.command = shared;
          break;
        }
        SRT_ASSIGN_OR_RETURN(auto pipe, sys::Pipe());
        auto pump = std::make_unique<Pump>();
        SRT_ASSIGN_OR_RETURN(pump->caller, sys::DupAtLeast(e.caller, 3));
        pump->src = pipe.first.get();
        pump->dst = pump->caller.get();
        pump->own = std::move(pipe.first);
        if (seen[i].facts.type == S_IFREG) pump->chunk = kBufferBytes;
        e.command = pipe.second.get();
        r->command_ends_.push_back(std::move(pipe.second));
        r->pumps_.push_back(std::move(pump));
        break;
      }
      case Passing::kInput: {
        SRT_ASSIGN_OR_RETURN(auto pipe, sys::Pipe());
        auto pump = std::make_unique<Pump>();
        pump->input = true;
        SRT_ASSIGN_OR_RETURN(pump->caller, sys::DupAtLeast(e.caller, 3));
        pump->src = pump->caller.get();
        pump->dst = pipe.second.get();
        if (fcntl(pump->dst, F_SETFL, O_NONBLOCK) != 0) return SysError("fcntl O_NONBLOCK");
        const uint32_t type = seen[i].facts.type;
        if (type == S_IFREG || type == S_IFBLK) {
          // A file's offset goes back to what the command consumed, as if it had read the file
          // itself (`while read l; do srt ...; done < file`).
          SRT_ASSIGN_OR_RETURN(pump->reader_copy, sys::DupAtLeast(pipe.first.get(), 3));
        }
        pump->own = std::move(pipe.second);
        e.command = pipe.first.get();
        r->command_ends_.push_back(std::move(pipe.first));
        r->pumps_.push_back(std::move(pump));
        break;
      }
    }
  }
  if (r->entries_[0].passing == Passing::kTerminal) {
    SRT_ASSIGN_OR_RETURN(r->terminal_in_fd_, sys::DupAtLeast(r->entries_[0].caller, 3));
    r->terminal_in_ = r->terminal_in_fd_.get();
  }
  for (int slot : {1, 2, 0}) {
    if (r->entries_[static_cast<size_t>(slot)].passing == Passing::kTerminal) {
      SRT_ASSIGN_OR_RETURN(r->terminal_out_fd_,
                           sys::DupAtLeast(r->entries_[static_cast<size_t>(slot)].caller, 3));
      r->terminal_out_ = r->terminal_out_fd_.get();
      break;
    }
  }
  return r;
}

StdioRelay::~StdioRelay() {
  Stop(/*abandon_output=*/true);
  Suspend();
}

Result<void> StdioRelay::StartPump(Pump& pump) {
  // The pumps take no signal: a process-directed one goes to a thread that waits for it, and
  // a write to a reader that is gone returns EPIPE instead of killing srt.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  Result<std::thread> thread =
      StartThread("start a thread relaying the command's output", [this, &pump] { Run(pump); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!thread) return std::move(thread).error();
  pump.thread = std::move(*thread);
  return Ok();
}

Result<void> StdioRelay::Started() {
  command_ends_.clear();
  for (auto& pump : pumps_) {
    // A warm sandbox's command gets its terminal (AttachTerminal, which starts its output pump)
    // first; the terminal's input waits for CommandInForeground.
    if (!pump->thread.joinable() && !pump->keys()) {
      SRT_RETURN_IF_ERROR(StartPump(*pump));
    }
  }
  return Ok();
}

Result<void> StdioRelay::CommandInForeground() {
  for (auto& pump : pumps_) {
    if (pump->keys() && !pump->thread.joinable()) {
      SRT_RETURN_IF_ERROR(StartPump(*pump));
    }
  }
  return Ok();
}

// Moves everything from `src` to `dst` with splice(2), which copies no byte through srt and,
// with SPLICE_F_NONBLOCK, never waits on the pipe side (the caller's descriptor keeps its own
// flags). kUnsupported when the kernel cannot splice these two (nothing was moved then).
enum class Spliced { kDone, kStopped, kUnsupported };
Spliced SpliceAll(int src, int dst, int stop) {
  constexpr size_t kChunk = 1 << 20;
  bool moved = false;
  for (;;) {
    ssize_t n = splice(src, nullptr, dst, nullptr, kChunk, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
    if (n > 0) {
      moved = true;
      continue;
    }
    if (n == 0) return Spliced::kDone;  // EOF
    if (errno == EINTR) continue;
    if (errno == EAGAIN) {
      // The source is empty or the destination full: wait for both to be ready.
      if (!Await(src, POLLIN, stop) || !Await(dst, POLLOUT, stop)) return Spliced::kStopped;
      continue;
    }
    // EINVAL: not a pair splice takes (an O_APPEND file, a terminal); the copy loop does it.
    if (!moved && errno == EINVAL) return Spliced::kUnsupported;
    return Spliced::kDone;  // EPIPE (the reader is gone), EIO: the end either way
  }
}

void StdioRelay::Run(Pump& pump) {
  const int stop = pump.input ? stop_inputs_.get() : stop_outputs_.get();
  if (!pump.terminal && SpliceAll(pump.src, pump.dst, stop) != Spliced::kUnsupported) {
    Ended(pump);
    return;
  }
  std::vector<char> buf(kBufferBytes);
  for (;;) {
    if (!Await(pump.src, POLLIN, stop)) break;
    ssize_t n = read(pump.src, buf.data(), buf.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0 && errno == EIO && pump.input && pump.terminal && terminal_in_ >= 0 &&
        tcgetpgrp(terminal_in_) != getpgrp()) {
      // srt is in the background of its terminal (`&`, or `bg` after Ctrl-Z): the keys are
      // the shell's. Read again once srt is continued (`fg`).
      pollfd p[2] = {{resume_.get(), POLLIN, 0}, {stop, POLLIN, 0}};
      while (poll(p, 2, -1) < 0 && errno == EINTR) {
      }
      if (p[1].revents) break;
      uint64_t v;
      (void)!read(resume_.get(), &v, sizeof v);
      continue;
    }
    // EOF; an error; EIO from the terminal's master once the sandbox is gone.
    if (n <= 0) break;
    size_t done = 0;
    if (!WriteAll(pump.dst, buf.data(), static_cast<size_t>(n), pump.chunk, stop, &done)) {
      pump.held = static_cast<size_t>(n) - done;
      break;
    }
  }
  Ended(pump);
}

void StdioRelay::Ended(Pump& pump) {
  // Input: the command reads EOF. Output: its next write gets EPIPE, as if it wrote to the
  // caller's reader that is gone; and the caller's reader sees EOF once it is alone.
  pump.own.reset();
  if (!pump.input) pump.caller.reset();
}

Result<void> StdioRelay::AttachTerminal(UniqueFd master) {
  if (!terminal_slots_ || master_) {
    return MakeError(Errc::kProtocol, "srt-init sent a terminal srt did not ask for");
  }
  const int caller = terminal_in_ >= 0 ? terminal_in_ : terminal_out_;
  // The sandbox's terminal starts as the caller's is: its modes (erase key, CR-LF) and size.
  termios modes{};
  if (tcgetattr(caller, &modes) == 0) {
    if (tcsetattr(master.get(), TCSANOW, &modes) != 0) return SysError("set the terminal's modes");
  }
  winsize size{};
  if (ioctl(caller, TIOCGWINSZ, &size) == 0) {
    if (ioctl(master.get(), TIOCSWINSZ, &size) != 0) return SysError("set the terminal's size");
  }
  if (fcntl(master.get(), F_SETFL, O_NONBLOCK) != 0) return SysError("fcntl O_NONBLOCK");
  master_ = std::move(master);
  if (terminal_in_ >= 0) {
    Resume();
    auto in = std::make_unique<Pump>();  // started by CommandInForeground
    in->input = in->terminal = true;
    in->src = terminal_in_;
    in->dst = master_.get();
    pumps_.push_back(std::move(in));
  }
  auto out = std::make_unique<Pump>();
  out->terminal = true;
  out->src = master_.get();
  out->dst = terminal_out_;
  pumps_.push_back(std::move(out));
  return StartPump(*pumps_.back());
}

void StdioRelay::Resize() {
  winsize size{};
  if (!master_ || terminal_out_ < 0) return;
  const int caller = terminal_in_ >= 0 ? terminal_in_ : terminal_out_;
  // The kernel sends SIGWINCH to the command's foreground job when the size changes.
  if (ioctl(caller, TIOCGWINSZ, &size) == 0) (void)ioctl(master_.get(), TIOCSWINSZ, &size);
}

void StdioRelay::Suspend() {
  if (!raw_) return;
  // TCSADRAIN: what the command wrote is shown in its modes.
  (void)tcsetattr(terminal_in_, TCSADRAIN, &saved_);
  raw_ = false;
}

void StdioRelay::Resume() {
  if (!master_ || terminal_in_ < 0 || finished_) return;
  Notify(resume_);
  // Only in the foreground: a background srt that changed the terminal would be stopped
  // (SIGTTOU), and its keys are the shell's. SIGCONT (`fg`) brings srt here again.
  if (raw_ || tcgetpgrp(terminal_in_) != getpgrp()) return;
  if (tcgetattr(terminal_in_, &saved_) != 0) return;  // the shell may have changed them
  termios raw = saved_;
  cfmakeraw(&raw);
  if (tcsetattr(terminal_in_, TCSADRAIN, &raw) == 0) raw_ = true;
}

void StdioRelay::Stop(bool abandon_output) {
  if (abandon_output) Notify(stop_outputs_);
  // Output first: once the sandbox is gone each source ends, after all the command wrote.
  for (auto& pump : pumps_) {
    if (!pump->input && pump->thread.joinable()) pump->thread.join();
  }
  Notify(stop_inputs_);
  for (auto& pump : pumps_) {
    if (pump->input && pump->thread.joinable()) pump->thread.join();
  }
}

void StdioRelay::Finish() {
  if (finished_) return;
  finished_ = true;
  Stop(/*abandon_output=*/false);
  for (auto& pump : pumps_) {
    if (!pump->reader_copy) continue;
    int unread = 0;
    if (ioctl(pump->reader_copy.get(), FIONREAD, &unread) != 0) unread = 0;
    const off_t back = static_cast<off_t>(unread) + static_cast<off_t>(pump->held);
    if (back > 0) (void)lseek(pump->src, -back, SEEK_CUR);
  }
  for (auto& pump : pumps_) pump->caller.reset();
  Suspend();
  master_.reset();
}

}  // namespace srt::launch
