// SPDX-License-Identifier: Apache-2.0
// srt-mcp/protocol/streams: where each of the server's messages goes, and replay.
#include "protocol/streams.h"

#include <gtest/gtest.h>

namespace srt::mcp {
namespace {

Message Parse(const std::string& text) {
  Result<Message> m = ClassifyMessage(text);
  EXPECT_TRUE(m) << text;
  return m ? *m : Message{};
}

std::optional<SessionStreams::Delivery> Route(SessionStreams& s, const std::string& text) {
  return s.Route(Parse(text), text);
}

TEST(SessionStreamsTest, AResponseEndsItsRequestsStream) {
  SessionStreams s(8);
  Result<uint64_t> a = s.OpenRequest("1", "");
  Result<uint64_t> b = s.OpenRequest("\"two\"", "");
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(s.inflight(), 2u);
  auto d = Route(s, R"({"jsonrpc":"2.0","id":"two","result":{}})");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->stream, *b);
  EXPECT_TRUE(d->ends_stream);
  EXPECT_EQ(d->record.id, std::to_string(*b) + "-1");
  EXPECT_EQ(s.inflight(), 1u);
  // Nobody waits for a second answer to the same id.
  EXPECT_FALSE(Route(s, R"({"jsonrpc":"2.0","id":"two","result":{}})"));
}

TEST(SessionStreamsTest, AnIdInFlightCannotBeReused) {
  SessionStreams s(8);
  ASSERT_TRUE(s.OpenRequest("1", ""));
  Result<uint64_t> again = s.OpenRequest("1", "");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message(), "request id 1 is already in flight");
  // Number 1 and string "1" are different ids (JSON-RPC 2.0 §4).
  EXPECT_TRUE(s.OpenRequest("\"1\"", ""));
}

TEST(SessionStreamsTest, ProgressGoesToItsRequestOtherMessagesToTheGetStream) {
  SessionStreams s(8);
  uint64_t a = *s.OpenRequest("1", "\"tok\"");
  uint64_t b = *s.OpenRequest("2", "");
  auto progress = Route(
      s, R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok"}})");
  ASSERT_TRUE(progress);
  EXPECT_EQ(progress->stream, a);
  EXPECT_FALSE(progress->ends_stream);
  // No GET attached: the newest open request stream carries the rest.
  auto log = Route(s, R"({"jsonrpc":"2.0","method":"notifications/message","params":{}})");
  EXPECT_EQ(log->stream, b);
  s.SetStandaloneAttached(true);
  auto req = Route(s, R"({"jsonrpc":"2.0","id":"s1","method":"roots/list"})");
  EXPECT_EQ(req->stream, 0u);
  EXPECT_EQ(req->record.id, "0-1");
}

TEST(SessionStreamsTest, TheGetStreamBuffersWhileDetached) {
  SessionStreams s(2);
  for (int i = 0; i < 3; ++i) {
    auto d = Route(s, R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
    EXPECT_EQ(d->stream, 0u);
  }
  std::vector<SseRecord> pending = s.TakeStandalonePending();
  ASSERT_EQ(pending.size(), 2u);  // bounded: the oldest went
  EXPECT_EQ(pending[0].id, "0-2");
  EXPECT_EQ(pending[1].id, "0-3");
  EXPECT_TRUE(s.TakeStandalonePending().empty());
}

// What a session keeps for replay and for a GET not yet attached is bounded in bytes, not only
// in events: a server making many large messages cannot make the daemon hold them all.
TEST(SessionStreamsTest, RetainedMessagesHaveAByteBudget) {
  SessionStreams s(64, /*max_retained_bytes=*/1000);
  const std::string big(300, 'A');
  for (int i = 0; i < 20; ++i) {
    (void)Route(
        s, R"({"jsonrpc":"2.0","method":"notifications/message","params":{"d":")" + big + R"("}})");
    EXPECT_LE(s.retained_bytes(), 1000u) << i;
  }
  const std::vector<SseRecord> pending = s.TakeStandalonePending();
  EXPECT_FALSE(pending.empty());
  EXPECT_LT(pending.size(), 20u);  // the oldest went
  EXPECT_EQ(pending.back().seq, 20u);
  EXPECT_EQ(s.retained_bytes() <= 1000u, true);
}

TEST(SessionStreamsTest, ResumeReplaysWhatFollowsTheLastEventId) {
  SessionStreams s(8);
  uint64_t a = *s.OpenRequest("1", "\"t\"");
  (void)Route(
      s, R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t"}})");
  (void)Route(
      s, R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t"}})");
  const std::string first = std::to_string(a) + "-1";
  Result<SessionStreams::Resume> r = s.ResumeAfter(first);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stream, a);
  ASSERT_EQ(r->records.size(), 1u);
  EXPECT_EQ(r->records[0].id, std::to_string(a) + "-2");
  EXPECT_FALSE(r->complete);
  (void)Route(s, R"({"jsonrpc":"2.0","id":1,"result":{}})");
  r = s.ResumeAfter(first);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->complete);
  EXPECT_EQ(r->records.size(), 2u);
  for (std::string bad : {"", "x", "1-", "-1", "99-1", "1-99", "1-1x", "18446744073709551616-1"}) {
    EXPECT_FALSE(s.ResumeAfter(bad)) << bad;
  }
  s.Forget(a);
  EXPECT_FALSE(s.ResumeAfter(first));
}

TEST(SessionStreamsTest, AbandonedRequestsLeaveTheInFlightSet) {
  SessionStreams s(8);
  uint64_t a = *s.OpenRequest("5", "");
  EXPECT_EQ(s.Abandon(a), "5");
  EXPECT_EQ(s.inflight(), 0u);
  EXPECT_EQ(s.Abandon(a), "");
  EXPECT_EQ(s.Abandon(0), "");
  // Its late answer goes nowhere.
  EXPECT_FALSE(Route(s, R"({"jsonrpc":"2.0","id":5,"result":{}})"));
  uint64_t b = *s.OpenRequest("6", "");
  auto in_flight = s.InFlight();
  ASSERT_EQ(in_flight.size(), 1u);
  EXPECT_EQ(in_flight[0], (std::pair<uint64_t, std::string>{b, "6"}));
}

}  // namespace
}  // namespace srt::mcp
