// SPDX-License-Identifier: Apache-2.0
// Memory stores on the host: where a store lands, what a fetch writes, and what a sync reads
// back from a directory the agent had to itself (no privileges; a fake API).
#include "runner/memory_stores.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace srt::poller {
namespace {

namespace fs = std::filesystem;

// One store on a map; records every write.
class FakeMemoryApi : public MemoryApi {
 public:
  struct Stored {
    std::string id;
    std::string content;
  };
  std::map<std::string, Stored> by_path;
  std::vector<std::string> calls;
  bool fail_writes = false;
  int next_id = 1;

  void Put(const std::string& path, const std::string& content) {
    by_path[path] = {"mem_" + std::to_string(next_id++), content};
  }

  Result<std::vector<Memory>> List(const std::string&) override {
    std::vector<Memory> out;
    for (const auto& [path, m] : by_path)
      out.push_back({m.id, path, m.content, Sha256Hex(m.content)});
    return out;
  }
  Result<Written> Create(const std::string&, const std::string& path,
                         const std::string& content) override {
    calls.push_back("create " + path);
    if (fail_writes) return MakeError(Errc::kProtocol, "503");
    if (path == "/refused.md") return Written{Write::kRefused, "", "400 invalid_request_error"};
    if (by_path.count(path) != 0) return Written{Write::kConflict, ""};
    Put(path, content);
    return Written{Write::kDone, by_path[path].id};
  }
  Result<Written> Update(const std::string&, const std::string& id, const std::string& content,
                         const std::string& expected) override {
    calls.push_back("update " + id);
    if (fail_writes) return MakeError(Errc::kProtocol, "503");
    for (auto& [path, m] : by_path) {
      if (m.id != id) continue;
      if (Sha256Hex(m.content) != expected) return Written{Write::kConflict, ""};
      m.content = content;
      return Written{Write::kDone, id};
    }
    return MakeError(Errc::kNotFound, "404");
  }
  Result<Write> Delete(const std::string&, const std::string& id,
                       const std::string& expected) override {
    calls.push_back("delete " + id);
    for (auto it = by_path.begin(); it != by_path.end(); ++it) {
      if (it->second.id != id) continue;
      if (Sha256Hex(it->second.content) != expected) return Write::kConflict;
      by_path.erase(it);
      return Write::kDone;
    }
    return MakeError(Errc::kNotFound, "404");
  }
};

class MemoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override { close(fd_); }
  std::string Read(const std::string& rel) {
    std::ifstream in(dir_ + "/" + rel);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void Write(const std::string& rel, const std::string& content) {
    fs::create_directories(fs::path(dir_ + "/" + rel).parent_path());
    std::ofstream(dir_ + "/" + rel) << content;
  }
  Result<SyncReport> Sync(MemoryBaseline& base, MemorySync mode = MemorySync::kFinal) {
    return SyncMemoryStore(api_, "memstore_a", fd_, base, mode,
                           std::chrono::steady_clock::now() + std::chrono::seconds(30));
  }

  FakeMemoryApi api_;
  srt::testing::TempDir tmp_{"srt-memory-test"};
  const std::string dir_ = tmp_.path();
  int fd_ = -1;
};

TEST(MemoryMountPathTest, TheMountPathVerbatimOrTheWorkdirsMemoryFolder) {
  EXPECT_EQ(*MemoryMountPath({"memstore_a", false, "/mnt/memory/notes", "x"}, "/workspace"),
            "/mnt/memory/notes");
  EXPECT_EQ(*MemoryMountPath({"memstore_a", false, "", "prefs"}, "/workspace"),
            "/workspace/memory/prefs");
  // A name that is not one path segment falls back to the id.
  EXPECT_EQ(*MemoryMountPath({"memstore_a", false, "", "../up"}, "/workspace"),
            "/workspace/memory/memstore_a");
  EXPECT_EQ(*MemoryMountPath({"memstore_a", false, "", ".."}, "/workspace"),
            "/workspace/memory/memstore_a");
  for (const char* bad : {"/", "relative", "/a//b", "/a/./b", "/a/../b", "/a/", "/a\nb"}) {
    auto r = MemoryMountPath({"memstore_a", false, bad, ""}, "/workspace");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find("memory store memstore_a: mount_path"), std::string::npos)
        << r.error().message();
  }
}

