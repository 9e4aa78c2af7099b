// SPDX-License-Identifier: Apache-2.0
// Tests for policy/glob (syntax, segment matching, expansion) and for the FakeFsView double.
#include "policy/glob.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_fs_view.h"

namespace srt::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using Paths = std::vector<std::string>;

// Expands and fails the test (returning an empty result) if the expansion errs.
GlobResult MustExpand(const FsView& fs, std::string_view pattern, const GlobLimits& limits = {}) {
  Result<GlobResult> r = ExpandGlob(fs, pattern, limits);
  EXPECT_TRUE(r.has_value()) << pattern << ": " << r.error().message();
  return r.has_value() ? std::move(r).value() : GlobResult{};
}

Paths Matches(const FsView& fs, std::string_view pattern, const GlobLimits& limits = {}) {
  return MustExpand(fs, pattern, limits).matches;
}

// The message of the error ExpandGlob must return.
std::string ExpandError(const FsView& fs, std::string_view pattern, const GlobLimits& limits = {}) {
  Result<GlobResult> r = ExpandGlob(fs, pattern, limits);
  EXPECT_FALSE(r.has_value()) << pattern << " unexpectedly expanded";
  if (r.has_value()) return "";
  EXPECT_EQ(r.error().code(), Errc::kInvalidArgument);
  return r.error().message();
}

// Lists in reverse name order: FsView promises no order, and the result must not depend on it.
class ReversedListFs final : public FsView {
 public:
  explicit ReversedListFs(const FsView& inner) : inner_(inner) {}
  FileType TypeOf(const std::string& p) const override { return inner_.TypeOf(p); }
  Result<std::string> ReadLink(const std::string& p) const override { return inner_.ReadLink(p); }
  Result<std::vector<DirEntry>> List(const std::string& dir) const override {
    Result<std::vector<DirEntry>> r = inner_.List(dir);
    if (r.has_value()) std::reverse(r->begin(), r->end());
    return r;
  }
  Result<FileId> IdOf(const std::string& p) const override { return inner_.IdOf(p); }
  Result<std::string> ReadSmallFile(const std::string& p, size_t n) const override {
    return inner_.ReadSmallFile(p, n);
  }
  bool IsPlaceholder(const std::string& p) const override { return inner_.IsPlaceholder(p); }

 private:
  const FsView& inner_;
};

// ---- HasGlobMeta -----------------------------------------------------------------------------

TEST(HasGlobMetaTest, Table) {
  struct Case {
    const char* s;
    bool meta;
  };
  const Case cases[] = {
      {"/a/b", false},   {"", false},           {"/a/*", true},     {"/a/?", true},
      {"/a/[x]", true},  {"/a/{x,y}", true},    {"/a/x}", true},    {"/a/]", false},
      {"/a/\\*", false}, {"/a/\\[x\\]", false}, {"/a/\\\\*", true}, {"\\", false},
      {"/a/**", true},   {"/a/b-c.d~", false},
  };
  for (const Case& c : cases) EXPECT_EQ(HasGlobMeta(c.s), c.meta) << c.s;
}

// ---- MatchSegment ----------------------------------------------------------------------------

