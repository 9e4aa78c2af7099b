// SPDX-License-Identifier: Apache-2.0
// srt-mcp/protocol: JSON-RPC classification, SSE framing and the per-request checks.
#include <gtest/gtest.h>

#include <string>

#include "protocol/checks.h"
#include "protocol/jsonrpc.h"
#include "protocol/sse.h"

namespace srt::mcp {
namespace {

TEST(JsonRpcTest, Classifies) {
  auto req = ClassifyMessage(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":"p1"}}})");
  ASSERT_TRUE(req);
  EXPECT_EQ(req->kind, MessageKind::kRequest);
  EXPECT_EQ(req->id, "7");
  EXPECT_EQ(req->method, "tools/call");
  EXPECT_EQ(req->progress_token, "\"p1\"");
  auto note = ClassifyMessage(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}})");
  ASSERT_TRUE(note);
  EXPECT_EQ(note->kind, MessageKind::kNotification);
  EXPECT_EQ(note->cancelled_id, "\"a\"");
  auto progress = ClassifyMessage(
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3}})");
  ASSERT_TRUE(progress);
  EXPECT_EQ(progress->progress_token, "3");
  auto resp = ClassifyMessage(R"({"jsonrpc":"2.0","id":"x","result":{}})");
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->kind, MessageKind::kResponse);
  EXPECT_EQ(resp->id, "\"x\"");
}

TEST(JsonRpcTest, RefusesWhatIsNotOneMessage) {
  auto why = [](std::string_view text) {
    auto r = ClassifyMessage(text);
    return r ? std::string("ok") : r.error().message();
  };
  EXPECT_EQ(why("nope"), "not JSON");
  EXPECT_EQ(why("[]"), "a JSON-RPC batch (MCP 2025-06-18 and later take one message)");
  EXPECT_EQ(why("7"), "not a JSON object");
  EXPECT_EQ(why(R"({"id":1,"method":"x"})"), "no \"jsonrpc\": \"2.0\"");
  EXPECT_EQ(why(R"({"jsonrpc":"2.0","id":1.5,"method":"x"})"),
            "an id that is not a string or an integer");
  EXPECT_EQ(why(R"({"jsonrpc":"2.0","id":{},"method":"x"})"),
            "an id that is not a string or an integer");
  EXPECT_EQ(why(R"({"jsonrpc":"2.0","method":5})"), "a method that is not a string");
  EXPECT_EQ(why(R"({"jsonrpc":"2.0"})"), "neither a method nor an id");
  EXPECT_EQ(why(R"({"jsonrpc":"2.0","id":1})"), "a response without result or error");
  EXPECT_EQ(why(std::string(1000, '[') + std::string(1000, ']')), "nested deeper than 64 levels");
}

TEST(JsonRpcTest, MakesMessages) {
  EXPECT_EQ(ErrorResponse("3", -32000, "gone \"now\""),
            R"({"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"gone \"now\""}})");
  EXPECT_EQ(ErrorResponse("", -32600, "x"),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}})");
  EXPECT_EQ(
      CancelledNotification("\"a\"", "bye"),
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"bye"}})");
}

TEST(JsonRpcTest, ReplacesIds) {
  EXPECT_EQ(ReplaceId(R"({"jsonrpc":"2.0","id":1,"result":{"a":1}})", "\"x\""),
            R"({"id":"x","jsonrpc":"2.0","result":{"a":1}})");
  EXPECT_EQ(ReplaceId("[1]", "1"), "");
  EXPECT_EQ(ReplaceId("{}", "nope"), "");
}

TEST(JsonRpcTest, ReadsWhatTheMirroredHeadersAreCheckedAgainst) {
  auto m = ClassifyMessage(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","uri":7,)"
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name, "t");
  EXPECT_EQ(m->uri, std::nullopt);
  EXPECT_EQ(m->meta_protocol_version, "2026-07-28");
}

