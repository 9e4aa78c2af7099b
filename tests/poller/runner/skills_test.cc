// SPDX-License-Identifier: Apache-2.0
// Tests of skill archive extraction and skill setup (runner/skills.h). Archives are built in the
// test with libarchive's writer.
#include "runner/skills.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>

namespace srt::poller {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Entry {
  std::string name;
  std::string data;
  unsigned type = AE_IFREG;
  unsigned perm = 0644;
  std::string link;  // symlink target, or hard-link target when hardlink
  bool hardlink = false;
};

enum class Format { kTar, kTarGz, kTarBz2, kZip };

la_ssize_t WriteCb(archive*, void* client, const void* buf, size_t n) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

std::string MakeArchive(Format format, const std::vector<Entry>& entries) {
  std::string out;
  archive* a = archive_write_new();
  if (format == Format::kZip) {
    archive_write_set_format_zip(a);
  } else {
    archive_write_set_format_pax_restricted(a);
  }
  if (format == Format::kTarGz) {
    archive_write_add_filter_gzip(a);
  } else if (format == Format::kTarBz2) {
    archive_write_add_filter_bzip2(a);
  }
  archive_write_set_bytes_in_last_block(a, 1);
  EXPECT_EQ(archive_write_open(a, &out, nullptr, WriteCb, nullptr), ARCHIVE_OK);
  for (const Entry& e : entries) {
    archive_entry* ent = archive_entry_new();
    archive_entry_set_pathname(ent, e.name.c_str());
    if (e.hardlink) {
      archive_entry_set_hardlink(ent, e.link.c_str());
      archive_entry_set_filetype(ent, AE_IFREG);
      archive_entry_set_size(ent, 0);
    } else {
      archive_entry_set_filetype(ent, e.type);
      if (e.type == AE_IFLNK) {
        archive_entry_set_symlink(ent, e.link.c_str());
      }
      archive_entry_set_size(ent, e.type == AE_IFREG ? static_cast<la_int64_t>(e.data.size()) : 0);
    }
    archive_entry_set_perm(ent, e.perm);
    EXPECT_EQ(archive_write_header(a, ent), ARCHIVE_OK) << archive_error_string(a);
    if (e.type == AE_IFREG && !e.hardlink && !e.data.empty()) {
      EXPECT_EQ(archive_write_data(a, e.data.data(), e.data.size()),
                static_cast<la_ssize_t>(e.data.size()));
    }
    archive_entry_free(ent);
  }
  EXPECT_EQ(archive_write_close(a), ARCHIVE_OK);
  archive_write_free(a);
  return out;
}

Entry Dir(std::string name) { return Entry{std::move(name), "", AE_IFDIR, 0755, "", false}; }
Entry File(std::string name, std::string data, unsigned perm = 0644) {
  return Entry{std::move(name), std::move(data), AE_IFREG, perm, "", false};
}
Entry Symlink(std::string name, std::string target) {
  return Entry{std::move(name), "", AE_IFLNK, 0777, std::move(target), false};
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

unsigned Mode(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

class SkillsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "srt-skills-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(root_, ec);
  }
  fs::path root_;
};

TEST_F(SkillsTest, TarGzStripsTheWrapperDirAndKeepsExecBits) {
  std::string bytes =
      MakeArchive(Format::kTarGz, {Dir("pdf/"), File("pdf/SKILL.md", "# pdf"), Dir("pdf/scripts/"),
                                   File("pdf/scripts/run.sh", "#!/bin/sh", 0750)});
  fs::path dest = root_ / "skills" / "pdf";
  auto stats = ExtractSkillArchive(bytes, dest.string());
  ASSERT_TRUE(stats.has_value()) << stats.error().message();
  EXPECT_EQ(stats->stripped_top_dir, "pdf");
  EXPECT_EQ(stats->files, 2u);
  EXPECT_EQ(ReadFile(dest / "SKILL.md"), "# pdf");
  EXPECT_EQ(ReadFile(dest / "scripts/run.sh"), "#!/bin/sh");
  EXPECT_EQ(Mode(dest / "SKILL.md"), 0644u);
  EXPECT_EQ(Mode(dest / "scripts/run.sh"), 0755u);
  EXPECT_EQ(Mode(dest / "scripts"), 0755u);
  EXPECT_FALSE(fs::exists(dest / "pdf"));
}

TEST_F(SkillsTest, ZipFlatArchiveIsExtractedAsIs) {
  std::string bytes =
      MakeArchive(Format::kZip, {File("SKILL.md", "zip skill"), File("bin/tool", "ELF", 0700)});
  ASSERT_EQ(bytes.substr(0, 2), "PK");
  fs::path dest = root_ / "z";
  auto stats = ExtractSkillArchive(bytes, dest.string());
  ASSERT_TRUE(stats.has_value()) << stats.error().message();
  EXPECT_EQ(stats->stripped_top_dir, "");
  EXPECT_EQ(ReadFile(dest / "SKILL.md"), "zip skill");
  EXPECT_EQ(Mode(dest / "bin/tool"), 0755u);
}

TEST_F(SkillsTest, TarBz2AndPlainTarAndDotPrefixedNames) {
  for (Format f : {Format::kTarBz2, Format::kTar}) {
    std::string bytes = MakeArchive(
        f, {Dir("./"), Dir("./s/"), File("./s/SKILL.md", "dot"), File("./s/x/y.txt", "deep")});
    fs::path dest = root_ / (f == Format::kTar ? "plain" : "bz2");
    auto stats = ExtractSkillArchive(bytes, dest.string());
    ASSERT_TRUE(stats.has_value()) << stats.error().message();
    EXPECT_EQ(stats->stripped_top_dir, "s");
    EXPECT_EQ(ReadFile(dest / "SKILL.md"), "dot");
    EXPECT_EQ(ReadFile(dest / "x/y.txt"), "deep");
  }
}

TEST_F(SkillsTest, SetuidSetgidAndStickyAreStripped) {
  std::string bytes = MakeArchive(
      Format::kTar, {File("suid", "x", 04755), File("sgid", "x", 02644), File("sticky", "x", 01777),
                     Entry{"d/", "", AE_IFDIR, 07777, "", false}, File("d/f", "x")});
  fs::path dest = root_ / "m";
  auto stats = ExtractSkillArchive(bytes, dest.string());
  ASSERT_TRUE(stats.has_value()) << stats.error().message();
  EXPECT_EQ(Mode(dest / "suid"), 0755u);
  EXPECT_EQ(Mode(dest / "sgid"), 0644u);
  EXPECT_EQ(Mode(dest / "sticky"), 0755u);
  EXPECT_EQ(Mode(dest / "d"), 0755u);
}

TEST_F(SkillsTest, DotDotMemberIsRefusedAndDestRemoved) {
  for (const char* name : {"../evil.txt", "a/../../evil.txt", "ok/../evil.txt"}) {
    fs::path dest = root_ / "nested" / "s";
    std::string bytes = MakeArchive(Format::kZip, {File("ok.txt", "fine"), File(name, "pwn")});
    auto stats = ExtractSkillArchive(bytes, dest.string());
    ASSERT_FALSE(stats.has_value()) << name;
    EXPECT_THAT(stats.error().message(), HasSubstr("'..' component")) << name;
    EXPECT_THAT(stats.error().message(), HasSubstr(name));
    EXPECT_FALSE(fs::exists(dest));
    EXPECT_FALSE(fs::exists(root_ / "nested" / "evil.txt"));
    EXPECT_FALSE(fs::exists(root_ / "evil.txt"));
  }
}

TEST_F(SkillsTest, AbsoluteMemberIsRefused) {
  fs::path target = root_ / "abs.txt";
  std::string bytes = MakeArchive(Format::kTarGz, {File(target.string(), "pwn")});
  auto stats = ExtractSkillArchive(bytes, (root_ / "s").string());
  ASSERT_FALSE(stats.has_value());
  EXPECT_THAT(stats.error().message(), HasSubstr("absolute path"));
  EXPECT_FALSE(fs::exists(target));
}

TEST_F(SkillsTest, SymlinkPointingOutThenAFileThroughItStaysInside) {
  fs::path outside = root_ / "outside";
  fs::create_directories(outside);
  std::string bytes =
      MakeArchive(Format::kTar, {Symlink("link", outside.string()), File("link/evil.txt", "pwn"),
                                 Symlink("rel", "../../outside"), File("rel/evil2.txt", "pwn"),
                                 Entry{"hard", "", AE_IFREG, 0644, "/etc/passwd", true}});
  fs::path dest = root_ / "s";
  auto stats = ExtractSkillArchive(bytes, dest.string());
  ASSERT_TRUE(stats.has_value()) << stats.error().message();
  EXPECT_EQ(stats->skipped_links, 3u);
  EXPECT_TRUE(fs::is_empty(outside));
  // The file landed in a real directory inside dest, not through the (skipped) link.
  EXPECT_FALSE(fs::is_symlink(dest / "link"));
  EXPECT_TRUE(fs::is_directory(dest / "link"));
  EXPECT_EQ(ReadFile(dest / "link/evil.txt"), "pwn");
  EXPECT_FALSE(fs::exists(dest / "hard"));
}

TEST_F(SkillsTest, ZipSymlinkMemberIsSkipped) {
  std::string bytes = MakeArchive(Format::kZip, {Symlink("l", "/etc"), File("f", "x")});
  fs::path dest = root_ / "s";
  auto stats = ExtractSkillArchive(bytes, dest.string());
  ASSERT_TRUE(stats.has_value()) << stats.error().message();
  EXPECT_EQ(stats->skipped_links, 1u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(dest / "l")));
}

