// SPDX-License-Identifier: Apache-2.0
// server/pipe_pool.cc: pipe2(2) + F_SETPIPE_SZ on demand, a bounded LIFO free list of empty pipes.
#include "server/pipe_pool.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

namespace srt::proxy {

PipePool::PipePool(const Options& options) : options_(options) {
  spare_.reserve(std::min<size_t>(options_.max_spare, 64));
}

Result<Pipe> PipePool::Acquire() {
  if (outstanding_ >= options_.max_pipes) {
    ++stats_.acquire_failures;
    return Error(Errc::kSystem,
                 "pipe pool: all " + std::to_string(options_.max_pipes) + " pipes in use", EMFILE);
  }
  if (!spare_.empty()) {
    Pipe pipe = std::move(spare_.back());
    spare_.pop_back();
    ++outstanding_;
    ++stats_.reused;
    return pipe;
  }
  int fds[2];
  if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
    ++stats_.acquire_failures;
    return SysError("pipe pool: pipe2");
  }
  Pipe pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
  ++stats_.created;
  // fcntl(2): "F_SETPIPE_SZ ... the kernel may use a capacity larger than arg". Larger pipes
  // mean fewer splice calls per megabyte; the size the pipe was born with works too.
  const int want = static_cast<int>(std::min<size_t>(options_.pipe_bytes, size_t{1} << 30));
  if (::fcntl(pipe.write.get(), F_SETPIPE_SZ, want) < 0) {
    ++stats_.resize_failures;
  }
  ++outstanding_;
  return pipe;
}

void PipePool::Release(Pipe pipe) {
  if (!pipe) {
    return;
  }
  --outstanding_;
  if (spare_.size() < options_.max_spare) {
    spare_.push_back(std::move(pipe));
  }
  // Otherwise `pipe` closes here.
}

void PipePool::Discard(Pipe pipe) {
  if (!pipe) {
    return;
  }
  --outstanding_;
  ++stats_.discarded;
}

}  // namespace srt::proxy