TEST(MatchSegmentTest, Table) {
  struct Case {
    const char* pattern;
    const char* name;
    bool match;
  };
  const Case cases[] = {
      // `*` alone, and dotfiles: deny lists must catch them.
      {"*", "", true},
      {"*", "abc", true},
      {"*", ".env", true},
      {"*", ".", true},
      {".*", ".env", true},
      {".*", "env", false},
      {"*.pem", "key.pem", true},
      {"*.pem", ".pem", true},
      {"*.pem", ".hidden.pem", true},
      {"*.pem", "key.pem.bak", false},
      {"*.pem", "key.PEM", false},
      {"**", "anything", true},
      // Several stars need backtracking.
      {"a*b*c", "abc", true},
      {"a*b*c", "aXbYc", true},
      {"a*b*c", "abcbc", true},
      {"a*b*c", "aXbYcZ", false},
      {"*a*a*a*", "aaa", true},
      {"*a*a*a*", "aXa", false},
      // `?`: exactly one character, a leading dot included.
      {"?", "x", true},
      {"?", ".", true},
      {"?", "", false},
      {"?", "ab", false},
      {"?env", ".env", true},
      {"a?c", "abc", true},
      {"a?c", "ac", false},
      // Classes, ranges, negation, `]` first.
      {"[abc]", "b", true},
      {"[abc]", "d", false},
      {"[a-z]x", "qx", true},
      {"[a-z]x", "Qx", false},
      {"[a-cx-z]", "y", true},
      {"[a-cx-z]", "m", false},
      {"[!a]", "b", true},
      {"[!a]", "a", false},
      {"[^a]", "a", false},
      {"[^a]", "^", true},
      {"[!.]*", ".env", false},
      {"[!.]*", "env", true},
      {"[.]env", ".env", true},
      {"[]]", "]", true},
      {"[]a]", "a", true},
      {"[!]]", "]", false},
      {"[!]]", "x", true},
      {"[]-a]", "_", true},  // ']'..'a' spans '^' and '_'
      {"[a-]", "-", true},
      {"[-a]", "-", true},
      {"[-a]", "b", false},
      {"[{}]", "{", true},
      {"[*?]", "*", true},
      {"[*?]", "x", false},
      // Escapes.
      {"\\*", "*", true},
      {"\\*", "a", false},
      {"a\\?b", "a?b", true},
      {"a\\?b", "axb", false},
      {"\\[x]", "[x]", true},
      {"\\\\", "\\", true},
      {"[\\]]", "]", true},
      {"[a\\-z]", "-", true},
      {"[a\\-z]", "m", false},
      {"\\{a,b\\}", "{a,b}", true},
      {"\\a", "a", true},
      // UTF-8 characters count as one.
      {"caf?", "caf\xc3\xa9", true},
      {"?", "\xc3\xa9", true},
      {"??", "\xc3\xa9", false},
      {"[\xc3\xa0-\xc3\xbf]", "\xc3\xa9", true},
      {"[!\xc3\xa9]", "\xc3\xa9", false},
      {"\\\xc3\xa9", "\xc3\xa9", true},
      // Invalid UTF-8: each byte is one character.
      {"?", "\xff", true},
      {"??", "\xc3", false},
      {"\xff*", "\xff-abc", true},
      {"?", "\xc3(", false},
      // Malformed segments are matched leniently (ValidateGlob rejects them first).
      {"[abc", "[abc", true},
      {"a\\", "a\\", true},
      {"[z-a]", "m", false},
      {"{a,b}", "{a,b}", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MatchSegment(c.pattern, c.name), c.match)
        << "pattern '" << c.pattern << "' name '" << c.name << "'";
  }
}

TEST(MatchSegmentTest, LongNamesStayPolynomial) {
  std::string name(4000, 'a');
  EXPECT_FALSE(MatchSegment("*a*a*a*a*a*a*a*a*b", name));
  EXPECT_TRUE(MatchSegment("*a*a*a*a*a*a*a*a*", name));
}

// ---- ValidateGlob ----------------------------------------------------------------------------

TEST(ValidateGlobTest, AcceptsValidPatterns) {
  const char* const valid[] = {
      "/",
      "/a",
      "/**",
      "/a/**",
      "/a/**/b",
      "/**/.env",
      "/a/*.pem",
      "/home/*/secrets/*.pem",
      "/a/**/**/b",
      "/a/\\*",
      "/a/[{]",
      "/a/\\{x\\}",
      "/a/[]]",
      "/a/[!]]",
      "/a/[a-z0-9_]*",
      "/a/\\**",
      "/a/b\\\\",
      "/a/.env",
      "/a/...",
      "/a/.?",
      "/caf\xc3\xa9/*",
  };
  for (const char* p : valid) {
    Result<void> r = ValidateGlob(p);
    EXPECT_TRUE(r.has_value()) << p << ": " << r.error().message();
  }
}

