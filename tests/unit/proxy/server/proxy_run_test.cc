// SPDX-License-Identifier: Apache-2.0
// proxy/proxy.h: Create() starts nothing (srt creates the proxy before bubblewrap is spawned and
// runs it while bubblewrap sets up); Run() starts the proxy's thread, once; Serve() and Update()
// need it. StopServing() ends that thread without waiting for it (srt, once the sandbox is empty).
#include <dirent.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "proxy/proxy.h"

namespace srt::proxy {
namespace {

// How many of this process's threads are named `name`.
int ThreadsNamed(const std::string& name) {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++n;
  }
  closedir(d);
  return n;
}

TEST(ProxyRunTest, CreateStartsNoThreadAndRunStartsOneOnce) {
  ASSERT_EQ(ThreadsNamed("srt-proxy"), 0);
  Result<std::unique_ptr<Proxy>> proxy = Proxy::Create(NetworkPolicy{}, ProxyConfig{});
  ASSERT_TRUE(proxy.has_value()) << proxy.error().message();
  EXPECT_EQ(ThreadsNamed("srt-proxy"), 0);
  EXPECT_EQ((*proxy)->capture_ports(), (std::vector<uint16_t>{80, 443}));

  Result<void> early = (*proxy)->Serve({});
  ASSERT_FALSE(early.has_value());
  EXPECT_EQ(early.error().code(), Errc::kInvalidArgument);
  Result<void> update = (*proxy)->Update(NetworkPolicy{});
  ASSERT_FALSE(update.has_value());
  EXPECT_EQ(update.error().message(), "the proxy is not running (Run)");

  ASSERT_TRUE((*proxy)->Run().has_value());
  // Serve waits for the server, made on the thread once it has named itself.
  EXPECT_TRUE((*proxy)->Serve({}).has_value());
  EXPECT_EQ(ThreadsNamed("srt-proxy"), 1);
  Result<void> again = (*proxy)->Run();
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().message(), "the proxy was already run");
  EXPECT_EQ(ThreadsNamed("srt-proxy"), 1);
  EXPECT_TRUE((*proxy)->Update(NetworkPolicy{}).has_value());
}

TEST(ProxyRunTest, StopServingEndsTheThreadAndServeRefusesAfterIt) {
  ASSERT_EQ(ThreadsNamed("srt-proxy"), 0);
  Result<std::unique_ptr<Proxy>> proxy = Proxy::Create(NetworkPolicy{}, ProxyConfig{});
  ASSERT_TRUE(proxy.has_value()) << proxy.error().message();
  (*proxy)->StopServing();  // before Run(): nothing to stop
  ASSERT_TRUE((*proxy)->Run().has_value());
  // Polls (at most 5 s) until `n` threads carry the proxy's name.
  auto named = [](int n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (ThreadsNamed("srt-proxy") != n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return ThreadsNamed("srt-proxy");
  };
  // The thread names itself once it runs: before that, none would be counted either way.
  ASSERT_EQ(named(1), 1);
  (*proxy)->StopServing();
  (*proxy)->StopServing();  // idempotent
  // The thread ends by itself (nobody joins it before the destructor).
  EXPECT_EQ(named(0), 0);
  Result<void> served = (*proxy)->Serve({});
  ASSERT_FALSE(served.has_value());
  EXPECT_EQ(served.error().message(), "the proxy has stopped");
  EXPECT_TRUE((*proxy)->Update(NetworkPolicy{}).has_value());  // changes nothing, blocks nothing
  proxy->reset();
}

}  // namespace
}  // namespace srt::proxy