TEST(ChecksTest, MirroredHeaders) {
  const std::optional<std::string> v = "2026-07-28";
  const std::optional<std::string> name = "get weather";
  const std::optional<std::string> none;
  auto check = [&](MirroredHeaders h, std::string_view method,
                   const std::optional<std::string>& body_name = std::nullopt,
                   const std::optional<std::string>& body_uri = std::nullopt) {
    return CheckMirroredHeaders(h, method, v, body_name, body_uri);
  };
  EXPECT_EQ(check({"2026-07-28", "tools/list", std::nullopt}, "tools/list"), "");
  EXPECT_EQ(check({"2026-07-28", "tools/call", "get weather"}, "tools/call", name), "");
  // "get weather" as the sentinel form.
  EXPECT_EQ(check({"2026-07-28", "tools/call", "=?base64?Z2V0IHdlYXRoZXI=?="}, "tools/call", name),
            "");
  EXPECT_EQ(check({"2026-07-28", "resources/read", "file:///a"}, "resources/read", none,
                  std::optional<std::string>("file:///a")),
            "");
  EXPECT_EQ(check({std::nullopt, "tools/list", std::nullopt}, "tools/list"),
            "MCP-Protocol-Version is missing");
  EXPECT_EQ(CheckMirroredHeaders({"2026-07-28", "tools/list", std::nullopt}, "tools/list", none,
                                 none, none),
            "MCP-Protocol-Version '2026-07-28' does not match the body's "
            "io.modelcontextprotocol/protocolVersion");
  EXPECT_EQ(check({"2026-07-28", std::nullopt, std::nullopt}, "tools/list"),
            "Mcp-Method is missing");
  EXPECT_EQ(check({"2026-07-28", "tools/list", std::nullopt}, "tools/call", name),
            "Mcp-Method header value 'tools/list' does not match body value 'tools/call'");
  EXPECT_EQ(check({"2026-07-28", "tools/call", std::nullopt}, "tools/call", name),
            "Mcp-Name is missing");
  EXPECT_EQ(check({"2026-07-28", "tools/call", "other"}, "tools/call", name),
            "Mcp-Name header value 'other' does not match the body");
  EXPECT_EQ(check({"2026-07-28", "tools/call", "=?base64?!!?="}, "tools/call", name),
            "Mcp-Name is not valid base64");
  EXPECT_EQ(check({"2026-07-28", "prompts/get", "p"}, "prompts/get", none),
            "Mcp-Name header value 'p' does not match the body");
}

TEST(SseTest, EventsCannotBeEndedOrExtendedByTheirData) {
  EXPECT_EQ(SseEvent("1-1", R"({"a":1})"), "id: 1-1\ndata: {\"a\":1}\n\n");
  EXPECT_EQ(SseEvent("2-1", "a\n\nid: evil\r\nb\rc"),
            "id: 2-1\ndata: a\ndata: \ndata: id: evil\ndata: b\ndata: c\n\n");
  EXPECT_EQ(SseEvent("", "x"), "data: x\n\n");
}

TEST(SseTest, Chunks) {
  EXPECT_EQ(Chunk("hello"), "5\r\nhello\r\n");
  EXPECT_EQ(Chunk(std::string(26, 'x')), "1a\r\n" + std::string(26, 'x') + "\r\n");
  EXPECT_EQ(Chunk(""), "");
  EXPECT_EQ(kLastChunk, "0\r\n\r\n");
}