TEST(ValidateGlobTest, RejectsWithExactMessages) {
  struct Case {
    std::string pattern;
    std::string message;
  };
  const Case cases[] = {
      {"", "'': a glob pattern must not be empty"},
      {"a/*", "'a/*': a glob pattern must be an absolute path"},
      {"~/.aws/**", "'~/.aws/**': a glob pattern must be an absolute path"},
      {"**/.env", "'**/.env': a glob pattern must be an absolute path"},
      {std::string("/a/\0b*", 6), "'/a/\\x00b*': a glob pattern must not contain a NUL byte"},
      {"/a//b*", "'/a//b*': empty path segment (a '//' or a trailing '/')"},
      {"/data/*/", "'/data/*/': empty path segment (a '//' or a trailing '/')"},
      {"/a/../*", "'/a/../*': '.' and '..' segments are not allowed; normalise the path first"},
      {"/a/./*", "'/a/./*': '.' and '..' segments are not allowed; normalise the path first"},
      {"/a/*/\\..",
       "'/a/*/\\\\..': '.' and '..' segments are not allowed; normalise the path first"},
      {"/a/b**", "'/a/b**': '**' must be a whole path segment"},
      {"/a/**x", "'/a/**x': '**' must be a whole path segment"},
      {"/a/a**b/c", "'/a/a**b/c': '**' must be a whole path segment"},
      {"/a/***", "'/a/***': '**' must be a whole path segment"},
      {"/a/{b,c}",
       "'/a/{b,c}': brace expansion ('{a,b}') is not supported; list each path separately"},
      {"/a/{b,c}/*.pem",
       "'/a/{b,c}/*.pem': brace expansion ('{a,b}') is not supported; list each path separately"},
      {"/a/b}", "'/a/b}': brace expansion ('{a,b}') is not supported; list each path separately"},
      {"/a/[bc", "'/a/[bc': unterminated '[' character class (write '\\[' for a literal '[')"},
      {"/a/[]", "'/a/[]': unterminated '[' character class (write '\\[' for a literal '[')"},
      {"/a/[!]", "'/a/[!]': unterminated '[' character class (write '\\[' for a literal '[')"},
      {"/a/[b/c]", "'/a/[b/c]': unterminated '[' character class (write '\\[' for a literal '[')"},
      {"/a/[b\\]",
       "'/a/[b\\\\]': unterminated '[' character class (write '\\[' for a literal '[')"},
      {"/a/b\\", "'/a/b\\\\': '\\' at the end of a path segment escapes nothing"},
      {"/a\\/b*", "'/a\\\\/b*': '\\' at the end of a path segment escapes nothing"},
      {"/a/[[:alpha:]]",
       "'/a/[[:alpha:]]': POSIX character classes ('[:alpha:]') are not supported; list the "
       "characters"},
      {"/a/[z-a]*", "'/a/[z-a]*': reversed range 'z-a' in a character class"},
  };
  for (const Case& c : cases) {
    Result<void> r = ValidateGlob(c.pattern);
    ASSERT_FALSE(r.has_value()) << c.pattern;
    EXPECT_EQ(r.error().code(), Errc::kInvalidArgument) << c.pattern;
    EXPECT_EQ(r.error().message(), c.message);
  }
}

TEST(ValidateGlobTest, ExpandGlobReturnsTheSameError) {
  FakeFsView fs;
  EXPECT_EQ(ExpandError(fs, "/a/{b,c}"),
            "'/a/{b,c}': brace expansion ('{a,b}') is not supported; list each path separately");
  EXPECT_THAT(fs.ListCalls(), IsEmpty());
}

// ---- ExpandGlob: literal parts ---------------------------------------------------------------

TEST(ExpandGlobTest, MissingLiteralPrefixYieldsNothingWithoutListing) {
  FakeFsView fs({{"/a", kDir}});
  GlobResult r = MustExpand(fs, "/nope/x/*.pem");
  EXPECT_THAT(r.matches, IsEmpty());
  EXPECT_THAT(r.unlistable, IsEmpty());
  EXPECT_THAT(fs.ListCalls(), IsEmpty());
  EXPECT_THAT(Matches(fs, "/a/file/*"), IsEmpty());  // a prefix below a missing name
}

TEST(ExpandGlobTest, LiteralPrefixIsLookedUpNotListed) {
  // /home itself cannot be listed, but names below it resolve (mode -wx).
  FakeFsView fs({{"/home", kUnreadableDir},
                 {"/home/u/.aws/credentials", kFile},
                 {"/home/u/.aws/config", kFile}});
  GlobResult r = MustExpand(fs, "/home/u/.aws/*");
  EXPECT_THAT(r.matches, ElementsAre("/home/u/.aws/config", "/home/u/.aws/credentials"));
  EXPECT_THAT(r.unlistable, IsEmpty());
  EXPECT_THAT(fs.ListCalls(), ElementsAre("/home/u/.aws"));
}

TEST(ExpandGlobTest, PatternWithoutWildcardsIsAnExistenceCheck) {
  FakeFsView fs({{"/a/b", kFile}, {"/a/*", kFile}, {"/a/dangling", Symlink("/nowhere")}});
  EXPECT_THAT(Matches(fs, "/a/b"), ElementsAre("/a/b"));
  EXPECT_THAT(Matches(fs, "/a/c"), IsEmpty());
  EXPECT_THAT(Matches(fs, "/a/\\*"), ElementsAre("/a/*"));  // escaped: the file named '*'
  EXPECT_THAT(Matches(fs, "/a/dangling"), ElementsAre("/a/dangling"));
  EXPECT_THAT(Matches(fs, "/"), ElementsAre("/"));
  EXPECT_THAT(fs.ListCalls(), IsEmpty());
}

// ---- ExpandGlob: wildcards -------------------------------------------------------------------

