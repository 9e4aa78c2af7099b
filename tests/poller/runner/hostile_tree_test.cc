// SPDX-License-Identifier: Apache-2.0
// Removing a tree the agent built: any depth, any width, no symlink followed (no privileges;
// as root, also through directories it made unreadable).
#include "runner/hostile_tree.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace srt::poller {
namespace {

namespace fs = std::filesystem;

class HostileTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override { close(fd_); }
  srt::testing::TempDir tmp_{"srt-hostile-tree-test"};
  const std::string dir_ = tmp_.path();
  int fd_ = -1;
};

// 1,000 levels (by openat: no path could name the bottom), a file at every tenth, a directory
// made unreadable on the way: the hostile review left a --disk 0 session unable to start
// again with a tree 300 deep ("deeper than 256").
TEST_F(HostileTreeTest, ATreeOfAnyDepthIsRemoved) {
  ASSERT_EQ(mkdirat(fd_, "t", 0755), 0);
  int cur = openat(fd_, "t", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(cur, 0);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(mkdirat(cur, "d", 0755), 0) << i;
    if (i % 10 == 0) {
      int f = openat(cur, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      ASSERT_GE(f, 0);
      close(f);
    }
    int next = openat(cur, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(next, 0);
    if (i == 500) fchmod(cur, 0);
    close(cur);
    cur = next;
  }
  close(cur);
  auto r = RemoveTreeAt(fd_, "t");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(HostileTreeTest, AWideDirectoryIsRemovedInBatchesAndSymlinksAreNotFollowed) {
  fs::create_directories(dir_ + "/w");
  for (int i = 0; i < 10'000; ++i) {
    int f = open((dir_ + "/w/" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(f, 0);
    close(f);
  }
  fs::create_directories(dir_ + "/outside");
  std::ofstream(dir_ + "/outside/keep") << "keep";
  fs::create_directory_symlink(dir_ + "/outside", dir_ + "/w/link");
  // A name like those the removal moves deep directories to: never replaced.
  fs::create_directories(dir_ + "/w/.srt-removing-1/x");
  auto r = RemoveTreeAt(fd_, "w");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_FALSE(fs::exists(dir_ + "/w"));
  EXPECT_TRUE(fs::exists(dir_ + "/outside/keep"));
  EXPECT_TRUE(RemoveTreeAt(fd_, "missing"));
}

}  // namespace
}  // namespace srt::poller