TEST(MemoryPathTest, TheServersRules) {
  EXPECT_TRUE(ValidateMemoryPath("/a.md"));
  EXPECT_TRUE(ValidateMemoryPath("/d/e/f.md"));
  EXPECT_TRUE(ValidateMemoryPath("/d/.anthropic-memory-store"));
  for (const std::string& bad : std::vector<std::string>{
           "", "/", "a.md", "/a//b", "/./a", "/../a", "/a/", "/a\tb", "/.anthropic-memory-store",
           "/" + std::string(256, 'x'), "/" + std::string(1024, 'x')}) {
    EXPECT_FALSE(ValidateMemoryPath(bad)) << bad;
  }
}

TEST(MemoryStoreSha, IsTheServersContentSha256) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_F(MemoryStoreTest, AFetchWritesEachMemoryAndTheMarker) {
  api_.Put("/a.md", "alpha");
  api_.Put("/d/e/b.md", "beta");
  api_.Put("/../escape", "no");
  api_.Put("/a.md/under-a-file", "clash");
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched) << fetched.error().message();
  EXPECT_EQ(fetched->written, 2u);
  EXPECT_EQ(fetched->skipped.size(), 2u);
  EXPECT_EQ(Read("a.md"), "alpha");
  EXPECT_EQ(Read("d/e/b.md"), "beta");
  EXPECT_EQ(Read(".anthropic-memory-store"), "version 1\nmemstore_a");
  EXPECT_FALSE(fs::exists(fs::path(dir_).parent_path() / "escape"));
  EXPECT_EQ(fetched->baseline.by_path.size(), 2u);
  EXPECT_EQ(fetched->baseline.by_path.at("/a.md").sha256, Sha256Hex("alpha"));
  // Nothing changed: a sync sends nothing.
  auto synced = Sync(fetched->baseline);
  ASSERT_TRUE(synced) << synced.error().message();
  EXPECT_TRUE(api_.calls.empty());
}

TEST_F(MemoryStoreTest, ASyncCreatesUpdatesAndDeletesWhatChanged) {
  api_.Put("/keep.md", "same");
  api_.Put("/edit.md", "old");
  api_.Put("/gone.md", "bye");
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  Write("edit.md", "new");
  Write("d/new.md", "fresh");
  fs::remove(dir_ + "/gone.md");
  auto r = Sync(fetched->baseline);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->created, 1u);
  EXPECT_EQ(r->updated, 1u);
  EXPECT_EQ(r->deleted, 1u);
  EXPECT_EQ(r->conflicts, 0u);
  EXPECT_EQ(api_.by_path.size(), 3u);
  EXPECT_EQ(api_.by_path.at("/edit.md").content, "new");
  EXPECT_EQ(api_.by_path.at("/d/new.md").content, "fresh");
  EXPECT_EQ(api_.by_path.count("/gone.md"), 0u);
}

// While the session runs: what changed goes up, and the next sync starts from there; a file
// missing for a moment is no delete. The end deletes it.
TEST_F(MemoryStoreTest, PeriodicSyncsWriteWhatChangedSinceTheLastAndLeaveDeletesForTheEnd) {
  api_.Put("/a.md", "v1");
  api_.Put("/gone.md", "x");
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  MemoryBaseline& base = fetched->baseline;
  Write("a.md", "v2");
  Write("new.md", "n1");
  fs::remove(dir_ + "/gone.md");
  auto first = Sync(base, MemorySync::kPeriodic);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->created, 1u);
  EXPECT_EQ(first->updated, 1u);
  EXPECT_EQ(first->deleted, 0u);
  EXPECT_EQ(api_.by_path.at("/gone.md").content, "x");
  api_.calls.clear();
  auto idle = Sync(base, MemorySync::kPeriodic);
  ASSERT_TRUE(idle);
  EXPECT_TRUE(api_.calls.empty());
  // The next change of each is made against what the last sync wrote.
  Write("a.md", "v3");
  Write("new.md", "n2");
  auto last = Sync(base, MemorySync::kFinal);
  ASSERT_TRUE(last) << last.error().message();
  EXPECT_EQ(last->updated, 2u);
  EXPECT_EQ(last->conflicts, 0u);
  EXPECT_EQ(last->deleted, 1u);
  EXPECT_EQ(api_.by_path.at("/a.md").content, "v3");
  EXPECT_EQ(api_.by_path.at("/new.md").content, "n2");
  EXPECT_EQ(api_.by_path.count("/gone.md"), 0u);
}