TEST(ExpandGlobTest, StarAtOneLevelMatchesDotfilesAndAnyType) {
  FakeFsView fs({{"/d/a.pem", kFile},
                 {"/d/b.pem", kFile},
                 {"/d/.hidden.pem", kFile},
                 {"/d/c.txt", kFile},
                 {"/d/sub.pem", kDir},
                 {"/d/sock.pem", kSpecial},
                 {"/d/link.pem", Symlink("c.txt")},
                 {"/d/sub.pem/deep.pem", kFile}});
  EXPECT_THAT(Matches(fs, "/d/*.pem"), ElementsAre("/d/.hidden.pem", "/d/a.pem", "/d/b.pem",
                                                   "/d/link.pem", "/d/sock.pem", "/d/sub.pem"));
  EXPECT_THAT(Matches(fs, "/d/?.pem"), ElementsAre("/d/a.pem", "/d/b.pem"));
  EXPECT_THAT(Matches(fs, "/d/[!.]*.txt"), ElementsAre("/d/c.txt"));
}

TEST(ExpandGlobTest, NestedWildcardsAndLiteralsBetweenThem) {
  FakeFsView fs({{"/home/alice/secrets/k.pem", kFile},
                 {"/home/bob/secrets/x.pem", kFile},
                 {"/home/bob/secrets/y.txt", kFile},
                 {"/home/bob/other/z.pem", kFile},
                 {"/home/carol", kDir},
                 {"/home/dave", kFile},
                 {"/home/eve/secrets", kFile}});
  EXPECT_THAT(Matches(fs, "/home/*/secrets/*.pem"),
              ElementsAre("/home/alice/secrets/k.pem", "/home/bob/secrets/x.pem"));
  EXPECT_THAT(Matches(fs, "/h?me/[ab]*/s*/[kx].pem"),
              ElementsAre("/home/alice/secrets/k.pem", "/home/bob/secrets/x.pem"));
  EXPECT_THAT(
      Matches(fs, "/home/*/*/*.pem"),
      ElementsAre("/home/alice/secrets/k.pem", "/home/bob/other/z.pem", "/home/bob/secrets/x.pem"));
  // The literal `secrets` below a wildcard is looked up, not listed.
  fs.ClearListCalls();
  (void)Matches(fs, "/home/*/secrets/k.pem");
  EXPECT_THAT(fs.ListCalls(), ElementsAre("/home"));
}

TEST(ExpandGlobTest, WildcardsDoNotDescendIntoFilesOrSpecials) {
  FakeFsView fs({{"/a/f", kFile}, {"/a/sock", kSpecial}, {"/a/d/x", kFile}});
  GlobResult r = MustExpand(fs, "/a/*/x");
  EXPECT_THAT(r.matches, ElementsAre("/a/d/x"));
  EXPECT_THAT(r.unlistable, IsEmpty());
}

// ---- ExpandGlob: `**` ------------------------------------------------------------------------

TEST(ExpandGlobTest, GlobstarAtStart) {
  FakeFsView fs({{"/.env", kFile}, {"/a/.env", kFile}, {"/a/b/c/.env", kFile}, {"/a/b/x", kFile}});
  EXPECT_THAT(Matches(fs, "/**/.env"), ElementsAre("/.env", "/a/.env", "/a/b/c/.env"));
}

TEST(ExpandGlobTest, GlobstarInTheMiddleMatchesZeroOrMoreDirectories) {
  FakeFsView fs({{"/a/c", kFile},
                 {"/a/x/c/c", kFile},
                 {"/a/x/y/c", kFile},
                 {"/a/x/y/d", kFile},
                 {"/b/c", kFile}});
  EXPECT_THAT(Matches(fs, "/a/**/c"), ElementsAre("/a/c", "/a/x/c", "/a/x/c/c", "/a/x/y/c"));
  EXPECT_THAT(Matches(fs, "/a/**/y/*"), ElementsAre("/a/x/y/c", "/a/x/y/d"));
  EXPECT_THAT(Matches(fs, "/*/**/c"),
              ElementsAre("/a/c", "/a/x/c", "/a/x/c/c", "/a/x/y/c", "/b/c"));
}

TEST(ExpandGlobTest, GlobstarThenWildcardListsEachDirectoryOnce) {
  FakeFsView fs({{"/p/k.pem", kFile},
                 {"/p/a/k.pem", kFile},
                 {"/p/a/b/.k.pem", kFile},
                 {"/p/a/b/k.txt", kFile}});
  EXPECT_THAT(Matches(fs, "/p/**/*.pem"), ElementsAre("/p/a/b/.k.pem", "/p/a/k.pem", "/p/k.pem"));
  EXPECT_THAT(fs.ListCalls(), ElementsAre("/p", "/p/a", "/p/a/b"));
}

