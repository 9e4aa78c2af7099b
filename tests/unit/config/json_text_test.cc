// SPDX-License-Identifier: Apache-2.0
// config/json_text: the one reader of configuration JSON text (libsrt's settings, srt-mcp's
// file): syntax errors at line:column, depth, duplicate keys, and where each value starts.
#include "config/json_text.h"

#include <gtest/gtest.h>

namespace srt::config {
namespace {

TEST(JsonTextTest, SyntaxErrorsSayLineAndColumn) {
  std::optional<JsonTextError> e = CheckJsonText("{\n  \"a\": tru\n}", {});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, JsonTextError::Kind::kSyntax);
  EXPECT_EQ(e->line, 2u);
  EXPECT_EQ(e->column, 11u);  // where the lexer gave up: the line's end
  EXPECT_NE(e->reason.find("invalid literal"), std::string::npos) << e->reason;
  EXPECT_EQ(e->reason.find("[json.exception"), std::string::npos) << e->reason;
}

TEST(JsonTextTest, CommentsOnlyWhenAsked) {
  const std::string text = "{\"a\": 1 // one\n, /* two */ \"b\": 2}";
  EXPECT_TRUE(CheckJsonText(text, {.comments = false}));
  EXPECT_FALSE(CheckJsonText(text, {.comments = true}));
}

TEST(JsonTextTest, DepthIsBounded) {
  EXPECT_FALSE(CheckJsonText("[[[1]]]", {.max_depth = 3}));
  std::optional<JsonTextError> e = CheckJsonText("[[[[1]]]]", {.max_depth = 3});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, JsonTextError::Kind::kTooDeep);
}

TEST(JsonTextTest, ADuplicateKeyNamesItsObjectAndSecondPlace) {
  std::optional<JsonTextError> e = CheckJsonText("{\"x/y\": {\"k\": 1,\n \"k\": 2}}", {});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, JsonTextError::Kind::kDuplicateKey);
  EXPECT_EQ(e->object_pointer, "/x~1y");
  EXPECT_EQ(e->key, "k");
  EXPECT_EQ(e->line, 2u);
  EXPECT_EQ(e->column, 2u);
}

TEST(JsonTextTest, PositionsOfKeysAndElements) {
  const std::string text = "{\"a\": [10, \"s\", {\"b\": null}],\n \"c~\": true}";
  JsonPositions at;
  ASSERT_FALSE(CheckJsonText(text, {}, &at));
  EXPECT_EQ(at.at("/a"), 1u);
  EXPECT_EQ(at.at("/a/0"), 7u);
  EXPECT_EQ(at.at("/a/1"), 11u);
  EXPECT_EQ(at.at("/a/2"), 16u);
  EXPECT_EQ(at.at("/a/2/b"), 17u);
  EXPECT_EQ(at.at("/c~0"), text.find("\"c~\""));
  EXPECT_EQ(LineAndColumn(text, at.at("/c~0")), (std::pair<size_t, size_t>{2, 2}));
}

TEST(JsonTextTest, PointerTokensEscapeAndShowControlBytes) {
  EXPECT_EQ(JsonPointerToken("a/b~c"), "a~1b~0c");
  EXPECT_EQ(JsonPointerToken(std::string("x\x1b", 2)), "x\\x1b");
}

}  // namespace
}  // namespace srt::config