TEST_F(SkillsTest, NeverWritesThroughAPlantedSymlink) {
  fs::path outside = root_ / "outside";
  fs::create_directories(outside);
  fs::path dest = root_ / "s";
  fs::create_directories(dest);
  fs::create_directory_symlink(outside, dest / "sub");
  fs::create_symlink(outside / "f", dest / "f");
  // (Two top-level members, so no wrapper directory is stripped.)
  auto r1 = ExtractSkillArchive(MakeArchive(Format::kTar, {File("top", "t"), File("sub/x", "pwn")}),
                                dest.string());
  ASSERT_FALSE(r1.has_value());
  EXPECT_THAT(r1.error().message(), HasSubstr("not a directory (or a symlink)"));
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_TRUE(fs::exists(root_ / "outside")) << "removing dest must not follow its symlinks";
  fs::create_directories(dest);
  fs::create_symlink(outside / "f", dest / "f");
  auto r2 = ExtractSkillArchive(MakeArchive(Format::kTar, {File("top", "t"), File("f", "pwn")}),
                                dest.string());
  ASSERT_FALSE(r2.has_value());
  EXPECT_THAT(r2.error().message(), HasSubstr("create archive member 'f'"));
  EXPECT_TRUE(fs::is_empty(outside));
  // A destination that is itself a symlink is refused too.
  fs::create_directory_symlink(outside, root_ / "dlink");
  auto r3 = ExtractSkillArchive(MakeArchive(Format::kTar, {File("g", "pwn")}),
                                (root_ / "dlink").string());
  EXPECT_FALSE(r3.has_value());
  EXPECT_TRUE(fs::is_empty(outside));
}