TEST(ExpandGlobTest, TrailingGlobstarMatchesTheBaseItself) {
  FakeFsView fs({{"/a/b/f1", kFile},
                 {"/a/b/sub/f2", kFile},
                 {"/a/file", kFile},
                 {"/a/link", Symlink("b")},
                 {"/a/empty", kDir}});
  EXPECT_THAT(Matches(fs, "/a/b/**"), ElementsAre("/a/b"));
  EXPECT_THAT(Matches(fs, "/a/file/**"), ElementsAre("/a/file"));
  EXPECT_THAT(Matches(fs, "/a/link/**"), ElementsAre("/a/link"));
  EXPECT_THAT(Matches(fs, "/a/empty/**/**"), ElementsAre("/a/empty"));
  EXPECT_THAT(Matches(fs, "/a/missing/**"), IsEmpty());
  EXPECT_THAT(Matches(fs, "/a/*/**"), ElementsAre("/a/b", "/a/empty", "/a/file", "/a/link"));
  // /a/link is /a/b, already visited: one spelling.
  EXPECT_THAT(Matches(fs, "/a/**/sub/**"), ElementsAre("/a/b/sub"));
  EXPECT_THAT(Matches(fs, "/**"), ElementsAre("/"));
}

TEST(ExpandGlobTest, TwoGlobstarRoutesToOnePathGiveOneEntry) {
  // /a/b/b/c is reached by `**`="" + b + `**`="b" and by `**`="b" + b + `**`="".
  FakeFsView fs({{"/a/b/b/c", kFile}, {"/a/b/c", kFile}});
  EXPECT_THAT(Matches(fs, "/a/**/b/**/c"), ElementsAre("/a/b/b/c", "/a/b/c"));
  EXPECT_THAT(Matches(fs, "/a/**/**/c"), ElementsAre("/a/b/b/c", "/a/b/c"));
}

TEST(ExpandGlobTest, OutputIsSortedAndIndependentOfListingOrder) {
  FakeFsView fs({{"/z/q", kFile}, {"/z/b/q", kFile}, {"/z/a/q", kFile}, {"/z/c", Symlink("a")}});
  ReversedListFs reversed(fs);
  const Paths expected{"/z/a/q", "/z/b/q", "/z/q"};
  EXPECT_EQ(Matches(fs, "/z/**/q"), expected);
  EXPECT_EQ(Matches(reversed, "/z/**/q"), expected);
  EXPECT_EQ(Matches(reversed, "/z/*/q"), (Paths{"/z/a/q", "/z/b/q", "/z/c/q"}));
}

// ---- ExpandGlob: symlinks --------------------------------------------------------------------

TEST(ExpandGlobTest, SymlinkedDirectoriesAreDescendedAndSpelledThroughTheLink) {
  FakeFsView fs({{"/t/x.pem", kFile},
                 {"/a/abs", Symlink("/t")},
                 {"/a/rel", Symlink("../t")},
                 {"/a/chain", Symlink("abs")}});
  EXPECT_THAT(Matches(fs, "/a/*/x.pem"),
              ElementsAre("/a/abs/x.pem", "/a/chain/x.pem", "/a/rel/x.pem"));
  EXPECT_THAT(Matches(fs, "/a/abs/*"), ElementsAre("/a/abs/x.pem"));
  // In one `**` walk the target directory is visited once, by its first (sorted) spelling.
  EXPECT_THAT(Matches(fs, "/a/**/x.pem"), ElementsAre("/a/abs/x.pem"));
}

TEST(ExpandGlobTest, GlobstarPrefersTheShortestSpelling) {
  FakeFsView fs({{"/a/b/c/d/k", kFile}, {"/a/z", Symlink("b/c/d")}});
  EXPECT_THAT(Matches(fs, "/a/**/k"), ElementsAre("/a/z/k"));
}

TEST(ExpandGlobTest, RelativeTargetsResolveAgainstTheRealDirectory) {
  // /a/s -> /deep/x/y, and y/up -> ../z means /deep/x/z (not /a/z, the lexical reading).
  FakeFsView fs({{"/a/s", Symlink("/deep/x/y")},
                 {"/deep/x/y/up", Symlink("../z")},
                 {"/deep/x/z/k.pem", kFile},
                 {"/a/z/k.pem", kFile}});
  EXPECT_THAT(Matches(fs, "/a/s/up/*.pem"), ElementsAre("/a/s/up/k.pem"));
  EXPECT_THAT(Matches(fs, "/a/s/*/*.pem"), ElementsAre("/a/s/up/k.pem"));
  EXPECT_THAT(fs.ListCalls(), ElementsAre("/deep/x/z", "/deep/x/y", "/deep/x/z"));
}

