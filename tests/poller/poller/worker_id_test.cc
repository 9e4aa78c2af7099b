// SPDX-License-Identifier: Apache-2.0
// The worker id kept in the sessions directory: stable across restarts, refused when planted.
#include "poller/worker_id.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace srt::poller {
namespace {

using ::testing::HasSubstr;

class WorkerIdFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/srt-poller-worker-id-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    file_ = dir_ + "/.worker-id";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& content) { std::ofstream(file_, std::ios::binary) << content; }
  std::string dir_;
  std::string file_;
};

TEST_F(WorkerIdFile, TheFirstRunStoresItsIdAndTheNextRunsKeepIt) {
  auto first = LoadOrCreateWorkerId(dir_, "host-00112233aabbccdd", /*create=*/true);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(*first, "host-00112233aabbccdd");
  struct stat st {};
  ASSERT_EQ(lstat(file_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  // A restart generates another fresh id; the stored one wins.
  auto second = LoadOrCreateWorkerId(dir_, "host-ffffffffffffffff", /*create=*/true);
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(*second, "host-00112233aabbccdd");
}

TEST_F(WorkerIdFile, WithoutCreateNothingIsWritten) {
  auto id = LoadOrCreateWorkerId(dir_, "host-1", /*create=*/false);
  ASSERT_TRUE(id) << id.error().message();
  EXPECT_EQ(*id, "host-1");
  EXPECT_FALSE(std::filesystem::exists(file_));
  // Nor does a sessions directory that does not exist yet (--check before the first run).
  id = LoadOrCreateWorkerId(dir_ + "/not-yet", "host-1", /*create=*/false);
  ASSERT_TRUE(id) << id.error().message();
  EXPECT_EQ(*id, "host-1");
}

TEST_F(WorkerIdFile, ASymlinkIsRefusedNamingTheFile) {
  std::ofstream(dir_ + "/elsewhere") << "host-1\n";
  ASSERT_EQ(symlink((dir_ + "/elsewhere").c_str(), file_.c_str()), 0);
  for (bool create : {true, false}) {
    auto id = LoadOrCreateWorkerId(dir_, "host-2", create);
    ASSERT_FALSE(id);
    EXPECT_THAT(id.error().message(), HasSubstr("worker id file '" + file_ + "'"));
    EXPECT_THAT(id.error().message(), HasSubstr("symbolic link"));
  }
  // A dangling one is no invitation to create its target either.
  ASSERT_EQ(unlink(file_.c_str()), 0);
  ASSERT_EQ(symlink((dir_ + "/target").c_str(), file_.c_str()), 0);
  EXPECT_FALSE(LoadOrCreateWorkerId(dir_, "host-2", true));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/target"));
}

TEST_F(WorkerIdFile, GarbageIsRefusedNamingTheFile) {
  for (const std::string& bad :
       {std::string(""), std::string("\n"), std::string("has space\n"), std::string("a/b\n"),
        std::string("id\nsecond line\n"), std::string(200, 'a'), std::string("x\0y", 3)}) {
    Write(bad);
    auto id = LoadOrCreateWorkerId(dir_, "host-2", /*create=*/true);
    ASSERT_FALSE(id) << bad;
    EXPECT_THAT(id.error().message(), HasSubstr("worker id file '" + file_ + "'"));
    EXPECT_THAT(id.error().message(), HasSubstr("remove it"));
  }
  // A directory, a FIFO: not a file of ours (and the FIFO is never waited on).
  ASSERT_EQ(unlink(file_.c_str()), 0);
  ASSERT_EQ(mkfifo(file_.c_str(), 0600), 0);
  auto id = LoadOrCreateWorkerId(dir_, "host-2", true);
  ASSERT_FALSE(id);
  EXPECT_THAT(id.error().message(), HasSubstr("not a regular file"));
}

TEST_F(WorkerIdFile, AFileOthersMayWriteIsRefused) {
  Write("host-1\n");
  ASSERT_EQ(chmod(file_.c_str(), 0666), 0);
  auto id = LoadOrCreateWorkerId(dir_, "host-2", true);
  ASSERT_FALSE(id);
  EXPECT_THAT(id.error().message(), HasSubstr("worker id file '" + file_ + "'"));
  EXPECT_THAT(id.error().message(), HasSubstr("writable by group or others"));
}

TEST_F(WorkerIdFile, ATrailingNewlineIsAllowedAndTheGrammarIsWorkerIds) {
  Write("host-1.example_2\n");
  EXPECT_EQ(*LoadOrCreateWorkerId(dir_, "x", true), "host-1.example_2");
  Write("host-3");
  EXPECT_EQ(*LoadOrCreateWorkerId(dir_, "x", true), "host-3");
}

}  // namespace
}  // namespace srt::poller