// srt-poller extracts skills into the workspace while the session's sandbox runs, so the agent
// can plant a FIFO where a member is about to be written. Opening it for writing would wait for
// a reader forever: the session's thread, its slot and srt-poller's shutdown with it. Whatever
// is already at a member's name fails that skill at once.
TEST_F(SkillsTest, APlantedFifoOrFileFailsTheSkillAtOnce) {
  fs::path dest = root_ / "s";
  fs::create_directories(dest);
  ASSERT_EQ(::mkfifo((dest / "f").c_str(), 0644), 0);
  auto extraction = std::async(std::launch::async, [&] {
    return ExtractSkillArchive(MakeArchive(Format::kTar, {File("top", "t"), File("f", "x")}),
                               dest.string());
  });
  if (extraction.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    // Let the blocked writer go before failing, so the test process can end.
    int reader = ::open((dest / "f").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    extraction.wait();
    if (reader >= 0) ::close(reader);
    FAIL() << "extraction waited on a FIFO the sandbox planted";
  }
  Result<ExtractStats> r = extraction.get();
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(), HasSubstr("create archive member 'f'"));
  // A regular file of the agent's is not written into either.
  fs::create_directories(dest);
  { std::ofstream(dest / "g") << "the agent's"; }
  auto r2 = ExtractSkillArchive(MakeArchive(Format::kTar, {File("top", "t"), File("g", "x")}),
                                dest.string());
  ASSERT_FALSE(r2.has_value());
  EXPECT_THAT(r2.error().message(), HasSubstr("File exists"));
}