TEST(ExpandGlobTest, SymlinkLoopsAreCut) {
  FakeFsView fs({{"/x/a/f", kFile},
                 {"/x/a/tob", Symlink("/x/b")},
                 {"/x/b/f", kFile},
                 {"/x/b/toa", Symlink("../a")},
                 {"/x/a/up", Symlink("/x")},
                 {"/x/a/self", Symlink(".")}});
  GlobLimits limits;
  limits.max_depth = 2;  // the loops must not count as depth
  GlobResult r = MustExpand(fs, "/x/**/f", limits);
  EXPECT_THAT(r.matches, ElementsAre("/x/a/f", "/x/b/f"));
  EXPECT_THAT(r.unlistable, IsEmpty());
  // Without `**` a loop is bounded by the pattern.
  EXPECT_THAT(Matches(fs, "/x/a/*/*/f"),
              ElementsAre("/x/a/self/self/f", "/x/a/self/tob/f", "/x/a/tob/toa/f", "/x/a/up/a/f",
                          "/x/a/up/b/f"));
}

TEST(ExpandGlobTest, SymlinkToAFileIsMatchedAsAFile) {
  FakeFsView fs({{"/secret/real.pem", kFile},
                 {"/a/k.pem", Symlink("/secret/real.pem")},
                 {"/a/dangling.pem", Symlink("/nowhere.pem")},
                 {"/a/d/x", kFile}});
  GlobResult r = MustExpand(fs, "/a/*.pem");
  EXPECT_THAT(r.matches, ElementsAre("/a/dangling.pem", "/a/k.pem"));
  // ... and is not descended into.
  r = MustExpand(fs, "/a/*/x");
  EXPECT_THAT(r.matches, ElementsAre("/a/d/x"));
  EXPECT_THAT(r.unlistable, IsEmpty());
  EXPECT_THAT(Matches(fs, "/a/**/x"), ElementsAre("/a/d/x"));
}

TEST(ExpandGlobTest, SymlinkChainsLongerThanFortyLinksAreUnlistable) {
  // /c/l0 -> /c/l1 -> ... -> /c/l40 -> /d: l0 needs 41 links, l1 needs 40.
  FakeFsView fs({{"/d/x", kFile}, {"/c/self", Symlink("self")}});
  for (int i = 0; i < 40; ++i) {
    fs.Add("/c/l" + std::to_string(i), Symlink("l" + std::to_string(i + 1)));
  }
  fs.Add("/c/l40", Symlink("/d"));
  GlobResult r = MustExpand(fs, "/c/l0/*");
  EXPECT_THAT(r.matches, IsEmpty());
  EXPECT_THAT(r.unlistable, ElementsAre("/c/l0"));
  EXPECT_THAT(Matches(fs, "/c/l1/*"), ElementsAre("/c/l1/x"));
  r = MustExpand(fs, "/c/*/x");
  EXPECT_EQ(r.matches.size(), 40u);  // l1..l40
  EXPECT_THAT(r.unlistable, ElementsAre("/c/l0", "/c/self"));
}

// ---- ExpandGlob: unlistable ------------------------------------------------------------------

TEST(ExpandGlobTest, UnlistableDirectoriesAreRecordedOnceAndSkipped) {
  FakeFsView fs({{"/a/locked", kUnreadableDir},
                 {"/a/locked/x.pem", kFile},
                 {"/a/open/y.pem", kFile},
                 {"/a/open/deeper", kUnreadableDir}});
  GlobResult r = MustExpand(fs, "/a/*/*.pem");
  EXPECT_THAT(r.matches, ElementsAre("/a/open/y.pem"));
  EXPECT_THAT(r.unlistable, ElementsAre("/a/locked"));
  r = MustExpand(fs, "/a/**/*.pem");
  EXPECT_THAT(r.matches, ElementsAre("/a/open/y.pem"));
  EXPECT_THAT(r.unlistable, ElementsAre("/a/locked", "/a/open/deeper"));
  // A known name inside an unreadable directory is still found: it is looked up, not listed.
  r = MustExpand(fs, "/a/*/x.pem");
  EXPECT_THAT(r.matches, ElementsAre("/a/locked/x.pem"));
  EXPECT_THAT(r.unlistable, IsEmpty());
}

