// SPDX-License-Identifier: Apache-2.0
#include "srt/result.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>

namespace srt {
namespace {

Result<int> Half(int x) {
  if (x % 2) return MakeError(Errc::kInvalidArgument, "odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  SRT_ASSIGN_OR_RETURN(int h, Half(x));
  SRT_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Result<void> Check(int x) {
  SRT_RETURN_IF_ERROR(Half(x));
  return Ok();
}

TEST(ResultTest, PropagatesValuesAndErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  ASSERT_FALSE(Quarter(6).has_value());
  EXPECT_EQ(Quarter(6).error().message(), "odd");
  EXPECT_TRUE(Check(2).has_value());
  EXPECT_EQ(Check(3).error().code(), Errc::kInvalidArgument);
}

TEST(ResultTest, MoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(ResultTest, SysErrorCapturesErrnoAndWrapPrependsContext) {
  Error e = SysError("open '/x'", ENOENT).Wrap("load settings");
  EXPECT_EQ(e.message(), "load settings: open '/x': No such file or directory");
  EXPECT_EQ(e.sys_errno(), ENOENT);
  EXPECT_EQ(e.code(), Errc::kNotFound);
}

}  // namespace
}  // namespace srt