// A path whose conflict the server won is the server's for the rest of the item: not written
// again at each sync (each would conflict again), never deleted.
TEST_F(MemoryStoreTest, APathTheServerWonIsLeftAlone) {
  api_.Put("/a.md", "v1");
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  MemoryBaseline& base = fetched->baseline;
  api_.by_path["/a.md"].content = "elsewhere";
  Write("a.md", "agent");
  auto first = Sync(base, MemorySync::kPeriodic);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->conflicts, 1u);
  api_.calls.clear();
  Write("a.md", "agent again");
  fs::remove(dir_ + "/a.md");
  auto last = Sync(base, MemorySync::kFinal);
  ASSERT_TRUE(last);
  EXPECT_TRUE(api_.calls.empty());
  EXPECT_EQ(api_.by_path.at("/a.md").content, "elsewhere");
}

// Changed on the server meanwhile: the server's version wins, the rest goes on.
TEST_F(MemoryStoreTest, AConflictKeepsTheServersVersion) {
  api_.Put("/a.md", "v1");
  api_.Put("/b.md", "v1");
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  api_.by_path["/a.md"].content = "v2 from elsewhere";
  Write("a.md", "v2 from the agent");
  Write("b.md", "v2 from the agent");
  auto r = Sync(fetched->baseline);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->conflicts, 1u);
  EXPECT_EQ(r->updated, 1u);
  EXPECT_EQ(api_.by_path.at("/a.md").content, "v2 from elsewhere");
  EXPECT_EQ(api_.by_path.at("/b.md").content, "v2 from the agent");
}

// What the agent leaves that is not a memory is never read through, sent, or taken as a delete.
TEST_F(MemoryStoreTest, WhatIsNotAMemoryIsSkippedAndNotDeleted) {
  api_.Put("/was-a-file.md", "x");
  api_.Put("/fifo.md", "y");
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  fs::remove(dir_ + "/was-a-file.md");
  ASSERT_EQ(symlink("/etc/passwd", (dir_ + "/was-a-file.md").c_str()), 0);
  ASSERT_EQ(symlink("/etc", (dir_ + "/etc-link").c_str()), 0);
  fs::remove(dir_ + "/fifo.md");
  ASSERT_EQ(mkfifo((dir_ + "/fifo.md").c_str(), 0644), 0);  // a read would block forever
  Write("big.md", std::string(kMemoryMaxBytes + 1, 'b'));
  Write("binary.md", std::string("\xff\xfe", 2));
  Write("ok.md", "fine");
  auto r = Sync(fetched->baseline);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(api_.calls, std::vector<std::string>{"create /ok.md"});
  EXPECT_EQ(r->skipped.count, 5u);
  EXPECT_EQ(api_.by_path.at("/was-a-file.md").content, "x");
  EXPECT_EQ(api_.by_path.at("/fifo.md").content, "y");
}

// A session cannot empty a large store at once.
TEST_F(MemoryStoreTest, DeletesPerSyncAreCapped) {
  EXPECT_EQ(MemoryDeleteCap(3), 8u);
  EXPECT_EQ(MemoryDeleteCap(100), 25u);
  EXPECT_EQ(MemoryDeleteCap(1000), 50u);
  for (int i = 0; i < 100; ++i) api_.Put("/m" + std::to_string(i), "x");
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  for (int i = 0; i < 100; ++i) fs::remove(dir_ + "/m" + std::to_string(i));
  // Memories the agent makes meanwhile do not raise the cap.
  for (int i = 0; i < 200; ++i) Write("new" + std::to_string(i), "x");
  ASSERT_TRUE(Sync(fetched->baseline, MemorySync::kPeriodic));
  auto r = Sync(fetched->baseline);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->deleted, 25u);
  EXPECT_EQ(api_.by_path.size(), 75u + 200u);
  EXPECT_EQ(r->skipped.count, 75u);
  EXPECT_EQ(r->skipped.first.size(), 75u);
}

