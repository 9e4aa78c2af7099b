// SPDX-License-Identifier: Apache-2.0
#include "policy/canonical.h"

#include <gtest/gtest.h>

#include "fake_fs_view.h"

namespace srt::policy {
namespace {

TEST(CanonicalTest, ResolvesSymlinksAndKeepsAMissingTail) {
  FakeFsView fs({{"/data/home/u/p", kDir},
                 {"/home", Symlink("/data/home")},
                 {"/data/home/u/l", Symlink("p/../p")}});
  Result<CanonicalPath> c = Canonicalize(fs, "/home/u/l/missing/../x");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->path, "/data/home/u/p/x");
  EXPECT_FALSE(c->exists);
  EXPECT_EQ(c->symlinks, (std::vector<std::string>{"/home", "/data/home/u/l"}));
  c = Canonicalize(fs, "/home/u/p");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->path, "/data/home/u/p");
  EXPECT_TRUE(c->exists);
}

TEST(CanonicalTest, LoopsAreErrors) {
  FakeFsView fs({{"/a", Symlink("/b")}, {"/b", Symlink("/a")}});
  Result<CanonicalPath> c = Canonicalize(fs, "/a/x");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message(), "'/a/x': too many levels of symbolic links");
}

}  // namespace
}  // namespace srt::policy