TEST_F(SkillsTest, HugeMemberOverTheLimitIsRefused) {
  ArchiveLimits limits;
  limits.max_total_bytes = 1024;
  std::string bytes =
      MakeArchive(Format::kTarGz, {File("small", "x"), File("big", std::string(4096, 'A'))});
  fs::path dest = root_ / "s";
  auto stats = ExtractSkillArchive(bytes, dest.string(), limits);
  ASSERT_FALSE(stats.has_value());
  EXPECT_THAT(stats.error().message(), HasSubstr("exceeds 1024 bytes decompressed"));
  EXPECT_FALSE(fs::exists(dest));
  // The same bound over several members, and for zip.
  std::string many = MakeArchive(
      Format::kZip, {File("a", std::string(600, 'a')), File("b", std::string(600, 'b'))});
  auto z = ExtractSkillArchive(many, dest.string(), limits);
  ASSERT_FALSE(z.has_value());
  EXPECT_THAT(z.error().message(), HasSubstr("exceeds 1024 bytes"));
}

TEST_F(SkillsTest, MemberCountAndPathLengthLimits) {
  ArchiveLimits limits;
  limits.max_members = 3;
  std::vector<Entry> entries;
  for (int i = 0; i < 5; ++i) {
    entries.push_back(File("f" + std::to_string(i), "x"));
  }
  auto r = ExtractSkillArchive(MakeArchive(Format::kTar, entries), (root_ / "a").string(), limits);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message(), HasSubstr("exceeds 3 members"));

  ArchiveLimits path_limits;
  path_limits.max_path_length = 20;
  auto p = ExtractSkillArchive(MakeArchive(Format::kTar, {File(std::string(30, 'n'), "x")}),
                               (root_ / "b").string(), path_limits);
  ASSERT_FALSE(p.has_value());
  EXPECT_THAT(p.error().message(), HasSubstr("path longer than 20 bytes"));

  auto c = ExtractSkillArchive(MakeArchive(Format::kTar, {File("d/" + std::string(300, 'c'), "x")}),
                               (root_ / "c").string());
  ASSERT_FALSE(c.has_value());
  EXPECT_THAT(c.error().message(), HasSubstr("component longer than 255 bytes"));
}

TEST_F(SkillsTest, SpecialFilesAreSkipped) {
  std::string bytes =
      MakeArchive(Format::kTar, {Entry{"fifo", "", AE_IFIFO, 0644, "", false}, File("f", "x")});
  auto stats = ExtractSkillArchive(bytes, (root_ / "s").string());
  ASSERT_TRUE(stats.has_value()) << stats.error().message();
  EXPECT_EQ(stats->skipped_special, 1u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(root_ / "s" / "fifo")));
}

