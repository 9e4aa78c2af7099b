// SPDX-License-Identifier: Apache-2.0
// work_test.cc: the JSON objects of api/work.h: work items, empty polls, secrets, heartbeats,
// session events, pages, sessions, skill versions, error bodies and result encoding.
#include "api/work.h"

#include <gtest/gtest.h>

namespace srt::poller {
namespace {

std::string ErrorOf(const auto& r) { return r ? std::string("(no error)") : r.error().message(); }

TEST(ValidateIdTest, SafeCharsetAndLength) {
  EXPECT_TRUE(ValidateId("id", "sesn_01ABC-def"));
  EXPECT_TRUE(ValidateId("id", "session_x"));
  EXPECT_TRUE(ValidateId("id", std::string(128, 'a')));
  EXPECT_FALSE(ValidateId("id", std::string(129, 'a')));
  EXPECT_FALSE(ValidateId("id", ""));
  for (std::string_view bad : {"a/b", "..", "a b", "a.b", "a\nb", "é", "a\\b", "a%2F"}) {
    EXPECT_FALSE(ValidateId("id", bad)) << bad;
  }
  EXPECT_EQ(ErrorOf(ValidateId("session id", "a/b\n")),
            "session id: 'a/b\\x0a' is not a safe id (allowed: A-Z a-z 0-9 _ -, 1 to 128 "
            "characters)");
}

TEST(WorkTest, ParsesAWorkItem) {
  const std::string body =
      R"({"type":"work","id":"work_1","environment_id":"env_1","data":{"type":"session",)"
      R"("id":"sesn_1"},"state":"queued","created_at":"2026-01-01T00:00:00Z","secret":"abc",)"
      R"("metadata":{"k":"v","n":1},"acknowledged_at":null,"future_field":[1,2]})";
  auto w = ParseWork(body);
  ASSERT_TRUE(w) << ErrorOf(w);
  EXPECT_EQ(w->id, "work_1");
  EXPECT_EQ(w->environment_id, "env_1");
  EXPECT_TRUE(w->is_session());
  EXPECT_EQ(w->data_id, "sesn_1");
  EXPECT_EQ(w->state, "queued");
  EXPECT_EQ(w->secret, "abc");
  EXPECT_EQ(w->metadata, (std::map<std::string, std::string>{{"k", "v"}}));
  EXPECT_EQ(w->raw_json, body);
}

TEST(WorkTest, HealthcheckItemsKeepTheirType) {
  auto w = ParseWork(R"({"id":"work_2","data":{"type":"healthcheck","id":"hc 1"},"secret":null})");
  ASSERT_TRUE(w) << ErrorOf(w);
  EXPECT_FALSE(w->is_session());
  EXPECT_EQ(w->data_id, "hc 1");  // not a path component, so not validated
  EXPECT_FALSE(w->secret);
}

TEST(WorkTest, ErrorsNameTheFieldAndValue) {
  EXPECT_EQ(ErrorOf(ParseWork(R"({"id":"work_1","data":{"type":"session","id":"../x"}})")),
            "work: /data/id: '../x' is not a safe id (allowed: A-Z a-z 0-9 _ -, 1 to 128 "
            "characters)");
  EXPECT_EQ(ErrorOf(ParseWork(R"({"id":"work_1"})")), "work: /data: missing");
  EXPECT_EQ(ErrorOf(ParseWork(R"({"id":7,"data":{}})")),
            "work: /id: expected a string, got number");
  EXPECT_EQ(ErrorOf(ParseWork(R"({"id":"w","data":{"id":"s"}})")), "work: /data/type: missing");
  EXPECT_EQ(ErrorOf(ParseWork(R"({"type":"job","id":"w","data":{"type":"session","id":"s"}})")),
            "work: /type: expected 'work', got 'job'");
  EXPECT_EQ(ErrorOf(ParseWork("[]")), "work: /: expected an object, got array");
  EXPECT_NE(ErrorOf(ParseWork("{\"id\":")).find("parse error"), std::string::npos);
}

TEST(WorkTest, EmptyPolls) {
  for (auto [status, body] : std::vector<std::pair<int, std::string>>{{204, ""},
                                                                      {200, ""},
                                                                      {200, " \r\n"},
                                                                      {200, "null"},
                                                                      {200, "{}"},
                                                                      {200, R"({"id":""})"},
                                                                      {204, "garbage"}}) {
    auto r = ParsePollResponse(status, body);
    ASSERT_TRUE(r) << status << " " << body << ": " << ErrorOf(r);
    EXPECT_FALSE(r->has_value()) << status << " " << body;
  }
  auto item = ParsePollResponse(200, R"({"id":"w","data":{"type":"session","id":"s"}})");
  ASSERT_TRUE(item);
  ASSERT_TRUE(item->has_value());
  EXPECT_FALSE(ParsePollResponse(200, "nul"));
  EXPECT_FALSE(ParsePollResponse(200, "[1]"));
}

TEST(WorkSecretTest, DecodesWithAndWithoutPadding) {
  // {"sessions_token":"sk-ant-req-1"}  (35 bytes: base64 ends in one '=')
  const std::string padded = "eyJzZXNzaW9uc190b2tlbiI6InNrLWFudC1yZXEtMSJ9";
  auto s = DecodeWorkSecret(padded);
  ASSERT_TRUE(s) << ErrorOf(s);
  EXPECT_EQ(s->sessions_token, "sk-ant-req-1");
  EXPECT_FALSE(s->api_base_url);
  // {"sessions_token":"t?","api_base_url":"https://x.test/"} has '?' -> '/' vs '_' in base64.
  const std::string json = R"({"sessions_token":"t>?","api_base_url":"https://x.test/"})";
  std::string std_b64 =
      "eyJzZXNzaW9uc190b2tlbiI6InQ+PyIsImFwaV9iYXNlX3VybCI6Imh0dHBzOi8veC50ZXN0LyJ9";
  std::string url_b64 = std_b64;
  for (char& c : url_b64) c = c == '+' ? '-' : c == '/' ? '_' : c;
  for (const std::string& in : {std_b64, url_b64, url_b64 + "\n"}) {
    auto d = DecodeWorkSecret(in);
    ASSERT_TRUE(d) << in << ": " << ErrorOf(d);
    EXPECT_EQ(d->sessions_token, "t>?");
    EXPECT_EQ(d->api_base_url, "https://x.test/");
  }
  // Padding variants of a 2-byte tail: "ab" = YWI / YWI=
  EXPECT_EQ(*DecodeBase64Url("YWI"), "ab");
  EXPECT_EQ(*DecodeBase64Url("YWI="), "ab");
  EXPECT_EQ(*DecodeBase64Url("YQ"), "a");
  EXPECT_EQ(*DecodeBase64Url("YQ=="), "a");
  EXPECT_FALSE(DecodeBase64Url("YQ="));
  EXPECT_FALSE(DecodeBase64Url("Y"));
  EXPECT_FALSE(DecodeBase64Url("YQ==YQ"));
  EXPECT_EQ(ErrorOf(DecodeBase64Url("YW*")), "base64: invalid character '*' at offset 2");
}

TEST(WorkSecretTest, RejectsBadContent) {
  auto enc = [](std::string_view s) {
    static constexpr char k[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char ch : s) {
      acc = (acc << 8) | static_cast<unsigned char>(ch);
      bits += 8;
      while (bits >= 6) {
        bits -= 6;
        out.push_back(k[(acc >> bits) & 63]);
      }
    }
    if (bits > 0) out.push_back(k[(acc << (6 - bits)) & 63]);
    return out;
  };
  EXPECT_EQ(ErrorOf(DecodeWorkSecret(enc(R"({"api_base_url":"https://x"})"))),
            "work secret: /sessions_token: missing");
  EXPECT_EQ(ErrorOf(DecodeWorkSecret(enc(R"({"sessions_token":"a\r\nb"})"))),
            "work secret: /sessions_token: contains spaces, control or non-ASCII characters");
  EXPECT_EQ(ErrorOf(DecodeWorkSecret(enc(R"({"sessions_token":"t","api_base_url":"file:///x"})"))),
            "work secret: /api_base_url: 'file:///x' is not an http(s) URL");
  auto null_url = DecodeWorkSecret(enc(R"({"sessions_token":"t","api_base_url":null})"));
  ASSERT_TRUE(null_url) << ErrorOf(null_url);
  EXPECT_FALSE(null_url->api_base_url);
  EXPECT_FALSE(DecodeWorkSecret(enc("[]")));
  EXPECT_FALSE(DecodeWorkSecret("!!!"));
}

TEST(HeartbeatTest, Parses) {
  auto h = ParseHeartbeatResponse(R"({"type":"work_heartbeat","last_heartbeat":"x",)"
                                  R"("lease_extended":true,"state":"active","ttl_seconds":40})");
  ASSERT_TRUE(h) << ErrorOf(h);
  EXPECT_EQ(h->last_heartbeat, "x");
  EXPECT_TRUE(h->lease_extended);
  EXPECT_EQ(h->state, "active");
  EXPECT_EQ(h->ttl_seconds, 40);
  EXPECT_EQ(ErrorOf(ParseHeartbeatResponse(R"({"last_heartbeat":"x","lease_extended":"yes"})")),
            "heartbeat response: /lease_extended: expected a boolean, got string");
  EXPECT_EQ(ErrorOf(ParseHeartbeatResponse(R"({"lease_extended":true})")),
            "heartbeat response: /last_heartbeat: missing");
  EXPECT_EQ(ErrorOf(ParseHeartbeatResponse(
                R"({"last_heartbeat":"x","lease_extended":true,"ttl_seconds":-1})")),
            "heartbeat response: /ttl_seconds: expected a non-negative integer, got -1");
}

TEST(SessionEventTest, KnownTypes) {
  auto tu = ParseSessionEvent(R"({"type":"agent.tool_use","id":"e1","name":"bash",)"
                              R"("input":{"command":"ls","n":[1,2]},"evaluated_permission":"ask",)"
                              R"("session_thread_id":null,"processed_at":"t"})");
  ASSERT_TRUE(tu) << ErrorOf(tu);
  EXPECT_EQ(tu->kind, EventKind::kAgentToolUse);
  EXPECT_EQ(tu->name, "bash");
  EXPECT_EQ(tu->input_json, R"({"command":"ls","n":[1,2]})");
  EXPECT_EQ(tu->evaluated_permission, "ask");
  EXPECT_EQ(tu->session_thread_id, "");

  auto ctu = ParseSessionEvent(
      R"({"type":"agent.custom_tool_use","id":"e2","name":"mine","input":{},"session_thread_id":"th"})");
  ASSERT_TRUE(ctu) << ErrorOf(ctu);
  EXPECT_EQ(ctu->kind, EventKind::kAgentCustomToolUse);
  EXPECT_EQ(ctu->session_thread_id, "th");

  auto conf = ParseSessionEvent(
      R"({"type":"user.tool_confirmation","id":"e3","tool_use_id":"e1","result":"allow"})");
  ASSERT_TRUE(conf) << ErrorOf(conf);
  EXPECT_EQ(conf->tool_use_id, "e1");
  EXPECT_EQ(conf->result, "allow");

  auto tr = ParseSessionEvent(R"({"type":"user.tool_result","id":"e4","tool_use_id":"e1"})");
  ASSERT_TRUE(tr);
  EXPECT_EQ(tr->kind, EventKind::kUserToolResult);
  auto ctr = ParseSessionEvent(R"({"type":"user.custom_tool_result","custom_tool_use_id":"e2"})");
  ASSERT_TRUE(ctr);
  EXPECT_EQ(ctr->custom_tool_use_id, "e2");

  auto idle = ParseSessionEvent(R"({"type":"session.status_idle","id":"e5","stop_reason":)"
                                R"({"type":"requires_action","event_ids":["e1","e2"]}})");
  ASSERT_TRUE(idle) << ErrorOf(idle);
  EXPECT_EQ(idle->stop_reason, "requires_action");
  EXPECT_EQ(idle->stop_event_ids, (std::vector<std::string>{"e1", "e2"}));
  auto idle2 =
      ParseSessionEvent(R"({"type":"session.status_idle","stop_reason":{"type":"end_turn"}})");
  ASSERT_TRUE(idle2);
  EXPECT_EQ(idle2->stop_reason, "end_turn");

  EXPECT_EQ(ParseSessionEvent(R"({"type":"session.status_terminated"})")->kind,
            EventKind::kSessionStatusTerminated);
  EXPECT_EQ(ParseSessionEvent(R"({"type":"session.deleted","id":"e9"})")->kind,
            EventKind::kSessionDeleted);
}

TEST(SessionEventTest, UnknownTypesAreKept) {
  auto ev = ParseSessionEvent(R"({"type":"agent.mcp_tool_use","id":"e1","whatever":{"x":1}})");
  ASSERT_TRUE(ev) << ErrorOf(ev);
  EXPECT_EQ(ev->kind, EventKind::kUnknown);
  EXPECT_EQ(ev->type, "agent.mcp_tool_use");
  EXPECT_EQ(ev->id, "e1");
}

TEST(SessionEventTest, Errors) {
  EXPECT_EQ(ErrorOf(ParseSessionEvent(R"({"id":"e1"})")), "session event: /type: missing");
  EXPECT_EQ(ErrorOf(ParseSessionEvent(R"({"type":"agent.tool_use","name":"bash","input":{}})")),
            "session event: /id: missing");
  EXPECT_EQ(
      ErrorOf(ParseSessionEvent(R"({"type":"agent.tool_use","id":"e","name":"b","input":"x"})")),
      "session event: /input: expected an object, got string");
  EXPECT_EQ(ErrorOf(ParseSessionEvent(R"({"type":"user.tool_confirmation","tool_use_id":"e1"})")),
            "session event: /result: missing");
  EXPECT_EQ(ErrorOf(ParseSessionEvent(
                R"({"type":"session.status_idle","stop_reason":{"type":"x","event_ids":[1]}})")),
            "session event: /stop_reason/event_ids/0: expected a string, got number");
}

TEST(SessionEventTest, DeepNestingIsRefusedBeforeParsing) {
  std::string deep = R"({"type":"agent.tool_use","id":"e","name":"b","input":)";
  for (int i = 0; i < 100000; ++i) deep += "[";
  auto r = ParseSessionEvent(deep);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "session event: JSON nested deeper than 128 levels");
  // Brackets inside strings do not count.
  std::string ok = R"({"type":"x","s":")" + std::string(1000, '[') + R"("})";
  EXPECT_TRUE(ParseSessionEvent(ok));
  // The bound is 128 levels, the outer object included.
  auto nested = [](size_t levels) {
    return R"({"type":"x","v":)" + std::string(levels - 1, '[') + std::string(levels - 1, ']') +
           "}";
  };
  EXPECT_TRUE(ParseSessionEvent(nested(128)));
  EXPECT_EQ(ErrorOf(ParseSessionEvent(nested(129))),
            "session event: JSON nested deeper than 128 levels");
}

TEST(EventPageTest, PagesAndErrorsWithIndex) {
  auto p = ParseEventPage(R"({"data":[{"type":"a"},{"type":"b"}],"next_page":"tok"})");
  ASSERT_TRUE(p) << ErrorOf(p);
  EXPECT_EQ(p->data.size(), 2u);
  EXPECT_EQ(p->next_page, "tok");
  auto last = ParseEventPage(R"({"data":[],"next_page":null})");
  ASSERT_TRUE(last);
  EXPECT_FALSE(last->next_page);
  EXPECT_EQ(ErrorOf(ParseEventPage(R"({"data":[{"type":"a"},{"id":"x"}]})")),
            "event list: session event: /data/1/type: missing");
  EXPECT_EQ(ErrorOf(ParseEventPage(R"({"next_page":null})")),
            "event list: /data: expected an array");
}

TEST(SessionTest, SkillsAndMetadata) {
  auto s = ParseSession(R"({"id":"sesn_1","agent":{"skills":[{"skill_id":"s1","version":"latest"},)"
                        R"({"skill_id":"s2"}]},"metadata":{"a":"b"}})");
  ASSERT_TRUE(s) << ErrorOf(s);
  ASSERT_EQ(s->skills.size(), 2u);
  EXPECT_EQ(s->skills[0].version, "latest");
  EXPECT_EQ(s->skills[1].version, "");
  EXPECT_EQ(s->metadata_json, R"({"a":"b"})");
  auto none = ParseSession(R"({"id":"sesn_1","agent":{"skills":[]}})");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->metadata_json, "{}");
  EXPECT_EQ(ErrorOf(ParseSession(R"({"id":"sesn_1","agent":{"skills":[{"skill_id":"../x"}]}})")),
            "session: /agent/skills/0/skill_id: '../x' is not a safe id (allowed: A-Z a-z 0-9 _ -, "
            "1 to 128 characters)");
}

TEST(SessionTest, MemoryStoreResources) {
  auto s = ParseSession(
      R"({"id":"sesn_1","resources":[{"type":"file","file_id":"f"},)"
      R"({"type":"memory_store","memory_store_id":"memstore_a","access":"read_only",)"
      R"("mount_path":"/mnt/memory/a","name":"a"},)"
      R"({"type":"memory_store","memory_store_id":"memstore_b","access":null,"mount_path":null}]})");
  ASSERT_TRUE(s) << ErrorOf(s);
  ASSERT_EQ(s->memory_stores.size(), 2u);
  EXPECT_EQ(s->memory_stores[0].memory_store_id, "memstore_a");
  EXPECT_TRUE(s->memory_stores[0].read_only);
  EXPECT_EQ(s->memory_stores[0].mount_path, "/mnt/memory/a");
  EXPECT_EQ(s->memory_stores[0].name, "a");
  EXPECT_FALSE(s->memory_stores[1].read_only);
  EXPECT_EQ(s->memory_stores[1].mount_path, "");
  EXPECT_EQ(ErrorOf(ParseSession(R"({"id":"sesn_1","resources":[{"type":"memory_store",)"
                                 R"("memory_store_id":"m","access":"write"}]})")),
            "session: /resources/0/access: expected read_write or read_only, got 'write'");
  EXPECT_EQ(ErrorOf(ParseSession(R"({"id":"sesn_1","resources":[{"type":"memory_store"}]})")),
            "session: /resources/0/memory_store_id: missing");
}

TEST(MemoryTest, ParsesOneAndPagesWithoutPrefixes) {
  auto m = ParseMemory(R"({"type":"memory","id":"mem_1","path":"/a","content":null,)"
                       R"("content_sha256":"00"})");
  ASSERT_TRUE(m) << ErrorOf(m);
  EXPECT_EQ(m->path, "/a");
  EXPECT_FALSE(m->content);
  auto p = ParseMemoryPage(R"({"data":[{"type":"memory_prefix","path":"/d/"},)"
                           R"({"type":"memory","id":"mem_2","path":"/b","content":"x",)"
                           R"("content_sha256":"11"}],"next_page":"page_2"})");
  ASSERT_TRUE(p) << ErrorOf(p);
  ASSERT_EQ(p->data.size(), 1u);
  EXPECT_EQ(p->data[0].content, "x");
  EXPECT_EQ(p->next_page, "page_2");
  EXPECT_EQ(ErrorOf(ParseMemoryPage(R"({"data":[{"type":"memory","id":"../m","path":"/b",)"
                                    R"("content_sha256":"11"}]})")),
            "memory list: memory: /data/0/id: '../m' is not a safe id (allowed: A-Z a-z 0-9 _ -, "
            "1 to 128 characters)");
  EXPECT_EQ(
      EncodeMemoryWrite("/a", "x", "ab"),
      R"({"content":"x","path":"/a","precondition":{"content_sha256":"ab","type":"content_sha256"}})");
}

TEST(SkillVersionTest, ParsesOneAndPages) {
  auto v =
      ParseSkillVersion(R"({"type":"skill_version","id":"x","skill_id":"s1","version":"17",)"
                        R"("name":"pdf","directory":"pdf","description":"d","created_at":"t"})");
  ASSERT_TRUE(v) << ErrorOf(v);
  EXPECT_EQ(v->version, "17");
  EXPECT_EQ(v->name, "pdf");
  auto p = ParseSkillVersionPage(R"({"data":[{"version":"1"},{"version":"2"}],"next_page":null})");
  ASSERT_TRUE(p) << ErrorOf(p);
  EXPECT_EQ(p->data.size(), 2u);
  EXPECT_EQ(ErrorOf(ParseSkillVersion(R"({"version":"1/2"})")),
            "skill version: /version: '1/2' is not a safe id (allowed: A-Z a-z 0-9 _ -, 1 to 128 "
            "characters)");
}

TEST(ApiErrorMessageTest, ParsesTheErrorShape) {
  EXPECT_EQ(ParseApiErrorMessage(
                R"({"type":"error","error":{"type":"not_found_error","message":"no\nsuch"}})"),
            "not_found_error: nosuch");
  EXPECT_EQ(ParseApiErrorMessage(R"({"error":{"message":"m"}})"), "m");
  EXPECT_FALSE(ParseApiErrorMessage("<html>"));
  EXPECT_FALSE(ParseApiErrorMessage(R"({"error":"x"})"));
  EXPECT_FALSE(ParseApiErrorMessage(""));
}

TEST(EncodeEventsTest, ToolAndCustomResults) {
  std::vector<PostedToolResult> rs = {
      {.kind = ResultKind::kToolResult,
       .tool_use_id = "e1",
       .is_error = true,
       .content_json = TextContent("bad \xff byte")},
      {.kind = ResultKind::kCustomToolResult, .tool_use_id = "e2", .content_json = ""}};
  auto body = EncodeEventsBody(rs);
  ASSERT_TRUE(body) << ErrorOf(body);
  EXPECT_EQ(
      *body,
      R"({"events":[{"content":[{"text":"bad )"
      "\xEF\xBF\xBD"
      R"( byte","type":"text"}],"is_error":true,"tool_use_id":"e1","type":"user.tool_result"},)"
      R"({"content":[],"custom_tool_use_id":"e2","is_error":false,"type":"user.custom_tool_result"}]})");
  EXPECT_FALSE(EncodeEventsBody({{.tool_use_id = ""}}));
  EXPECT_EQ(ErrorOf(EncodeEventsBody({{.tool_use_id = "e", .content_json = "{}"}})),
            "events body: /events/0/content: expected a JSON array of content blocks");
}

}  // namespace
}  // namespace srt::poller
