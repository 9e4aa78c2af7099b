// SPDX-License-Identifier: Apache-2.0
// Tests of the relays' pipe pool (server/pipe_pool.h): flags and size of new pipes, reuse, the cap
// on spares, Discard, max_pipes and pipe2 failures.
#include "server/pipe_pool.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "base/unique_fd.h"

namespace srt::proxy {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) >= 0; }

// The pipe passes bytes from its write end to its read end.
void ExpectWorks(const Pipe& pipe) {
  ASSERT_EQ(::write(pipe.write.get(), "ab", 2), 2) << std::strerror(errno);
  char buf[4];
  ASSERT_EQ(::read(pipe.read.get(), buf, sizeof(buf)), 2) << std::strerror(errno);
  EXPECT_EQ(std::memcmp(buf, "ab", 2), 0);
}

TEST(PipePoolTest, NewPipesAreNonBlockingCloexecAndSized) {
  PipePool::Options options;
  options.pipe_bytes = 128 * 1024;
  PipePool pool(options);
  Result<Pipe> pipe = pool.Acquire();
  ASSERT_TRUE(pipe.has_value()) << pipe.error().message();
  for (int fd : {pipe->read.get(), pipe->write.get()}) {
    EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC) << "fd " << fd;
    EXPECT_TRUE(::fcntl(fd, F_GETFL) & O_NONBLOCK) << "fd " << fd;
  }
  // Unless the user is past pipe-user-pages-soft, where growing is refused (and counted).
  if (pool.stats().resize_failures == 0) {
    EXPECT_EQ(::fcntl(pipe->write.get(), F_GETPIPE_SZ), 128 * 1024);
  }
  ExpectWorks(*pipe);
  char byte;
  EXPECT_EQ(::read(pipe->read.get(), &byte, 1), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_EQ(pool.outstanding(), 1u);
  EXPECT_EQ(pool.stats().created, 1u);
  pool.Release(std::move(pipe).value());
  EXPECT_EQ(pool.outstanding(), 0u);
}

TEST(PipePoolTest, AReleasedPipeIsHandedOutAgain) {
  PipePool pool;
  Result<Pipe> first = pool.Acquire();
  ASSERT_TRUE(first.has_value());
  const int read_fd = first->read.get();
  const int write_fd = first->write.get();
  pool.Release(std::move(first).value());
  EXPECT_EQ(pool.spare(), 1u);
  EXPECT_TRUE(IsOpen(read_fd));
  EXPECT_TRUE(IsOpen(write_fd));

  Result<Pipe> again = pool.Acquire();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->read.get(), read_fd);
  EXPECT_EQ(again->write.get(), write_fd);
  EXPECT_EQ(pool.spare(), 0u);
  EXPECT_EQ(pool.stats().created, 1u);
  EXPECT_EQ(pool.stats().reused, 1u);
  ExpectWorks(*again);
  pool.Release(std::move(again).value());
}

TEST(PipePoolTest, TheLastReleasedIsHandedOutFirst) {
  PipePool pool;
  Result<Pipe> a = pool.Acquire();
  Result<Pipe> b = pool.Acquire();
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_NE(a->read.get(), b->read.get());
  const int b_read = b->read.get();
  EXPECT_EQ(pool.outstanding(), 2u);
  pool.Release(std::move(a).value());
  pool.Release(std::move(b).value());
  Result<Pipe> next = pool.Acquire();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->read.get(), b_read);
  pool.Release(std::move(next).value());
}

TEST(PipePoolTest, SparesBeyondTheCapAreClosed) {
  PipePool::Options options;
  options.max_spare = 2;
  PipePool pool(options);
  std::vector<Pipe> pipes;
  for (int i = 0; i < 5; ++i) {
    Result<Pipe> pipe = pool.Acquire();
    ASSERT_TRUE(pipe.has_value()) << pipe.error().message();
    pipes.push_back(std::move(pipe).value());
  }
  EXPECT_EQ(pool.outstanding(), 5u);
  std::vector<int> fds;
  for (const Pipe& pipe : pipes) {
    fds.push_back(pipe.read.get());
    fds.push_back(pipe.write.get());
  }
  for (Pipe& pipe : pipes) {
    pool.Release(std::move(pipe));
  }
  EXPECT_EQ(pool.outstanding(), 0u);
  EXPECT_EQ(pool.spare(), 2u);
  // The first two released are kept, the other three closed.
  for (size_t i = 0; i < fds.size(); ++i) {
    EXPECT_EQ(IsOpen(fds[i]), i < 4) << "fd " << fds[i];
  }
}

