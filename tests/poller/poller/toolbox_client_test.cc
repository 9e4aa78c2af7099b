// SPDX-License-Identifier: Apache-2.0
// srt-poller's end of the toolbox protocol against a scripted toolbox: what comes out of a
// session's sandbox is hostile, so each bad line fails the call (and marks the toolbox broken)
// without taking the worker down.
#include "poller/toolbox_client.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace srt::poller {
namespace {

class ToolboxClientTest : public ::testing::Test {
 protected:
  void SetUp() override { MakeClient(ToolboxClient::kCancelGrace); }

  void MakeClient(std::chrono::milliseconds cancel_grace) {
    int to[2], from[2];
    ASSERT_EQ(pipe2(to, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(from, O_CLOEXEC), 0);
    toolbox_in_.reset(to[0]);
    toolbox_out_.reset(from[1]);
    client_ = std::make_unique<ToolboxClient>(UniqueFd(to[1]), UniqueFd(from[0]), cancel_grace);
    client_->OnBroken([this](const std::string& why) { broken_ = why; });
  }

  // What the client sent the toolbox so far.
  std::string ToolboxRead() {
    std::string got;
    char buf[4096];
    for (;;) {
      pollfd p{toolbox_in_.get(), POLLIN, 0};
      if (poll(&p, 1, 0) <= 0) return got;
      ssize_t n = read(toolbox_in_.get(), buf, sizeof buf);
      if (n <= 0) return got;
      got.append(buf, static_cast<size_t>(n));
    }
  }

  // What the toolbox "writes": whole lines, before the call is made (the pipe holds them).
  void ToolboxWrites(const std::string& lines) {
    ASSERT_EQ(write(toolbox_out_.get(), lines.data(), lines.size()),
              static_cast<ssize_t>(lines.size()));
  }

  ToolResult Call() {
    return client_->Run(ToolCall{"toolu_1", "bash", R"({"command":"ls"})"},
                        std::chrono::seconds(5));
  }

  static std::string TextOf(const ToolResult& r) {
    return nlohmann::json::parse(r.content_json)[0]["text"].get<std::string>();
  }

  UniqueFd toolbox_in_, toolbox_out_;
  std::unique_ptr<ToolboxClient> client_;
  std::string broken_;
};

TEST_F(ToolboxClientTest, AnAnswerOfTheToolboxsShapeIsTheResult) {
  ToolboxWrites(R"({"ready":true,"version":1})"
                "\n"
                R"({"id":null,"is_error":true,"content":[{"type":"text","text":"stale"}]})"
                "\n"
                R"({"id":1,"is_error":false,"content":[{"type":"text","text":"a.txt"}]})"
                "\n");
  ToolResult r = Call();
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.content_json, R"([{"text":"a.txt","type":"text"}])");
  EXPECT_TRUE(client_->healthy());
}

TEST_F(ToolboxClientTest, AnotherProtocolVersionIsRefused) {
  ToolboxWrites(R"({"ready":true,"version":2})"
                "\n");
  ToolResult r = Call();
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(TextOf(r).find("srt-toolbox speaks protocol version 2"), std::string::npos)
      << TextOf(r);
  EXPECT_FALSE(client_->healthy());
}

TEST_F(ToolboxClientTest, AHostileAnswerFailsTheCallAndNothingElse) {
  ToolboxWrites(R"({"ready":true,"version":1})"
                "\n"
                R"({"id":1,"is_error":"boom","content":[{"type":"text","text":"x"}]})"
                "\n");
  ToolResult r = Call();
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(TextOf(r).find("srt-toolbox sent a malformed answer (is_error is not a boolean)"),
            std::string::npos)
      << TextOf(r);
  EXPECT_FALSE(client_->healthy());
  EXPECT_FALSE(broken_.empty());
  // Broken stays broken: the next call does not read what the sandbox wrote after.
  ToolboxWrites(R"({"id":2,"is_error":false,"content":[{"type":"text","text":"forged"}]})"
                "\n");
  EXPECT_EQ(TextOf(Call()), "the session's sandbox is gone; the tool did not run");
}

TEST_F(ToolboxClientTest, ContentTheToolboxNeverProducesIsRefused) {
  ToolboxWrites(
      R"({"ready":true,"version":1})"
      "\n"
      R"({"id":1,"is_error":false,"content":[{"type":"image","source":{"type":"url","url":"http://x"}}]})"
      "\n");
  ToolResult r = Call();
  EXPECT_TRUE(r.is_error);
  // One text block that says so; no image block reaches the API.
  nlohmann::json content = nlohmann::json::parse(r.content_json);
  ASSERT_EQ(content.size(), 1u);
  EXPECT_EQ(content[0]["type"], "text");
  EXPECT_EQ(TextOf(r).rfind("tool \"bash\" failed: srt-toolbox sent a malformed answer (content "
                            "is not one text block)",
                            0),
            0u)
      << TextOf(r);
}

TEST_F(ToolboxClientTest, DeepNestingIsRefusedBeforeItIsParsed) {
  std::string line = R"({"id":1,"is_error":false,"content":)" + std::string(300'000, '[') +
                     std::string(300'000, ']') + "}\n";
  ToolboxWrites(R"({"ready":true,"version":1})"
                "\n");
  std::thread writer([&] { ToolboxWrites(line); });
  ToolResult r = Call();
  writer.join();
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(TextOf(r).find("nested deeper than 64"), std::string::npos) << TextOf(r);
}

// The client's own limit on what it buffers from the sandbox: a line that never ends stops at
// 64 MiB instead of growing srt-poller without bound.
TEST_F(ToolboxClientTest, ALineOverTheLimitFailsTheCall) {
  signal(SIGPIPE, SIG_IGN);  // the writer below outlives the client's read end
  ToolboxWrites(R"({"ready":true,"version":1})"
                "\n");
  std::thread writer([fd = toolbox_out_.get()] {
    const std::string chunk(1 << 20, 'x');
    for (int i = 0; i < 80; ++i) {
      if (write(fd, chunk.data(), chunk.size()) < 0) return;
    }
  });
  ToolResult r = Call();
  client_.reset();  // closes the read end: the writer's next write fails
  writer.join();
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(TextOf(r).find("srt-toolbox sent a line over 64 MiB"), std::string::npos) << TextOf(r);
}

// A toolbox that is stopped (`kill -STOP $PPID` from the agent's shell) or wedged never answers
// a cancel: the call gives up on it after the grace, so that a stopping session is not held up
// for the tool's whole timeout, and the toolbox counts as broken.
TEST_F(ToolboxClientTest, ACancelTheToolboxNeverAnswersGivesUpAfterTheGrace) {
  MakeClient(std::chrono::milliseconds(200));
  ToolboxWrites(R"({"ready":true,"version":1})"
                "\n");
  auto start = std::chrono::steady_clock::now();
  auto call = std::async(std::launch::async, [this] {
    return client_->Run(ToolCall{"toolu_1", "bash", R"({"command":"sleep 100"})"},
                        std::chrono::seconds(3));
  });
  std::string sent;
  for (int i = 0; i < 500 && sent.find('\n') == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    sent += ToolboxRead();
  }
  ASSERT_NE(sent.find("\"id\":1"), std::string::npos) << sent;
  client_->Cancel();
  ToolResult r = call.get();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(r.is_error);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(TextOf(r), "tool \"bash\" failed: srt-toolbox did not answer within 200ms of a cancel");
  EXPECT_EQ(ToolboxRead(), "{\"cancel\":1}\n");
  EXPECT_FALSE(client_->healthy());
  EXPECT_EQ(broken_, "srt-toolbox did not answer within 200ms of a cancel");
}

// A toolbox that stops reading its stdin must not block the client in a write it cannot cancel:
// a call whose frame fills the pipe gives up as well once cancelled.
TEST_F(ToolboxClientTest, ACallTheToolboxDoesNotReadIsCancelledToo) {
  signal(SIGPIPE, SIG_IGN);  // the rescue below closes the toolbox's stdin
  MakeClient(std::chrono::milliseconds(200));
  ToolboxWrites(R"({"ready":true,"version":1})"
                "\n");
  const std::string input =
      nlohmann::json{{"file_path", "/workspace/x"}, {"content", std::string(1 << 20, 'a')}}.dump();
  auto start = std::chrono::steady_clock::now();
  auto call = std::async(std::launch::async, [this, &input] {
    return client_->Run(ToolCall{"toolu_1", "write", input}, std::chrono::seconds(3));
  });
  // Cancel only once the call is blocked in its write: a cancel before the call is sent ends it
  // without writing at all, and a fixed sleep is too short on a loaded or sanitized run.
  const int capacity = fcntl(toolbox_in_.get(), F_GETPIPE_SZ);
  EXPECT_GT(capacity, 0);
  int queued = 0;
  for (int i = 0; i < 5000 && queued < capacity; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (ioctl(toolbox_in_.get(), FIONREAD, &queued) != 0) break;
  }
  // No ASSERT before the rescue below: a return here would wait forever on the blocked call.
  EXPECT_EQ(queued, capacity) << "the call never filled the toolbox's pipe";
  start = std::chrono::steady_clock::now();  // the bound below is on the cancel, not the fill
  client_->Cancel();
  if (call.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    toolbox_in_.reset();  // EPIPE frees the write, so that the test can end
    ADD_FAILURE() << "the call stayed blocked in its write after the cancel";
  }
  ToolResult r = call.get();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(TextOf(r), "could not send the tool call to the session's sandbox");
  EXPECT_FALSE(client_->healthy());
}

}  // namespace
}  // namespace srt::poller
