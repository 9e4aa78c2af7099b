// SPDX-License-Identifier: Apache-2.0
// Tests of LoopThread: start/stop, ownership, and the all-signals-blocked loop thread.
#include "loop/loop_thread.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>

#include "base/unique_fd.h"

namespace srt::proxy {
namespace {

using namespace std::chrono_literals;

// Runs `fn` on the loop thread and waits for it.
template <typename Fn>
auto OnLoop(LoopThread& t, Fn fn) {
  std::promise<decltype(fn())> done;
  auto result = done.get_future();
  t.loop().RunInLoop([&] {
    if constexpr (std::is_void_v<decltype(fn())>) {
      fn();
      done.set_value();
    } else {
      done.set_value(fn());
    }
  });
  return result.get();
}

TEST(LoopThreadTest, StartRunsTheLoopOnItsOwnThread) {
  LoopThread t;
  ASSERT_TRUE(t.Start().has_value());
  EXPECT_TRUE(t.running());
  // Start() returned: the loop is owned by its thread now.
  EXPECT_FALSE(t.loop().InLoopThread());
  EXPECT_TRUE(OnLoop(t, [&] { return t.loop().InLoopThread(); }));
  char name[16] = {};
  OnLoop(t, [&] { ::pthread_getname_np(::pthread_self(), name, sizeof(name)); });
  EXPECT_STREQ(name, "srt-proxy");
  t.Stop();
  EXPECT_FALSE(t.running());
  t.Stop();  // idempotent
  // Joined: the owner may use the loop directly again.
  EXPECT_TRUE(t.loop().InLoopThread());
}

// srt starts bwrap right after its proxy thread: Start() waiting for the scheduler to run the new
// thread cost milliseconds of every sandbox's start on a busy machine. The loop is its thread's
// from the moment Start() returns, whether or not that thread has run.
TEST(LoopThreadTest, StartDoesNotWaitForTheThreadToRun) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  LoopThread t("held");
  auto started = std::async(std::launch::async,
                            [&] { return t.Start([released] { released.wait(); }).has_value(); });
  if (started.wait_for(10s) != std::future_status::ready) {
    release.set_value();
    FAIL() << "Start() waited for its thread to run";
  }
  EXPECT_TRUE(started.get());
  EXPECT_FALSE(t.loop().InLoopThread());  // already bound to the held thread
  release.set_value();
  EXPECT_TRUE(OnLoop(t, [&] { return t.loop().InLoopThread(); }));
  char name[16] = {};
  OnLoop(t, [&] { ::pthread_getname_np(::pthread_self(), name, sizeof(name)); });
  EXPECT_STREQ(name, "held");
  t.Stop();
  EXPECT_TRUE(t.loop().InLoopThread());
}

TEST(LoopThreadTest, StartTwiceIsAnError) {
  LoopThread t("twice");
  ASSERT_TRUE(t.Start().has_value());
  auto again = t.Start();
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(again.error().message().find("'twice'"), std::string::npos);
}

TEST(LoopThreadTest, TimersAndFunctorsRunThere) {
  LoopThread t;
  ASSERT_TRUE(t.Start().has_value());
  std::promise<std::thread::id> fired;
  OnLoop(t, [&] { t.loop().AddTimer(10ms, [&] { fired.set_value(std::this_thread::get_id()); }); });
  auto id = fired.get_future().get();
  EXPECT_NE(id, std::this_thread::get_id());
}

TEST(LoopThreadTest, DestructorStopsAndRunsQueuedWork) {
  std::atomic<int> ran{0};
  {
    LoopThread t;
    ASSERT_TRUE(t.Start().has_value());
    for (int i = 0; i < 100; ++i) {
      t.loop().RunInLoop([&] { ++ran; });
    }
  }
  EXPECT_EQ(ran.load(), 100);
}

TEST(LoopThreadTest, LoopThreadBlocksAllSignalsAndCallerMaskIsRestored) {
  sigset_t before;
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, nullptr, &before), 0);
  LoopThread t;
  ASSERT_TRUE(t.Start().has_value());
  sigset_t after;
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, nullptr, &after), 0);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) {
      continue;
    }
    EXPECT_EQ(::sigismember(&before, sig), ::sigismember(&after, sig)) << sig;
  }
  sigset_t loop_mask;
  OnLoop(t, [&] { ::pthread_sigmask(SIG_SETMASK, nullptr, &loop_mask); });
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR1, SIGPIPE, SIGWINCH}) {
    EXPECT_EQ(::sigismember(&loop_mask, sig), 1) << sig;
  }
}

// srt's shape: the main thread blocks SIGUSR1 and reads it from a signalfd. If the loop thread
// left it unblocked, the kernel could deliver it there and its default action would kill us.
TEST(LoopThreadTest, ProcessSignalsReachTheMainThreadsSignalfd) {
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigset_t saved;
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &usr1, &saved), 0);
  UniqueFd sfd(::signalfd(-1, &usr1, SFD_CLOEXEC));
  ASSERT_TRUE(sfd);
  {
    LoopThread t;
    ASSERT_TRUE(t.Start().has_value());
    // Keep the loop thread busy in and out of epoll_wait while the signals arrive.
    for (int i = 0; i < 20; ++i) {
      t.loop().RunInLoop([] {});
      ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
      signalfd_siginfo info{};
      ASSERT_EQ(::read(sfd.get(), &info, sizeof(info)), static_cast<ssize_t>(sizeof(info)));
      EXPECT_EQ(info.ssi_signo, static_cast<uint32_t>(SIGUSR1));
    }
  }
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, &saved, nullptr), 0);
}

TEST(LoopThreadDeathTest, StopFromTheLoopThreadAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        LoopThread t;
        if (t.Start().has_value()) {
          t.loop().RunInLoop([&] { t.Stop(); });
          std::this_thread::sleep_for(5s);
        }
      },
      "Stop\\(\\) called on the loop thread");
}

}  // namespace
}  // namespace srt::proxy
