// SPDX-License-Identifier: Apache-2.0
#include "http/response_writer.h"

#include <gtest/gtest.h>

#include "http/head_parser.h"
#include "wire/parser_test_util.h"

namespace srt::proxy::http {
namespace {

TEST(ResponseWriterTest, ExactBytes) {
  // upstream-srt.md §4.9: a denied CONNECT.
  EXPECT_EQ(
      FormatResponse(403, "host is not on the allow list",
                     {{"Content-Type", "text/plain"}, {"X-Proxy-Error", "blocked-by-allowlist"}},
                     "Connection blocked by network allowlist"),
      "HTTP/1.1 403 host is not on the allow list\r\n"
      "Content-Type: text/plain\r\n"
      "X-Proxy-Error: blocked-by-allowlist\r\n"
      "Content-Length: 39\r\n"
      "\r\n"
      "Connection blocked by network allowlist");
  EXPECT_EQ(FormatResponse(407, "Proxy Authentication Required",
                           {{"Proxy-Authenticate", "Basic realm=\"srt\""}}, ""),
            "HTTP/1.1 407 Proxy Authentication Required\r\n"
            "Proxy-Authenticate: Basic realm=\"srt\"\r\n"
            "Content-Length: 0\r\n\r\n");
  EXPECT_EQ(FormatResponse(502, "Bad Gateway", {}, "Bad Gateway"),
            "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 11\r\n\r\nBad Gateway");
  EXPECT_EQ(FormatConnectEstablished(), "HTTP/1.1 200 Connection Established\r\n\r\n");
}

TEST(ResponseWriterTest, NothingCanSplitTheResponse) {
  std::string out = FormatResponse(403, "evil\r\nSet-Cookie: x=1",
                                   {{"X-A", "v\r\n\r\nHTTP/1.1 200 OK"},
                                    {"Bad Name", "dropped"},
                                    {"Content-Length", "999"},
                                    {"transfer-encoding", "chunked"}},
                                   "body");
  EXPECT_EQ(out,
            "HTTP/1.1 403 evil  Set-Cookie: x=1\r\n"
            "X-A: v    HTTP/1.1 200 OK\r\n"
            "Content-Length: 4\r\n\r\nbody");
  // What we emit, we parse back as exactly one response with the body framed as sent.
  ResponseHeadResult r = ParseResponseHead(testing::AsChars(out));
  ASSERT_EQ(r.status, ParseStatus::kDone) << r.error;
  EXPECT_EQ(r.consumed + 4, out.size());
  EXPECT_EQ(r.response.headers.size(), 2u);
}

TEST(ResponseWriterTest, NoContentLengthWhereForbidden) {
  EXPECT_EQ(FormatResponse(100, "Continue", {}, ""), "HTTP/1.1 100 Continue\r\n\r\n");
  EXPECT_EQ(FormatResponse(204, "No Content", {}, ""), "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(FormatResponse(304, "Not Modified", {}, ""), "HTTP/1.1 304 Not Modified\r\n\r\n");
  EXPECT_EQ(FormatResponse(42, "", {}, ""), "HTTP/1.1 100 \r\n\r\n");
  EXPECT_EQ(FormatResponse(5000, "x", {}, ""), "HTTP/1.1 999 x\r\nContent-Length: 0\r\n\r\n");
}

}  // namespace
}  // namespace srt::proxy::http