TEST_F(SkillsTest, GarbageIsRefused) {
  auto r =
      ExtractSkillArchive("this is not an archive at all, not even close", (root_ / "g").string());
  ASSERT_FALSE(r.has_value());
  EXPECT_FALSE(fs::exists(root_ / "g"));
  auto e = ExtractSkillArchive("", (root_ / "e").string());
  EXPECT_FALSE(e.has_value());
}

TEST(SkillVersionTest, LatestResolvesToTheNewestNumericVersion) {
  auto v = ResolveSkillVersion("skill_1", "latest",
                               {"1759178010641129", "abc", "999", "1759178010641130", "0099"});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, "1759178010641130");
  EXPECT_EQ(*ResolveSkillVersion("skill_1", "123", {}), "123");
  auto none = ResolveSkillVersion("skill_1", "latest", {"beta"});
  ASSERT_FALSE(none.has_value());
  EXPECT_THAT(none.error().message(), HasSubstr("no concrete version"));
}

TEST(SkillVersionTest, DirNameFollowsGo) {
  EXPECT_EQ(*SkillDirName("pdf", "id"), "pdf");
  EXPECT_EQ(*SkillDirName("  pdf \n", "id"), "pdf");
  EXPECT_EQ(*SkillDirName("a/b", "id"), "b");
  EXPECT_EQ(*SkillDirName("pdf/", "id"), "pdf");
  EXPECT_EQ(*SkillDirName("..", "skill_x"), "skill_x");
  EXPECT_EQ(*SkillDirName("", "skill_x"), "skill_x");
  EXPECT_EQ(*SkillDirName("a\\b", "skill_x"), "skill_x");
  EXPECT_EQ(*SkillDirName("/", "skill_x"), "skill_x");
  EXPECT_FALSE(SkillDirName("..", "../evil").has_value());
}

class FakeSkillsApi : public SkillsApi {
 public:
  Result<std::vector<std::string>> ListVersions(const std::string& id) override {
    listed.push_back(id);
    return std::vector<std::string>{"100", "200", "latest"};
  }
  Result<std::string> GetVersionName(const std::string& id, const std::string&) override {
    auto it = names.find(id);
    return it == names.end() ? std::string("..") : it->second;
  }
  Result<std::string> Download(const std::string& id, const std::string& v) override {
    downloaded.push_back(id + "@" + v);
    if (id == "broken") {
      return MakeError(Errc::kSystem, "HTTP 503");
    }
    auto it = archives.find(id);
    if (it == archives.end()) {
      return MakeError(Errc::kNotFound, "HTTP 404");
    }
    return it->second;
  }
  std::map<std::string, std::string> names;
  std::map<std::string, std::string> archives;
  std::vector<std::string> listed;
  std::vector<std::string> downloaded;
};