TEST(ChecksTest, Host) {
  HostPolicy p{"127.0.0.1", 8787, true, {"mcp.example.test"}};
  EXPECT_TRUE(CheckHost("127.0.0.1:8787", p).allowed);
  EXPECT_TRUE(CheckHost("127.0.0.1", p).allowed);
  EXPECT_TRUE(CheckHost("LOCALHOST:8787", p).allowed);
  EXPECT_TRUE(CheckHost("[::1]:8787", p).allowed);
  EXPECT_FALSE(CheckHost("127.0.0.1:9999", p).allowed);
  EXPECT_FALSE(CheckHost("evil.example", p).allowed);
  EXPECT_FALSE(CheckHost("evil.example:8787", p).allowed);
  EXPECT_FALSE(CheckHost(std::nullopt, p).allowed);
  EXPECT_FALSE(CheckHost("", p).allowed);
  EXPECT_TRUE(CheckHost("mcp.example.test", p).allowed);
  HostMatch m = CheckHost("Files.MCP.example.test:8787", p);
  EXPECT_TRUE(m.allowed);
  EXPECT_EQ(m.route, "files");
  EXPECT_FALSE(CheckHost("a.b.mcp.example.test", p).allowed);
  EXPECT_FALSE(CheckHost("xmcp.example.test", p).allowed);
  HostPolicy wide{"0.0.0.0", 80, false, {}};
  EXPECT_FALSE(CheckHost("localhost", wide).allowed);
  EXPECT_TRUE(CheckHost("0.0.0.0:80", wide).allowed);
  HostPolicy v6{"::1", 80, true, {}};
  EXPECT_TRUE(CheckHost("[::1]", v6).allowed);
}

TEST(ChecksTest, Origin) {
  std::vector<std::string> allowed = {"https://claude.ai", "http://localhost:3000"};
  EXPECT_TRUE(OriginAllowed("https://claude.ai", allowed));
  EXPECT_TRUE(OriginAllowed("HTTPS://Claude.AI", allowed));
  EXPECT_TRUE(OriginAllowed("https://claude.ai:443", allowed));
  EXPECT_TRUE(OriginAllowed("http://localhost:3000", allowed));
  EXPECT_FALSE(OriginAllowed("http://localhost:3001", allowed));
  EXPECT_FALSE(OriginAllowed("http://claude.ai", allowed));
  EXPECT_FALSE(OriginAllowed("https://claude.ai.evil.example", allowed));
  EXPECT_FALSE(OriginAllowed("null", allowed));
  EXPECT_FALSE(OriginAllowed("https://claude.ai", {}));
}

TEST(ChecksTest, Bearer) {
  std::vector<std::string> tokens = {"first-token-0123456789", "second-token-012345678"};
  EXPECT_EQ(MatchBearer("Bearer first-token-0123456789", tokens), 0u);
  EXPECT_EQ(MatchBearer("bearer   second-token-012345678 ", tokens), 1u);
  EXPECT_EQ(MatchBearer("Bearer first-token-012345678", tokens), std::nullopt);
  EXPECT_EQ(MatchBearer("Bearer first-token-01234567890", tokens), std::nullopt);
  EXPECT_EQ(MatchBearer("Basic first-token-0123456789", tokens), std::nullopt);
  EXPECT_EQ(MatchBearer("Bearer ", tokens), std::nullopt);
  EXPECT_EQ(MatchBearer(std::nullopt, tokens), std::nullopt);
  EXPECT_EQ(MatchBearer("Bearer x", {""}), std::nullopt);
}

TEST(ChecksTest, ProtocolVersionsAndAccept) {
  EXPECT_TRUE(ProtocolVersionSupported("2025-06-18"));
  EXPECT_TRUE(ProtocolVersionSupported("2025-11-25"));
  EXPECT_TRUE(ProtocolVersionSupported("2025-03-26"));
  EXPECT_TRUE(ProtocolVersionSupported("2026-07-28"));
  EXPECT_FALSE(ProtocolVersionSupported("2024-11-05"));
  EXPECT_FALSE(ProtocolVersionSupported("2025-06-18 "));
  EXPECT_TRUE(Accepts("application/json, text/event-stream", "text/event-stream"));
  EXPECT_TRUE(Accepts("Application/JSON;q=0.5", "application/json"));
  EXPECT_TRUE(Accepts("*/*", "text/event-stream"));
  EXPECT_TRUE(Accepts("text/*", "text/event-stream"));
  EXPECT_FALSE(Accepts("text/event-stream;q=0", "text/event-stream"));
  EXPECT_FALSE(Accepts("application/json", "text/event-stream"));
  EXPECT_FALSE(Accepts(std::nullopt, "application/json"));
}

}  // namespace
}  // namespace srt::mcp