TEST(ExpandGlobTest, UninspectableLiteralComponentsAreUnlistable) {
  FakeFsView fs({{"/s", kUnsearchableDir}, {"/s/x/k.pem", kFile}});
  GlobResult r = MustExpand(fs, "/s/x/*.pem");  // TypeOf("/s/x") is kOther (EACCES)
  EXPECT_THAT(r.matches, IsEmpty());
  EXPECT_THAT(r.unlistable, ElementsAre("/s/x"));
  r = MustExpand(fs, "/s/*");
  EXPECT_THAT(r.unlistable, ElementsAre("/s"));
  // As the last segment, "could not inspect" is matched: conservative for deny lists.
  EXPECT_THAT(Matches(fs, "/s/x"), ElementsAre("/s/x"));
}

// ---- ExpandGlob: limits ----------------------------------------------------------------------

FakeFsView TenFiles() {
  FakeFsView fs;
  for (int i = 0; i < 10; ++i) fs.Add("/d/f" + std::to_string(i), kFile);
  return fs;
}

TEST(ExpandGlobTest, MaxVisitedIsAnError) {
  FakeFsView fs = TenFiles();
  GlobLimits limits;
  limits.max_visited = 10;
  EXPECT_EQ(Matches(fs, "/d/*", limits).size(), 10u);
  limits.max_visited = 9;
  EXPECT_EQ(ExpandError(fs, "/d/*", limits),
            "'/d/*' visits more than 9 directory entries; narrow the pattern");
}

TEST(ExpandGlobTest, MaxVisitedCountsEachEntryOnceInAGlobstarWalk) {
  // /r: a, k.pem; /r/a: b, k.pem; /r/a/b: k.pem -> 5 entries.
  FakeFsView fs({{"/r/k.pem", kFile}, {"/r/a/k.pem", kFile}, {"/r/a/b/k.pem", kFile}});
  GlobLimits limits;
  limits.max_visited = 5;
  EXPECT_EQ(Matches(fs, "/r/**/*.pem", limits).size(), 3u);
  limits.max_visited = 4;
  EXPECT_EQ(ExpandError(fs, "/r/**/*.pem", limits),
            "'/r/**/*.pem' visits more than 4 directory entries; narrow the pattern");
}

TEST(ExpandGlobTest, MaxVisitedBoundsSymlinkFanOut) {
  // Eight links back to /f: `/f/*/*/*/*/*` would spell 8^5 paths through one directory.
  FakeFsView fs;
  for (int i = 0; i < 8; ++i) fs.Add("/f/l" + std::to_string(i), Symlink("/f"));
  EXPECT_EQ(ExpandError(fs, "/f/*/*/*/*/*/*.x"),
            "'/f/*/*/*/*/*/*.x' visits more than 200000 directory entries; narrow the pattern");
}

TEST(ExpandGlobTest, MaxMatchesIsAnError) {
  FakeFsView fs = TenFiles();
  GlobLimits limits;
  limits.max_matches = 10;
  EXPECT_EQ(Matches(fs, "/d/*", limits).size(), 10u);
  limits.max_matches = 4;
  EXPECT_EQ(ExpandError(fs, "/d/*", limits),
            "'/d/*' matches more than 4 paths; narrow the pattern or deny a parent directory");
  EXPECT_EQ(ExpandError(fs, "/d/**/f*", limits),
            "'/d/**/f*' matches more than 4 paths; narrow the pattern or deny a parent directory");
}

TEST(ExpandGlobTest, MaxDepthIsAnError) {
  FakeFsView fs({{"/t/1/2/3/4/x", kFile}});
  GlobLimits limits;
  limits.max_depth = 4;  // /t/1/2/3/4 is 4 levels below /t
  EXPECT_THAT(Matches(fs, "/t/**/x", limits), ElementsAre("/t/1/2/3/4/x"));
  limits.max_depth = 3;
  EXPECT_EQ(ExpandError(fs, "/t/**/x", limits),
            "'/t/**/x': the directory tree under '/t' is deeper than 3 levels");
  // Depth counts from the `**` base, not from "/".
  EXPECT_EQ(ExpandError(fs, "/*/1/**/x", GlobLimits{1, 200000, 4096}),
            "'/*/1/**/x': the directory tree under '/t/1' is deeper than 1 levels");
  // A trailing `/**` does not walk at all.
  EXPECT_THAT(Matches(fs, "/t/**", GlobLimits{0, 1, 1}), ElementsAre("/t"));
}

TEST(ExpandGlobTest, DefaultDepthLimit) {
  FakeFsView fs;
  std::string deep = "/t";
  for (int i = 0; i < 33; ++i) deep += "/d";
  fs.Add(deep + "/x", kFile);
  EXPECT_EQ(ExpandError(fs, "/t/**/x"),
            "'/t/**/x': the directory tree under '/t' is deeper than 32 levels");
}