TEST_F(MemoryStoreTest, AStoreHoldsAtMostTheServersCap) {
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  for (size_t i = 0; i < kMaxMemories + 5; ++i) Write("f" + std::to_string(i), "x");
  auto r = Sync(fetched->baseline);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->created, kMaxMemories);
  EXPECT_EQ(r->skipped.count, 5u);
}

// Below a path longer than a memory's, nothing is walked or held: the agent's tree may be deep.
TEST_F(MemoryStoreTest, NothingBelowAPathTooLongForAMemoryIsWalked) {
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  std::string deep;
  for (int i = 0; i < 5; ++i) deep += (i ? "/" : "") + std::string(250, static_cast<char>('a' + i));
  for (int i = 0; i < 50; ++i) Write(deep + "/m" + std::to_string(i), "deep");
  auto r = Sync(fetched->baseline);
  ASSERT_TRUE(r);
  EXPECT_TRUE(api_.calls.empty());
  ASSERT_EQ(r->skipped.count, 1u);
  EXPECT_NE(r->skipped.first[0].find("longer than 1024 bytes"), std::string::npos);
  EXPECT_LT(r->skipped.first[0].size(), 300u);
}

// What the hostile review found: a store the walk cannot see whole deletes nothing (a memory
// deeper or later than the walk went was deleted as if the agent had removed it).
TEST_F(MemoryStoreTest, AWalkThatDidNotSeeTheWholeStoreDeletesNothing) {
  api_.Put("/gone.md", "x");
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  fs::remove(dir_ + "/gone.md");
  fs::create_directories(dir_ + "/junk");
  for (size_t i = 0; i <= 32 * kMaxMemories; ++i) {
    // Names that are no memory's (not UTF-8): nothing to create, only entries to visit.
    const std::string name = dir_ + "/junk/\xff" + std::to_string(i);
    int fd = open(name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  auto r = Sync(fetched->baseline);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->deleted, 0u);
  EXPECT_TRUE(api_.calls.empty());
  EXPECT_TRUE(r->incomplete_walk);
}

// A name that is not UTF-8 would reach the server changed (U+FFFD); a memory the server
// refuses is skipped, not the rest of the sync; a memory below a directory named as the marker
// would keep the marker from being written.
TEST_F(MemoryStoreTest, NamesNotUtf8AndWritesTheServerRefusesAreSkipped) {
  api_.Put("/.anthropic-memory-store/x", "would block the marker");
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched) << fetched.error().message();
  EXPECT_EQ(fetched->skipped.size(), 1u);
  EXPECT_EQ(Read(".anthropic-memory-store"), "version 1\nmemstore_a");
  Write("a\xff.md", "x");
  Write("refused.md", "x");
  Write("ok.md", "x");
  auto r = Sync(fetched->baseline);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(api_.calls, (std::vector<std::string>{"create /ok.md", "create /refused.md"}));
  EXPECT_EQ(r->created, 1u);
  EXPECT_EQ(r->skipped.count, 2u);
}

TEST_F(MemoryStoreTest, AFailingCallFailsTheSync) {
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  Write("a.md", "x");
  api_.fail_writes = true;
  auto r = Sync(fetched->baseline);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "503");
}

TEST_F(MemoryStoreTest, PastTheDeadlineNothingIsSent) {
  auto fetched = FetchMemoryStore(api_, "memstore_a", fd_);
  ASSERT_TRUE(fetched);
  Write("a.md", "x");
  auto r = SyncMemoryStore(api_, "memstore_a", fd_, fetched->baseline, MemorySync::kFinal,
                           std::chrono::steady_clock::now() - std::chrono::seconds(1));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->out_of_time);
  EXPECT_TRUE(api_.calls.empty());
}

}  // namespace
}  // namespace srt::poller
