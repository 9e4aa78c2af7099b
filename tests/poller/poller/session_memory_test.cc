// SPDX-License-Identifier: Apache-2.0
// A session's memory stores on the host, without a sandbox (no privileges): where they are put,
// the periodic syncs' thread against the final sync (also under TSan), and what is left after.
#include "poller/session_memory.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.h"

namespace srt::poller {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// One store on a map, safe for the periodic thread and the test's own.
class LockedMemoryApi : public MemoryApi {
 public:
  Result<std::vector<Memory>> List(const std::string&) override {
    std::lock_guard lock(mu_);
    std::vector<Memory> out;
    for (const auto& [path, content] : by_path_) {
      out.push_back({"mem_" + std::to_string(out.size()), path, content, Sha256Hex(content)});
    }
    return out;
  }
  Result<Written> Create(const std::string&, const std::string& path,
                         const std::string& content) override {
    std::lock_guard lock(mu_);
    by_path_[path] = content;
    return Written{Write::kDone, "mem_new" + std::to_string(++creates_)};
  }
  Result<Written> Update(const std::string&, const std::string& id, const std::string& content,
                         const std::string&) override {
    std::lock_guard lock(mu_);
    updates_.push_back(id + "=" + content);
    return Written{Write::kDone, id};
  }
  Result<Write> Delete(const std::string&, const std::string& id, const std::string&) override {
    std::lock_guard lock(mu_);
    deletes_.push_back(id);
    return Write::kDone;
  }
  std::map<std::string, std::string> Contents() {
    std::lock_guard lock(mu_);
    return by_path_;
  }
  std::vector<std::string> Deletes() {
    std::lock_guard lock(mu_);
    return deletes_;
  }
  void Seed(const std::string& path, const std::string& content) { by_path_[path] = content; }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> by_path_;
  std::vector<std::string> updates_;
  std::vector<std::string> deletes_;
  int creates_ = 0;
};

class SessionMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_ + "/sessions/sesn_m"); }
  std::string Sessions() const { return dir_ + "/sessions"; }
  std::string Workspace() const { return dir_ + "/sessions/sesn_m"; }

  srt::testing::TempDir tmp_{"srt-session-memory-test"};
  const std::string dir_ = tmp_.path();
};

TEST_F(SessionMemoryTest, PeriodicSyncsRunBesideTheSessionAndTheEndLeavesNothing) {
  LockedMemoryApi api;
  api.Seed("/old.md", "old");
  std::vector<MemoryStoreRef> stores = {{"memstore_a", false, "", "notes"},
                                        {"memstore_b", true, "/srt-test-absent/ro", ""}};
  auto memory = SessionMemory::Mount(api, stores, Sessions(), "sesn_m", Workspace(), "/workspace",
                                     /*tmpfs_bytes=*/0);
  ASSERT_TRUE(memory) << memory.error().message();
  const std::vector<BindMount>& binds = (*memory)->binds();
  ASSERT_EQ(binds.size(), 2u);
  EXPECT_EQ(binds[0].target, "/workspace/memory/notes");
  EXPECT_TRUE(binds[0].writable);
  EXPECT_EQ(binds[1].target, "/srt-test-absent/ro");
  EXPECT_FALSE(binds[1].writable);
  EXPECT_TRUE(fs::is_directory(Workspace() + "/memory/notes"));  // to mount on
  const std::string store = binds[0].source;
  EXPECT_EQ(store.rfind(Sessions() + "/.memory/sesn_m/", 0), 0u) << store;

  std::mutex mu;
  size_t periodic_reports = 0;
  (*memory)->StartPeriodic(api, milliseconds(5), [&](const std::vector<MemoryStoreSync>& syncs) {
    std::lock_guard lock(mu);
    periodic_reports += syncs.size();
  });
  // The agent, meanwhile.
  for (int i = 0; i < 20; ++i) {
    std::ofstream(store + "/f" + std::to_string(i) + ".md") << "v" << i;
    std::this_thread::sleep_for(milliseconds(2));
  }
  fs::remove(store + "/old.md");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (api.Contents().size() < 21 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_EQ(api.Contents().size(), 21u);
  EXPECT_TRUE(api.Deletes().empty());  // not while the session runs
  (*memory)->StopPeriodic();
  {
    std::lock_guard lock(mu);
    EXPECT_GT(periodic_reports, 0u);  // the read-only store is never synced: one report each
  }
  auto final_syncs = (*memory)->Sync(api, MemorySync::kFinal,
                                     std::chrono::steady_clock::now() + std::chrono::seconds(30));
  ASSERT_EQ(final_syncs.size(), 1u);
  ASSERT_TRUE(final_syncs[0].report) << final_syncs[0].report.error().message();
  EXPECT_EQ(final_syncs[0].report->deleted, 1u);
  EXPECT_EQ(api.Deletes(), std::vector<std::string>{"mem_0"});

  memory->reset();
  EXPECT_FALSE(fs::exists(Sessions() + "/.memory/sesn_m"));
  EXPECT_FALSE(fs::exists(Workspace() + "/memory/notes"));
  EXPECT_TRUE(fs::exists(Workspace()));
}

// As the official workers: a path that exists when the item starts, or one that overlaps
// another store's, refuses the item; a symlink the agent left on the way is never followed.
TEST_F(SessionMemoryTest, APathThatExistsOrOverlapsOrLeadsThroughASymlinkIsRefused) {
  LockedMemoryApi api;
  auto exists = SessionMemory::Mount(api, {{"memstore_a", false, "/etc", ""}}, Sessions(), "sesn_m",
                                     Workspace(), "/workspace", 0);
  ASSERT_FALSE(exists);
  EXPECT_EQ(exists.error().message(),
            "memory store memstore_a: something already exists at the memory store's path "
            "'/etc'; it must not exist when the session starts");
  fs::create_directories(Workspace() + "/memory/left");
  auto left = SessionMemory::Mount(api, {{"memstore_a", false, "", "left"}}, Sessions(), "sesn_m",
                                   Workspace(), "/workspace", 0);
  ASSERT_FALSE(left);
  EXPECT_NE(left.error().message().find("something already exists"), std::string::npos);
  auto overlap = SessionMemory::Mount(
      api,
      {{"memstore_a", false, "/srt-absent/a", ""}, {"memstore_b", false, "/srt-absent/a/b", ""}},
      Sessions(), "sesn_m", Workspace(), "/workspace", 0);
  ASSERT_FALSE(overlap);
  EXPECT_NE(overlap.error().message().find("overlaps '/srt-absent/a'"), std::string::npos)
      << overlap.error().message();
  fs::create_directories(dir_ + "/elsewhere");
  fs::create_directory_symlink(dir_ + "/elsewhere", Workspace() + "/linked");
  auto linked = SessionMemory::Mount(api, {{"memstore_a", false, "/workspace/linked/x", ""}},
                                     Sessions(), "sesn_m", Workspace(), "/workspace", 0);
  ASSERT_FALSE(linked);
  EXPECT_FALSE(fs::exists(dir_ + "/elsewhere/x"));
}

}  // namespace
}  // namespace srt::poller
