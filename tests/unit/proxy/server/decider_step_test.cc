// SPDX-License-Identifier: Apache-2.0
// server/decider_step.h: the req frame, verdicts as refusals, need_body's body (Content-Length
// and chunked, de-chunked and bounded by max) and an allow's edits.
#include "server/decider_step.h"

#include <gtest/gtest.h>

namespace srt::proxy {
namespace {

http::Request Parse(std::string_view head) {
  http::RequestHeadResult r = http::ParseRequestHead(head, {}, 0);
  EXPECT_EQ(r.status, ParseStatus::kDone);
  return r.request;
}

TEST(DeciderStepTest, TheReqFrameCarriesTheTargetNotTheHostHeader) {
  const http::Request request = Parse(
      "GET /a/b?x=1&y HTTP/1.1\r\nHost: spoofed.test\r\nX-One: 1\r\nProxy-Authorization: s\r\n"
      "Proxy-Connection: keep-alive\r\n\r\n");
  Host host = *CanonicalizeHost("api.example.com");
  decider::Request r = DeciderRequest(request, host, 443, std::string("API.example.com"));
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.host, "api.example.com");
  EXPECT_EQ(r.port, 443);
  EXPECT_EQ(r.host_header, "spoofed.test");
  EXPECT_EQ(r.sni, "API.example.com");
  EXPECT_EQ(r.path, "/a/b");
  EXPECT_EQ(r.query, "x=1&y");
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0], (std::pair<std::string, std::string>("x-one", "1")));
}

TEST(DeciderStepTest, OutcomesThatRefuse) {
  DeciderLink::Outcome o;
  o.kind = DeciderLink::Outcome::Kind::kUnavailable;
  o.reason = "request decider: decider timed out";
  std::optional<DeciderRefusal> r = RefusalFor(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->mark, "decider_unavailable");
  o.kind = DeciderLink::Outcome::Kind::kVerdict;
  o.verdict.action = decider::Action::kDeny;
  o.verdict.status = 451;
  r = RefusalFor(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 451);
  EXPECT_EQ(r->mark, "decider");
  EXPECT_EQ(r->reason, "request denied by the decider");
  o.verdict.action = decider::Action::kNeedBody;
  EXPECT_FALSE(RefusalFor(o));
  o.verdict.action = decider::Action::kAllow;
  EXPECT_FALSE(RefusalFor(o));
  // After the body was shown, an allow stays an allow and a second need_body refuses (503).
  EXPECT_EQ(AfterBodyShown(o).kind, DeciderLink::Outcome::Kind::kVerdict);
  o.verdict.action = decider::Action::kNeedBody;
  r = RefusalFor(AfterBodyShown(o));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->reason, "request decider: a second need_body");
}

TEST(DeciderStepTest, EditsDropAndAdd) {
  decider::Verdict v;
  v.action = decider::Action::kAllow;
  v.set_headers = {{"x-added", {"a", "b"}}};
  v.remove_headers = {"x-gone"};
  v.cred = "github";
  v.credential = "tok";
  EXPECT_TRUE(EditsDrop(v, "X-Added"));
  EXPECT_TRUE(EditsDrop(v, "X_Gone"));
  EXPECT_TRUE(EditsDrop(v, "Cookie"));
  EXPECT_FALSE(EditsDrop(v, "Accept"));
  EXPECT_EQ(EditedFields(v, *CanonicalizeHost("github.com")),
            "x-added: a\r\nx-added: b\r\nauthorization: Basic eC1hY2Nlc3MtdG9rZW46dG9r\r\n");
  EXPECT_EQ(EditedFields(v, *CanonicalizeHost("example.com")),
            "x-added: a\r\nx-added: b\r\nauthorization: Bearer tok\r\n");
}

TEST(DeciderStepTest, AContentLengthBodyShowsItsFirstMaxBytes) {
  DeciderBody body({http::Framing::Kind::kContentLength, 10}, 4);
  std::string in = "ab";
  EXPECT_EQ(body.Feed(in), ParseStatus::kNeedMore);
  EXPECT_EQ(body.want(), 2u);
  in += "cdefgh";
  EXPECT_EQ(body.Feed(in), ParseStatus::kDone);
  EXPECT_EQ(in, "efgh");  // the rest stays for the forwarding
  EXPECT_EQ(body.shown(), "abcd");
  EXPECT_TRUE(body.cut());
  EXPECT_EQ(body.ForwardPrefix(), "abcd");
  EXPECT_EQ(body.remaining(), 6u);
  EXPECT_FALSE(body.ended());
}

TEST(DeciderStepTest, AChunkedBodyIsDechunkedAndReframed) {
  // The whole body within max: shown whole, forwarded as one chunk and the end.
  DeciderBody whole({http::Framing::Kind::kChunked, 0}, 64);
  std::string in = "5;ext=1\r\nhello\r\n";
  EXPECT_EQ(whole.Feed(in), ParseStatus::kNeedMore);
  in += "6\r\n there\r\n0\r\nTrailer: x\r\n\r\nNEXT";
  EXPECT_EQ(whole.Feed(in), ParseStatus::kDone);
  EXPECT_EQ(in, "NEXT");
  EXPECT_EQ(whole.shown(), "hello there");
  EXPECT_FALSE(whole.cut());
  EXPECT_TRUE(whole.ended());
  EXPECT_EQ(whole.ForwardPrefix(), "b\r\nhello there\r\n0\r\n\r\n");

  // More than max: the first max bytes shown, cut; the decoder continues where it stopped.
  DeciderBody cut({http::Framing::Kind::kChunked, 0}, 4);
  in = "3\r\nabc\r\n";
  EXPECT_EQ(cut.Feed(in), ParseStatus::kNeedMore);  // 3 <= 4: more may come
  in += "3\r\ndef\r\n";
  EXPECT_EQ(cut.Feed(in), ParseStatus::kDone);
  EXPECT_EQ(in, "");
  in = "3\r\nghi\r\n0\r\n\r\n";
  EXPECT_EQ(cut.shown(), "abcd");
  EXPECT_TRUE(cut.cut());
  EXPECT_FALSE(cut.ended());
  EXPECT_EQ(cut.ForwardPrefix(), "6\r\nabcdef\r\n");
  http::ChunkedDecoder rest = cut.TakeDecoder();
  std::string data;
  EXPECT_EQ(rest.Feed(in, &data).status, ParseStatus::kDone);
  EXPECT_EQ(data, "ghi");

  // Exactly max and then the end: not cut.
  DeciderBody exact({http::Framing::Kind::kChunked, 0}, 3);
  in = "3\r\nabc\r\n0\r\n\r\n";
  EXPECT_EQ(exact.Feed(in), ParseStatus::kDone);
  EXPECT_FALSE(exact.cut());
  EXPECT_EQ(exact.shown(), "abc");

  DeciderBody bad({http::Framing::Kind::kChunked, 0}, 3);
  in = "zz\r\n";
  EXPECT_EQ(bad.Feed(in), ParseStatus::kError);
  EXPECT_FALSE(bad.error().empty());
}

}  // namespace
}  // namespace srt::proxy
