// SPDX-License-Identifier: Apache-2.0
// The toolbox protocol's one description: both ends' lines, and the poller's parsers against
// what a hostile sandbox can write.
#include "toolbox_protocol/protocol.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "support/sanitizers.h"

namespace srt::poller::toolbox_protocol {
namespace {

TEST(ParseMessageTest, CallsCancelsAndBadLines) {
  Message m = ParseMessage(R"({"id":7,"tool":"bash","input":{"command":"ls"},"timeout_ms":5})");
  EXPECT_EQ(m.kind, Message::Kind::kCall);
  EXPECT_EQ(m.id, 7);
  EXPECT_EQ(m.tool, "bash");
  EXPECT_EQ(m.input["command"], "ls");
  EXPECT_EQ(m.timeout_ms, 5);
  m = ParseMessage(R"({"id":"toolu_1","tool":"read"})");
  EXPECT_EQ(m.kind, Message::Kind::kCall);
  EXPECT_EQ(m.id, "toolu_1");
  m = ParseMessage(R"({"cancel":7})");
  EXPECT_EQ(m.kind, Message::Kind::kCancel);
  EXPECT_EQ(m.id, 7);
  EXPECT_EQ(ParseMessage("nope").kind, Message::Kind::kBad);
  EXPECT_EQ(ParseMessage("[1]").kind, Message::Kind::kBad);
  m = ParseMessage(R"({"id":3})");
  EXPECT_EQ(m.kind, Message::Kind::kBad);
  EXPECT_EQ(m.id, 3);
  EXPECT_EQ(m.error, "tool must be a non-empty string");
  EXPECT_EQ(ParseMessage(R"({"id":1.5,"tool":"x"})").kind, Message::Kind::kBad);
  EXPECT_EQ(ParseMessage(R"({"id":1,"tool":"x","timeout_ms":-1})").kind, Message::Kind::kBad);
}

TEST(FormatAnswerTest, ShapeAndInvalidUtf8) {
  EXPECT_EQ(FormatAnswer(7, "hi", false),
            R"({"content":[{"text":"hi","type":"text"}],"id":7,"is_error":false})");
  nlohmann::json j = nlohmann::json::parse(FormatAnswer("x",
                                                        "a\xff"
                                                        "b",
                                                        true));
  EXPECT_EQ(j["content"][0]["text"],
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(j["is_error"], true);
}

TEST(CallTest, WhatThePollerWritesTheToolboxReads) {
  Message m = ParseMessage(FormatCall(9, "grep", {{"pattern", "x"}}, std::chrono::seconds(3)));
  EXPECT_EQ(m.kind, Message::Kind::kCall);
  EXPECT_EQ(m.id, 9);
  EXPECT_EQ(m.tool, "grep");
  EXPECT_EQ(m.input["pattern"], "x");
  EXPECT_EQ(m.timeout_ms, 3000);
  m = ParseMessage(FormatCancel(9));
  EXPECT_EQ(m.kind, Message::Kind::kCancel);
  EXPECT_EQ(m.id, 9);
}

TEST(ReadyTest, TheVersionIsChecked) {
  EXPECT_TRUE(ParseReady(FormatReady()));
  Result<void> other = ParseReady(R"({"ready":true,"version":2})");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message(),
            "srt-toolbox speaks protocol version 2, this srt-poller speaks 1: install "
            "srt-poller and srt-toolbox from one build");
  EXPECT_FALSE(ParseReady(R"({"ready":true})"));
  EXPECT_FALSE(ParseReady(R"({"ready":"yes","version":1})"));
  EXPECT_FALSE(ParseReady(R"({"ready":false,"version":1})"));
  EXPECT_FALSE(ParseReady("hello"));
}

TEST(ParseAnswerTest, TheToolboxsOwnAnswersRoundTrip) {
  Result<Answer> a = ParseAnswer(FormatAnswer(7, "out", true));
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ(a->id, 7u);
  EXPECT_TRUE(a->is_error);
  EXPECT_EQ(a->text, "out");
  a = ParseAnswer(FormatAnswer(nullptr, "invalid request: x", true));
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->id.has_value());
  EXPECT_EQ(ContentJson("out"), R"([{"text":"out","type":"text"}])");
}

// Each of these once reached the API, or threw (SIGABRT), or exhausted the stack (SIGSEGV).
TEST(ParseAnswerTest, ShapesTheToolboxNeverWritesAreRefused) {
  const char* hostile[] = {
      R"({"id":1,"is_error":"boom","content":[{"type":"text","text":"x"}]})",
      R"({"id":1,"is_error":false,"content":[{"type":"image","source":{"type":"url","url":"http://x"}}]})",
      R"({"id":1,"is_error":false,"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]})",
      R"({"id":1,"is_error":false,"content":[{"type":"text","text":7}]})",
      R"({"id":1,"is_error":false,"content":[{"type":"text","text":"x","cache_control":{}}]})",
      R"({"id":1,"is_error":false,"content":"x"})",
      R"({"id":-1,"is_error":false,"content":[{"type":"text","text":"x"}]})",
      R"({"id":"1","is_error":false,"content":[{"type":"text","text":"x"}]})",
      R"({"id":1,"is_error":false,"timed_out":true,"content":[{"type":"text","text":"x"}]})",
      R"({"id":1,"content":[{"type":"text","text":"x"}]})",
      "[1]",
      "not json",
  };
  for (const char* line : hostile) {
    Result<Answer> a = ParseAnswer(line);
    ASSERT_FALSE(a) << line;
    EXPECT_EQ(a.error().code(), Errc::kProtocol) << line;
  }
  std::string deep = R"({"id":1,"is_error":false,"content":[{"type":"text","text":"x","n":)";
  deep += std::string(300'000, '[') + std::string(300'000, ']') + "}]}";
  Result<Answer> a = ParseAnswer(deep);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message().find("nested deeper than 64"), std::string::npos);
}

// The address space this process uses now (VmSize), in bytes.
size_t AddressSpaceNow() {
  std::ifstream status("/proc/self/status");
  std::string word;
  while (status >> word) {
    if (word == "VmSize:") {
      size_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

// One 64 MiB line (the client's limit) of millions of empty blocks: as a DOM it cost srt-poller
// gigabytes outside every cgroup. Parsed in a child whose address space may grow by 256 MiB
// only, which a DOM of this line cannot fit in; the answer is refused at its second block.
TEST(ParseAnswerTest, AHugeLineOfTinyBlocksIsRefusedWithoutBuildingIt) {
#if SRT_TEST_SANITIZED
  GTEST_SKIP() << "a sanitizer's shadow memory does not fit an address-space limit";
#endif
  std::string line = R"({"id":1,"is_error":false,"content":[{"type":"text","text":"x"})";
  while (line.size() < kMaxLineBytes - 16) line += ",{}";
  line += "]}";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const rlim_t limit = AddressSpaceNow() + (256u << 20);
    rlimit as{limit, limit};
    if (setrlimit(RLIMIT_AS, &as) != 0) _exit(3);
    try {
      Result<Answer> a = ParseAnswer(line);
      _exit(!a && a.error().message().find("(content is not one text block)") != std::string::npos
                ? 0
                : 1);
    } catch (...) {
      _exit(2);  // std::bad_alloc: the parser tried to hold the line's blocks
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the parse died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: accepted or another error; 2: ran out of memory";
}

}  // namespace
}  // namespace srt::poller::toolbox_protocol