// ---- FakeFsView ------------------------------------------------------------------------------

TEST(FakeFsViewTest, CreatesParentsAndReportsTypes) {
  FakeFsView fs({{"/a/b/c.txt", File("hello")}, {"/a/l", Symlink("b")}, {"/a/s", kSpecial}});
  EXPECT_EQ(fs.TypeOf("/"), FileType::kDirectory);
  EXPECT_EQ(fs.TypeOf("/a"), FileType::kDirectory);
  EXPECT_EQ(fs.TypeOf("/a/b"), FileType::kDirectory);
  EXPECT_EQ(fs.TypeOf("/a/b/c.txt"), FileType::kRegular);
  EXPECT_EQ(fs.TypeOf("/a/l"), FileType::kSymlink);
  EXPECT_EQ(fs.TypeOf("/a/l/c.txt"), FileType::kRegular);  // through the link
  EXPECT_EQ(fs.TypeOf("/a/s"), FileType::kOther);
  EXPECT_EQ(fs.TypeOf("/a/nope"), FileType::kMissing);
  EXPECT_EQ(fs.TypeOf("/a/b/c.txt/x"), FileType::kMissing);  // ENOTDIR
  EXPECT_EQ(*fs.ReadLink("/a/l"), "b");
  EXPECT_EQ(fs.ReadLink("/a/b").error().sys_errno(), EINVAL);
  EXPECT_EQ(*fs.ReadSmallFile("/a/l/c.txt", 4), "hell");
  Result<std::vector<DirEntry>> list = fs.List("/a/l");  // follows the final link
  ASSERT_TRUE(list.has_value());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "c.txt");
  EXPECT_EQ((*list)[0].type, FileType::kRegular);
}

TEST(FakeFsViewTest, IdsAreStableAndDistinct) {
  FakeFsView fs({{"/a/b", kDir}, {"/a/l", Symlink("b")}});
  EXPECT_EQ(*fs.IdOf("/"), (FileId{1, 1}));
  EXPECT_EQ(*fs.IdOf("/a"), (FileId{1, 2}));
  EXPECT_EQ(*fs.IdOf("/a/b"), (FileId{1, 3}));
  EXPECT_EQ(*fs.IdOf("/a/l"), (FileId{1, 4}));  // the link itself (lstat)
  EXPECT_EQ(fs.IdOf("/a/x").error().sys_errno(), ENOENT);
}

TEST(FakeFsViewTest, PermissionsAndLoops) {
  FakeFsView fs({{"/r", kUnreadableDir},
                 {"/r/f", Unreadable(File("x"))},
                 {"/n", kUnsearchableDir},
                 {"/n/f", kFile},
                 {"/loop", Symlink("/loop")}});
  Result<std::vector<DirEntry>> list = fs.List("/r");
  ASSERT_FALSE(list.has_value());
  EXPECT_EQ(list.error().message(), "opendir '/r': Permission denied");
  EXPECT_EQ(list.error().code(), Errc::kPermissionDenied);
  EXPECT_EQ(fs.TypeOf("/r/f"), FileType::kRegular);
  EXPECT_EQ(fs.ReadSmallFile("/r/f", 10).error().sys_errno(), EACCES);
  EXPECT_EQ(fs.TypeOf("/n"), FileType::kDirectory);
  EXPECT_EQ(fs.TypeOf("/n/f"), FileType::kOther);
  EXPECT_EQ(fs.List("/n").error().sys_errno(), EACCES);
  EXPECT_EQ(fs.TypeOf("/loop"), FileType::kSymlink);
  EXPECT_EQ(fs.TypeOf("/loop/x"), FileType::kOther);  // ELOOP
  EXPECT_EQ(fs.List("/loop").error().sys_errno(), ELOOP);
}

TEST(FakeFsViewTest, MisuseThrows) {
  EXPECT_THROW(FakeFsView({{"relative", kFile}}), std::invalid_argument);
  EXPECT_THROW(FakeFsView({{"/a/../b", kFile}}), std::invalid_argument);
  EXPECT_THROW(FakeFsView({{"/f", kFile}, {"/f/x", kFile}}), std::invalid_argument);
  EXPECT_THROW(FakeFsView({{"/d/x", kFile}, {"/d", kFile}}), std::invalid_argument);
  EXPECT_NO_THROW(FakeFsView({{"/d/x", kFile}, {"/d", kUnreadableDir}}));
}

}  // namespace
}  // namespace srt::policy
