// SPDX-License-Identifier: Apache-2.0
// decider/protocol.h: frames and the strict reading of what a decider sends.
#include "decider/protocol.h"

#include <gtest/gtest.h>

#include <string>

namespace srt::proxy::decider {
namespace {

TEST(DeciderFrameTest, FramesAreCutWhereverTheBytesArrive) {
  const std::string stream = EncodeFrame("{\"a\":1}") + EncodeFrame("") + EncodeFrame("xyz");
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    FrameReader reader;
    std::vector<std::string> got;
    std::string frame;
    reader.Append(stream.substr(0, cut));
    while (reader.Next(frame) == FrameReader::Status::kFrame) got.push_back(frame);
    reader.Append(stream.substr(cut));
    while (reader.Next(frame) == FrameReader::Status::kFrame) got.push_back(frame);
    EXPECT_EQ(got, (std::vector<std::string>{"{\"a\":1}", "", "xyz"})) << cut;
    EXPECT_EQ(reader.buffered(), 0u);
  }
  EXPECT_EQ(EncodeFrame("ab"), std::string("\0\0\0\x02"
                                           "ab",
                                           6));
}

TEST(DeciderFrameTest, ALengthOverTheLimitIsOversized) {
  FrameReader reader(10);
  reader.Append(std::string("\0\0\0\x0b", 4));
  std::string frame;
  EXPECT_EQ(reader.Next(frame), FrameReader::Status::kOversized);
  FrameReader big;
  big.Append(std::string("\x00\x10\x00\x01", 4));  // 1 MiB + 1
  EXPECT_EQ(big.Next(frame), FrameReader::Status::kOversized);
}

TEST(DeciderHelloTest, ListsOfEgressEntries) {
  Result<DeciderHello> hello = ParseDeciderHello(
      R"({"t":"hello","proto":1,"allowedDomains":["example.com","*.github.com:443","10.0.0.1",)"
      R"("[::1]:8080"],"deniedDomains":["evil.example.com"]})");
  ASSERT_TRUE(hello.has_value()) << hello.error().message();
  EXPECT_EQ(hello->allowed_domains.size(), 4u);
  EXPECT_EQ(hello->denied_domains, std::vector<std::string>{"evil.example.com"});
  for (const char* bad : {
           R"({"t":"hello","proto":2,"allowedDomains":[],"deniedDomains":[]})",
           R"({"t":"hello","proto":1,"allowedDomains":[]})",
           R"({"t":"hello","proto":1,"allowedDomains":["Example.com"],"deniedDomains":[]})",
           R"({"t":"hello","proto":1,"allowedDomains":["*.com"],"deniedDomains":[]})",
           R"({"t":"hello","proto":1,"allowedDomains":["a.com","a.com"],"deniedDomains":[]})",
           R"({"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[],"x":1})",
           R"({"t":"hello","proto":1.0,"allowedDomains":[],"deniedDomains":[]})",
       }) {
    EXPECT_FALSE(ParseDeciderHello(bad).has_value()) << bad;
  }
}

TEST(DeciderHelloTest, EgressEntries) {
  for (const char* good : {"example.com", "a-b.example.com:443", "*.example.co.uk", "127.0.0.1",
                           "127.0.0.1:80", "::1", "[::1]:80", "[2001:db8::1]"}) {
    EXPECT_TRUE(IsEgressEntry(good)) << good;
  }
  for (const char* bad : {"", "Example.com", "*.com", "*", "a..b", "-a.com", "a.com:0",
                          "a.com:65536", "a.com:080", "1.2.3", "example.123", "http://a.com",
                          "a.com/x", "[::1", "[1.2.3.4]:80", "a_b.com", "a.com:"}) {
    EXPECT_FALSE(IsEgressEntry(bad)) << bad;
  }
}

TEST(DeciderVerdictTest, TheThreeActions) {
  Result<Verdict> allow =
      ParseVerdict(R"({"t":"verdict","id":3,"action":"allow","setHeaders":{"x-a":["1","2"]},)"
                   R"("removeHeaders":["x-b"],"cred":"github","credential":"ghp_x"})");
  ASSERT_TRUE(allow.has_value()) << allow.error().message();
  EXPECT_EQ(allow->id, 3u);
  EXPECT_EQ(allow->action, Action::kAllow);
  EXPECT_EQ(allow->set_headers, (HeaderMap{{"x-a", {"1", "2"}}}));
  EXPECT_EQ(allow->remove_headers, std::vector<std::string>{"x-b"});
  EXPECT_EQ(allow->cred, "github");
  EXPECT_EQ(allow->credential, "ghp_x");
  Result<Verdict> deny =
      ParseVerdict(R"({"t":"verdict","id":1,"action":"deny","status":451,"reason":"no\tway"})");
  ASSERT_TRUE(deny.has_value()) << deny.error().message();
  EXPECT_EQ(deny->status, 451);
  EXPECT_EQ(deny->reason, "no\tway");
  Result<Verdict> need = ParseVerdict(R"({"t":"verdict","id":9,"action":"need_body","max":5})");
  ASSERT_TRUE(need.has_value());
  EXPECT_EQ(need->max, 5u);
}