TEST(PipePoolTest, ZeroSparesClosesEveryReleasedPipe) {
  PipePool::Options options;
  options.max_spare = 0;
  PipePool pool(options);
  Result<Pipe> pipe = pool.Acquire();
  ASSERT_TRUE(pipe.has_value());
  const int read_fd = pipe->read.get();
  pool.Release(std::move(pipe).value());
  EXPECT_EQ(pool.spare(), 0u);
  EXPECT_FALSE(IsOpen(read_fd));
}

TEST(PipePoolTest, DiscardClosesAPipeThatHoldsBytes) {
  PipePool pool;
  Result<Pipe> pipe = pool.Acquire();
  ASSERT_TRUE(pipe.has_value());
  ASSERT_EQ(::write(pipe->write.get(), "stale", 5), 5);
  const int read_fd = pipe->read.get();
  const int write_fd = pipe->write.get();
  pool.Discard(std::move(pipe).value());
  EXPECT_EQ(pool.outstanding(), 0u);
  EXPECT_EQ(pool.spare(), 0u);
  EXPECT_EQ(pool.stats().discarded, 1u);
  EXPECT_FALSE(IsOpen(read_fd));
  EXPECT_FALSE(IsOpen(write_fd));
}

TEST(PipePoolTest, EmptyPipesAreIgnored) {
  PipePool pool;
  pool.Release(Pipe{});
  pool.Discard(Pipe{});
  EXPECT_EQ(pool.outstanding(), 0u);
  EXPECT_EQ(pool.spare(), 0u);
  EXPECT_EQ(pool.stats().discarded, 0u);
}

TEST(PipePoolTest, MaxPipesBoundsWhatIsOut) {
  PipePool::Options options;
  options.max_pipes = 1;
  PipePool pool(options);
  Result<Pipe> first = pool.Acquire();
  ASSERT_TRUE(first.has_value());
  Result<Pipe> second = pool.Acquire();
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code(), Errc::kSystem);
  EXPECT_EQ(second.error().sys_errno(), EMFILE);
  EXPECT_EQ(second.error().message(), "pipe pool: all 1 pipes in use");
  EXPECT_EQ(pool.stats().acquire_failures, 1u);
  EXPECT_EQ(pool.outstanding(), 1u);
  pool.Release(std::move(first).value());
  Result<Pipe> third = pool.Acquire();
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(pool.stats().reused, 1u);
  pool.Release(std::move(third).value());
}

TEST(PipePoolTest, Pipe2FailureIsReportedAndNothingLeaks) {
  PipePool pool;
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  // Room for one more fd: pipe2 needs two.
  int limit = 0;
  for (int free_fds = 0; free_fds < 1; ++limit) {
    if (!IsOpen(limit)) {
      ++free_fds;
    }
  }
  rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(limit);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  Result<Pipe> pipe = pool.Acquire();
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_FALSE(pipe.has_value());
  EXPECT_EQ(pipe.error().code(), Errc::kSystem);
  EXPECT_EQ(pipe.error().sys_errno(), EMFILE);
  EXPECT_EQ(pipe.error().message(), "pipe pool: pipe2: Too many open files");
  EXPECT_EQ(pool.outstanding(), 0u);
  EXPECT_EQ(pool.stats().acquire_failures, 1u);
  EXPECT_EQ(pool.stats().created, 0u);
  // With fds available again it works.
  Result<Pipe> later = pool.Acquire();
  ASSERT_TRUE(later.has_value()) << later.error().message();
  pool.Release(std::move(later).value());
}

TEST(PipePoolTest, DestroyingThePoolClosesTheSpares) {
  int read_fd = -1;
  {
    PipePool pool;
    Result<Pipe> pipe = pool.Acquire();
    ASSERT_TRUE(pipe.has_value());
    read_fd = pipe->read.get();
    pool.Release(std::move(pipe).value());
    EXPECT_TRUE(IsOpen(read_fd));
  }
  EXPECT_FALSE(IsOpen(read_fd));
}

}  // namespace
}  // namespace srt::proxy