TEST_F(SkillsTest, SetupSkillsExtractsEachAndOneFailureDoesNotStopTheOthers) {
  FakeSkillsApi api;
  api.names = {{"s1", "pdf"}, {"broken", "broken"}, {"s3", "docx"}};
  api.archives = {
      {"s1", MakeArchive(Format::kTarGz, {Dir("pdf/"), File("pdf/SKILL.md", "pdf skill")})},
      {"s3",
       MakeArchive(Format::kZip, {File("docx/SKILL.md", "docx"), File("docx/x.py", "", 0755)})}};
  fs::path ws = root_ / "ws";
  fs::create_directories(ws / "skills" / "pdf");
  std::ofstream(ws / "skills" / "pdf" / "stale.txt") << "old";
  auto out = SetupSkills(api, {{"s1", "latest"}, {"broken", "7"}, {"s3", "5"}}, ws.string());
  ASSERT_TRUE(out.has_value()) << out.error().message();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_TRUE((*out)[0].ok) << (*out)[0].error;
  EXPECT_EQ((*out)[0].resolved_version, "200");
  EXPECT_EQ((*out)[0].directory, (ws / "skills" / "pdf").string());
  EXPECT_FALSE((*out)[1].ok);
  EXPECT_THAT((*out)[1].error, HasSubstr("download skill: HTTP 503"));
  EXPECT_TRUE((*out)[2].ok) << (*out)[2].error;
  EXPECT_EQ(api.listed, std::vector<std::string>{"s1"});
  EXPECT_EQ(ReadFile(ws / "skills/pdf/SKILL.md"), "pdf skill");
  EXPECT_FALSE(fs::exists(ws / "skills/pdf/stale.txt")) << "an existing skill dir is replaced";
  EXPECT_EQ(Mode(ws / "skills/docx/x.py"), 0755u);

  ASSERT_TRUE(CleanupSkills(ws.string()).has_value());
  EXPECT_FALSE(fs::exists(ws / "skills"));
  EXPECT_TRUE(fs::exists(ws));
  EXPECT_TRUE(CleanupSkills(ws.string()).has_value()) << "missing is fine";
}

TEST_F(SkillsTest, SetupAndCleanupNeverFollowAPlantedSkillsSymlink) {
  fs::path outside = root_ / "outside";
  fs::create_directories(outside / "pdf");
  std::ofstream(outside / "pdf" / "keep.txt") << "precious";
  fs::path ws = root_ / "ws";
  fs::create_directories(ws);
  fs::create_directory_symlink(outside, ws / "skills");

  FakeSkillsApi api;
  api.names = {{"s1", "pdf"}};
  api.archives = {{"s1", MakeArchive(Format::kTar, {File("SKILL.md", "x")})}};
  auto out = SetupSkills(api, {{"s1", "1"}}, ws.string());
  ASSERT_TRUE(out.has_value()) << out.error().message();
  EXPECT_TRUE((*out)[0].ok);
  EXPECT_FALSE(fs::is_symlink(ws / "skills"));
  EXPECT_EQ(ReadFile(outside / "pdf" / "keep.txt"), "precious");

  fs::remove_all(ws / "skills");
  fs::create_directory_symlink(outside, ws / "skills");
  ASSERT_TRUE(CleanupSkills(ws.string()).has_value());
  EXPECT_FALSE(fs::exists(fs::symlink_status(ws / "skills")));
  EXPECT_EQ(ReadFile(outside / "pdf" / "keep.txt"), "precious");
}

TEST_F(SkillsTest, CleanupRemovesUnreadableDirectoriesAndInnerSymlinks) {
  fs::path outside = root_ / "outside";
  fs::create_directories(outside);
  std::ofstream(outside / "keep.txt") << "precious";
  fs::path ws = root_ / "ws";
  fs::create_directories(ws / "skills/a/locked/inner");
  std::ofstream(ws / "skills/a/locked/inner/f") << "x";
  fs::create_directory_symlink(outside, ws / "skills/a/link");
  ASSERT_EQ(::chmod((ws / "skills/a/locked").c_str(), 0), 0);
  ASSERT_TRUE(CleanupSkills(ws.string()).has_value());
  EXPECT_FALSE(fs::exists(ws / "skills"));
  EXPECT_EQ(ReadFile(outside / "keep.txt"), "precious");
}

TEST_F(SkillsTest, BadSkillNameIsReportedPerSkill) {
  FakeSkillsApi api;
  auto out = SetupSkills(api, {{"bad_name", "1"}}, (root_).string());
  ASSERT_TRUE(out.has_value());
  // ".." falls back to the id, which is safe here; the download then fails for this skill only.
  EXPECT_EQ((*out)[0].directory, (root_ / "skills" / "bad_name").string());
  EXPECT_FALSE((*out)[0].ok);
  EXPECT_THAT((*out)[0].error, HasSubstr("HTTP 404"));
}

}  // namespace
}  // namespace srt::poller
