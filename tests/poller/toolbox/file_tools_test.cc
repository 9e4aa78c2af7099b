// SPDX-License-Identifier: Apache-2.0
// read, write, edit: the Go toolset's texts, and confinement to the root (`..`, symlinks of
// every kind, absolute paths, /proc/self/root, FIFOs).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "toolbox/confined_root.h"
#include "toolbox/limits.h"
#include "toolbox_test_support.h"

namespace srt::poller::toolbox::testing {
namespace {

using ReadToolTest = ToolboxTest;
using WriteToolTest = ToolboxTest;
using EditToolTest = ToolboxTest;
using ConfinementTest = ToolboxTest;

TEST_F(ReadToolTest, ReadsAndSlices) {
  WriteFile(In("a.txt"), "line1\nline2\nline3");
  EXPECT_EQ(Call("read", {{"file_path", "a.txt"}}).text, "line1\nline2\nline3");
  EXPECT_EQ(Call("read", {{"file_path", In("a.txt")}}).text, "line1\nline2\nline3");
  EXPECT_EQ(Call("read", {{"file_path", "a.txt"}, {"view_range", {2, 2}}}).text, "line2");
  EXPECT_EQ(Call("read", {{"file_path", "a.txt"}, {"view_range", {2, -1}}}).text, "line2\nline3");
  EXPECT_EQ(Call("read", {{"file_path", "a.txt"}, {"view_range", {0, 1}}}).text, "line1");
  EXPECT_EQ(Call("read", {{"file_path", "a.txt"}, {"view_range", {9, 12}}}).text, "");
  ToolResult r = Call("read", {{"file_path", "a.txt"}, {"view_range", {2}}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "read: view_range must be [start_line, end_line]");
  r = Call("read", {{"file_path", "a.txt"}, {"view_range", {3, 1}}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "read: view_range end line 1 is before start line 3");
  r = Call("read", {{"file_path", "a.txt"}, {"view_range", {"a", 1}}});
  EXPECT_EQ(r.text, "invalid read input: view_range must be an array of integers");
}

TEST_F(ReadToolTest, Errors) {
  ToolResult r = Call("read", {{"file_path", "missing.txt"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "read missing.txt: no such file or directory");
  EXPECT_EQ(Call("read", nlohmann::json::object()).text, "read: file_path is required");
  fs::create_directories(In("sub"));
  EXPECT_EQ(Call("read", {{"file_path", "sub"}}).text, "read: sub is not a regular file");
  WriteFile(In("f"), "x");
  EXPECT_EQ(Call("read", {{"file_path", "f/x"}}).text, "read f/x: not a directory");
}

TEST_F(ReadToolTest, SizeCap) {
  WriteFile(In("big.txt"), std::string(kMaxFileBytes + 1, 'a'));
  ToolResult r = Call("read", {{"file_path", "big.txt"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text,
            "read: big.txt is 262145 bytes, exceeds 262144-byte limit. Use bash (head/tail/sed) to "
            "read a slice.");
  WriteFile(In("ok.txt"), std::string(kMaxFileBytes, 'a'));
  EXPECT_FALSE(Call("read", {{"file_path", "ok.txt"}}).is_error);
}

TEST_F(ReadToolTest, RefusesAFifoWithoutBlocking) {
  ASSERT_EQ(mkfifo(In("pipe").c_str(), 0644), 0);
  auto start = std::chrono::steady_clock::now();
  ToolResult r = Call("read", {{"file_path", "pipe"}});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "read: pipe is not a regular file");
  ASSERT_EQ(symlink("pipe", In("to-pipe").c_str()), 0);
  EXPECT_EQ(Call("read", {{"file_path", "to-pipe"}}).text, "read: to-pipe is not a regular file");
  EXPECT_EQ(Call("edit", {{"file_path", "pipe"}, {"old_string", "a"}, {"new_string", "b"}}).text,
            "edit: pipe is not a regular file");
}

TEST_F(WriteToolTest, CreatesParentsAndOverwrites) {
  ToolResult r = Call("write", {{"file_path", "new.txt"}, {"content", "hello"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "wrote 5 bytes to new.txt");
  EXPECT_EQ(ReadFile(In("new.txt")), "hello");
  struct stat st;
  ASSERT_EQ(stat(In("new.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);

  EXPECT_EQ(Call("write", {{"file_path", "deep/nested/f.txt"}, {"content", "x"}}).text,
            "wrote 1 bytes to deep/nested/f.txt");
  EXPECT_EQ(ReadFile(In("deep/nested/f.txt")), "x");
  Call("write", {{"file_path", "ow.txt"}, {"content", "first"}});
  Call("write", {{"file_path", In("ow.txt")}, {"content", "second"}});
  EXPECT_EQ(ReadFile(In("ow.txt")), "second");
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(root_)) {
    EXPECT_EQ(e.path().filename().string().rfind(".agenttoolset-", 0), std::string::npos);
  }
}

TEST_F(WriteToolTest, Errors) {
  EXPECT_EQ(Call("write", {{"content", "x"}}).text, "write: file_path is required");
  WriteFile(In("file"), "x");
  ToolResult r = Call("write", {{"file_path", "file/sub/x"}, {"content", "x"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "write file/sub/x: not a directory");
  fs::create_directories(In("dir"));
  EXPECT_EQ(Call("write", {{"file_path", "dir"}, {"content", "x"}}).text,
            "write dir: is a directory");
  EXPECT_EQ(Call("write", {{"file_path", "x"}, {"content", 1}}).text,
            "invalid write input: content must be a string");
}

TEST_F(EditToolTest, ReplacesUniqueOrAll) {
  WriteFile(In("f.txt"), "alpha\nbeta\ngamma");
  ToolResult r =
      Call("edit", {{"file_path", "f.txt"}, {"old_string", "beta"}, {"new_string", "BETA"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "edited f.txt (1 replacement(s))");
  EXPECT_EQ(ReadFile(In("f.txt")), "alpha\nBETA\ngamma");

  WriteFile(In("g.txt"), "x\nx\n");
  r = Call("edit", {{"file_path", "g.txt"}, {"old_string", "x"}, {"new_string", "y"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "edit: old_string appears 2 times in g.txt (must be unique)");
  EXPECT_EQ(ReadFile(In("g.txt")), "x\nx\n");
  r = Call(
      "edit",
      {{"file_path", "g.txt"}, {"old_string", "x"}, {"new_string", "yy"}, {"replace_all", true}});
  EXPECT_EQ(r.text, "edited g.txt (2 replacement(s))");
  EXPECT_EQ(ReadFile(In("g.txt")), "yy\nyy\n");
  // Occurrences do not overlap, like strings.Count.
  WriteFile(In("h.txt"), "aaaa");
  r = Call(
      "edit",
      {{"file_path", "h.txt"}, {"old_string", "aa"}, {"new_string", "b"}, {"replace_all", true}});
  EXPECT_EQ(r.text, "edited h.txt (2 replacement(s))");
  EXPECT_EQ(ReadFile(In("h.txt")), "bb");
}

TEST_F(EditToolTest, Errors) {
  WriteFile(In("f.txt"), "abc");
  EXPECT_EQ(Call("edit", {{"file_path", "f.txt"}, {"old_string", "zzz"}, {"new_string", "y"}}).text,
            "edit: old_string not found in f.txt");
  EXPECT_EQ(Call("edit", {{"file_path", "f.txt"}, {"old_string", ""}, {"new_string", "y"}}).text,
            "edit: old_string is required");
  EXPECT_EQ(Call("edit", {{"old_string", "a"}}).text, "edit: file_path is required");
  EXPECT_EQ(Call("edit", {{"file_path", "nope"}, {"old_string", "a"}}).text,
            "edit nope: no such file or directory");
  WriteFile(In("big.txt"), std::string(kMaxFileBytes + 1, 'a'));
  EXPECT_EQ(Call("edit", {{"file_path", "big.txt"}, {"old_string", "a"}}).text,
            "edit: big.txt is 262145 bytes, exceeds 262144-byte limit. Use bash (sed/awk) to "
            "modify a large file.");
}

// --- escapes -------------------------------------------------------------------------------

void ExpectEscape(const ToolResult& r, const std::string& op, const std::string& path) {
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, op + ": path \"" + path + "\" escapes workdir");
}

TEST_F(ConfinementTest, DotDot) {
  ExpectEscape(Call("read", {{"file_path", "../outside/secret"}}), "read", "../outside/secret");
  ExpectEscape(Call("write", {{"file_path", "../evil.txt"}, {"content", "x"}}), "write",
               "../evil.txt");
  EXPECT_FALSE(fs::exists(base_.path() + "/evil.txt"));
  ExpectEscape(Call("edit", {{"file_path", "a/../../outside/secret"}, {"old_string", "top"}}),
               "edit", "a/../../outside/secret");
  // `..` that stays inside is fine.
  WriteFile(In("a.txt"), "A");
  EXPECT_EQ(Call("read", {{"file_path", "sub/../a.txt"}}).text, "A");
}

TEST_F(ConfinementTest, AbsolutePaths) {
  ExpectEscape(Call("read", {{"file_path", outside_ + "/secret"}}), "read", outside_ + "/secret");
  ExpectEscape(Call("read", {{"file_path", "/etc/passwd"}}), "read", "/etc/passwd");
  ExpectEscape(Call("read", {{"file_path", root_ + "/../outside/secret"}}), "read",
               root_ + "/../outside/secret");
  ExpectEscape(Call("read", {{"file_path", "/proc/self/root" + root_ + "/a.txt"}}), "read",
               "/proc/self/root" + root_ + "/a.txt");
  ExpectEscape(Call("write", {{"file_path", outside_ + "/new"}, {"content", "x"}}), "write",
               outside_ + "/new");
  EXPECT_FALSE(fs::exists(outside_ + "/new"));
  // A root-prefixed sibling is not inside the root.
  ExpectEscape(Call("read", {{"file_path", root_ + "2/x"}}), "read", root_ + "2/x");
}

TEST_F(ConfinementTest, SymlinkedFile) {
  ASSERT_EQ(symlink((outside_ + "/secret").c_str(), In("abs-link").c_str()), 0);
  ASSERT_EQ(symlink("../outside/secret", In("rel-link").c_str()), 0);
  for (const char* link : {"abs-link", "rel-link"}) {
    ExpectEscape(Call("read", {{"file_path", link}}), "read", link);
    ExpectEscape(Call("write", {{"file_path", link}, {"content", "pwned"}}), "write", link);
    ExpectEscape(Call("edit", {{"file_path", link}, {"old_string", "top"}, {"new_string", "x"}}),
                 "edit", link);
  }
  EXPECT_EQ(ReadFile(outside_ + "/secret"), "top secret\n");
  // A dangling link pointing outside does not create the file there.
  ASSERT_EQ(symlink((outside_ + "/created").c_str(), In("dangling").c_str()), 0);
  ExpectEscape(Call("write", {{"file_path", "dangling"}, {"content", "x"}}), "write", "dangling");
  EXPECT_FALSE(fs::exists(outside_ + "/created"));
}

TEST_F(ConfinementTest, SymlinkedDirectoryInTheMiddle) {
  ASSERT_EQ(symlink(outside_.c_str(), In("d").c_str()), 0);
  fs::create_directories(In("x/y"));
  ASSERT_EQ(symlink("../../..", In("x/y/up").c_str()), 0);
  ExpectEscape(Call("read", {{"file_path", "d/secret"}}), "read", "d/secret");
  ExpectEscape(Call("write", {{"file_path", "d/new/file"}, {"content", "x"}}), "write",
               "d/new/file");
  EXPECT_FALSE(fs::exists(outside_ + "/new"));
  ExpectEscape(Call("read", {{"file_path", "x/y/up/outside/secret"}}), "read",
               "x/y/up/outside/secret");
  ExpectEscape(Call("glob", {{"pattern", "*"}, {"path", "d"}}), "glob", "d");
  ExpectEscape(Call("grep", {{"pattern", "secret"}, {"path", "d"}}), "grep", "d");
}

TEST_F(ConfinementTest, ProcSelfRootTricks) {
  ASSERT_EQ(symlink("/proc/self/root/etc/passwd", In("p1").c_str()), 0);
  ASSERT_EQ(symlink(("/proc/self/root" + outside_ + "/secret").c_str(), In("p2").c_str()), 0);
  ASSERT_EQ(symlink("/proc/self/cwd", In("p3").c_str()), 0);
  ASSERT_EQ(symlink("/proc/self/fd", In("p4").c_str()), 0);
  ExpectEscape(Call("read", {{"file_path", "p1"}}), "read", "p1");
  ExpectEscape(Call("read", {{"file_path", "p2"}}), "read", "p2");
  ExpectEscape(Call("read", {{"file_path", "p3/x"}}), "read", "p3/x");
  ExpectEscape(Call("read", {{"file_path", "p4/0"}}), "read", "p4/0");
  ExpectEscape(Call("read", {{"file_path", "/proc/self/root/etc/passwd"}}), "read",
               "/proc/self/root/etc/passwd");
}

TEST_F(ConfinementTest, SymlinksInsideTheRootAreFine) {
  WriteFile(In("real/a.txt"), "A");
  ASSERT_EQ(symlink("real/a.txt", In("rel").c_str()), 0);
  ASSERT_EQ(symlink(In("real/a.txt").c_str(), In("abs").c_str()), 0);
  ASSERT_EQ(symlink("real", In("dirlink").c_str()), 0);
  ASSERT_EQ(symlink("../real", In("real/self").c_str()), 0);
  EXPECT_EQ(Call("read", {{"file_path", "rel"}}).text, "A");
  EXPECT_EQ(Call("read", {{"file_path", "abs"}}).text, "A");
  EXPECT_EQ(Call("read", {{"file_path", "dirlink/a.txt"}}).text, "A");
  EXPECT_EQ(Call("read", {{"file_path", "real/self/self/a.txt"}}).text, "A");
  // Writing through a link writes its target, and the link stays a link (Go resolves the leaf).
  EXPECT_FALSE(Call("write", {{"file_path", "rel"}, {"content", "B"}}).is_error);
  EXPECT_TRUE(fs::is_symlink(In("rel")));
  EXPECT_EQ(ReadFile(In("real/a.txt")), "B");
  EXPECT_FALSE(
      Call("edit", {{"file_path", "abs"}, {"old_string", "B"}, {"new_string", "C"}}).is_error);
  EXPECT_EQ(ReadFile(In("real/a.txt")), "C");
  EXPECT_FALSE(Call("write", {{"file_path", "dirlink/new.txt"}, {"content", "N"}}).is_error);
  EXPECT_EQ(ReadFile(In("real/new.txt")), "N");
}

TEST_F(ConfinementTest, SymlinkLoop) {
  ASSERT_EQ(symlink("b", In("a").c_str()), 0);
  ASSERT_EQ(symlink("a", In("b").c_str()), 0);
  ToolResult r = Call("read", {{"file_path", "a"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "read a: too many levels of symbolic links");
}

TEST_F(ConfinementTest, ASwapAfterResolveIsNotFollowed) {
  WriteFile(In("f"), "inside");
  auto root = ConfinedRoot::Open(root_);
  ASSERT_TRUE(root.has_value());
  auto resolved = root->Resolve("f");
  ASSERT_TRUE(resolved.has_value());
  // The agent swaps the checked file for a link to the secret before the open.
  fs::remove(In("f"));
  ASSERT_EQ(symlink((outside_ + "/secret").c_str(), In("f").c_str()), 0);
  auto fd = root->OpenBeneath(resolved->rel, O_RDONLY);
  EXPECT_FALSE(fd.has_value());
  // The same with a directory in the middle.
  fs::create_directories(In("dir"));
  WriteFile(In("dir/secret"), "inside");
  resolved = root->Resolve("dir/secret");
  ASSERT_TRUE(resolved.has_value());
  fs::remove_all(In("dir"));
  ASSERT_EQ(symlink(outside_.c_str(), In("dir").c_str()), 0);
  EXPECT_FALSE(root->OpenBeneath(resolved->rel, O_RDONLY).has_value());
}

TEST_F(ConfinementTest, PathLengthIsLimited) {
  std::string longp(kMaxPathBytes + 1, 'a');
  ToolResult r = Call("read", {{"file_path", longp}});
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("file name too long"), std::string::npos);
}

}  // namespace
}  // namespace srt::poller::toolbox::testing
