// SPDX-License-Identifier: Apache-2.0
#include "base/path.h"

#include <gtest/gtest.h>

namespace srt::path {
namespace {

TEST(PathTest, NormalizeCollapsesSeparatorsDotsAndTrailingSlash) {
  EXPECT_EQ(Normalize("/"), "/");
  EXPECT_EQ(Normalize("//"), "/");
  EXPECT_EQ(Normalize("/a//b/./c/"), "/a/b/c");
  EXPECT_EQ(Normalize("/a/b/../c"), "/a/c");
  EXPECT_EQ(Normalize("/../../x"), "/x");
  EXPECT_EQ(Normalize("/a/.."), "/");
}

TEST(PathTest, MakeAbsoluteExpandsHomeAndRelative) {
  EXPECT_EQ(MakeAbsolute("~", "/home/u", "/w"), "/home/u");
  EXPECT_EQ(MakeAbsolute("~/x/", "/home/u", "/w"), "/home/u/x");
  EXPECT_EQ(MakeAbsolute("x/y", "/home/u", "/w"), "/w/x/y");
  EXPECT_EQ(MakeAbsolute(".", "/home/u", "/w"), "/w");
  EXPECT_EQ(MakeAbsolute("../z", "/home/u", "/w/v"), "/w/z");
  EXPECT_EQ(MakeAbsolute("/abs/./p", "/home/u", "/w"), "/abs/p");
  EXPECT_EQ(MakeAbsolute("~other/x", "/home/u", "/w"), "/w/~other/x");
}

TEST(PathTest, WithinParentBasenameDepth) {
  EXPECT_TRUE(IsWithin("/a/b", "/a"));
  EXPECT_TRUE(IsWithin("/a", "/a"));
  EXPECT_FALSE(IsWithin("/ab", "/a"));
  EXPECT_TRUE(IsWithin("/x", "/"));
  EXPECT_EQ(Parent("/a/b"), "/a");
  EXPECT_EQ(Parent("/a"), "/");
  EXPECT_EQ(Basename("/a/b"), "b");
  EXPECT_EQ(Depth("/"), 0u);
  EXPECT_EQ(Depth("/a/b"), 2u);
  EXPECT_EQ(Components("/a/b").size(), 2u);
}

TEST(PathTest, DepthCountsWhatComponentsFinds) {
  for (const char* p : {"", "/", "//", "/a", "a", "/a/", "//a//b//", "a/b/c", "/.a/b c/d"}) {
    EXPECT_EQ(Depth(p), Components(p).size()) << p;
  }
}

}  // namespace
}  // namespace srt::path