TEST(DeciderVerdictTest, StrictReading) {
  for (const auto& [text, error] : std::vector<std::pair<std::string, std::string>>{
           {R"({"t":"verdict","id":1,"id":1,"action":"allow"})", "duplicate key in frame"},
           {R"({"t":"verdict","id":1,"action":"deny","status":403,"reason":null})",
            "null in frame"},
           {R"({"t":"verdict","id":1.5,"action":"allow"})",
            "a number that is not an integer in frame"},
           {R"([1])", "frame is not one JSON object"},
           {R"({"t":"verdict",)", "frame is not valid JSON"},
           {"{\"t\":\"verdict\",\"id\":1,\"action\":\"allow\",\"x\":\"\xff\"}",
            "frame is not UTF-8"},
           {R"({"t":"verdict","id":0,"action":"allow"})", "'id' is out of range"},
           {R"({"t":"verdict","id":9007199254740992,"action":"allow"})", "'id' is out of range"},
           {R"({"t":"verdict","id":-1,"action":"allow"})", "'id' is out of range"},
           {R"({"t":"verdict","id":1,"action":"allow","extra":true})", "unknown field 'extra'"},
           {R"({"t":"verdict","id":1,"action":"allow","setHeaders":{}})",
            "'setHeaders' is not a non-empty object"},
           {R"({"t":"verdict","id":1,"action":"allow","removeHeaders":[]})",
            "'removeHeaders' is empty"},
           {R"({"t":"verdict","id":1,"action":"allow","setHeaders":{"X-A":["1"]}})",
            "setHeaders name is not a lower-case token"},
           {R"({"t":"verdict","id":1,"action":"allow","setHeaders":{"content_length":["1"]}})",
            "setHeaders may not set 'content_length'"},
           {R"({"t":"verdict","id":1,"action":"allow","setHeaders":{"authorization":["x"]}})",
            "setHeaders may not set 'authorization'"},
           {R"({"t":"verdict","id":1,"action":"allow","setHeaders":{"x-a":["a\r\nb: c"]}})",
            "setHeaders value has a control character"},
           {"{\"t\":\"verdict\",\"id\":1,\"action\":\"allow\",\"setHeaders\":{\"x-a\":["
            "\"\xc2\x85\"]}}",
            "setHeaders value has a control character"},
           {R"({"t":"verdict","id":1,"action":"allow","removeHeaders":["transfer-encoding"]})",
            "removeHeaders may not remove 'transfer-encoding'"},
           {R"({"t":"verdict","id":1,"action":"allow","cred":"api"})",
            "'cred' and 'credential' come together"},
           {R"({"t":"verdict","id":1,"action":"allow","cred":"api","credential":"a b"})",
            "'credential' is not 1 to 8192 printable ASCII characters"},
           {R"({"t":"verdict","id":1,"action":"deny","status":399})", "'status' is out of range"},
           {R"({"t":"verdict","id":1,"action":"deny"})", "missing field 'status'"},
           {R"({"t":"verdict","id":1,"action":"deny","status":403,"reason":""})",
            "'reason' is empty, longer than 1 KiB or has a control character"},
           {R"({"t":"verdict","id":1,"action":"need_body","max":33554433})",
            "'max' is out of range"},
           {R"({"t":"verdict","id":1,"action":"maybe"})", "unknown action"},
           {R"({"t":"req","id":1,"action":"allow"})", "not a verdict"},
       }) {
    Result<Verdict> v = ParseVerdict(text);
    ASSERT_FALSE(v.has_value()) << text;
    EXPECT_EQ(v.error().message(), error) << text;
  }
  const std::string long_reason(1025, 'r');
  EXPECT_FALSE(ParseVerdict(R"({"t":"verdict","id":1,"action":"deny","status":403,"reason":")" +
                            long_reason + "\"}")
                   .has_value());
}

TEST(DeciderRequestTest, ReqFrames) {
  Request r;
  r.id = 4;
  r.method = "POST";
  r.host = "api.example.com";
  r.port = 443;
  r.host_header = "api.example.com";
  r.path = "/v1/x";
  r.query = "a=1";
  r.headers = {{"accept", "*/*"}, {"x-a", "1"}, {"x-a", "2"}};
  Result<std::string> text = EncodeRequest(r);
  ASSERT_TRUE(text.has_value()) << text.error().message();
  EXPECT_EQ(*text,
            R"({"headers":{"accept":["*/*"],"x-a":["1","2"]},"host":"api.example.com",)"
            R"("hostHeader":"api.example.com","id":4,"method":"POST","path":"/v1/x","port":443,)"
            R"("query":"a=1","t":"req"})");
  Request bad = r;
  bad.headers = {{"x-a", "a\x01"}};
  EXPECT_EQ(EncodeRequest(bad).error().message(),
            "request header the decider cannot be asked about");
  bad = r;
  bad.path = std::string(kMaxHostPathBytes + 1, 'p');
  EXPECT_EQ(EncodeRequest(bad).error().message(), "request target too large");
  EXPECT_EQ(EncodeBody(2, "hi", true), R"({"t":"body","id":2,"data":"aGk=","cut":true})");
  EXPECT_EQ(EncodeProxyHello(), R"({"t":"hello","proto":1})");
}

}  // namespace
}  // namespace srt::proxy::decider
