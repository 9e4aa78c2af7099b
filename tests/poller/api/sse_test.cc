// SPDX-License-Identifier: Apache-2.0
// sse_test.cc: the incremental SSE parser (api/sse.h), fed whole, byte by byte and split at
// every offset.
#include "api/sse.h"

#include <gtest/gtest.h>

namespace srt::poller {
namespace {

std::vector<SseEvent> FeedPieces(std::string_view in, std::vector<size_t> cuts,
                                 SseLimits limits = {}) {
  SseParser p(limits);
  std::vector<SseEvent> out;
  size_t at = 0;
  cuts.push_back(in.size());
  for (size_t cut : cuts) {
    auto r = p.Feed(in.substr(at, cut - at));
    EXPECT_TRUE(r) << r.error().message();
    if (!r) return out;
    for (auto& e : *r) out.push_back(std::move(e));
    at = cut;
  }
  return out;
}

bool Same(const std::vector<SseEvent>& a, const std::vector<SseEvent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type != b[i].type || a[i].data != b[i].data || a[i].id != b[i].id) return false;
  }
  return true;
}

// Checks one input whole, byte by byte, and split in two at every offset.
std::vector<SseEvent> FeedAllWays(std::string_view in) {
  auto whole = FeedPieces(in, {});
  std::vector<size_t> every;
  for (size_t i = 1; i < in.size(); ++i) every.push_back(i);
  EXPECT_TRUE(Same(whole, FeedPieces(in, every))) << "byte by byte";
  for (size_t i = 0; i <= in.size(); ++i) {
    EXPECT_TRUE(Same(whole, FeedPieces(in, {i}))) << "split at " << i;
  }
  return whole;
}

TEST(SseParserTest, EventsWithTypesDataAndIds) {
  auto evs = FeedAllWays(
      "event: agent.tool_use\ndata: {\"a\":1}\nid: 7\n\n"
      ": comment\n"
      "data: line1\ndata:line2\ndata\n\n"
      "event: x\n\n");  // no data: not dispatched
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].type, "agent.tool_use");
  EXPECT_EQ(evs[0].data, "{\"a\":1}");
  EXPECT_EQ(evs[0].id, "7");
  EXPECT_EQ(evs[1].type, "message");
  EXPECT_EQ(evs[1].data, "line1\nline2\n");
  EXPECT_EQ(evs[1].id, "7");  // the last event ID persists
}

TEST(SseParserTest, AllLineEndings) {
  for (std::string_view eol : {"\n", "\r\n", "\r"}) {
    std::string in = "event: e" + std::string(eol) + "data: d" + std::string(eol) +
                     std::string(eol) + "data: 2" + std::string(eol) + std::string(eol);
    auto evs = FeedAllWays(in);
    ASSERT_EQ(evs.size(), 2u) << (eol == "\r" ? "CR" : eol == "\n" ? "LF" : "CRLF");
    EXPECT_EQ(evs[0].type, "e");
    EXPECT_EQ(evs[0].data, "d");
    EXPECT_EQ(evs[1].data, "2");
  }
}

TEST(SseParserTest, CrLfSplitAcrossChunksIsOneLineEnd) {
  auto evs = FeedPieces("data: a\r\n\r\n", {8});  // "data: a\r" | "\n\r\n"
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].data, "a");
}

TEST(SseParserTest, LeadingBomIsStrippedOnce) {
  auto evs = FeedAllWays(
      "\xEF\xBB\xBF"
      "data: x\n\n");
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].data, "x");
  // A second BOM is content: the field name is then not "data".
  auto none = FeedAllWays(
      "\xEF\xBB\xBF\xEF\xBB\xBF"
      "data: x\n\n");
  EXPECT_TRUE(none.empty());
  // Bytes that only start like a BOM are kept.
  auto kept = FeedAllWays(
      "\xEF\xBB"
      "data: x\n\ndata: y\n\n");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].data, "y");
}

TEST(SseParserTest, RetryAndIdRules) {
  SseParser p;
  const std::string in("retry: 1500\nretry: 12x\nid: a\0b\ndata: d\n\nid\ndata: e\n\n", 52);
  auto r = p.Feed(in);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(p.retry_ms(), 1500u);  // "12x" is ignored
  EXPECT_EQ((*r)[0].id, "");       // an id with NUL is ignored
  EXPECT_EQ((*r)[1].id, "");       // a bare "id" resets it
}

TEST(SseParserTest, IncompleteEventAtEndIsNotDispatched) {
  SseParser p;
  auto r = p.Feed("data: a\n\ndata: b\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->size(), 1u);
}

TEST(SseParserTest, EmptyDataLineDispatchesEmptyData) {
  auto evs = FeedAllWays("data\n\ndata:\n\n");
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].data, "");
}

TEST(SseParserTest, LineLimitIsEnforcedAndSticky) {
  SseParser p({.max_line = 16, .max_event = 1024});
  auto ok = p.Feed("data: 0123456789\n");  // exactly 16
  ASSERT_TRUE(ok) << ok.error().message();
  auto r = p.Feed("data: 0123456789");  // 16 pending is fine...
  ASSERT_TRUE(r);
  auto bad = p.Feed("X");  // ...17 is not, even without a line end
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::kProtocol);
  EXPECT_NE(bad.error().message().find("longer than 16 bytes"), std::string::npos);
  EXPECT_TRUE(p.failed());
  EXPECT_FALSE(p.Feed("\n\n"));
}

TEST(SseParserTest, EventLimitIsEnforced) {
  SseParser p({.max_line = 1024, .max_event = 20});
  ASSERT_TRUE(p.Feed("data: 0123456789\n"));  // 11 bytes of data
  auto bad = p.Feed("data: 0123456789\n");    // 22 > 20
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("larger than 20 bytes"), std::string::npos);
}

TEST(SseParserTest, ManySmallEventsInOneChunk) {
  std::string in;
  for (int i = 0; i < 1000; ++i) in += "data: " + std::to_string(i) + "\r\n\r\n";
  SseParser p;
  auto r = p.Feed(in);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 1000u);
  EXPECT_EQ(r->back().data, "999");
}

}  // namespace
}  // namespace srt::poller
